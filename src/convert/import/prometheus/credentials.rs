//! The credentials of an Alertmanager configuration: each written as `${env:NAME}` (a name
//! once), and any copy of one in another field removed (never the literal, anywhere).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::super::{Report, Source, Variable};
use super::config::Config;

/// The credentials met so far: each variable once (a second credential that would take a
/// taken name gets `_2`, ...), and one credential (a global one) one variable however often
/// it is used.
#[derive(Default)]
pub(super) struct Credentials {
    taken: BTreeSet<String>,
    by_pointer: BTreeMap<String, String>,
    /// Each credential's value as it is in the escaped configuration (what a copy of it in
    /// another field would hold), with its variable.
    pub(super) literals: Vec<(String, String)>,
}

impl Credentials {
    /// `${env:NAME}` for the credential at `pointer`, its literal registered as a secret and
    /// the variable recorded in the report.
    pub(super) fn reference(
        &mut self,
        config: &Config,
        pointer: &str,
        name: String,
        holds: String,
        report: &mut Report,
    ) -> Value {
        if let Some(known) = self.by_pointer.get(pointer) {
            return Value::String(format!("${{env:{known}}}"));
        }
        let mut unique = name.clone();
        let mut n = 1;
        while !self.taken.insert(unique.clone()) {
            n += 1;
            unique = format!("{name}_{n}");
        }
        if let Some(Value::String(literal)) = config.get(pointer) {
            // As written in the input (the configuration is escaped: `manifest::escape`).
            crate::util::output::register_secret(&crate::manifest::unescape(literal));
            self.literals.push((literal.clone(), unique.clone()));
        }
        self.by_pointer.insert(pointer.to_string(), unique.clone());
        report.variables.push(Variable {
            name: unique.clone(),
            source: config.source(pointer),
            holds,
        });
        Value::String(format!("${{env:{unique}}}"))
    }
}

/// What a copy of a credential in another field (a title that quotes the webhook, an e-mail
/// text with the token) is replaced with (red team D25: never the literal, anywhere).
const REMOVED: &str = "[credential removed]";

/// Every copy of a credential in a string of `spec` replaced by [`REMOVED`], each reported.
pub(super) fn strip_copies(
    spec: &mut Value,
    literals: &[(String, String)],
    file: &str,
    report: &mut Report,
) {
    // Short values (a port, `true`) would match everywhere; a credential is longer.
    const LONG_ENOUGH: usize = 8;
    let slug = spec
        .get("slug")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut found: Vec<(String, String)> = Vec::new();
    walk_strings(spec, "", &mut |path, text| {
        for (literal, variable) in literals.iter().filter(|(l, _)| l.len() >= LONG_ENOUGH) {
            if text.contains(literal.as_str()) {
                *text = text.replace(literal.as_str(), REMOVED);
                found.push((path.to_string(), variable.clone()));
            }
        }
    });
    for (path, variable) in found {
        report.note(
            &Source {
                file: file.to_string(),
                line: 1,
            },
            format!("notifier {slug}"),
            format!("`{path}` held the credential of ${{env:{variable}}} in clear: written as `{REMOVED}`"),
        );
    }
}

fn walk_strings(value: &mut Value, path: &str, f: &mut impl FnMut(&str, &mut String)) {
    match value {
        Value::String(s) => f(path, s),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk_strings(item, &format!("{path}[{i}]"), f);
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let at = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk_strings(v, &at, f);
            }
        }
        _ => {}
    }
}
