//! A short example manifest of each kind, for the reference: derived from the registry, not
//! written per kind, so that every kind has one and a test can apply them all to the emulator
//! (`docs::examples`). An example holds what a valid object needs: its slug and name (none for
//! a singleton), the first field of each "one of" rule, and the references a create needs,
//! each naming the example of the kind it references, so that together they apply in order;
//! and its first PromQL field, a query being what most such kinds are about.

use serde_json::{json, Map, Value};

use crate::api::registry::KindDef;

/// The slug of `def`'s example (`example-notification-policy`).
pub fn slug(def: &KindDef) -> String {
    format!("example-{}", def.singular.replace('_', "-"))
}

/// The example's spec.
pub fn spec(def: &KindDef) -> Value {
    let mut spec = Map::new();
    if !def.singleton {
        spec.insert("slug".into(), json!(slug(def)));
        spec.insert("name".into(), json!(format!("Example {}", def.name)));
    }
    // The first field of each rule, and the references that are neither an alternative of a
    // rule nor nested (a reference inside a list or an object is part of something optional).
    let mut paths: Vec<&str> = def
        .required
        .iter()
        .filter_map(|r| r.0.first().copied())
        .collect();
    let in_rule = |p: &str| def.required.iter().any(|r| r.0.contains(&p));
    paths.extend(
        def.references
            .iter()
            .filter(|r| !r.optional && !r.path.contains(['.', '[']) && !in_rule(r.path))
            .map(|r| r.path),
    );
    // A query shows what the kind is about: the first one not inside a list or an object.
    let query = def.promql.iter().find(|f| !f.path.contains(['.', '[']));
    paths.extend(query.map(|f| f.path));
    for path in paths {
        set(&mut spec, path, value(def, path));
    }
    Value::Object(spec)
}

/// The example of `def` as a manifest file's text.
pub fn manifest(def: &KindDef) -> String {
    let mut envelope = Map::new();
    envelope.insert("api_version".into(), json!(crate::api::spec::API_VERSION));
    envelope.insert("kind".into(), json!(def.name));
    envelope.insert("spec".into(), spec(def));
    serde_saphyr::to_string(&Value::Object(envelope)).unwrap_or_default()
}

/// A value for the field at `path`: the slug of the example it references, a JSON document
/// for an embedded one, else a short text.
fn value(def: &KindDef, path: &str) -> Value {
    if let Some(r) = def.references.iter().find(|r| r.path == path) {
        return json!(slug(r.target.def()));
    }
    if let Some(f) = def.promql.iter().find(|f| f.path == path) {
        return json!(match (f.form.selector, f.form.template) {
            (true, _) => "job=\"example\"",
            (_, true) => "sum(rate(http_requests_total[{{ .Window }}]))",
            _ => "sum(rate(http_requests_total[5m]))",
        });
    }
    if def.embedded_json.iter().any(|e| e.field == path) {
        return json!(format!("{{\"title\": \"Example {}\"}}", def.name));
    }
    json!(format!("Example {}", path.replace(['.', '_'], " ")))
}

/// Sets the dotted `path` in `spec`, making the objects on the way.
fn set(spec: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            spec.insert(path.to_string(), value);
        }
        Some((head, rest)) => {
            let child = spec
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(child) = child {
                set(child, rest, value);
            }
        }
    }
}
