//! The bytes a digest hashes (see [`super::digest`]): the JSON of an object's normalised form,
//! written straight from the object where it can be (`direct`), its embedded documents from
//! their texts (`embedded`).

use serde_json::Value;

use super::{direct, embedded, normalize_as, Described, Prepared};
use crate::api::registry::Kind;
use crate::api::semantics::Semantics;

/// The bytes a digest hashes: the JSON of the normalised form. An object with an embedded
/// document has the document's part written from its text ([`embedded::comparable`]) and the
/// rest normalised as usual: the same bytes, without a `Value` of the document.
pub(super) fn bytes(
    kind: Kind,
    object: &Value,
    described: Described,
    prepared: &[Prepared],
) -> Vec<u8> {
    bytes_vouched(kind, object, described, prepared).0
}

/// [`bytes`], and whether the way that wrote them vouches that the object holds no member
/// the embedded description lacks (`direct::comparable_vouched`; the slow way vouches for
/// nothing).
pub(super) fn bytes_vouched(
    kind: Kind,
    object: &Value,
    described: Described,
    prepared: &[Prepared],
) -> (Vec<u8>, bool) {
    // Written straight from the object where it can be (`direct`).
    let direct = || {
        let plain = kind.def().embedded_json.is_empty();
        plain.then(|| direct::comparable_vouched(kind, object, described, &[], &[]))?
    };
    embedded_apart(kind, object, described, prepared)
        .or_else(direct)
        .unwrap_or_else(|| {
            // A `Value` always serialises.
            let slow = normalize_as(kind, object, &[], described);
            (serde_json::to_vec(&slow).unwrap_or_default(), false)
        })
}

/// [`bytes_vouched`] with the embedded documents written from their texts (or the bytes
/// `prepared` holds for them); `None` when the kind has none, or a document (or the kind's
/// semantics) is not one this way takes on.
pub(super) fn embedded_apart(
    kind: Kind,
    object: &Value,
    described: Described,
    prepared: &[Prepared],
) -> Option<(Vec<u8>, bool)> {
    let def = kind.def();
    let Value::Object(map) = object else {
        return None;
    };
    if def.embedded_json.is_empty() {
        return None;
    }
    let semantics = Semantics::embedded().kind(kind);
    let mut docs: Vec<(&str, std::borrow::Cow<'_, [u8]>)> = Vec::new();
    for e in def.embedded_json {
        // Written apart only while nothing else of the normalisation reaches into the field.
        if def.server_owned.contains(&e.field) || semantics.reaches(e.field) {
            return None;
        }
        match map.get(e.field) {
            None => {}
            Some(Value::String(text)) if !text.is_empty() => {
                let read = match prepared.iter().find(|p| p.0 == e.field) {
                    Some((_, read)) => read.as_deref().map(std::borrow::Cow::Borrowed),
                    None => embedded::comparable(text, e.volatile)?.map(std::borrow::Cow::Owned),
                };
                if let Some(bytes) = read {
                    docs.push((e.field, bytes));
                }
            }
            Some(_) => return None,
        }
    }
    let fields: Vec<&str> = def.embedded_json.iter().map(|e| e.field).collect();
    let apart: Vec<(&str, &[u8])> = docs.iter().map(|(f, b)| (*f, b.as_ref())).collect();
    if let Some(written) = direct::comparable_vouched(kind, object, described, &apart, &fields) {
        return Some(written);
    }
    let is_embedded = |k: &str| def.embedded_json.iter().any(|e| e.field == k);
    let rest: serde_json::Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !is_embedded(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let Value::Object(rest) = normalize_as(kind, &Value::Object(rest), &[], described) else {
        return None;
    };
    // Both in key order (`tidy` sorted the rest): merged, as the whole would be written.
    docs.sort_by(|a, b| a.0.cmp(b.0));
    let mut docs = docs.into_iter().peekable();
    let mut out = Vec::with_capacity(docs.peek().map_or(256, |d| d.1.len() + 256));
    out.push(b'{');
    let mut first = true;
    let mut member = |out: &mut Vec<u8>, key: &str, value: Result<&Value, &[u8]>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        match value {
            Ok(v) => {
                let _ = serde_json::to_writer(&mut *out, v);
            }
            Err(bytes) => out.extend_from_slice(bytes),
        }
    };
    for (key, value) in &rest {
        while let Some((field, bytes)) = docs.next_if(|(f, _)| *f < key.as_str()) {
            member(&mut out, field, Err(&bytes));
        }
        member(&mut out, key, Ok(value));
    }
    for (field, bytes) in docs {
        member(&mut out, field, Err(&bytes));
    }
    out.push(b'}');
    Some((out, false))
}
