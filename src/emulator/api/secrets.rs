//! The tenant's side of secret fields (docs/product.md §5): stored as written, answered
//! `**REDACTED**` once set (unless the tenant is an older one that answers them in clear), a
//! write of `**REDACTED**` keeps the stored secret, and a server-owned secret (a
//! ServiceAccount's token) generated on create and answered only by that create.

use serde_json::Value;

use crate::api::registry::{Kind, REDACTED};

/// A written `**REDACTED**` stands for the secret stored at the same place (and for nothing
/// when none is stored).
pub(super) fn keep_stored(kind: Kind, object: &mut Value, existing: Option<&Value>) {
    for f in kind.def().secrets_in(object) {
        if f.value != REDACTED {
            continue;
        }
        let stored = existing
            .and_then(|e| e.pointer(&f.pointer))
            .filter(|v| v.as_str() != Some(REDACTED))
            .cloned()
            .unwrap_or(Value::String(String::new()));
        if let Some(slot) = object.pointer_mut(&f.pointer) {
            *slot = stored;
        }
    }
}

/// Generates the server-owned secrets of a new object (a ServiceAccount's `token`), or keeps
/// those stored for an update.
pub(super) fn generate(kind: Kind, object: &mut Value, existing: Option<&Value>) {
    let def = kind.def();
    for path in def.secrets.iter().filter(|s| def.server_owned.contains(s)) {
        let Some(map) = object.as_object_mut() else {
            return;
        };
        let value = match existing.and_then(|e| e.get(*path)) {
            Some(stored) => stored.clone(),
            None => Value::String(format!(
                "sa_{:016x}{:016x}",
                fastrand::u64(..),
                fastrand::u64(..)
            )),
        };
        map.insert((*path).to_string(), value);
    }
}

/// An object as answered: every secret set `**REDACTED**` when `redact`, and a server-owned
/// secret left out unless `created` (the create's own answer).
pub(super) fn answered(kind: Kind, mut object: Value, redact: bool, created: bool) -> Value {
    let def = kind.def();
    for f in def.secrets_in(&object) {
        if def.server_owned.contains(&f.field) {
            if !created {
                if let Some(map) = object.as_object_mut() {
                    map.shift_remove(f.field);
                }
            }
            continue;
        }
        if redact {
            if let Some(slot) = object.pointer_mut(&f.pointer) {
                *slot = Value::String(REDACTED.into());
            }
        }
    }
    object
}

impl super::Api {
    /// A stored object as a read or a list answers it.
    pub(super) fn answered(&self, kind: Kind, object: Value) -> Value {
        answered(kind, object, self.redact_secrets, false)
    }
}
