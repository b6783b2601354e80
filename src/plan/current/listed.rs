//! A listed object's text parsed with its embedded documents' strings read apart.
//!
//! A dashboard's `dashboard_json` is a ~4 KB JSON document inside a JSON string, with a `\"`
//! every few bytes: serde_json decodes it escape by escape, the largest part of parsing a
//! listed dashboard. [`value`] finds each such string among the object's top-level members,
//! decodes it in one tight loop ([`unescape`]), has serde_json parse the rest of the object
//! with `""` in its place, and puts the decoded text back: the `Value` serde_json's own
//! reading gives. Anything it does not take on (an escaped key at the top level, a field twice,
//! a `\u` surrogate, text that is not JSON) answers `None` and serde_json reads the whole text;
//! a property test holds the two to equality.

use std::ops::Range;

use serde_json::Value;

use crate::api::registry::{EmbeddedJson, Kind};
use crate::util::json_string::{string_end, unescape};

/// The object `raw` as `serde_json::from_slice` parses it; `None` when its kind has no
/// embedded document, it has none as a string, or this way does not take the text on.
pub(super) fn value(kind: Kind, raw: &[u8]) -> Option<Value> {
    let fields = kind.def().embedded_json;
    if fields.is_empty() {
        return None;
    }
    let documents = documents(raw, fields)?;
    if documents.is_empty() {
        return None;
    }
    let mut rest = Vec::with_capacity(256);
    let mut texts = Vec::with_capacity(documents.len());
    let mut copied = 0;
    for (field, range, text) in documents {
        rest.extend_from_slice(raw.get(copied..range.start)?);
        rest.extend_from_slice(b"\"\"");
        copied = range.end;
        texts.push((field, text));
    }
    rest.extend_from_slice(raw.get(copied..)?);
    let mut value: Value = serde_json::from_slice(&rest).ok()?;
    for (field, text) in texts {
        match value.get_mut(field)? {
            slot @ Value::String(_) => *slot = Value::String(text),
            _ => return None,
        }
    }
    Some(value)
}

/// An embedded document's field, the range of its string in the object's text (quotes
/// included) and the string decoded.
type Document = (&'static str, Range<usize>, String);

/// The top-level members of the object `raw` named (as written, without escapes) by one of
/// `fields` and holding a string.
/// `None` when the text does not start as an object, a top-level key has an escape (it could
/// name a field), or a field is there twice. Nothing else is checked: serde_json reads the
/// rest.
fn documents(raw: &[u8], fields: &[EmbeddedJson]) -> Option<Vec<Document>> {
    let mut at = skip_space(raw, 0);
    if raw.get(at) != Some(&b'{') {
        return None;
    }
    let mut found: Vec<Document> = Vec::new();
    let mut depth = 0usize;
    // The next string at depth 1 is a key: it follows `{` or `,` there.
    let mut key_next = false;
    loop {
        match *raw.get(at)? {
            b'"' => {
                let end = string_end(raw, at + 1)?;
                let key = &raw[at + 1..end - 1];
                at = end;
                if depth != 1 || !std::mem::take(&mut key_next) {
                    continue;
                }
                if key.contains(&b'\\') {
                    return None;
                }
                let Some(e) = fields.iter().find(|e| e.field.as_bytes() == key) else {
                    continue;
                };
                if found.iter().any(|(f, ..)| *f == e.field) {
                    return None;
                }
                let colon = skip_space(raw, at);
                let start = skip_space(raw, colon + 1);
                if raw.get(colon) == Some(&b':') && raw.get(start) == Some(&b'"') {
                    let (text, end) = unescape(raw, start + 1)?;
                    found.push((e.field, start..end, text));
                    at = end;
                }
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                key_next = true;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                key_next = false;
                if depth == 0 {
                    return Some(found);
                }
            }
            b',' => key_next = true,
            _ => {}
        }
        at += 1;
    }
}

fn skip_space(raw: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = raw.get(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use crate::api::registry::Kind;

    fn dashboard() -> Kind {
        Kind::named("Dashboard")
    }

    /// serde_json's reading, which [`super::value`] must give whenever it answers.
    fn slow(raw: &str) -> Option<Value> {
        serde_json::from_str(raw).ok()
    }

    #[test]
    fn a_listed_dashboard_is_read_apart_as_serde_json_reads_it() {
        let doc = "{\"a\":\"q{x=\\\"y\\\"} / \\\\ é 😀\\n\",\"b\":[1,{\"c\":null}]}";
        let raw = serde_json::to_string(&json!({
            "slug": "d", "name": "D\"", "collection": {"slug": "c", "dashboard_json": "x"},
            "dashboard_json": doc, "created_at": "t"
        }))
        .unwrap();
        assert_eq!(super::value(dashboard(), raw.as_bytes()), slow(&raw));
        // Escapes another server writes: `\/`, `\u` (either case, a pair for 😀 is left to
        // serde_json), spaces between the members.
        let other = raw
            .replace('/', "\\/")
            .replace('é', "\\u00E9")
            .replace(",\"dashboard_json\":", " ,\n \"dashboard_json\" : ");
        assert_eq!(super::value(dashboard(), other.as_bytes()), slow(&other));
        let pair = other.replace('😀', "\\ud83d\\ude00");
        assert_eq!(super::value(dashboard(), pair.as_bytes()), None);
        // Other kinds, and a dashboard without its document as a string, go serde_json's way.
        assert_eq!(super::value(Kind::named("Bucket"), raw.as_bytes()), None);
        for raw in [
            r#"{"slug":"d","dashboard_json":5}"#,
            r#"{"slug":"d"}"#,
            "[1]",
            "\"x\"",
        ] {
            assert_eq!(super::value(dashboard(), raw.as_bytes()), None, "{raw}");
        }
    }

    #[test]
    fn what_is_not_taken_on_is_left_to_serde_json() {
        for raw in [
            // An escaped key could name the field (the last of a repeated key wins).
            r#"{"dashboard_json":"a","dashboard\u005fjson":""}"#,
            r#"{"dashboard_json":"a","dashboard_json":""}"#,
            // The last one is not a string.
            r#"{"dashboard_json":"a","dashboard_json":{}}"#,
            "{\"dashboard_json\":\"a\u{1}\"}",
            r#"{"dashboard_json":"\x"}"#,
            r#"{"dashboard_json":"\u12"}"#,
            r#"{"dashboard_json":"\u+123"}"#,
            r#"{"dashboard_json":"\udc00"}"#,
            r#"{"dashboard_json":"a"} x"#,
            r#"{"dashboard_json":"a""#,
            r#"{"dashboard_json":"a\"#,
        ] {
            let got = super::value(dashboard(), raw.as_bytes());
            assert!(got.is_none() || got == slow(raw), "{raw}");
        }
        let bytes = b"{\"dashboard_json\":\"\xff\"}";
        assert_eq!(super::value(dashboard(), bytes), None);
    }

    /// Documents as a JSON string, written with the escapes any server may use.
    fn document() -> impl Strategy<Value = String> {
        let doc = prop::sample::select(vec![
            "",
            "{}",
            "{\"k\":\"v\"}",
            "{\"q\":\"up{a=\\\"b\\\"} / 2\",\"n\":[1,2.5,null]}",
            "{\"é\":\"ü 😀\",\"t\":\"\\\\ \\n \\t \\u0041\"}",
            "not json \u{7f} \u{1f}",
            "\"\\",
            "{\"metadata\":{\"created_at\":\"x\",\"name\":\"n/é\",\"version\":3},\"spec\":{\"a\":[0,{}]}}",
        ]);
        (doc, 0..4u8).prop_map(|(doc, style)| {
            let quoted = serde_json::to_string(doc).unwrap();
            match style {
                0 => quoted,
                1 => quoted.replace('/', "\\/").replace('é', "\\u00e9"),
                2 => quoted
                    .replace('ü', "\\u00FC")
                    .replace('😀', "\\ud83d\\ude00"),
                _ => quoted.replace("\\n", "\\u000a").replace("\\\"", "\\u0022"),
            }
        })
    }

    fn member() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "\"dashboard_json\"",
            "\"dashboard\\u005fjson\"",
            "\"slug\"",
            "\"a\\\"dashboard_json\"",
            "\"$serde_json::private::RawValue\"",
        ]);
        let value = prop_oneof![
            document(),
            document(),
            Just("5".to_string()),
            Just("null".to_string()),
            document().prop_map(|d| format!("{{\"dashboard_json\":{d}}}")),
            document().prop_map(|d| format!("[{d},\"dashboard_json\",{{}}]")),
        ];
        let space = prop::sample::select(vec!["", " ", "\n\t"]);
        (key, value, space).prop_map(|(k, v, s)| format!("{s}{k}{s}:{s}{v}{s}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whenever the way apart answers, it is serde_json's value; on any text (a prefix of
        /// one, a byte changed) it never panics.
        #[test]
        fn the_way_apart_reads_what_serde_json_reads(
            members in prop::collection::vec(member(), 0..5),
            cut in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let raw = format!("{{{}}}", members.join(","));
            let got = super::value(dashboard(), raw.as_bytes());
            prop_assert!(got.is_none() || got == slow(&raw), "{}", raw);
            // And what a plan works out from it: the slow way's digest.
            if let Some(value) = slow(&raw) {
                let listed = bytes::Bytes::from(raw.clone());
                let (object, _) = super::super::Object::listed(dashboard(), &listed).unwrap();
                prop_assert_eq!(object.digest(), crate::plan::normalize::digest(dashboard(), &value));
            }
            let mut changed = raw.clone().into_bytes();
            let at = cut.index(changed.len());
            for text in [raw.as_bytes()[..at].to_vec(), { changed[at] = byte; changed }] {
                let got = super::value(dashboard(), &text);
                prop_assert!(got.is_none() || got == serde_json::from_slice(&text).ok());
            }
        }
    }
}
