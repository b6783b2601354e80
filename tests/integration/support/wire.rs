//! The library's wire format (`cfgctl::api::wire`, re-exported) and, beside it, the request and list
//! bodies built and read plainly as `Value`s, for tests, benches and the fuzz corpus. cfgctl
//! itself writes a body straight from the borrowed object (`client::body`) and reads a page by
//! slices (`wire::split_list_page`), so these are not in its public API. Self-contained (it
//! names only `cfgctl` and `serde_json`): `benches/common` and `fuzz/` include it by path.

pub use cfgctl::api::wire::*;

use cfgctl::api::registry::Kind;
use serde_json::{json, Map, Value};

/// Body of a create: `{"bucket": {...}}`, with `"dry_run": true` for a dry run.
pub fn create_body(kind: Kind, object: &Value, commit: Commit) -> Value {
    let mut body = Map::new();
    body.insert(kind.def().singular.to_string(), object.clone());
    if commit == Commit::DryRun {
        body.insert("dry_run".into(), json!(true));
    }
    Value::Object(body)
}

/// Body of an update: `{"bucket": {...}}`, with `"create_if_missing": true` and
/// `"dry_run": true` when asked.
pub fn update_body(kind: Kind, object: &Value, if_missing: IfMissing, commit: Commit) -> Value {
    let mut body = Map::new();
    body.insert(kind.def().singular.to_string(), object.clone());
    if if_missing == IfMissing::Create {
        body.insert("create_if_missing".into(), json!(true));
    }
    if commit == Commit::DryRun {
        body.insert("dry_run".into(), json!(true));
    }
    Value::Object(body)
}

/// The items and next page token of a list response, parsed whole. A missing plural key is an
/// empty page (proto3 omits empty lists).
pub fn parse_list_response(kind: Kind, body: &Value) -> Result<(Vec<Value>, String), String> {
    let def = kind.def();
    let key = def.plural.unwrap_or(def.singular);
    let items = match body.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(format!("\"{key}\" in the list response is not an array")),
    };
    let next = body
        .get("page")
        .and_then(|p| p.get("next_token"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok((items, next))
}
