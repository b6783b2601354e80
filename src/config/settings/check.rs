//! `cfgctl.yaml` checked by its JSON Schema (`schema/settings.schema.json`) on the checker the
//! manifests' specs use (`api::spec::checker_options`). Each error is worded by the schema's
//! own `x-messages` at the node that failed, and ordered as the file is written.

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind as K;
use serde_json::Value;

use crate::api::registry::Kind;
use crate::config::pattern::Pattern;
use crate::util::jsonpath::{closest, escape_pointer, pointer_to_path, type_name};

/// One problem: the JSON pointer of its node, whether it is about the node's key, its message.
pub(super) type Found = (String, bool, String);

/// The formats the schema names that only cfgctl can check (kinds come from the registry),
/// each with what it found wrong for the message's `{error}`.
type FormatCheck = fn(&str) -> Result<(), String>;
const FORMATS: [(&str, FormatCheck); 4] = [
    ("kind-pattern", |s| {
        Pattern::parse(s).map(drop).map_err(|e| e.to_string())
    }),
    ("kind", |s| {
        let hint = Kind::suggest(s).map(|k| format!(" (did you mean `{k}`?)"));
        let unknown = || format!("unknown kind `{s}`{}", hint.unwrap_or_default());
        Kind::from_name(s).map(drop).ok_or_else(unknown)
    }),
    ("inside-path", |s| {
        super::inside(s).then_some(()).ok_or_else(String::new)
    }),
    ("overlay-dir", |s| {
        let dir = crate::config::environments::overlay_dir(s);
        dir.map(drop).ok_or_else(String::new)
    }),
];

/// The schema and its checker, compiled once (`settings::tests::the_schema_compiles_and_is_json_schema`
/// that they do).
fn checker() -> Option<&'static (Value, jsonschema::Validator)> {
    static CHECKER: OnceLock<Option<(Value, jsonschema::Validator)>> = OnceLock::new();
    CHECKER
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(super::SCHEMA).ok()?;
            let options = FORMATS.iter().fold(
                crate::api::spec::checker_options(),
                |options, &(name, check)| options.with_format(name, move |s| check(s).is_ok()),
            );
            let validator = options.build(&schema).ok()?;
            Some((schema, validator))
        })
        .as_ref()
}

/// Every problem of the settings document, in the order the file is written (a missing
/// field after its mapping's fields, in the order the schema requires them).
pub(super) fn problems(doc: &Value) -> Vec<Found> {
    let Some((schema, validator)) = checker() else {
        return vec![(
            String::new(),
            false,
            "cfgctl's settings schema does not compile".into(),
        )];
    };
    let mut found: Vec<(Vec<usize>, Found)> = Vec::new();
    for error in validator.iter_errors(doc) {
        let pointer = error.instance_path().as_str().to_string();
        let schema_path = error.schema_path().as_str();
        let (node, keyword) = schema_path.rsplit_once('/').unwrap_or(("", schema_path));
        let node = schema.pointer(node).unwrap_or(&Value::Null);
        let at = Place {
            pointer: &pointer,
            instance: error.instance(),
            node,
        };
        match error.kind() {
            K::AdditionalProperties { unexpected } => {
                for name in unexpected {
                    let child = format!("{pointer}/{}", escape_pointer(name));
                    let message = at.message(message_of(node, keyword), Some(name), None);
                    found.push((order(doc, &child, node), (child, true, message)));
                }
            }
            K::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let missing = node
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .map_or("", |p| message_of(p, "missing"));
                let message = at.message(missing, None, None);
                let child = format!("{pointer}/{}", escape_pointer(name));
                found.push((order(doc, &child, node), (pointer.clone(), false, message)));
            }
            K::Format { format } => {
                let why = FORMATS
                    .iter()
                    .find(|(name, _)| name == format)
                    .and_then(|(_, check)| check(at.instance.as_str()?).err());
                let message = at.message(message_of(node, keyword), None, why);
                found.push((
                    order(doc, &pointer, node),
                    (pointer.clone(), false, message),
                ));
            }
            _ => {
                let message = at.message(message_of(node, keyword), None, None);
                found.push((
                    order(doc, &pointer, node),
                    (pointer.clone(), false, message),
                ));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    // One message per node (a value may fail two keywords), one per missing field.
    found.dedup_by(|b, a| a.0 == b.0);
    found.into_iter().map(|(_, f)| f).collect()
}

/// The message a schema node gives for a failed keyword: its `x-messages`, one text for all or
/// one per keyword (`missing` for a required field, on the field's node).
fn message_of<'s>(node: &'s Value, keyword: &str) -> &'s str {
    match node.get("x-messages") {
        Some(Value::String(all)) if keyword != "missing" => all,
        Some(Value::Object(each)) => each.get(keyword).and_then(Value::as_str).unwrap_or(""),
        _ => "",
    }
}

/// Where an error is: the instance's pointer and value, the schema node that failed.
struct Place<'a> {
    pointer: &'a str,
    instance: &'a Value,
    node: &'a Value,
}

impl Place<'_> {
    /// `template` with its placeholders filled (the schema's description lists them).
    fn message(&self, template: &str, name: Option<&str>, error: Option<String>) -> String {
        let path = pointer_to_path(self.pointer);
        if template.is_empty() {
            return format!("`{path}`: {} is invalid", self.instance);
        }
        let (parent, key) = self.pointer.rsplit_once('/').unwrap_or(("", self.pointer));
        let key = key.replace("~1", "/").replace("~0", "~");
        let text = self
            .instance
            .as_str()
            .map_or_else(|| self.instance.to_string(), str::to_string);
        let names = |member: &str| -> Vec<String> {
            match self.node.get(member) {
                Some(Value::Object(m)) => m.keys().cloned().collect(),
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => vec![],
            }
        };
        let known = names("properties");
        let hint = match name {
            Some(name) => closest(name, &known),
            None => closest(&text, &names("enum")),
        }
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
        let known = match known.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        let fills = [
            ("path", path),
            ("parent", pointer_to_path(parent)),
            ("key", key),
            ("value", self.instance.to_string()),
            ("text", text),
            ("type", type_name(self.instance).to_string()),
            ("name", name.unwrap_or_default().to_string()),
            ("hint", hint),
            ("known", known),
            ("error", error.unwrap_or_default()),
        ];
        // One pass over the template: what is filled in (the file's own text) is not read again.
        let mut out = String::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            rest = &rest[open..];
            let word = rest[1..].split('}').next().unwrap_or_default();
            match fills.iter().find(|(name, _)| *name == word) {
                Some((_, with)) if rest[1..].contains('}') => {
                    out.push_str(with);
                    rest = &rest[word.len() + 2..];
                }
                _ => {
                    out.push('{');
                    rest = &rest[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// Where `pointer` is in the order the document is written: each step's index among its
/// mapping's keys or list's items; a key the mapping lacks (a missing field) after them all,
/// in the order of the schema's `required`.
fn order(doc: &Value, pointer: &str, node: &Value) -> Vec<usize> {
    let mut at = Some(doc);
    let mut out = Vec::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let index = match at {
            Some(Value::Object(map)) => {
                map.keys().position(|k| *k == segment).unwrap_or_else(|| {
                    let required = node.get("required").and_then(Value::as_array);
                    let rank = required.and_then(|r| r.iter().position(|n| *n == *segment));
                    map.len() + rank.unwrap_or(0)
                })
            }
            Some(Value::Array(_)) => segment.parse().unwrap_or(0),
            _ => 0,
        };
        at = match at {
            Some(Value::Object(map)) => map.get(&segment),
            Some(Value::Array(items)) => items.get(index),
            _ => None,
        };
        out.push(index);
    }
    out
}

/// The JSON pointers of the string values holding `${` (red team E22: a `prune` pattern with one
/// matched nothing, silently), but an environment's `vars:`, whose values are put into
/// manifests, where a `${env:…}` or `${file:…}` they hold is read.
pub(super) fn placeholders(value: &serde_json::Value, at: String) -> Vec<String> {
    let in_vars = at.starts_with("/environments/") && at.split('/').nth(3) == Some("vars");
    if in_vars {
        return Vec::new();
    }
    match value {
        serde_json::Value::String(s) if s.contains("${") => vec![at],
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .flat_map(|(i, v)| placeholders(v, format!("{at}/{i}")))
            .collect(),
        serde_json::Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| {
                placeholders(
                    v,
                    format!("{at}/{}", crate::util::jsonpath::escape_pointer(k)),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The keys of a mapping that YAML read as something else than their text (`0x1` as `1`,
/// `~` as `null`): each key's position, its text and the name it was read as. A quoted key is
/// its text (red team E6).
pub(super) fn renamed_keys<'a>(
    text: &'a str,
    spans: &crate::util::yaml::Spans,
    mapping: &str,
    names: impl Iterator<Item = &'a str>,
) -> Vec<(crate::util::yaml::Pos, String, String)> {
    let mut found = Vec::new();
    for name in names {
        let pointer = format!("{mapping}/{}", escape_pointer(name));
        let Some(at) = spans.get(&pointer).and_then(|s| s.key) else {
            continue;
        };
        let Some(written) = written_key(text, at) else {
            continue;
        };
        if written != name {
            found.push((at, written.to_string(), name.to_string()));
        }
    }
    found
}

/// The line of `text` that `at` is on, and the byte offset of its column in it (the line's end
/// for the column just past it).
fn line_at(text: &str, at: crate::util::yaml::Pos) -> Option<(&str, usize)> {
    let line = text
        .lines()
        .nth(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
    let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
    let offset = line
        .char_indices()
        .map(|(i, _)| i)
        .chain([line.len()])
        .nth(column)?;
    Some((line, offset))
}

/// A plain (unquoted) key's text at `at`, up to its `:`; `None` for a quoted key.
fn written_key(text: &str, at: crate::util::yaml::Pos) -> Option<&str> {
    let (line, from) = line_at(text, at)?;
    let rest = line.get(from..)?;
    if rest.starts_with(['"', '\'']) {
        return None;
    }
    let end = rest
        .find(": ")
        .or_else(|| rest.strip_suffix(':').map(str::len))?;
    Some(rest[..end].trim_end())
}

/// A whole number of the settings (`max_deletes`, a safety guard) as written, when it is not
/// digits alone: YAML reads `1e3`, `5.0`, `3_000`, `0b11` or `!foo 3` as numbers too (red team
/// E7). The value's position and its text (with a tag written before it).
pub(super) fn misspelt_whole_number(
    text: &str,
    span: Option<&crate::util::yaml::NodeSpan>,
) -> Option<(crate::util::yaml::Pos, String)> {
    let span = span?;
    let (line, mut from) = line_at(text, span.value)?;
    // A tag between the key and the value is part of what was written.
    if let Some(key) = span.key.filter(|k| k.line == span.value.line) {
        let (_, key_at) = line_at(text, key)?;
        if let Some(bang) = line.get(key_at..from)?.find('!') {
            from = key_at + bang;
        }
    }
    let rest = line.get(from..)?;
    let end = rest.find([',', '}', ']', '#']).unwrap_or(rest.len());
    let written = rest[..end].trim();
    let digits = !written.is_empty() && written.bytes().all(|b| b.is_ascii_digit());
    let column = u32::try_from(line[..from].chars().count() + 1).ok()?;
    let at = crate::util::yaml::Pos::new(span.value.line, column);
    (!digits).then(|| (at, written.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every keyword of the schema that can fail has its message, so no error of the file is
    /// worded by the generic fallback.
    #[test]
    fn every_keyword_that_can_fail_has_its_message() {
        fn walk(node: &Value, at: &str, missing: &mut Vec<String>) {
            let Some(map) = node.as_object() else {
                return;
            };
            for keyword in [
                "type",
                "enum",
                "pattern",
                "format",
                "minimum",
                "maximum",
                "minLength",
            ] {
                if map.contains_key(keyword) && message_of(node, keyword).is_empty() {
                    missing.push(format!("{at}/{keyword}"));
                }
            }
            if map.get("additionalProperties") == Some(&Value::Bool(false))
                && message_of(node, "additionalProperties").is_empty()
            {
                missing.push(format!("{at}/additionalProperties"));
            }
            for name in map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let field = name.as_str().and_then(|n| node.get("properties")?.get(n));
                if field.is_none_or(|f| message_of(f, "missing").is_empty()) {
                    missing.push(format!("{at}/required/{name}"));
                }
            }
            for (key, child) in map.iter().filter(|(k, _)| *k != "x-messages") {
                walk(child, &format!("{at}/{key}"), missing);
            }
        }
        let schema: Value = serde_json::from_str(super::super::SCHEMA).unwrap();
        let mut missing = Vec::new();
        walk(&schema, "", &mut missing);
        assert_eq!(missing, Vec::<String>::new());
    }
}
