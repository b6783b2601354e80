//! The comparable bytes of an object written straight from it, with no tree between.
//!
//! [`normalize`](super::normalize) builds the proto3 canonical form as a new tree
//! (`spec::manifest_form`), removes fields from it, sorts its keys (`tidy`) and the digest
//! then serialises it: three walks, a hash-map insert per member and a tree to free, for every
//! listed object and every manifest of a plan. [`comparable_vouched`] walks the object once
//! beside its schema and writes the same bytes: each value in its canonical form, the members
//! of each object in key order, zero values left out as the canonical form leaves them out.
//!
//! A kind's sets are put in order where they are written and its top-level documented
//! defaults filled in. It is a shortcut to the same bytes, never another form: an object whose
//! comparison needs more (a default below the top level, a set inside another, a member of a
//! newer API where the slow way strips it, a kind without a definition) answers `None`, and the
//! caller normalises the slow way. A property test holds the two to byte equality.

use serde_json::{Number, Value};

use super::Described;
use crate::api::registry::{is_zero, Kind};
use crate::api::semantics::Semantics;
use crate::api::spec::{schema_member, Description};

/// Nesting this writer takes on; deeper objects go the slow way.
const MAX_DEPTH: usize = 64;

/// The bytes `serde_json::to_vec(&normalize_as(kind, object, &[], described))` writes, where
/// the top-level members named in `apart` are left out of `object` and written instead as the
/// bytes given with them (each already in comparable form; one that is absent there is absent
/// here), and whether the writing met every member of the object beside its schema and none
/// the schema lacks: then `newer::undescribed` finds nothing in it (its walk goes where the
/// writing goes, or less far: it stops below maps and at depth 32). `None` when this way does
/// not take the object on.
pub(super) fn comparable_vouched(
    kind: Kind,
    object: &Value,
    described: Described,
    apart: &[(&str, &[u8])],
    left_out: &[&str],
) -> Option<(Vec<u8>, bool)> {
    let Value::Object(map) = object else {
        return None;
    };
    let desc = Description::for_kind(kind);
    // Not known to hold only described members: the slow way strips what the embedded
    // description lacks (`newer::strip_undescribed`), so this way gives up wherever that would
    // find something, and takes on only a kind the embedded description defines.
    let strict = described == Described::Unknown;
    if strict && !std::ptr::eq(desc, Description::embedded()) {
        return None;
    }
    let def = kind.def();
    let semantics = Semantics::embedded().kind(kind);
    // Sets are put in order where they are written, each on its own: not one inside another.
    let nested = |s: &String| {
        semantics
            .sets
            .iter()
            .any(|o| o != s && o.starts_with(s.as_str()))
    };
    if semantics
        .sets
        .iter()
        .any(|s| s.contains("[][]") || nested(s))
    {
        return None;
    }
    let schema = desc.resolve(desc.definition(kind)?);
    let props = schema_member(schema, "properties")?.as_object()?;
    let mut members: Vec<(&str, Member)> = Vec::with_capacity(map.len() + apart.len());
    // A top-level default fills its member wherever that is absent or zero; a default further
    // down is not taken on.
    // Left out and server-owned members are gone before the defaults are filled in.
    let gone = |name: &str| left_out.contains(&name) || def.server_owned.contains(&name);
    for d in &semantics.defaults {
        if d.path.contains('.') {
            if map.contains_key(top(&d.path)) {
                return None;
            }
        } else if apart.iter().any(|(name, _)| *name == d.path) {
            return None;
        } else if !map.contains_key(&d.path) || gone(&d.path) {
            members.push((&d.path, Member::Default(&d.value)));
        }
    }
    // A member left out or owned by the server is not written, but looked for all the same.
    let mut met_undescribed = map
        .keys()
        .any(|name| gone(name) && !props.contains_key(name));
    for (name, value) in map {
        let name = name.as_str();
        if gone(name) {
            continue;
        }
        let default = semantics.defaults.iter().find(|d| d.path == name);
        let member = match (props.get(name), default) {
            (Some(prop), None) => Member::Described(prop, value),
            (Some(prop), Some(d)) => Member::Defaulted(prop, value, &d.value),
            (None, None) => {
                met_undescribed = true;
                Member::AsIs(value)
            }
            (None, Some(_)) => return None,
        };
        members.push((name, member));
    }
    for &(name, bytes) in apart {
        members.push((name, Member::Bytes(bytes)));
    }
    let mut writer = Writer {
        desc,
        strict,
        sets: &semantics.sets,
        path: String::new(),
        tracked: !semantics.sets.is_empty(),
        out: Vec::with_capacity(256 + apart.iter().map(|a| a.1.len()).sum::<usize>()),
        met_undescribed,
    };
    writer.members(members, 0)?;
    Some((writer.out, !writer.met_undescribed))
}

/// A dotted path's first member (`a[].b` → `a`).
fn top(path: &str) -> &str {
    let first = path.split('.').next().unwrap_or(path);
    first.strip_suffix("[]").unwrap_or(first)
}

/// A member of an object as it is written: by its schema, as it is, or as bytes written
/// already.
enum Member<'a> {
    Described(&'a Value, &'a Value),
    /// Described, with the documented default written where it is zero.
    Defaulted(&'a Value, &'a Value, &'a Value),
    /// An absent member's documented default.
    Default(&'a Value),
    AsIs(&'a Value),
    Bytes(&'a [u8]),
}

struct Writer<'a> {
    desc: &'a Description,
    /// Give up on a member the embedded description lacks (see [`comparable_vouched`]).
    strict: bool,
    /// The kind's sets (`KindSemantics::sets`), and the dotted path of what is being written
    /// while one of them may lie below it (`tracked`).
    sets: &'a [String],
    path: String,
    tracked: bool,
    out: Vec<u8>,
    /// A member the schema lacks was written (see [`comparable_vouched`]).
    met_undescribed: bool,
}

impl<'a> Writer<'a> {
    /// An object of `members` (any order; a key once), in key order, its zero members left
    /// out; true when none is left.
    fn members(&mut self, mut members: Vec<(&str, Member<'a>)>, depth: usize) -> Option<bool> {
        members.sort_unstable_by(|a, b| super::key_order(a.0, b.0));
        self.out.push(b'{');
        let mut empty = true;
        for (name, member) in members {
            let start = self.out.len();
            if !empty {
                self.out.push(b',');
            }
            self.string(name);
            self.out.push(b':');
            let mark = self.enter(name);
            let from = self.out.len();
            let zero = match member {
                Member::Described(schema, value) => self.value(schema, value, depth + 1)?,
                Member::Defaulted(schema, value, default) => {
                    if self.value(schema, value, depth + 1)? {
                        self.out.truncate(from);
                        self.as_is(default, depth + 1)?;
                    }
                    false
                }
                Member::Default(default) => {
                    self.as_is(default, depth + 1)?;
                    false
                }
                // The canonical form keeps a member its schema lacks unless it is zero.
                Member::AsIs(value) => {
                    if self.strict && !is_zero(value) {
                        return None;
                    }
                    self.as_is(value, depth + 1)?;
                    is_zero(value)
                }
                Member::Bytes(bytes) => {
                    self.out.extend_from_slice(bytes);
                    false
                }
            };
            if zero {
                self.out.truncate(start);
            } else {
                empty = false;
                self.sort_if_set(from)?;
            }
            self.leave(mark);
        }
        self.out.push(b'}');
        Some(empty)
    }

    /// Enters the member `name` of the object being written; what to give [`Writer::leave`].
    /// A name a dotted path cannot spell (`a.b`, `a[]`) ends the tracking below it.
    fn enter(&mut self, name: &str) -> (usize, bool) {
        let mark = (self.path.len(), self.tracked);
        if self.tracked {
            if name.contains('.') || name.ends_with("[]") {
                self.tracked = false;
            } else {
                if !self.path.is_empty() {
                    self.path.push('.');
                }
                self.path.push_str(name);
                let path = self.path.as_str();
                self.tracked = self.sets.iter().any(|s| s.starts_with(path));
            }
        }
        mark
    }

    /// Enters the items of the list being written (`a` → `a[]`).
    fn enter_items(&mut self) -> (usize, bool) {
        let mark = (self.path.len(), self.tracked);
        if self.tracked {
            self.path.push_str("[]");
        }
        mark
    }

    fn leave(&mut self, (len, tracked): (usize, bool)) {
        self.path.truncate(len);
        self.tracked = tracked;
    }

    /// The list just written from `from` on, put in a set's order (`semantics::sort_set`)
    /// when its path is one of the kind's sets.
    fn sort_if_set(&mut self, from: usize) -> Option<()> {
        if !self.tracked || self.out.get(from) != Some(&b'[') || !self.sets.contains(&self.path) {
            return Some(());
        }
        let mut items: Vec<Value> = serde_json::from_slice(&self.out[from..]).ok()?;
        crate::api::semantics::sort_set(&mut items);
        self.out.truncate(from);
        serde_json::to_writer(&mut self.out, &items).ok()
    }

    /// Writes `value` in the canonical form of `schema` (`canonical_value`), keys sorted and
    /// integral numbers as integers (`tidy`); true when the canonical form leaves it out (the
    /// caller takes the bytes back).
    fn value(&mut self, schema: &'a Value, value: &'a Value, depth: usize) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        let schema = self.desc.resolve(schema);
        if value.is_null() {
            return Some(true);
        }
        let ty = schema_member(schema, "type").and_then(Value::as_str);
        let format = schema_member(schema, "format").and_then(Value::as_str);
        let properties = schema_member(schema, "properties");
        match (ty, value) {
            (_, Value::Object(map)) if properties.is_some() => {
                let props = properties.and_then(Value::as_object);
                let members = map
                    .iter()
                    .map(|(name, v)| {
                        let member = match props.and_then(|p| p.get(name)) {
                            Some(prop) => Member::Described(prop, v),
                            None => {
                                self.met_undescribed = true;
                                Member::AsIs(v)
                            }
                        };
                        (name.as_str(), member)
                    })
                    .collect();
                self.members(members, depth)
            }
            (Some("object"), Value::Object(map)) => {
                // A map: every entry kept (a zero one as its type's zero), keys sorted.
                let item = schema_member(schema, "additionalProperties").filter(|s| s.is_object());
                self.entries(map, |w, v| w.kept(item, v, depth))?;
                Some(map.is_empty())
            }
            (Some("array"), Value::Array(items)) => {
                let item = schema_member(schema, "items");
                self.items(items, |w, v| w.kept(item, v, depth))?;
                Some(items.is_empty())
            }
            (Some("string"), v) if matches!(format, Some("int64" | "uint64")) => match v {
                Value::Number(n) => {
                    self.string(&n.to_string());
                    Some(false)
                }
                Value::String(s) => match s.trim().parse::<i128>() {
                    Ok(n) => {
                        self.string(&n.to_string());
                        Some(false)
                    }
                    Err(_) => {
                        self.string(s);
                        Some(s.is_empty())
                    }
                },
                other => self.whole(schema, other, depth),
            },
            (Some("integer"), Value::Number(n)) => {
                let n = match (n.as_i64(), n.as_f64()) {
                    (Some(i), _) => Number::from(i),
                    (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                        Number::from(f as i64)
                    }
                    _ => n.clone(),
                };
                Some(self.number(n))
            }
            (Some("number"), Value::Number(n)) => match n.as_f64().and_then(Number::from_f64) {
                Some(f) => Some(self.number(f)),
                // `json!(f)` of a float with no JSON form is null: left out.
                None if n.as_f64().is_some() => Some(true),
                None => Some(self.number(n.clone())),
            },
            (Some("string"), Value::String(s)) => {
                let default = schema_member(schema, "enum")
                    .and_then(Value::as_array)
                    .and_then(|e| e.first())
                    .and_then(Value::as_str);
                if default == Some(s.as_str()) {
                    return Some(true);
                }
                self.string(s);
                Some(s.is_empty())
            }
            (_, other) => self.whole(schema, other, depth),
        }
    }

    /// A list item or map entry: in its schema's canonical form when it has one (a zero one as
    /// its type's zero: `zero_like`), else as it is.
    fn kept(&mut self, schema: Option<&'a Value>, value: &'a Value, depth: usize) -> Option<()> {
        let Some(schema) = schema else {
            return self.as_is(value, depth + 1);
        };
        let start = self.out.len();
        if self.value(schema, value, depth + 1)? {
            self.out.truncate(start);
            self.out.extend_from_slice(match value {
                Value::Bool(_) => b"false".as_slice(),
                Value::Number(_) => b"0",
                Value::String(_) => b"\"\"",
                Value::Array(_) => b"[]",
                Value::Object(_) => b"{}",
                Value::Null => b"null",
            });
        }
        Some(())
    }

    /// A value the canonical form keeps as it is: written, and whether it is zero.
    fn whole(&mut self, schema: &Value, value: &'a Value, depth: usize) -> Option<bool> {
        // The slow way looks for undescribed members in the items of any list whose schema
        // has items, whatever its type.
        if self.strict && value.is_array() && schema_member(schema, "items").is_some() {
            return None;
        }
        self.as_is(value, depth + 1)?;
        Some(is_zero(value))
    }

    /// A value as it is, keys sorted and integral numbers as integers (`tidy`).
    fn as_is(&mut self, value: &'a Value, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match value {
            Value::Object(map) => self.entries(map, |w, v| w.as_is(v, depth + 1))?,
            Value::Array(items) => self.items(items, |w, v| w.as_is(v, depth + 1))?,
            Value::Number(n) => {
                self.number(n.clone());
            }
            Value::String(s) => self.string(s),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            Value::Null => self.out.extend_from_slice(b"null"),
        }
        Some(())
    }

    /// Every entry of `map` (a zero one kept), keys sorted, each value written by `value`.
    fn entries(
        &mut self,
        map: &'a serde_json::Map<String, Value>,
        mut value: impl FnMut(&mut Self, &'a Value) -> Option<()>,
    ) -> Option<()> {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_unstable_by(|a, b| super::key_order(a.0, b.0));
        self.out.push(b'{');
        for (i, (key, v)) in entries.into_iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.string(key);
            self.out.push(b':');
            let (mark, from) = (self.enter(key), self.out.len());
            value(self, v)?;
            self.sort_if_set(from)?;
            self.leave(mark);
        }
        self.out.push(b'}');
        Some(())
    }

    /// Every item of a list, in order, each written by `value`.
    fn items(
        &mut self,
        items: &'a [Value],
        mut value: impl FnMut(&mut Self, &'a Value) -> Option<()>,
    ) -> Option<()> {
        self.out.push(b'[');
        let mark = self.enter_items();
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            value(self, v)?;
        }
        self.leave(mark);
        self.out.push(b']');
        Some(())
    }

    /// A number as `tidy` leaves it (an integral float below 9e15 an integer); whether zero.
    fn number(&mut self, n: Number) -> bool {
        let n = super::embedded::tidy_number(n);
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.out, &n);
        n.as_f64() == Some(0.0)
    }

    fn string(&mut self, s: &str) {
        // Nothing to escape (no quote, backslash or control character): the text as it is,
        // as serde_json writes it.
        if crate::util::json_string::special(s.as_bytes(), 0).is_none() {
            self.out.reserve(s.len() + 2);
            self.out.push(b'"');
            self.out.extend_from_slice(s.as_bytes());
            self.out.push(b'"');
            return;
        }
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.out, s);
    }
}

#[cfg(test)]
mod tests;
