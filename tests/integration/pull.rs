//! `cfgctl pull` (from the tenant back into the files, in place) and the `drift` report that
//! names what drifted, against the emulator.

use std::path::Path;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, read, scratch_copy, write, Cfgctl, Tenant};

/// Three teams behind a comment header; the middle one is edited out of band.
const TEAMS: &str = "# Teams, declared together.\n# Every other resource points at them by slug.\n\napi_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n  description: Runs the shared Kubernetes clusters and the observability pipeline.\n  user_emails:\n    - alice@example.com\n    - bob@example.com\n---\n# The payments team.\napi_version: v1/config\nkind: Team\nspec:\n  slug: payments\n  name: Payments  # shown in the UI\n  description: Checkout, billing and the payment gateway.\n  user_emails:\n    - carol@example.com\n    - dan@example.com\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: sre\n  name: SRE\n  description: \"\"\n";

/// Reads a resource, changes it, writes it back: an edit made in the UI.
async fn edit(t: &Tenant, kind: Kind, slug: &str, change: impl FnOnce(&mut Value)) {
    let r = t.read(kind, Some(slug)).await;
    assert_eq!(r.status, 200, "{r:?}");
    let mut object = r.body[kind.def().singular].clone();
    for f in kind.def().server_owned {
        object.as_object_mut().unwrap().remove(*f);
    }
    change(&mut object);
    let r = t.update(kind, Some(slug), object).await;
    assert_eq!(r.status, 200, "{r:?}");
}

/// Changes one member of an embedded JSON document.
fn edit_document(object: &mut Value, change: impl FnOnce(&mut Value)) {
    let text = object["dashboard_json"].as_str().unwrap();
    let mut doc: Value = serde_json::from_str(text).unwrap();
    change(&mut doc);
    object["dashboard_json"] = json!(doc.to_string());
}

/// The fixture set with TEAMS in place of its teams file, applied to a fresh tenant.
async fn applied() -> (Tenant, tempfile::TempDir) {
    let t = Tenant::start(Config::default()).await;
    let dir = scratch_copy();
    write(dir.path(), "teams/teams.yaml", TEAMS);
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    (t, dir)
}

#[tokio::test]
async fn pull_rewrites_only_what_changed_and_plan_is_clean_after() {
    let (t, dir) = applied().await;
    let d = dir.path();
    let before: Vec<(&str, String)> = [
        "teams/teams.yaml",
        "dashboards/payments-overview.yaml",
        "classic-dashboards/platform-nodes.yaml",
        "monitors/payments.json",
        "buckets/platform.yaml",
    ]
    .into_iter()
    .map(|f| (f, read(d, f)))
    .collect();

    edit(&t, Kind::named("Team"), "payments", |o| {
        o["description"] = json!("Edited in the UI");
        o["name"] = json!("Payments (UI)");
    })
    .await;
    // A dashboard written as a YAML mapping, and one written as a JSON string.
    edit(&t, Kind::named("Dashboard"), "payments-overview", |o| {
        edit_document(o, |doc| doc["spec"]["duration"] = json!("24h"))
    })
    .await;
    edit(&t, Kind::named("ClassicDashboard"), "platform-nodes", |o| {
        edit_document(o, |doc| doc["title"] = json!("Platform nodes (UI)"))
    })
    .await;
    // The second object of a JSON array file.
    edit(
        &t,
        Kind::named("Monitor"),
        "payments-gateway-latency",
        |o| {
            o["name"] = json!("Gateway p99 (UI)");
        },
    )
    .await;

    t.emulator.reset_stats();
    let r = Cfgctl::new(&t).dir(d).args(&["pull"]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let log = t.emulator.stats().log;
    assert!(!log.is_empty());
    let writes: Vec<_> = log.iter().filter(|l| l.method != "GET").collect();
    assert!(writes.is_empty(), "pull sent writes: {writes:?}");
    assert_eq!(
        r.stdout,
        "cfgctl pull from [TARGET]\n\nFiles changed:\n  \
         ~ classic-dashboards/platform-nodes.yaml: ClassicDashboard/platform-nodes\n  \
         ~ dashboards/payments-overview.yaml: Dashboard/payments-overview\n  \
         ~ monitors/payments.json: Monitor/payments-gateway-latency\n  \
         ~ teams/teams.yaml: Team/payments\n\n\
         Pull: 4 resources pulled into 4 files, 0 files new, 0 gone from the target, 23 unchanged.\n"
    );

    // Each file is what it was with the one value changed: header, comments, the other
    // documents and every other byte as they were.
    let expected = [
        before[0]
            .1
            .replace(
                "  description: Checkout, billing and the payment gateway.\n",
                "  description: Edited in the UI\n",
            )
            .replace(
                "  name: Payments  # shown in the UI\n",
                "  name: Payments (UI)  # shown in the UI\n",
            ),
        before[1]
            .1
            .replace("      duration: \"6h\"\n", "      duration: \"24h\"\n"),
        before[2].1.replace(
            "\"title\": \"Platform nodes\",",
            "\"title\": \"Platform nodes (UI)\",",
        ),
        before[3].1.replace(
            "\"name\": \"Payment gateway p99 latency\"",
            "\"name\": \"Gateway p99 (UI)\"",
        ),
        before[4].1.clone(),
    ];
    for ((file, old), new) in before.iter().zip(&expected) {
        assert_ne!(
            file.ends_with("platform.yaml") && file.starts_with("buckets"),
            old != new,
            "{file}: the test edit did not apply"
        );
        assert_eq!(&read(d, file), new, "{file}");
    }

    let plan = Cfgctl::new(&t)
        .dir(d)
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
    let validate = Cfgctl::new(&t).dir(d).args(&["validate", "."]).run().await;
    assert_eq!(validate.code, 0, "{}", validate.transcript());
    // Nothing left to pull: a second pull changes no file.
    let again = Cfgctl::new(&t).dir(d).args(&["pull"]).run().await;
    assert!(
        again
            .stdout
            .contains("Pull: 0 resources pulled into 0 files"),
        "{}",
        again.stdout
    );
}

#[tokio::test]
async fn pull_keeps_the_form_of_flow_documents_and_one_line_json() {
    // A flow-style spec is written again in flow style on its line, the rest of the file
    // stays. A one-line JSON object stays one line.
    let (t, dir) = applied().await;
    let d = dir.path();
    let header = "# A flow-style team, then a block one.\n";
    let flow =
        "api_version: v1/config\nkind: Team\nspec: {slug: sre, name: SRE, description: \"\"}\n";
    let block = "---\napi_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n  description: Runs the shared Kubernetes clusters and the observability pipeline.\n  user_emails: [alice@example.com, bob@example.com]\n";
    write(d, "teams/teams.yaml", &format!("{header}{flow}{block}"));
    write(
        d,
        "teams/payments.json",
        "{\"api_version\": \"v1/config\", \"kind\": \"Team\", \"spec\": {\"slug\": \"payments\", \"name\": \"Payments\", \"description\": \"Checkout, billing and the payment gateway.\", \"user_emails\": [\"carol@example.com\", \"dan@example.com\"]}}\n",
    );
    edit(&t, Kind::named("Team"), "sre", |o| {
        o["name"] = json!("Site reliability")
    })
    .await;
    edit(&t, Kind::named("Team"), "payments", |o| {
        o["user_emails"] = json!(["carol@example.com"])
    })
    .await;
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["pull", "--only", "Team/*"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let teams = read(d, "teams/teams.yaml");
    assert!(teams.starts_with(header), "{teams}");
    assert!(teams.ends_with(block), "{teams}");
    let sre = &teams[header.len()..teams.len() - block.len()];
    assert_eq!(
        sre,
        "api_version: v1/config\nkind: Team\nspec: {slug: sre, name: Site reliability, description: \"\"}\n"
    );
    assert_eq!(
        read(d, "teams/payments.json"),
        "{\"api_version\": \"v1/config\", \"kind\": \"Team\", \"spec\": {\"slug\": \"payments\", \"name\": \"Payments\", \"description\": \"Checkout, billing and the payment gateway.\", \"user_emails\": [\"carol@example.com\"]}}\n"
    );
    let plan = Cfgctl::new(&t)
        .dir(d)
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
}

#[tokio::test]
async fn gone_resources_are_reported_and_unmanaged_ones_become_files() {
    let (t, dir) = applied().await;
    let d = dir.path();
    let monitors = read(d, "monitors/payments.json");
    let r = t
        .delete(Kind::named("Monitor"), Some("payments-checkout-errors"), "")
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // Inside the prune scope (Dashboard/*), and outside it (Team/*).
    let r = t
        .create(
            Kind::named("Dashboard"),
            json!({"slug": "scratch", "name": "Scratch", "collection_slug": "payments",
                   "dashboard_json": "{\"kind\":\"Dashboard\",\"metadata\":{\"name\":\"scratch\"},\"spec\":{\"duration\":\"1h\"}}"}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = t
        .create(
            Kind::named("Team"),
            json!({"slug": "interns", "name": "Interns"}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");

    // A file already at the new file's path is never replaced: nothing is written.
    write(d, "dashboards/scratch.yaml", "# ours\n");
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["pull", "--include-unmanaged"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains("dashboards/scratch.yaml` already exists"),
        "{}",
        r.stderr
    );
    assert_eq!(read(d, "dashboards/scratch.yaml"), "# ours\n");
    std::fs::remove_file(d.join("dashboards/scratch.yaml")).unwrap();

    t.emulator.reset_stats();
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["pull", "--include-unmanaged"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(t.emulator.stats().log.iter().all(|l| l.method == "GET"));
    assert_eq!(
        r.stdout,
        "cfgctl pull from [TARGET]\n\nFiles changed:\n  \
         + dashboards/scratch.yaml: Dashboard/scratch (new file)\n\n\
         Gone from the target (manifests kept; remove them to accept the deletion, or `cfgctl apply` to create them again):\n  \
         - Monitor/payments-checkout-errors (monitors/payments.json:2)\n\n\
         Pull: 0 resources pulled into 0 files, 1 file new, 1 gone from the target, 26 unchanged.\n"
    );
    assert_eq!(read(d, "monitors/payments.json"), monitors, "not removed");
    assert!(
        !d.join("teams/interns.yaml").exists(),
        "outside the prune scope"
    );
    let scratch = read(d, "dashboards/scratch.yaml");
    assert!(scratch.contains("  slug: scratch\n"), "{scratch}");

    // The new file is managed now: with --prune nothing would be deleted.
    let plan = Cfgctl::new(&t)
        .dir(d)
        .args(&["plan", ".", "--prune", "--only", "Dashboard/*"])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
    assert!(
        plan.stdout
            .contains("No changes: the target matches the manifests (3 resources)."),
        "{}",
        plan.stdout
    );
}

/// Two teams and a prune scope over teams: small enough to read in a snapshot.
async fn small() -> (Tenant, tempfile::TempDir) {
    let t = Tenant::start(Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "cfgctl.yaml", "prune:\n  - \"Team/*\"\n");
    write(
        d,
        "teams.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n  user_emails: [alice@example.com]\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: payments\n  name: Payments\n",
    );
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t).dir(d).args(&["drift", "."]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("No drift: the target matches the manifests (2 resources)."),
        "{}",
        r.stdout
    );
    (t, dir)
}

/// `drift` in all three formats, for a snapshot; the exit code must be 2 in each.
async fn drift_report(t: &Tenant, d: &Path) -> String {
    let mut out = String::new();
    for format in ["text", "markdown", "json"] {
        let r = Cfgctl::new(t)
            .dir(d)
            .args(&["drift", ".", "--format", format])
            .run()
            .await;
        assert_eq!(r.code, 2, "{}", r.transcript());
        assert!(!r.stdout.contains("No changes"), "{}", r.stdout);
        assert!(!r.stdout.contains("No drift"), "{}", r.stdout);
        out.push_str(&format!("=== {format}\n{}", r.stdout));
    }
    out
}

#[tokio::test]
async fn drift_names_a_changed_resource_with_its_fields() {
    let (t, dir) = small().await;
    edit(&t, Kind::named("Team"), "platform", |o| {
        o["name"] = json!("Platform (UI)");
        o["user_emails"] = json!(["alice@example.com", "eve@example.com"]);
    })
    .await;
    let report = drift_report(&t, dir.path()).await;
    assert!(report.contains("Team/platform"), "{report}");
    cfgctl_snapshot!("drift_changed", report);
}

#[tokio::test]
async fn drift_names_a_resource_deleted_on_the_target() {
    let (t, dir) = small().await;
    let r = t.delete(Kind::named("Team"), Some("payments"), "").await;
    assert_eq!(r.status, 200, "{r:?}");
    let report = drift_report(&t, dir.path()).await;
    assert!(report.contains("Team/payments"), "{report}");
    cfgctl_snapshot!("drift_deleted", report);
}

#[tokio::test]
async fn drift_names_an_unmanaged_resource_inside_the_prune_scope() {
    let (t, dir) = small().await;
    let r = t
        .create(
            Kind::named("Team"),
            json!({"slug": "interns", "name": "Interns"}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let report = drift_report(&t, dir.path()).await;
    assert!(report.contains("Team/interns"), "{report}");
    cfgctl_snapshot!("drift_unmanaged", report);
}

/// Red team D27: a literal secret (allowed) that differs on a tenant answering in clear is no
/// reason to pull nothing: the other fields are pulled, and the secret becomes a reference
/// whose variable is named (never the new value in clear).
#[tokio::test]
async fn a_differing_literal_secret_does_not_stop_the_pull() {
    let t = Tenant::start(Config {
        redact_secrets: false,
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", "allow_literal_secrets: true\n");
    write(
        dir.path(),
        "n.yaml",
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: lit\n  name: Lit\n  slack:\n    api_url: https://hooks.example/services/LIT1\n    channel: \"#a\"\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    edit(&t, Kind::named("Notifier"), "lit", |o| {
        o["slack"]["api_url"] = json!("https://hooks.example/services/LIT2-d27");
        o["slack"]["channel"] = json!("#b");
    })
    .await;
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["pull", "."])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let text = read(dir.path(), "n.yaml");
    assert!(text.contains("channel: \"#b\""), "{text}");
    assert!(
        text.contains("api_url: ${env:NOTIFIER_LIT_SLACK_API_URL}"),
        "{text}"
    );
    assert!(
        !text.contains("LIT2-d27") && !r.transcript().contains("LIT2-d27"),
        "{text}"
    );
    assert!(
        r.transcript().contains("NOTIFIER_LIT_SLACK_API_URL"),
        "{}",
        r.transcript()
    );
}
