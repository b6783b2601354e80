//! The rewrites a tenant makes to what it stores: embedded documents get ids, versions and
//! timestamps (driven by the registry's volatile members and their `Rewrite`), and its own
//! key order.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::api::registry::{Kind, Rewrite};
use crate::util::jsonpath::get_path;

/// A JSON value with every object's keys sorted: how the server re-serialises documents.
pub(super) fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let ordered: BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(ordered.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

pub(super) fn set_path(doc: &mut Value, dotted: &str, value: Value) {
    let mut node = doc;
    let mut segments = dotted.split('.').peekable();
    while let Some(segment) = segments.next() {
        let Value::Object(map) = node else { return };
        if segments.peek().is_none() {
            map.insert(segment.to_string(), value);
            return;
        }
        node = map
            .entry(segment.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// The rewrites a tenant makes to embedded documents: ids, versions, timestamps, its own
/// key order.
pub(super) fn rewrite_embedded(
    kind: Kind,
    object: &mut Value,
    previous: Option<&Value>,
    id: i64,
    now: &str,
) {
    for embedded in kind.def().embedded_json {
        let Some(text) = object.get(embedded.field).and_then(Value::as_str) else {
            continue;
        };
        let Ok(mut doc) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let old_doc: Option<Value> = previous
            .and_then(|p| p.get(embedded.field))
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str(t).ok());
        for v in embedded.volatile {
            let old = old_doc.as_ref().and_then(|d| get_path(d, v.path));
            let value = match v.rewrite {
                Rewrite::Id => json!(id),
                Rewrite::Version => json!(old.and_then(Value::as_i64).unwrap_or(0) + 1),
                Rewrite::CreatedAt => old.cloned().unwrap_or_else(|| json!(now)),
                Rewrite::UpdatedAt => json!(now),
            };
            set_path(&mut doc, v.path, value);
        }
        let text = sorted(&doc).to_string();
        if let Some(map) = object.as_object_mut() {
            map.insert(embedded.field.to_string(), Value::String(text));
        }
    }
}
