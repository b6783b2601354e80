//! The whole API: one manifest of every creatable kind of the description, applied in
//! dependency order, planned clean, exported and read back with no diff, then pruned
//! referrers first; a kind a newer target adds is managed with no new code; a kind the
//! target lacks is unsupported, with the reason.

use std::collections::BTreeMap;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{write, Cfgctl, Tenant};

/// One minimal spec per creatable kind of the embedded description, with references that
/// give the graph its order (Notifier before NotificationPolicy, LogScaleAction before
/// LogScaleAlert, TraceBehavior and Dataset before TraceBehaviorConfig, Bucket before the
/// rules).
fn every_kind() -> BTreeMap<&'static str, Value> {
    let mut specs: BTreeMap<&'static str, Value> = BTreeMap::new();
    for def in cfgctl::api::registry::embedded_kinds() {
        if !def.full_ops.create {
            continue;
        }
        let spec = if def.singleton {
            json!({})
        } else {
            json!({"slug": format!("x-{}", def.path), "name": format!("{} one", def.name)})
        };
        specs.insert(def.name, spec);
    }
    let mut set = |kind: &str, extra: Value| {
        let spec = specs.get_mut(kind).unwrap().as_object_mut().unwrap();
        spec.extend(extra.as_object().unwrap().clone());
    };
    set(
        "NotificationPolicy",
        json!({"team_slug": "x-teams",
        "routes": {"defaults": {"warn": {"notifier_slugs": ["x-notifiers"]}}}}),
    );
    set(
        "LogScaleAlert",
        json!({"log_scale_action_slugs": ["x-log-scale-actions"]}),
    );
    set(
        "TraceBehaviorConfig",
        json!({"main_behavior_assignments": [
        {"dataset_slug": "x-datasets", "behavior_slug": "x-trace-behaviors"}]}),
    );
    for k in ["RecordingRule", "RollupRule", "MappingRule"] {
        set(k, json!({"bucket_slug": "x-buckets"}));
    }
    set(
        "Monitor",
        json!({"bucket_slug": "x-buckets", "prometheus_query": "up"}),
    );
    set(
        "ClassicDashboard",
        json!({"bucket_slug": "x-buckets", "dashboard_json": "{\"title\":\"c\"}"}),
    );
    set(
        "GrafanaDashboard",
        json!({"bucket_slug": "x-buckets", "dashboard_json": "{\"title\":\"g\"}"}),
    );
    set(
        "Dashboard",
        json!({"collection_slug": "x-collections", "dashboard_json": "{\"kind\":\"Dashboard\"}"}),
    );
    set(
        "Dataset",
        json!({"description": "d", "configuration": {"type": "TRACES"}}),
    );
    set(
        "SLO",
        json!({"notification_policy_slug": "x-notification-policies"}),
    );
    specs
}

fn write_repo(dir: &std::path::Path, specs: &BTreeMap<&'static str, Value>) {
    let docs: Vec<String> = specs
        .iter()
        .map(|(kind, spec)| {
            serde_json::to_string(&json!({"api_version": "v1/config", "kind": kind, "spec": spec}))
                .unwrap()
        })
        .collect();
    write(dir, "all.yaml", &(docs.join("\n---\n") + "\n"));
}

/// The order of the writes of `method` in the tenant's log, by path segment.
fn order_of(t: &Tenant, method: &str) -> Vec<String> {
    t.emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method == method)
        .map(|l| {
            l.path
                .trim_start_matches("/api/v1/config/")
                .split('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn before(order: &[String], first: &str, then: &str) -> bool {
    let pos = |p: &str| {
        order
            .iter()
            .position(|x| x == p)
            .unwrap_or_else(|| panic!("{p} not in {order:?}"))
    };
    pos(first) < pos(then)
}

#[tokio::test]
async fn every_creatable_kind_applies_plans_clean_round_trips_and_prunes() {
    let t = Tenant::full().await;
    let specs = every_kind();
    assert!(specs.len() >= 37, "{}", specs.len());
    let dir = tempfile::tempdir().unwrap();
    write_repo(dir.path(), &specs);
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let done = format!(
        "Apply: {} done (0 resolved conflicts), 0 failed",
        specs.len()
    );
    assert!(r.stdout.contains(&done), "{}", r.stdout);
    let creates = order_of(&t, "POST");
    assert!(before(&creates, "notifiers", "notification-policies"));
    assert!(before(&creates, "log-scale-actions", "log-scale-alerts"));
    assert!(before(&creates, "trace-behaviors", "trace-behavior-config"));
    assert!(before(&creates, "datasets", "trace-behavior-config"));
    for rule in ["recording-rules", "rollup-rules", "mapping-rules"] {
        assert!(before(&creates, "buckets", rule), "{rule}");
    }
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // Exported and read back: no diff.
    let out = tempfile::tempdir().unwrap();
    let exported = out.path().join("tenant");
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", exported.to_str().unwrap()])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .args(&["plan", exported.to_str().unwrap(), "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains(&format!("({} resources)", specs.len())),
        "{}",
        r.stdout
    );
    // Pruned, every kind and singleton but one team: referrers first, no 400.
    let keep = tempfile::tempdir().unwrap();
    write(
        keep.path(),
        "cfgctl.yaml",
        "prune: [\"*/*\", \"*\"]\nmax_deletes: 100\n",
    );
    write(
        keep.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: x-teams, name: Team one}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(keep.path())
        .args(&[
            "apply",
            ".",
            "--prune",
            "--allow-empty-prune",
            "--auto-approve",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let log = t.emulator.stats().log;
    let refused: Vec<_> = log
        .iter()
        .filter(|l| l.method == "DELETE" && l.status != 200)
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
    let deletes = order_of(&t, "DELETE");
    assert_eq!(deletes.len(), specs.len() - 1, "{deletes:?}");
    assert!(before(&deletes, "notification-policies", "notifiers"));
    assert!(before(&deletes, "log-scale-alerts", "log-scale-actions"));
    assert!(before(&deletes, "trace-behavior-config", "trace-behaviors"));
    assert!(before(&deletes, "recording-rules", "buckets"));
    let r = Cfgctl::new(&t)
        .dir(keep.path())
        .args(&["plan", ".", "--prune", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}

/// The embedded description plus a kind of a newer API: `Widget`, which references a bucket.
fn newer_description(dir: &std::path::Path) -> std::path::PathBuf {
    let mut doc: Value = serde_json::from_str(cfgctl::api::spec::SWAGGER_JSON).unwrap();
    let widget = |op: &str| format!("{op}Widget");
    doc["paths"]["/api/v1/config/widgets"] = json!({
        "get": {"operationId": "ListWidgets", "parameters": [
            {"in": "query", "name": "page.max_size", "type": "integer", "format": "int64"},
            {"in": "query", "name": "page.token", "type": "string"},
            {"in": "query", "name": "slugs", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
            {"in": "query", "name": "names", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"}],
            "responses": {"200": {"schema": {"$ref": "#/definitions/ListWidgetsResponse"}}}},
        "post": {"operationId": widget("Create"), "parameters": [{"in": "body", "name": "body", "required": true,
            "schema": {"$ref": "#/definitions/CreateWidgetRequest"}}],
            "responses": {"200": {"schema": {"$ref": "#/definitions/WidgetResponse"}}}}
    });
    doc["paths"]["/api/v1/config/widgets/{slug}"] = json!({
        "get": {"operationId": widget("Read"), "parameters": [{"in": "path", "name": "slug", "required": true, "type": "string"}],
            "responses": {"200": {"schema": {"$ref": "#/definitions/WidgetResponse"}}}},
        "put": {"operationId": widget("Update"), "parameters": [{"in": "path", "name": "slug", "required": true, "type": "string"},
            {"in": "body", "name": "body", "required": true, "schema": {"$ref": "#/definitions/UpdateWidgetRequest"}}],
            "responses": {"200": {"schema": {"$ref": "#/definitions/WidgetResponse"}}}},
        "delete": {"operationId": widget("Delete"), "parameters": [{"in": "path", "name": "slug", "required": true, "type": "string"}],
            "responses": {"200": {"schema": {"$ref": "#/definitions/DeleteWidgetResponse"}}}}
    });
    let defs = doc["definitions"].as_object_mut().unwrap();
    defs.insert(
        "Widget".into(),
        json!({"type": "object", "properties": {
        "slug": {"type": "string"}, "name": {"type": "string"},
        "bucket_slug": {"type": "string"}, "size": {"type": "integer", "format": "int32"},
        "created_at": {"type": "string", "format": "date-time", "readOnly": true},
        "updated_at": {"type": "string", "format": "date-time", "readOnly": true}}}),
    );
    defs.insert(
        "CreateWidgetRequest".into(),
        json!({"type": "object", "properties": {
        "widget": {"$ref": "#/definitions/Widget"}, "dry_run": {"type": "boolean"}}}),
    );
    defs.insert("UpdateWidgetRequest".into(), json!({"type": "object", "properties": {
        "widget": {"$ref": "#/definitions/Widget"}, "create_if_missing": {"type": "boolean"}, "dry_run": {"type": "boolean"}}}));
    defs.insert(
        "WidgetResponse".into(),
        json!({"type": "object", "properties": {
        "widget": {"$ref": "#/definitions/Widget"}}}),
    );
    defs.insert(
        "ListWidgetsResponse".into(),
        json!({"type": "object", "properties": {
        "widgets": {"type": "array", "items": {"$ref": "#/definitions/Widget"}},
        "page": {"$ref": "#/definitions/configv1PageResult"}}}),
    );
    defs.insert("DeleteWidgetResponse".into(), json!({"type": "object"}));
    let file = dir.join("newer.swagger.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    file
}

#[tokio::test]
async fn a_kind_a_newer_target_adds_is_managed_with_no_new_code() {
    let scratch = tempfile::tempdir().unwrap();
    let t = Tenant::start(Config {
        swagger: Some(newer_description(scratch.path())),
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", "prune: [\"Widget/*\"]\n");
    write(
        dir.path(),
        "widgets.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: b, name: B}\n---\n\
         api_version: v1/config\nkind: Widget\nspec: {slug: w, name: W, bucket_slug: b, size: 3}\n",
    );
    // Offline, this cfgctl does not know the kind: only a target can check it.
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("unknown kind \"Widget\": not a kind of this cfgctl's API description"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("only a plan against it can check it"),
        "{}",
        r.stdout
    );
    // Against the newer target: planned in order, applied, clean.
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("+ Widget/w"), "{}", r.stdout);
    assert!(before(&order_of(&t, "POST"), "buckets", "widgets"));
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // The target's schema checks the new kind's fields.
    write(
        dir.path(),
        "bad.yaml",
        "api_version: v1/config\nkind: Widget\nspec: {slug: v, name: V, size: big}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains("bad.yaml:3:") || r.stderr.contains("bad.yaml:3:"),
        "{}",
        r.transcript()
    );
    std::fs::remove_file(dir.path().join("bad.yaml")).unwrap();
    // Changed in the tenant: pulled back into the file, then clean.
    let changed = json!({"slug": "w", "name": "W", "bucket_slug": "b", "size": 5});
    let reply = t
        .send(
            reqwest::Method::PUT,
            "/api/v1/config/widgets/w",
            &json!({"widget": changed}),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["pull", "."])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let text = std::fs::read_to_string(dir.path().join("widgets.yaml")).unwrap();
    assert!(text.contains("size: 5"), "{text}");
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // Exported like any other kind.
    let out = scratch.path().join("export");
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", out.to_str().unwrap()])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(out.join("widgets").is_dir());
    // And pruned.
    write(
        dir.path(),
        "widgets.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: b, name: B}\n",
    );
    let args = [
        "apply",
        ".",
        "--prune",
        "--allow-empty-prune",
        "--auto-approve",
    ];
    let r = Cfgctl::new(&t).dir(dir.path()).args(&args).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(order_of(&t, "DELETE"), vec!["widgets"]);
}

#[tokio::test]
async fn a_kind_the_target_lacks_is_unsupported_with_the_reason() {
    let scratch = tempfile::tempdir().unwrap();
    let mut doc: Value = serde_json::from_str(cfgctl::api::spec::SWAGGER_JSON).unwrap();
    let paths = doc["paths"].as_object_mut().unwrap();
    paths.retain(|p, _| !p.starts_with("/api/v1/config/notifiers"));
    let file = scratch.path().join("older.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let t = Tenant::start(Config {
        swagger: Some(file),
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "n.yaml",
        "api_version: v1/config\nkind: Notifier\nspec: {slug: n, name: N}\n---\n\
         api_version: v1/config\nkind: ServiceAccount\nspec: {slug: sa, name: SA}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(r.stdout.contains("! Notifier/n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("the target can neither read nor write Notifier"),
        "{}",
        r.stdout
    );
    // A change to a ServiceAccount (no update in the API) is unsupported, never a delete and
    // a create.
    write(
        dir.path(),
        "n.yaml",
        "api_version: v1/config\nkind: ServiceAccount\nspec: {slug: sa, name: SA renamed}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("the target does not offer UpdateServiceAccount"),
        "{}",
        r.stdout
    );
    assert!(order_of(&t, "DELETE").is_empty());
    // A kind managed only at a nested path says so.
    write(
        dir.path(),
        "n.yaml",
        "api_version: v1/config\nkind: ServiceAttribute\nspec: {service_slug: checkout}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "n.yaml:2:7: error: unsupported: ServiceAttribute is managed at a nested path"
        ),
        "{}",
        r.transcript()
    );
    assert!(Kind::named("ServiceAttribute").def().full_ops == cfgctl::api::registry::Ops::NONE);
}

/// R4-5: a saved plan of a kind the target adds is applied. The plan file names `Widget`,
/// which only the target's description defines: the file is read once that description has
/// registered the kind, whether the target comes from `--url` or from the environment the
/// plan was made for.
#[tokio::test]
async fn a_saved_plan_of_a_kind_the_target_adds_is_applied() {
    let scratch = tempfile::tempdir().unwrap();
    let t = Tenant::start(Config {
        swagger: Some(newer_description(scratch.path())),
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // The plan file outside the manifests' folder (a JSON file in it is a manifest).
    let saved = scratch.path().join("plan.json");
    let saved = saved.to_str().unwrap();
    write(
        dir.path(),
        "widgets.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: b, name: B}\n---\n\
         api_version: v1/config\nkind: Widget\nspec: {slug: w, name: W, bucket_slug: b, size: 3}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--out", saved])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", saved, "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("+ Widget/w"), "{}", r.stdout);
    let reply = t
        .request(reqwest::Method::GET, "/api/v1/config/widgets/w", None)
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");

    // The same through an environment: the plan's environment names the target.
    write(
        dir.path(),
        "cfgctl.yaml",
        &format!("environments:\n  newer:\n    url: {}\n", t.emulator.url()),
    );
    write(
        dir.path(),
        "widgets.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: b, name: B}\n---\n\
         api_version: v1/config\nkind: Widget\nspec: {slug: w, name: W, bucket_slug: b, size: 4}\n",
    );
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["plan", ".", "--env", "newer", "--out", saved])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["apply", saved, "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("~ Widget/w"), "{}", r.stdout);
    let reply = t
        .request(reqwest::Method::GET, "/api/v1/config/widgets/w", None)
        .await;
    assert_eq!(reply.body["widget"]["size"], 4, "{reply:?}");

    // The environment's url changed since: refused by the plan's own target before any
    // request (nothing listens on port 1: a request would fail otherwise; red team E13).
    write(
        dir.path(),
        "cfgctl.yaml",
        "environments:\n  newer:\n    url: http://127.0.0.1:1\n",
    );
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["apply", saved, "--auto-approve", "--max-retries", "0"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    let want = format!(
        "the plan in {saved} was made for {}, not for http://127.0.0.1:1: nothing was changed",
        t.emulator.url()
    );
    assert!(r.stderr.contains(&want), "{}", r.transcript());
}
