//! `cfgctl pull`: the way back from the tenant to git.
//!
//! Pure: [`pull`] takes the loaded manifests, the text of their files, the current state and
//! the plan, and returns the new text of every file to rewrite and the new files to create;
//! the command reads and writes the files. For each managed resource whose state differs from
//! its manifest, only the bytes of that resource's document change: the other documents, the
//! comments and blank lines around the document and every other byte of the file are kept.
//!
//! The new spec is a merge, not a copy of the server's object: wherever the manifest and the
//! state compare equal under the planner's rules ([`normalize`]), the manifest's value stays as
//! written (so server-owned fields, zero values, defaults, ignored paths and volatile dashboard
//! members never leak in); where they differ, the state's canonical value is taken, in the
//! manifest's field order where fields remain. An embedded document keeps the form the
//! manifest used: a YAML mapping stays a mapping, a JSON string stays a string (pretty when it
//! was written on several lines).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::api::registry::{Address, Kind};
use crate::config::settings::IgnoreRule;
use crate::convert::export::{self, ExportError};
use crate::manifest::Manifest;
use crate::plan::normalize::{self, normalize};
use crate::plan::{ActionKind, Current, Plan};

/// Everything a pull needs, read by the command.
pub struct PullInput<'a> {
    pub manifests: &'a [Manifest],
    /// The text of every manifest file, by [`Manifest::file`].
    pub texts: &'a BTreeMap<PathBuf, String>,
    pub current: &'a Current,
    /// The plan of the manifests against `current` (without `--prune`).
    pub plan: &'a Plan,
    pub ignore: &'a [IgnoreRule],
    /// Also write the unmanaged resources inside the prune scope as new files.
    pub include_unmanaged: bool,
    /// The environment's load (`pull --env`), whose provenance says where each value was
    /// written: each pulled value goes back there (base or overlay file), and a value that
    /// came from a variable is refused ([`Pulled::refused`]). `None`: no environment.
    pub environment: Option<PullEnv<'a>>,
}

/// `pull --env`: the environment and its load.
#[derive(Clone, Copy)]
pub struct PullEnv<'a> {
    pub env: &'a crate::config::environments::Environment,
    /// The manifests loaded for `env`, with their provenance.
    pub loaded: &'a crate::manifest::Loaded,
}

/// A manifest file with its new text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewrittenFile {
    pub path: PathBuf,
    pub text: String,
    /// The resources pulled into it, sorted.
    pub addresses: Vec<Address>,
}

/// A new file for an unmanaged resource, relative to the manifest directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFile {
    pub path: PathBuf,
    pub text: String,
    pub address: Address,
}

/// A managed resource that no longer exists on the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gone {
    pub address: Address,
    /// `file:line` of its manifest.
    pub source: String,
}

/// The result of a pull: what to write and what to report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pulled {
    pub rewritten: Vec<RewrittenFile>,
    pub created: Vec<NewFile>,
    pub gone: Vec<Gone>,
    /// Resources of kinds the target cannot read: nothing to compare, nothing pulled.
    pub not_compared: Vec<Address>,
    /// `pull --env`: values the target changed that came from a variable, not written.
    pub refused: Vec<Refused>,
    /// `--include-unmanaged`: resources the environment's overlay omits (with the overlay
    /// file), not adopted: the environment does not hold them (red team E11).
    pub omitted: Vec<(Address, PathBuf)>,
}

/// Why a pull cannot be done; nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("{}: no document declares {address} in the file as it is now (was it edited during the pull?)", file.display())]
    DocumentNotFound { file: PathBuf, address: Address },
    #[error("{}: the file cannot be read back: {message}", file.display())]
    Unreadable { file: PathBuf, message: String },
    #[error("{address} ({}): the target's object does not fit this cfgctl's API description, so it cannot be written as a manifest: {problems}", file.display())]
    NotRepresentable {
        file: PathBuf,
        address: Address,
        problems: String,
    },
    #[error("{address} ({}): the pulled manifest would still differ from the target in {fields}", file.display())]
    Inexact {
        file: PathBuf,
        address: Address,
        fields: String,
    },
    #[error("{address} ({}): cannot write the document: {reason}", file.display())]
    Serialise {
        file: PathBuf,
        address: Address,
        reason: String,
    },
    #[error("{}: the rewritten file does not read back as meant ({addresses})", file.display())]
    RoundTrip { file: PathBuf, addresses: String },
    #[error(transparent)]
    Export(#[from] ExportError),
}

/// Works out every file to rewrite and create. Pure.
pub fn pull(input: &PullInput) -> Result<Pulled, PullError> {
    let by_address: BTreeMap<Address, &Manifest> =
        input.manifests.iter().map(|m| (m.address(), m)).collect();
    let mut out = Pulled::default();
    let mut per_file: BTreeMap<PathBuf, Vec<Address>> = BTreeMap::new();
    for a in &input.plan.actions {
        let Some(m) = by_address.get(&a.address) else {
            continue;
        };
        let intended = match a.action {
            ActionKind::Unsupported => a.intended,
            other => Some(other),
        };
        let readable = input.current.known.contains(&a.address.kind);
        match intended {
            Some(ActionKind::Update) => per_file
                .entry(m.file.clone())
                .or_default()
                .push(a.address.clone()),
            Some(ActionKind::Create) if readable => out.gone.push(Gone {
                address: a.address.clone(),
                source: m.source(),
            }),
            Some(ActionKind::Create | ActionKind::Upsert) => {
                out.not_compared.push(a.address.clone())
            }
            _ => {}
        }
    }
    if let Some(environment) = input.environment {
        let addresses = per_file.into_values().flatten().collect();
        env::pull_env(input, environment, addresses, &mut out)?;
        per_file = BTreeMap::new();
    }
    // Each file rewritten on its own (read located, edited, read back), on all cores; the
    // first failure in file order is the one reported.
    use rayon::prelude::*;
    let rewritten: Vec<Result<(RewrittenFile, refs::Restored), PullError>> = per_file
        .into_iter()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(file, mut addresses)| {
            addresses.sort();
            let text = input.text_of(&file)?;
            let (new_text, restored) = rewrite_file(&file, text, &addresses, input)?;
            let file = RewrittenFile {
                path: file,
                text: new_text,
                addresses,
            };
            Ok((file, restored))
        })
        .collect();
    for result in rewritten {
        let (file, restored) = result?;
        // A manifest none of whose own lines changed (its document went to its file).
        if input.texts.get(&file.path) != Some(&file.text) {
            out.rewritten.push(file);
        }
        out.rewritten.extend(restored.files);
        out.refused.extend(restored.refused);
    }
    out.rewritten.sort_by(|a, b| a.path.cmp(&b.path));
    out.refused
        .sort_by(|a, b| (&a.address, &a.field).cmp(&(&b.address, &b.field)));
    if input.include_unmanaged {
        let mut unmanaged = Current::default();
        let omitted = input.environment.map(|e| &e.loaded.omitted);
        for u in input.plan.unmanaged.iter().filter(|u| u.in_prune_scope) {
            if let Some(file) = omitted.and_then(|o| o.get(&u.address)) {
                out.omitted.push((u.address.clone(), file.clone()));
                continue;
            }
            if let Some(object) = input.current.resources.get(&u.address) {
                unmanaged
                    .resources
                    .insert(u.address.clone(), object.clone());
            }
        }
        let files = export::export_files(&unmanaged, &[])?;
        for f in files {
            let address = unmanaged
                .resources
                .keys()
                .find(|a| export::path_for(a) == f.path)
                .cloned();
            if let Some(address) = address {
                out.created.push(NewFile {
                    path: f.path,
                    text: f.text,
                    address,
                });
            }
        }
    }
    out.gone.sort_by(|a, b| a.address.cmp(&b.address));
    out.not_compared.sort();
    Ok(out)
}

/// One document of a file: what it declares, its bytes, and its value as written.
#[derive(Debug)]
struct Located {
    address: Option<Address>,
    /// The bytes that a rewrite replaces.
    range: Range<usize>,
    value: Value,
    /// YAML: the document starts on its `---` line, which the rewrite replaces too.
    inline_marker: bool,
    /// YAML: positions of the document's nodes, and the index of its last line.
    spans: Option<crate::util::yaml::Spans>,
    last_line: usize,
}

fn address_of(envelope: &Value) -> Option<Address> {
    let kind = Kind::from_name(envelope.get("kind")?.as_str()?)?;
    let slug = envelope
        .get("spec")
        .and_then(|s| s.get("slug"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Some(Address::new(
        kind,
        if kind.def().singleton { None } else { slug },
    ))
}

fn is_json_file(file: &Path) -> bool {
    file.extension().and_then(|e| e.to_str()) == Some("json")
}

/// The file's new text, and what its references came to (documents written back into their
/// own files, values refused).
fn rewrite_file(
    file: &Path,
    text: &str,
    addresses: &[Address],
    input: &PullInput,
) -> Result<(String, refs::Restored), PullError> {
    let json = is_json_file(file);
    let docs = locate(file, text, json)?;
    let mut wanted: Vec<(&Located, Address, Value)> = Vec::new();
    let mut restored = refs::Restored::default();
    for address in addresses {
        let doc = docs
            .iter()
            .find(|d| d.address.as_ref() == Some(address))
            .ok_or_else(|| PullError::DocumentNotFound {
                file: file.to_path_buf(),
                address: address.clone(),
            })?;
        let Some(current) = input.current.resources.get(address) else {
            continue;
        };
        // References are merged by their values as loaded, then put back (`refs`).
        let written_spec = doc.value.get("spec").cloned().unwrap_or(Value::Null);
        let leaves = refs::reference_leaves(address.kind, &written_spec);
        let loaded = input.manifests.iter().find(|m| m.address() == *address);
        let resolved = match loaded {
            Some(m) if !leaves.is_empty() => {
                refs::resolved_spec(address.kind, &written_spec, &m.spec, &leaves)
            }
            _ => written_spec,
        };
        let mut written = doc.value.clone();
        if let Some(spec) = written.get_mut("spec") {
            *spec = resolved.clone();
        }
        let mut envelope =
            pulled_envelope(file, address, &written, &current.value(), input.ignore)?;
        if let Some(spec) = envelope.get_mut("spec").filter(|_| !leaves.is_empty()) {
            let at = refs::Pulling { file, doc, address };
            let one = refs::restore(&at, spec, &resolved, &leaves, input)?;
            restored.files.extend(one.files);
            restored.refused.extend(one.refused);
        }
        if envelope != doc.value {
            wanted.push((doc, address.clone(), envelope));
        }
    }
    if wanted.is_empty() {
        return Ok((text.to_string(), restored));
    }
    Ok((rewrite_docs(file, text, &docs, &wanted)?, restored))
}

/// The file's text with each wanted document brought to its envelope: minimal edits when
/// they can express it and read back as meant, else the documents rewritten whole.
fn rewrite_docs(
    file: &Path,
    text: &str,
    docs: &[Located],
    wanted: &[(&Located, Address, Value)],
) -> Result<String, PullError> {
    let json = is_json_file(file);
    // Only the changed entries, when minimal edits can express the change and the result
    // reads back as meant; else each pulled document as a whole.
    let lines = lines(text);
    let mut edits = Vec::new();
    for (doc, _, envelope) in wanted {
        let minimal = if json {
            json_edit::edits(
                text,
                doc.range.start,
                &doc.value,
                envelope,
                json_indent_unit(text, doc.range.start),
            )
        } else {
            let crlf = text[doc.range.clone()].contains("\r\n");
            doc.spans
                .as_ref()
                .and_then(|spans| {
                    edit::edits(
                        &lines,
                        spans,
                        doc.last_line,
                        &doc.value,
                        envelope,
                        compact_lists(&text[doc.range.clone()]),
                    )
                })
                .map(|edits| {
                    edits
                        .into_iter()
                        .map(|(r, t)| (r, if crlf { t.replace('\n', "\r\n") } else { t }))
                        .collect()
                })
        };
        match minimal {
            Some(e) => edits.extend(e),
            None => {
                edits.clear();
                break;
            }
        }
    }
    if !edits.is_empty() {
        // Documents do not overlap, so the edits of all of them sort as one list.
        edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        let new_text = apply(text, edits);
        if reads_back(file, &new_text, json, docs.len(), wanted) {
            return Ok(new_text);
        }
    }
    let mut edits = Vec::new();
    for (doc, address, envelope) in wanted {
        let new_text = if json {
            render_json(text, doc.range.start, envelope)
        } else {
            render_yaml(text, doc, envelope).map_err(|reason| PullError::Serialise {
                file: file.to_path_buf(),
                address: address.clone(),
                reason,
            })?
        };
        edits.push((doc.range.clone(), new_text));
    }
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let new_text = apply(text, edits);
    if !reads_back(file, &new_text, json, docs.len(), wanted) {
        let addresses: Vec<String> = wanted.iter().map(|(_, a, _)| a.to_string()).collect();
        return Err(PullError::RoundTrip {
            file: file.to_path_buf(),
            addresses: addresses.join(", "),
        });
    }
    Ok(new_text)
}

/// Applies byte-range replacements given from the last to the first.
fn apply(text: &str, edits: Vec<(Range<usize>, String)>) -> String {
    let mut out = text.to_string();
    for (range, replacement) in edits {
        out.replace_range(range, &replacement);
    }
    out
}

/// The new text holds the same documents, and each pulled one reads back as meant.
fn reads_back(
    file: &Path,
    new_text: &str,
    json: bool,
    count: usize,
    wanted: &[(&Located, Address, Value)],
) -> bool {
    let Ok(reread) = locate(file, new_text, json) else {
        return false;
    };
    reread.len() == count
        && wanted.iter().all(|(_, address, envelope)| {
            reread
                .iter()
                .find(|d| d.address.as_ref() == Some(address))
                .is_some_and(|d| &d.value == envelope)
        })
}

/// Does the document indent list items under their key (`key:\n  - x`)? Then new lists
/// are written that way too; otherwise in the compact style (`key:\n- x`).
fn compact_lists(doc: &str) -> bool {
    let mut previous: Option<&str> = None;
    for line in doc.lines() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let (Some(p), true) = (previous, t.starts_with("- ") || t == "-") {
            if p.trim_end().ends_with(':') && !p.trim_start().starts_with("- ") {
                let indent = |l: &str| l.len() - l.trim_start().len();
                return indent(line) <= indent(p);
            }
        }
        previous = Some(line);
    }
    true
}

/// The manifest's envelope (its keys, in its order) with the pulled spec.
fn pulled_envelope(
    file: &Path,
    address: &Address,
    written: &Value,
    current: &Value,
    ignore: &[IgnoreRule],
) -> Result<Value, PullError> {
    let kind = address.kind;
    let raw_spec = written.get("spec").cloned().unwrap_or(Value::Null);
    let current = &known_fields(kind, current);
    let spec = merged_spec(kind, &raw_spec, current, ignore);
    // The spec holds text escaped as a manifest writes it: compared as the loader reads it.
    let mut sent = as_sent(kind, &spec);
    crate::manifest::unescape_strings(&mut sent);
    let problems = crate::api::spec::check_spec(kind, &sent);
    if !problems.is_empty() {
        let text: Vec<String> = problems.into_iter().map(|p| p.message).collect();
        return Err(PullError::NotRepresentable {
            file: file.to_path_buf(),
            address: address.clone(),
            problems: text.join("; "),
        });
    }
    let left = normalize::diff(
        kind,
        &normalize(kind, current, ignore),
        &normalize(kind, &sent, ignore),
    );
    // A secret is never pulled (the manifest keeps its reference, or its allowed literal): a
    // secret that differs is no reason to refuse the rest (red team D27).
    let secrets = kind.def().secrets;
    let left: Vec<_> = left
        .into_iter()
        .filter(|c| !crate::api::registry::is_secret_path(secrets, &c.path))
        .collect();
    if !left.is_empty() {
        let fields: Vec<String> = left.into_iter().map(|c| c.path).collect();
        return Err(PullError::Inexact {
            file: file.to_path_buf(),
            address: address.clone(),
            fields: fields.join(", "),
        });
    }
    let mut envelope = written.as_object().cloned().unwrap_or_default();
    envelope.insert("spec".into(), spec);
    Ok(Value::Object(envelope))
}

/// The object without the top-level fields this cfgctl's API description lacks (a newer
/// server's): they cannot be written into a manifest, which `validate` would refuse.
fn known_fields(kind: Kind, object: &Value) -> Value {
    match object {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| crate::api::spec::has_field(kind, k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The spec as the loader hands it to the planner: embedded mappings as JSON strings.
fn as_sent(kind: Kind, spec: &Value) -> Value {
    let mut spec = spec.clone();
    if let Value::Object(map) = &mut spec {
        for e in kind.def().embedded_json {
            if let Some(v @ Value::Object(_)) = map.get_mut(e.field) {
                *v = Value::String(v.to_string());
            }
        }
    }
    spec
}

// ---------------------------------------------------------------------------------------
// Where each document is in its file.

mod changes;
mod edit;
mod env;
mod form;
mod json_edit;
mod locate;
mod merge;
mod refs;

pub use env::Refused;
use locate::*;
use merge::keys;
pub use merge::merged_spec;
pub use refs::referenced_files;

#[cfg(test)]
mod tests;
