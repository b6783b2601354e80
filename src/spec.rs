//! The embedded API description (swagger 2.0) and the JSON Schemas derived from it.
//!
//! The project's copy of `config-api-v1.swagger.json` is compiled into the binary. From its
//! definitions this module derives (a) one strict JSON Schema per kind used to check a
//! manifest's `spec` (unknown fields, types, enums, read-only fields), and (b) the editor
//! schema of whole manifests printed by `cfgctl schema`. Schema checks run on the jsonschema
//! crate; this module only builds schemas and turns its errors into messages.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::registry::{Kind, Ops, Profile, KINDS};
use crate::yaml::pointer_to_path;

/// The API description as shipped (a copy of `shared/spec/config-api-v1.swagger.json`).
pub const SWAGGER_JSON: &str = include_str!("../spec/config-api-v1.swagger.json");

/// The manifest envelope's `api_version`.
pub const API_VERSION: &str = "v1/config";

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

/// An API description: the embedded one (the default everywhere), or one read at run time
/// (`cfgctl serve --swagger FILE` serves another, say newer, API). Its checkers compile on
/// first use, per kind.
pub struct Description {
    doc: Value,
    checkers: [OnceLock<Option<jsonschema::Validator>>; KINDS.len()],
    check_definitions: OnceLock<Map<String, Value>>,
}

/// Why a swagger file cannot serve as the API description.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a swagger 2.0 document with `definitions`")]
    NoDefinitions,
    #[error("no definition `{definition}` for {kind}")]
    MissingKind {
        kind: Kind,
        definition: &'static str,
    },
    #[error("the definition of {kind} does not make a valid schema (a `$ref` to nothing?)")]
    BadSchema { kind: Kind },
}

impl Description {
    fn new(doc: Value) -> Description {
        Description {
            doc,
            checkers: [const { OnceLock::new() }; KINDS.len()],
            check_definitions: OnceLock::new(),
        }
    }

    /// Reads a swagger 2.0 document that describes every kind of the registry, and compiles
    /// every kind's checker (a schema that cannot check is refused here, not on a write).
    pub fn from_json(text: &str) -> Result<Description, DescriptionError> {
        let desc = Description::from_value(serde_json::from_str(text)?)?;
        for def in &KINDS {
            if !desc.definitions().contains_key(def.definition) {
                return Err(DescriptionError::MissingKind {
                    kind: def.kind,
                    definition: def.definition,
                });
            }
            if desc.checker(def.kind).is_none() {
                return Err(DescriptionError::BadSchema { kind: def.kind });
            }
        }
        Ok(desc)
    }

    /// A swagger 2.0 document with definitions (some kinds may be missing: a target's).
    pub fn from_value(doc: Value) -> Result<Description, DescriptionError> {
        if !doc.get("definitions").is_some_and(Value::is_object) {
            return Err(DescriptionError::NoDefinitions);
        }
        Ok(Description::new(doc))
    }

    /// The description compiled into this cfgctl.
    pub fn embedded() -> &'static Description {
        Description::shared_embedded()
    }

    /// The embedded description, shared (its checkers compile once per process).
    pub fn shared_embedded() -> &'static std::sync::Arc<Description> {
        static EMBEDDED: OnceLock<std::sync::Arc<Description>> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            // The file is part of the binary and checked by a unit test; a parse failure here
            // is a build defect, not an input error.
            std::sync::Arc::new(Description::new(
                serde_json::from_str(SWAGGER_JSON).unwrap_or(Value::Null),
            ))
        })
    }

    /// The whole swagger document.
    pub fn doc(&self) -> &Value {
        &self.doc
    }

    /// Its definitions by name.
    pub fn definitions(&self) -> &Map<String, Value> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        self.doc
            .get("definitions")
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    /// The swagger definition of a kind's object.
    pub fn definition(&self, kind: Kind) -> Option<&Value> {
        self.definitions().get(kind.def().definition)
    }

    /// Follows `$ref`s to the schema they name.
    pub fn resolve<'a>(&'a self, mut node: &'a Value) -> &'a Value {
        for _ in 0..16 {
            match node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/definitions/"))
                .and_then(|name| self.definitions().get(name))
            {
                Some(target) => node = target,
                None => break,
            }
        }
        node
    }

    /// The compiled checker of a kind, built on first use (a run that loads only some kinds
    /// compiles only theirs).
    fn checker(&self, kind: Kind) -> Option<&jsonschema::Validator> {
        self.checkers[kind as usize]
            .get_or_init(|| {
                let defs = self
                    .check_definitions
                    .get_or_init(|| convert_definitions(self.definitions(), Mode::Check));
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft7)
                    .build(&spec_schema(kind, defs.clone()))
                    .ok()
            })
            .as_ref()
    }

    /// Checks a spec against its kind's definition; every problem with its JSON pointer,
    /// sorted by pointer.
    pub fn check_spec(&self, kind: Kind, spec: &Value) -> Vec<SchemaProblem> {
        let Some(validator) = self.checker(kind) else {
            return vec![SchemaProblem {
                pointer: String::new(),
                at_key: false,
                message: format!("no schema for {kind} in the API description"),
            }];
        };
        let mut problems: Vec<SchemaProblem> = Vec::new();
        for error in validator.iter_errors(spec) {
            let pointer = error.instance_path().as_str().to_string();
            problems.extend(describe(
                self,
                kind,
                &pointer,
                error.kind(),
                error.instance(),
            ));
        }
        problems.sort_by(|a, b| a.pointer.cmp(&b.pointer).then(a.message.cmp(&b.message)));
        problems.dedup();
        // An int64 given as a string of non-digits fails both the type and the pattern; one
        // message per node is enough.
        problems.dedup_by(|b, a| a.pointer == b.pointer && !a.at_key && !b.at_key);
        problems
    }

    /// [`canonical`] in this description.
    pub fn canonical(&self, kind: Kind, object: &Value) -> Value {
        match self.definition(kind) {
            Some(def) => canonical_value(self, def, object).unwrap_or_else(|| json!({})),
            None => object.clone(),
        }
    }

    /// This document restricted to the operations of a profile.
    pub fn for_profile(&self, profile: Profile) -> Value {
        restrict(self.doc.clone(), profile)
    }
}

impl std::fmt::Debug for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Description")
            .field("definitions", &self.definitions().len())
            .finish_non_exhaustive()
    }
}

/// The parsed swagger document.
pub fn swagger() -> &'static Value {
    Description::embedded().doc()
}

fn definitions() -> &'static Map<String, Value> {
    Description::embedded().definitions()
}

/// The swagger definition of a kind's object.
pub fn definition(kind: Kind) -> Option<&'static Value> {
    Description::embedded().definition(kind)
}

/// How a schema will be used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Checking a loaded manifest's spec (embedded JSON already turned into a string).
    Check,
    /// Editors: `dashboard_json` may also be written as a mapping.
    Editor,
}

/// Swagger 2.0 schema → JSON Schema draft 7, strict: objects reject unknown members,
/// read-only members may not be given, int64 accepts a number or a string of digits.
fn convert(schema: &Value) -> Value {
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

fn insert_range(out: &mut Map<String, Value>, format: Option<&str>) {
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
fn format_of_limit(limit: &Value) -> &'static str {
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

fn converted_definitions(mode: Mode) -> Map<String, Value> {
    convert_definitions(definitions(), mode)
}

fn convert_definitions(definitions: &Map<String, Value>, mode: Mode) -> Map<String, Value> {
    let mut defs: Map<String, Value> = definitions
        .iter()
        .map(|(k, v)| (k.clone(), convert(v)))
        .collect();
    if mode == Mode::Editor {
        for def in &KINDS {
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
fn required_fields(kind: Kind, mode: Mode) -> Vec<&'static str> {
    match (kind.def().singleton, mode) {
        (true, _) => vec![],
        (false, Mode::Check) => vec!["name"],
        (false, Mode::Editor) => vec!["slug", "name"],
    }
}

fn spec_schema(kind: Kind, definitions: Map<String, Value>) -> Value {
    json!({
        "$schema": DRAFT7,
        "definitions": definitions,
        "allOf": [{"$ref": format!("#/definitions/{}", kind.def().definition)}],
        "required": required_fields(kind, Mode::Check),
    })
}

/// One problem found in a spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON pointer inside the spec of the offending node (for an unknown field: the field).
    pub pointer: String,
    /// The pointer locates a mapping key (unknown or read-only field) rather than a value.
    pub at_key: bool,
    pub message: String,
}

/// Checks a spec against its kind's definition in the embedded description; every problem
/// with its JSON pointer, sorted by pointer.
pub fn check_spec(kind: Kind, spec: &Value) -> Vec<SchemaProblem> {
    Description::embedded().check_spec(kind, spec)
}

fn field_name(pointer: &str) -> String {
    let path = pointer_to_path(pointer);
    if path.is_empty() {
        "spec".to_string()
    } else {
        path
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn describe(
    desc: &Description,
    kind: Kind,
    pointer: &str,
    error: &jsonschema::error::ValidationErrorKind,
    instance: &Value,
) -> Vec<SchemaProblem> {
    use jsonschema::error::ValidationErrorKind as K;
    let field = field_name(pointer);
    let one = |message: String| {
        vec![SchemaProblem {
            pointer: pointer.to_string(),
            at_key: false,
            message,
        }]
    };
    match error {
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                let child = format!("{pointer}/{}", crate::registry::escape_pointer(name));
                let known = properties_at(desc, kind, pointer);
                let hint = crate::diagnostic::closest(name, &known)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                let place = if pointer.is_empty() {
                    format!("the {kind} definition")
                } else {
                    format!("`{field}`")
                };
                SchemaProblem {
                    pointer: child,
                    at_key: true,
                    message: format!("unknown field `{name}` in {place}{hint}"),
                }
            })
            .collect(),
        K::FalseSchema | K::Not { .. } => vec![SchemaProblem {
            pointer: pointer.to_string(),
            at_key: true,
            message: format!("`{field}` is read-only: the server sets it"),
        }],
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let at = if pointer.is_empty() {
                String::new()
            } else {
                format!(" in `{field}`")
            };
            one(format!("missing required field `{name}`{at}"))
        }
        K::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().map(str::to_string).unwrap_or(v.to_string()))
                        .collect()
                })
                .unwrap_or_default();
            one(format!(
                "`{field}`: {} is not one of {}",
                instance,
                allowed.join(", ")
            ))
        }
        K::Pattern { .. } => one(format!(
            "`{field}`: expected an integer (int64, written as a number or a string of digits), found {instance}"
        )),
        K::Type { kind: expected } => {
            let expected = match expected {
                jsonschema::error::TypeKind::Single(t) => article(&t.to_string()),
                jsonschema::error::TypeKind::Multiple(set) => {
                    let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                    if names.iter().any(|n| n == "string") && names.iter().any(|n| n == "integer")
                    {
                        "an integer (int64, as a number or a string of digits)".to_string()
                    } else {
                        names.join(" or ")
                    }
                }
            };
            one(format!(
                "`{field}`: expected {expected}, found {}",
                type_name(instance)
            ))
        }
        K::Maximum { limit } | K::Minimum { limit } => one(format!(
            "`{field}`: {instance} is out of range for an {} (at {} {limit})",
            format_of_limit(limit),
            if matches!(error, K::Maximum { .. }) {
                "most"
            } else {
                "least"
            }
        )),
        other => one(format!("`{field}`: {}", other_message(other, instance))),
    }
}

fn other_message(kind: &jsonschema::error::ValidationErrorKind, instance: &Value) -> String {
    format!("{instance} is invalid ({kind:?})")
}

fn article(type_name: &str) -> String {
    match type_name {
        "object" => "a mapping".to_string(),
        "array" => "a list".to_string(),
        "integer" => "an integer".to_string(),
        other => format!("a {other}"),
    }
}

/// Whether a kind's definition has a top-level field of this name.
pub fn has_field(kind: Kind, name: &str) -> bool {
    definition(kind)
        .and_then(|d| d.get("properties"))
        .is_some_and(|p| p.get(name).is_some())
}

/// Names of the fields the swagger definition allows at a pointer inside a kind's spec.
fn properties_at(desc: &Description, kind: Kind, pointer: &str) -> Vec<String> {
    let Some(mut node) = desc.definition(kind) else {
        return vec![];
    };
    for segment in pointer.split('/').skip(1) {
        node = desc.resolve(node);
        if let Some(items) = node.get("items") {
            if segment.bytes().all(|b| b.is_ascii_digit()) {
                node = items;
                continue;
            }
        }
        match node
            .get("properties")
            .and_then(|p| p.get(segment))
            .or_else(|| node.get("additionalProperties"))
        {
            Some(next) => node = next,
            None => return vec![],
        }
    }
    desc.resolve(node)
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn resolve(node: &'static Value) -> &'static Value {
    Description::embedded().resolve(node)
}

/// The object as a proto3 JSON gateway returns it: fields in definition order, zero values
/// (`""`, `0`, `false`, empty lists and maps, null, an enum's first value) omitted
/// recursively, int64 written as a string, int32 as an integer. Members the definition does
/// not know are kept as they are. The emulator answers with this form; the planner compares
/// in it, so the two agree by construction.
pub fn canonical(kind: Kind, object: &Value) -> Value {
    Description::embedded().canonical(kind, object)
}

fn canonical_value(desc: &Description, schema: &Value, value: &Value) -> Option<Value> {
    let schema = desc.resolve(schema);
    if value.is_null() {
        return None;
    }
    let ty = schema.get("type").and_then(Value::as_str);
    let format = schema.get("format").and_then(Value::as_str);
    let out = match (ty, value) {
        (_, Value::Object(map)) if schema.get("properties").is_some() => {
            let props = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            if let Some(props) = props {
                for (name, prop) in props {
                    if let Some(v) = map.get(name).and_then(|v| canonical_value(desc, prop, v)) {
                        out.insert(name.clone(), v);
                    }
                }
            }
            for (name, v) in map {
                if props.is_none_or(|p| !p.contains_key(name)) && !crate::registry::is_zero(v) {
                    out.insert(name.clone(), v.clone());
                }
            }
            Value::Object(out)
        }
        (Some("object"), Value::Object(map)) => {
            // A map: entries kept (proto3 keeps zero values inside maps), keys sorted.
            let item = schema.get("additionalProperties");
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
            let item = schema.get("items");
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
            let is_default = schema
                .get("enum")
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
    if crate::registry::is_zero(&out) {
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
fn zero_like(v: &Value) -> Value {
    match v {
        Value::Bool(_) => json!(false),
        Value::Number(_) => json!(0),
        Value::String(_) => json!(""),
        Value::Array(_) => json!([]),
        Value::Object(_) => json!({}),
        Value::Null => Value::Null,
    }
}

/// The dotted field path's proto3 default, as the API omits it: an enum's first value, or
/// nothing.
pub fn enum_default(kind: Kind, dotted: &str) -> Option<&'static str> {
    let mut node = definition(kind)?;
    for segment in dotted.split('.') {
        node = resolve(node).get("properties")?.get(segment)?;
    }
    resolve(node)
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .and_then(Value::as_str)
}

/// The operations a swagger document describes, per kind (from its paths and methods).
pub fn described_operations(doc: &Value) -> BTreeMap<Kind, Ops> {
    let mut out: BTreeMap<Kind, Ops> = BTreeMap::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, methods) in paths {
        let Some(rest) = path.strip_prefix(crate::wire::API_PREFIX) else {
            continue;
        };
        let mut segments = rest.trim_start_matches('/').split('/');
        let Some(kind) = segments.next().and_then(crate::wire::kind_for_path) else {
            continue;
        };
        let has_slug = segments.next().is_some();
        let Some(methods) = methods.as_object() else {
            continue;
        };
        for method in methods.keys() {
            if let Some(op) = crate::wire::route_op(kind.def(), method, has_slug) {
                out.entry(kind).or_insert(Ops::NONE).set(op);
            }
        }
    }
    out
}

/// The embedded swagger document restricted to the operations of a profile.
pub fn swagger_for(profile: Profile) -> Value {
    Description::embedded().for_profile(profile)
}

/// A swagger document restricted to the operations of a profile.
fn restrict(mut doc: Value, profile: Profile) -> Value {
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        paths.retain(|path, methods| {
            let rest = path
                .strip_prefix(crate::wire::API_PREFIX)
                .unwrap_or_default();
            let mut segments = rest.trim_start_matches('/').split('/');
            let Some(kind) = segments.next().and_then(crate::wire::kind_for_path) else {
                return false;
            };
            let has_slug = segments.next().is_some();
            let ops = kind.def().ops(profile);
            if let Some(methods) = methods.as_object_mut() {
                methods.retain(|method, _| {
                    crate::wire::route_op(kind.def(), method, has_slug)
                        .is_some_and(|op| ops.has(op))
                });
                !methods.is_empty()
            } else {
                false
            }
        });
    }
    doc
}

/// The JSON Schema of a manifest file's documents, for editors (yaml-language-server).
pub fn manifest_schema() -> Value {
    let kinds: Vec<&str> = KINDS.iter().map(|d| d.name).collect();
    let branches: Vec<Value> = KINDS
        .iter()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_description_checks_with_its_own_definitions() {
        let mut doc = swagger().clone();
        doc["definitions"]["configv1Bucket"]["properties"]["retention_tier"] =
            json!({"type": "string", "enum": ["HOT", "COLD"]});
        let newer = Description::from_json(&doc.to_string()).unwrap();
        let spec = json!({"slug": "b", "name": "B", "retention_tier": "COLD"});
        assert_eq!(newer.check_spec(Kind::Bucket, &spec), vec![]);
        let wrong = json!({"slug": "b", "name": "B", "retention_tier": "WARM"});
        assert_eq!(newer.check_spec(Kind::Bucket, &wrong).len(), 1);
        // The embedded one is unchanged and still refuses the field.
        assert_eq!(check_spec(Kind::Bucket, &spec).len(), 1);
        // Its canonical form follows its own definitions (the field is an enum there: its
        // first value is the default and omitted).
        let hot = json!({"slug": "b", "name": "B", "retention_tier": "HOT"});
        assert_eq!(
            newer.canonical(Kind::Bucket, &hot),
            json!({"slug": "b", "name": "B"})
        );
    }

    #[test]
    fn runtime_descriptions_must_describe_every_kind() {
        assert!(matches!(
            Description::from_json("{"),
            Err(DescriptionError::Json(_))
        ));
        assert!(matches!(
            Description::from_json("{}"),
            Err(DescriptionError::NoDefinitions)
        ));
        let mut doc = swagger().clone();
        doc["definitions"]
            .as_object_mut()
            .unwrap()
            .shift_remove("configv1Team");
        let e = Description::from_json(&doc.to_string()).unwrap_err();
        assert_eq!(e.to_string(), "no definition `configv1Team` for Team");
        let mut doc = swagger().clone();
        doc["definitions"]["configv1Bucket"]["properties"]["tier"] =
            json!({"$ref": "#/definitions/Nowhere"});
        let e = Description::from_json(&doc.to_string()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the definition of Bucket does not make a valid schema (a `$ref` to nothing?)"
        );
    }

    #[test]
    fn embedded_swagger_describes_every_kind() {
        assert_eq!(swagger()["swagger"], "2.0");
        for def in &KINDS {
            assert!(definition(def.kind).is_some(), "{}", def.definition);
            let path = format!("/api/v1/config/{}", def.path);
            assert!(swagger()["paths"].get(&path).is_some(), "{path}");
        }
    }

    #[test]
    fn every_kind_has_a_checker() {
        for kind in Kind::all() {
            assert!(Description::embedded().checker(kind).is_some(), "{kind}");
        }
    }

    #[test]
    fn a_valid_spec_has_no_problems() {
        let spec = json!({"slug": "b", "name": "B", "labels": {"team": "x"}});
        assert_eq!(check_spec(Kind::Bucket, &spec), vec![]);
    }

    fn messages(kind: Kind, spec: Value) -> Vec<(String, String)> {
        check_spec(kind, &spec)
            .into_iter()
            .map(|p| (p.pointer, p.message))
            .collect()
    }

    #[test]
    fn unknown_fields_with_suggestions() {
        let got = messages(
            Kind::Bucket,
            json!({"slug": "b", "name": "B", "descripton": "x"}),
        );
        assert_eq!(
            got,
            vec![(
                "/descripton".to_string(),
                "unknown field `descripton` in the Bucket definition (did you mean `description`?)"
                    .to_string()
            )]
        );
    }

    #[test]
    fn nested_types_enums_and_read_only() {
        let got = messages(
            Kind::ConsumptionBudget,
            json!({
                "slug": "b", "name": "B", "created_at": "2020-01-01T00:00:00Z",
                "thresholds": [{"action": "ALERT_LOUD", "volume": {"fixed_value": "12x"}}],
                "default_priority": "high"
            }),
        );
        assert_eq!(
            got,
            vec![
                ("/created_at".into(), "`created_at` is read-only: the server sets it".into()),
                ("/default_priority".into(), "`default_priority`: expected an integer, found a string".into()),
                ("/thresholds/0/action".into(), "`thresholds[0].action`: \"ALERT_LOUD\" is not one of ALERT_WARN, ALERT_CRITICAL, DROP".into()),
                ("/thresholds/0/volume/fixed_value".into(), "`thresholds[0].volume.fixed_value`: expected an integer (int64, written as a number or a string of digits), found \"12x\"".into()),
            ]
        );
    }

    #[test]
    fn int64_accepts_numbers_and_digit_strings() {
        for v in [json!("1000"), json!(1000), json!("-5")] {
            let spec =
                json!({"slug": "b", "name": "B", "thresholds": [{"volume": {"fixed_value": v}}]});
            assert_eq!(messages(Kind::ConsumptionBudget, spec), vec![]);
        }
    }

    #[test]
    fn slug_and_name_required_except_singleton() {
        let got = messages(Kind::Team, json!({"slug": "t"}));
        assert_eq!(
            got,
            vec![("".into(), "missing required field `name`".into())]
        );
        assert_eq!(messages(Kind::ResourcePools, json!({"pools": []})), vec![]);
    }

    #[test]
    fn editor_schema_compiles_and_accepts_mapping_dashboards() {
        let schema = manifest_schema();
        let v = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(&schema)
            .unwrap();
        let ok = json!({"api_version": "v1/config", "kind": "Dashboard",
            "spec": {"slug": "d", "name": "D", "dashboard_json": {"kind": "Dashboard"}}});
        assert!(v.is_valid(&ok));
        let bad = json!({"api_version": "v1/config", "kind": "Dashboard",
            "spec": {"slug": "d", "name": "D", "colour": "red"}});
        assert!(!v.is_valid(&bad));
        let bad_kind = json!({"api_version": "v1/config", "kind": "Widget", "spec": {}});
        assert!(!v.is_valid(&bad_kind));
    }

    #[test]
    fn canonical_form_of_the_gateway() {
        let object = json!({
            "name": "R",
            "slug": "r",
            "mode": "ENABLED",
            "drop_nan_value": false,
            "filters": [{"name": "a", "value_glob": ""}],
            "conditional_rate_based_drop": {"enabled": true, "rate_limit_threshold": 50, "activated_drop_duration_secs": 60.0},
            "value_based_drop": {"enabled": false}
        });
        let got = canonical(Kind::DropRule, &object);
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            r#"{"slug":"r","name":"R","filters":[{"name":"a"}],"conditional_rate_based_drop":{"enabled":true,"rate_limit_threshold":50.0,"activated_drop_duration_secs":60}}"#
        );
    }

    #[test]
    fn canonical_int64_and_maps() {
        let object = json!({
            "slug": "b", "name": "B",
            "thresholds": [{"volume": {"fixed_value": 1000}}, {"instant_rate": {"fixed_value_per_sec": " 7"}}],
            "alert_action_config": {"labels": {"z": "1", "a": ""}}
        });
        let got = canonical(Kind::ConsumptionBudget, &object);
        assert_eq!(got["thresholds"][0]["volume"]["fixed_value"], json!("1000"));
        assert_eq!(
            got["thresholds"][1]["instant_rate"]["fixed_value_per_sec"],
            json!("7")
        );
        assert_eq!(
            serde_json::to_string(&got["alert_action_config"]["labels"]).unwrap(),
            r#"{"a":"","z":"1"}"#
        );
    }

    #[test]
    fn enum_defaults() {
        assert_eq!(
            enum_default(Kind::Dataset, "configuration.type"),
            Some("TRACES")
        );
        assert_eq!(enum_default(Kind::Bucket, "name"), None);
    }

    #[test]
    fn the_full_swagger_describes_the_full_registry() {
        let ops = described_operations(swagger());
        for def in &KINDS {
            assert_eq!(
                ops.get(&def.kind).copied().unwrap_or(Ops::NONE),
                def.full_ops,
                "{}",
                def.name
            );
        }
    }

    #[test]
    fn the_seed_swagger_describes_only_the_seed_column() {
        let ops = described_operations(&swagger_for(Profile::Seed));
        for def in &KINDS {
            assert_eq!(
                ops.get(&def.kind).copied().unwrap_or(Ops::NONE),
                def.seed_ops,
                "{}",
                def.name
            );
        }
    }
}
