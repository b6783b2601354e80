//! The embedded documents of a listed object's text (`dashboard_json`), found and decoded in
//! the one pass that finds where the object ends.
//!
//! A dashboard's document is a ~4 KB JSON text inside a JSON string, with a `\"` every few
//! bytes: most of a page's bytes. Splitting a page finds each object's end, which means
//! reading that string to its closing quote; [`documents`] decodes it on the way
//! (`json_string::unescape`), so that the object's reader (`plan::current::listed`) does not
//! read it a second time.

use std::ops::Range;

use crate::api::registry::EmbeddedJson;
use crate::util::json_string::{string_end, unescape};

/// An embedded document's field, the range of its string in the object's text (quotes
/// included) and the string decoded.
pub type Document = (&'static str, Range<usize>, String);

/// The top-level members of the object at the start of `raw` named (as written, without
/// escapes) by one of `fields` and holding a string, decoded; and one past the brace that
/// closes the object, braces counted as `page::object_end` counts them (outside strings).
/// `None` when the text does not start as an object, a top-level key has an escape (it could
/// name a field), a field is there twice, a document's string is not one `unescape` takes
/// on, or the object does not end. Nothing else is checked: serde_json reads the rest.
pub fn documents(raw: &[u8], fields: &[EmbeddedJson]) -> Option<(Vec<Document>, usize)> {
    let mut at = skip_space(raw, 0);
    if raw.get(at) != Some(&b'{') {
        return None;
    }
    let mut found: Vec<Document> = Vec::new();
    // Lists and objects open (for the keys: depth 1 is the object's own members), and
    // objects alone (for the end).
    let (mut depth, mut braces) = (0usize, 0usize);
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
            b'{' => {
                depth += 1;
                braces += 1;
                key_next = true;
            }
            b'[' => {
                depth += 1;
                key_next = true;
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                braces -= 1;
                key_next = false;
                if braces == 0 {
                    return Some((found, at + 1));
                }
            }
            b']' => {
                depth = depth.checked_sub(1)?;
                key_next = false;
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
