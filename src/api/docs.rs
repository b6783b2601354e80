//! The manifest reference (`docs/manifests.md`), generated from the registry and the
//! embedded swagger so it cannot drift from what cfgctl checks. A test keeps the committed file
//! equal to [`reference_markdown`].

use std::fmt::Write as _;

use serde_json::Value;

use crate::api::registry::Op;
use crate::api::spec;

mod example;

/// The example manifest of every kind that can be created (`docs/manifests.md` shows each in
/// its kind's section): kind name and the file's text, in the registry's order.
pub fn examples() -> Vec<(&'static str, String)> {
    crate::api::registry::embedded_kinds()
        .into_iter()
        .filter(|d| d.full_ops.create)
        .map(|d| (d.name, example::manifest(d)))
        .collect()
}

fn ops(o: crate::api::registry::Ops) -> String {
    let names: Vec<&str> = Op::ALL
        .iter()
        .filter(|op| o.has(**op))
        .map(|op| op.as_str())
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn resolve(node: &'static Value) -> &'static Value {
    spec::Description::embedded().resolve(node)
}

fn type_of(node: &'static Value) -> String {
    let n = resolve(node);
    let ty = n.get("type").and_then(Value::as_str).unwrap_or("object");
    let format = n.get("format").and_then(Value::as_str);
    match (ty, format) {
        ("string", Some("int64" | "uint64")) => "integer (int64, number or string)".into(),
        ("string", Some("date-time")) => "timestamp".into(),
        ("array", _) => format!(
            "list of {}",
            n.get("items").map(type_of).unwrap_or_default()
        ),
        ("object", _) if n.get("additionalProperties").is_some() => "map of string".into(),
        ("integer", _) => "integer".into(),
        ("number", _) => "number".into(),
        (t, _) if n.get("enum").is_some() => format!("{t} (enum)"),
        (t, _) => t.to_string(),
    }
}

fn first_sentence(text: &str) -> String {
    let one = text.split('\n').collect::<Vec<_>>().join(" ");
    one.replace('|', "\\|")
}

/// A field's description as the reference shows it. The swagger's prose opens some with
/// "Required" that no rule requires (no `required` list, no registry rule): an object without
/// the field is valid for cfgctl and the emulator, so the reference must not call it required.
fn described(text: &str, path: &str, required: &[&str]) -> String {
    let text = first_sentence(text);
    let rest = text
        .strip_prefix("Required.")
        .or_else(|| text.strip_prefix("Required"));
    match rest {
        Some(rest) if !required.contains(&path) => format!(
            "Optional for cfgctl and the emulator (the API description says \"Required\"). {}",
            rest.trim_start()
        ),
        _ => text,
    }
}

/// What a kind's rows mark: the paths a rule requires, and the secret fields.
struct Marks<'a> {
    required: &'a [&'a str],
    secrets: &'a [&'static str],
}

/// The rows of `node`'s fields (nested ones too).
fn fields(
    node: &'static Value,
    prefix: &str,
    depth: usize,
    out: &mut String,
    seen: &mut Vec<String>,
    marks: &Marks<'_>,
) {
    let required = marks.required;
    let n = resolve(node);
    let Some(props) = n.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let target = resolve(prop);
        let read_only = prop.get("readOnly").and_then(Value::as_bool) == Some(true);
        let mut notes = Vec::new();
        if read_only {
            notes.push("read-only: set by the server".to_string());
        }
        if crate::api::registry::is_secret_path(marks.secrets, &path) && !read_only {
            notes.push(
                "secret: write a `${env:NAME}` or `${file:PATH}` reference, never the value"
                    .to_string(),
            );
        }
        if let Some(values) = target.get("enum").and_then(Value::as_array) {
            let vs: Vec<String> = values
                .iter()
                .filter_map(|v| v.as_str())
                .map(|v| format!("`{v}`"))
                .collect();
            notes.push(format!(
                "one of {} (the first is the default, omitted by the API)",
                vs.join(", ")
            ));
        }
        if let Some(d) = prop
            .get("description")
            .or_else(|| target.get("description"))
            .and_then(Value::as_str)
        {
            notes.push(described(d, &path, required));
        }
        let _ = writeln!(
            out,
            "| `{path}` | {} | {} |",
            type_of(prop),
            notes.join(". ")
        );
        let item = if target.get("type").and_then(Value::as_str) == Some("array") {
            target.get("items").map(resolve)
        } else {
            Some(target)
        };
        let Some(item) = item else { continue };
        // The definition this field expands into; a definition already being expanded above
        // (a recursive type) is not expanded again.
        let reference = prop
            .get("$ref")
            .or_else(|| prop.get("items").and_then(|i| i.get("$ref")))
            .and_then(Value::as_str)
            .unwrap_or("");
        if depth < 6 && item.get("properties").is_some() && !seen.iter().any(|s| s == reference) {
            seen.push(reference.to_string());
            let child = if target.get("type").and_then(Value::as_str) == Some("array") {
                format!("{path}[]")
            } else {
                path.clone()
            };
            fields(item, &child, depth + 1, out, seen, marks);
            seen.pop();
        }
    }
}

/// The manifest reference, one section per kind.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    out.push_str("# Manifest reference\n\n");
    out.push_str("<!-- Generated from the kind registry and the embedded swagger file; do not edit.\n     Regenerate with: CFGCTL_UPDATE_DOCS=1 cargo test --test integration docs -->\n\n");
    out.push_str("Every manifest is `api_version: v1/config`, `kind: KIND` and `spec:` holding the API object\nwith the API's own field names. Unknown fields, wrong types, unknown enum values and read-only\nfields are errors that `cfgctl validate` reports with file, line and column. Every field the API\ndescription calls a PromQL query, expression or label selector is parsed offline; a syntax\nerror is reported at the line and column of the offending character inside the manifest.\n\n");
    out.push_str("Kinds: ");
    let links: Vec<String> = crate::api::registry::embedded_kinds()
        .into_iter()
        .map(|d| format!("[{}](#{})", d.name, d.name.to_lowercase()))
        .collect();
    out.push_str(&links.join(", "));
    out.push_str("\n\n");
    out.push_str(include_str!("docs/dashboard_kinds.md"));
    for def in crate::api::registry::embedded_kinds() {
        kind_section(&mut out, def);
    }
    out
}

/// One kind's section of the reference: what the registry knows of it, then its fields.
fn kind_section(out: &mut String, def: &crate::api::registry::KindDef) {
    let _ = writeln!(out, "## {}\n", def.name);
    let _ = writeln!(
        out,
        "- API path: `/api/v1/config/{}`; wrapper key `{}`",
        def.path, def.singular
    );
    if def.singleton {
        let _ = writeln!(
            out,
            "- One per tenant: no `slug`; its address is `{}`",
            def.name
        );
    } else {
        let _ = writeln!(
            out,
            "- Identity: `spec.slug` (required); address `{}/<slug>`; `spec.name` is required",
            def.name
        );
    }
    let _ = writeln!(
        out,
        "- Operations: full API: {}; seed tenant: {}",
        ops(def.full_ops),
        ops(def.seed_ops)
    );
    if !def.references.is_empty() {
        let refs: Vec<String> = def
            .references
            .iter()
            .map(|r| {
                let mut s = format!("`{}` → {}", r.path, r.target);
                if r.optional {
                    s.push_str(" (optional: may be set by a later update to break a cycle)");
                }
                if let Some((f, v)) = r.unless {
                    s.push_str(&format!(" (not when `{f}` is `{v}`)"));
                }
                s
            })
            .collect();
        let _ = writeln!(out, "- References: {}", refs.join("; "));
    }
    for rule in def.required {
        let _ = writeln!(out, "- Required: {}", rule.describe());
    }
    for f in def.unique_fields {
        let _ = writeln!(out, "- `{f}` is unique across all {}s", def.name);
    }
    for e in def.embedded_json {
        let vol: Vec<String> = e.volatile.iter().map(|v| format!("`{}`", v.path)).collect();
        let _ = writeln!(
                out,
                "- `{}` holds a JSON document: write it as a JSON string or as YAML. Compared as JSON, without {} (the server rewrites them)",
                e.field,
                vol.join(", ")
            );
    }
    if !def.promql.is_empty() {
        let fs: Vec<String> = def
            .promql
            .iter()
            .map(|f| {
                let how = if f.form.selector {
                    " (a label selector)"
                } else if f.form.template {
                    " (a template: its `{{ .Window }}` placeholders are stood in for)"
                } else if f.form.variables {
                    " (its `$name` variables are stood in for)"
                } else {
                    ""
                };
                format!("`{}`{how}", f.path)
            })
            .collect();
        let _ = writeln!(out, "- PromQL, parsed by `validate`: {}", fs.join(", "));
    }
    if !def.list_filters.is_empty() {
        let fs: Vec<String> = def
            .list_filters
            .iter()
            .map(|f| format!("`{}`", f.param))
            .collect();
        let _ = writeln!(
            out,
            "- List filters besides `slugs` and `names`: {}",
            fs.join(", ")
        );
    }
    if def.force_delete {
        let _ = writeln!(
            out,
            "- Delete takes `force_delete` (only sent with `apply --force-delete-buckets`)"
        );
    }
    if def.full_ops.create {
        let _ = write!(
            out,
            "\nExample (it applies as written, with the examples of the kinds it references):\n\n```yaml\n{}```\n",
            example::manifest(def)
        );
    }
    kind_fields(out, def);
}

/// The table of a kind's fields, from its swagger definition.
fn kind_fields(out: &mut String, def: &crate::api::registry::KindDef) {
    out.push_str("\n| field | type | notes |\n|---|---|---|\n");
    if let Some(d) = spec::definition(def.kind) {
        let mut seen = vec![format!("#/definitions/{}", def.definition)];
        let required: Vec<&str> = def
            .required
            .iter()
            .filter_map(|rule| match rule.0 {
                [one] => Some(*one),
                _ => None,
            })
            .collect();
        let marks = Marks {
            required: &required,
            secrets: def.secrets,
        };
        fields(d, "", 0, out, &mut seen, &marks);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_and_nested_fields_are_documented() {
        let md = reference_markdown();
        for def in crate::api::registry::embedded_kinds() {
            assert!(md.contains(&format!("## {}\n", def.name)));
        }
        assert!(md
            .contains("| `thresholds[].volume.fixed_value` | integer (int64, number or string) |"));
        assert!(md.contains("`priorities[].filters[].dataset_slug` → Dataset"));
        assert!(md.contains("| `created_at` | timestamp | read-only: set by the server"));
    }

    /// The swagger's prose says "Required." of fields that nothing requires (a Monitor's
    /// `labels`): the reference says what cfgctl checks, and keeps "Required" where it checks it.
    #[test]
    fn only_fields_a_rule_requires_are_called_required() {
        let md = reference_markdown();
        assert!(md.contains(
            "| `labels` | map of string | Optional for cfgctl and the emulator (the API description says \"Required\"). Labels to include in notifications"
        ));
        assert!(!md.contains("| Required. Labels"));
        assert!(md.contains("| `description` | string | Required. Description of the dataset. |"));
        assert!(md
            .contains("| `dashboard_json` | string | Required raw JSON of the Grafana dashboard."));
    }
}
