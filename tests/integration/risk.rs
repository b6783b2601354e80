//! The risk summary a reviewer reads first (docs/product.md §3 "Review"): a plan that deletes a
//! bucket with a cascade, has unsupported actions, sends a secret and updates 200 resources
//! opens with the summary, in text and Markdown (the Markdown under GitHub's 65,536-character
//! limit, the summary whole); the JSON plan carries it as `risk`.

use cfgctl::api::registry::Kind;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, write, Cfgctl, Tenant};

fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap()
}

/// Bucket/old (with a Monitor in it that no manifest declares), ServiceAccount/ci (which has
/// no update: a change to it is unsupported) and 200 teams named "Old".
async fn tenant() -> Tenant {
    let t = Tenant::full().await;
    let r = t
        .create(kind("Bucket"), json!({"slug": "old", "name": "Old"}))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let monitor = json!({"slug": "m", "name": "M", "bucket_slug": "old", "prometheus_query": "up"});
    assert_eq!(t.create(kind("Monitor"), monitor).await.status, 200);
    let sa = json!({"slug": "ci", "name": "CI"});
    assert_eq!(t.create(kind("ServiceAccount"), sa).await.status, 200);
    for i in 0..200 {
        let team = json!({"slug": format!("team-{i:03}"), "name": "Old"});
        assert_eq!(t.create(kind("Team"), team).await.status, 200);
    }
    t
}

fn repo(dir: &std::path::Path) {
    write(dir, "cfgctl.yaml", "prune: [\"Bucket/*\"]\n");
    write(
        dir,
        "bucket.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: keep, name: Keep}\n",
    );
    write(
        dir,
        "sa.yaml",
        "api_version: v1/config\nkind: ServiceAccount\nspec: {slug: ci, name: CI renamed}\n",
    );
    write(
        dir,
        "notifier.yaml",
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: on-call\n  name: On call\n  slack:\n    api_url: ${env:SLACK_URL}\n    channel: '#on-call'\n",
    );
    let teams: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "api_version: v1/config\nkind: Team\nspec:\n  slug: team-{i:03}\n  name: New\n  description: {}\n",
                "d".repeat(300)
            )
        })
        .collect();
    write(dir, "teams.yaml", &teams.join("---\n"));
}

async fn plan(t: &Tenant, dir: &std::path::Path, format: &str) -> String {
    let r = Cfgctl::new(t)
        .dir(dir)
        .env("SLACK_URL", "https://hooks.example/very-secret")
        .args(&["plan", ".", "--prune", "--no-cache", "--format", format])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(!r.stdout.contains("very-secret"), "{}", r.stdout);
    r.stdout
}

#[tokio::test]
async fn a_risky_plan_opens_with_its_risk_summary_in_every_form() {
    let t = tenant().await;
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());

    let text = plan(&t, dir.path(), "text").await;
    // The summary, whole, before the first action.
    let end = text.find("  Environments: ").unwrap();
    let end = end + text[end..].find('\n').unwrap() + 1;
    let summary = &text[..end];
    assert!(summary.contains("\nRisk summary:\n"), "{text}");
    assert!(text[end..].starts_with("\n  + Bucket/keep"), "{text}");
    cfgctl_snapshot!("risk_summary_text", summary);

    let md = plan(&t, dir.path(), "markdown").await;
    assert!(md.chars().count() < 65_536, "{}", md.chars().count());
    assert!(md.contains("more resources not shown"), "details are cut");
    let head = &md[..md.find("<details>").unwrap()];
    // The heading, what is risky, then the summary.
    assert!(md.starts_with("### cfgctl plan for "), "{md}");
    let after_heading = &head[head.find('\n').unwrap()..];
    assert!(
        after_heading.starts_with(
            "\n\n> ⚠️ **1 delete**: <code>Bucket/old</code>  \n> 🔑 **1 secret sent**: <code>Notifier/on-call</code>  \n> ❗ **1 unsupported**: <code>ServiceAccount/ci</code>  \n\n#### Risk summary\n"
        ),
        "{head}"
    );
    assert!(head.contains("**Environments:**"), "{head}");
    let head = match head.find("```mermaid") {
        Some(at) => &head[..at],
        None => head,
    };
    cfgctl_snapshot!("risk_summary_markdown", head);

    let json: Value = serde_json::from_str(&plan(&t, dir.path(), "json").await).unwrap();
    cfgctl_snapshot!(
        "risk_summary_json",
        serde_json::to_string_pretty(&json["risk"]).unwrap()
    );
}
