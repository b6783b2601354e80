//! Dashboards as files (issue 41): `dashboard_json: ${file:NAME.json}` keeps a dashboard in its
//! own JSON file beside its manifest; the file is data, never a manifest; `pull` writes a UI
//! edit back into it, in its own layout.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{read, write, Cfgctl, Tenant};

/// A Grafana dashboard as Grafana writes it: 2-space indent, one-line grid positions.
pub const PAYMENTS_JSON: &str = r#"{
  "title": "Payments",
  "uid": "payments",
  "tags": ["payments", "checkout"],
  "timezone": "browser",
  "panels": [
    {
      "id": 1,
      "type": "timeseries",
      "title": "Requests",
      "gridPos": {"h": 8, "w": 12, "x": 0, "y": 0},
      "targets": [{"expr": "sum(rate(http_requests_total{service=\"payments\"}[5m]))", "refId": "A"}]
    },
    {
      "id": 2,
      "type": "timeseries",
      "title": "Errors",
      "gridPos": {"h": 8, "w": 12, "x": 12, "y": 0},
      "targets": [{"expr": "sum(rate(http_requests_total{service=\"payments\",code=~\"5..\"}[5m]))", "refId": "A"}]
    },
    {
      "id": 3,
      "type": "stat",
      "title": "Latency p99",
      "gridPos": {"h": 4, "w": 6, "x": 0, "y": 8},
      "targets": [{"expr": "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))", "refId": "A"}]
    }
  ],
  "schemaVersion": 39
}
"#;

pub const PAYMENTS_YAML: &str = "# The payments dashboard; its JSON is payments.json beside this file.\napi_version: v1/config\nkind: ClassicDashboard\nspec:\n  slug: payments\n  name: Payments\n  bucket_slug: payments\n  dashboard_json: ${file:payments.json}\n";

const BUCKET: &str =
    "api_version: v1/config\nkind: Bucket\nspec:\n  slug: payments\n  name: Payments\n";

/// A repository with the dashboard in its own file.
pub fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "buckets/payments.yaml", BUCKET);
    write(dir.path(), "dashboards/payments.yaml", PAYMENTS_YAML);
    write(dir.path(), "dashboards/payments.json", PAYMENTS_JSON);
    dir
}

async fn run(t: &Tenant, dir: &std::path::Path, args: &[&str]) -> crate::support::Run {
    Cfgctl::new(t).dir(dir).args(args).run().await
}

#[tokio::test]
async fn a_dashboard_in_its_own_file_validates_applies_and_plans_clean() {
    let dir = repo();
    let d = dir.path();
    let v = Cfgctl::bare().dir(d).args(&["validate", "."]).run().await;
    assert_eq!(v.code, 0, "{}", v.transcript());
    assert!(
        !v.transcript().contains("payments.json"),
        "{}",
        v.transcript()
    );
    let t = Tenant::start(Config::default()).await;
    let a = run(&t, d, &["apply", ".", "--auto-approve"]).await;
    assert_eq!(a.code, 0, "{}", a.transcript());
    // What the target holds is the file's document.
    let r = t
        .read(Kind::named("ClassicDashboard"), Some("payments"))
        .await;
    let sent: Value = serde_json::from_str(
        r.body["classic_dashboard"]["dashboard_json"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(sent["panels"][2]["title"], json!("Latency p99"));
    let p = run(&t, d, &["plan", ".", "--detailed-exitcode"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());

    // A UI edit of one panel is a panel-level diff in plan and drift.
    edit_panel_title(&t, 1, "Errors (5xx)").await;
    let p = run(
        &t,
        d,
        &["plan", ".", "--detailed-exitcode", "--color", "never"],
    )
    .await;
    assert_eq!(p.code, 2, "{}", p.transcript());
    assert!(p.stdout.contains("Errors (5xx)"), "{}", p.stdout);
    assert!(p.stdout.contains("panels"), "{}", p.stdout);
    assert!(
        !p.stdout.contains("Latency p99"),
        "only the changed panel: {}",
        p.stdout
    );
    let drift = run(&t, d, &["drift", "."]).await;
    assert!(
        drift.stdout.contains("Errors (5xx)"),
        "{}",
        drift.transcript()
    );
}

/// Changes the title of panel `index` on the target: an edit made in the UI.
pub async fn edit_panel_title(t: &Tenant, index: usize, title: &str) {
    let kind = Kind::named("ClassicDashboard");
    let r = t.read(kind, Some("payments")).await;
    let mut object = r.body[kind.def().singular].clone();
    for f in kind.def().server_owned {
        object.as_object_mut().unwrap().remove(*f);
    }
    let mut doc: Value = serde_json::from_str(object["dashboard_json"].as_str().unwrap()).unwrap();
    doc["panels"][index]["title"] = json!(title);
    object["dashboard_json"] = json!(doc.to_string());
    let r = t.update(kind, Some("payments"), object).await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[test]
fn a_syntax_error_in_a_dashboard_file_is_located_in_that_file() {
    let dir = repo();
    let broken = PAYMENTS_JSON.replace("\"timezone\": \"browser\",", "\"timezone\": \"browser\"");
    write(dir.path(), "dashboards/payments.json", &broken);
    let v = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    let out = v.transcript();
    assert!(
        out.contains("dashboards/payments.json:6:3: error:"),
        "{}",
        out
    );
    assert!(out.contains("not valid JSON"), "{out}");
    // Read once, as the dashboard: never as a manifest too.
    assert!(!out.contains("api_version"), "{out}");
}

#[test]
fn an_unreferenced_dashboard_json_is_one_error_with_a_hint() {
    let dir = repo();
    write(
        dir.path(),
        "dashboards/payments.yaml",
        BUCKET.replace("payments", "other").as_str(),
    );
    let v = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    let out = v.transcript();
    let errors: Vec<&str> = out.lines().filter(|l| l.contains(": error:")).collect();
    assert_eq!(errors.len(), 1, "{out}");
    assert!(
        errors[0].starts_with("dashboards/payments.json:1:1: error: not read as a manifest"),
        "{out}"
    );
    assert!(
        out.contains("`dashboard_json: ${file:payments.json}`"),
        "{}",
        out
    );
}

#[test]
fn a_file_referenced_from_elsewhere_in_the_repository_is_data_too() {
    let dir = repo();
    let d = dir.path();
    write(d, "grafana/payments.json", PAYMENTS_JSON);
    std::fs::remove_file(d.join("dashboards/payments.json")).unwrap();
    write(
        d,
        "dashboards/payments.yaml",
        &PAYMENTS_YAML.replace("${file:payments.json}", "${file:../grafana/payments.json}"),
    );
    let v = Cfgctl::bare()
        .dir(d)
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 0, "{}", v.transcript());
    assert_eq!(read(d, "grafana/payments.json"), PAYMENTS_JSON);

    // A manifest file named as a value is an error (red team D4): its resources would vanish
    // from the plan, and be pruned, because a field somewhere names the file.
    write(
        d,
        "teams/core.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: core\n  name: Core\n",
    );
    write(d, "teams/other.yaml", "api_version: v1/config\nkind: Team\nspec:\n  slug: other\n  name: Other\n  description: ${file:core.yaml}\n");
    let v = Cfgctl::bare()
        .dir(d)
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    assert!(
        v.transcript().contains("teams/core.yaml:1:1: error: not read as a manifest: a `${file:…}` names this file as a value, but it holds 1 manifest(s)"),
        "{}",
        v.transcript()
    );
}

#[tokio::test]
async fn a_ui_edit_is_pulled_into_the_dashboards_own_file_on_its_line() {
    let dir = repo();
    let d = dir.path();
    let t = Tenant::start(Config::default()).await;
    let a = run(&t, d, &["apply", ".", "--auto-approve"]).await;
    assert_eq!(a.code, 0, "{}", a.transcript());
    edit_panel_title(&t, 1, "Errors (5xx)").await;
    let p = run(&t, d, &["pull", "."]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    assert!(
        p.stdout
            .contains("~ dashboards/payments.json: ClassicDashboard/payments"),
        "{}",
        p.stdout
    );
    assert!(!p.stdout.contains("payments.yaml"), "{}", p.stdout);
    assert_eq!(
        read(d, "dashboards/payments.yaml"),
        PAYMENTS_YAML,
        "the manifest keeps its reference"
    );
    assert_eq!(
        read(d, "dashboards/payments.json"),
        PAYMENTS_JSON.replace("\"title\": \"Errors\"", "\"title\": \"Errors (5xx)\""),
        "exactly the title's line"
    );
    let plan = run(&t, d, &["plan", ".", "--detailed-exitcode"]).await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
}

#[tokio::test]
async fn pull_never_replaces_a_reference_by_a_literal() {
    let dir = repo();
    let d = dir.path();
    write(d, "teams/core.yaml", "api_version: v1/config\nkind: Team\nspec:\n  slug: core\n  name: Core\n  description: ${env:CORE_DESC}\n");
    // The same dashboard file named by a second manifest.
    write(
        d,
        "dashboards/copy.yaml",
        &PAYMENTS_YAML
            .replace(
                "slug: payments\n  name: Payments",
                "slug: copy\n  name: Copy",
            )
            .replace("${file:payments.json}", "${file:./payments.json}"),
    );
    let t = Tenant::start(Config::default()).await;
    let a = Cfgctl::new(&t)
        .dir(d)
        .args(&["apply", ".", "--auto-approve"])
        .env("CORE_DESC", "Core services")
        .run()
        .await;
    assert_eq!(a.code, 0, "{}", a.transcript());
    let team = Kind::named("Team");
    let mut object = t.read(team, Some("core")).await.body["team"].clone();
    for f in team.def().server_owned {
        object.as_object_mut().unwrap().remove(*f);
    }
    object["description"] = json!("Edited in the UI");
    assert_eq!(t.update(team, Some("core"), object).await.status, 200);
    edit_panel_title(&t, 0, "Requests (UI)").await;

    let before: Vec<String> = [
        "teams/core.yaml",
        "dashboards/payments.json",
        "dashboards/copy.yaml",
    ]
    .iter()
    .map(|f| read(d, f))
    .collect();
    let p = Cfgctl::new(&t)
        .dir(d)
        .args(&["pull", "."])
        .env("CORE_DESC", "Core services")
        .run()
        .await;
    assert_eq!(p.code, 1, "a value left unpulled: {}", p.transcript());
    let out = &p.stdout;
    assert!(
        out.contains(
            "! Team/core description: teams/core.yaml:6 ${env:CORE_DESC} (an environment variable)"
        ),
        "{out}"
    );
    assert!(
        out.contains("! ClassicDashboard/payments dashboard_json: dashboards/payments.yaml:8 ${file:payments.json} (2 manifests reference this file (dashboards/copy.yaml, dashboards/payments.yaml): one edit cannot be meant for all)"),
        "{out}"
    );
    let after: Vec<String> = [
        "teams/core.yaml",
        "dashboards/payments.json",
        "dashboards/copy.yaml",
    ]
    .iter()
    .map(|f| read(d, f))
    .collect();
    assert_eq!(before, after, "nothing of them written");
}

#[tokio::test]
async fn an_export_with_dashboards_as_files_validates_and_plans_clean() {
    let dir = repo();
    let t = Tenant::start(Config::default()).await;
    let a = run(&t, dir.path(), &["apply", ".", "--auto-approve"]).await;
    assert_eq!(a.code, 0, "{}", a.transcript());
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let e = run(
        &t,
        o,
        &["export", "--out", "export", "--dashboards-as-files"],
    )
    .await;
    assert_eq!(e.code, 0, "{}", e.transcript());
    let manifest = read(o, "export/classic-dashboards/payments.yaml");
    assert!(
        manifest.contains("dashboard_json: ${file:payments.json}\n"),
        "{manifest}"
    );
    let doc = read(o, "export/classic-dashboards/payments.json");
    // Pretty, 2-space, in the order the API answers its members (this one sorts them), without
    // the members the server rewrites (`id`, `version`).
    let r = t
        .read(Kind::named("ClassicDashboard"), Some("payments"))
        .await;
    let answered = r.body["classic_dashboard"]["dashboard_json"]
        .as_str()
        .unwrap()
        .to_string();
    let mut expected: Value = serde_json::from_str(&answered).unwrap();
    assert!(expected.get("version").is_some(), "{answered}");
    expected.as_object_mut().unwrap().shift_remove("id");
    expected.as_object_mut().unwrap().shift_remove("version");
    assert_eq!(
        doc,
        format!("{}\n", serde_json::to_string_pretty(&expected).unwrap())
    );
    assert!(
        doc.starts_with("{\n  \"panels\": [\n    {\n      \"gridPos\": {\n        \"h\": 8,\n"),
        "{doc}"
    );
    let v = Cfgctl::bare()
        .dir(o)
        .args(&["validate", "export"])
        .run()
        .await;
    assert_eq!(v.code, 0, "{}", v.transcript());
    let p = run(&t, o, &["plan", "export", "--detailed-exitcode"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    // A UI edit pulls back into the exported file.
    edit_panel_title(&t, 2, "p99").await;
    let p = run(&t, o, &["pull", "export"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    assert_eq!(
        read(o, "export/classic-dashboards/payments.json"),
        doc.replace("\"title\": \"Latency p99\"", "\"title\": \"p99\"")
    );
    assert_eq!(read(o, "export/classic-dashboards/payments.yaml"), manifest);
}

#[tokio::test]
async fn pull_env_writes_a_dashboard_into_its_file_and_refuses_an_env_reference() {
    let dir = repo();
    let d = dir.path();
    let t = Tenant::start(Config::default()).await;
    write(
        d,
        "cfgctl.yaml",
        &format!(
            "environments:\n  staging:\n    url: {}\n    vars: {{region: eu}}\n",
            t.emulator.url()
        ),
    );
    write(d, "teams/core.yaml", "api_version: v1/config\nkind: Team\nspec:\n  slug: core\n  name: Core\n  description: ${env:CORE_DESC}\n");
    let a = Cfgctl::bare()
        .dir(d)
        .args(&["apply", ".", "--env", "staging", "--auto-approve"])
        .env("CORE_DESC", "Core services")
        .run()
        .await;
    assert_eq!(a.code, 0, "{}", a.transcript());
    edit_panel_title(&t, 1, "Errors (5xx)").await;
    let team = Kind::named("Team");
    let mut object = t.read(team, Some("core")).await.body["team"].clone();
    for f in team.def().server_owned {
        object.as_object_mut().unwrap().remove(*f);
    }
    object["description"] = json!("Edited in the UI");
    assert_eq!(t.update(team, Some("core"), object).await.status, 200);

    let p = Cfgctl::bare()
        .dir(d)
        .args(&["pull", ".", "--env", "staging"])
        .env("CORE_DESC", "Core services")
        .run()
        .await;
    assert_eq!(p.code, 1, "{}", p.transcript());
    assert!(
        p.stdout.contains(
            "! Team/core description: teams/core.yaml:6 ${env:CORE_DESC} (an environment variable)"
        ),
        "{}",
        p.stdout
    );
    assert_eq!(
        read(d, "dashboards/payments.json"),
        PAYMENTS_JSON.replace("\"title\": \"Errors\"", "\"title\": \"Errors (5xx)\"")
    );
    assert_eq!(read(d, "dashboards/payments.yaml"), PAYMENTS_YAML);
    assert!(read(d, "teams/core.yaml").contains("description: ${env:CORE_DESC}\n"));
}

/// Red team D22: a dashboard file that starts with a byte-order mark (Windows editors,
/// PowerShell) is read without it, plans clean, and a pull into it keeps the mark.
#[tokio::test]
async fn a_dashboard_file_with_a_byte_order_mark_is_read_and_kept() {
    let dir = repo();
    let d = dir.path();
    write(
        d,
        "dashboards/payments.json",
        &format!("\u{feff}{PAYMENTS_JSON}"),
    );
    let v = Cfgctl::bare().dir(d).args(&["validate", "."]).run().await;
    assert_eq!(v.code, 0, "{}", v.transcript());
    let t = Tenant::start(Config::default()).await;
    assert_eq!(run(&t, d, &["apply", ".", "--auto-approve"]).await.code, 0);
    let p = run(&t, d, &["plan", ".", "--detailed-exitcode"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    edit_panel_title(&t, 1, "Errors (BOM)").await;
    let p = run(&t, d, &["pull", "."]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    let text = read(d, "dashboards/payments.json");
    assert!(text.starts_with('\u{feff}'), "{text}");
    assert!(text.contains("Errors (BOM)"), "{text}");
    let p = run(&t, d, &["plan", ".", "--detailed-exitcode"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
}
