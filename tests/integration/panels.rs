//! Panel-level dashboard diffs (docs/product.md §3, "Review") on the large fixtures: the
//! 150-panel Grafana dashboard `ClassicDashboard/fleet-overview` and the 50-panel Perses
//! dashboard `Dashboard/payments-slos`, planned against a tenant that holds the fixture.

use std::path::Path;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, fixture_objects, read, scratch_copy, seeded, write, Cfgctl};

const GRAFANA: &str = "classic-dashboards/fleet-overview.yaml";
const PERSES: &str = "dashboards/payments-slos.yaml";

/// `plan .` in `dir` against a tenant holding the fixture: (text, Markdown, drift text).
async fn plan(dir: &Path) -> (String, String, String) {
    let t = seeded(Config::default()).await;
    let mut out = Vec::new();
    for args in [
        &["plan", "."][..],
        &["plan", ".", "--format", "markdown"],
        &["drift", "."],
    ] {
        let run = Cfgctl::new(&t).dir(dir).args(args).run().await;
        assert!(matches!(run.code, 0 | 2), "{}", run.transcript());
        out.push(run.stdout);
    }
    let drift = out.pop().unwrap_or_default();
    let md = out.pop().unwrap_or_default();
    (out.pop().unwrap_or_default(), md, drift)
}

/// Replaces the fixture manifest `rel` with a JSON manifest of the same resource whose
/// dashboard `edit` changed.
fn edit_dashboard(dir: &Path, rel: &str, kind: &str, slug: &str, edit: impl FnOnce(&mut Value)) {
    let kind = Kind::from_name(kind).unwrap();
    let (_, _, mut spec) = fixture_objects()
        .into_iter()
        .find(|(k, s, _)| *k == kind && s.as_deref() == Some(slug))
        .unwrap();
    let mut doc: Value = serde_json::from_str(spec["dashboard_json"].as_str().unwrap()).unwrap();
    edit(&mut doc);
    spec["dashboard_json"] = Value::String(doc.to_string());
    std::fs::remove_file(dir.join(rel)).unwrap();
    let manifest = json!({"api_version": "v1/config", "kind": kind.name(), "spec": spec});
    write(
        dir,
        &rel.replace(".yaml", ".json"),
        &serde_json::to_string_pretty(&manifest).unwrap(),
    );
}

/// Replaces `from` (once, where it is first) in the file `rel`.
fn replace_once(dir: &Path, rel: &str, from: &str, to: &str) {
    let text = read(dir, rel);
    assert!(text.contains(from), "{from} not in {rel}");
    write(dir, rel, &text.replacen(from, to, 1));
}

/// The part heads under a changed dashboard in the text plan.
fn part_heads(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("          ") && !l.starts_with("           "))
        .map(str::trim_start)
        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
        .collect()
}

#[tokio::test]
async fn a_one_query_change_in_a_150_panel_grafana_dashboard_names_the_panel() {
    let dir = scratch_copy();
    replace_once(
        dir.path(),
        GRAFANA,
        r#"code=~\"5..\"}[5m])) / sum(rate(http_requests_total{service=\"search\"}[5m]))"#,
        r#"code=~\"5..\"}[1m])) / sum(rate(http_requests_total{service=\"search\"}[1m]))"#,
    );
    let (text, md, drift) = plan(dir.path()).await;
    let head = r#"~ panels[50] "search: Error rate" (row "Search"):"#;
    assert_eq!(part_heads(&text), [head], "{text}");
    assert!(text.contains("Plan: 0 to create, 1 to update"), "{text}");
    cfgctl_snapshot!("grafana_one_query_text", text);
    cfgctl_snapshot!("grafana_one_query_markdown", md);
    // The drift report names the same panel.
    assert!(drift.contains(head), "{drift}");
}

#[tokio::test]
async fn a_one_query_change_in_a_50_panel_perses_dashboard_names_the_panel() {
    let dir = scratch_copy();
    replace_once(
        dir.path(),
        PERSES,
        r#"histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"auth\"}[5m])))"#,
        r#"histogram_quantile(0.999, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"auth\"}[5m])))"#,
    );
    let (text, md, _) = plan(dir.path()).await;
    assert_eq!(
        part_heads(&text),
        [r#"~ spec.panels.auth_p99_latency "Auth p99 latency" (in "Auth"):"#],
        "{text}"
    );
    cfgctl_snapshot!("perses_one_query_text", text);
    cfgctl_snapshot!("perses_one_query_markdown", md);
}

#[tokio::test]
async fn a_grafana_panel_moved_to_another_row_is_one_move() {
    let dir = scratch_copy();
    // "api: GC pause" (panels[10]) goes to the end of the Checkout row, below its panels.
    edit_dashboard(
        dir.path(),
        GRAFANA,
        "ClassicDashboard",
        "fleet-overview",
        |doc| {
            let panels = doc["panels"].as_array_mut().unwrap();
            let mut p = panels.remove(10);
            assert_eq!(p["title"], "api: GC pause");
            p["gridPos"] = json!({"h": 8, "w": 8, "x": 0, "y": 82});
            panels.insert(31, p);
        },
    );
    let (text, _, _) = plan(dir.path()).await;
    assert_eq!(
        part_heads(&text),
        [
            r#"~ panels[31] "api: GC pause" (row "Checkout"): moved: panels[10] -> panels[31], row "Api" -> row "Checkout", x=0 y=25 w=8 h=8 -> x=0 y=82 w=8 h=8"#
        ],
        "{text}"
    );
    assert!(!text.contains("@@"), "a move is no hunk: {text}");
    cfgctl_snapshot!("grafana_moved_text", text);
}

#[tokio::test]
async fn a_perses_panel_moved_in_the_layout_is_one_move() {
    let dir = scratch_copy();
    // Checkout's "gc pause" panel goes from the Checkout section to the foot of Payments.
    edit_dashboard(dir.path(), PERSES, "Dashboard", "payments-slos", |doc| {
        let layouts = doc["spec"]["layouts"].as_array_mut().unwrap();
        let items = layouts[0]["spec"]["items"].as_array_mut().unwrap();
        let mut item = items.remove(9);
        assert_eq!(item["content"]["$ref"], "#/spec/panels/checkout_gc_pause");
        item["x"] = json!(0);
        item["y"] = json!(40);
        layouts[1]["spec"]["items"]
            .as_array_mut()
            .unwrap()
            .push(item);
    });
    let (text, _, _) = plan(dir.path()).await;
    assert_eq!(
        part_heads(&text),
        [
            r#"~ spec.panels.checkout_gc_pause "Checkout gc pause" (in "Payments"): moved: in "Checkout" -> in "Payments", x=12 y=32 w=12 h=8 -> x=0 y=40 w=12 h=8"#
        ],
        "{text}"
    );
    assert!(!text.contains("@@"), "a move is no hunk: {text}");
    cfgctl_snapshot!("perses_moved_text", text);
}

#[tokio::test]
async fn a_change_to_a_panel_nested_in_a_collapsed_row_names_the_row() {
    let dir = scratch_copy();
    edit_dashboard(
        dir.path(),
        GRAFANA,
        "ClassicDashboard",
        "fleet-overview",
        |doc| {
            let p = &mut doc["panels"][129]["panels"][3];
            assert_eq!(p["title"], "billing: p50 latency");
            p["targets"][0]["expr"] = json!("histogram_quantile(0.5, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"billing\",route!=\"/health\"}[5m])))");
        },
    );
    let (text, _, _) = plan(dir.path()).await;
    assert_eq!(
        part_heads(&text),
        [r#"~ panels[129].panels[3] "billing: p50 latency" (row "Billing"):"#],
        "{text}"
    );
    cfgctl_snapshot!("grafana_nested_text", text);
}

#[tokio::test]
async fn a_panel_added_and_one_removed_are_each_shown_whole() {
    let dir = scratch_copy();
    edit_dashboard(
        dir.path(),
        GRAFANA,
        "ClassicDashboard",
        "fleet-overview",
        |doc| {
            let panels = doc["panels"].as_array_mut().unwrap();
            let removed = panels.remove(15);
            assert_eq!(removed["title"], "api: Network out");
            panels.insert(
                15,
                json!({"id": 500, "type": "stat", "title": "api: Availability",
                   "gridPos": {"h": 8, "w": 8, "x": 16, "y": 33},
                   "targets": [{"refId": "A", "expr": "avg_over_time(up{service=\"api\"}[1h])"}]}),
            );
        },
    );
    let (text, _, _) = plan(dir.path()).await;
    assert_eq!(
        part_heads(&text),
        [
            r#"+ panels[15] "api: Availability" (row "Api"):"#,
            r#"- panels[15] "api: Network out" (row "Api"):"#,
        ],
        "{text}"
    );
    cfgctl_snapshot!("grafana_added_removed_text", text);
}
