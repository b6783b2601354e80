//! The review tells the whole truth (docs/product.md §6), secrets: references compared through
//! git (`--base REV`, in a real repository the test makes), and a secret to be sent resolvable
//! at plan time. The helpers here serve `review_comment` and `reviewed` too.

use std::path::Path;
use std::process::Command;

use cfgctl::api::registry::Kind;
use serde_json::Value;

use crate::support::files::write;
use crate::support::run::{Cfgctl, Run};
use crate::support::tenant::Tenant;

pub(crate) const OLD_KEY: &str = "pd-old/key+with=signs";
pub(crate) const NEW_KEY: &str = "pd-new/2026+key=rotated";

pub(crate) fn notifier(var: &str) -> String {
    format!(
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: pd\n  name: PagerDuty\n  pagerduty:\n    routing_key: ${{env:{var}}}\n"
    )
}

/// `git ARGS` in `dir`, which must succeed; its stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository at `dir` whose first commit holds `files`.
pub(crate) fn repo_with(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    commit(dir, files, "first");
}

pub(crate) fn commit(dir: &Path, files: &[(&str, &str)], message: &str) {
    for (rel, text) in files {
        write(dir, rel, text);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

pub(crate) fn assert_clean(what: &str, text: &str) {
    for secret in [OLD_KEY, NEW_KEY] {
        for form in crate::secrets::forms(secret) {
            assert!(!text.contains(&form), "{what} holds a secret ({form})");
        }
    }
}

fn assert_files_clean(dir: &Path) {
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert_clean(
                &entry.path().display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}

pub(crate) fn cfgctl(t: &Tenant, dir: &Path, cache: &Path) -> Cfgctl {
    Cfgctl::new(t)
        .dir(dir)
        .env("PD_KEY", OLD_KEY)
        .env("PD_KEY_2026", NEW_KEY)
        .env("CFGCTL_CACHE_DIR", cache)
}

/// The routing key the tenant stores, read through a second emulator over the same store that
/// answers secrets in clear (as an older tenant does).
async fn stored_key(data: &Path) -> Value {
    let config = cfgctl::emulator::Config {
        data: Some(data.to_path_buf()),
        redact_secrets: false,
        ..Default::default()
    };
    let clear = Tenant::start(config).await;
    let read = clear.read(Kind::named("Notifier"), Some("pd")).await;
    read.body["notifier"]["pagerduty"]["routing_key"].clone()
}

pub(crate) fn monitor(value: &str) -> String {
    format!(
        "api_version: v1/config\nkind: Monitor\nspec:\n  slug: cpu\n  name: CPU\n  bucket_slug: platform\n  interval_secs: 60\n  prometheus_query: up == 0\n  series_conditions:\n    defaults:\n      critical:\n        conditions:\n          - {{op: GT, value: {value}}}\n"
    )
}

pub(crate) const BUCKETS: &str = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: platform\n  name: Platform\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: scratch\n  name: Scratch\n";

pub(crate) const ROTATED: &str =
    "~ pagerduty.routing_key: (sensitive) ${env:PD_KEY} -> ${env:PD_KEY_2026}";

#[tokio::test]
async fn a_rotated_reference_is_planned_with_both_references_applied_and_then_clean() {
    let work = tempfile::tempdir().unwrap();
    let (dir, cache, data) = (
        work.path().join("repo"),
        work.path().join("cache"),
        work.path().join("tenant.db"),
    );
    let t = Tenant::start(cfgctl::emulator::Config {
        data: Some(data.clone()),
        ..Default::default()
    })
    .await;
    repo_with(&dir, &[("notifiers/pd.yaml", &notifier("PD_KEY"))]);
    let run = cfgctl(&t, &dir, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(stored_key(&data).await, OLD_KEY);
    let mut runs: Vec<Run> = vec![run];

    // The pull request: the reference changes in the working tree.
    write(&dir, "notifiers/pd.yaml", &notifier("PD_KEY_2026"));
    // Without a base the change is not seen, and the plan says references are not compared.
    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("Secret references: not compared"),
        "{}",
        run.stdout
    );
    runs.push(run);

    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--base", "HEAD", "--out", "../saved.json"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains(ROTATED), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "reference changed: pagerduty.routing_key: ${env:PD_KEY} -> ${env:PD_KEY_2026}"
        ),
        "the risk summary's secrets sent names it: {}",
        run.stdout
    );
    let head = git(&dir, &["rev-parse", "HEAD"]);
    assert!(
        run.stdout
            .contains(&format!("Secret references: compared with HEAD ({head})")),
        "{}",
        run.stdout
    );
    runs.push(run);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(work.path().join("saved.json")).unwrap())
            .unwrap();
    assert_eq!(saved["review"]["base"]["commit"], head.as_str());
    assert_eq!(saved["review"]["base"]["rev"], "HEAD");

    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--base", "HEAD", "--format", "json"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["changes"][0]["action"], "update");
    assert_eq!(
        json["changes"][0]["fields"],
        serde_json::json!([{"path": "pagerduty.routing_key", "before": "${env:PD_KEY}", "after": "${env:PD_KEY_2026}"}])
    );
    assert_eq!(
        json["risk"]["secrets"][0]["references_changed"],
        serde_json::json!(["pagerduty.routing_key: ${env:PD_KEY} -> ${env:PD_KEY_2026}"])
    );
    runs.push(run);
    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--base", "HEAD", "--format", "markdown"])
        .run()
        .await;
    assert!(
        run.stdout.contains("${env:PD_KEY}") && run.stdout.contains("${env:PD_KEY_2026}"),
        "{}",
        run.stdout
    );
    runs.push(run);
    let run = cfgctl(&t, &dir, &cache)
        .args(&["drift", ".", "--base", "HEAD"])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(run.stdout.contains("${env:PD_KEY_2026}"), "{}", run.stdout);
    runs.push(run);

    // The merge: the pushed-over commit is the base of the apply.
    git(&dir, &["commit", "-q", "-am", "rotate"]);
    let run = cfgctl(&t, &dir, &cache)
        .args(&["apply", ".", "--base", "HEAD~1", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("Notifier/pd"), "{}", run.transcript());
    runs.push(run);
    assert_eq!(stored_key(&data).await, NEW_KEY, "the new value was sent");

    // A plan against the applied commit is clean.
    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--base", "HEAD", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    runs.push(run);
    for run in &runs {
        assert_clean("stdout", &run.stdout);
        assert_clean("stderr", &run.stderr);
    }
    assert_files_clean(&dir);
    assert_files_clean(&cache);
    assert_clean(
        "saved plan",
        &std::fs::read_to_string(work.path().join("saved.json")).unwrap(),
    );
}

#[tokio::test]
async fn a_base_that_cannot_be_read_says_how_to_fetch_it() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    repo_with(&dir, &[("notifiers/pd.yaml", &notifier("PD_KEY"))]);
    commit(
        &dir,
        &[("notifiers/pd.yaml", &notifier("PD_KEY_2026"))],
        "second",
    );

    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--base", "origin/nope"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("--base origin/nope: no such revision")
            && run.stderr.contains("git fetch --depth=50 origin nope")
            && run.stderr.contains("fetch-depth: 0"),
        "{}",
        run.stderr
    );
    assert_eq!(t.emulator.stats().total, 0, "nothing was read or sent");

    // A shallow clone does not hold the parent commit: it says so.
    let shallow = work.path().join("shallow");
    let url = format!("file://{}", dir.display());
    git(
        work.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    let run = cfgctl(&t, &shallow, &cache)
        .args(&["plan", ".", "--base", "HEAD~1"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("this is a shallow clone") && run.stderr.contains("git fetch"),
        "{}",
        run.stderr
    );

    // Not a repository at all.
    let plain = work.path().join("plain");
    write(&plain, "notifiers/pd.yaml", &notifier("PD_KEY"));
    let run = cfgctl(&t, &plain, &cache)
        .args(&["apply", ".", "--base", "main", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("--base main: . is not inside a git repository"),
        "{}",
        run.stderr
    );
    let read = t.read(Kind::named("Notifier"), Some("pd")).await;
    assert_eq!(read.status, 404, "nothing was sent");
}

#[tokio::test]
async fn a_secret_the_plan_sends_must_resolve_at_plan_time_and_one_not_sent_needs_nothing() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    repo_with(&dir, &[("notifiers/pd.yaml", &notifier("PD_KEY"))]);
    let unset = |t: &Tenant| Cfgctl::new(t).dir(&dir).env("CFGCTL_CACHE_DIR", &cache);

    // A create whose variable is unset: a plan error at the field, naming the variable.
    let run = unset(&t).args(&["plan", "."]).run().await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "notifiers/pd.yaml:7:5: error: Notifier/pd `pagerduty.routing_key`: the plan sends this secret, but `${env:PD_KEY}` cannot be resolved: environment variable PD_KEY is not set"
        ),
        "{}",
        run.stderr
    );
    let run = unset(&t)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("PD_KEY is not set"), "{}", run.stderr);
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing was sent"
    );

    // Created with the variable set; unchanged, the notifier needs nothing at plan time.
    let run = cfgctl(&t, &dir, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = unset(&t)
        .args(&["plan", ".", "--detailed-exitcode", "--base", "HEAD"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("No changes"), "{}", run.stdout);

    // A changed reference whose new variable is unset fails the plan, naming it.
    write(&dir, "notifiers/pd.yaml", &notifier("PD_KEY_2026"));
    t.emulator.reset_stats();
    let run = unset(&t)
        .env("PD_KEY", OLD_KEY)
        .args(&["apply", ".", "--base", "HEAD", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "`${env:PD_KEY_2026}` cannot be resolved: environment variable PD_KEY_2026 is not set"
        ),
        "{}",
        run.stderr
    );
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing was sent"
    );
}

#[tokio::test]
async fn a_reference_changed_in_a_file_moved_since_the_base_is_still_seen() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    repo_with(
        &dir,
        &[
            ("config/notifiers/pd.yaml", &notifier("PD_KEY")),
            ("config/other.yaml", BUCKETS),
        ],
    );
    let config = dir.join("config");
    let run = cfgctl(&t, &config, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    git(
        &dir,
        &["mv", "config/notifiers/pd.yaml", "config/alerting.yaml"],
    );
    write(&config, "alerting.yaml", &notifier("PD_KEY_2026"));
    let run = cfgctl(&t, &config, &cache)
        .args(&["plan", ".", "--base", "HEAD"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains(ROTATED), "{}", run.stdout);
    assert_clean("the plan", &run.stdout);
    // Committed where it is now, changed again: its file at REV is read, with the directory
    // named from the repository's root and by its absolute path from outside the repository.
    git(&dir, &["commit", "-q", "-am", "move"]);
    write(&config, "alerting.yaml", &notifier("PD_KEY_2027"));
    let absolute = config.display().to_string();
    for (cwd, arg) in [(dir.as_path(), "config"), (work.path(), absolute.as_str())] {
        let run = cfgctl(&t, cwd, &cache)
            .env("PD_KEY_2027", "k3")
            .args(&["plan", arg, "--base", "HEAD"])
            .run()
            .await;
        assert_eq!(run.code, 0, "{arg}: {}", run.transcript());
        assert!(
            run.stdout.contains(
                "~ pagerduty.routing_key: (sensitive) ${env:PD_KEY_2026} -> ${env:PD_KEY_2027}"
            ),
            "{arg}: {}",
            run.stdout
        );
    }
}

/// `--base` with an environment (red team D12, D13): the base side is REV's manifests loaded as
/// the working tree's are, with REV's overlay and REV's `vars:`, and compared by address.
#[tokio::test]
async fn the_base_is_loaded_with_its_overlay_and_variables() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    let settings = |var: &str| {
        format!(
            "environments:\n  staging:\n    url: {}\n    overlay: envs/staging\n    vars: {{slack: \"${{env:{var}}}\"}}\n",
            t.emulator.url()
        )
    };
    let notifier = |slug: &str, url: &str| {
        format!(
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: {slug}\n  name: {slug}\n  slack:\n    api_url: {url}\n    channel: \"#x\"\n"
        )
    };
    let overlay = |var: &str| {
        format!(
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: oc\n  slack:\n    api_url: ${{env:{var}}}\n"
        )
    };
    repo_with(
        &dir,
        &[
            ("cfgctl.yaml", &settings("K1")),
            ("n.yaml", &notifier("oc", "${env:A}")),
            ("v.yaml", &notifier("vc", "${var:slack}")),
            ("envs/staging/n.yaml", &overlay("S1")),
        ],
    );
    let run = |args: &'static [&'static str]| {
        Cfgctl::bare()
            .dir(&dir)
            .env("CFGCTL_CACHE_DIR", &cache)
            .env("A", "https://hooks.slack.com/services/A")
            .env("S1", "https://hooks.slack.com/services/S1")
            .env("K1", "https://hooks.slack.com/services/K1")
            .env("K2", "https://hooks.slack.com/services/K2")
            .args(args)
            .run()
    };
    let r = run(&["apply", ".", "--env", "staging", "--auto-approve"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // Nothing changed: no update (the overlay's reference is the effective one at REV too).
    let r = run(&[
        "plan",
        ".",
        "--env",
        "staging",
        "--base",
        "HEAD",
        "--detailed-exitcode",
    ])
    .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("No changes"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Secret references: compared with HEAD"),
        "{}",
        r.stdout
    );
    // The overlay's reference and the variable's change: both are rotations, each with the
    // effective reference at REV.
    write(&dir, "envs/staging/n.yaml", &overlay("A"));
    write(&dir, "cfgctl.yaml", &settings("K2"));
    let r = run(&["plan", ".", "--env", "staging", "--base", "HEAD"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    for line in [
        "~ slack.api_url: (sensitive) ${env:S1} -> ${env:A}",
        "~ slack.api_url: (sensitive) ${env:K1} -> ${env:K2}",
        "Plan: 0 to create, 2 to update",
    ] {
        assert!(r.stdout.contains(line), "{line}: {}", r.stdout);
    }
    assert_clean("the plan", &r.stdout);
}

/// A managed secret-bearing resource the target has but REV does not declare is not claimed
/// compared (red team D1): the summary names it.
#[tokio::test]
async fn a_resource_not_found_at_the_base_is_not_claimed_compared() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    repo_with(&dir, &[("buckets.yaml", BUCKETS)]);
    write(&dir, "notifiers/pd.yaml", &notifier("PD_KEY"));
    let r = cfgctl(&t, &dir, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--base", "HEAD"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains("Secret references: compared with HEAD")
            && r.stdout
                .contains("; not compared: Notifier/pd (not found at HEAD)"),
        "{}",
        r.stdout
    );
}

/// An empty variable (`X=`: what GitHub Actions makes of an undefined secret) or an empty
/// `${file:}` of a secret the plan sends is a plan error at the field, as an unset one is (red
/// team D15): an empty secret is never sent over a working one.
#[tokio::test]
async fn an_empty_secret_the_plan_sends_is_a_plan_error_at_the_field() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("cfg"), work.path().join("cache"));
    let notifier = |url: &str| {
        format!(
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: u1\n  name: U1\n  slack:\n    api_url: {url}\n    channel: \"#x\"\n"
        )
    };
    write(&dir, "n.yaml", &notifier("${env:UNSET_X}"));
    write(&dir, "empty.txt", "");
    let empty = || {
        Cfgctl::new(&t)
            .dir(&dir)
            .env("CFGCTL_CACHE_DIR", &cache)
            .env("UNSET_X", "")
    };
    for (reference, reason) in [
        ("${env:UNSET_X}", "environment variable UNSET_X is empty"),
        ("${file:empty.txt}", "secret file empty.txt is empty"),
    ] {
        write(&dir, "n.yaml", &notifier(reference));
        for args in [&["plan", "."][..], &["apply", ".", "--auto-approve"][..]] {
            let run = empty().args(args).run().await;
            assert_eq!(run.code, 1, "{}", run.transcript());
            let line = format!(
                "n.yaml:7:5: error: Notifier/u1 `slack.api_url`: the plan sends this secret, but `{reference}` cannot be resolved: {reason}"
            );
            assert!(run.stderr.contains(&line), "{line}\n{}", run.stderr);
        }
    }
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing was sent"
    );
}

/// A `${file:}` secret that is not sent needs nothing at plan time (red team D14): the file
/// mounted only where `apply` runs may be missing where the plan runs.
#[tokio::test]
async fn a_missing_secret_file_not_sent_needs_nothing_at_plan_time() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("cfg"), work.path().join("cache"));
    // A repository that never holds the token file (so `--base` loads REV without it too).
    repo_with(
        &dir,
        &[
            (".gitignore", "tok.txt\n"),
            ("n.yaml", "api_version: v1/config\nkind: Notifier\nspec:\n  slug: u2\n  name: U2\n  webhook:\n    url: https://hooks.example.com/x\n    http_config:\n      bearer_token: ${file:tok.txt}\n"),
        ],
    );
    write(&dir, "tok.txt", "tok\n");
    let run = |args: &'static [&'static str]| {
        Cfgctl::new(&t)
            .dir(&dir)
            .env("CFGCTL_CACHE_DIR", &cache)
            .args(args)
            .run()
    };
    let r = run(&["apply", ".", "--auto-approve"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    std::fs::remove_file(dir.join("tok.txt")).unwrap();
    for args in [
        &["plan", ".", "--detailed-exitcode"][..],
        &["plan", ".", "--detailed-exitcode", "--base", "HEAD"][..],
    ] {
        let r = Cfgctl::new(&t)
            .dir(&dir)
            .env("CFGCTL_CACHE_DIR", &cache)
            .args(args)
            .run()
            .await;
        assert_eq!(r.code, 0, "{args:?}: {}", r.transcript());
        assert!(
            r.stdout
                .contains("No changes: the target matches the manifests (1 resource)."),
            "{}",
            r.stdout
        );
    }
    // Sent (a rotation), it must be there: an error at the field, nothing sent.
    t.emulator.reset_stats();
    let r = run(&["apply", ".", "--auto-approve", "--rotate-secrets"]).await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing was sent"
    );
    assert!(
        r.stderr.contains(
            "Notifier/u2 `webhook.http_config.bearer_token`: cannot read secret file: tok.txt"
        ),
        "{}",
        r.stderr
    );
}

/// A plan of a working tree with uncommitted changes says so next to its commit (red team D11):
/// the commit alone does not hold what was planned.
#[tokio::test]
async fn a_plan_of_uncommitted_changes_says_so_next_to_its_commit() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    repo_with(&dir, &[("buckets.yaml", BUCKETS)]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    let plan = |format: &'static str| {
        cfgctl(&t, &dir, &cache)
            .args(&["plan", ".", "--format", format])
            .run()
    };
    let r = plan("markdown").await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let clean = format!("Planned from commit `{head}`.\n");
    assert!(r.stdout.contains(&clean), "{}", r.stdout);
    // An edit not committed.
    write(
        &dir,
        "buckets.yaml",
        &BUCKETS.replace("name: Scratch", "name: Scratch 2"),
    );
    let r = plan("markdown").await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let dirty = format!("Planned from commit `{head}` (with uncommitted changes).\n");
    assert!(r.stdout.contains(&dirty), "{}", r.stdout);
    let r = plan("json").await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["review"]["commit"], head.as_str());
    assert_eq!(json["review"]["uncommitted_changes"], true, "{}", r.stdout);
}

/// Red team D20: with `allow_literal_secrets`, a literal at REV replaced by a reference (the
/// rotation after a leak) or by another literal is an update that sends the new value; the
/// literal is shown as `(a literal)`, never its text.
#[tokio::test]
async fn a_literal_secret_replaced_through_git_is_an_update_that_never_shows_it() {
    const LITERAL: &str = "https://hooks.slack.com/services/T9/B9/LITERALSECRET";
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    let n = |api_url: &str| {
        format!("api_version: v1/config\nkind: Notifier\nspec:\n  slug: lit\n  name: Lit\n  slack:\n    api_url: {api_url}\n    channel: '#x'\n")
    };
    repo_with(
        &dir,
        &[
            ("cfg/cfgctl.yaml", "allow_literal_secrets: true\n"),
            ("cfg/n.yaml", &n(LITERAL)),
        ],
    );
    let cfg = dir.join("cfg");
    let run = cfgctl(&t, &cfg, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    write(&cfg, "n.yaml", &n("${env:NEW_D20}"));
    let run = cfgctl(&t, &cfg, &cache)
        .env(
            "NEW_D20",
            "https://hooks.slack.com/services/T9/B9/NEWSECRET",
        )
        .args(&["plan", ".", "--base", "HEAD"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("~ slack.api_url: (sensitive) (a literal) -> ${env:NEW_D20}"),
        "{}",
        run.stdout
    );
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains("LITERALSECRET") && !text.contains("NEWSECRET"),
            "{text}"
        );
    }
    // Another literal in place of the first: an update too, neither literal shown.
    write(
        &cfg,
        "n.yaml",
        &n("https://hooks.slack.com/services/T9/B9/LITERALSECRET2"),
    );
    let run = cfgctl(&t, &cfg, &cache)
        .args(&["plan", ".", "--base", "HEAD"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("1 to update"), "{}", run.stdout);
    assert!(
        !run.transcript().contains("LITERALSECRET"),
        "{}",
        run.transcript()
    );
    // The literal as it was at REV: nothing to do.
    write(&cfg, "n.yaml", &n(LITERAL));
    let run = cfgctl(&t, &cfg, &cache)
        .args(&["plan", ".", "--base", "HEAD"])
        .run()
        .await;
    assert!(run.stdout.contains("No changes"), "{}", run.transcript());
}
