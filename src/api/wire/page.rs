//! Reading a list page as received: one pass, the items left as text.

use serde::Deserialize;

use crate::api::registry::Kind;

/// A list page as received, read in one pass without building its items: the next-page token
/// (empty on the last page) and each item as its own slice of the body (the wrapper key is the
/// kind's; an absent or `null` list is empty). A page of the API's compact shape is split by
/// its braces and quotes ([`split_items`]), any other by a JSON pass ([`read_list_page`], the
/// oracle of the first).
pub fn split_list_page(
    kind: Kind,
    body: &bytes::Bytes,
) -> Result<(String, Vec<bytes::Bytes>), String> {
    let (next, items) = split_list_page_items(kind, body)?;
    Ok((next, items.into_iter().map(|i| i.raw).collect()))
}

/// A listed object as its page was split: its text (a slice of the page), and its embedded
/// documents when the split decoded them on its way through the object (`None`: not read).
#[derive(Clone, Debug)]
pub struct Item {
    pub raw: bytes::Bytes,
    pub documents: Option<Vec<super::Document>>,
}

impl From<bytes::Bytes> for Item {
    fn from(raw: bytes::Bytes) -> Item {
        Item {
            raw,
            documents: None,
        }
    }
}

/// [`split_list_page`], each item with its embedded documents where the split read them.
pub fn split_list_page_items(
    kind: Kind,
    body: &bytes::Bytes,
) -> Result<(String, Vec<Item>), String> {
    let fields = kind.def().embedded_json;
    let compact = page_shape(kind, body).and_then(|(range, next)| {
        let items = split_items(&body[range.clone()], fields)?;
        let items = items.into_iter().map(|(r, documents)| Item {
            raw: body.slice(range.start + r.start..range.start + r.end),
            documents,
        });
        Some((next, items.collect()))
    });
    match compact {
        Some(split) => Ok(split),
        None => read_list_page(kind, body)
            .map(|(next, items)| (next, items.into_iter().map(Item::from).collect())),
    }
}

/// An object's range in a compact page's items, and its documents where the split read them.
type SplitItem = (std::ops::Range<usize>, Option<Vec<super::Document>>);

/// The objects of a compact page's item range ([`page_shape`]), found by their braces and
/// quotes alone, with no JSON pass: each a `{…}` whose braces outside strings balance, one
/// comma between two. `None` for anything else (whitespace, an item that is not an object, a
/// character out of place), and the page is read as JSON ([`read_list_page`]). Only where
/// each object is, is found here: each is read as JSON when it is worked out
/// (`plan::current::Object::listed`), and one that is not JSON fails there. A kind with
/// embedded documents has each object's read on the way ([`super::documents`]), where it
/// takes the object on.
fn split_items(
    items: &[u8],
    fields: &[crate::api::registry::EmbeddedJson],
) -> Option<Vec<SplitItem>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < items.len() {
        if items[at] != b'{' {
            return None;
        }
        let read = (!fields.is_empty())
            .then(|| super::documents(&items[at..], fields))
            .flatten();
        let (end, documents) = match read {
            Some((documents, len)) => (at + len, Some(documents)),
            None => (object_end(items, at)?, None),
        };
        out.push((at..end, documents));
        at = match items.get(end) {
            None => end,
            Some(b',') if end + 1 < items.len() => end + 1,
            Some(_) => return None,
        };
    }
    Some(out)
}

/// One past the brace that closes the object opened at `start`.
fn object_end(b: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut at) = (0usize, start);
    loop {
        let i = at + memchr::memchr3(b'"', b'{', b'}', b.get(at..)?)?;
        at = i + 1;
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => at = crate::util::json_string::string_end(b, at)?,
        }
    }
}

/// [`split_list_page`] by a JSON pass over the whole page (any shape a list page may have).
fn read_list_page(kind: Kind, body: &bytes::Bytes) -> Result<(String, Vec<bytes::Bytes>), String> {
    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
    use serde_json::value::RawValue;

    struct Page<'k>(&'k str);
    #[derive(Deserialize)]
    struct PageInfo {
        #[serde(default)]
        next_token: Option<String>,
    }
    type Split<'a> = (String, Option<Vec<&'a RawValue>>);
    impl<'de> DeserializeSeed<'de> for Page<'_> {
        type Value = Split<'de>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Page<'_> {
        type Value = Split<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list page (a JSON object)")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let (mut next, mut items) = (String::new(), None);
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == self.0 {
                    let list: Option<Vec<&'de RawValue>> = map.next_value().map_err(|_| {
                        serde::de::Error::custom(format!(
                            "\"{}\" in the list response is not an array",
                            self.0
                        ))
                    })?;
                    items = Some(list.unwrap_or_default());
                } else if key == "page" {
                    let page: Option<PageInfo> = map.next_value()?;
                    next = page.and_then(|p| p.next_token).unwrap_or_default();
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok((next, items))
        }
    }
    if body.is_empty() {
        return Ok((String::new(), Vec::new()));
    }
    let def = kind.def();
    let key = def.plural.unwrap_or(def.singular);
    let mut de = serde_json::Deserializer::from_slice(body);
    let (next, items) = Page(key).deserialize(&mut de).map_err(|e| {
        let message = e.to_string();
        if message.contains("in the list response is not an array") {
            format!("\"{key}\" in the list response is not an array")
        } else {
            format!("body is not a JSON list page ({e})")
        }
    })?;
    de.end()
        .map_err(|e| format!("body is not a JSON list page ({e})"))?;
    let items = items
        .unwrap_or_default()
        .into_iter()
        .map(|raw| body.slice_ref(raw.get().as_bytes()))
        .collect();
    Ok((next, items))
}

/// How far from a page's end its `page` object is looked for.
const TAIL: usize = 4096;

/// A list page of exactly the compact shape the API writes, read without a JSON pass:
/// `{"<wrapper>":[` at the start, then `],"page":{}}` or `],"page":{"next_token":"…"}}` at the
/// end; the range of the items between (the objects and the commas that separate them) and
/// the next-page token. `None` for any other shape (whitespace, other members, another order).
///
/// The same bytes between the same start and end are the same items, whatever they are, so
/// the range stands for the page's objects in a hash (`state::Answers`); what the objects
/// are is read by [`split_list_page`] when they are needed.
pub fn page_shape(kind: Kind, body: &[u8]) -> Option<(std::ops::Range<usize>, String)> {
    let def = kind.def();
    let key = def.plural.unwrap_or(def.singular);
    let start = 2 + key.len() + 3;
    let prefix = body.get(..start)?;
    if prefix.first() != Some(&b'{')
        || prefix.get(1) != Some(&b'"')
        || prefix.get(2..2 + key.len()) != Some(key.as_bytes())
        || prefix.get(2 + key.len()..) != Some(&b"\":["[..])
    {
        return None;
    }
    const PAGE: &[u8] = br#"],"page":{"#;
    let from = body.len().saturating_sub(TAIL).max(start);
    let end = from + memchr::memmem::rfind(body.get(from..)?, PAGE)?;
    let rest = &body[end + PAGE.len()..];
    let next = if rest == b"}}" {
        String::new()
    } else {
        let token = rest
            .strip_prefix(br#""next_token":"#)?
            .strip_suffix(b"}}")?;
        serde_json::from_slice::<String>(token).ok()?
    };
    Some((start..end, next))
}

/// The next-page token as a guess, when a page ends with it: the body's last member is an
/// object whose last member is `"next_token": "…"` (a list page whose `page` comes last, as
/// the API writes it). A guess only: it lets the next page be asked for while this one is
/// read through, and [`split_list_page`]'s token is the one that counts (a wrong guess costs
/// one wasted GET, never a wrong page). `None` when the end looks any other way, or on the
/// last page.
pub fn trailing_next_token(body: &[u8]) -> Option<String> {
    let end_of = |b: &[u8]| {
        b.iter()
            .rposition(|c| !c.is_ascii_whitespace())
            .map_or(0, |i| i + 1)
    };
    // Two closing braces at the end (whitespace allowed).
    let mut end = end_of(body);
    for _ in 0..2 {
        if end == 0 || body[end - 1] != b'}' {
            return None;
        }
        end = end_of(&body[..end - 1]);
    }
    let head = &body[..end];
    const KEY: &[u8] = br#""next_token""#;
    // The page object is small: only its last few kilobytes are looked at.
    let from = head.len().saturating_sub(TAIL);
    let key = from + memchr::memmem::rfind(&head[from..], KEY)?;
    // From the key on: the key, a colon and a string, and nothing else.
    let rest = head[key + KEY.len()..]
        .trim_ascii_start()
        .strip_prefix(b":")?;
    let token: String = serde_json::from_slice(rest).ok()?;
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_page_shape_is_read_without_a_json_pass() {
        let shape = |b: &str| {
            page_shape(Kind::named("Team"), b.as_bytes()).map(|(r, next)| (b[r].to_string(), next))
        };
        assert_eq!(
            shape(r#"{"teams":[{"slug":"a"},{"slug":"b"}],"page":{"next_token":"7465"}}"#),
            Some((r#"{"slug":"a"},{"slug":"b"}"#.into(), "7465".into()))
        );
        assert_eq!(
            shape(r#"{"teams":[{"slug":"a"}],"page":{}}"#),
            Some((r#"{"slug":"a"}"#.into(), String::new()))
        );
        assert_eq!(
            shape(r#"{"teams":[],"page":{}}"#),
            Some((String::new(), String::new()))
        );
        assert_eq!(
            shape(r#"{"teams":[],"page":{"next_token":"a\"b"}}"#),
            Some((String::new(), "a\"b".into()))
        );
        // An item that looks like the end is inside the range, the real end is the last one.
        assert_eq!(
            shape(r#"{"teams":[{"x":[1],"page":{}}],"page":{}}"#),
            Some((r#"{"x":[1],"page":{}}"#.into(), String::new()))
        );
        for other in [
            r#"{"teams": [], "page": {}}"#,
            r#"{"page":{},"teams":[]}"#,
            r#"{"buckets":[],"page":{}}"#,
            r#"{"teams":[],"page":{"next_token":"t","size":1}}"#,
            r#"{"teams":[],"page":{"next_token":7}}"#,
            r#"{"teams":[],"page":{}} "#,
            r#"{"teams":[],"page":{}"#,
            r#"{"teams":["#,
            r#"{"teams":[],"page":{"next_token":"t"}}}"#,
            "",
        ] {
            assert_eq!(shape(other), None, "{other}");
        }
    }

    #[test]
    fn a_trailing_token_is_guessed_and_nothing_else() {
        let guess = |b: &str| trailing_next_token(b.as_bytes());
        assert_eq!(
            guess(r#"{"teams":[{"slug":"a"}],"page":{"next_token":"7465"}}"#).as_deref(),
            Some("7465")
        );
        assert_eq!(
            guess("{\"teams\": [], \"page\": {\"next_token\" : \"a\\\"b\"} }\n").as_deref(),
            Some("a\"b")
        );
        // The last page, another member last, another shape: no guess.
        for none in [
            r#"{"teams":[],"page":{}}"#,
            r#"{"teams":[],"page":{"next_token":""}}"#,
            r#"{"page":{"next_token":"t"},"teams":[]}"#,
            r#"{"teams":[],"page":{"next_token":"t","size":2}}"#,
            r#"{"teams":[{"next_token":"t"}]}"#,
            r#"{"teams":[],"page":{"next_token":"t"}"#,
            r#"{"teams":[],"page":{"next_token":7}}"#,
            "",
            "}}",
            r#"{"teams":[],"page":{"next_token":"t}}"#,
        ] {
            assert_eq!(guess(none), None, "{none}");
        }
    }

    #[test]
    fn list_pages_read_without_their_items() {
        let split = |body: &'static [u8]| {
            split_list_page(Kind::named("Dashboard"), &bytes::Bytes::from_static(body))
        };
        let (next, items) =
            split(br#"{"dashboards": [{"slug": "a"}, {"slug": "b", "x": [1]}], "page": {"next_token": "t1"}, "other": {"a": 1}}"#)
                .unwrap();
        assert_eq!(next, "t1");
        assert_eq!(
            items,
            vec![&br#"{"slug": "a"}"#[..], &br#"{"slug": "b", "x": [1]}"#[..]]
        );
        assert_eq!(split(br#"{"page": {}}"#).unwrap(), (String::new(), vec![]));
        assert_eq!(
            split(br#"{"dashboards": null}"#).unwrap(),
            (String::new(), vec![])
        );
        assert_eq!(split(b"").unwrap(), (String::new(), vec![]));
        assert_eq!(
            split(br#"{"dashboards": {"slug": "a"}}"#).unwrap_err(),
            "\"dashboards\" in the list response is not an array"
        );
        assert!(split(b"<html>")
            .unwrap_err()
            .contains("not a JSON list page"));
        assert!(split(br#"{"dashboards": []} trailing"#)
            .unwrap_err()
            .contains("not a JSON list page"));
    }

    /// Pages a hostile or odd server may send: each read as JSON reads it (serde_json's
    /// `RawValue`), whatever its shape.
    #[test]
    fn hostile_pages_are_read_as_json_reads_them() {
        let split = |body: Vec<u8>| split_list_page(Kind::named("Team"), &bytes::Bytes::from(body));
        // A next-page token written inside an item's string is the item's text.
        let inside =
            br#"{"teams":[{"slug":"a","x":"],\"page\":{\"next_token\":\"t\"}}"}],"page":{}}"#;
        let (next, items) = split(inside.to_vec()).unwrap();
        assert_eq!(next, "");
        assert_eq!(
            items,
            vec![&br#"{"slug":"a","x":"],\"page\":{\"next_token\":\"t\"}}"}"#[..]]
        );
        // Escaped keys are the keys they decode to.
        let escaped = br#"{"te\u0061ms":[{"slug":"a"}],"p\u0061ge":{"next_\u0074oken":"t\u0031"}}"#;
        let (next, items) = split(escaped.to_vec()).unwrap();
        assert_eq!((next.as_str(), items.len()), ("t1", 1));
        // A key given twice: the last one counts, as in any JSON object read by serde_json.
        let twice = br#"{"teams":[{"slug":"a"}],"teams":[{"slug":"b"},{"slug":"c"}],"page":{"next_token":"x"},"page":{}}"#;
        let (next, items) = split(twice.to_vec()).unwrap();
        assert_eq!(next, "");
        assert_eq!(
            items,
            vec![&br#"{"slug":"b"}"#[..], &br#"{"slug":"c"}"#[..]]
        );
        // A huge string with braces, quotes and escapes is one item, byte for byte.
        let doc = "{\\\"}\\\\".repeat(200_000);
        let body =
            format!(r#"{{"teams":[{{"slug":"a","doc":"{doc}"}},{{"slug":"b"}}],"page":{{}}}}"#);
        let (_, items) = split(body.into_bytes()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].len(), doc.len() + r#"{"slug":"a","doc":""}"#.len());
        // Not JSON (an unterminated string, a raw control character in one, a trailing comma):
        // the page is refused.
        for bad in [
            &br#"{"teams":[{"slug":"a}],"page":{}}"#[..],
            b"{\"teams\":[{\"slug\":\"a\nb\"}],\"page\":{}}",
            br#"{"teams":[{"slug":"a"},],"page":{}}"#,
        ] {
            let got = split(bad.to_vec());
            assert!(got.is_err(), "{got:?}");
        }
    }

    #[test]
    fn compact_items_are_found_by_their_braces_and_quotes() {
        // A kind without documents, and one whose documents are read on the way: the same
        // objects.
        let fields = Kind::named("Dashboard").def().embedded_json;
        for fields in [&[][..], fields] {
            compact_items_found(fields);
        }
    }

    fn compact_items_found(fields: &[crate::api::registry::EmbeddedJson]) {
        let split = |items: &str| {
            split_items(items.as_bytes(), fields).map(|rs| {
                rs.into_iter()
                    .map(|(r, _)| items[r].to_string())
                    .collect::<Vec<_>>()
            })
        };
        let doc = r#"{"slug":"a","dashboard_json":"{\"x\":{\"}\":\"\\\\\"}}","l":[{"}":"{"}]}"#;
        assert_eq!(
            split(&format!("{doc},{{}},{doc}")),
            Some(vec![doc.to_string(), "{}".into(), doc.to_string()])
        );
        assert_eq!(split(""), Some(vec![]));
        // Anything but objects separated by single commas is left to the JSON pass.
        for other in [
            "{} ,{}",
            "{},",
            ",{}",
            "{},,{}",
            "[1]",
            "1",
            "{\"a\":1}}",
            "{\"a\":\"}",
            "{{}",
            "{\"a\":\"x\\\"}",
        ] {
            assert_eq!(split(other), None, "{other}");
        }
    }

    use proptest::prelude::*;

    fn compact_page(slugs: &[String], token: &str) -> Vec<u8> {
        let teams: Vec<serde_json::Value> = slugs
            .iter()
            .map(|s| serde_json::json!({"slug": s, "tags": [s, {"page": {}}]}))
            .collect();
        let page = if token.is_empty() {
            serde_json::json!({})
        } else {
            serde_json::json!({ "next_token": token })
        };
        serde_json::to_vec(&serde_json::json!({"teams": teams, "page": page})).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The compact shape read without a JSON pass is what the full read finds: the range
        /// holds exactly the objects, and the token is the same.
        #[test]
        fn the_shape_agrees_with_the_full_read(
            slugs in proptest::collection::vec("[a-z\"\\\\\\[\\]{},:]{0,10}", 0..5),
            token in "[ -~]{0,8}",
        ) {
            let body = bytes::Bytes::from(compact_page(&slugs, &token));
            let (range, next) = page_shape(Kind::named("Team"), &body).expect("the compact shape");
            let (split_next, items) = split_list_page(Kind::named("Team"), &body).unwrap();
            prop_assert_eq!(&next, &split_next);
            let joined: Vec<u8> = items.join(&b","[..]);
            prop_assert_eq!(&body[range], &joined[..]);
            if !token.is_empty() {
                prop_assert_eq!(trailing_next_token(&body), Some(token));
            }
        }

        /// Objects with nested objects, arrays and strings holding braces, quotes and escapes
        /// (a `dashboard_json` is a document in a string): the compact page is split by its
        /// braces and quotes into exactly the objects the JSON pass finds.
        #[test]
        fn compact_pages_split_without_a_json_pass_as_with_one(
            items in proptest::collection::vec(
                proptest::collection::btree_map("[a-z{}\\[\\]\"\\\\]{0,4}", "[ -~é{}\"\\\\\n]{0,12}", 0..4),
                0..5,
            ),
            token in "[a-z]{0,4}",
            dashboards in any::<bool>(),
        ) {
            let (kind, key) = match dashboards {
                true => (Kind::named("Dashboard"), "dashboards"),
                false => (Kind::named("Team"), "teams"),
            };
            let objects: Vec<serde_json::Value> = items
                .iter()
                .map(|m| {
                    let doc = serde_json::to_string(m).unwrap();
                    serde_json::json!({"slug": "s", "dashboard_json": doc, "nested": {"dashboard_json": "x", "m": m, "l": [m, [{}]]}})
                })
                .collect();
            let page = if token.is_empty() { serde_json::json!({}) } else { serde_json::json!({"next_token": token}) };
            let body = bytes::Bytes::from(serde_json::to_vec(&serde_json::json!({key: objects, "page": page})).unwrap());
            let (range, _) = page_shape(kind, &body).expect("the compact shape");
            prop_assert!(split_items(&body[range], kind.def().embedded_json).is_some());
            let (next, items) = split_list_page_items(kind, &body).unwrap();
            let raws: Vec<bytes::Bytes> = items.iter().map(|i| i.raw.clone()).collect();
            prop_assert_eq!((next, raws), read_list_page(kind, &body).unwrap());
            // The documents read on the way are the objects' own, decoded as serde_json does.
            for item in &items {
                prop_assert_eq!(item.documents.is_some(), dashboards);
                for (field, range, text) in item.documents.iter().flatten() {
                    let object: serde_json::Value = serde_json::from_slice(&item.raw).unwrap();
                    prop_assert_eq!(&object[field], &serde_json::json!(text));
                    let quoted: String = serde_json::from_slice(&item.raw[range.clone()]).unwrap();
                    prop_assert_eq!(&quoted, text);
                }
            }
        }

        /// Any one byte changed, the page split by its braces and quotes: when every object it
        /// finds is JSON, the JSON pass reads the same objects and token (else an object fails
        /// where it is worked out).
        #[test]
        fn an_edited_compact_page_splits_as_the_json_pass_or_an_item_fails(
            slugs in proptest::collection::vec("[a-z\"\\\\{}]{0,6}", 1..4),
            at in any::<prop::sample::Index>(),
            byte in prop::sample::select(b"{}[]\",:\\ a0".to_vec()),
            dashboards in any::<bool>(),
        ) {
            let (kind, mut body) = match dashboards {
                // The same objects as dashboards, each tag list a document in a string.
                true => {
                    let page: serde_json::Value = serde_json::from_slice(&compact_page(&slugs, "t")).unwrap();
                    let items: Vec<serde_json::Value> = page["teams"].as_array().unwrap().iter()
                        .map(|t| serde_json::json!({"slug": t["slug"], "dashboard_json": t["tags"].to_string(), "tags": t["tags"]}))
                        .collect();
                    (Kind::named("Dashboard"), serde_json::to_vec(&serde_json::json!({"dashboards": items, "page": page["page"]})).unwrap())
                }
                false => (Kind::named("Team"), compact_page(&slugs, "t")),
            };
            let i = at.index(body.len());
            body[i] = byte;
            let body = bytes::Bytes::from(body);
            if let Ok((next, items)) = split_list_page(kind, &body) {
                if items.iter().all(|i| serde_json::from_slice::<serde::de::IgnoredAny>(i).is_ok()) {
                    prop_assert_eq!((next, items), read_list_page(kind, &body).unwrap());
                }
            }
        }

        /// Any one byte changed: no panic, and where both readings take the page they agree on
        /// the token (the guess and the shape are never trusted over a page the full read
        /// refuses or reads otherwise).
        #[test]
        fn an_edited_page_never_panics_and_never_disagrees(
            slugs in proptest::collection::vec("[a-z\"\\\\]{0,6}", 0..3),
            token in "[a-z]{0,4}",
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut body = compact_page(&slugs, &token);
            let i = at.index(body.len());
            body[i] = byte;
            let body = bytes::Bytes::from(body);
            let shape = page_shape(Kind::named("Team"), &body);
            let _ = trailing_next_token(&body);
            if let (Some((_, next)), Ok((split_next, _))) = (shape, split_list_page(Kind::named("Team"), &body)) {
                prop_assert_eq!(next, split_next);
            }
        }
    }
}
