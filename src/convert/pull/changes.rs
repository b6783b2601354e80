//! What changed between a document as written and as wanted, as a list of member changes
//! (replace, insert, remove, append) by path: the one diff both minimal editors write from
//! (`edit` for YAML, `json_edit` for JSON).

use serde_json::{Map, Value};

/// One change to a document, by path of member names from the document's root.
#[derive(Debug, PartialEq)]
pub(super) enum Change {
    /// The member at `path` gets a new value.
    Replace { path: Vec<String>, value: Value },
    /// A new member at the end of the mapping at `parent`.
    Insert {
        parent: Vec<String>,
        key: String,
        value: Value,
    },
    /// The member at `path` goes.
    Remove { path: Vec<String> },
    /// `items` added at the end of the list at `path` (the items before them unchanged or
    /// changed in place); only a JSON text's edits ask for it ([`changes_appending`]).
    Append {
        path: Vec<String>,
        items: Vec<Value>,
    },
}

/// The changes from `written` to `wanted`, descending into mappings present in both (and not
/// empty in `written`), and into lists of one length whose changed items are such mappings
/// (a list item's path segment is its index); other lists and scalars change as a whole.
pub(super) fn changes(
    written: &Map<String, Value>,
    wanted: &Map<String, Value>,
    at: &[String],
    out: &mut Vec<Change>,
) {
    changes_in(written, wanted, at, out, false);
}

/// [`changes`], with items added at the end of a list as [`Change::Append`] (after the changes
/// of the items before them) instead of the whole list replaced.
pub(super) fn changes_appending(
    written: &Map<String, Value>,
    wanted: &Map<String, Value>,
    out: &mut Vec<Change>,
) {
    changes_in(written, wanted, &[], out, true);
}

fn changes_in(
    written: &Map<String, Value>,
    wanted: &Map<String, Value>,
    at: &[String],
    out: &mut Vec<Change>,
    appends: bool,
) {
    let child = |k: &String| {
        let mut p = at.to_vec();
        p.push(k.clone());
        p
    };
    for (k, w) in written {
        match (wanted.get(k), w) {
            (None, _) => out.push(Change::Remove { path: child(k) }),
            (Some(v), _) if v == w => {}
            (Some(Value::Object(v)), Value::Object(wm)) if !wm.is_empty() => {
                changes_in(wm, v, &child(k), out, appends)
            }
            (Some(Value::Array(v)), Value::Array(wl)) if items_descend(wl, v) => {
                item_changes(wl, v, &child(k), out, appends)
            }
            (Some(Value::Array(v)), Value::Array(wl))
                if appends
                    && !wl.is_empty()
                    && v.len() > wl.len()
                    && items_descend(wl, &v[..wl.len()]) =>
            {
                item_changes(wl, &v[..wl.len()], &child(k), out, appends);
                out.push(Change::Append {
                    path: child(k),
                    items: v[wl.len()..].to_vec(),
                });
            }
            (Some(v), _) => out.push(Change::Replace {
                path: child(k),
                value: v.clone(),
            }),
        }
    }
    for (k, v) in wanted.iter().filter(|(k, _)| !written.contains_key(*k)) {
        out.push(Change::Insert {
            parent: at.to_vec(),
            key: k.clone(),
            value: v.clone(),
        });
    }
}

/// Two lists of one length whose differing items are mappings (not empty as written), such
/// lists, or scalars: changed item by item, each in place.
fn items_descend(written: &[Value], wanted: &[Value]) -> bool {
    let scalar = |v: &Value| !matches!(v, Value::Object(_) | Value::Array(_));
    written.len() == wanted.len()
        && written.iter().zip(wanted).all(|(w, v)| match (w, v) {
            _ if w == v => true,
            (Value::Object(wm), Value::Object(_)) => !wm.is_empty(),
            (Value::Array(wl), Value::Array(vl)) => items_descend(wl, vl),
            _ => scalar(w) && scalar(v),
        })
}

/// The changes of two lists [`items_descend`] takes, an item's path segment its index.
fn item_changes(
    written: &[Value],
    wanted: &[Value],
    at: &[String],
    out: &mut Vec<Change>,
    appends: bool,
) {
    for (i, (w, v)) in written.iter().zip(wanted).enumerate() {
        let mut path = at.to_vec();
        path.push(i.to_string());
        match (w, v) {
            _ if w == v => {}
            (Value::Object(wm), Value::Object(vm)) => changes_in(wm, vm, &path, out, appends),
            (Value::Array(wl), Value::Array(vl)) => item_changes(wl, vl, &path, out, appends),
            _ => out.push(Change::Replace {
                path,
                value: v.clone(),
            }),
        }
    }
}
