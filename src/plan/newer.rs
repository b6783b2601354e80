//! A newer API: members a target's objects carry (and its swagger.json describes) that this
//! cfgctl's embedded description lacks, because the service evolved. They are never a diff
//! ([`strip_undescribed`] before comparing) and never wiped ([`carry_over`] puts the server's
//! value into an update's body).
//!
//! Paths are dotted; `[]` marks the elements of an array.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::api::registry::Kind;
use crate::api::spec::Description;

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The properties of an object schema (none for maps and scalars).
fn properties<'a>(desc: &'a Description, schema: &'a Value) -> Option<&'a Map<String, Value>> {
    crate::api::spec::schema_member(desc.resolve(schema), "properties").and_then(Value::as_object)
}

/// The schema of an array's items.
fn items<'a>(desc: &'a Description, schema: &'a Value) -> Option<&'a Value> {
    crate::api::spec::schema_member(desc.resolve(schema), "items")
}

/// Called with the path of an object, the object, and the name of a member the description
/// lacks.
type Found<'a> = dyn FnMut(&str, &mut Map<String, Value>, &str) + 'a;

/// Walks a value beside its schema; `f` gets each undescribed member's parent and name. The
/// path is one buffer, grown and cut back on the way (not a new string per member).
fn visit(
    desc: &Description,
    schema: &Value,
    value: &mut Value,
    path: &mut String,
    depth: usize,
    f: &mut Found,
) {
    if depth > 32 {
        return;
    }
    match value {
        Value::Object(map) => {
            let Some(props) = properties(desc, schema) else {
                return;
            };
            let undescribed: Vec<String> = map
                .keys()
                .filter(|name| !props.contains_key(*name))
                .cloned()
                .collect();
            for (name, child) in map.iter_mut() {
                if let Some(prop) = props.get(name) {
                    let len = path.len();
                    if len > 0 {
                        path.push('.');
                    }
                    path.push_str(name);
                    visit(desc, prop, child, path, depth + 1, f);
                    path.truncate(len);
                }
            }
            for name in undescribed {
                f(path, map, &name);
            }
        }
        Value::Array(list) => {
            if let Some(item) = items(desc, schema) {
                let len = path.len();
                path.push_str("[]");
                for element in list {
                    visit(desc, item, element, path, depth + 1, f);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// [`visit`] without changing anything: the paths of the undescribed members.
fn visit_ref(
    desc: &Description,
    schema: &Value,
    value: &Value,
    path: &mut String,
    depth: usize,
    out: &mut BTreeSet<String>,
) {
    if depth > 32 {
        return;
    }
    match value {
        Value::Object(map) => {
            let Some(props) = properties(desc, schema) else {
                return;
            };
            for (name, child) in map {
                let len = path.len();
                if len > 0 {
                    path.push('.');
                }
                path.push_str(name);
                match props.get(name) {
                    None => {
                        out.insert(path.clone());
                    }
                    Some(prop) => visit_ref(desc, prop, child, path, depth + 1, out),
                }
                path.truncate(len);
            }
        }
        Value::Array(list) => {
            if let Some(item) = items(desc, schema) {
                let len = path.len();
                path.push_str("[]");
                for element in list {
                    visit_ref(desc, item, element, path, depth + 1, out);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Paths of the members an object holds that the embedded description lacks, sorted.
pub fn undescribed(kind: Kind, object: &Value) -> BTreeSet<String> {
    let desc = Description::embedded();
    let mut out = BTreeSet::new();
    if let Some(def) = desc.definition(kind) {
        visit_ref(desc, def, object, &mut String::new(), 0, &mut out);
    }
    out
}

/// Removes the members the embedded description lacks (before comparing).
pub fn strip_undescribed(kind: Kind, object: &mut Value) {
    let desc = Description::embedded();
    if let Some(def) = desc.definition(kind) {
        let mut stripped = false;
        visit(
            desc,
            def,
            object,
            &mut String::new(),
            0,
            &mut |_, map, name| {
                stripped |= map.shift_remove(name).is_some();
            },
        );
        // An object that held only such members is as if absent (the manifest form has no
        // empty object left: it dropped them before), else a perpetual difference.
        // Embedded documents are not described, so nothing was stripped there: left as
        // they are (their zero values are the normal form's business).
        if let (true, Value::Object(map)) = (stripped, object) {
            let embedded = kind.def().embedded_json;
            for (name, value) in map.iter_mut() {
                if !embedded.iter().any(|e| e.field == name) {
                    drop_emptied(value);
                }
            }
            map.retain(|_, v| !matches!(v, Value::Object(m) if m.is_empty()));
        }
    }
}

/// Removes the members of objects, at any depth, that are empty objects (list items stay).
fn drop_emptied(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.values_mut().for_each(drop_emptied);
            map.retain(|_, v| !matches!(v, Value::Object(m) if m.is_empty()));
        }
        Value::Array(items) => items.iter_mut().for_each(drop_emptied),
        _ => {}
    }
}

/// Copies the current object's undescribed members into an update's body, where the body has
/// the place for them: through objects, and through lists element by element when both lists
/// have the same length.
pub fn carry_over(kind: Kind, current: &Value, body: &mut Value) {
    let desc = Description::embedded();
    if let Some(def) = desc.definition(kind) {
        copy_into(desc, def, current, body, 0);
    }
}

fn copy_into(desc: &Description, schema: &Value, current: &Value, body: &mut Value, depth: usize) {
    if depth > 32 {
        return;
    }
    match (current, body) {
        (Value::Object(cur), Value::Object(out)) => {
            let Some(props) = properties(desc, schema) else {
                return;
            };
            for (name, value) in cur {
                match props.get(name) {
                    None => {
                        out.insert(name.clone(), value.clone());
                    }
                    Some(prop) => {
                        if let Some(child) = out.get_mut(name) {
                            copy_into(desc, prop, value, child, depth + 1);
                        }
                    }
                }
            }
        }
        (Value::Array(cur), Value::Array(out)) if cur.len() == out.len() => {
            if let Some(item) = items(desc, schema) {
                for (c, o) in cur.iter().zip(out.iter_mut()) {
                    copy_into(desc, item, c, o, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// `Kind.path` of every field a target's swagger document describes that the embedded one
/// lacks.
pub fn described_newer(target: Value) -> BTreeSet<String> {
    let embedded = Description::embedded();
    // A resolver over the target's own definitions (taken, not copied: the whole document).
    let Ok(theirs) = Description::from_value(target) else {
        return BTreeSet::new();
    };
    let defs = theirs.definitions();
    let mut out = BTreeSet::new();
    for def in crate::api::registry::kinds() {
        let (Some(mine), Some(their)) = (embedded.definition(def.kind), defs.get(def.definition))
        else {
            continue;
        };
        compare(embedded, mine, &theirs, their, "", 0, &mut |path| {
            out.insert(format!("{}.{path}", def.name));
        });
    }
    out
}

fn compare(
    mine_desc: &Description,
    mine: &Value,
    their_desc: &Description,
    their: &Value,
    path: &str,
    depth: usize,
    found: &mut dyn FnMut(&str),
) {
    if depth > 32 {
        return;
    }
    if let (Some(mine_items), Some(their_items)) =
        (items(mine_desc, mine), items(their_desc, their))
    {
        let path = format!("{path}[]");
        compare(
            mine_desc,
            mine_items,
            their_desc,
            their_items,
            &path,
            depth + 1,
            found,
        );
        return;
    }
    let (Some(mine_props), Some(their_props)) =
        (properties(mine_desc, mine), properties(their_desc, their))
    else {
        return;
    };
    for (name, their_prop) in their_props {
        let child = join(path, name);
        match mine_props.get(name) {
            None => found(&child),
            Some(mine_prop) => compare(
                mine_desc,
                mine_prop,
                their_desc,
                their_prop,
                &child,
                depth + 1,
                found,
            ),
        }
    }
}

/// The one warning of a run that met fields this cfgctl does not manage.
pub fn warning(fields: &BTreeSet<String>) -> Option<String> {
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    match names.as_slice() {
        [] => None,
        [one] => Some(format!(
            "{one}: kept as the target has it; this cfgctl does not manage it"
        )),
        many => Some(format!(
            "{}: kept as the target has them; this cfgctl does not manage them",
            many.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_holding_only_a_newer_apis_members_is_as_if_absent() {
        // A newer API's member, set by someone using it, is not managed here: the object that
        // held only it is no difference from a manifest that leaves the object out (else a
        // perpetual update). One with a described member too still compares on that member.
        use crate::plan::normalize::{digest, normalize};
        let monitor = Kind::named("Monitor");
        let same = |a: Value, b: Value| {
            let equal = normalize(monitor, &a, &[]) == normalize(monitor, &b, &[]);
            assert_eq!(
                equal,
                digest(monitor, &a) == digest(monitor, &b),
                "{a} / {b}"
            );
            equal
        };
        let base = json!({"slug": "m", "name": "M"});
        let listed = json!({"slug": "m", "name": "M", "signal_grouping": {"mode": "new"}});
        assert!(same(base.clone(), listed));
        let deeper = json!({"slug": "m", "name": "M",
            "series_conditions": {"defaults": {"critical": {"shiny": 1}}}});
        assert!(same(base.clone(), deeper));
        let described = json!({"slug": "m", "name": "M",
            "signal_grouping": {"mode": "new", "label_names": ["a"]}});
        assert!(!same(base, described));
    }

    #[test]
    fn undescribed_members_at_any_depth() {
        let object = json!({
            "slug": "m", "name": "M", "retention": "x",
            "signal_grouping": {"label_names": ["a"], "mode": "new"},
            "series_conditions": {"overrides": [{"label_matchers": [], "weight": 2}]},
            "labels": {"anything": "goes"}
        });
        let got: Vec<String> = undescribed(Kind::named("Monitor"), &object)
            .into_iter()
            .collect();
        assert_eq!(
            got,
            vec![
                "retention",
                "series_conditions.overrides[].weight",
                "signal_grouping.mode"
            ]
        );
        let mut stripped = object.clone();
        strip_undescribed(Kind::named("Monitor"), &mut stripped);
        assert_eq!(
            stripped,
            json!({
                "slug": "m", "name": "M",
                "signal_grouping": {"label_names": ["a"]},
                "series_conditions": {"overrides": [{"label_matchers": []}]},
                "labels": {"anything": "goes"}
            })
        );
    }

    #[test]
    fn carried_over_into_the_body_where_it_has_a_place() {
        let current = json!({
            "slug": "b", "name": "B", "retention_tier": "COLD",
            "labels": {"a": "1"}
        });
        let mut body = json!({"slug": "b", "name": "New"});
        carry_over(Kind::named("Bucket"), &current, &mut body);
        assert_eq!(
            body,
            json!({"slug": "b", "name": "New", "retention_tier": "COLD"})
        );
        let current = json!({"slug": "m", "name": "M", "signal_grouping": {"mode": "new"}});
        let mut without_parent = json!({"slug": "m", "name": "M"});
        carry_over(Kind::named("Monitor"), &current, &mut without_parent);
        assert_eq!(without_parent, json!({"slug": "m", "name": "M"}));
        let mut with_parent = json!({"slug": "m", "name": "M", "signal_grouping": {}});
        carry_over(Kind::named("Monitor"), &current, &mut with_parent);
        assert_eq!(with_parent["signal_grouping"], json!({"mode": "new"}));
    }

    #[test]
    fn fields_a_newer_description_adds() {
        let mut doc = crate::api::spec::swagger().clone();
        doc["definitions"]["configv1Bucket"]["properties"]["retention_tier"] =
            json!({"type": "string"});
        doc["definitions"]["MonitorSignalGrouping"]["properties"]["mode"] =
            json!({"type": "string"});
        let got: Vec<String> = described_newer(doc).into_iter().collect();
        assert_eq!(
            got,
            vec![
                "Bucket.retention_tier",
                "Monitor.signal_grouping.mode",
                "SLO.signal_grouping.mode"
            ]
        );
        assert!(described_newer(crate::api::spec::swagger().clone()).is_empty());
    }

    #[test]
    fn one_warning_names_them_all() {
        let one: BTreeSet<String> = ["Bucket.retention_tier".to_string()].into();
        assert_eq!(
            warning(&one).unwrap(),
            "Bucket.retention_tier: kept as the target has it; this cfgctl does not manage it"
        );
        let two: BTreeSet<String> = ["Bucket.a".to_string(), "Team.b".to_string()].into();
        assert_eq!(
            warning(&two).unwrap(),
            "Bucket.a, Team.b: kept as the target has them; this cfgctl does not manage them"
        );
        assert_eq!(warning(&BTreeSet::new()), None);
    }
}
