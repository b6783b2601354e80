//! A listed object's text parsed with its embedded documents' strings read apart.
//!
//! A dashboard's `dashboard_json` is a ~4 KB JSON document inside a JSON string, with a `\"`
//! every few bytes: serde_json decodes it escape by escape, the largest part of parsing a
//! listed dashboard. [`value`] finds each such string among the object's top-level members,
//! decoded in one tight loop (`api::wire::documents`, which a page's split calls on its way
//! through each object), has serde_json parse the rest of the object
//! with `""` in its place, and puts the decoded text back: the `Value` serde_json's own
//! reading gives. Anything it does not take on (an escaped key at the top level, a field twice,
//! a `\u` surrogate, text that is not JSON) answers `None` and serde_json reads the whole text;
//! a property test holds the two to equality.

use serde_json::Value;

use crate::api::registry::Kind;
use crate::api::wire::Document;

/// The object `raw` as `serde_json::from_slice` parses it; `None` when its kind has no
/// embedded document, it has none as a string, or this way does not take the text on. Its
/// `documents`, when the page's split read them already (`api::wire::documents`), are not
/// read again.
pub(super) fn value(kind: Kind, raw: &[u8], documents: Option<Vec<Document>>) -> Option<Value> {
    let fields = kind.def().embedded_json;
    if fields.is_empty() {
        return None;
    }
    let documents = match documents {
        Some(documents) => documents,
        None => crate::api::wire::documents(raw, fields)?.0,
    };
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
        assert_eq!(super::value(dashboard(), raw.as_bytes(), None), slow(&raw));
        // Escapes another server writes: `\/`, `\u` (either case, a pair for 😀 is left to
        // serde_json), spaces between the members.
        let other = raw
            .replace('/', "\\/")
            .replace('é', "\\u00E9")
            .replace(",\"dashboard_json\":", " ,\n \"dashboard_json\" : ");
        assert_eq!(
            super::value(dashboard(), other.as_bytes(), None),
            slow(&other)
        );
        let pair = other.replace('😀', "\\ud83d\\ude00");
        assert_eq!(super::value(dashboard(), pair.as_bytes(), None), None);
        // Other kinds, and a dashboard without its document as a string, go serde_json's way.
        assert_eq!(
            super::value(Kind::named("Bucket"), raw.as_bytes(), None),
            None
        );
        for raw in [
            r#"{"slug":"d","dashboard_json":5}"#,
            r#"{"slug":"d"}"#,
            "[1]",
            "\"x\"",
        ] {
            assert_eq!(
                super::value(dashboard(), raw.as_bytes(), None),
                None,
                "{raw}"
            );
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
            let got = super::value(dashboard(), raw.as_bytes(), None);
            assert!(got.is_none() || got == slow(raw), "{raw}");
        }
        let bytes = b"{\"dashboard_json\":\"\xff\"}";
        assert_eq!(super::value(dashboard(), bytes, None), None);
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
            let got = super::value(dashboard(), raw.as_bytes(), None);
            prop_assert!(got.is_none() || got == slow(&raw), "{}", raw);
            // And what a plan works out from it: the slow way's digest.
            if let Some(value) = slow(&raw) {
                let listed = bytes::Bytes::from(raw.clone());
                let (object, _) = super::super::Object::listed(dashboard(), &listed, None).unwrap();
                prop_assert_eq!(object.digest(), crate::plan::normalize::digest(dashboard(), &value));
            }
            let mut changed = raw.clone().into_bytes();
            let at = cut.index(changed.len());
            for text in [raw.as_bytes()[..at].to_vec(), { changed[at] = byte; changed }] {
                let got = super::value(dashboard(), &text, None);
                prop_assert!(got.is_none() || got == serde_json::from_slice(&text).ok());
            }
        }
    }
}
