//! Secret fields: which fields of a kind hold credentials (docs/product.md §2), derived from
//! the description once per kind, like references, and found in objects by one walk.
//!
//! A field is secret when its name is in [`SECRET_FIELDS`] (at any depth), when it is a Slack
//! config's `api_url`, or when the description calls it write-only or says it reads back as
//! `**REDACTED**`. Paths are dotted, `[]` marking every element of an array
//! (`webhook.basic_auth.password`, `slack.actions[].token`).

use serde_json::{Map, Value};

use super::overrides::SECRET_FIELDS;
use crate::util::jsonpath::escape_pointer;

/// What a target answers for a secret it keeps (and what, written back, keeps it).
pub const REDACTED: &str = "**REDACTED**";

/// A current secret the target answered in clear that differs from the manifest's (or that no
/// manifest sets): what the plan holds instead of the value.
pub const CHANGED: &str = "(sensitive value changed)";
/// How a secret field's value is shown.
pub const SHOWN: &str = "(sensitive)";
/// What a plan shows for a literal secret of a base revision that changed (`--base`), never
/// its text.
pub const LITERAL_AT_BASE: &str = "(a literal)";

/// Where a secret comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretRef<'a> {
    Env(&'a str),
    File(&'a str),
}

/// The reference a whole value is (`${env:NAME}`, `${file:PATH}`), if it is one.
pub fn parse_reference(text: &str) -> Option<SecretRef<'_>> {
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    if let Some(name) = inner.strip_prefix("env:") {
        let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        return ok.then_some(SecretRef::Env(name));
    }
    let path = inner.strip_prefix("file:")?;
    (!path.is_empty() && !path.contains('}')).then_some(SecretRef::File(path))
}

/// Every secret path of a definition, depth first in property order (the walk is bounded:
/// `registry::walk`; a description too deep for it is warned about by the reference walk,
/// which meets the same limits).
pub(super) fn paths(defs: &Map<String, Value>, def: &Value) -> Vec<String> {
    // A Slack config's `api_url` depends on the field it is under: reused per that.
    let mut walk = super::walk::Walk::new(
        defs,
        |parent| u8::from(parent == "slack"),
        |at: super::walk::At<'_>, field: &str, sub: &Value| {
            if is_secret(field, sub, at.parent, at.definition) {
                super::walk::Step::Found("", ())
            } else {
                super::walk::Step::Descend
            }
        },
    );
    walk.fields(def)
        .into_iter()
        .map(|(path, ())| path)
        .collect()
}

fn is_secret(field: &str, schema: &Value, parent: &str, definition: Option<&str>) -> bool {
    if SECRET_FIELDS.contains(&field) {
        return true;
    }
    let slack = parent == "slack" || definition.is_some_and(|d| d.ends_with("SlackConfig"));
    if slack && field == "api_url" {
        return true;
    }
    let said = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    said.contains("write-only") || said.contains("writeonly") || said.contains(REDACTED)
}

/// One secret value found in an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundSecret {
    /// JSON pointer of the value (`/webhook/basic_auth/password`).
    pub pointer: String,
    /// Dotted path with indices (`slack.actions[0].token`).
    pub path: String,
    /// The secret path of the registry it was found at (`slack.actions[].token`).
    pub field: &'static str,
    pub value: String,
}

/// Every non-empty string an object holds at the given secret paths, in path order.
pub fn find(paths: &'static [&'static str], object: &Value) -> Vec<FoundSecret> {
    let mut out = Vec::new();
    for field in paths {
        visit(
            object,
            field,
            String::new(),
            String::new(),
            &mut |p, d, v| {
                if let Value::String(s) = v {
                    if !s.is_empty() {
                        out.push(FoundSecret {
                            pointer: p.to_string(),
                            path: d.to_string(),
                            field,
                            value: s.clone(),
                        });
                    }
                }
            },
        );
    }
    out
}

fn visit(
    value: &Value,
    rest: &str,
    pointer: String,
    dotted: String,
    f: &mut dyn FnMut(&str, &str, &Value),
) {
    if rest.is_empty() {
        f(&pointer, &dotted, value);
        return;
    }
    let (first, rest) = rest.split_once('.').unwrap_or((rest, ""));
    let (name, is_array) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (first, false),
    };
    let Some(child) = value.as_object().and_then(|m| m.get(name)) else {
        return;
    };
    let pointer = format!("{pointer}/{}", escape_pointer(name));
    let dotted = if dotted.is_empty() {
        name.to_string()
    } else {
        format!("{dotted}.{name}")
    };
    if is_array {
        if let Value::Array(items) = child {
            for (i, item) in items.iter().enumerate() {
                visit(
                    item,
                    rest,
                    format!("{pointer}/{i}"),
                    format!("{dotted}[{i}]"),
                    f,
                );
            }
        }
    } else {
        visit(child, rest, pointer, dotted, f);
    }
}

/// Whether a dotted path with indices (`slack.actions[0].token`, as a plan's field changes
/// name them) is one of the secret paths (`slack.actions[].token`) or inside one.
pub fn is_secret_path(paths: &[&str], dotted: &str) -> bool {
    let bare = strip_indices(dotted);
    paths
        .iter()
        .any(|p| bare == *p || bare.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
}

/// The JSON pointers of every value an object holds at the given paths (present or not empty).
pub fn pointers_at(paths: &[&str], object: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for path in paths {
        visit(
            object,
            path,
            String::new(),
            String::new(),
            &mut |p, _, _| out.push(p.to_string()),
        );
    }
    out
}

/// `a[0].b[12].c` -> `a[].b[].c`.
pub fn strip_indices(dotted: &str) -> String {
    let mut out = String::with_capacity(dotted.len());
    let mut in_index = false;
    for c in dotted.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[]");
            }
            ']' => in_index = false,
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::registry::Kind;

    #[test]
    fn notifier_secrets_are_derived_at_any_depth() {
        let def = Kind::named("Notifier").def();
        for p in [
            "slack.api_url",
            "pagerduty.service_key",
            "pagerduty.routing_key",
            "ops_genie.api_key",
            "webhook.http_config.basic_auth.password",
            "victor_ops.api_key",
        ] {
            assert!(def.secrets.contains(&p), "{p} in {:?}", def.secrets);
        }
        assert!(!def.secrets.contains(&"slack.channel"));
        // Only a Slack config's api_url: an OpsGenie URL is not a credential.
        assert!(!def.secrets.contains(&"ops_genie.api_url"));
    }

    #[test]
    fn other_kinds_with_secrets() {
        let ec = Kind::named("ExternalConnection").def();
        assert!(
            ec.secrets.iter().any(|p| p.ends_with("client_secret")),
            "{:?}",
            ec.secrets
        );
        let action = Kind::named("LogScaleAction").def();
        assert!(action.secrets.iter().any(|p| p.ends_with("ingest_token")));
        let sa = Kind::named("ServiceAccount").def();
        assert_eq!(sa.secrets, &["token"]);
        assert!(Kind::named("Bucket").def().secrets.is_empty());
    }

    #[test]
    fn found_in_objects_and_matched_with_indices() {
        let object =
            serde_json::json!({"a": [{"token": "x"}, {"token": ""}], "b": {"password": "p"}});
        let paths: &'static [&'static str] = &["a[].token", "b.password"];
        let found = find(paths, &object);
        let got: Vec<_> = found
            .iter()
            .map(|f| (f.pointer.as_str(), f.path.as_str()))
            .collect();
        assert_eq!(
            got,
            [("/a/0/token", "a[0].token"), ("/b/password", "b.password")]
        );
        assert!(is_secret_path(paths, "a[3].token"));
        assert!(is_secret_path(paths, "b.password"));
        assert!(!is_secret_path(paths, "b.passwords"));
        assert!(!is_secret_path(paths, "a[0].name"));
    }
}
