//! The proto3 canonical form: how a proto3 JSON gateway answers (definition order, zero
//! values omitted, int64 as strings). The emulator answers in it and the planner compares in it.

use serde_json::{json, Map, Value};

use super::*;

/// The object as a proto3 JSON gateway returns it: fields in definition order, zero values
/// (`""`, `0`, `false`, empty lists and maps, null, an enum's first value) omitted
/// recursively, int64 written as a string, int32 as an integer. Members the definition does
/// not know are kept as they are. The emulator answers with this form; the planner compares
/// in it, so the two agree by construction.
pub fn canonical(kind: Kind, object: &Value) -> Value {
    Description::for_kind(kind).canonical(kind, object)
}

/// A schema node's member `name`. Schema nodes have a handful of members, so a scan costs
/// less than hashing the name (`Value::get`), and the canonical form asks a node several
/// times for every value it writes. Not for a definition's `properties`, which can be many.
pub(crate) fn schema_member<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    let Value::Object(map) = node else {
        return None;
    };
    map.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
}

pub(super) fn canonical_value(desc: &Description, schema: &Value, value: &Value) -> Option<Value> {
    let schema = desc.resolve(schema);
    if value.is_null() {
        return None;
    }
    let ty = schema_member(schema, "type").and_then(Value::as_str);
    let format = schema_member(schema, "format").and_then(Value::as_str);
    let properties = schema_member(schema, "properties");
    let out = match (ty, value) {
        (_, Value::Object(map)) if properties.is_some() => {
            let props = properties.and_then(Value::as_object);
            let mut out = Map::new();
            // Members found among the properties: once all are, the rest of the properties
            // are absent and no member is undescribed (most objects set few properties).
            let mut found = 0;
            for (name, prop) in props.into_iter().flatten() {
                if found == map.len() {
                    break;
                }
                let Some(v) = map.get(name) else { continue };
                found += 1;
                if let Some(v) = canonical_value(desc, prop, v) {
                    out.insert(name.clone(), v);
                }
            }
            if found < map.len() {
                for (name, v) in map {
                    if props.is_none_or(|p| !p.contains_key(name))
                        && !crate::api::registry::is_zero(v)
                    {
                        out.insert(name.clone(), v.clone());
                    }
                }
            }
            Value::Object(out)
        }
        (Some("object"), Value::Object(map)) => {
            // A map: entries kept (proto3 keeps zero values inside maps), keys sorted.
            let item = schema_member(schema, "additionalProperties");
            let sorted: BTreeMap<&String, Value> = map
                .iter()
                .map(|(k, v)| {
                    let v = match item {
                        Some(s) if s.is_object() => {
                            canonical_value(desc, s, v).unwrap_or(zero_like(v))
                        }
                        _ => v.clone(),
                    };
                    (k, v)
                })
                .collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        (Some("array"), Value::Array(items)) => {
            let item = schema_member(schema, "items");
            Value::Array(
                items
                    .iter()
                    .map(|v| match item {
                        Some(s) => canonical_value(desc, s, v).unwrap_or(zero_like(v)),
                        None => v.clone(),
                    })
                    .collect(),
            )
        }
        (Some("string"), v) if matches!(format, Some("int64" | "uint64")) => match v {
            Value::Number(n) => Value::String(n.to_string()),
            Value::String(s) => match s.trim().parse::<i128>() {
                Ok(n) => Value::String(n.to_string()),
                Err(_) => v.clone(),
            },
            other => other.clone(),
        },
        (Some("integer"), Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => json!(f as i64),
            _ => Value::Number(n.clone()),
        },
        (Some("number"), Value::Number(n)) => match n.as_f64() {
            Some(f) => json!(f),
            None => Value::Number(n.clone()),
        },
        (Some("string"), Value::String(s)) => {
            let is_default = schema_member(schema, "enum")
                .and_then(Value::as_array)
                .and_then(|e| e.first())
                .and_then(Value::as_str)
                == Some(s.as_str());
            if is_default {
                return None;
            }
            value.clone()
        }
        _ => value.clone(),
    };
    if crate::api::registry::is_zero(&out) {
        None
    } else {
        Some(out)
    }
}

/// [`canonical`] for any definition of the swagger file (a response body, say).
pub fn canonical_definition(name: &str, value: &Value) -> Value {
    match definitions().get(name) {
        Some(def) => {
            canonical_value(Description::embedded(), def, value).unwrap_or_else(|| json!({}))
        }
        None => value.clone(),
    }
}

/// The zero value of a value's own type, for a zero element kept inside a list or map.
pub(super) fn zero_like(v: &Value) -> Value {
    match v {
        Value::Bool(_) => json!(false),
        Value::Number(_) => json!(0),
        Value::String(_) => json!(""),
        Value::Array(_) => json!([]),
        Value::Object(_) => json!({}),
        Value::Null => Value::Null,
    }
}

/// Removes the fields the server owns (`created_at`, `updated_at`: the registry's column)
/// from an object of a kind. The one place that strips them, for the planner, `export`, a
/// body cfgctl sends, and the emulator's reading of a write.
pub fn strip_server_owned(kind: Kind, object: &mut Value) {
    if let Value::Object(map) = object {
        for field in kind.def().server_owned {
            map.shift_remove(*field);
        }
    }
}

/// An object as a manifest holds it: the canonical form without what the server owns, and
/// each embedded document (`dashboard_json`) parsed, without the members the server rewrites.
/// `export` writes this; the planner's comparable form starts from it.
pub fn manifest_form(kind: Kind, object: &Value) -> Value {
    let mut v = canonical(kind, object);
    strip_server_owned(kind, &mut v);
    if let Value::Object(map) = &mut v {
        for embedded in kind.def().embedded_json {
            let Some(Value::String(text)) = map.get(embedded.field) else {
                continue;
            };
            let Ok(mut doc) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            for v in embedded.volatile {
                crate::util::jsonpath::remove_path(&mut doc, v.path);
            }
            map.insert(embedded.field.to_string(), doc);
        }
    }
    v
}
