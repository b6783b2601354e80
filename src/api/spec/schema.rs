//! Swagger 2.0 definitions → JSON Schema draft 7: the strict per-kind checkers' schemas and the
//! editor schema of whole manifests (`cfgctl schema`).

use serde_json::{json, Map, Value};

use super::*;

/// How a schema will be used.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Checking a loaded manifest's spec (embedded JSON already turned into a string).
    Check,
    /// Editors: `dashboard_json` may also be written as a mapping.
    Editor,
}

/// Swagger 2.0 schema → JSON Schema draft 7, strict: objects reject unknown members,
/// read-only members may not be given, int64 accepts a number or a string of digits.
pub(super) fn convert(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    if let Some(r) = obj.get("$ref") {
        return json!({ "$ref": r });
    }
    let mut out = Map::new();
    if let Some(d) = obj.get("description") {
        out.insert("description".into(), d.clone());
    }
    let ty = obj.get("type").and_then(Value::as_str);
    let format = obj.get("format").and_then(Value::as_str);
    match ty {
        Some("object") | None if obj.contains_key("properties") => {
            out.insert("type".into(), json!("object"));
            let mut props = Map::new();
            if let Some(Value::Object(p)) = obj.get("properties") {
                for (name, prop) in p {
                    let read_only = prop.get("readOnly").and_then(Value::as_bool) == Some(true);
                    let converted = if read_only {
                        json!({
                            "description": "Set by the server; cannot be set in a manifest.",
                            "readOnly": true,
                            "not": {}
                        })
                    } else {
                        convert(prop)
                    };
                    props.insert(name.clone(), converted);
                }
            }
            out.insert("properties".into(), Value::Object(props));
            out.insert("additionalProperties".into(), json!(false));
        }
        Some("object") => {
            out.insert("type".into(), json!("object"));
            match obj.get("additionalProperties") {
                Some(Value::Bool(b)) => {
                    out.insert("additionalProperties".into(), json!(b));
                }
                Some(ap) => {
                    out.insert("additionalProperties".into(), convert(ap));
                }
                None => {}
            }
        }
        Some("array") => {
            out.insert("type".into(), json!("array"));
            if let Some(items) = obj.get("items") {
                out.insert("items".into(), convert(items));
            }
        }
        Some("string") if matches!(format, Some("int64" | "uint64")) => {
            // proto3 JSON writes 64-bit integers as strings and accepts numbers; either way
            // the value must fit the format (a string of at most 19 digits, a number in range).
            out.insert("type".into(), json!(["string", "integer"]));
            out.insert("pattern".into(), json!("^-?[0-9]{1,19}$"));
            insert_range(&mut out, format);
        }
        Some("integer") => {
            out.insert("type".into(), json!("integer"));
            insert_range(&mut out, format);
            if let Some(e) = obj.get("enum") {
                out.insert("enum".into(), e.clone());
            }
        }
        Some(t) => {
            out.insert("type".into(), json!(t));
            if let Some(e) = obj.get("enum") {
                out.insert("enum".into(), e.clone());
            }
            // A format the description declares for a string, checked (RFC 3339 for
            // `date-time`: `12:99:00` is no time).
            if let Some(f @ ("date-time" | "date" | "email" | "uri" | "uuid")) =
                format.filter(|_| t == "string")
            {
                out.insert("format".into(), json!(f));
            }
        }
        None => {}
    }
    Value::Object(out)
}

/// The range of an integer format of the swagger file (proto3's int32, uint32, int64, uint64).
pub fn format_range(format: &str) -> Option<(i128, i128)> {
    Some(match format {
        "int32" => (i128::from(i32::MIN), i128::from(i32::MAX)),
        "uint32" => (0, i128::from(u32::MAX)),
        "int64" => (i128::from(i64::MIN), i128::from(i64::MAX)),
        "uint64" => (0, i128::from(u64::MAX)),
        _ => return None,
    })
}

pub(super) fn insert_range(out: &mut Map<String, Value>, format: Option<&str>) {
    let Some((min, max)) = format.and_then(format_range) else {
        return;
    };
    // Every bound fits an i64 or a u64, so serde_json holds it exactly.
    let number = |n: i128| {
        i64::try_from(n)
            .map(Value::from)
            .or_else(|_| u64::try_from(n).map(Value::from))
            .unwrap_or(Value::Null)
    };
    out.insert("minimum".into(), number(min));
    out.insert("maximum".into(), number(max));
}

/// The integer format whose bound `limit` is, for messages.
pub(super) fn format_of_limit(limit: &Value) -> &'static str {
    for f in ["int32", "uint32", "int64", "uint64"] {
        if let Some((min, max)) = format_range(f) {
            let as_i128 = limit
                .as_i64()
                .map(i128::from)
                .or_else(|| limit.as_u64().map(i128::from));
            if as_i128 == Some(min) || as_i128 == Some(max) {
                return f;
            }
        }
    }
    "integer"
}

pub(super) fn converted_definitions(mode: Mode) -> Map<String, Value> {
    convert_definitions(definitions(), mode)
}

pub(super) fn convert_definitions(
    definitions: &Map<String, Value>,
    mode: Mode,
) -> Map<String, Value> {
    let mut defs: Map<String, Value> = definitions
        .iter()
        .map(|(k, v)| (k.clone(), convert(v)))
        .collect();
    if mode == Mode::Editor {
        for def in crate::api::registry::embedded_kinds() {
            for embedded in def.embedded_json {
                if let Some(prop) = defs
                    .get_mut(def.definition)
                    .and_then(|d| d.get_mut("properties"))
                    .and_then(|p| p.get_mut(embedded.field))
                    .and_then(Value::as_object_mut)
                {
                    prop.insert("type".into(), json!(["string", "object"]));
                    prop.insert(
                        "description".into(),
                        json!("The dashboard's JSON: a JSON string, or written as YAML."),
                    );
                }
            }
        }
    }
    defs
}

/// Required top-level fields of a kind's object. The API generates a missing slug from the
/// name, so only manifests (which need an identity) require `slug`; the loader checks it with
/// its own message.
pub(super) fn required_fields(kind: Kind, mode: Mode) -> Vec<&'static str> {
    match (kind.def().singleton, mode) {
        (true, _) => vec![],
        (false, Mode::Check) => vec!["name"],
        (false, Mode::Editor) => vec!["slug", "name"],
    }
}

/// The checker of a kind's spec over `definitions` (its own and those it refers to).
pub(super) fn compile_checker(
    kind: Kind,
    definitions: Map<String, Value>,
) -> Option<jsonschema::Validator> {
    checker_options()
        .build(&spec_schema(kind, definitions))
        .ok()
}

/// How every schema of cfgctl is checked (a manifest's spec, `cfgctl.yaml`): draft 7, formats
/// asserted.
pub fn checker_options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
}

/// The definitions `root` reaches by `$ref` (itself included): all a kind's checker needs,
/// a few of a description's hundreds, so each kind compiles only its own (every definition
/// cloned and indexed for each kind was most of a small repository's `validate`). `None`
/// when a `$ref` names no definition by its plain name: the caller then takes them all.
pub(super) fn reachable_definitions(
    definitions: &Map<String, Value>,
    root: &str,
) -> Option<Map<String, Value>> {
    fn refs<'a>(node: &'a Value, out: &mut Vec<&'a str>) {
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("$ref", Value::String(r)) => out.push(r),
                        _ => refs(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut out = Map::new();
    let mut todo = vec![root];
    while let Some(name) = todo.pop() {
        if out.contains_key(name) {
            continue;
        }
        let def = definitions.get(name)?;
        let mut found = Vec::new();
        refs(def, &mut found);
        for r in found {
            todo.push(r.strip_prefix("#/definitions/")?);
        }
        out.insert(name.to_string(), def.clone());
    }
    Some(out)
}

pub(super) fn spec_schema(kind: Kind, definitions: Map<String, Value>) -> Value {
    json!({
        "$schema": DRAFT7,
        "definitions": definitions,
        "allOf": [{"$ref": format!("#/definitions/{}", kind.def().definition)}],
        "required": required_fields(kind, Mode::Check),
    })
}

/// The JSON Schema of a manifest file's documents, for editors (yaml-language-server).
pub fn manifest_schema() -> Value {
    let kinds: Vec<&str> = crate::api::registry::embedded_kinds()
        .into_iter()
        .map(|d| d.name)
        .collect();
    let branches: Vec<Value> = crate::api::registry::embedded_kinds()
        .into_iter()
        .map(|d| {
            let mut spec = json!({"$ref": format!("#/definitions/{}", d.definition)});
            let required = required_fields(d.kind, Mode::Editor);
            if !required.is_empty() {
                spec = json!({"allOf": [spec], "required": required});
            }
            json!({
                "if": {"properties": {"kind": {"const": d.name}}, "required": ["kind"]},
                "then": {"properties": {"spec": spec}}
            })
        })
        .collect();
    json!({
        "$schema": DRAFT7,
        "$id": "https://cfgctl.dev/schema/manifest.schema.json",
        "title": "cfgctl manifest",
        "description": "A resource of the Configuration Management API v1 in the vendor envelope (api_version, kind, spec).",
        "type": "object",
        "required": ["api_version", "kind", "spec"],
        "additionalProperties": false,
        "properties": {
            "api_version": {"const": API_VERSION, "description": "Always v1/config."},
            "kind": {"enum": kinds, "description": "The resource kind."},
            "spec": {"type": "object", "description": "The API object, with the API's own field names."}
        },
        "allOf": branches,
        "definitions": converted_definitions(Mode::Editor),
    })
}
