//! Normalisation and field-level diffs: what makes "no perpetual diffs" true.
//!
//! Both the manifest and the server's object go through [`normalize`] before they are
//! compared: the proto3 canonical form of the swagger (zero values and enum defaults absent,
//! int64 as strings, doubles by value), server-owned fields removed, embedded JSON parsed with
//! its volatile members and zero values removed, `ignore` paths removed, keys sorted and
//! integral numbers written as integers.

use serde_json::Value;

use crate::api::registry::{is_zero, Kind};
use crate::api::semantics::{KindSemantics, Semantics};
use crate::api::spec;
use crate::config::settings::IgnoreRule;

mod comparable;
mod digest;
mod direct;
mod embedded;
pub mod secret;

pub use digest::{fingerprint, is_fingerprint, Digest};

/// The comparable form of an object of a kind. One new tree (the manifest form), then every
/// step in place: no step copies the object again.
pub fn normalize(kind: Kind, object: &Value, ignore: &[IgnoreRule]) -> Value {
    normalize_as(kind, object, ignore, Described::Unknown)
}

/// Whether an object is known to hold only members the embedded description has
/// (`newer::undescribed` found none): then there is nothing of a newer API to strip, since
/// the manifest form's members are some of the object's. Saves a walk of every listed object.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Described {
    All,
    Unknown,
}

fn normalize_as(kind: Kind, object: &Value, ignore: &[IgnoreRule], described: Described) -> Value {
    let def = kind.def();
    let semantics = Semantics::embedded().kind(kind);
    let mut v = spec::manifest_form(kind, object);
    // Fields of a newer API than this cfgctl's are not managed here, so never a diff.
    if described == Described::Unknown {
        super::newer::strip_undescribed(kind, &mut v);
    }
    // A field left out means its documented default, as the server reads it.
    semantics.fill_defaults(&mut v);
    if let Value::Object(map) = &mut v {
        // Embedded documents have no schema: zero values go at every depth.
        for embedded in def.embedded_json {
            if map.get_mut(embedded.field).is_some_and(strip_zero) {
                map.shift_remove(embedded.field);
            }
        }
    }
    for rule in ignore.iter().filter(|r| r.kind == kind) {
        crate::util::jsonpath::remove_path(&mut v, &rule.path);
    }
    tidy(&mut v);
    semantics.sort_sets(&mut v);
    v
}

/// The digest of an object's comparable form without `ignore` rules (which the caller
/// applies by comparing in full): two objects have the same digest exactly when their
/// normalised forms are equal (the keyed hash [`Digest::of`] of the form's JSON, whose keys
/// `tidy` sorted).
pub fn digest(kind: Kind, object: &Value) -> Digest {
    digest_as(kind, object, Described::Unknown)
}

/// `a.cmp(b)`, most keys told apart by their first byte without a call to compare the rest:
/// how the comparable bytes' writers put keys in order.
#[inline(always)]
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

/// [`digest_as`] of a listed object, its members not known to be described, and the paths of
/// those the embedded description lacks (`newer::undescribed`): looked for only when the
/// writing of its comparable bytes did not vouch that there are none. Without such members
/// the form is the same whether they are known to be absent or stripped.
pub fn digest_listed(kind: Kind, object: &Value) -> (Digest, Vec<String>) {
    let (bytes, vouched) = comparable::bytes_vouched(kind, object, Described::Unknown, &[]);
    let newer: Vec<String> = match vouched {
        true => Vec::new(),
        false => super::newer::undescribed(kind, object)
            .into_iter()
            .collect(),
    };
    // The whole suite's debug runs hold the shortcut to the walk it saves.
    debug_assert!(!vouched || super::newer::undescribed(kind, object).is_empty());
    (Digest::of(&bytes), newer)
}

/// [`digest`] of an object whose members are known to be described (or not).
pub fn digest_as(kind: Kind, object: &Value, described: Described) -> Digest {
    // Written whole, then hashed in one call: the serialiser's many small writes straight
    // into the hasher cost more than the hashing.
    Digest::of(&comparable::bytes(kind, object, described, &[]))
}

/// An embedded document's comparable bytes as [`digest`] reads them from its text (volatile
/// members removed, zero values stripped, keys sorted): `Some(None)` when nothing is left of
/// it, `None` when the reader does not take the text on. A lean load's check reads each
/// document with it (`manifest::Lean`) and hands the bytes to [`digest_prepared`]: a plan
/// reads a manifest's document once, not once to check it and once to digest it.
pub fn read_document(
    text: &str,
    volatile: &[crate::api::registry::Volatile],
) -> Option<Option<Vec<u8>>> {
    embedded::comparable(text, volatile)
}

/// [`digest`], with the comparable bytes of some embedded documents read already
/// ([`read_document`] of the text `object` holds at each field): the same digest.
pub fn digest_prepared(kind: Kind, object: &Value, prepared: &[Prepared]) -> Digest {
    Digest::of(&comparable::bytes(
        kind,
        object,
        Described::Unknown,
        prepared,
    ))
}

/// An embedded document's field and its [`read_document`] bytes (one type with the lean load's).
pub use crate::manifest::Prepared;

/// Drops zero values recursively, in place (inside embedded documents, which have no schema);
/// true when the value is zero afterwards. A list keeps its members, each stripped unless
/// stripping would leave it zero (then it stays as written).
fn strip_zero(value: &mut Value) -> bool {
    match value {
        Value::Object(map) => map.retain(|_, v| !strip_zero(v)),
        Value::Array(items) => {
            for item in items.iter_mut() {
                if !zero_when_stripped(item) {
                    strip_zero(item);
                }
            }
        }
        _ => {}
    }
    is_zero(value)
}

/// Whether [`strip_zero`] would leave the value zero (without changing it).
fn zero_when_stripped(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.values().all(zero_when_stripped),
        other => is_zero(other),
    }
}

/// Keys sorted, integral numbers as integers (`50.0` = `50`), in place.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        Value::Number(n) => {
            if let (None, None, Some(f)) = (n.as_i64(), n.as_u64(), n.as_f64()) {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    *value = Value::from(f as i64);
                }
            }
        }
        _ => {}
    }
}

/// One changed field: dotted path with indices; `None` for absent.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Field-level differences between two normalised objects. Objects are compared member by
/// member, sets by members (`user_emails[]` added or removed), other lists of equal length
/// element by element (else as a whole), the kind's embedded documents as a whole.
pub fn diff(kind: Kind, before: &Value, after: &Value) -> Vec<FieldChange> {
    let leaves: Vec<&str> = kind.def().embedded_json.iter().map(|e| e.field).collect();
    let rules = Rules {
        leaves: &leaves,
        semantics: Semantics::embedded().kind(kind),
    };
    let mut out = Vec::new();
    walk(&rules, "", Some(before), Some(after), &mut out);
    out
}

/// A set's members: none when absent, `None` when it is not a list.
fn members(v: Option<&Value>) -> Option<&[Value]> {
    match v {
        None => Some(&[]),
        Some(Value::Array(items)) => Some(items),
        Some(_) => None,
    }
}

/// What `walk` needs to know about the kind.
struct Rules<'a> {
    leaves: &'a [&'a str],
    semantics: &'a KindSemantics,
}

/// A set's members removed (in the order of `before`), then added (in the order of `after`).
fn set_members(path: &str, before: &[Value], after: &[Value], out: &mut Vec<FieldChange>) {
    let member = format!("{path}[]");
    for gone in before.iter().filter(|v| !after.contains(v)) {
        out.push(FieldChange {
            path: member.clone(),
            before: Some(gone.clone()),
            after: None,
        });
    }
    for new in after.iter().filter(|v| !before.contains(v)) {
        out.push(FieldChange {
            path: member.clone(),
            before: None,
            after: Some(new.clone()),
        });
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn walk(
    rules: &Rules,
    path: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    out: &mut Vec<FieldChange>,
) {
    if before == after {
        return;
    }
    let is_leaf = rules.leaves.contains(&path);
    if rules.semantics.is_set(path) {
        if let (Some(b), Some(a)) = (members(before), members(after)) {
            set_members(path, b, a, out);
            return;
        }
    }
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) if !is_leaf => {
            let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for k in keys {
                walk(rules, &join(path, k), b.get(k), a.get(k), out);
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if b.len() == a.len() && !is_leaf => {
            for (i, (x, y)) in b.iter().zip(a).enumerate() {
                walk(rules, &format!("{path}[{i}]"), Some(x), Some(y), out);
            }
        }
        _ => out.push(FieldChange {
            path: path.to_string(),
            before: before.cloned(),
            after: after.cloned(),
        }),
    }
}

/// Each top-level field of an object as added (creates) or removed.
pub fn all_fields(object: &Value, added: bool) -> Vec<FieldChange> {
    let Some(map) = object.as_object() else {
        return vec![];
    };
    map.iter()
        .map(|(k, v)| FieldChange {
            path: k.clone(),
            before: (!added).then(|| v.clone()),
            after: added.then(|| v.clone()),
        })
        .collect()
}

/// The fields of a manifest as written, for a create's display: top-level fields, embedded
/// documents parsed so they show as JSON rather than as one long string.
pub fn written_fields(kind: Kind, spec: &Value) -> Vec<FieldChange> {
    let mut spec = spec.clone();
    if let Value::Object(map) = &mut spec {
        for e in kind.def().embedded_json {
            if let Some(Value::String(text)) = map.get(e.field) {
                if let Ok(doc) = serde_json::from_str::<Value>(text) {
                    map.insert(e.field.to_string(), doc);
                }
            }
        }
    }
    all_fields(&spec, true)
}

/// A field as shown: an embedded document still held as its JSON text (a create's fields keep
/// it so, rather than a parsed copy of every document for the whole plan) is parsed here, for
/// the text, Markdown and JSON plans alike. Secret fields are masked (`secrets::mask`).
pub fn displayed(kind: Kind, f: &FieldChange) -> std::borrow::Cow<'_, FieldChange> {
    let parse = |v: &Option<Value>| match v {
        Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok(),
        _ => None,
    };
    // A secret field is never shown (its reference neither: `(sensitive)`).
    if let Some(masked) = secret::mask(kind, f) {
        return std::borrow::Cow::Owned(masked);
    }
    if !kind.def().embedded_json.iter().any(|e| e.field == f.path) {
        return std::borrow::Cow::Borrowed(f);
    }
    match (parse(&f.before), parse(&f.after)) {
        (None, None) => std::borrow::Cow::Borrowed(f),
        (before, after) => std::borrow::Cow::Owned(FieldChange {
            path: f.path.clone(),
            before: before.or_else(|| f.before.clone()),
            after: after.or_else(|| f.after.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Equal normalised forms, checked to agree with equal digests (every test of this module
    /// checks the digests too).
    fn same(kind: Kind, a: Value, b: Value) -> bool {
        let equal = normalize(kind, &a, &[]) == normalize(kind, &b, &[]);
        assert_eq!(equal, digest(kind, &a) == digest(kind, &b), "{a} / {b}");
        equal
    }

    #[test]
    fn digests_ignore_key_order_and_integral_floats() {
        let a = json!({"slug": "b", "name": "B", "labels": {"x": "1", "a": "2"}});
        let b = json!({"labels": {"a": "2", "x": "1"}, "name": "B", "slug": "b"});
        assert_eq!(
            digest(Kind::named("Bucket"), &a),
            digest(Kind::named("Bucket"), &b)
        );
        assert!(same(
            Kind::named("Dashboard"),
            json!({"slug": "d", "name": "D", "dashboard_json": "{\"w\": 50.0, \"k\": [1]}"}),
            json!({"slug": "d", "name": "D", "dashboard_json": "{\"k\": [1], \"w\": 50}"})
        ));
        assert!(!same(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B"}),
            json!({"slug": "b", "name": "C"})
        ));
    }

    #[test]
    fn embedded_zero_values_go_at_every_depth_but_list_members_stay() {
        let mut v =
            json!({"a": [{"x": 0}, {"x": 1, "y": ""}, 0, []], "b": {"c": {"d": false}}, "e": 2});
        assert!(!strip_zero(&mut v));
        assert_eq!(v, json!({"a": [{"x": 0}, {"x": 1}, 0, []], "e": 2}));
        let mut zero = json!({"a": {"b": [], "c": null}});
        assert!(strip_zero(&mut zero));
    }

    #[test]
    fn server_owned_fields_are_ignored() {
        assert!(same(
            Kind::named("Team"),
            json!({"slug": "t", "name": "T"}),
            json!({"slug": "t", "name": "T", "created_at": "2026-01-01T00:00:00Z", "updated_at": "x"})
        ));
    }

    #[test]
    fn zero_values_are_absent() {
        assert!(same(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "description": "", "labels": {}}),
            json!({"slug": "b", "name": "B"})
        ));
        assert!(same(
            Kind::named("DropRule"),
            json!({"slug": "d", "name": "D", "mode": "ENABLED", "drop_nan_value": false, "filters": []}),
            json!({"slug": "d", "name": "D"})
        ));
        assert!(!same(
            Kind::named("DropRule"),
            json!({"slug": "d", "name": "D", "mode": "PREVIEW"}),
            json!({"slug": "d", "name": "D"})
        ));
    }

    #[test]
    fn numbers_by_value_and_int64_strings() {
        assert!(same(
            Kind::named("DropRule"),
            json!({"slug": "d", "name": "D", "conditional_rate_based_drop": {"enabled": true, "rate_limit_threshold": 50}}),
            json!({"slug": "d", "name": "D", "conditional_rate_based_drop": {"enabled": true, "rate_limit_threshold": 50.0}})
        ));
        assert!(same(
            Kind::named("ConsumptionBudget"),
            json!({"slug": "c", "name": "C", "thresholds": [{"volume": {"fixed_value": 1000}}]}),
            json!({"slug": "c", "name": "C", "thresholds": [{"volume": {"fixed_value": "1000"}}]})
        ));
    }

    #[test]
    fn map_key_order_does_not_matter() {
        let a = normalize(
            Kind::named("Bucket"),
            &json!({"slug": "b", "name": "B", "labels": {"x": "1", "a": "2"}}),
            &[],
        );
        let b = normalize(
            Kind::named("Bucket"),
            &json!({"labels": {"a": "2", "x": "1"}, "name": "B", "slug": "b"}),
            &[],
        );
        assert_eq!(a.to_string(), b.to_string());
    }

    #[test]
    fn embedded_json_compared_as_json_without_volatile_members() {
        let mine = json!({"slug": "c", "name": "C", "dashboard_json": "{\"title\": \"T\", \"panels\": [], \"tags\": [\"a\"]}"});
        let server = json!({"slug": "c", "name": "C", "dashboard_json": "{\"id\":42,\"tags\":[\"a\"],\"title\":\"T\",\"version\":3}"});
        assert!(same(Kind::named("ClassicDashboard"), mine, server));
        let dash = json!({"slug": "d", "name": "D", "dashboard_json": "{\"kind\":\"Dashboard\",\"metadata\":{\"name\":\"d\"}}"});
        let served = json!({"slug": "d", "name": "D", "dashboard_json": "{\"kind\":\"Dashboard\",\"metadata\":{\"created_at\":\"x\",\"name\":\"d\",\"updated_at\":\"y\",\"version\":2}}"});
        assert!(same(Kind::named("Dashboard"), dash, served));
        // A real change inside is still a change.
        let changed = json!({"slug": "c", "name": "C", "dashboard_json": "{\"title\": \"Other\"}"});
        assert!(!same(
            Kind::named("ClassicDashboard"),
            changed,
            json!({"slug": "c", "name": "C", "dashboard_json": "{\"title\": \"T\"}"})
        ));
    }

    #[test]
    fn ignore_rules_skip_fields() {
        let rules = vec![IgnoreRule {
            kind: Kind::named("Monitor"),
            path: "labels.generated_by".into(),
        }];
        let a = normalize(
            Kind::named("Monitor"),
            &json!({"slug": "m", "name": "M", "labels": {"generated_by": "x", "team": "a"}}),
            &rules,
        );
        let b = normalize(
            Kind::named("Monitor"),
            &json!({"slug": "m", "name": "M", "labels": {"team": "a"}}),
            &rules,
        );
        assert_eq!(a, b);
    }

    #[test]
    fn diffs_are_field_level() {
        let before = normalize(
            Kind::named("Bucket"),
            &json!({"slug": "b", "name": "B", "description": "old", "labels": {"team": "a", "gone": "x"}}),
            &[],
        );
        let after = normalize(
            Kind::named("Bucket"),
            &json!({"slug": "b", "name": "B", "description": "new", "labels": {"team": "a", "tier": "1"}}),
            &[],
        );
        let changes = diff(Kind::named("Bucket"), &before, &after);
        let got: Vec<(String, Option<Value>, Option<Value>)> = changes
            .into_iter()
            .map(|c| (c.path, c.before, c.after))
            .collect();
        assert_eq!(
            got,
            vec![
                ("description".into(), Some(json!("old")), Some(json!("new"))),
                ("labels.gone".into(), Some(json!("x")), None),
                ("labels.tier".into(), None, Some(json!("1"))),
            ]
        );
    }

    #[test]
    fn diffs_index_into_lists_and_stop_at_embedded_documents() {
        let k = Kind::named("ConsumptionBudget");
        let a = normalize(
            k,
            &json!({"slug": "c", "name": "C", "thresholds": [{"volume": {"fixed_value": "1"}}]}),
            &[],
        );
        let b = normalize(
            k,
            &json!({"slug": "c", "name": "C", "thresholds": [{"volume": {"fixed_value": "2"}}]}),
            &[],
        );
        assert_eq!(diff(k, &a, &b)[0].path, "thresholds[0].volume.fixed_value");
        let k = Kind::named("Dashboard");
        let a = normalize(
            k,
            &json!({"slug": "d", "name": "D", "dashboard_json": "{\"a\": {\"b\": 1}}"}),
            &[],
        );
        let b = normalize(
            k,
            &json!({"slug": "d", "name": "D", "dashboard_json": "{\"a\": {\"b\": 2}}"}),
            &[],
        );
        let d = diff(k, &a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "dashboard_json");
        assert_eq!(d[0].after, Some(json!({"a": {"b": 2}})));
    }

    #[test]
    fn fingerprints_follow_content_not_format() {
        let a = fingerprint(
            Kind::named("Team"),
            &json!({"slug": "t", "name": "T", "updated_at": "1"}),
        );
        let b = fingerprint(
            Kind::named("Team"),
            &json!({"name": "T", "slug": "t", "updated_at": "2"}),
        );
        let c = fingerprint(Kind::named("Team"), &json!({"slug": "t", "name": "U"}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(is_fingerprint(&a) && !is_fingerprint(&a[..16]), "{a}");
    }
}
