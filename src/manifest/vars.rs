//! Substitution in manifest values (docs/environments.md): `${var:NAME}` from the selected
//! environment, `${env:NAME}` and `${file:PATH}` outside secret fields, `$${` for a literal
//! `${`. It runs before a document's checks, on the block reader's values (no positions: the
//! reader took only plain whole `${var:NAME}`s, see `yaml::parse_documents_plain_refs`) or on
//! a located document; a problem on the first reads the file located, so every problem points
//! at the `${` it is about. A file with no `${` never reaches it (the loader looks at the raw
//! text first), so it costs nothing where it is not used.
//!
//! A secret field keeps a whole-value `${env:…}`/`${file:…}`: it is a reference, resolved only
//! when sent (the `secrets` module). A variable's value is inserted as it is, never read again
//! (a variable may so hold a secret field's reference).

use std::path::Path;

use serde_json::Value;

use crate::api::registry::Kind;
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::config::environments::Environment;
use crate::util::yaml::{Document, Pos};

/// What substitution reads: the environment selected, if any.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Context<'a> {
    pub env: Option<&'a Environment>,
    /// `cfgctl.yaml` declares environments (the message when none is selected says so).
    pub declared: bool,
    /// Where a `${file:…}` may read (`None`: anywhere, for tests).
    pub files: Option<&'a crate::util::file_ref::FileScope>,
    /// The variables that hold cfgctl's own API tokens, with whose each is
    /// (`environments::token_variables`): never read by a manifest.
    pub tokens: &'a [(String, String)],
    /// A lean load's reader of embedded documents (`Lean::read_document`), when the load is
    /// lean.
    pub read_document: Option<super::ReadDocument>,
}

/// The text a document came from.
pub(super) struct Source<'a> {
    pub text: &'a str,
    pub is_json: bool,
    /// The file as read (a `${file:…}` is relative to its folder).
    pub path: &'a Path,
    /// The file as shown in diagnostics.
    pub shown: &'a Path,
    /// Read by the block reader for substitution (`yaml::parse_documents_plain_refs`): no
    /// positions, and every whole `${var:NAME}` was plain.
    pub plain: bool,
}

/// One `${env:…}`/`${file:…}` resolved at load outside a secret field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// As written (`${file:about.txt}`).
    pub token: String,
    /// What it read: `env:NAME`, or `file:` and the file's canonical path.
    pub source: String,
    /// The BLAKE3 hash of the value.
    pub hash: [u8; 32],
}

/// What one document's substitution did.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// Every variable used: the JSON pointer of the value in the document, and its name.
    pub vars: Vec<(String, String)>,
    /// Every `${env:…}`/`${file:…}` resolved at load, with the BLAKE3 hash of its value
    /// (added to the load's sources: a changed value is a changed input).
    pub resolved: Vec<Resolved>,
    /// Every file a `${file:…}` names (canonical): data, never a manifest, wherever it lies.
    pub files: Vec<std::path::PathBuf>,
    /// The values that are a whole `${file:…}`: the JSON pointer and the file as shown, so
    /// a problem inside the value (an embedded document's syntax) points into that file.
    pub whole_files: Vec<(String, std::path::PathBuf)>,
    /// The JSON pointers of the values whose substitution failed (its error reported at the
    /// reference): what is left there is not the value, so nothing checks it as one.
    pub unresolved: Vec<String>,
}

/// Whether the fast reader's value needs substitution, i.e. the located reader: a string
/// holds `${` and is not a secret field's whole reference.
pub(super) fn needed(value: &Value) -> bool {
    fn any(v: &Value, pointer: &mut String, secrets: &[String]) -> bool {
        let len = pointer.len();
        let found = match v {
            // A secret field's `${file:…}` is kept, but its path is checked.
            Value::String(s) => {
                s.contains("${")
                    && (!is_kept(secrets, pointer, s)
                        || s.starts_with("${file:")
                        || s.starts_with("${env:"))
            }
            Value::Object(map) => map.iter().any(|(k, v)| {
                pointer.push('/');
                pointer.push_str(&crate::util::jsonpath::escape_pointer(k));
                let found = any(v, pointer, secrets);
                pointer.truncate(len);
                found
            }),
            Value::Array(items) => items.iter().enumerate().any(|(i, v)| {
                pointer.push('/');
                pointer.push_str(&i.to_string());
                let found = any(v, pointer, secrets);
                pointer.truncate(len);
                found
            }),
            _ => false,
        };
        found
    }
    any(value, &mut String::new(), &secret_pointers(value))
}

/// Substitutes every string value of `doc` (keys are never substituted).
pub(super) fn substitute(
    doc: &mut Document,
    src: &Source<'_>,
    ctx: &Context<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Outcome {
    let secrets = secret_pointers(&doc.value);
    let mut outcome = Outcome::default();
    let spans = &doc.spans;
    let start = doc.start;
    walk(&mut doc.value, &mut String::new(), &mut |pointer, v| {
        let Value::String(s) = v else { return };
        if !s.contains("${") {
            return;
        }
        let at = spans.get(pointer).map_or(start, |s| s.value);
        if is_kept(&secrets, pointer, s) {
            check_secret_file(s, src, ctx, at, &mut outcome, diagnostics);
            return;
        }
        let quoted = !src.plain
            && (src.is_json
                || !matches!(char_at(src.text, at), Some(c) if c != '"' && c != '\'' && c != '|' && c != '>'));
        let in_secret = secrets.iter().any(|p| p == pointer);
        let mut one = Expansion {
            src,
            ctx,
            at,
            in_secret,
            outcome: &mut outcome,
            pointer,
            diagnostics,
        };
        let whole_file = crate::api::registry::parse_reference(s)
            .is_some_and(|r| matches!(r, crate::api::registry::SecretRef::File(_)));
        let errors_before = one.diagnostics.len();
        let expanded = one.expand(s, quoted);
        if one.diagnostics.len() > errors_before {
            outcome.unresolved.push(pointer.to_string());
        }
        if let Some(new) = expanded {
            if whole_file {
                let shown = crate::util::file_ref::joined(src.shown, &s[7..s.len() - 1]);
                outcome.whole_files.push((pointer.to_string(), shown));
            }
            // A secret field that a variable made a `${file:…}` (red team D0) is checked as one
            // written there: the scope holds it, whatever way it came.
            if in_secret {
                if let Value::String(reference) = &new {
                    check_secret_file(reference, src, ctx, at, &mut outcome, diagnostics);
                }
            }
            *v = new;
        }
    });
    outcome
}

struct Expansion<'a, 'b> {
    src: &'a Source<'a>,
    ctx: &'a Context<'a>,
    at: Pos,
    in_secret: bool,
    outcome: &'b mut Outcome,
    pointer: &'b str,
    diagnostics: &'b mut Vec<Diagnostic>,
}

impl Expansion<'_, '_> {
    /// The new value of `s`, or `None` when it stays as it is.
    fn expand(&mut self, s: &str, quoted: bool) -> Option<Value> {
        // A whole plain `${var:NAME}` keeps the variable's type.
        if !quoted {
            if let Some(name) = s.strip_prefix("${var:").and_then(|r| r.strip_suffix('}')) {
                if !name.contains('}') {
                    return self.var(name, s).map(|v| v.to_value());
                }
            }
        }
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        let mut failed = false;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            if let Some(after) = tail.strip_prefix("$${") {
                out.push_str("${");
                rest = after;
                continue;
            }
            let token = tail
                .strip_prefix("${")
                .and_then(|t| t.find('}').map(|end| &tail[..end + 3]));
            let Some(token) = token else {
                out.push('$');
                rest = &tail[1..];
                continue;
            };
            let inner = &token[2..token.len() - 1];
            let names_ours = ["var:", "env:", "file:"]
                .iter()
                .any(|k| inner.starts_with(k));
            if names_ours && inner.contains("${") {
                // A reference inside a reference (red team E20): an error at the whole of it.
                // Another `${…}` holding one (`${HOME:-${USER}}` in a runbook) stays text.
                let whole = nested(tail).unwrap_or(token);
                let problem = Problem::UnresolvedReference {
                    reference: whole.to_string(),
                    reason: "a reference cannot hold another (cfgctl reads no nesting): write the name whole, or give each environment its own `vars:` value".into(),
                };
                self.error(whole, problem);
                failed = true;
                rest = &tail[whole.len()..];
                continue;
            }
            let value = if let Some(name) = inner.strip_prefix("var:") {
                self.var(name, token).map(|v| v.to_text())
            } else if (inner.starts_with("env:") || inner.starts_with("file:")) && !self.in_secret {
                self.reference(token)
            } else {
                // Another `${…}` (or a reference inside a secret field's longer text) is text.
                Some(token.to_string())
            };
            match value {
                Some(v) => out.push_str(&v),
                None => failed = true,
            }
            rest = &tail[token.len()..];
        }
        out.push_str(rest);
        (!failed && out != s).then_some(Value::String(out))
    }

    /// A variable's value, or a located error naming the environment.
    fn var(&mut self, name: &str, token: &str) -> Option<crate::config::environments::Scalar> {
        let problem = match self.ctx.env {
            Some(env) => match env.vars.get(name) {
                Some(v) => {
                    self.outcome
                        .vars
                        .push((self.pointer.to_string(), name.to_string()));
                    return Some(v.clone());
                }
                None => {
                    let known: Vec<String> = env.vars.keys().cloned().collect();
                    Problem::UndefinedVariable {
                        name: name.to_string(),
                        environment: env.name.clone(),
                        suggestion: crate::util::jsonpath::closest(name, &known),
                    }
                }
            },
            None => Problem::NoEnvironment {
                name: name.to_string(),
                why: if self.ctx.declared {
                    "none is selected (`--env NAME`)"
                } else {
                    "cfgctl.yaml declares none (docs/environments.md)"
                },
            },
        };
        self.error(token, problem);
        None
    }

    /// A `${env:…}`/`${file:…}` outside a secret field, resolved now (not a secret: its value
    /// is shown like any other).
    fn reference(&mut self, token: &str) -> Option<String> {
        let resolved = match crate::api::registry::parse_reference(token) {
            None => Err("not a valid reference (`${env:NAME}` or `${file:PATH}`)".to_string()),
            Some(crate::api::registry::SecretRef::Env(name))
                if token_of(self.ctx, name).is_some() =>
            {
                Err(token_of(self.ctx, name).unwrap_or_default())
            }
            Some(crate::api::registry::SecretRef::Env(name)) => match std::env::var(name) {
                Ok(v) => Ok((format!("env:{name}"), v)),
                Err(std::env::VarError::NotPresent) => {
                    Err(format!("environment variable {name} is not set"))
                }
                Err(std::env::VarError::NotUnicode(_)) => {
                    Err(format!("environment variable {name} is not valid UTF-8"))
                }
            },
            Some(crate::api::registry::SecretRef::File(path)) => {
                let unconfined = crate::util::file_ref::FileScope::default();
                let scope = self.ctx.files.unwrap_or(&unconfined);
                scope.resolve(self.src.path, path, false).and_then(|full| {
                    // Named here even when it cannot be read (too large, not text): data, not
                    // a manifest that nothing names.
                    self.outcome.files.push(full.clone());
                    let text = crate::util::file_ref::read(&full)?;
                    let source = format!("file:{}", full.display());
                    Ok((source, crate::util::file_ref::value_of(text)))
                })
            }
        };
        match resolved {
            Ok((source, v)) => {
                let hash = *blake3::hash(v.as_bytes()).as_bytes();
                self.outcome.resolved.push(Resolved {
                    token: token.to_string(),
                    source,
                    hash,
                });
                Some(v)
            }
            Err(reason) => {
                let problem = Problem::UnresolvedReference {
                    reference: token.to_string(),
                    reason,
                };
                self.error(token, problem);
                None
            }
        }
    }

    fn error(&mut self, token: &str, problem: Problem) {
        let pos = locate(self.src.text, self.at, token);
        self.diagnostics
            .push(Diagnostic::error(self.src.shown, pos, problem));
    }
}

/// The `${…}` at the start of `text` up to the `}` that closes it, counting the `${` inside.
fn nested(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        if rest.starts_with("${") {
            depth += 1;
            at += 2;
            continue;
        }
        if rest.starts_with('}') {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return text.get(..=at);
            }
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Why the variable `name` is never read by a manifest, when it holds one of cfgctl's own API
/// tokens (an environment's `token_env`, CFGCTL_TOKEN): a manifest's value is sent to a tenant,
/// and one tenant's token must not reach another (red team E19).
fn token_of(ctx: &Context<'_>, name: &str) -> Option<String> {
    let (_, whose) = ctx.tokens.iter().find(|(var, _)| var == name)?;
    Some(format!(
        "`{name}` holds the API token of {whose}: a manifest never reads cfgctl's own tokens (they would be sent to a tenant as configuration)"
    ))
}

/// A secret field's `${file:…}` is read only when it is sent, but where it points is checked
/// now: inside the repository (or a directory `secrets.file_dirs` allows), a regular file.
fn check_secret_file(
    s: &str,
    src: &Source<'_>,
    ctx: &Context<'_>,
    at: Pos,
    outcome: &mut Outcome,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let path = match crate::api::registry::parse_reference(s) {
        Some(crate::api::registry::SecretRef::File(path)) => path,
        Some(crate::api::registry::SecretRef::Env(name)) => {
            if let Some(reason) = token_of(ctx, name) {
                let problem = Problem::UnresolvedReference {
                    reference: s.to_string(),
                    reason,
                };
                diagnostics.push(Diagnostic::error(
                    src.shown,
                    locate(src.text, at, s),
                    problem,
                ));
            }
            return;
        }
        None => return,
    };
    let unconfined = crate::util::file_ref::FileScope::default();
    let scope = ctx.files.unwrap_or(&unconfined);
    // A secret needs nothing before it is sent: a file not there yet is checked by its path.
    let checked = match scope.check_missing(src.path, path) {
        Ok(Some(_)) => scope.resolve(src.path, path, true).and_then(|full| {
            crate::util::file_ref::check(&full)?;
            outcome.files.push(full);
            Ok(())
        }),
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(reason) = checked {
        let problem = Problem::UnresolvedReference {
            reference: s.to_string(),
            reason,
        };
        let pos = locate(src.text, at, s);
        diagnostics.push(Diagnostic::error(src.shown, pos, problem));
    }
}

/// The JSON pointers (in the document) of the spec's secret fields.
fn secret_pointers(doc: &Value) -> Vec<String> {
    let Some(kind) = doc
        .get("kind")
        .and_then(Value::as_str)
        .and_then(Kind::from_name)
    else {
        return Vec::new();
    };
    let Some(spec) = doc.get("spec") else {
        return Vec::new();
    };
    kind.def()
        .secrets_in(spec)
        .into_iter()
        .map(|f| format!("/spec{}", f.pointer))
        .collect()
}

/// A secret field's whole reference stays a reference.
fn is_kept(secrets: &[String], pointer: &str, s: &str) -> bool {
    crate::api::registry::parse_reference(s).is_some() && secrets.iter().any(|p| p == pointer)
}

/// Calls `f` on every value, depth first, with its JSON pointer.
fn walk(value: &mut Value, pointer: &mut String, f: &mut dyn FnMut(&str, &mut Value)) {
    let len = pointer.len();
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                pointer.push('/');
                pointer.push_str(&crate::util::jsonpath::escape_pointer(k));
                walk(v, pointer, f);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                pointer.push('/');
                pointer.push_str(&i.to_string());
                walk(v, pointer, f);
                pointer.truncate(len);
            }
        }
        other => f(pointer, other),
    }
}

/// The byte offset of a 1-based line and (character) column.
fn offset(text: &str, pos: Pos) -> Option<usize> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(pos.line.saturating_sub(1) as usize)
        .map(str::len)
        .sum();
    let line = text.get(line_start..)?;
    let col: usize = line
        .chars()
        .take(pos.column.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    Some(line_start + col)
}

fn char_at(text: &str, pos: Pos) -> Option<char> {
    text.get(offset(text, pos)?..)?.chars().next()
}

/// Where `token` is written in the scalar that starts at `at`: searched on the scalar's line
/// (the following lines too for a block scalar); the scalar's start when it is not found
/// as written (an escaped character in a quoted scalar).
fn locate(text: &str, at: Pos, token: &str) -> Pos {
    let Some(start) = offset(text, at) else {
        return at;
    };
    let rest = &text[start..];
    let block = rest.starts_with('|') || rest.starts_with('>');
    let scope = if block {
        rest
    } else {
        &rest[..rest.find('\n').unwrap_or(rest.len())]
    };
    let Some(found) = scope.find(token) else {
        return at;
    };
    let before = &text[..start + found];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    Pos::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
pub(in crate::manifest) mod tests;

/// `text` as a manifest value that the loader reads back as `text` itself: every `${` written
/// `$${` (the loader reads `$${` as a literal `${`). The one escaping of text that did not come
/// from cfgctl (the tenant's, an imported file's) before it is written into a manifest, so a
/// `${env:…}`/`${file:…}`/`${var:…}` in it is never substituted.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("${") {
        std::borrow::Cow::Owned(text.replace("${", "$${"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// The text an [`escape`]d value stands for (what the loader reads it as, for a value with no
/// reference in it).
pub fn unescape(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("$${") {
        std::borrow::Cow::Owned(text.replace("$${", "${"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Every string value of `value` [`escape`]d (keys are never substituted, so never escaped).
pub fn escape_strings(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(e) = escape(s) {
                *s = e;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(escape_strings),
        Value::Object(map) => map.values_mut().for_each(escape_strings),
        _ => {}
    }
}

/// The bodies (`env:NAME`, `file:PATH`, `var:NAME`, ...) of the `${…}`s of `text` that the
/// loader reads as references: an escaped `$${` is none.
pub fn references(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find('$') {
        let tail = &text[at + i..];
        if tail.starts_with("$${") {
            at += i + 3;
            continue;
        }
        match tail
            .strip_prefix("${")
            .and_then(|t| t.find('}').map(|end| &t[..end]))
        {
            Some(body) => {
                out.push(body);
                at += i + 2 + body.len() + 1;
            }
            None => at += i + 1,
        }
    }
    out
}

/// Every string value of `value` read back from its [`escape`]d form ([`unescape`]).
pub fn unescape_strings(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(e) = unescape(s) {
                *s = e;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unescape_strings),
        Value::Object(map) => map.values_mut().for_each(unescape_strings),
        _ => {}
    }
}
