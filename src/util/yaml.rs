//! YAML (and JSON) text to JSON values with the source position of every node.
//!
//! serde-saphyr parses (multi-document YAML, duplicate keys rejected, alias budgets); this
//! module turns its `Spanned` tree into a `serde_json::Value` plus a map from JSON pointer to
//! the line and column of the key and the value, so that any later check (envelope, schema,
//! references) can point at the exact field.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

use crate::util::jsonpath::escape_pointer;

mod block;
mod limits;
mod plain;
mod scalar;
mod tabs;
// Test-only: the YAML 1.2 cross-check against ruamel.yaml (it spawns python3).
#[cfg(test)]
pub(crate) mod yaml12;
pub use plain::{parse_documents_plain, parse_documents_plain_refs};

/// A document's value and where it starts, as the fast readers give it (no positions below).
#[derive(Clone, Debug, PartialEq)]
pub struct PlainDocument {
    pub value: Value,
    pub start: Pos,
}

/// For the fuzzer (`fuzz/src/bin/yaml_block.rs`): when the block reader takes `text`, the located
/// reader must read the same documents; says how they differ when they do.
#[doc(hidden)]
pub fn block_reader_disagreement(text: &str) -> Option<String> {
    let text = strip_bom(text);
    let block = block::parse_documents_block(text)?;
    let reference = parse_documents_unlocated(text);
    if reference.as_ref() != Some(&block) {
        return Some(format!(
            "block reader: {block:?}\nlocated reader: {reference:?}"
        ));
    }
    // Its located mode, where it takes the text: each field where the located reader has it.
    let fields = |docs: Vec<(Pos, Spans)>| -> Vec<(Pos, Vec<(String, Pos)>)> {
        let field = |(p, s): (&String, &NodeSpan)| (!p.is_empty()).then(|| (p.clone(), s.field()));
        let of = |(start, spans): (Pos, Spans)| (start, spans.iter().filter_map(field).collect());
        docs.into_iter().map(of).collect()
    };
    let located = fields(block::located::field_positions_block(text)?);
    let reference = parse_documents(text).ok()?;
    let reference = fields(reference.into_iter().map(|d| (d.start, d.spans)).collect());
    (located != reference).then(|| {
        format!("block reader's fields: {located:?}\nlocated reader's fields: {reference:?}")
    })
}

/// Every document's start and where each of its fields is ([`NodeSpan::field`], the only
/// position these spans hold: a mapping entry's key, a sequence item's value), for locating a
/// problem found after a fast load: the block reader's located mode when it takes the text
/// (its tests hold it to the located reader's positions), else the located reader.
pub fn field_positions(text: &str) -> Option<Vec<(Pos, Spans)>> {
    let text = strip_bom(text);
    block::located::field_positions_block(text).or_else(|| {
        let docs = parse_documents(text).ok()?;
        Some(docs.into_iter().map(|d| (d.start, d.spans)).collect())
    })
}

/// The located reader's documents without the positions below each start: the reference the
/// faster readers are held to.
#[doc(hidden)]
pub fn parse_documents_unlocated(text: &str) -> Option<Vec<PlainDocument>> {
    parse_documents(text).ok().map(|docs| {
        docs.into_iter()
            .map(|d| PlainDocument {
                value: d.value,
                start: d.start,
            })
            .collect()
    })
}

/// serde-saphyr's options for every reader here. A decimal with leading zeros (`060`) comes as
/// text, never as the float serde-saphyr makes of it otherwise: YAML 1.2's core schema reads it
/// as the integer 60, which the located reader decides from the source (a quoted `'060'` is
/// text) and the fast reader gives up on.
macro_rules! saphyr_options {
    () => {
        serde_saphyr::options! {
            with_snippet: false,
            strict_booleans: true,
            leading_zero_numbers_as_strings: true,
            duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        }
    };
}
pub(crate) use saphyr_options;

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    pub fn new(line: u32, column: u32) -> Pos {
        Pos { line, column }
    }

    fn from_location(loc: &serde_saphyr::Location) -> Pos {
        Pos {
            line: u32::try_from(loc.line()).unwrap_or(u32::MAX).max(1),
            column: u32::try_from(loc.column()).unwrap_or(u32::MAX).max(1),
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Where a node is: its value, and for a mapping entry, its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSpan {
    pub key: Option<Pos>,
    pub value: Pos,
}

impl NodeSpan {
    /// The position a user should look at for a problem with the field as a whole: the key
    /// when there is one.
    pub fn field(&self) -> Pos {
        self.key.unwrap_or(self.value)
    }
}

/// Source positions of a document's nodes by JSON pointer ("" is the root).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spans(BTreeMap<String, NodeSpan>);

impl Spans {
    pub fn get(&self, pointer: &str) -> Option<&NodeSpan> {
        self.0.get(pointer)
    }

    /// The span of the pointer, or of its nearest ancestor that has one.
    pub fn nearest(&self, pointer: &str) -> Option<&NodeSpan> {
        let mut p = pointer;
        loop {
            if let Some(span) = self.0.get(p) {
                return Some(span);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }

    /// The spans below `prefix`, re-rooted at it (`/spec/name` becomes `/name`).
    pub fn subtree(&self, prefix: &str) -> Spans {
        let mut out = BTreeMap::new();
        for (k, v) in self.0.range(prefix.to_string()..) {
            if k == prefix {
                out.insert(String::new(), *v);
            } else if let Some(rest) = k.strip_prefix(prefix) {
                if rest.starts_with('/') {
                    out.insert(rest.to_string(), *v);
                } else {
                    continue;
                }
            } else {
                break;
            }
        }
        Spans(out)
    }

    /// No position kept (a document read by the fast reader).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every pointer with its span, in pointer order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &NodeSpan)> {
        self.0.iter()
    }

    /// Forgets the positions strictly below `pointer` (the pointer's own stays).
    pub fn remove_below(&mut self, pointer: &str) {
        // Keys below are exactly those in [`pointer/`, `pointer0`): '0' follows '/'.
        let mut below = self.0.split_off(&format!("{pointer}/"));
        let mut after = below.split_off(&format!("{pointer}0"));
        self.0.append(&mut after);
    }

    /// Shifts every position by whole lines (a JSON document inside a YAML string).
    pub fn insert(&mut self, pointer: String, span: NodeSpan) {
        self.0.insert(pointer, span);
    }
}

/// A parsed document: its value, where it starts, and where each node is.
#[derive(Clone, Debug)]
pub struct Document {
    pub value: Value,
    pub start: Pos,
    pub spans: Spans,
}

/// A syntax error, with the position the parser reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

/// Parses every document of a YAML stream. Empty documents (only comments, or `---` with
/// nothing after it) are dropped.
pub fn parse_documents(text: &str) -> Result<Vec<Document>, SyntaxError> {
    let text = strip_bom(text);
    // Repeated keys reach `convert`, which refuses them naming both places.
    let nodes: Vec<Spanned<Node>> =
        serde_saphyr::from_multiple_with_options(text, saphyr_options!())
            .map_err(|e| tabs::tab_indented(text, syntax_error(&e)))?;
    let mut docs = Vec::with_capacity(nodes.len());
    for node in nodes {
        if matches!(node.value, Node::Null) {
            continue;
        }
        let start = Pos::from_location(&node.referenced);
        let mut spans = Spans::default();
        let value = convert(node, None, String::new(), &mut spans, text)?;
        docs.push(Document {
            value,
            start,
            spans,
        });
    }
    Ok(docs)
}

/// Parses a JSON text. JSON is YAML, so the YAML parser is tried first for positions of every
/// field; JSON that it cannot read (tab indentation, say) is read by serde_json with
/// positions for the document only.
pub fn parse_json(text: &str) -> Result<Document, SyntaxError> {
    let text = strip_bom(text);
    match serde_json::from_str::<plain::Plain>(text) {
        // The YAML reader names both places of a repeated key, where it can read the text.
        Err(e) if json_message(&e).starts_with("duplicate key") => match parse_documents(text) {
            Err(y) if y.message.starts_with("duplicate key") => Err(y),
            _ => Err(SyntaxError {
                pos: Pos::new(
                    u32::try_from(e.line()).unwrap_or(u32::MAX).max(1),
                    u32::try_from(e.column()).unwrap_or(u32::MAX).max(1),
                ),
                message: json_message(&e),
            }),
        },
        Err(e) => Err(SyntaxError {
            pos: Pos::new(
                u32::try_from(e.line()).unwrap_or(u32::MAX).max(1),
                u32::try_from(e.column()).unwrap_or(u32::MAX).max(1),
            ),
            message: json_message(&e),
        }),
        Ok(plain::Plain(value)) => {
            match parse_documents(text) {
                Ok(mut docs) if docs.len() == 1 && docs[0].value == value => {
                    return Ok(docs.remove(0));
                }
                _ => {}
            }
            let start = first_non_blank(text);
            let mut spans = Spans::default();
            spans.insert(
                String::new(),
                NodeSpan {
                    key: None,
                    value: start,
                },
            );
            Ok(Document {
                value,
                start,
                spans,
            })
        }
    }
}

/// A byte order mark at the start of a file is not content (editors on Windows write one).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// serde_json's message without its trailing " at line L column C" (the position is printed
/// in front already).
pub fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

fn first_non_blank(text: &str) -> Pos {
    for (i, line) in text.lines().enumerate() {
        if let Some(col) = line.find(|c: char| !c.is_whitespace()) {
            let col = line[..col].chars().count() + 1;
            return Pos::new(
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                u32::try_from(col).unwrap_or(u32::MAX),
            );
        }
    }
    Pos::new(1, 1)
}

fn syntax_error(e: &serde_saphyr::Error) -> SyntaxError {
    let pos = e
        .location()
        .map(|l| Pos::from_location(&l))
        .unwrap_or(Pos::new(1, 1));
    if let serde_saphyr::Error::Budget { breach, .. } = e {
        return SyntaxError {
            pos,
            message: limits::breach_message(breach),
        };
    }
    let rendered = e.to_string();
    if let Some(message) = limits::rendered_breach_message(&rendered) {
        return SyntaxError { pos, message };
    }
    // The rendered message may carry its own "at line X, column Y" suffix; the caller prints
    // the position in front, so keep only the first line's text.
    let first = rendered.lines().next().unwrap_or("invalid YAML").trim();
    let message = strip_position_suffix(first);
    SyntaxError { pos, message }
}

fn strip_position_suffix(s: &str) -> String {
    for marker in [" at line ", " at position "] {
        if let Some(i) = s.rfind(marker) {
            return s[..i].trim_end_matches([',', ':']).to_string();
        }
    }
    s.trim_start_matches("error: ").to_string()
}

/// Where a node's text is in `text` (where an alias's node was defined): its byte range.
fn source_of(text: &str, loc: &serde_saphyr::Location) -> Option<std::ops::Range<usize>> {
    let span = loc.span();
    let start = usize::try_from(span.byte_offset()?).ok()?;
    let end = start.checked_add(usize::try_from(span.byte_len()?).ok()?)?;
    text.get(start..end).map(|_| start..end)
}

/// A YAML node as serde-saphyr hands it over; every child keeps its position.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Node>, Spanned<Node>)>),
}

impl Node {
    /// A mapping key as text (`1.5`, `true`, `null`); `None` for a list or mapping. Both
    /// readers name keys through this.
    fn key_name(self) -> Option<String> {
        Some(match self {
            Node::Str(s) => s,
            Node::Int(i) => i.to_string(),
            Node::UInt(u) => u.to_string(),
            Node::Bool(b) => b.to_string(),
            Node::Float(f) => f.to_string(),
            Node::Null => "null".to_string(),
            Node::Seq(_) | Node::Map(_) => return None,
        })
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::UInt(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        i64::try_from(v)
            .map(Node::Int)
            .or_else(|_| u64::try_from(v).map(Node::UInt))
            .map_err(|_| E::custom(format!("integer {v} is out of range")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        u64::try_from(v)
            .map(Node::UInt)
            .map_err(|_| E::custom(format!("integer {v} is out of range")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        Ok(Node::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Node>>()? {
            let value = map.next_value::<Spanned<Node>>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

fn convert(
    node: Spanned<Node>,
    key: Option<Pos>,
    pointer: String,
    spans: &mut Spans,
    text: &str,
) -> Result<Value, SyntaxError> {
    let pos = Pos::from_location(&node.referenced);
    spans.insert(pointer.clone(), NodeSpan { key, value: pos });
    let node = match node.value {
        Node::Str(s) => scalar::resolve_str(s, source_of(text, &node.defined), text),
        other => other,
    };
    Ok(match node {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(b),
        Node::Int(i) => Value::Number(i.into()),
        Node::UInt(u) => Value::Number(u.into()),
        Node::Float(f) => match Number::from_f64(f) {
            Some(n) => Value::Number(n),
            None => {
                return Err(SyntaxError {
                    pos,
                    message: format!("{f} is not a number the API accepts (not finite)"),
                })
            }
        },
        Node::Str(s) => Value::String(s),
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                out.push(convert(item, None, format!("{pointer}/{i}"), spans, text)?);
            }
            Value::Array(out)
        }
        Node::Map(entries) => {
            // At its exact size: held for the whole run.
            let mut out = Map::with_capacity(entries.len());
            for (k, v) in entries {
                let key_pos = Pos::from_location(&k.referenced);
                let key = match k.value {
                    Node::Str(s) => scalar::resolve_str(s, source_of(text, &k.defined), text),
                    other => other,
                };
                let Some(name) = key.key_name() else {
                    return Err(SyntaxError {
                        pos: key_pos,
                        message: "a mapping key must be a scalar".to_string(),
                    });
                };
                if let Some(first) = spans.get(&format!("{pointer}/{}", escape_pointer(&name))) {
                    let first = first.key.unwrap_or(first.value);
                    return Err(SyntaxError {
                        pos: key_pos,
                        message: format!(
                            "duplicate key `{name}`: it is already at line {}, column {}",
                            first.line, first.column
                        ),
                    });
                }
                let child = format!("{pointer}/{}", escape_pointer(&name));
                let value = convert(v, Some(key_pos), child, spans, text)?;
                out.insert(name, value);
            }
            Value::Object(out)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn positions_of_keys_and_values() {
        let text = "a: 1\nb:\n  c: [x, y]\n  d:\n    - e: true\n";
        let docs = parse_documents(text).unwrap();
        assert_eq!(docs.len(), 1);
        let doc = &docs[0];
        assert_eq!(
            doc.value,
            json!({"a": 1, "b": {"c": ["x", "y"], "d": [{"e": true}]}})
        );
        let s = &doc.spans;
        assert_eq!(s.get("/a").unwrap().key, Some(Pos::new(1, 1)));
        assert_eq!(s.get("/a").unwrap().value, Pos::new(1, 4));
        assert_eq!(s.get("/b/c").unwrap().key, Some(Pos::new(3, 3)));
        assert_eq!(s.get("/b/c/1").unwrap().value, Pos::new(3, 10));
        assert_eq!(s.get("/b/d/0/e").unwrap().key, Some(Pos::new(5, 7)));
        assert_eq!(s.nearest("/b/d/0/e/zz").unwrap().value, Pos::new(5, 10));
    }

    #[test]
    fn multiple_documents_with_their_start_lines() {
        let text = "# c\n---\na: 1\n---\n# only a comment\n---\nb: 2\n";
        let docs = parse_documents(text).unwrap();
        let starts: Vec<u32> = docs.iter().map(|d| d.start.line).collect();
        assert_eq!(starts, vec![3, 7]);
    }

    #[test]
    fn syntax_error_has_a_position() {
        let err = parse_documents("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.pos.line >= 2, "{err:?}");
        assert!(!err.message.is_empty());
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse_documents("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.pos.line, 2, "{err:?}");
        assert!(err.message.contains("duplicate"), "{err:?}");
    }

    #[test]
    fn json_with_tabs_still_parses() {
        let doc = parse_json("{\n\t\"a\": [1,\n\t2]\n}\n").unwrap();
        assert_eq!(doc.value, json!({"a": [1, 2]}));
        let err = parse_json("{\"a\": }").unwrap_err();
        assert_eq!(err.pos, Pos::new(1, 7));
        assert_eq!(err.message, "expected value");
    }

    #[test]
    fn subtree_reroots() {
        let docs = parse_documents("spec:\n  name: x\nspecial: 1\n").unwrap();
        let sub = docs[0].spans.subtree("/spec");
        assert!(sub.get("").is_some());
        assert_eq!(sub.get("/name").unwrap().key, Some(Pos::new(2, 3)));
        assert!(sub.get("ial").is_none());
    }
}
