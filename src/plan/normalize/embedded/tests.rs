use proptest::prelude::*;
use serde_json::{json, Value};

use super::super::{normalize, Described};
use crate::api::registry::Kind;

fn comparable_bytes(kind: Kind, object: &Value) -> Vec<u8> {
    super::super::comparable::bytes(kind, object, Described::Unknown, &[])
}

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
        assert!(
            super::super::comparable::embedded_apart(kind, &object, Described::Unknown, &[])
                .is_some()
        );
    }
}

#[test]
fn documents_in_any_key_order_are_taken_on() {
    // A server's document (keys sorted, copied through) and a manifest's (keys in the
    // user's order, put in order as each object closes): the same bytes, the fast way.
    let sorted = r#"{"kind":"Dashboard","metadata":{"created_at":"x","name":"d"},"spec":{"a":[{"k":0,"q":"up{a=\"b\"}"},{"x":[{"y":""}]}],"b":{"c":0}}}"#;
    let unsorted = r#"{"spec":{"b":{"c":0},"a":[{"q":"up{a=\"b\"}","k":0},{"x":[{"y":""}]}]},"metadata":{"name":"d","created_at":"x"},"kind":"Dashboard"}"#;
    let want = r#"{"kind":"Dashboard","metadata":{"name":"d"},"spec":{"a":[{"q":"up{a=\"b\"}"},{"x":[{"y":""}]}]}}"#;
    let volatile = Kind::named("Dashboard").def().embedded_json[0].volatile;
    for text in [sorted, unsorted] {
        let object = dashboard(text);
        assert_eq!(
            comparable_bytes(Kind::named("Dashboard"), &object),
            slow(Kind::named("Dashboard"), &object)
        );
        let bytes = super::comparable(text, volatile)
            .expect("taken on")
            .expect("not zero");
        assert_eq!(String::from_utf8(bytes).unwrap(), want);
    }
}

#[test]
fn a_key_with_a_dot_is_no_volatile_path() {
    // `metadata.version` is volatile as a path (the member `version` of `metadata`), never
    // as a key: a document's own `"metadata.version"` is compared like any other member.
    let text = r#"{"metadata.version":"2","metadata":{"version":3,"name":"d"}}"#;
    let object = dashboard(text);
    let bytes = comparable_bytes(Kind::named("Dashboard"), &object);
    assert_eq!(bytes, slow(Kind::named("Dashboard"), &object));
    let bytes = String::from_utf8(bytes).unwrap();
    assert!(
        bytes.contains(r#""dashboard_json":{"metadata":{"name":"d"},"metadata.version":"2"}"#),
        "{bytes}"
    );
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
        "metadata.version",
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

    /// What a lean load's check rests on (`manifest::Lean::read_document`: a document the
    /// reader takes on is not parsed again): the reader takes on only text serde_json reads,
    /// and the value's type is its first byte's.
    #[test]
    fn the_reader_takes_on_only_what_serde_json_reads(
        text in text(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut changed = text.clone().into_bytes();
        if !changed.is_empty() {
            let at = cut.index(changed.len());
            changed[at] = byte;
        }
        let changed = String::from_utf8_lossy(&changed).into_owned();
        let prefix: String = text.chars().take(cut.index(text.chars().count() + 1)).collect();
        for text in [text, changed, prefix] {
            if super::comparable(&text, &[]).is_none() {
                continue;
            }
            let parsed: Result<serde_json::Value, _> = serde_json::from_str(&text);
            prop_assert!(parsed.is_ok(), "taken on, not JSON: {}", text);
            let first = text.trim_start_matches([' ', '\t', '\n', '\r']).as_bytes().first();
            prop_assert_eq!(parsed.unwrap().is_object(), first == Some(&b'{'), "{}", text);
        }
    }
}
