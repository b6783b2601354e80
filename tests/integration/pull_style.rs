//! `pull` keeps the author's YAML (issue 41, item 3): a dashboard mapping written the way
//! PyYAML writes it (single quotes, `'y':` keys, flow mappings for leaf collections, long
//! one-line queries) comes back from a one-value UI edit as a one-line diff.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{read, write, Cfgctl, Tenant};

/// `yaml.dump(doc, default_flow_style=None, width=4096)` of a manifest, as a script would
/// write it.
const PYYAML: &str = r#"api_version: v1/config
kind: ClassicDashboard
spec:
  bucket_slug: payments
  dashboard_json:
    panels:
    - datasource: {type: prometheus, uid: prom-1}
      gridPos: {h: 8, w: 12, x: 0, 'y': 0}
      id: 1
      targets:
      - {expr: 'sum by (service) (rate(http_requests_total{service="payments", code=~"5.."}[5m])) / sum by (service) (rate(http_requests_total{service="payments"}[5m]))', refId: A}
      title: 'Error ratio: payments'
      type: timeseries
    - gridPos: {h: 8, w: 12, x: 12, 'y': 0}
      id: 2
      targets:
      - {expr: 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service="payments"}[5m])))', refId: A}
      title: 'Latency p99'
      type: timeseries
    tags: [payments, 'on']
    time: {from: now-6h, to: now}
    title: Payments
    'y': 'yes'
  name: 'Payments: overview'
  slug: pyyaml
"#;

const BUCKET: &str =
    "api_version: v1/config\nkind: Bucket\nspec:\n  slug: payments\n  name: Payments\n";

async fn edit(t: &Tenant, change: impl FnOnce(&mut Value)) {
    let kind = Kind::named("ClassicDashboard");
    let mut object = t.read(kind, Some("pyyaml")).await.body[kind.def().singular].clone();
    for f in kind.def().server_owned {
        object.as_object_mut().unwrap().remove(*f);
    }
    let mut doc: Value = serde_json::from_str(object["dashboard_json"].as_str().unwrap()).unwrap();
    change(&mut doc);
    object["dashboard_json"] = json!(doc.to_string());
    assert_eq!(t.update(kind, Some("pyyaml"), object).await.status, 200);
}

/// The lines of `after` that differ from `before` (same line count asserted).
fn changed_lines(before: &str, after: &str) -> Vec<(String, String)> {
    assert_eq!(before.lines().count(), after.lines().count(), "{after}");
    before
        .lines()
        .zip(after.lines())
        .filter(|(b, a)| b != a)
        .map(|(b, a)| (b.to_string(), a.to_string()))
        .collect()
}

#[tokio::test]
async fn a_pyyaml_dashboard_comes_back_from_one_ui_edit_as_a_one_line_diff() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "buckets/payments.yaml", BUCKET);
    write(d, "dashboards/pyyaml.yaml", PYYAML);
    let t = Tenant::start(Config::default()).await;
    let run = |args: &'static [&'static str]| Cfgctl::new(&t).dir(d).args(args).run();
    let a = run(&["apply", ".", "--auto-approve"]).await;
    assert_eq!(a.code, 0, "{}", a.transcript());
    let p = run(&["plan", ".", "--detailed-exitcode"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());

    // A panel title.
    edit(&t, |doc| {
        doc["panels"][1]["title"] = json!("Latency p99 (ms)")
    })
    .await;
    let p = run(&["pull", "."]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    let after = read(d, "dashboards/pyyaml.yaml");
    assert_eq!(
        changed_lines(PYYAML, &after),
        vec![(
            "      title: 'Latency p99'".into(),
            "      title: 'Latency p99 (ms)'".into()
        )]
    );

    // A member of a flow mapping with a quoted key: that line only.
    let before = after;
    edit(&t, |doc| doc["panels"][1]["gridPos"]["y"] = json!(8)).await;
    let p = run(&["pull", "."]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    let after = read(d, "dashboards/pyyaml.yaml");
    assert_eq!(
        changed_lines(&before, &after),
        vec![(
            "    - gridPos: {h: 8, w: 12, x: 12, 'y': 0}".into(),
            "    - gridPos: {h: 8, w: 12, x: 12, 'y': 8}".into()
        )]
    );

    // A long query: its one line, still one line, still single-quoted.
    let before = after;
    edit(&t, |doc| {
        doc["panels"][1]["targets"][0]["expr"] = json!("histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"payments\"}[5m])))")
    })
    .await;
    let p = run(&["pull", "."]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
    let after = read(d, "dashboards/pyyaml.yaml");
    assert_eq!(
        changed_lines(&before, &after),
        vec![(
            "      - {expr: 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"payments\"}[5m])))', refId: A}".into(),
            "      - {expr: 'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"payments\"}[5m])))', refId: A}".into()
        )]
    );
    let p = run(&["plan", ".", "--detailed-exitcode"]).await;
    assert_eq!(p.code, 0, "{}", p.transcript());
}
