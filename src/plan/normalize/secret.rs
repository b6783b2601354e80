//! How a secret field is shown in a plan (`(sensitive)`), whatever form the plan takes.

use serde_json::Value;

use super::FieldChange;
use crate::api::registry::Kind;

/// A field change as shown: a secret field's values as [`crate::api::registry::SHOWN`] (a changed one as
/// [`crate::api::registry::CHANGED`]), and the secret members of an object shown whole masked the same way.
pub fn mask(kind: Kind, f: &FieldChange) -> Option<FieldChange> {
    let paths = kind.def().secrets;
    if paths.is_empty() {
        return None;
    }
    if crate::api::registry::is_secret_path(paths, &f.path) {
        // A changed reference (`--base`) is shown as both references: never a value.
        if reference_change(f).is_some() {
            return Some(f.clone());
        }
        let changed = f.before.is_some() && f.after.is_some();
        let shown = |v: &Option<Value>| {
            v.as_ref().map(|_| {
                Value::String(
                    if changed {
                        crate::api::registry::CHANGED
                    } else {
                        crate::api::registry::SHOWN
                    }
                    .into(),
                )
            })
        };
        return Some(FieldChange {
            path: f.path.clone(),
            before: shown(&f.before),
            after: shown(&f.after),
        });
    }
    // An object holding secret members (a create's top-level `slack`).
    let prefix = format!("{}.", crate::api::registry::strip_indices(&f.path));
    let inner: Vec<&'static str> = paths
        .iter()
        .filter_map(|p| p.strip_prefix(prefix.as_str()))
        .collect();
    if inner.is_empty() {
        return None;
    }
    let masked = |v: &Option<Value>| {
        v.as_ref().map(|v| {
            let mut v = v.clone();
            for found in crate::api::registry::pointers_at(&inner, &v) {
                if let Some(slot) = v.pointer_mut(&found) {
                    *slot = Value::String(crate::api::registry::SHOWN.into());
                }
            }
            v
        })
    };
    let (before, after) = (masked(&f.before), masked(&f.after));
    if before == f.before && after == f.after {
        return None;
    }
    Some(FieldChange {
        path: f.path.clone(),
        before,
        after,
    })
}

/// The two references of a secret field whose reference changed (`--base REV`): what it held
/// at REV and what it holds now, both `${env:…}`/`${file:…}` texts.
pub fn reference_change(f: &FieldChange) -> Option<(&str, &str)> {
    let (Some(Value::String(before)), Some(Value::String(after))) = (&f.before, &f.after) else {
        return None;
    };
    // A literal of REV replaced (`--base`) shows as `(a literal)`, never its text.
    let was = crate::api::registry::parse_reference(before).is_some()
        || before == crate::api::registry::LITERAL_AT_BASE;
    let both = was && crate::api::registry::parse_reference(after).is_some();
    (both && before != after).then_some((before.as_str(), after.as_str()))
}
