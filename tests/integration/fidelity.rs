//! Real-server fidelity against the emulator as it behaves by default (documented defaults
//! filled, sets in its own sorted order), and against a newer API description
//! (`serve --swagger FILE`): no perpetual diffs, nothing wiped.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, write, Cfgctl, Run, Tenant};

const BUCKET: &str = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n";

fn monitor(extra: &str) -> String {
    format!(
        "api_version: v1/config\nkind: Monitor\nspec:\n  slug: m\n  name: M\n  bucket_slug: b\n  prometheus_query: up == 0\n{extra}"
    )
}

fn budget(extra: &str) -> String {
    format!("api_version: v1/config\nkind: ConsumptionBudget\nspec:\n  slug: c\n  name: C\n{extra}")
}

fn team(emails: &str) -> String {
    format!("api_version: v1/config\nkind: Team\nspec:\n  slug: t\n  name: T\n  user_emails: {emails}\n")
}

/// `cfgctl plan` in the manifests' directory (so locations are relative).
async fn plan(t: &Tenant, dir: &std::path::Path) -> Run {
    Cfgctl::new(t)
        .dir(dir)
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await
}

async fn apply(t: &Tenant, dir: &std::path::Path) -> Run {
    let r = Cfgctl::new(t)
        .dir(dir)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    r
}

async fn object(t: &Tenant, kind: Kind, slug: &str) -> Value {
    let r = t.read(kind, Some(slug)).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.body[kind.def().singular].clone()
}

async fn assert_clean(t: &Tenant, dir: &std::path::Path) {
    let r = plan(t, dir).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("No changes"), "{}", r.stdout);
}

#[tokio::test]
async fn defaults_left_out_converge_and_an_explicit_value_is_an_update() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.yaml", BUCKET);
    write(dir.path(), "m.yaml", &monitor(""));
    write(dir.path(), "c.yaml", &budget(""));
    apply(&t, dir.path()).await;
    // The tenant filled the documented defaults in: the manifests leave them out.
    assert_eq!(
        object(&t, Kind::named("Monitor"), "m").await["interval_secs"],
        60
    );
    assert_eq!(
        object(&t, Kind::named("ConsumptionBudget"), "c").await["default_priority"],
        10
    );
    assert_clean(&t, dir.path()).await;

    // An explicit non-default value is an update, shown from the default.
    write(dir.path(), "m.yaml", &monitor("  interval_secs: 120\n"));
    write(dir.path(), "c.yaml", &budget("  default_priority: 3\n"));
    let r = plan(&t, dir.path()).await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    assert!(
        r.stdout.contains("~ interval_secs: 60 -> 120"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("~ default_priority: 10 -> 3"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Plan: 0 to create, 2 to update"),
        "{}",
        r.stdout
    );
    apply(&t, dir.path()).await;
    assert_eq!(
        object(&t, Kind::named("Monitor"), "m").await["interval_secs"],
        120
    );
    assert_clean(&t, dir.path()).await;

    // Removing it again goes back to the default, and converges.
    write(dir.path(), "m.yaml", &monitor(""));
    write(dir.path(), "c.yaml", &budget(""));
    let r = plan(&t, dir.path()).await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    assert!(
        r.stdout.contains("~ interval_secs: 120 -> 60"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("~ default_priority: 3 -> 10"),
        "{}",
        r.stdout
    );
    apply(&t, dir.path()).await;
    assert_eq!(
        object(&t, Kind::named("Monitor"), "m").await["interval_secs"],
        60
    );
    assert_eq!(
        object(&t, Kind::named("ConsumptionBudget"), "c").await["default_priority"],
        10
    );
    assert_clean(&t, dir.path()).await;
}

#[tokio::test]
async fn a_server_without_defaults_is_no_diff_either() {
    let t = Tenant::start(Config {
        server_defaults: false,
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.yaml", BUCKET);
    write(dir.path(), "m.yaml", &monitor(""));
    apply(&t, dir.path()).await;
    // This tenant answers without the default...
    assert!(object(&t, Kind::named("Monitor"), "m")
        .await
        .get("interval_secs")
        .is_none());
    assert_clean(&t, dir.path()).await;
    // ...and a manifest that states it is no diff against it.
    write(dir.path(), "m.yaml", &monitor("  interval_secs: 60\n"));
    assert_clean(&t, dir.path()).await;
}

#[tokio::test]
async fn sets_in_the_servers_order_converge_and_show_members() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.yaml",
        &team("[zoe@x.io, adam@x.io, mia@x.io]"),
    );
    write(dir.path(), "b.yaml", BUCKET);
    write(
        dir.path(),
        "m.yaml",
        &monitor("  signal_grouping:\n    label_names: [zone, app]\n"),
    );
    apply(&t, dir.path()).await;
    // The tenant answers the sets in its own (sorted) order.
    assert_eq!(
        object(&t, Kind::named("Team"), "t").await["user_emails"],
        json!(["adam@x.io", "mia@x.io", "zoe@x.io"])
    );
    assert_eq!(
        object(&t, Kind::named("Monitor"), "m").await["signal_grouping"]["label_names"],
        json!(["app", "zone"])
    );
    assert_clean(&t, dir.path()).await;

    write(
        dir.path(),
        "t.yaml",
        &team("[zoe@x.io, bob@x.io, adam@x.io]"),
    );
    let r = plan(&t, dir.path()).await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    cfgctl_snapshot!(r.stdout);
    let json_plan = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--format", "json"])
        .run()
        .await;
    let v: Value = serde_json::from_str(&json_plan.stdout).unwrap();
    assert_eq!(
        v["changes"][0]["fields"],
        json!([
            {"path": "user_emails[]", "before": "mia@x.io", "after": null},
            {"path": "user_emails[]", "before": null, "after": "bob@x.io"}
        ])
    );
    apply(&t, dir.path()).await;
    assert_clean(&t, dir.path()).await;
}

/// The embedded description with an added Bucket field and an added DropRule mode.
fn newer_swagger(dir: &std::path::Path) -> std::path::PathBuf {
    let mut doc = cfgctl::api::spec::swagger().clone();
    doc["definitions"]["configv1Bucket"]["properties"]["retention_tier"] = json!({
        "description": "Storage tier of the bucket's data.",
        "type": "string",
        "enum": ["RETENTION_TIER_UNSPECIFIED", "HOT", "COLD"]
    });
    let modes = doc["definitions"]["configv1DropRuleMode"]["enum"]
        .as_array_mut()
        .expect("DropRule modes are an enum");
    modes.push(json!("SHADOW"));
    let path = dir.join("newer.swagger.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// A tenant serving the newer description (`newer_swagger`, written into `dir`).
async fn newer_tenant(dir: &std::path::Path) -> Tenant {
    Tenant::start(Config {
        swagger: Some(newer_swagger(dir)),
        ..Config::default()
    })
    .await
}

#[tokio::test]
async fn a_newer_api_keeps_its_fields_and_shows_unknown_enum_values() {
    let scratch = tempfile::tempdir().unwrap();
    let t = newer_tenant(scratch.path()).await;
    // Someone using the newer API set the new field and the new enum value.
    let r = t
        .create(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "retention_tier": "COLD"}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = t
        .create(
            Kind::named("DropRule"),
            json!({"slug": "d", "name": "D", "mode": "SHADOW"}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // Objects are validated against the served description.
    let r = t
        .create(
            Kind::named("Bucket"),
            json!({"slug": "x", "name": "X", "retention_tier": "WARM"}),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");

    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.yaml", BUCKET);
    write(
        dir.path(),
        "d.yaml",
        "api_version: v1/config\nkind: DropRule\nspec:\n  slug: d\n  name: D\n  mode: PREVIEW\n",
    );
    let r = plan(&t, dir.path()).await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    cfgctl_snapshot!(r.stdout);
    // No diff for the unknown field: the bucket has no action at all.
    assert!(!r.stdout.contains("Bucket/b"), "{}", r.stdout);
    assert!(!r.stdout.contains("- retention_tier"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "Warning: Bucket.retention_tier: kept as the target has it; this cfgctl does not manage it"
        ),
        "{}",
        r.stdout
    );

    // An update of another field keeps it.
    write(
        dir.path(),
        "b.yaml",
        &format!("{BUCKET}  description: now described\n"),
    );
    apply(&t, dir.path()).await;
    let b = object(&t, Kind::named("Bucket"), "b").await;
    assert_eq!(b["description"], "now described");
    assert_eq!(b["retention_tier"], "COLD");
    assert_eq!(
        object(&t, Kind::named("DropRule"), "d").await["mode"],
        "PREVIEW"
    );
    let r = plan(&t, dir.path()).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(
        r.stdout
            .matches("Bucket.retention_tier: kept as the target has it")
            .count(),
        1,
        "{}",
        r.stdout
    );
}

/// The newer fields are read from the description itself, not only from objects that carry
/// them (the description is worked out while the lists are read).
#[tokio::test]
async fn a_newer_description_is_reported_before_any_object_carries_its_fields() {
    let scratch = tempfile::tempdir().unwrap();
    let t = newer_tenant(scratch.path()).await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.yaml", BUCKET);
    let r = plan(&t, dir.path()).await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    assert!(r.stdout.contains("+ Bucket/b"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Warning: Bucket.retention_tier: kept as the target has it"),
        "{}",
        r.stdout
    );
}

#[tokio::test]
async fn serve_refuses_a_swagger_file_that_cannot_describe_the_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(&path, "{\"swagger\": \"2.0\"}").unwrap();
    let run = Cfgctl::bare()
        .args(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--swagger",
            path.to_str().unwrap(),
        ])
        .run_blocking();
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("cannot be served as the API description: not a swagger 2.0 document with `definitions`"),
        "{}",
        run.stderr
    );
}

/// Kills the `cfgctl serve` child when the test ends, whatever happens.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn serve_flags_reach_the_emulator() {
    use std::io::BufRead;
    let scratch = tempfile::tempdir().unwrap();
    let swagger = newer_swagger(scratch.path());
    let mut child = Child(
        std::process::Command::new(env!("CARGO_BIN_EXE_cfgctl"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--server-defaults",
                "off",
            ])
            .arg("--swagger")
            .arg(&swagger)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let url = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        line.trim().to_string()
    })
    .await
    .unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        http.post(format!("{url}/api/v1/config/{path}"))
            .json(&body)
            .send()
    };
    let r = post(
        "buckets",
        json!({"bucket": {"slug": "b", "name": "B", "retention_tier": "COLD"}}),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let r: Value = post(
        "monitors",
        json!({"monitor": {"slug": "m", "name": "M", "bucket_slug": "b"}}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(r["monitor"]["slug"], "m", "{r}");
    assert!(r["monitor"].get("interval_secs").is_none(), "{r}");
    // The served description is the newer one.
    let doc: Value = http
        .get(format!("{url}/api/v1/config/swagger.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(doc["definitions"]["configv1Bucket"]["properties"]
        .get("retention_tier")
        .is_some());
}

/// Every object's keys in reverse order at every depth and every number written as a double, as
/// a server of another language may write them.
fn respelled(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        // The document pretty-printed, respelled the same way.
                        ("dashboard_json", Value::String(text)) => {
                            let doc: Value = serde_json::from_str(text).unwrap();
                            Value::String(serde_json::to_string_pretty(&respelled(&doc)).unwrap())
                        }
                        _ => respelled(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(respelled).collect()),
        Value::Number(n) => n.as_f64().map_or(value.clone(), |f| json!(f)),
        other => other.clone(),
    }
}

/// A server that writes objects its own way (keys in its order, integers as doubles, documents
/// pretty-printed) plans no change for what cfgctl applied: the comparable form is one however
/// the server spells it (`plan::normalize::direct` and the embedded reader on the way).
#[tokio::test]
async fn a_server_spelling_objects_its_own_way_plans_no_change() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    crate::support::copy_dir(
        &crate::support::root().join("examples/quickstart"),
        dir.path(),
    );
    apply(&t, dir.path()).await;
    let mut lists = std::collections::BTreeMap::new();
    for name in ["Team", "Bucket", "Collection", "Dashboard", "Monitor"] {
        let kind = Kind::named(name);
        let query = match name {
            "Dashboard" => "include_dashboard_json=true",
            _ => "",
        };
        let page = t.list(kind, query).await;
        assert_eq!(page.status, 200, "{page:?}");
        let respelled = respelled(&page.body);
        assert_ne!(respelled.to_string(), page.body.to_string());
        lists.insert(cfgctl::api::wire::collection_path(kind), respelled);
    }
    let server = crate::hostile::Hostile::start(move |r| {
        let page = lists.get(&r.path).filter(|_| r.method == "GET")?;
        Some(crate::hostile::Answer::json(200, page.clone()))
    });
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&[
            "--url",
            &server.url(),
            "--token",
            "t",
            "plan",
            ".",
            "--detailed-exitcode",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("No changes"), "{}", r.stdout);
    assert!(r.stdout.contains("5 unchanged"), "{}", r.stdout);
}
