//! The variables `export` and `pull` write secrets as (`${env:KIND_SLUG_FIELD}`), and the
//! variables a text names.

use serde_json::Value;

use super::{parse, REDACTED};
use crate::api::registry::Address;

/// The variable `export` and `pull` write for a secret: `${env:KIND_SLUG_FIELD}`, upper snake
/// case (`${env:NOTIFIER_ONCALL_SLACK_API_URL}`).
pub fn variable_for(address: &Address, path: &str) -> String {
    let slug = address.slug.as_deref().unwrap_or("");
    // A slug the upper snake case folds without loss (`on-call`) is written as it folds; any
    // other (`col_x`, `Col-X`, `a--b`) also gets a few hex digits of its hash, so two slugs that
    // fold alike never share one variable (red team D28: one webhook sent to two notifiers).
    let lossless = slug.split('-').all(|w| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    let slug = if lossless || slug.is_empty() {
        slug.to_string()
    } else {
        let hash = blake3::hash(slug.as_bytes()).to_hex();
        format!("{slug}_{}", &hash[..4])
    };
    let raw = format!("{}_{}_{}", snake(address.kind.name()), slug, path);
    let mut out = String::with_capacity(raw.len());
    let mut last_underscore = true;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
            last_underscore = false;
        } else if !last_underscore {
            out.push('_');
            last_underscore = true;
        }
    }
    out.trim_end_matches('_').to_string()
}

/// `ExternalConnection` -> `external_connection`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The `${env:NAME}` variables a text names (what a pulled file asks to be set), sorted.
pub fn env_variables(text: &str) -> std::collections::BTreeSet<String> {
    // What the loader reads as a reference: an escaped `$${env:…}` is text.
    crate::manifest::references(text)
        .into_iter()
        .filter_map(|body| {
            let name = body.strip_prefix("env:")?;
            let ok =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            ok.then(|| name.to_string())
        })
        .collect()
}

/// Writes references in place of the secrets of an object read from the target (what `export`
/// and `pull` write); the variables to set, sorted.
pub fn references_for_export(address: &Address, object: &mut Value) -> Vec<String> {
    let mut vars = Vec::new();
    for f in address.kind.def().secrets_in(object) {
        if parse(&f.value).is_some() {
            continue;
        }
        if f.value != REDACTED {
            // The value as the target has it (the spec is escaped: `manifest::escape`).
            crate::util::output::register_secret(&crate::manifest::unescape(&f.value));
        }
        let var = variable_for(address, &f.path);
        if let Some(slot) = object.pointer_mut(&f.pointer) {
            *slot = Value::String(format!("${{env:{var}}}"));
        }
        vars.push(var);
    }
    vars.sort();
    vars
}
