//! The review's pull-request comment (docs/product.md §6): the policy's findings in every form
//! of the plan, and a Markdown comment read at a glance (snapshots).

use std::path::Path;

use serde_json::Value;

use crate::review::{assert_clean, cfgctl, git, monitor, notifier, repo_with, BUCKETS};
use crate::support::files::write;
use crate::support::run::Cfgctl;
use crate::support::tenant::Tenant;

/// A repository whose policy denies one bucket (a manifest rule) and warns on every create (a
/// plan rule).
fn policed_repository(dir: &Path) {
    write(dir, "cfgctl.yaml", "policy: rules\n");
    write(
        dir,
        "rules/buckets.rego",
        "package main\n\ndeny contains msg if {\n\tinput.kind == \"Bucket\"\n\tobject.get(input.spec, [\"labels\", \"team\"], \"\") == \"\"\n\tmsg := \"no `team` label\"\n}\n",
    );
    write(
        dir,
        "rules/plan.rego",
        "package cfgctl.plan\n\nwarn contains {\"msg\": \"a new bucket: check its retention\", \"address\": c.address} if {\n\tsome c in input.changes\n\tc.action == \"create\"\n\tc.kind == \"Bucket\"\n}\n",
    );
    write(
        dir,
        "buckets.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: owned\n  name: Owned\n  labels: {team: checkout}\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: ownerless\n  name: Ownerless\n",
    );
}

#[tokio::test]
async fn policy_findings_are_part_of_the_plan_in_every_format() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    policed_repository(work.path());
    let plan = |format: &'static str| {
        Cfgctl::new(&t)
            .dir(work.path())
            .args(&["plan", ".", "--format", format])
            .run()
    };
    let text = plan("text").await;
    assert_eq!(text.code, 1, "a denied plan fails: {}", text.transcript());
    assert!(
        text.stdout
            .contains("policy deny: no `team` label [main.deny]"),
        "{}",
        text.stdout
    );
    crate::support::cfgctl_snapshot!("policy_text", text.stdout);

    let json = plan("json").await;
    assert_eq!(json.code, 1, "{}", json.transcript());
    let v: Value = serde_json::from_str(&json.stdout).expect("the whole plan is printed");
    assert_eq!(v["summary"]["create"], 2);
    crate::support::cfgctl_snapshot!(
        "policy_json",
        serde_json::to_string_pretty(&v["policy"]).unwrap()
    );

    let md = plan("markdown").await;
    assert_eq!(md.code, 1, "{}", md.transcript());
    let policy = md.stdout.find("#### Policy").expect("a policy section");
    let first_action = md.stdout.find("<details>").expect("the actions");
    assert!(policy < first_action, "{}", md.stdout);
    crate::support::cfgctl_snapshot!("policy_markdown", md.stdout);
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing was sent"
    );
}

/// Every line of every ```` ```diff ```` block of a Markdown plan.
fn diff_lines(md: &str) -> Vec<&str> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in md.lines() {
        if line.starts_with("```") {
            inside = line.ends_with("diff");
        } else if inside {
            out.push(line);
        }
    }
    out
}

/// What the comment must hold whatever it shows: no grey `~` line in a diff block, the risky
/// headline before the tables, every delete marked, under GitHub's 65,536 characters.
fn assert_glanceable(md: &str) {
    let diffs = diff_lines(md);
    assert!(!diffs.is_empty(), "{md}");
    assert!(
        diffs.iter().all(|l| !l.starts_with('~')),
        "a `~` line in a diff block:\n{md}"
    );
    let table = md.find("| action |").expect("the counts");
    let headline = md
        .find("\n> ")
        .or_else(|| md.find("\nNo deletes"))
        .expect("a headline");
    assert!(headline < table, "risk first:\n{md}");
    assert!(!md.contains("| 0 |"), "no row of zeros:\n{md}");
    for line in md.lines().filter(|l| l.contains("<code>- delete</code>")) {
        assert!(line.contains("⚠️"), "an unmarked delete: {line}");
    }
    assert!(md.len() < 65_536);
}

#[tokio::test]
async fn the_markdown_comment_reads_at_a_glance() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    repo_with(
        &dir,
        &[
            ("cfgctl.yaml", "prune: [\"Bucket/*\"]\n"),
            ("buckets.yaml", BUCKETS),
            ("monitors/cpu.yaml", &monitor("1")),
            ("notifiers/pd.yaml", &notifier("PD_KEY")),
        ],
    );
    let run = cfgctl(&t, &dir, &cache)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let markdown = |args: &'static [&'static str]| {
        cfgctl(&t, &dir, &cache)
            .args(&["plan", ".", "--format", "markdown"])
            .args(args)
            .run()
    };

    write(&dir, "monitors/cpu.yaml", &monitor("2.5"));
    let run = markdown(&[]).await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains(
            "- series_conditions.defaults.critical.conditions[0].value: 1\n+ series_conditions.defaults.critical.conditions[0].value: 2.5\n"
        ),
        "{}",
        run.stdout
    );
    assert_glanceable(&run.stdout);
    crate::support::cfgctl_snapshot!("markdown_threshold", run.stdout);
    git(&dir, &["checkout", "--", "monitors/cpu.yaml"]);

    write(&dir, "buckets.yaml", BUCKETS.split("---").next().unwrap());
    let run = markdown(&["--prune"]).await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.starts_with(
            "### cfgctl plan for `[TARGET]`\n\n> ⚠️ **1 delete**: <code>Bucket/scratch</code>"
        ),
        "{}",
        run.stdout
    );
    assert_glanceable(&run.stdout);
    crate::support::cfgctl_snapshot!("markdown_delete", run.stdout);
    git(&dir, &["checkout", "--", "buckets.yaml"]);

    write(&dir, "notifiers/pd.yaml", &notifier("PD_KEY_2026"));
    let run = markdown(&["--base", "HEAD"]).await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains(
            "- pagerduty.routing_key: (sensitive) ${env:PD_KEY}\n+ pagerduty.routing_key: ${env:PD_KEY_2026}\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("> 🔑 **1 secret sent**: <code>Notifier/pd</code>"),
        "{}",
        run.stdout
    );
    assert_glanceable(&run.stdout);
    crate::support::cfgctl_snapshot!("markdown_rotation", run.stdout);
    assert_clean("the comment", &run.stdout);

    // The policy deny's comment (`policy_markdown`) reads the same way.
    let policed = work.path().join("policed");
    policed_repository(&policed);
    let run = Cfgctl::new(&t)
        .dir(&policed)
        .args(&[
            "plan",
            ".",
            "--format",
            "markdown",
            "--only",
            "Bucket/owner*",
        ])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stdout.contains("> ⛔ **1 policy denial** (below)"),
        "{}",
        run.stdout
    );
    assert_glanceable(&run.stdout);
}
