//! The comparable bytes of an embedded document (`dashboard_json`), straight from its text.
//!
//! [`normalize`](super::normalize) parses an embedded document into a `Value` (an `IndexMap`
//! per object), removes its volatile members, strips its zero values, sorts its keys and makes
//! integral numbers integers; the digest then serialises the result. For a dashboard that is
//! the costly part of comparing it. [`comparable`] writes the same bytes from a
//! tree of slices of the text: no hashing of keys, no copy of a plain string or integer.
//!
//! It is a shortcut to the same bytes, never another form: anything it does not take on (an
//! escaped key, deep nesting, text serde_json would refuse) answers `None`, and the caller
//! normalises the slow way. A property test holds the two to byte equality.

use serde_json::Number;

use crate::registry::Volatile;

/// Nesting this reader takes on (serde_json refuses more than 128).
const MAX_DEPTH: usize = 100;

/// A parsed JSON value borrowing from the text.
#[derive(Debug)]
enum Node<'a> {
    Null,
    Bool(bool),
    /// An integer written plainly (`0` or `-?[1-9][0-9]{0,17}`): serde_json reads it as an
    /// `i64`/`u64` and writes it back as it is.
    Int(&'a str),
    /// Any other number, as serde_json reads it.
    Num(Number),
    /// A string's contents as written: no escape, so also as serde_json writes them.
    Str(&'a str),
    /// A string with escapes, decoded by serde_json.
    Owned(String),
    Arr(Vec<Node<'a>>),
    /// Members sorted by key, each key once (the last one written wins, as in a `Map`).
    Obj(Vec<(&'a str, Node<'a>)>),
}

/// The bytes `serde_json::to_vec` writes for the document `text` once its volatile members
/// are removed, its zero values stripped, its keys sorted and its integral numbers made
/// integers: `Some(None)` when nothing is left of it, `None` when this reader does not take
/// the text on (the caller then normalises the slow way).
pub(super) fn comparable(text: &str, volatile: &[Volatile]) -> Option<Option<Vec<u8>>> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut doc = reader.value(0)?;
    reader.skip_space();
    if reader.at != reader.bytes.len() {
        return None;
    }
    for v in volatile {
        remove_path(&mut doc, v.path);
    }
    if strip_zero(&mut doc) {
        return Some(None);
    }
    let mut out = Vec::with_capacity(text.len());
    write(&doc, &mut out);
    Some(Some(out))
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Node<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_space();
        match *self.bytes.get(self.at)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string(),
            b't' => self.literal("true", Node::Bool(true)),
            b'f' => self.literal("false", Node::Bool(false)),
            b'n' => self.literal("null", Node::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> Option<Node<'a>> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word.as_bytes()).then(|| {
            self.at = end;
            node
        })
    }

    fn number(&mut self) -> Option<Node<'a>> {
        let start = self.at;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
        }
        let token = self.text.get(start..self.at)?;
        let digits = token.strip_prefix('-').unwrap_or(token);
        let plain = !digits.is_empty()
            && digits.len() <= 18
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && token != "-0";
        if plain {
            return Some(Node::Int(token));
        }
        // serde_json's own reading of anything else (and its refusal of what is not JSON).
        let n: Number = serde_json::from_str(token).ok()?;
        Some(Node::Num(tidy_number(n)))
    }

    /// A string at the opening quote: its contents as written when they hold no escape.
    fn string(&mut self) -> Option<Node<'a>> {
        let start = self.at + 1;
        // The common case: no escape before the closing quote, and (checked without
        // branches) no raw control character, which is not JSON.
        let rest = self.bytes.get(start..)?;
        let stop = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[..stop].iter().fold(false, |any, &c| any | (c < 0x20)) {
            return None;
        }
        if rest[stop] == b'"' {
            self.at = start + stop + 1;
            return self.text.get(start..start + stop).map(Node::Str);
        }
        let mut at = start + stop;
        let mut escaped = false;
        loop {
            match *self.bytes.get(at)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    at += 2;
                }
                // A raw control character is not JSON.
                0..=0x1f => return None,
                _ => at += 1,
            }
        }
        self.at = at + 1;
        if escaped {
            let quoted = self.text.get(start - 1..at + 1)?;
            return serde_json::from_str::<String>(quoted).ok().map(Node::Owned);
        }
        self.text.get(start..at).map(Node::Str)
    }

    /// The members of a list or an object after its opening byte, each read by `member`,
    /// separated by commas, up to the closing byte.
    fn members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.at += 1;
        self.skip_space();
        if self.bytes.get(self.at) == Some(&close) {
            self.at += 1;
            return Some(());
        }
        loop {
            member(self)?;
            self.skip_space();
            match *self.bytes.get(self.at)? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Node<'a>> {
        let mut items = Vec::new();
        self.members(b']', |r| {
            items.push(r.value(depth + 1)?);
            Some(())
        })?;
        Some(Node::Arr(items))
    }

    fn object(&mut self, depth: usize) -> Option<Node<'a>> {
        let mut members = Vec::new();
        self.members(b'}', |r| {
            r.skip_space();
            if r.bytes.get(r.at) != Some(&b'"') {
                return None;
            }
            // Keys are compared and written as they are: an escaped one is not taken on.
            let Node::Str(key) = r.string()? else {
                return None;
            };
            r.skip_space();
            if r.bytes.get(r.at) != Some(&b':') {
                return None;
            }
            r.at += 1;
            members.push((key, r.value(depth + 1)?));
            Some(())
        })?;
        // Sorted by key (stable, from the last written), then the first of each key kept:
        // the last one written wins, as when serde_json inserts a repeated key.
        members.reverse();
        members.sort_by(|a, b| a.0.cmp(b.0));
        members.dedup_by(|later, kept| later.0 == kept.0);
        Some(Node::Obj(members))
    }
}

/// `tidy`'s numbers: an integral float (below 9e15) becomes that integer.
fn tidy_number(n: Number) -> Number {
    if let (None, None, Some(f)) = (n.as_i64(), n.as_u64(), n.as_f64()) {
        if f.fract() == 0.0 && f.abs() < 9.0e15 {
            return Number::from(f as i64);
        }
    }
    n
}

/// `jsonpath::remove_path` on the tree: parents through objects only.
fn remove_path(doc: &mut Node, dotted: &str) {
    let segments: Vec<&str> = dotted.split('.').collect();
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut node = doc;
    for segment in parents {
        let Node::Obj(members) = node else { return };
        let Ok(i) = members.binary_search_by(|(k, _)| (*k).cmp(segment)) else {
            return;
        };
        node = &mut members[i].1;
    }
    if let Node::Obj(members) = node {
        if let Ok(i) = members.binary_search_by(|(k, _)| (*k).cmp(last)) {
            members.remove(i);
        }
    }
}

/// `registry::is_zero`.
fn is_zero(node: &Node) -> bool {
    match node {
        Node::Null => true,
        Node::Bool(b) => !b,
        Node::Int(t) => *t == "0",
        Node::Num(n) => n.as_f64() == Some(0.0),
        Node::Str(s) => s.is_empty(),
        Node::Owned(s) => s.is_empty(),
        Node::Arr(items) => items.is_empty(),
        Node::Obj(members) => members.is_empty(),
    }
}

/// `normalize::strip_zero` on the tree.
fn strip_zero(node: &mut Node) -> bool {
    match node {
        Node::Obj(members) => members.retain_mut(|(_, v)| !strip_zero(v)),
        Node::Arr(items) => {
            for item in items.iter_mut() {
                if !zero_when_stripped(item) {
                    strip_zero(item);
                }
            }
        }
        _ => {}
    }
    is_zero(node)
}

/// `normalize::zero_when_stripped` on the tree.
fn zero_when_stripped(node: &Node) -> bool {
    match node {
        Node::Obj(members) => members.iter().all(|(_, v)| zero_when_stripped(v)),
        other => is_zero(other),
    }
}

/// serde_json's compact writing of the tree.
fn write(node: &Node, out: &mut Vec<u8>) {
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool(true) => out.extend_from_slice(b"true"),
        Node::Bool(false) => out.extend_from_slice(b"false"),
        Node::Int(t) => out.extend_from_slice(t.as_bytes()),
        // Writing a number or a string into a Vec cannot fail.
        Node::Num(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Node::Owned(s) => {
            let _ = serde_json::to_writer(&mut *out, s);
        }
        Node::Str(s) => {
            out.push(b'"');
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        }
        Node::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Node::Obj(members) => {
            out.push(b'{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'"');
                out.extend_from_slice(key.as_bytes());
                out.extend_from_slice(b"\":");
                write(value, out);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::super::{comparable_bytes, normalize};
    use crate::registry::Kind;

    /// The slow way: the whole object normalised, then written.
    fn slow(kind: Kind, object: &Value) -> Vec<u8> {
        serde_json::to_vec(&normalize(kind, object, &[])).unwrap()
    }

    fn dashboard(text: &str) -> Value {
        json!({"slug": "d", "name": "D", "collection": {"slug": "c"}, "dashboard_json": text})
    }

    #[test]
    fn a_document_is_written_as_the_slow_way_writes_it() {
        let text = r#"{"kind":"Dashboard","metadata":{"name":"d","created_at":"x","version":3,"project":"p"},
            "spec":{"panels":{"b":{"w":6.0,"h":0,"t":"","l":[0,{"x":0},{}],"n":null},"a":{"w":1.5}},
            "display":{"name":"D\u00e9\n"},"z":[],"e":{},"f":false,"big":12345678901234567890}}"#;
        for kind in [Kind::named("Dashboard"), Kind::named("ClassicDashboard")] {
            let object = dashboard(text);
            assert_eq!(comparable_bytes(kind, &object), slow(kind, &object));
            // And it was the fast way that wrote them.
            assert!(super::super::embedded_apart(kind, &object).is_some());
        }
    }

    #[test]
    fn what_this_reader_does_not_take_on_goes_the_slow_way() {
        for text in [
            r#"{"a\u0062":1}"#,  // an escaped key
            r#"{"a":1} x"#,      // trailing text: not JSON, kept as a string
            r#"{"a":-0}"#,       // -0 is a float to serde_json
            "{\"a\":\"\u{1}\"}", // a raw control character
            r#"{"a":1e400}"#,    // out of range
            "",                  // zero: the field goes
        ] {
            let object = dashboard(text);
            assert_eq!(
                comparable_bytes(Kind::named("Dashboard"), &object),
                slow(Kind::named("Dashboard"), &object),
                "{text}"
            );
        }
        let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
        assert!(super::comparable(&deep, &[]).is_none());
        let object = dashboard(&deep);
        assert_eq!(
            comparable_bytes(Kind::named("Dashboard"), &object),
            slow(Kind::named("Dashboard"), &object)
        );
    }

    #[test]
    fn the_last_of_a_repeated_key_wins_and_a_zero_document_goes() {
        let a = dashboard(r#"{"k":1,"j":2,"k":3}"#);
        assert_eq!(
            comparable_bytes(Kind::named("Dashboard"), &a),
            slow(Kind::named("Dashboard"), &a)
        );
        assert!(
            String::from_utf8(comparable_bytes(Kind::named("Dashboard"), &a))
                .unwrap()
                .contains(r#"{"j":2,"k":3}"#)
        );
        let zero = dashboard(r#"{"metadata":{"created_at":"x"},"spec":{"a":[],"b":{"c":0}}}"#);
        let bytes = comparable_bytes(Kind::named("Dashboard"), &zero);
        assert_eq!(bytes, slow(Kind::named("Dashboard"), &zero));
        assert!(!String::from_utf8(bytes).unwrap().contains("dashboard_json"));
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "null",
                "true",
                "false",
                "0",
                "-0",
                "0.0",
                "-0.0",
                "1.0",
                "1e2",
                "2.5",
                "1E400",
                "12345678901234567890",
                "123456789012345678",
                "1234567890123456789",
                "-5",
                "9007199254740993.0",
                "01",
                "1.",
                "-",
                "\"\"",
                "\"a\"",
                "\"\\n\"",
                "\"\\u0041\"",
                "\"é\"",
                "\"\\\"q\"",
                "\"\\ud800\"",
                "\"/\\/\"",
                "\"\u{7f}\"",
            ])
            .prop_map(str::to_string),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|f| serde_json::to_string(&f).unwrap()),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a",
            "b",
            "B",
            "id",
            "version",
            "metadata",
            "created_at",
            "updated_at",
            "é",
            "",
            "a\\u0062",
            "dashboard_json",
        ])
        .prop_map(str::to_string)
    }

    /// JSON texts, mostly valid, with repeated keys, odd spacing and numbers of every form.
    fn text() -> impl Strategy<Value = String> {
        scalar().prop_recursive(6, 96, 6, |inner| {
            let space = prop::sample::select(vec!["", " ", "\n  ", "\t"]);
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..5), space.clone())
                    .prop_map(|(items, s)| format!("[{s}{}{s}]", items.join(&format!("{s},{s}")))),
                (prop::collection::vec((key(), inner), 0..6), space).prop_map(|(members, s)| {
                    let members: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("\"{k}\"{s}:{s}{v}"))
                        .collect();
                    format!("{{{s}{}{s}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The property the shortcut rests on: the same bytes as the slow way, for every text
        /// (a prefix of one, too: mostly not JSON), with the document wherever it sorts among
        /// the other members.
        #[test]
        fn the_shortcut_writes_the_slow_ways_bytes(
            text in text(),
            cut in any::<prop::sample::Index>(),
            classic in any::<bool>(),
            extra in prop::sample::select(vec!["a", "zz", "labels", "name"]),
        ) {
            let kind = if classic { Kind::named("ClassicDashboard") } else { Kind::named("Dashboard") };
            for text in [text.clone(), format!(" {{\"metadata\":{text},\"version\":{text},\"id\":1}} "),
                         text.chars().take(cut.index(text.chars().count() + 1)).collect()] {
                let mut object = dashboard(&text);
                object[extra] = json!("x");
                prop_assert_eq!(comparable_bytes(kind, &object), slow(kind, &object), "{}", text);
            }
        }
    }
}
