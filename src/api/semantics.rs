//! What the API description says about fields in prose, as data: documented defaults
//! ("Default: `60s`", "If not set, then `priority=10`") and sets ("Unordered set of ...",
//! "Set of ..."). Derived from a swagger document's field descriptions, with the registry's
//! `field_notes` column on top (a default or set the prose does not state in a readable form,
//! or an array that reads like a set but is ordered).
//!
//! The planner's normalisation (embedded description) and the emulator (the description it
//! serves) use the same derivation, so the two cannot disagree on what a default or a set is.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::api::registry::{is_zero, FieldNote, Kind};
use crate::api::spec::Description;

/// A documented default: the dotted path (`[]` marks every element of an array) and the value
/// a server uses when a write leaves the field out.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDefault {
    pub path: String,
    pub value: Value,
}

/// The defaults and sets of one kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindSemantics {
    /// Non-zero documented defaults (a zero default is the proto3 absence already).
    pub defaults: Vec<FieldDefault>,
    /// Paths of arrays compared without order.
    pub sets: Vec<String>,
}

/// The defaults and sets of every kind of one API description.
#[derive(Clone, Debug)]
pub struct Semantics {
    kinds: Vec<KindSemantics>,
}

impl Semantics {
    /// Derives every kind's semantics from a description and the registry's notes.
    pub fn derive(desc: &Description) -> Semantics {
        // By index: every kind registered has one (indices are 0, 1, ...).
        let mut defs = crate::api::registry::kinds();
        defs.sort_by_key(|d| d.kind.index());
        Semantics {
            kinds: defs
                .into_iter()
                .map(|d| derive_kind(desc, d.kind, d.field_notes))
                .collect(),
        }
    }

    /// The semantics of the embedded description (what the planner compares with).
    pub fn embedded() -> &'static Semantics {
        static EMBEDDED: OnceLock<Semantics> = OnceLock::new();
        EMBEDDED.get_or_init(|| Semantics::derive(Description::embedded()))
    }

    pub fn kind(&self, kind: Kind) -> &KindSemantics {
        // `derive` makes one entry per kind registered then, by index; a kind registered
        // later (a newer target's) has no documented defaults or sets.
        static NONE: OnceLock<KindSemantics> = OnceLock::new();
        self.kinds
            .get(kind.index())
            .unwrap_or_else(|| NONE.get_or_init(KindSemantics::default))
    }
}

/// Derives one kind's defaults and sets from its definition, then applies the notes.
pub fn derive_kind(desc: &Description, kind: Kind, notes: &[FieldNote]) -> KindSemantics {
    let mut found = Found::default();
    if let Some(def) = desc.definition(kind) {
        let mut stack = Vec::new();
        walk(desc, def, "", &mut stack, &mut found);
    }
    let mut out = KindSemantics {
        defaults: found
            .defaults
            .into_iter()
            .filter(|d| !is_zero(&d.value))
            .collect(),
        sets: found.sets,
    };
    for note in notes {
        match *note {
            FieldNote::Default(path, literal) => {
                let Ok(value) = serde_json::from_str::<Value>(literal) else {
                    continue;
                };
                out.defaults.retain(|d| d.path != path);
                if !is_zero(&value) {
                    out.defaults.push(FieldDefault {
                        path: path.to_string(),
                        value,
                    });
                }
            }
            FieldNote::Set(path) => {
                if !out.sets.iter().any(|s| s == path) {
                    out.sets.push(path.to_string());
                }
            }
            FieldNote::Ordered(path) => out.sets.retain(|s| s != path),
        }
    }
    out.defaults.sort_by(|a, b| a.path.cmp(&b.path));
    out.sets.sort();
    out
}

/// Every default a description documents, zero ones included (for tests and docs).
#[derive(Debug, Default)]
struct Found {
    defaults: Vec<FieldDefault>,
    sets: Vec<String>,
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Walks a schema's properties; `stack` holds the definitions being walked (recursion guard).
fn walk<'a>(
    desc: &'a Description,
    schema: &'a Value,
    prefix: &str,
    stack: &mut Vec<&'a str>,
    out: &mut Found,
) {
    let reference = schema.get("$ref").and_then(Value::as_str);
    if let Some(r) = reference {
        if stack.contains(&r) || stack.len() > 32 {
            return;
        }
        stack.push(r);
    }
    let resolved = desc.resolve(schema);
    if let Some(props) = resolved.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let path = join(prefix, name);
            let target = desc.resolve(prop);
            let description = prop
                .get("description")
                .or_else(|| target.get("description"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if let Some(value) = documented_default(name, target, description) {
                out.defaults.push(FieldDefault {
                    path: path.clone(),
                    value,
                });
            }
            if target.get("type").and_then(Value::as_str) == Some("array") {
                if describes_set(description) {
                    out.sets.push(path.clone());
                }
                if let Some(items) = target.get("items") {
                    walk(desc, items, &format!("{path}[]"), stack, out);
                }
            } else {
                walk(desc, prop, &path, stack, out);
            }
        }
    }
    if reference.is_some() {
        stack.pop();
    }
}

/// "Unordered set of ...", "Set of ...": the array's order means nothing.
pub fn describes_set(description: &str) -> bool {
    let d = description.trim_start();
    d.starts_with("Unordered set of") || d.starts_with("Set of") || d.starts_with("A set of")
}

/// The text between backticks right after `marker`.
fn quoted_after<'a>(description: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &description[description.find(marker)? + marker.len()..];
    let rest = rest.strip_prefix('`')?;
    Some(&rest[..rest.find('`')?])
}

/// The word right after `marker` (`Defaults to false (...)` → `false`).
fn word_after<'a>(description: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &description[description.find(marker)? + marker.len()..];
    let word = rest.split_whitespace().next()?;
    Some(word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
}

/// The default a field's description documents, typed by its schema: "Default: `60s`",
/// "If not set, then `priority=10`", "Defaults to false", "By default, the sustain is 0".
pub fn documented_default(name: &str, schema: &Value, description: &str) -> Option<Value> {
    let text = quoted_after(description, "Default: ")
        .or_else(|| quoted_after(description, "If not set, then "))
        .or_else(|| quoted_after(description, "Defaults to "))
        .or_else(|| word_after(description, "Defaults to "))
        .or_else(|| {
            // "By default, the <noun> is <value>": the noun is one word.
            let rest = &description[description.find("By default, the ")? + 16..];
            let mut words = rest.splitn(3, ' ');
            let (_noun, is) = (words.next()?, words.next()?);
            (is == "is").then_some(())?;
            word_after(rest, " is ")
        })?;
    // `priority=10` names the field: the value is after `=`.
    let text = text.rsplit('=').next().unwrap_or(text).trim();
    literal(name, schema, text)
}

/// A description's literal as a value of the field's type; `None` when it does not fit.
fn literal(name: &str, schema: &Value, text: &str) -> Option<Value> {
    let ty = schema.get("type").and_then(Value::as_str)?;
    let format = schema.get("format").and_then(Value::as_str);
    let integer = |t: &str| -> Option<i64> {
        // A duration in seconds may carry its unit: `60s` for `interval_secs`.
        let t = if name.ends_with("_secs") {
            t.strip_suffix('s').unwrap_or(t)
        } else {
            t
        };
        t.parse::<i64>().ok()
    };
    match ty {
        "integer" => integer(text).map(Value::from),
        "string" if matches!(format, Some("int64" | "uint64")) => {
            integer(text).map(|n| Value::String(n.to_string()))
        }
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "boolean" => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "string" => match schema.get("enum").and_then(Value::as_array) {
            Some(values) => values
                .iter()
                .any(|v| v.as_str() == Some(text))
                .then(|| Value::String(text.to_string())),
            None => Some(Value::String(text.to_string())),
        },
        _ => None,
    }
}

/// Calls `f` with the parent object of the path's last segment, for every place the path
/// reaches (`[]` fans out over an array's elements).
fn at_parents(
    value: &mut Value,
    segments: &[&str],
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    let Some((first, rest)) = segments.split_first() else {
        return;
    };
    let Value::Object(map) = value else { return };
    if rest.is_empty() {
        f(map, first);
        return;
    }
    let (name, fan_out) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    let Some(child) = map.get_mut(name) else {
        return;
    };
    if fan_out {
        if let Value::Array(items) = child {
            for item in items {
                at_parents(item, rest, f);
            }
        }
    } else {
        at_parents(child, rest, f);
    }
}

/// The order a set is kept in: strings by text, anything else by its JSON text.
fn set_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Sorts and deduplicates a set's members.
pub fn sort_set(items: &mut Vec<Value>) {
    items.sort_by_cached_key(set_key);
    items.dedup();
}

impl KindSemantics {
    /// Puts each documented default where the object leaves the field out (or gives its zero
    /// value, which proto3 reads as unset), wherever the field's parent object exists.
    pub fn fill_defaults(&self, object: &mut Value) {
        for d in &self.defaults {
            let segments: Vec<&str> = d.path.split('.').collect();
            at_parents(object, &segments, &mut |map, name| {
                if map.get(name).is_none_or(is_zero) {
                    map.insert(name.to_string(), d.value.clone());
                }
            });
        }
    }

    /// Whether a default or a set lies in the top-level field `name` (or is it).
    pub fn reaches(&self, name: &str) -> bool {
        let top = |path: &str| {
            let first = path.split('.').next().unwrap_or(path);
            first.strip_suffix("[]").unwrap_or(first) == name
        };
        self.defaults.iter().any(|d| top(&d.path)) || self.sets.iter().any(|s| top(s))
    }

    /// Sorts (and deduplicates) every set the object holds.
    pub fn sort_sets(&self, object: &mut Value) {
        for path in &self.sets {
            let segments: Vec<&str> = path.split('.').collect();
            at_parents(object, &segments, &mut |map, name| {
                if let Some(Value::Array(items)) = map.get_mut(name) {
                    sort_set(items);
                }
            });
        }
    }

    /// Whether a path with indices (`series_conditions.overrides[2].label_matchers`) is a set.
    pub fn is_set(&self, indexed_path: &str) -> bool {
        let pattern = without_indices(indexed_path);
        self.sets.contains(&pattern)
    }
}

/// `a[2].b[0].c` → `a[].b[].c`.
pub fn without_indices(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(kind: Kind) -> Found {
        let mut f = Found::default();
        let desc = Description::embedded();
        let mut stack = Vec::new();
        walk(desc, desc.definition(kind).unwrap(), "", &mut stack, &mut f);
        f
    }

    #[test]
    fn every_documented_default_of_the_embedded_description() {
        let mut all: Vec<(String, String, Value)> = Vec::new();
        for def in crate::api::registry::embedded_kinds() {
            for d in found(def.kind).defaults {
                all.push((def.name.to_string(), d.path, d.value));
            }
        }
        all.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let row = |k: &str, p: &str, v: Value| (k.to_string(), p.to_string(), v);
        let resolves = "destinations[].disable_resolves";
        assert_eq!(
            all,
            vec![
                row(
                    "ConsumptionBudget",
                    "alert_action_config.instant_rate_sustain_secs",
                    json!(0)
                ),
                row("ConsumptionBudget", "default_priority", json!(10)),
                row("Monitor", "interval_secs", json!(60)),
                row(
                    "NotificationPolicy",
                    &format!("routes.defaults.critical.{resolves}"),
                    json!(false)
                ),
                row(
                    "NotificationPolicy",
                    &format!("routes.defaults.warn.{resolves}"),
                    json!(false)
                ),
                row(
                    "NotificationPolicy",
                    &format!("routes.overrides[].notifiers.critical.{resolves}"),
                    json!(false)
                ),
                row(
                    "NotificationPolicy",
                    &format!("routes.overrides[].notifiers.warn.{resolves}"),
                    json!(false)
                ),
                // Kinds of the whole API.
                row("RecordingRule", "interval_secs", json!(60)),
                row("RollupRule", "drop_raw", json!(false)),
            ]
        );
        // Only the non-zero ones are kept: zero is the proto3 absence already.
        let s = Semantics::embedded();
        assert_eq!(
            s.kind(Kind::named("Monitor")).defaults,
            vec![FieldDefault {
                path: "interval_secs".into(),
                value: json!(60)
            }]
        );
        assert_eq!(
            s.kind(Kind::named("ConsumptionBudget")).defaults,
            vec![FieldDefault {
                path: "default_priority".into(),
                value: json!(10)
            }]
        );
        assert_eq!(
            s.kind(Kind::named("RecordingRule")).defaults,
            vec![FieldDefault {
                path: "interval_secs".into(),
                value: json!(60)
            }]
        );
        let with_defaults = ["Monitor", "ConsumptionBudget", "RecordingRule"].map(Kind::named);
        for def in crate::api::registry::embedded_kinds() {
            if !with_defaults.contains(&def.kind) {
                assert_eq!(s.kind(def.kind).defaults, vec![], "{}", def.name);
            }
        }
    }

    #[test]
    fn sets_of_the_embedded_description() {
        let s = Semantics::embedded();
        assert_eq!(s.kind(Kind::named("Team")).sets, vec!["user_emails"]);
        assert_eq!(
            s.kind(Kind::named("Monitor")).sets,
            vec![
                "series_conditions.overrides[].label_matchers",
                "signal_grouping.label_names"
            ]
        );
        assert_eq!(
            s.kind(Kind::named("NotificationPolicy")).sets,
            vec![
                "routes.defaults.critical.group_by.label_names",
                "routes.defaults.warn.group_by.label_names",
                "routes.overrides[].notifiers.critical.group_by.label_names",
                "routes.overrides[].notifiers.warn.group_by.label_names"
            ]
        );
        assert_eq!(s.kind(Kind::named("Bucket")).sets, Vec::<String>::new());
    }

    #[test]
    fn default_phrasings() {
        let int = json!({"type": "integer", "format": "int32"});
        assert_eq!(
            documented_default("interval_secs", &int, "How often. Default: `60s`."),
            Some(json!(60))
        );
        assert_eq!(
            documented_default("p", &int, "If not set, then `priority=10` (dropped first)"),
            Some(json!(10))
        );
        assert_eq!(
            documented_default("b", &json!({"type": "boolean"}), "Defaults to false (x)."),
            Some(json!(false))
        );
        assert_eq!(
            documented_default("s", &int, "By default, the sustain is 0: any"),
            Some(json!(0))
        );
        // Prose that mentions a default without stating one.
        assert_eq!(
            documented_default(
                "annotations",
                &json!({"type": "object"}),
                "By default, the monitors already contain \"description\""
            ),
            None
        );
        // A value that does not fit the type is not a default.
        assert_eq!(documented_default("n", &int, "Default: `soon`"), None);
        let e = json!({"type": "string", "enum": ["A", "B"]});
        assert_eq!(
            documented_default("e", &e, "Default: `B`"),
            Some(json!("B"))
        );
        assert_eq!(documented_default("e", &e, "Default: `C`"), None);
    }

    #[test]
    fn registry_notes_add_replace_and_remove() {
        let desc = Description::embedded();
        let notes = [
            FieldNote::Default("interval_secs", "30"),
            FieldNote::Default("name", "\"unnamed\""),
            FieldNote::Set("labels"),
            FieldNote::Ordered("signal_grouping.label_names"),
        ];
        let k = derive_kind(desc, Kind::named("Monitor"), &notes);
        assert_eq!(
            k.defaults,
            vec![
                FieldDefault {
                    path: "interval_secs".into(),
                    value: json!(30)
                },
                FieldDefault {
                    path: "name".into(),
                    value: json!("unnamed")
                },
            ]
        );
        assert_eq!(
            k.sets,
            vec!["labels", "series_conditions.overrides[].label_matchers"]
        );
    }

    #[test]
    fn fill_defaults_where_the_parent_exists() {
        let k = KindSemantics {
            defaults: vec![
                FieldDefault {
                    path: "top".into(),
                    value: json!(60),
                },
                FieldDefault {
                    path: "items[].n".into(),
                    value: json!(10),
                },
                FieldDefault {
                    path: "sub.x".into(),
                    value: json!(true),
                },
            ],
            sets: vec![],
        };
        let mut v = json!({"items": [{}, {"n": 3}, {"n": 0}]});
        k.fill_defaults(&mut v);
        assert_eq!(
            v,
            json!({"items": [{"n": 10}, {"n": 3}, {"n": 10}], "top": 60})
        );
        let mut v = json!({"top": 5, "sub": {}});
        k.fill_defaults(&mut v);
        assert_eq!(v, json!({"top": 5, "sub": {"x": true}}));
    }

    #[test]
    fn sets_sorted_and_deduplicated_at_any_depth() {
        let s = Semantics::embedded();
        let mut v = json!({
            "signal_grouping": {"label_names": ["zone", "app", "zone"]},
            "series_conditions": {"overrides": [
                {"label_matchers": [{"name": "b", "value": "1"}, {"name": "a", "value": "2"}]}
            ]}
        });
        s.kind(Kind::named("Monitor")).sort_sets(&mut v);
        assert_eq!(v["signal_grouping"]["label_names"], json!(["app", "zone"]));
        assert_eq!(
            v["series_conditions"]["overrides"][0]["label_matchers"][0]["name"],
            "a"
        );
        assert!(s
            .kind(Kind::named("Monitor"))
            .is_set("series_conditions.overrides[3].label_matchers"));
        assert!(!s.kind(Kind::named("Monitor")).is_set("labels"));
    }
}
