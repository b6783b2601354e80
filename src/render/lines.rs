//! How many lines an embedded document takes pretty-printed (`serde_json::to_string_pretty`),
//! counted without building it: a create's `dashboard_json` is shown as "(JSON document, N
//! lines)", and a plan of thousands of dashboards should not parse and print every one of them
//! to count.
//!
//! The count is the one of the parsed value: a document held as JSON text is read as
//! `serde_json::from_str::<Value>` would read it (the same parser, so the same errors, number
//! range and nesting limit; a repeated key keeps its first place and its last value, as the
//! map does), and a text that is not JSON counts as the one line of the string itself.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The lines of `serde_json::to_string_pretty` of the document: of the value a JSON text
/// parses to, or of the value itself.
pub(super) fn document_lines(doc: &Value) -> usize {
    match doc {
        Value::String(text) => match serde_json::from_str::<Lines>(text) {
            Ok(Lines(n)) => n,
            // Not JSON: shown as the string it is, one line.
            Err(_) => 1,
        },
        other => value_lines(other),
    }
}

/// Pretty-printed, a non-empty array or object takes its opening line, its members' lines and
/// its closing line; anything else one line (a string's newlines are escaped).
fn value_lines(v: &Value) -> usize {
    match v {
        Value::Array(items) if !items.is_empty() => {
            2 + items.iter().map(value_lines).sum::<usize>()
        }
        Value::Object(map) if !map.is_empty() => 2 + map.values().map(value_lines).sum::<usize>(),
        _ => 1,
    }
}

/// The pretty-printed line count of a JSON value, read from its text.
struct Lines(usize);

impl<'de> serde::Deserialize<'de> for Lines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lines, D::Error> {
        d.deserialize_any(LinesVisitor)
    }
}

struct LinesVisitor;

impl<'de> Visitor<'de> for LinesVisitor {
    type Value = Lines;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Lines, E> {
        Ok(Lines(1))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Lines, E> {
        Ok(Lines(1))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Lines, E> {
        Ok(Lines(1))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Lines, E> {
        Ok(Lines(1))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Lines, E> {
        Ok(Lines(1))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Lines, E> {
        Ok(Lines(1))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lines, A::Error> {
        let (mut n, mut inner) = (0usize, 0usize);
        while let Some(Lines(l)) = seq.next_element::<Lines>()? {
            n += 1;
            inner += l;
        }
        Ok(Lines(if n == 0 { 1 } else { 2 + inner }))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lines, A::Error> {
        // The members' lines in first-seen order: a repeated key replaces the value of the
        // first. A small object is searched in place, a large one through an index.
        let mut keys: Vec<Key<'de>> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        let mut index: Option<HashMap<Key<'de>, usize>> = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let Lines(l) = map.next_value::<Lines>()?;
            if index.is_none() && keys.len() >= 16 {
                index = Some(keys.iter().cloned().zip(0..).collect());
            }
            let found = match &index {
                Some(ix) => ix.get(&key).copied(),
                None => keys.iter().position(|k| *k == key),
            };
            match found {
                Some(i) => lines[i] = l,
                None => {
                    if let Some(ix) = &mut index {
                        ix.insert(key.clone(), keys.len());
                    }
                    keys.push(key);
                    lines.push(l);
                }
            }
        }
        Ok(Lines(if lines.is_empty() {
            1
        } else {
            2 + lines.iter().sum::<usize>()
        }))
    }
}

/// An object's key, borrowed from the text when it has no escapes.
#[derive(Clone, Debug)]
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Key<'_> {}

impl std::hash::Hash for Key<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the plan showed before: the document parsed (when it is JSON text), pretty-printed,
    /// its lines counted.
    fn printed(doc: &Value) -> usize {
        let parsed = match doc {
            Value::String(text) => serde_json::from_str::<Value>(text).unwrap_or(doc.clone()),
            other => other.clone(),
        };
        serde_json::to_string_pretty(&parsed)
            .unwrap()
            .lines()
            .count()
    }

    fn same(doc: Value) {
        assert_eq!(document_lines(&doc), printed(&doc), "{doc}");
    }

    #[test]
    fn counts_as_the_pretty_printed_document() {
        let texts = [
            r#"{"panels":[{"id":1,"targets":[{"expr":"up"}],"x":{}},{"y":[]}],"title":"t\nu"}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[[],[{}],[[1,2],{"a":null}]]"#,
            r#"{"a":1,"b":{"c":[1,2,3]},"a":{"d":[4,5]}}"#,
            r#"{"k\u0041":1,"kA":[1,2]}"#,
            r#"  {"a": "multi\nline"}  "#,
            r#"5"#,
            r#""just a string""#,
            r#"true"#,
            r#"null"#,
            r#"-1.5e3"#,
            r#"{"big": 1e400}"#,
            r#"{"unclosed": [1, 2"#,
            r#"{"a":1} trailing"#,
            r#"not json at all"#,
            "",
        ];
        for t in texts {
            same(Value::String(t.to_string()));
        }
        same(json!({"a": [1, {"b": []}], "c": {}}));
        same(json!(null));
        same(json!([]));
    }

    #[test]
    fn a_repeated_key_counts_once_with_its_last_value_even_in_a_large_object() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":[{i}],"));
        }
        // Repeats of an early key, one with an escape, and of a late one.
        text.push_str(r#""k3":{"x":[1,2,3]},"\u006b39":[],"k0":5}"#);
        same(Value::String(text));
        same(Value::String(r#"{"a":[1,2],"a":3}"#.into()));
    }

    #[test]
    fn nesting_beyond_the_parsers_limit_is_one_line_like_any_text_that_is_not_json() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        same(Value::String(deep));
        assert_eq!(
            document_lines(&Value::String("[".repeat(200) + &"]".repeat(200))),
            1
        );
    }
}
