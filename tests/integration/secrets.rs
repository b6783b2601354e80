//! Secrets (docs/product.md §2): references in manifests, the value in no output, file or
//! log, `**REDACTED**` reads giving no diff, rotation, ServiceAccount tokens.

use std::path::Path;

use cfgctl::api::registry::Kind;

use crate::support::files::write;
use crate::support::run::{Cfgctl, Run};
use crate::support::tenant::Tenant;

const SLACK_URL: &str = "https://hooks.slack.example/services/T0/B0/s3cr3t-slack+url";
const EC_TOKEN: &str = "xoxb-ec/token=with+signs";

fn notifier() -> &'static str {
    "api_version: v1/config\nkind: Notifier\nspec:\n  slug: on-call\n  name: On call\n  slack:\n    api_url: ${env:SLACK_URL}\n    channel: '#on-call'\n"
}

fn connection() -> &'static str {
    "api_version: v1/config\nkind: ExternalConnection\nspec:\n  slug: chat\n  name: Chat\n  slack:\n    token: ${file:secrets/ec-token.txt}\n"
}

fn repo(dir: &Path) {
    write(dir, "notifiers/on-call.yaml", notifier());
    write(dir, "connections/chat.yaml", connection());
    write(
        dir,
        "connections/secrets/ec-token.txt",
        &format!("{EC_TOKEN}\n"),
    );
}

/// Every form a secret could leak in: as is, URL-encoded (query and path) and base64.
pub(crate) fn forms(secret: &str) -> Vec<String> {
    let query: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
    let path = secret
        .replace('/', "%2F")
        .replace('+', "%2B")
        .replace('=', "%3D");
    vec![
        secret.to_string(),
        query,
        path,
        crate::support::base64(secret.as_bytes()),
    ]
}

fn assert_clean(what: &str, text: &str) {
    for secret in [SLACK_URL, EC_TOKEN] {
        for form in forms(secret) {
            assert!(
                !text.contains(&form),
                "{what} holds a secret ({form}):\n{text}"
            );
        }
    }
}

fn assert_run_clean(what: &str, run: &Run) {
    assert_clean(&format!("{what} stdout"), &run.stdout);
    assert_clean(&format!("{what} stderr"), &run.stderr);
}

/// Every file under `dir` (the repository, the cache, plan files, exports).
fn assert_files_clean(dir: &Path) {
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            if entry.path().ends_with("ec-token.txt") {
                continue;
            }
            assert_clean(&entry.path().display().to_string(), &text);
        }
    }
}

fn cfgctl(t: &Tenant, dir: &Path, cache: &Path) -> Cfgctl {
    Cfgctl::new(t)
        .dir(dir)
        .env("SLACK_URL", SLACK_URL)
        .env("CFGCTL_CACHE_DIR", cache)
}

#[tokio::test]
async fn a_secret_value_is_in_no_output_file_or_log() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("repo");
    let cache = work.path().join("cache");
    repo(&dir);
    let mut runs = Vec::new();
    for args in [
        &["-vv", "plan", "."][..],
        &["plan", ".", "--format", "json"],
        &["plan", ".", "--format", "markdown"],
        &["plan", ".", "--out", "../saved.json"],
    ] {
        let run = cfgctl(&t, &dir, &cache).args(args).run().await;
        assert_eq!(run.code, 0, "{}", run.transcript());
        runs.push((format!("{args:?}"), run));
    }
    let saved = std::fs::read_to_string(work.path().join("saved.json")).unwrap();
    assert!(
        saved.contains("${env:SLACK_URL}"),
        "the saved plan holds the reference"
    );
    let shown = &runs[0].1.stdout;
    assert!(shown.contains("(sensitive)"), "{shown}");
    assert!(!shown.contains("${env:SLACK_URL}"), "{shown}");

    // apply FILE resolves the references; the emulator stored the values.
    let run = cfgctl(&t, &dir, &cache)
        .args(&["-vv", "apply", "../saved.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    runs.push(("apply".into(), run));
    let read = t.read(Kind::named("Notifier"), Some("on-call")).await;
    assert_eq!(read.body["notifier"]["slack"]["api_url"], "**REDACTED**");

    // A redacted read is no diff: plan and drift say the target matches.
    for args in [
        &["-vv", "plan", ".", "--detailed-exitcode"][..],
        &["drift", "."],
        &["drift", ".", "--format", "json"],
    ] {
        let run = cfgctl(&t, &dir, &cache).args(args).run().await;
        assert_eq!(run.code, 0, "{args:?}: {}", run.transcript());
        runs.push((format!("{args:?}"), run));
    }
    let run = cfgctl(&t, &dir, &cache)
        .args(&["export", "--out", "../exported"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("NOTIFIER_ON_CALL_SLACK_API_URL"),
        "export names the variables: {}",
        run.stderr
    );
    let exported =
        std::fs::read_to_string(work.path().join("exported/notifiers/on-call.yaml")).unwrap();
    assert!(
        exported.contains("${env:NOTIFIER_ON_CALL_SLACK_API_URL}"),
        "{exported}"
    );
    assert!(!exported.contains("REDACTED"), "{exported}");
    runs.push(("export".into(), run));
    let run = cfgctl(&t, &dir, &cache).args(&["pull", "."]).run().await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    runs.push(("pull".into(), run));
    for (what, run) in &runs {
        assert_run_clean(what, run);
    }
    assert_files_clean(work.path());
}

#[tokio::test]
async fn a_literal_secret_is_located_and_allowed_only_as_a_warning() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    write(
        dir,
        "n.yaml",
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: n\n  name: N\n  slack:\n    channel: '#x'\n    api_url: https://hooks.example/literal\n",
    );
    let run = Cfgctl::bare().dir(dir).args(&["validate", "."]).run().await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("n.yaml:8:14: error: Notifier/n: `slack.api_url` is a secret field")
            || run
                .stderr
                .contains("n.yaml:8:14: error: Notifier/n: `slack.api_url` is a secret field"),
        "{}",
        run.transcript()
    );
    write(dir, "cfgctl.yaml", "allow_literal_secrets: true\n");
    let run = Cfgctl::bare().dir(dir).args(&["validate", "."]).run().await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.transcript()
            .contains("warning: Notifier/n: `slack.api_url`"),
        "{}",
        run.transcript()
    );
}

#[tokio::test]
async fn an_unresolvable_reference_names_the_variable_and_sends_nothing() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    write(work.path(), "n.yaml", notifier());
    let run = Cfgctl::new(&t)
        .dir(work.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "n.yaml:7:5: error: Notifier/on-call `slack.api_url`: the plan sends this secret, but `${env:SLACK_URL}` cannot be resolved: environment variable SLACK_URL is not set"
        ),
        "{}",
        run.transcript()
    );
    let read = t.read(Kind::named("Notifier"), Some("on-call")).await;
    assert_eq!(read.status, 404, "nothing was sent");
}

#[tokio::test]
async fn rotation_sends_exactly_the_updates_asked_for() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("tenant.db");
    let t = Tenant::start(cfgctl::emulator::Config {
        data: Some(data.clone()),
        ..cfgctl::emulator::Config::default()
    })
    .await;
    let dir = work.path().join("repo");
    let cache = work.path().join("cache");
    repo(&dir);
    let run = cfgctl(&t, &dir, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let rotated = "https://hooks.slack.example/rotated-value";
    // Nothing shows the new value: the target redacts.
    let run = cfgctl(&t, &dir, &cache)
        .env("SLACK_URL", rotated)
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = cfgctl(&t, &dir, &cache)
        .env("SLACK_URL", rotated)
        .args(&[
            "apply",
            ".",
            "--auto-approve",
            "--rotate-secrets",
            "Notifier/*",
        ])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("Notifier/on-call"), "{}", run.stdout);
    assert!(
        !run.stdout.contains("ExternalConnection/chat"),
        "{}",
        run.stdout
    );
    assert!(!run.transcript().contains(rotated));
    // The emulator stored the rotated value: an older tenant's answer (in clear) shows it.
    let older = Tenant::start(cfgctl::emulator::Config {
        data: Some(data),
        redact_secrets: false,
        ..cfgctl::emulator::Config::default()
    })
    .await;
    let read = older.read(Kind::named("Notifier"), Some("on-call")).await;
    assert_eq!(read.body["notifier"]["slack"]["api_url"], rotated);
    let read = older
        .read(Kind::named("ExternalConnection"), Some("chat"))
        .await;
    assert_eq!(read.body["external_connection"]["slack"]["token"], EC_TOKEN);
}

#[tokio::test]
async fn service_account_tokens_go_only_to_a_new_0600_file() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("repo");
    write(&dir, "sa.yaml", "api_version: v1/config\nkind: ServiceAccount\nspec:\n  slug: ci\n  name: CI\n  unrestricted: true\n");
    let tokens = work.path().join("tokens.json");
    let run = Cfgctl::new(&t)
        .dir(&dir)
        .args(&[
            "apply",
            ".",
            "--auto-approve",
            "--service-account-tokens",
            "../tokens.json",
        ])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let text = std::fs::read_to_string(&tokens).unwrap();
    let map: serde_json::Value = serde_json::from_str(&text).unwrap();
    let token = map["ServiceAccount/ci"].as_str().unwrap().to_string();
    assert!(token.len() > 10);
    assert!(!run.transcript().contains(&token));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&tokens).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let read = t.read(Kind::named("ServiceAccount"), Some("ci")).await;
    assert!(
        read.body["service_account"].get("token").is_none(),
        "{:?}",
        read.body
    );
    // An existing file is refused, before anything is sent.
    let run = Cfgctl::new(&t)
        .dir(&dir)
        .args(&[
            "apply",
            ".",
            "--auto-approve",
            "--service-account-tokens",
            "../tokens.json",
        ])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("tokens.json exists"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&tokens).unwrap(), text);
}

/// R4-10: a tokens file that cannot be created stops the run before anything is sent (the
/// token of a ServiceAccount exists only in its create's answer).
#[tokio::test]
async fn a_tokens_file_that_cannot_be_made_stops_apply_before_anything_is_sent() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("repo");
    write(&dir, "sa.yaml", "api_version: v1/config\nkind: ServiceAccount\nspec:\n  slug: ci\n  name: CI\n  unrestricted: true\n");
    let missing = work.path().join("no-such-dir").join("tokens.json");
    let run = Cfgctl::new(&t)
        .dir(&dir)
        .args(&["apply", ".", "--auto-approve", "--service-account-tokens"])
        .arg(&missing)
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("--service-account-tokens: cannot create")
            && run.stderr.contains("no-such-dir/tokens.json")
            && run.stderr.contains("nothing was changed"),
        "{}",
        run.stderr
    );
    let read = t.read(Kind::named("ServiceAccount"), Some("ci")).await;
    assert_eq!(
        read.status, 404,
        "the service account was created: {:?}",
        read.body
    );
    // A run that fails before a token is created leaves no file behind: the same command
    // can run again.
    let tokens = work.path().join("tokens.json");
    write(
        &dir,
        "bad.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: t\n",
    );
    let run = Cfgctl::new(&t)
        .dir(&dir)
        .args(&["apply", ".", "--auto-approve", "--service-account-tokens"])
        .arg(&tokens)
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(!tokens.exists(), "{}", run.transcript());
}

#[tokio::test]
async fn pull_writes_new_secrets_as_references_and_names_the_variables() {
    let t = Tenant::full().await;
    let notifier = serde_json::json!({"slug": "ops", "name": "Ops",
        "slack": {"api_url": SLACK_URL, "channel": "#ops"}});
    assert_eq!(
        t.create(Kind::named("Notifier"), notifier).await.status,
        200
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", "prune: [\"Notifier/*\"]\n");
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: t, name: T}\n",
    );
    let r: Run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["pull", ".", "--include-unmanaged"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "Secrets are written as references: set this variable before planning: NOTIFIER_OPS_SLACK_API_URL"
        ),
        "{}",
        r.stdout
    );
    let written = std::fs::read_to_string(dir.path().join("notifiers/ops.yaml")).unwrap();
    assert!(
        written.contains("${env:NOTIFIER_OPS_SLACK_API_URL}"),
        "{written}"
    );
    assert_clean("pulled file", &written);
    assert_clean("pull output", &r.transcript());
}
