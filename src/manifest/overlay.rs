//! An environment's overlay (docs/environments.md): manifests in the same envelope that patch
//! the base for that environment. An address the base declares is merged as a JSON merge patch
//! (RFC 7386: `null` removes a field, a mapping merges, anything else replaces); a new address
//! adds a manifest; `cfgctl: {omit: true}` beside `kind` drops the base manifest.
//!
//! [`Provenance`] keeps where an environment's values came from, for `pull --env`: the base
//! file or the overlay file, and the variable a value was substituted from.

use std::collections::BTreeMap;

use super::vars::{self, Outcome};
use super::*;
use crate::config::environments::Environment;

/// Where the values of a load's manifests came from, beyond the manifest's own file: kept
/// for manifests that used a variable or were patched by an overlay.
#[derive(Clone, Debug, Default)]
pub struct Provenance(BTreeMap<Address, Origin>);

#[derive(Clone, Debug, Default)]
struct Origin {
    /// Variables the manifest's own document used: JSON pointer inside the spec, name.
    vars: Vec<(String, String)>,
    overlay: Option<Patch>,
}

/// An overlay document merged into a base manifest.
#[derive(Clone, Debug)]
struct Patch {
    file: PathBuf,
    start: Pos,
    /// The overlay's spec: the merge patch.
    spec: Value,
    /// Its positions, inside the spec.
    spans: Spans,
    vars: Vec<(String, String)>,
}

/// Where one field's value was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldOrigin {
    /// The file as shown (the base manifest's, or the overlay's that set the field).
    pub file: PathBuf,
    pub line: u32,
    /// The variable the value was substituted from (`pull --env` refuses to write it back).
    pub from_var: Option<String>,
}

impl Provenance {
    pub(super) fn record(
        &mut self,
        m: &Manifest,
        outcome: Outcome,
        resolved: &mut Vec<super::vars::Resolved>,
    ) {
        resolved.extend(outcome.resolved);
        let vars = spec_vars(outcome.vars);
        if !vars.is_empty() {
            self.0.entry(m.address()).or_default().vars = vars;
        }
    }

    /// Whether an environment's overlay patched the manifest at `address`.
    pub(super) fn patched(&self, address: &Address) -> bool {
        self.0.get(address).is_some_and(|o| o.overlay.is_some())
    }

    /// Where the overlay that patched `address` wrote the value at `pointer` (or the
    /// ancestor of it that it replaced): the overlay file and the field's position. `None`
    /// when no overlay set it: the value is the manifest's own file's.
    pub(super) fn overlay_field(&self, address: &Address, pointer: &str) -> Option<(&Path, Pos)> {
        let patch = self.0.get(address)?.overlay.as_ref()?;
        touches(&patch.spec, pointer).then(|| {
            let pos = patch
                .spans
                .nearest(pointer)
                .map_or(patch.start, |s| s.field());
            (patch.file.as_path(), pos)
        })
    }

    pub(super) fn extend(&mut self, other: Provenance) {
        for (address, origin) in other.0 {
            self.0.entry(address).or_insert(origin);
        }
    }
}

impl Loaded {
    /// Where the value at `pointer` (a JSON pointer inside the spec, `/labels/team`; `""` for
    /// the whole spec) of the manifest at `address` was written: the overlay file when the
    /// environment's overlay set it (or an ancestor of it), else the manifest's own file;
    /// with the variable it came from, if any. `None`: no such manifest.
    pub fn provenance(&self, address: &Address, pointer: &str) -> Option<FieldOrigin> {
        let m = self.manifests.iter().find(|m| m.address() == *address)?;
        let origin = self.provenance.0.get(address);
        if let Some((file, pos)) = self.provenance.overlay_field(address, pointer) {
            let vars = origin.and_then(|o| o.overlay.as_ref()).map(|p| &p.vars[..]);
            return Some(FieldOrigin {
                file: file.to_path_buf(),
                line: pos.line,
                from_var: vars.and_then(|v| var_at(v, pointer)),
            });
        }
        Some(FieldOrigin {
            file: m.file.clone(),
            line: Locator::of(self).field_pos(m, pointer).line,
            from_var: origin.and_then(|o| var_at(&o.vars, pointer)),
        })
    }
}

/// The variables used inside the spec, their pointers re-rooted at it.
fn spec_vars(vars: Vec<(String, String)>) -> Vec<(String, String)> {
    vars.into_iter()
        .filter_map(|(p, name)| Some((p.strip_prefix("/spec")?.to_string(), name)))
        .collect()
}

/// A variable used at `pointer`, below it or above it.
fn var_at(vars: &[(String, String)], pointer: &str) -> Option<String> {
    let related = |p: &str| {
        p == pointer
            || p.strip_prefix(pointer).is_some_and(|r| r.starts_with('/'))
            || pointer.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
    };
    vars.iter()
        .find(|(p, _)| related(p))
        .map(|(_, n)| n.clone())
}

/// Whether a merge patch sets the value at `pointer` (or replaces an ancestor of it).
fn touches(patch: &Value, pointer: &str) -> bool {
    let mut at = patch;
    for segment in pointer.split('/').skip(1) {
        let Value::Object(map) = at else {
            return true;
        };
        let key = segment.replace("~1", "/").replace("~0", "~");
        match map.get(&key) {
            Some(next) => at = next,
            None => return false,
        }
    }
    true
}

/// RFC 7386: `patch` merged into `target`.
pub(super) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target) = target {
        for (key, value) in fields {
            if value.is_null() {
                target.shift_remove(key);
            } else {
                merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// Merges `env`'s overlay into its load (`loaded` holds the base manifests).
pub(super) fn apply(dir: &Path, env: &Environment, declared: bool, loaded: &mut Loaded) {
    let Some(rel) = &env.overlay else { return };
    let root = dir.join(rel);
    let settings_file = read::display_path(&dir.join(settings::FILE_NAME));
    let refused = |loaded: &mut Loaded, why: String| {
        loaded.diagnostics.push(Diagnostic::error(
            &settings_file,
            env.overlay_pos,
            Problem::Overlay(format!("environment `{}`: {why}", env.name)),
        ));
    };
    // As for `policy:`: no symlink may lead the overlay out of the repository.
    if let Err(NotInside::Symlink(link)) = read::no_symlink_on_the_way(dir, rel) {
        let link = read::display_path(&link);
        refused(
            loaded,
            format!(
                "`{}` is a symlink, and cfgctl follows none: put the overlay directory itself there",
                link.display()
            ),
        );
        return;
    }
    let Ok(files) = walk(&root) else {
        let why = match root.is_file() {
            // Red team E15: a file was said not to exist.
            true => format!(
                "`{}` is a file; an overlay is a directory of manifests",
                rel.display()
            ),
            false => format!("overlay directory `{}` does not exist", rel.display()),
        };
        refused(loaded, why);
        return;
    };
    loaded.diagnostics.extend(files.problems);
    let scope = loaded.file_scope.clone();
    let tokens = crate::config::environments::token_variables(&loaded.settings.environments);
    let ctx = vars::Context {
        env: Some(env),
        declared,
        files: Some(&scope),
        tokens: &tokens,
        read_document: None,
    };
    let mut merger = Merger {
        loaded,
        ctx,
        seen: BTreeMap::new(),
    };
    if let Some((_, shown)) = &files.settings {
        let problem = Problem::NotAManifest(format!(
            "a settings file in environment `{}`'s overlay: not read",
            env.name
        ));
        merger
            .loaded
            .diagnostics
            .push(Diagnostic::warning(shown, Pos::new(1, 1), problem));
    }
    for (path, shown) in &files.files {
        merger.file(path, shown);
    }
}

struct Merger<'a> {
    loaded: &'a mut Loaded,
    ctx: vars::Context<'a>,
    /// The overlay documents by address: one per address.
    seen: BTreeMap<Address, String>,
}

impl Merger<'_> {
    fn error(&mut self, file: &Path, pos: Pos, message: String) {
        self.loaded
            .diagnostics
            .push(Diagnostic::error(file, pos, Problem::Overlay(message)));
    }

    fn file(&mut self, path: &Path, shown: &Path) {
        let text = match read_text(path) {
            Ok(t) => t,
            Err((pos, problem)) => {
                self.loaded
                    .diagnostics
                    .push(Diagnostic::error(shown, pos, problem));
                return;
            }
        };
        let is_json = path.extension().and_then(|e| e.to_str()) == Some("json");
        let docs = if is_json {
            yaml::parse_json(&text)
                .map(split_json_array)
                .map_err(|e| (e.pos, Problem::JsonSyntax(e.message)))
        } else {
            yaml::parse_documents(&text).map_err(|e| (e.pos, Problem::YamlSyntax(e.message)))
        };
        let docs = match docs {
            Ok(docs) => docs,
            Err((pos, problem)) => {
                self.loaded
                    .diagnostics
                    .push(Diagnostic::error(shown, pos, problem));
                return;
            }
        };
        let src = vars::Source {
            text: &text,
            is_json,
            path,
            shown,
            plain: false,
        };
        for mut doc in docs {
            let outcome = if text.contains("${") {
                vars::substitute(&mut doc, &src, &self.ctx, &mut self.loaded.diagnostics)
            } else {
                Outcome::default()
            };
            self.document(doc, shown, &text, outcome);
        }
    }

    /// One overlay document: an omission, a patch or a new manifest.
    fn document(&mut self, mut doc: Document, shown: &Path, text: &str, outcome: Outcome) {
        let omit = match doc
            .value
            .as_object_mut()
            .and_then(|e| e.shift_remove("cfgctl"))
        {
            None => false,
            Some(Value::Object(c)) if c.len() == 1 && c.get("omit") == Some(&Value::Bool(true)) => {
                true
            }
            Some(_) => {
                let pos = doc.spans.get("/cfgctl").map_or(doc.start, |s| s.value);
                let message = "`cfgctl` holds `omit: true` and nothing else".to_string();
                self.error(shown, pos, message);
                return;
            }
        };
        let address = doc
            .value
            .get("kind")
            .and_then(Value::as_str)
            .and_then(Kind::from_name)
            .map(|kind| {
                let slug = doc.value.pointer("/spec/slug").and_then(Value::as_str);
                Address::new(
                    kind,
                    slug.filter(|_| !kind.def().singleton).map(str::to_string),
                )
            });
        let here = format!("{}:{}", shown.display(), doc.start);
        if let Some(a) = &address {
            if let Some(first) = self.seen.insert(a.clone(), here) {
                self.error(
                    shown,
                    doc.start,
                    format!("{a} is already in this overlay at {first}"),
                );
                return;
            }
        }
        let base = address
            .as_ref()
            .and_then(|a| self.loaded.manifests.iter().position(|m| m.address() == *a));
        match (omit, base, address) {
            (true, Some(i), Some(a)) => self.omit(doc, shown, i, a),
            (true, _, a) => {
                let name = a.map_or_else(|| "a manifest".to_string(), |a| a.to_string());
                let pos = doc.spans.get("/cfgctl").map_or(doc.start, |s| s.field());
                // A base declaration with errors is not loaded: say it may be that one.
                let hint = if self.loaded.error_count() > 0 {
                    " (or the one that does has errors)"
                } else {
                    ""
                };
                let message = format!("omits {name}, which no base manifest declares{hint}");
                self.error(shown, pos, message);
            }
            (false, Some(i), Some(a)) => self.patch(doc, shown, text, (i, a), outcome),
            (false, _, _) => self.add(doc, shown, text, outcome),
        }
    }

    fn omit(&mut self, doc: Document, shown: &Path, i: usize, address: Address) {
        let extra = doc
            .value
            .get("spec")
            .and_then(Value::as_object)
            .and_then(|s| s.keys().find(|k| *k != "slug").cloned());
        if let Some(field) = extra {
            let pointer = format!("/spec/{}", crate::util::jsonpath::escape_pointer(&field));
            let pos = doc.spans.get(&pointer).map_or(doc.start, |s| s.field());
            let message =
                format!("{address} is omitted: its spec holds only its slug, not `{field}`");
            self.error(shown, pos, message);
            return;
        }
        self.loaded.manifests.remove(i);
        self.loaded.provenance.0.remove(&address);
        self.loaded.omitted.insert(address, shown.to_path_buf());
    }

    fn patch(
        &mut self,
        mut doc: Document,
        shown: &Path,
        text: &str,
        (i, address): (usize, Address),
        outcome: Outcome,
    ) {
        let Some(patch) = doc.value.get("spec").filter(|s| s.is_object()).cloned() else {
            // Not a mapping: the checks of a whole manifest say so.
            return self.add(doc, shown, text, outcome);
        };
        let base = &self.loaded.manifests[i];
        let mut spec = (*base.spec).clone();
        merge_patch(&mut spec, &patch);
        let (file, pos, spans) = (base.file.clone(), base.pos, base.spans.clone());
        if let Some(envelope) = doc.value.as_object_mut() {
            envelope.insert("spec".into(), spec);
        }
        let value = std::mem::take(&mut doc.value);
        let mut check = DocCheck {
            file: shown,
            text: crate::util::yaml::strip_bom(text),
            doc: &doc,
            diagnostics: &mut self.loaded.diagnostics,
            failed: false,
            from_files: &[],
            unresolved: &outcome.unresolved,
            read_document: None,
            prepared: Vec::new(),
        };
        let Some(mut m) = check.check(value) else {
            return;
        };
        // The resource is declared in the base file; the overlay's part is in the provenance.
        (m.file, m.pos, m.spans) = (file, pos, spans);
        self.loaded.manifests[i] = m;
        let origin = self.loaded.provenance.0.entry(address).or_default();
        origin.overlay = Some(Patch {
            file: shown.to_path_buf(),
            start: doc.start,
            spec: patch,
            spans: doc.spans.subtree("/spec"),
            vars: spec_vars(outcome.vars),
        });
    }

    fn add(&mut self, mut doc: Document, shown: &Path, text: &str, outcome: Outcome) {
        let value = std::mem::take(&mut doc.value);
        let mut check = DocCheck {
            file: shown,
            text: crate::util::yaml::strip_bom(text),
            doc: &doc,
            diagnostics: &mut self.loaded.diagnostics,
            failed: false,
            from_files: &[],
            unresolved: &outcome.unresolved,
            read_document: None,
            prepared: Vec::new(),
        };
        if let Some(m) = check.check(value) {
            self.loaded
                .provenance
                .record(&m, outcome, &mut self.loaded.resolved);
            self.loaded.manifests.push(m);
        }
    }
}

#[cfg(test)]
mod tests;
