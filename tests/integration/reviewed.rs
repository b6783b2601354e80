//! `apply DIR --reviewed PLANFILE` (docs/product.md §6): what was reviewed is applied; a tenant
//! or a repository that moved since review is refused, nothing sent, the difference listed.

use cfgctl::api::registry::Kind;

use crate::review::{cfgctl, monitor, repo_with};
use crate::support::files::write;
use crate::support::tenant::Tenant;

#[tokio::test]
async fn apply_reviewed_applies_what_was_reviewed_and_refuses_what_moved_since() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("repo"), work.path().join("cache"));
    let platform =
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: platform\n  name: Platform\n";
    repo_with(
        &dir,
        &[
            ("buckets.yaml", platform),
            ("monitors/cpu.yaml", &monitor("1")),
        ],
    );
    let apply = |extra: &'static [&'static str]| {
        cfgctl(&t, &dir, &cache)
            .args(&["apply", ".", "--auto-approve"])
            .args(extra)
            .run()
    };
    let run = apply(&[]).await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    // The pull request: the threshold changes, and its plan is saved for review.
    write(&dir, "monitors/cpu.yaml", &monitor("2.5"));
    let run = cfgctl(&t, &dir, &cache)
        .args(&["plan", ".", "--out", "../reviewed.json"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let writes = |t: &Tenant| {
        t.emulator
            .stats()
            .log
            .iter()
            .filter(|l| l.method != "GET")
            .count()
    };

    // The tenant moved after review: refused, nothing sent, the difference listed.
    let bucket = Kind::named("Bucket");
    let moved = t
        .update(
            bucket,
            Some("platform"),
            serde_json::json!({"slug": "platform", "name": "Platform (UI)"}),
        )
        .await;
    assert_eq!(moved.status, 200, "{moved:?}");
    t.emulator.reset_stats();
    let run = apply(&["--reviewed", "../reviewed.json"]).await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "changed since review:\n  ~ update Bucket/platform (not in the reviewed plan): name: \"Platform (UI)\" -> \"Platform\"\n"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);
    assert_eq!(writes(&t), 0, "nothing was sent");
    let back = t
        .update(
            bucket,
            Some("platform"),
            serde_json::json!({"slug": "platform", "name": "Platform"}),
        )
        .await;
    assert_eq!(back.status, 200, "{back:?}");

    // The repository moved after review: refused, the difference listed.
    write(&dir, "monitors/cpu.yaml", &monitor("5"));
    t.emulator.reset_stats();
    let run = apply(&["--reviewed", "../reviewed.json"]).await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "changed since review:\n  ~ update Monitor/cpu: series_conditions.defaults.critical.conditions[0].value: 1 -> 5 (reviewed: 1 -> 2.5)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(writes(&t), 0, "nothing was sent");

    // As reviewed: applied.
    write(&dir, "monitors/cpu.yaml", &monitor("2.5"));
    let run = apply(&["--reviewed", "../reviewed.json"]).await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let read = t.read(Kind::named("Monitor"), Some("cpu")).await;
    assert_eq!(
        read.body["monitor"]["series_conditions"]["defaults"]["critical"]["conditions"][0]["value"],
        2.5
    );
    // Nothing left to do is in any reviewed plan.
    let run = apply(&["--reviewed", "../reviewed.json"]).await;
    assert_eq!(run.code, 0, "{}", run.transcript());
}

/// A secret reference swapped after review (red team D2): the reviewed create sends `${env:A}`;
/// the repository now says `${env:EVIL}`. Shown `(sensitive)` both times, yet a different
/// secret goes to the target: refused, nothing sent, both references listed.
#[tokio::test]
async fn a_secret_reference_swapped_after_review_is_refused() {
    let t = Tenant::full().await;
    let work = tempfile::tempdir().unwrap();
    let (dir, cache) = (work.path().join("cfg"), work.path().join("cache"));
    let notifier = |var: &str| {
        format!(
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: n1\n  name: N1\n  slack:\n    api_url: ${{env:{var}}}\n    channel: \"#x\"\n"
        )
    };
    write(&dir, "m.yaml", &notifier("A"));
    let run = |args: &'static [&'static str]| {
        cfgctl(&t, &dir, &cache)
            .env("A", "https://hooks.slack.com/services/SECRETA")
            .env("EVIL", "https://evil.example/steal")
            .args(args)
            .run()
    };
    let r = run(&["plan", ".", "--out", "../rev.plan"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    write(&dir, "m.yaml", &notifier("EVIL"));
    t.emulator.reset_stats();
    let r = run(&["apply", ".", "--auto-approve", "--reviewed", "../rev.plan"]).await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "changed since review:\n  + create Notifier/n1: slack.api_url: reviewed ${env:A}, now ${env:EVIL}\n"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("evil.example"), "{}", r.stderr);
    let writes = t
        .emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method != "GET")
        .count();
    assert_eq!(writes, 0, "nothing was sent");
    // The reference as reviewed: applied.
    write(&dir, "m.yaml", &notifier("A"));
    let r = run(&["apply", ".", "--auto-approve", "--reviewed", "../rev.plan"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}
