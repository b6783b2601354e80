//! Unit tests of the panel-level dashboard diff: Grafana and Perses shapes, matching, moves.

use serde_json::{json, Value};

use super::document_lines;
use crate::render::diff::{Line, PLAN};

/// The lines as the text plan shows them under the field's head.
fn text(before: &Value, after: &Value) -> Vec<String> {
    document_lines(before, after, PLAN)
        .expect("a dashboard")
        .iter()
        .map(Line::text)
        .collect()
}

fn heads(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .filter(|l| l.starts_with("    ") && !l.starts_with("        "))
        .map(|l| l.trim_start())
        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
        .collect()
}

fn grafana_panel(id: u64, title: &str, y: u64, expr: &str) -> Value {
    json!({
        "id": id, "title": title, "type": "timeseries",
        "gridPos": {"h": 8, "w": 12, "x": 0, "y": y},
        "targets": [{"refId": "A", "expr": expr}],
    })
}

fn grafana(panels: Vec<Value>) -> Value {
    json!({"title": "Nodes", "refresh": "1m", "panels": panels})
}

fn row(id: u64, title: &str, y: u64, nested: Vec<Value>) -> Value {
    json!({"id": id, "type": "row", "title": title, "collapsed": !nested.is_empty(),
           "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": nested})
}

#[test]
fn a_changed_query_is_one_hunk_headed_by_its_panel_and_row() {
    let before = grafana(vec![
        row(1, "API", 0, vec![]),
        grafana_panel(2, "Latency", 1, "latency"),
        grafana_panel(3, "Error rate", 9, "errors[5m]"),
    ]);
    let mut after = before.clone();
    after["panels"][2]["targets"][0]["expr"] = json!("errors[1m]");
    let lines = text(&before, &after);
    assert_eq!(
        lines,
        [
            "    --- current",
            "    +++ desired",
            "    ~ panels[2] \"Error rate\" (row \"API\"):",
            "        @@ -5,7 +5,7 @@ panels[2] \"Error rate\" (row \"API\")",
            "           \"targets\": [",
            "             {",
            "               \"refId\": \"A\",",
            "        -      \"expr\": \"errors[5m]\"",
            "        +      \"expr\": \"errors[1m]\"",
            "             }",
            "           ]",
            "         }",
        ]
    );
}

#[test]
fn a_reordered_panel_is_one_move_not_a_delete_and_an_add() {
    let a = grafana_panel(1, "Latency", 0, "a");
    let b = grafana_panel(2, "Errors", 8, "b");
    let c = grafana_panel(3, "Saturation", 16, "c");
    let before = grafana(vec![a.clone(), b.clone(), c.clone()]);
    // Latency goes to the end, below Saturation: its index and its gridPos change.
    let mut moved = a.clone();
    moved["gridPos"]["y"] = json!(24);
    let after = grafana(vec![b, c, moved]);
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        // The two it only shifted up did not move.
        ["~ panels[2] \"Latency\": moved: panels[0] -> panels[2], x=0 y=0 w=12 h=8 -> x=0 y=24 w=12 h=8"]
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("        ")),
        "a move shows no hunk: {lines:#?}"
    );
}

#[test]
fn collapsing_a_row_is_the_rows_change_not_a_move_of_its_panels() {
    let p = grafana_panel(2, "Latency", 1, "a");
    let before = grafana(vec![row(1, "API", 0, vec![]), p.clone()]);
    let after = grafana(vec![row(1, "API", 0, vec![p])]);
    let lines = text(&before, &after);
    assert_eq!(heads(&lines), ["~ panels[0] \"API\":"]);
    // The row's own change is its `collapsed` flag, not its nested panels.
    assert!(
        lines.contains(&"        -  \"collapsed\": false".to_string()),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("\"expr\"")), "{lines:#?}");
}

#[test]
fn a_panel_moved_to_another_row_says_both_rows() {
    let p = grafana_panel(3, "Latency", 2, "a");
    let before = grafana(vec![
        row(1, "API", 0, vec![]),
        p.clone(),
        row(2, "DB", 10, vec![]),
    ]);
    let after = grafana(vec![row(1, "API", 0, vec![]), row(2, "DB", 10, vec![]), p]);
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        ["~ panels[2] \"Latency\" (row \"DB\"): moved: panels[1] -> panels[2], row \"API\" -> row \"DB\""]
    );
}

#[test]
fn added_and_removed_panels_show_whole_with_their_sign() {
    let before = grafana(vec![
        grafana_panel(1, "Latency", 0, "a"),
        grafana_panel(2, "Old", 8, "b"),
    ]);
    let after = grafana(vec![
        grafana_panel(1, "Latency", 0, "a"),
        grafana_panel(3, "New", 8, "c"),
    ]);
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        ["+ panels[1] \"New\":", "- panels[1] \"Old\":"]
    );
    assert!(
        lines.contains(&"        +  \"expr\": \"c\"".to_string())
            || lines.iter().any(|l| l.contains("+      \"expr\": \"c\"")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("-      \"expr\": \"b\"")),
        "{lines:#?}"
    );
}

#[test]
fn panels_without_ids_are_matched_by_title_and_occurrence() {
    let p = |t: &str, e: &str| json!({"title": t, "type": "stat", "targets": [{"expr": e}]});
    let before = grafana(vec![p("A", "1"), p("B", "2"), p("A", "3")]);
    let after = grafana(vec![p("B", "2"), p("A", "1"), p("A", "3")]);
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        ["~ panels[0] \"B\": moved: panels[1] -> panels[0]"]
    );
}

#[test]
fn a_change_outside_the_panels_is_a_part_of_its_own() {
    let before = grafana(vec![grafana_panel(1, "Latency", 0, "a")]);
    let mut after = before.clone();
    after["refresh"] = json!("5m");
    let lines = text(&before, &after);
    assert_eq!(heads(&lines), ["~ outside the panels:"]);
    assert!(
        lines.contains(&"        +  \"refresh\": \"5m\"".to_string()),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("Latency")), "{lines:#?}");
}

fn perses(panels: Value, items: Vec<Value>) -> Value {
    json!({"kind": "Dashboard", "metadata": {"name": "d"}, "spec": {
        "display": {"name": "D"},
        "panels": panels,
        "layouts": [{"kind": "Grid", "spec": {"display": {"title": "Checkout"}, "items": items}}],
    }})
}

fn perses_panel(name: &str, query: &str) -> Value {
    json!({"kind": "Panel", "spec": {"display": {"name": name}, "queries": [
        {"kind": "TimeSeriesQuery", "spec": {"plugin": {"kind": "PrometheusTimeSeriesQuery",
            "spec": {"query": query}}}}]}})
}

fn item(key: &str, x: u64, y: u64) -> Value {
    json!({"x": x, "y": y, "width": 12, "height": 8, "content": {"$ref": format!("#/spec/panels/{key}")}})
}

#[test]
fn a_perses_query_change_names_the_key_and_the_display_name() {
    let before = perses(
        json!({"rps": perses_panel("Requests", "rate(a[5m])"), "errors": perses_panel("Error rate", "errors")}),
        vec![item("rps", 0, 0), item("errors", 12, 0)],
    );
    let mut after = before.clone();
    after["spec"]["panels"]["errors"]["spec"]["queries"][0]["spec"]["plugin"]["spec"]["query"] =
        json!("errors / total");
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        ["~ spec.panels.errors \"Error rate\" (in \"Checkout\"):"]
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("        +") && l.contains("errors / total")),
        "{lines:#?}"
    );
}

#[test]
fn a_perses_layout_move_is_one_move_and_no_layout_diff() {
    let panels =
        json!({"rps": perses_panel("Requests", "a"), "errors": perses_panel("Error rate", "b")});
    let before = perses(
        panels.clone(),
        vec![item("rps", 0, 0), item("errors", 12, 0)],
    );
    let after = perses(panels, vec![item("errors", 0, 0), item("rps", 12, 0)]);
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        [
            "~ spec.panels.rps \"Requests\" (in \"Checkout\"): moved: x=0 y=0 w=12 h=8 -> x=12 y=0 w=12 h=8",
            "~ spec.panels.errors \"Error rate\" (in \"Checkout\"): moved: x=12 y=0 w=12 h=8 -> x=0 y=0 w=12 h=8",
        ]
    );
    assert_eq!(lines.len(), 4, "{lines:#?}");
}

#[test]
fn a_perses_panel_moved_to_another_section_names_both() {
    let panels = json!({"rps": perses_panel("Requests", "a")});
    let before = perses(panels.clone(), vec![item("rps", 0, 0)]);
    let mut after = perses(panels, vec![]);
    after["spec"]["layouts"]
        .as_array_mut()
        .unwrap()
        .push(json!({"kind": "Grid", "spec": {"display": {"title": "Traffic"}, "items": [item("rps", 0, 0)]}}));
    let lines = text(&before, &after);
    assert_eq!(
        heads(&lines),
        [
            "~ outside the panels:",
            "~ spec.panels.rps \"Requests\" (in \"Traffic\"): moved: in \"Checkout\" -> in \"Traffic\"",
        ]
    );
}

#[test]
fn documents_that_are_not_dashboards_are_left_to_the_caller() {
    assert!(document_lines(&json!({"a": 1}), &json!({"a": 2}), PLAN).is_none());
    assert!(document_lines(&json!("text"), &json!({"panels": []}), PLAN).is_none());
    assert!(document_lines(&json!({"panels": {}}), &json!({"panels": 3}), PLAN).is_none());
}

#[test]
fn titles_and_keys_are_printed_inert() {
    let before = grafana(vec![grafana_panel(1, "a\u{1b}[2Jb", 0, "x")]);
    let mut after = before.clone();
    after["panels"][0]["targets"][0]["expr"] = json!("y");
    let lines = text(&before, &after);
    assert!(lines.iter().all(|l| !l.contains('\u{1b}')), "{lines:#?}");
    assert!(lines[2].contains("a\\u001b[2Jb"), "{lines:#?}");
}

#[test]
fn markdown_puts_every_part_and_hunk_line_at_column_0() {
    let before = grafana(vec![grafana_panel(1, "Latency", 0, "a")]);
    let mut after = before.clone();
    after["panels"][0]["targets"][0]["expr"] = json!("b");
    let md: Vec<String> = document_lines(&before, &after, PLAN)
        .unwrap()
        .iter()
        .filter_map(Line::markdown)
        .collect();
    // No `~` line (GitHub leaves it grey): the part's head is an `@@` line.
    assert_eq!(md[0], "@@ panels[0] \"Latency\" @@");
    assert!(
        md.contains(&"+      \"expr\": \"b\"".to_string()),
        "{md:#?}"
    );
}
