//! Checking a spec against its kind's schema, and the jsonschema crate's errors turned into
//! messages a user can act on (the dotted path, a "did you mean" for unknown fields).

use serde_json::Value;

use super::*;
use crate::util::jsonpath::pointer_to_path;

/// One problem found in a spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON pointer inside the spec of the offending node (for an unknown field: the field).
    pub pointer: String,
    /// The pointer locates a mapping key (unknown or read-only field) rather than a value.
    pub at_key: bool,
    pub message: String,
}

/// Checks a spec against its kind's definition (in the embedded description, or the target's
/// that added the kind); every problem with its JSON pointer, sorted by pointer.
pub fn check_spec(kind: Kind, spec: &Value) -> Vec<SchemaProblem> {
    Description::for_kind(kind).check_spec(kind, spec)
}

pub(super) fn field_name(pointer: &str) -> String {
    let path = pointer_to_path(pointer);
    if path.is_empty() {
        "spec".to_string()
    } else {
        path
    }
}

pub(super) fn describe(
    desc: &Description,
    kind: Kind,
    pointer: &str,
    error: &jsonschema::error::ValidationErrorKind,
    instance: &Value,
) -> Vec<SchemaProblem> {
    use jsonschema::error::ValidationErrorKind as K;
    let field = field_name(pointer);
    let one = |message: String| {
        vec![SchemaProblem {
            pointer: pointer.to_string(),
            at_key: false,
            message,
        }]
    };
    match error {
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                let child = format!("{pointer}/{}", crate::util::jsonpath::escape_pointer(name));
                let known = properties_at(desc, kind, pointer);
                let hint = crate::util::jsonpath::closest(name, &known)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                let place = if pointer.is_empty() {
                    format!("the {kind} definition")
                } else {
                    format!("`{field}`")
                };
                SchemaProblem {
                    pointer: child,
                    at_key: true,
                    message: format!("unknown field `{name}` in {place}{hint}"),
                }
            })
            .collect(),
        K::FalseSchema | K::Not { .. } => vec![SchemaProblem {
            pointer: pointer.to_string(),
            at_key: true,
            message: format!("`{field}` is read-only: the server sets it"),
        }],
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let at = if pointer.is_empty() {
                String::new()
            } else {
                format!(" in `{field}`")
            };
            one(format!("missing required field `{name}`{at}"))
        }
        K::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().map(str::to_string).unwrap_or(v.to_string()))
                        .collect()
                })
                .unwrap_or_default();
            one(format!(
                "`{field}`: {} is not one of {}",
                instance,
                allowed.join(", ")
            ))
        }
        K::Format { format } => one(format!(
            "`{field}`: {instance} is not a valid {}",
            match format.as_str() {
                "date-time" => "date-time (RFC 3339, such as 2024-01-01T12:00:00Z)",
                other => other,
            }
        )),
        K::Pattern { .. } => one(format!(
            "`{field}`: expected an integer (int64, written as a number or a string of digits), found {instance}"
        )),
        K::Type { kind: expected } => {
            let expected = match expected {
                jsonschema::error::TypeKind::Single(t) => article(&t.to_string()),
                jsonschema::error::TypeKind::Multiple(set) => {
                    let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                    if names.iter().any(|n| n == "string") && names.iter().any(|n| n == "integer")
                    {
                        "an integer (int64, as a number or a string of digits)".to_string()
                    } else {
                        names.join(" or ")
                    }
                }
            };
            one(format!(
                "`{field}`: expected {expected}, found {}",
                crate::util::jsonpath::type_name(instance)
            ))
        }
        K::Maximum { limit } | K::Minimum { limit } => one(format!(
            "`{field}`: {instance} is out of range for an {} (at {} {limit})",
            format_of_limit(limit),
            if matches!(error, K::Maximum { .. }) {
                "most"
            } else {
                "least"
            }
        )),
        other => one(format!("`{field}`: {}", other_message(other, instance))),
    }
}

pub(super) fn other_message(
    kind: &jsonschema::error::ValidationErrorKind,
    instance: &Value,
) -> String {
    format!("{instance} is invalid ({kind:?})")
}

pub(super) fn article(type_name: &str) -> String {
    match type_name {
        "object" => "a mapping".to_string(),
        "array" => "a list".to_string(),
        "integer" => "an integer".to_string(),
        other => format!("a {other}"),
    }
}

/// Whether a kind's definition has a top-level field of this name.
pub fn has_field(kind: Kind, name: &str) -> bool {
    definition(kind)
        .and_then(|d| d.get("properties"))
        .is_some_and(|p| p.get(name).is_some())
}

/// Names of the fields the swagger definition allows at a pointer inside a kind's spec.
pub(super) fn properties_at(desc: &Description, kind: Kind, pointer: &str) -> Vec<String> {
    let Some(mut node) = desc.definition(kind) else {
        return vec![];
    };
    for segment in pointer.split('/').skip(1) {
        node = desc.resolve(node);
        if let Some(items) = node.get("items") {
            if segment.bytes().all(|b| b.is_ascii_digit()) {
                node = items;
                continue;
            }
        }
        match node
            .get("properties")
            .and_then(|p| p.get(segment))
            .or_else(|| node.get("additionalProperties"))
        {
            Some(next) => node = next,
            None => return vec![],
        }
    }
    desc.resolve(node)
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}
