//! The fast reader: the same values as [`super::parse_documents`], built straight from the
//! parser's events with no position below each document's start (less time and much less
//! memory). It takes the same decisions as `convert` (mapping keys written
//! as text the same way, non-finite numbers refused, repeated keys refused), and it gives up
//! (`None`) on anything unusual, so the caller falls back to the located reader for the
//! message. Both readers are checked against each other (`tests`, a property test).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

use super::{strip_bom, Node, PlainDocument, Pos};

/// Every non-empty document of a YAML stream, or `None` when the text has a problem (a
/// syntax error, a repeated key, a number that is not finite, a non-scalar key): the located
/// reader then says where.
pub fn parse_documents_plain(text: &str) -> Option<Vec<PlainDocument>> {
    let text = strip_bom(text);
    // The common shape, line by line; anything else (or anything doubtful) through
    // serde-saphyr.
    super::block::parse_documents_block(text).or_else(|| parse_documents_saphyr(text))
}

/// [`parse_documents_plain`] of a text with `${` in it, by the block reader only, which gives
/// up on a whole `${var:NAME}` that is not plain (substitution then needs no positions: see
/// `manifest::vars`); `None` when it does not take the text.
pub fn parse_documents_plain_refs(text: &str) -> Option<Vec<PlainDocument>> {
    super::block::parse_documents_block_refs(strip_bom(text))
}

/// [`parse_documents_plain`] through serde-saphyr only.
fn parse_documents_saphyr(text: &str) -> Option<Vec<PlainDocument>> {
    let text = strip_bom(text);
    // A block scalar may end the file without a line break: the located reader decides what
    // its last line keeps (see `yaml::scalar`).
    if !text.is_empty()
        && !text.ends_with(['\n', '\r'])
        && memchr::memchr2(b'|', b'>', text.as_bytes()).is_some()
    {
        return None;
    }
    let nodes: Vec<Spanned<PlainYaml>> =
        serde_saphyr::from_multiple_with_options(text, super::saphyr_options!()).ok()?;
    Some(
        nodes
            .into_iter()
            .filter(|n| !n.value.0.is_null())
            .map(|n| PlainDocument {
                start: Pos::from_location(&n.referenced),
                value: n.value.0,
            })
            .collect(),
    )
}

/// A value that refuses a key repeated in one object and a number that is not finite: serde_json's
/// for JSON files (which keeps the last of repeated keys silently on its own).
pub(super) struct Plain(pub(super) Value);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(PlainVisitor { yaml: false })
            .map(Plain)
    }
}

/// [`Plain`] for the fast YAML reader: it also gives up on a decimal with leading zeros, which
/// serde-saphyr hands over as text whether it was quoted or not (`yaml::scalar`).
struct PlainYaml(Value);

impl<'de> Deserialize<'de> for PlainYaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(PlainVisitor { yaml: true })
            .map(PlainYaml)
    }
}

#[derive(Clone, Copy)]
struct PlainVisitor {
    yaml: bool,
}

impl PlainVisitor {
    fn string<E: de::Error>(self, v: String) -> Result<Value, E> {
        if self.yaml && super::scalar::leading_zero_decimal(&v) {
            return Err(E::custom("a decimal with leading zeros"));
        }
        Ok(Value::String(v))
    }
}

impl<'de> de::DeserializeSeed<'de> for PlainVisitor {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::from)
            .or_else(|_| u64::try_from(v).map(Value::from))
            .map_err(|_| E::custom("out of range"))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        u64::try_from(v)
            .map(Value::from)
            .map_err(|_| E::custom("out of range"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a number the API accepts")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.string(v.to_string())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.string(v)
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        self.string(String::from_utf8_lossy(v).into_owned())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        // The entries first, then the map at its exact size (held for the whole run).
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(Key(name)) = map.next_key::<Key>()? {
            if self.yaml && super::scalar::leading_zero_decimal(&name) {
                return Err(de::Error::custom("a key with leading zeros"));
            }
            let value = map.next_value_seed(self)?;
            entries.push((name, value));
        }
        let mut out = Map::with_capacity(entries.len());
        for (name, value) in entries {
            if out.contains_key(&name) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{name}` (an earlier member of this object has the same key)"
                )));
            }
            out.insert(name, value);
        }
        Ok(Value::Object(out))
    }
}

/// A mapping key as text, named as the located reader names it (`Node::key_name`); a list or
/// mapping as a key is refused.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Node::deserialize(deserializer)?
            .key_name()
            .map(Key)
            .ok_or_else(|| de::Error::custom("a mapping key must be a scalar"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the located reader gives, without the positions below each document's start.
    fn located(text: &str) -> Option<Vec<PlainDocument>> {
        super::super::parse_documents(text).ok().map(|docs| {
            docs.into_iter()
                .map(|d| PlainDocument {
                    value: d.value,
                    start: d.start,
                })
                .collect()
        })
    }

    #[test]
    fn same_values_and_starts_as_the_located_reader() {
        let mut agreed = 0;
        for text in [
            "# c\n---\na: 1\n---\n# only a comment\n---\nb: 2\n",
            "a: 1\nb:\n  c: [x, y]\n  d:\n    - e: true\n",
            "1.50: x\ntrue: y\n~: z\n12: w\n",
            "a: !!str 1\nb: 0x1f\nc: 1e3\nd: .inf\n",
            "a: &x [1, 2]\nb: *x\n",
            "a: 99999999999999999999999\n",
            "a: -9223372036854775809\n",
            "dashboard_json: |\n  {\"a\": 1}\n",
            "a: 1\na: 2\n",
            "[a, b]: 1\n",
            "a: [1, 2\n",
            "\u{feff}a: yes\nb: on\n",
        ] {
            let plain = parse_documents_plain(text);
            let full = located(text);
            match (&plain, &full) {
                // The fast reader may give up where the located one succeeds, never the
                // reverse, and never with another value.
                (None, _) => {}
                (Some(p), Some(f)) => {
                    assert_eq!(p, f, "{text:?}");
                    agreed += 1;
                }
                (Some(p), None) => panic!("{text:?}: fast {p:?}, located refused it"),
            }
        }
        // Only the texts with a problem (non-finite number, repeated key, non-scalar key,
        // syntax) fall back.
        assert_eq!(agreed, 8);
        assert!(parse_documents_plain("a: 1\na: 2\n").is_none());
        assert!(parse_documents_plain("a: .nan\n").is_none());
        assert!(parse_documents_plain("a: 1\n").is_some());
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{1,6}",
            "-?[0-9]{1,20}",
            "[0-9]{1,3}\\.[0-9]{1,3}",
            Just("true".to_string()),
            Just("~".to_string()),
            Just("\"x: y\"".to_string()),
            Just(".inf".to_string()),
        ]
    }

    fn yaml_text() -> impl Strategy<Value = String> {
        let leaf = scalar();
        let tree = leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec((scalar(), inner.clone()), 1..4).prop_map(|entries| {
                    let body: Vec<String> = entries
                        .into_iter()
                        .map(|(k, v)| format!("{k}: {v}"))
                        .collect();
                    format!("{{{}}}", body.join(", "))
                }),
                prop::collection::vec(inner, 0..4)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
            ]
        });
        prop::collection::vec(tree, 1..3).prop_map(|docs| {
            docs.into_iter()
                .map(|d| format!("---\nv: {d}\n"))
                .collect::<String>()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn agrees_with_the_located_reader(text in yaml_text()) {
            if let Some(plain) = parse_documents_plain(&text) {
                prop_assert_eq!(Some(plain), located(&text));
            }
        }
    }
}
