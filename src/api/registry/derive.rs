//! Kinds from an API description, by rule (docs/product.md §1), as kubectl learns kinds by
//! discovery:
//! - name: the suffix of the `Create<Kind>` operation id (`Read<Kind>` for a read-only kind);
//! - paths: `/api/v1/config/<segment>` and `<segment>/{slug}`; a collection path with
//!   get/post/put/delete and no item path is a singleton;
//! - wrapper keys: the create (else read) body's object property, the list answer's array;
//! - operations: exactly the methods described; a nested path (`services/{service_slug}/...`)
//!   cannot be addressed, so its kind has none;
//! - references: fields `<k>_slug` / `<k>_slugs` at any depth, `<k>` a kind's singular key,
//!   `collection: {type, slug}`, and the override table's names;
//! - server-owned: read-only fields; list filters: the list's query parameters; delete
//!   options: `force_delete`, and the definition of a delete's answer when it has members.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Op, Ops};

/// A reference found by the rule: dotted path, target kind name, `unless` sibling condition.
pub(super) type FoundRef = (String, String, Option<(&'static str, &'static str)>);

/// What the description says of one kind, references by target kind name.
#[derive(Clone, Debug, Default)]
pub(super) struct Derived {
    pub name: String,
    pub path: String,
    pub singular: String,
    pub plural: Option<String>,
    pub definition: String,
    pub singleton: bool,
    pub ops: Ops,
    /// Why the kind has no operations although the description names some.
    pub unaddressable: Option<String>,
    /// (dotted path, target kind name, `unless` sibling condition).
    pub references: Vec<FoundRef>,
    pub server_owned: Vec<String>,
    /// Secret fields (dotted, `[]` for arrays): see `secrets`.
    pub secrets: Vec<String>,
    /// PromQL fields (dotted, `[]` for arrays): see `promql_fields`.
    pub promql: Vec<(String, crate::util::promql::Form)>,
    /// (parameter, field, repeated).
    pub list_filters: Vec<(String, String, bool)>,
    pub force_delete: bool,
    pub delete_response: Option<String>,
    pub list_operation: Option<String>,
}

const PREFIX: &str = "/api/v1/config/";

/// Every kind a swagger 2.0 document describes, sorted by name. `known_keys` maps singular
/// wrapper keys of kinds registered earlier to their names (a reference may name one).
pub(super) fn kinds(doc: &Value, known_keys: &BTreeMap<String, String>) -> Vec<Derived> {
    let empty = Map::new();
    let defs = doc
        .get("definitions")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    // segment -> (collection methods, item methods, nested methods)
    let mut segments: BTreeMap<&str, [Option<&Map<String, Value>>; 3]> = BTreeMap::new();
    for (path, methods) in paths {
        let (Some(rest), Some(methods)) = (path.strip_prefix(PREFIX), methods.as_object()) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let slot = match parts.as_slice() {
            [_] => 0,
            [_, param] if param.starts_with('{') => 1,
            _ => 2,
        };
        segments.entry(parts[0]).or_default()[slot] = Some(methods);
    }
    let mut out: Vec<Derived> = Vec::new();
    for (segment, [collection, item, nested]) in &segments {
        out.extend(derive_one(segment, *collection, *item, defs));
        out.extend(nested.and_then(|n| derive_nested(segment, n, defs)));
    }
    attach_lists(&mut out, &segments, defs);
    let mut keys = known_keys.clone();
    keys.extend(out.iter().map(|d| (d.singular.clone(), d.name.clone())));
    for d in &mut out {
        if let Some(def) = defs.get(&d.definition) {
            d.server_owned = read_only(def);
            d.secrets = super::secrets::paths(defs, def);
            let mut problems = Vec::new();
            d.promql = promql_fields(defs, def, &mut problems);
            d.references = references(defs, def, &keys, &mut problems);
            for p in problems {
                tracing::warn!(
                    "the API description's {} is {p}: the fields beyond are not checked",
                    d.name
                );
            }
            d.list_filters.retain(|(_, field, _)| !field.is_empty());
            let fields = def.get("properties").and_then(Value::as_object);
            for f in &mut d.list_filters {
                if !fields.is_some_and(|p| p.contains_key(&f.1)) {
                    f.1.clear();
                }
            }
            d.list_filters.retain(|(_, field, _)| !field.is_empty());
        }
    }
    // A hostile or broken description names no kind cfgctl cannot print, address or key:
    // names are ASCII letters and digits, segments lower-case words, keys snake case.
    out.retain(well_formed);
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|b, a| a.name == b.name);
    out
}

fn well_formed(d: &Derived) -> bool {
    let word = |s: &str, ok: fn(u8) -> bool| !s.is_empty() && s.len() <= 64 && s.bytes().all(ok);
    word(&d.name, |b| b.is_ascii_alphanumeric())
        && d.name.as_bytes()[0].is_ascii_uppercase()
        && word(&d.path, |b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
        })
        && !d.path.starts_with('-')
        && word(&d.singular, |b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'
        })
        && d.plural.as_deref().is_none_or(|p| {
            word(p, |b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'
            })
        })
}

fn operation_id(op: &Value) -> &str {
    op.get("operationId").and_then(Value::as_str).unwrap_or("")
}

/// A `$ref`'s definition name.
fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/definitions/"))
}

/// The object property of a wrapper definition: (key, definition name).
fn wrapped(defs: &Map<String, Value>, wrapper: &str) -> Option<(String, String)> {
    let props = defs.get(wrapper)?.get("properties")?.as_object()?;
    props.iter().find_map(|(key, schema)| {
        let name = ref_name(schema)?;
        defs.get(name)?
            .get("properties")
            .map(|_| (key.clone(), name.to_string()))
    })
}

fn body_wrapper(op: &Value) -> Option<&str> {
    op.get("parameters")?
        .as_array()?
        .iter()
        .find(|p| p.get("in").and_then(Value::as_str) == Some("body"))
        .and_then(|p| ref_name(p.get("schema")?))
}

fn answer_wrapper(op: &Value) -> Option<&str> {
    ref_name(op.get("responses")?.get("200")?.get("schema")?)
}

fn query_params(op: &Value) -> Vec<(String, bool)> {
    op.get("parameters")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter(|p| p.get("in").and_then(Value::as_str) == Some("query"))
                .filter_map(|p| {
                    let name = p.get("name")?.as_str()?.to_string();
                    let repeated = p.get("type").and_then(Value::as_str) == Some("array");
                    Some((name, repeated))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A kind managed only at a nested path (`services/{service_slug}/attributes`): described, but
/// not addressable by cfgctl, so it has no operations and says why.
fn derive_nested(
    segment: &str,
    nested: &Map<String, Value>,
    defs: &Map<String, Value>,
) -> Option<Derived> {
    let c = nested.get("post")?;
    let name = operation_id(c).strip_prefix("Create")?;
    let (singular, definition) = wrapped(defs, body_wrapper(c)?)?;
    Some(Derived {
        name: name.to_string(),
        path: segment.to_string(),
        singular,
        definition,
        unaddressable: Some(format!(
            "{name} is managed at a nested path (/{segment}/{{...}}/...), which cfgctl cannot address"
        )),
        ..Derived::default()
    })
}

fn derive_one(
    segment: &str,
    collection: Option<&Map<String, Value>>,
    item: Option<&Map<String, Value>>,
    defs: &Map<String, Value>,
) -> Option<Derived> {
    fn method<'a>(m: Option<&'a Map<String, Value>>, name: &str) -> Option<&'a Value> {
        m.and_then(|m| m.get(name))
    }
    let create = method(collection, "post");
    let read = method(item, "get").or_else(|| {
        (item.is_none() && create.is_some())
            .then(|| method(collection, "get"))
            .flatten()
    });
    let (name, wrapper_op) = match (create, read) {
        (Some(c), _) => (operation_id(c).strip_prefix("Create")?, body_wrapper(c)),
        (None, Some(r)) => (operation_id(r).strip_prefix("Read")?, answer_wrapper(r)),
        _ => return None,
    };
    let (singular, definition) = wrapped(defs, wrapper_op?)?;
    let singleton = item.is_none();
    let mut ops = Ops::NONE;
    for (methods, at_item) in [(collection, false), (item, true)] {
        for m in methods.into_iter().flat_map(Map::keys) {
            if let Some(op) = super::route(singleton, m, at_item) {
                ops.set(op);
            }
        }
    }
    let delete = method(if singleton { collection } else { item }, "delete");
    let delete_response = delete
        .and_then(answer_wrapper)
        .filter(|w| {
            defs.get(*w)
                .and_then(|d| d.get("properties"))
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty())
        })
        .map(str::to_string);
    Some(Derived {
        name: name.to_string(),
        path: segment.to_string(),
        singular,
        plural: None,
        definition,
        singleton,
        ops,
        force_delete: delete
            .is_some_and(|d| query_params(d).iter().any(|(p, _)| p == "force_delete")),
        delete_response,
        ..Derived::default()
    })
}

/// The list of each kind: its array key, filters and operation id, from the segment's
/// collection GET (or a list-only segment whose array holds the kind's definition).
fn attach_lists(
    out: &mut [Derived],
    segments: &BTreeMap<&str, [Option<&Map<String, Value>>; 3]>,
    defs: &Map<String, Value>,
) {
    for (segment, [collection, _, _]) in segments {
        let Some(list) = collection.and_then(|c| c.get("get")) else {
            continue;
        };
        if !operation_id(list).starts_with("List") {
            continue;
        }
        let Some(array) = answer_wrapper(list)
            .and_then(|w| defs.get(w)?.get("properties")?.as_object())
            .and_then(|p| {
                p.iter().find_map(|(key, s)| {
                    let item = ref_name(s.get("items")?)?;
                    Some((key.clone(), item.to_string()))
                })
            })
        else {
            continue;
        };
        let Some(d) = out
            .iter_mut()
            .find(|d| d.path == *segment && d.unaddressable.is_none())
        else {
            continue;
        };
        if d.singleton || d.definition != array.1 {
            continue;
        }
        d.plural = Some(array.0);
        d.ops.set(Op::List);
        d.list_operation = Some(operation_id(list).to_string());
        d.list_filters = query_params(list)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("page.") && p != "slugs" && p != "names")
            .map(|(p, repeated)| {
                let field = match p.strip_suffix("_slugs") {
                    Some(stem) => format!("{stem}_slug"),
                    None if p == "include_dashboard_json" => "dashboard_json".to_string(),
                    None => p.clone(),
                };
                (p, field, repeated)
            })
            .collect();
    }
}

/// The read-only top-level fields of a definition.
fn read_only(def: &Value) -> Vec<String> {
    def.get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, s)| s.get("readOnly").and_then(Value::as_bool) == Some(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The reference fields of a kind's definition, depth first in property order: a field named
/// `<k>_slug(s)` (or in the override table), and a field whose schema is a reference object
/// (see [`reference_object`]), whatever its name, alone or as an array's items. A walk that
/// stopped short (a hostile description) adds its problem.
fn references(
    defs: &Map<String, Value>,
    def: &Value,
    keys: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) -> Vec<FoundRef> {
    let mut walk = super::walk::Walk::new(
        defs,
        |_| 0,
        |_, field: &str, sub: &Value| {
            use super::walk::Step;
            if let Some(target) = reference_target(field, keys) {
                let suffix = if field.ends_with("_slugs") { "[]" } else { "" };
                return Step::Found(suffix, (target, None));
            }
            if let Some(found) = reference_object(defs, field, sub, keys) {
                return Step::Found(".slug", found);
            }
            let items = sub
                .get("items")
                .filter(|_| sub.get("type") == Some(&"array".into()));
            if let Some(found) = items.and_then(|i| reference_object(defs, field, i, keys)) {
                return Step::Found("[].slug", found);
            }
            Step::Descend
        },
    );
    let found = walk.fields(def);
    problems.extend(walk.problem);
    found
        .into_iter()
        .map(|(path, (target, unless))| (path, target, unless))
        .collect()
}

/// The kind a reference object names, and when it does not: a `$ref` to a definition named
/// `...<Kind>Reference` with a `slug` member (`configv1CollectionReference`), or to one whose
/// members are exactly `type` and `slug`, or an inline `collection: {type, slug}`. A `type`
/// whose values include `SERVICE` names a service instead (`unless`).
fn reference_object(
    defs: &Map<String, Value>,
    field: &str,
    schema: &Value,
    keys: &BTreeMap<String, String>,
) -> Option<(String, Option<(&'static str, &'static str)>)> {
    let named = ref_name(schema);
    let def = named.and_then(|n| defs.get(n)).unwrap_or(schema);
    let props = def.get("properties").and_then(Value::as_object)?;
    if !props.contains_key("slug") {
        return None;
    }
    let unless = props
        .get("type")
        .filter(|t| enum_has(defs, t, "SERVICE"))
        .map(|_| ("type", "SERVICE"));
    let by_name = named
        .and_then(|n| n.strip_suffix("Reference"))
        .and_then(|stem| {
            keys.values()
                .filter(|kind| stem.ends_with(kind.as_str()))
                .max_by_key(|kind| kind.len())
        });
    if let Some(kind) = by_name {
        return Some((kind.clone(), unless));
    }
    let shape = props.len() == 2 && props.contains_key("type");
    let collection = keys.get("collection")?;
    ((named.is_some() && shape) || (field == "collection" && props.contains_key("type")))
        .then(|| (collection.clone(), Some(("type", "SERVICE"))))
}

/// Whether a schema (or the definition it names) is an enum holding `value`.
fn enum_has(defs: &Map<String, Value>, schema: &Value, value: &str) -> bool {
    let schema = ref_name(schema).and_then(|n| defs.get(n)).unwrap_or(schema);
    schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| values.iter().any(|v| v == value))
}

/// The kind a field named `<k>_slug` / `<k>_slugs` (or an override name) refers to.
fn reference_target(field: &str, keys: &BTreeMap<String, String>) -> Option<String> {
    if let Some((_, kind)) = super::overrides::REFERENCE_NAMES
        .iter()
        .find(|(name, _)| *name == field)
    {
        return Some((*kind).to_string());
    }
    let stem = field
        .strip_suffix("_slugs")
        .or_else(|| field.strip_suffix("_slug"))?;
    keys.get(stem).cloned()
}

/// The string fields whose description calls them a PromQL query, expression or label
/// selector, depth first in property order. How each is read comes from the same words: a
/// label selector is parsed inside braces, a template (named `*_template`, or its description
/// says so) has `{{ }}` placeholders, and one whose description speaks of variables has `$name`
/// variables in its selectors.
fn promql_fields(
    defs: &Map<String, Value>,
    def: &Value,
    problems: &mut Vec<String>,
) -> Vec<(String, crate::util::promql::Form)> {
    let mut walk = super::walk::Walk::new(
        defs,
        |_| 0,
        |_, field: &str, sub: &Value| {
            let said = sub
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_ascii_lowercase();
            let is_string = sub.get("type").and_then(Value::as_str) == Some("string");
            let promql = said.contains("promql")
                && ["query", "expression", "selector"]
                    .iter()
                    .any(|w| said.contains(w));
            if !(is_string && promql) {
                return super::walk::Step::Descend;
            }
            let form = crate::util::promql::Form {
                selector: said.contains("label selector"),
                template: field.ends_with("_template") || said.contains("template"),
                variables: said.contains("variables"),
            };
            super::walk::Step::Found("", form)
        },
    );
    let found = walk.fields(def);
    problems.extend(walk.problem);
    found
}
