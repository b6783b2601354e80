//! Tests of `pull::edit`.

use super::*;
use serde_json::json;

fn apply(text: &str, wanted: Value) -> Option<String> {
    let docs = crate::util::yaml::parse_documents(text).unwrap();
    let lines = super::super::lines(text);
    let e = edits(
        &lines,
        &docs[0].spans,
        lines.len() - 1,
        &docs[0].value,
        &wanted,
        true,
    )?;
    let mut out = text.to_string();
    for (r, t) in e {
        out.replace_range(r, &t);
    }
    Some(out)
}

#[test]
fn a_changed_scalar_is_one_line() {
    let text = "kind: Team\nspec:\n  slug: t  # the id\n  # who\n  name: T\n  emails:\n    - a@x\n\n# end\n";
    let out = apply(
        text,
        json!({"kind": "Team", "spec": {"slug": "t", "name": "U", "emails": ["a@x"]}}),
    )
    .unwrap();
    assert_eq!(out, text.replace("name: T", "name: U"));
}

#[test]
fn lists_added_and_removed_entries() {
    let text = "spec:\n  a: 1\n  b:\n    - x\n    - y\n  c: 3\n";
    let out = apply(text, json!({"spec": {"a": 1, "b": ["x"], "d": {"e": 1}}})).unwrap();
    assert_eq!(out, "spec:\n  a: 1\n  b:\n  - x\n  d:\n    e: 1\n");
}

#[test]
fn scalars_keep_their_quotes_and_comments() {
    let text = "spec:\n  a: \"6h\"  # why\n  b: 'it''s'\n  c: plain # note\n  d: 1\n";
    let out = apply(
        text,
        json!({"spec": {"a": "24h", "b": "it's \"x\"", "c": "yes", "d": 2.5}}),
    )
    .unwrap();
    assert_eq!(
        out,
        "spec:\n  a: \"24h\"  # why\n  b: 'it''s \"x\"'\n  c: \"yes\" # note\n  d: 2.5\n"
    );
}

#[test]
fn a_long_string_stays_on_its_line() {
    let long = "sum by (service) (rate(http_requests_total{service=\"payments\"}[5m])) / sum by (service) (rate(http_requests_total[5m]))";
    let text = "spec:\n  query: short\n  items:\n    - a\n    - 'b'\n";
    let out = apply(
        text,
        json!({"spec": {"query": long, "items": ["a", "it's"]}}),
    )
    .unwrap();
    assert_eq!(
        out,
        format!(
            "spec:\n  query: {}\n  items:\n    - a\n    - 'it''s'\n",
            double_quoted(long)
        )
    );
}

#[test]
fn a_plain_scalar_that_needs_quotes_takes_its_neighbours_quotes() {
    let text = "spec:\n  a: x\n  b: 'it''s'\n  c: 'z'\n";
    let out = apply(text, json!({"spec": {"a": "yes", "b": "it's", "c": "z"}})).unwrap();
    assert_eq!(out, "spec:\n  a: 'yes'\n  b: 'it''s'\n  c: 'z'\n");
    // Neighbours that disagree, or none quoted: the serialiser's choice.
    let text = "spec:\n  a: x\n  b: y1\n";
    let out = apply(text, json!({"spec": {"a": "yes", "b": "y1"}})).unwrap();
    assert_eq!(out, "spec:\n  a: \"yes\"\n  b: y1\n");
}

#[test]
fn flow_collections_stay_flow_on_their_line() {
    let out = apply(
        "spec: {a: 1, b: 2}  # c\n",
        json!({"spec": {"a": 1, "b": 3, "c": "x, y"}}),
    );
    assert_eq!(out.unwrap(), "spec: {a: 1, b: 3, c: \"x, y\"}  # c\n");
    let text = "spec:\n  when:\n    - { op: GT, value: 1 }\n    - {op: LT, value: 2}\n  x: 1\n";
    let out = apply(
        text,
        json!({"spec": {"when": [{"op": "GT", "value": 5}, {"op": "LT", "value": 2}], "x": 1}}),
    );
    assert_eq!(
        out.unwrap(),
        "spec:\n  when:\n    - { op: GT, value: 5 }\n    - {op: LT, value: 2}\n  x: 1\n"
    );
}
