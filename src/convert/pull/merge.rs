//! The merge of a manifest's spec with the target's state (the module documentation of
//! `pull`): what compares equal stays as written, what differs is the state's, in the
//! manifest's order and form.

use super::*;

/// The manifest's spec (as written: embedded documents may be mappings) brought to the
/// current state; see the module documentation.
pub fn merged_spec(kind: Kind, written: &Value, current: &Value, ignore: &[IgnoreRule]) -> Value {
    // `written` and the state's manifest form hold text escaped as a manifest writes it
    // (`manifest::escape`); they are compared as the loader reads them.
    let mut sent = as_sent(kind, written);
    crate::manifest::unescape_strings(&mut sent);
    let desired = normalize(kind, &sent, ignore);
    let state = normalize(kind, current, ignore);
    let canonical = export::manifest_spec(kind, current);
    let (Value::Object(w), Value::Object(c)) = (written, &canonical) else {
        return canonical;
    };
    let embedded: Vec<&str> = kind.def().embedded_json.iter().map(|e| e.field).collect();
    let mut out = Map::new();
    for k in keys(w, c) {
        let (d, s) = (desired.get(k), state.get(k));
        let value = if embedded.contains(&k.as_str()) && d != s {
            // The written document parsed, merged like any object, then put back in the
            // form it was written in.
            let as_string = w.get(k).and_then(Value::as_str);
            let written_doc = match (w.get(k), as_string) {
                (_, Some(text)) => serde_json::from_str::<Value>(text).ok(),
                (other, None) => other.cloned(),
            };
            merge(written_doc.as_ref(), c.get(k), d, s).map(|doc| match as_string {
                // Only the members that changed, in the author's layout, when that can be done.
                Some(text) => written_doc
                    .as_ref()
                    .and_then(|old| json_edit::edited_text(text, old, &doc))
                    .map_or_else(|| json_text_like(text, &doc), Value::String),
                None => doc,
            })
        } else {
            merge(w.get(k), c.get(k), d, s)
        };
        if let Some(v) = value {
            out.insert(k.clone(), v);
        }
    }
    Value::Object(out)
}

/// `doc` as a JSON string in the form of `text`: pretty when it was written on several lines
/// (with its final newline), else on one line.
fn json_text_like(text: &str, doc: &Value) -> Value {
    if text.trim_end().contains('\n') {
        let mut pretty = serde_json::to_string_pretty(doc).unwrap_or_default();
        if text.ends_with('\n') {
            pretty.push('\n');
        }
        Value::String(pretty)
    } else {
        Value::String(doc.to_string())
    }
}

/// The keys of `first` in its order, then those only in `second` in theirs.
pub(super) fn keys<'a>(
    first: &'a Map<String, Value>,
    second: &'a Map<String, Value>,
) -> Vec<&'a String> {
    first
        .keys()
        .chain(second.keys().filter(|k| !first.contains_key(*k)))
        .collect()
}

/// One value of the merge: `written` as the manifest has it, `state` in canonical form,
/// `desired`/`current` their normalised forms.
fn merge(
    written: Option<&Value>,
    state: Option<&Value>,
    desired: Option<&Value>,
    current: Option<&Value>,
) -> Option<Value> {
    if desired == current {
        return written.cloned();
    }
    match (written, state) {
        (Some(Value::Object(w)), Some(Value::Object(s))) => {
            let mut out = Map::new();
            for k in keys(w, s) {
                let child = |v: Option<&'_ Value>| v.and_then(|v| v.get(k.as_str())).cloned();
                let (d, c) = (child(desired), child(current));
                if let Some(v) = merge(w.get(k), s.get(k), d.as_ref(), c.as_ref()) {
                    out.insert(k.clone(), v);
                }
            }
            Some(Value::Object(out))
        }
        (Some(w), Some(s)) => Some(reorder_like(s, w)),
        (None, Some(s)) => Some(s.clone()),
        (_, None) => None,
    }
}

/// `value` with the members of its objects in `like`'s order where `like` has them.
fn reorder_like(value: &Value, like: &Value) -> Value {
    match (value, like) {
        (Value::Object(v), Value::Object(l)) => {
            let mut out = Map::new();
            for k in keys(l, v) {
                if let Some(x) = v.get(k) {
                    let x = l.get(k).map_or_else(|| x.clone(), |lk| reorder_like(x, lk));
                    out.insert(k.clone(), x);
                }
            }
            Value::Object(out)
        }
        (Value::Array(v), Value::Array(l)) => Value::Array(
            v.iter()
                .enumerate()
                .map(|(i, x)| l.get(i).map_or_else(|| x.clone(), |li| reorder_like(x, li)))
                .collect(),
        ),
        _ => value.clone(),
    }
}
