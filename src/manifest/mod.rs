//! Manifest loading: a directory of YAML/JSON files to checked [`Manifest`]s.
//!
//! The loader walks the directory (hidden entries skipped, symlinks not followed, sorted for
//! determinism), reads every `*.yaml`, `*.yml` and `*.json`, splits multi-document YAML,
//! checks the `api_version`/`kind`/`spec` envelope and the spec against the kind's schema,
//! turns a `dashboard_json` mapping into its JSON string, and then checks the set: duplicate
//! addresses, duplicate unique fields, references to undeclared resources (a warning: the
//! resource may exist on the server). It never stops at the first problem: every problem
//! comes back as a located [`Diagnostic`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::api::registry::{Address, Kind};
use crate::api::spec::{self, API_VERSION};
use crate::config::diagnostic::{self, Diagnostic, Problem};
use crate::config::settings::{self, Settings};
use crate::util::jsonpath::escape_pointer;
use crate::util::yaml::{self, Document, Pos, Spans};

mod embedded;
mod env;
mod lean;
mod locate;
mod overlay;
mod promql;
mod read;
mod secrets;
mod set;
mod shape;
mod vars;
pub use env::{load_dir_envs, load_dir_envs_lean, load_dir_for, load_dir_lean};
pub use lean::{Facts, Lean, LetGo, Prepared, ReadBackError, ReadDocument};
pub use locate::Locator;
use locate::{load_plain, spec_spans};
pub use overlay::{FieldOrigin, Provenance};
use read::{is_json_schema, read_text, split_json_array, walk};
pub use read::{no_symlink_on_the_way, sources, NotInside, Sources};
use set::check_set;
use shape::Shape;
pub use vars::Resolved;
pub use vars::{escape, escape_strings, references, unescape, unescape_strings};

/// One declared resource.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub kind: Kind,
    /// `None` only for the ResourcePools singleton.
    pub slug: Option<String>,
    /// The API object as it will be sent (embedded JSON as a string); shared with the plan's
    /// actions, which send it (one copy of every spec, however many hold it).
    pub spec: std::sync::Arc<Value>,
    /// The file, as a path under the directory given (relative when the directory was).
    pub file: PathBuf,
    /// Where the document starts.
    pub pos: Pos,
    /// Positions of the spec's fields, by JSON pointer inside the spec.
    pub spans: Spans,
    /// The digest of the spec's comparable form, worked out once by the planner (or ahead,
    /// on all cores, while the target is read: `plan::prepare`).
    pub digest: std::sync::OnceLock<[u8; 16]>,
    /// What is read of the spec once it was let go (a lean load: `spec` is then `null`
    /// until read back); `None` while the spec is held.
    pub lean: Option<Box<Facts>>,
    /// The embedded documents a lean load's check read for the digest (`Lean::read_document`),
    /// by field: held from the check to the load's hook only (empty otherwise).
    pub prepared: Vec<Prepared>,
}

impl Manifest {
    pub fn address(&self) -> Address {
        Address::new(self.kind, self.slug.clone())
    }

    /// `file:line`, the location shown for the whole resource.
    pub fn source(&self) -> String {
        format!("{}:{}", self.file.display(), self.pos.line)
    }

    /// The position of a field (JSON pointer inside the spec), or of the document.
    pub fn field_pos(&self, pointer: &str) -> Pos {
        self.spans
            .nearest(pointer)
            .map(|s| s.field())
            .unwrap_or(self.pos)
    }
}

/// Everything read from a directory.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    pub manifests: Vec<Manifest>,
    pub settings: Settings,
    /// Every problem found, at its field; a warning about a reference to a resource no
    /// manifest declares points at its document until [`Loaded::locate_warnings`].
    pub diagnostics: Vec<Diagnostic>,
    /// Number of `*.yaml`, `*.yml` and `*.json` files read (the settings file not counted).
    pub manifest_files: usize,
    /// Number of other files seen (not read).
    pub other_files: usize,
    /// What was read.
    pub sources: Sources,
    /// Where the values of an environment's manifests came from (see [`Loaded::provenance`]).
    pub provenance: Provenance,
    /// The environment the manifests were loaded for (what a file read back is read for).
    pub environment: Option<String>,
    /// Where a `${file:…}` may read (`crate::util::file_ref`).
    pub file_scope: crate::util::file_ref::FileScope,
    /// Every file a `${file:…}` named (canonical): data, never read as a manifest.
    pub data_files: std::collections::BTreeSet<PathBuf>,
    /// Every `${env:…}`/`${file:…}` outside a secret field resolved at load, as `env:NAME` or
    /// `file:CANONICAL-PATH`, with the BLAKE3 hash of its value: a remembered no-change plan
    /// holds only while each still resolves to the same value (`memo`), since the files
    /// hashed do not say what a variable or a data file holds.
    pub resolved: Vec<vars::Resolved>,
    /// What the environment's overlay omits, by the overlay file: never adopted by `pull`.
    pub omitted: BTreeMap<Address, PathBuf>,
    /// Every reference of the manifests names one of them (the set's checks found none
    /// undeclared): a plan of exactly these checks none against the target.
    pub references_declared: bool,
}

impl Loaded {
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == diagnostic::Severity::Error)
            .count()
    }
}

/// Problems with the directory itself; nothing could be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("directory `{}` does not exist", .0.display())]
    NotFound(PathBuf),
    #[error("`{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("unknown environment `{name}`{}", if known.is_empty() { "; cfgctl.yaml declares none".to_string() } else { format!("; cfgctl.yaml declares {}", known.join(", ")) })]
    UnknownEnvironment { name: String, known: Vec<String> },
    #[error("cannot read directory `{}`", path.display())]
    Walk {
        path: PathBuf,
        #[source]
        source: walkdir::Error,
    },
}

/// Loads every manifest under `dir`, with no environment selected (overlay directories are
/// not read: they are not part of the base).
pub fn load_dir(dir: &Path) -> Result<Loaded, LoadError> {
    load_dir_for(dir, None)
}

/// Loads one file; the hash of its bytes (zeros when it cannot be read).
fn load_file(
    path: &Path,
    shown: &Path,
    contexts: &[vars::Context<'_>],
    loaded: &mut Vec<Loaded>,
) -> [u8; 32] {
    let text = match read_text(path) {
        Ok(t) => t,
        Err((pos, problem)) => {
            let mut one = Loaded::default();
            one.diagnostics.push(Diagnostic::error(shown, pos, problem));
            loaded.push(one);
            return [0; 32];
        }
    };
    // A file with no `${` reads the same in every environment: read once.
    let contexts = if text.contains("${") {
        contexts
    } else {
        &contexts[..contexts.len().min(1)]
    };
    for ctx in contexts {
        let mut one = Loaded::default();
        load_text(path, shown, &text, ctx, &mut one);
        loaded.push(one);
    }
    *blake3::hash(text.as_bytes()).as_bytes()
}

fn load_text(path: &Path, shown: &Path, text: &str, ctx: &vars::Context<'_>, loaded: &mut Loaded) {
    let is_json = path.extension().and_then(|e| e.to_str()) == Some("json");
    if is_json_schema(text, is_json) {
        loaded.diagnostics.push(Diagnostic::warning(
            shown,
            Pos::new(1, 1),
            Problem::NotAManifest(
                "a JSON Schema document (`$schema` with `definitions` or `properties`), such as \
                 `cfgctl schema --out` writes: skipped"
                    .into(),
            ),
        ));
        // Counted with the files that are not manifests.
        loaded.other_files += 1;
        return;
    }
    let has_refs = text.contains("${");
    let src = vars::Source {
        text,
        is_json,
        path,
        shown,
        plain: true,
    };
    if !is_json && load_plain(&src, has_refs, ctx, loaded) {
        return;
    }
    load_located(&src, has_refs, ctx, loaded);
}

/// [`load_text`] by the located reader: every node's position kept.
fn load_located(
    src: &vars::Source<'_>,
    has_refs: bool,
    ctx: &vars::Context<'_>,
    loaded: &mut Loaded,
) {
    let (text, is_json, path, shown) = (src.text, src.is_json, src.path, src.shown);
    let docs = if is_json {
        match yaml::parse_json(text) {
            // A JSON file holds one object or an array of them.
            Ok(doc) => split_json_array(doc),
            Err(e) => {
                loaded.diagnostics.push(Diagnostic::error(
                    shown,
                    e.pos,
                    Problem::JsonSyntax(e.message),
                ));
                return;
            }
        }
    } else {
        match yaml::parse_documents(text) {
            Ok(docs) => docs,
            Err(e) => {
                loaded.diagnostics.push(Diagnostic::error(
                    shown,
                    e.pos,
                    Problem::YamlSyntax(e.message),
                ));
                return;
            }
        }
    };
    let src = vars::Source {
        text,
        is_json,
        path,
        shown,
        plain: false,
    };
    for mut doc in docs {
        let mut substituted =
            has_refs.then(|| vars::substitute(&mut doc, &src, ctx, &mut loaded.diagnostics));
        let (mut from_files, mut unresolved) = (Vec::new(), Vec::new());
        if let Some(outcome) = &mut substituted {
            loaded.data_files.extend(outcome.files.drain(..));
            from_files = std::mem::take(&mut outcome.whole_files);
            unresolved = std::mem::take(&mut outcome.unresolved);
        }
        let value = std::mem::take(&mut doc.value);
        let mut check = DocCheck {
            file: shown,
            text: yaml::strip_bom(text),
            doc: &doc,
            diagnostics: &mut loaded.diagnostics,
            failed: false,
            from_files: &from_files,
            unresolved: &unresolved,
            read_document: ctx.read_document,
            prepared: Vec::new(),
        };
        if let Some(m) = check.check(value) {
            if let Some(outcome) = substituted {
                loaded.provenance.record(&m, outcome, &mut loaded.resolved);
            }
            loaded.manifests.push(m);
        }
    }
}

/// The checks of one document.
struct DocCheck<'a> {
    file: &'a Path,
    /// The file's text (for positions inside a string value).
    text: &'a str,
    doc: &'a Document,
    diagnostics: &'a mut Vec<Diagnostic>,
    failed: bool,
    /// The values that were a whole `${file:…}` (JSON pointer, the file as shown): a problem
    /// inside one points into its file.
    from_files: &'a [(String, PathBuf)],
    /// The values whose `${…}` did not resolve (JSON pointers; `vars::Outcome::unresolved`).
    unresolved: &'a [String],
    /// A lean load's reader of embedded documents (`Lean::read_document`).
    read_document: Option<ReadDocument>,
    /// What it read, for the manifest ([`Manifest::prepared`]).
    prepared: Vec<Prepared>,
}

impl DocCheck<'_> {
    fn error(&mut self, pos: Pos, problem: Problem) {
        self.failed = true;
        self.diagnostics
            .push(Diagnostic::error(self.file, pos, problem));
    }

    /// Whether the value at the document pointer `pointer` is (inside) one whose `${…}` did not
    /// resolve: its error is reported at the reference, and the text left in its place is not
    /// the value, so checking it would only add a second, misleading error (red team D22).
    fn unresolved(&self, pointer: &str) -> bool {
        self.unresolved.iter().any(|u| {
            pointer
                .strip_prefix(u.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    fn key_pos(&self, pointer: &str) -> Pos {
        self.doc
            .spans
            .get(pointer)
            .map(|s| s.field())
            .unwrap_or(self.doc.start)
    }

    fn value_pos(&self, pointer: &str) -> Pos {
        self.doc
            .spans
            .get(pointer)
            .map(|s| s.value)
            .unwrap_or(self.doc.start)
    }

    /// Checks the document's value (taken out of it: the spec is kept, never copied).
    fn check(&mut self, value: Value) -> Option<Manifest> {
        let (kind, spec) = self.envelope(value)?;
        // The nodes inside an embedded document are checked here and never pointed at later:
        // keeping their positions for the whole run would cost more than the document itself.
        let spans = spec_spans(self.doc, kind);
        let mut spec = Value::Object(spec);
        let bad_embedded = self.embedded_json(kind, &mut spec);
        if let Some(why) = kind.def().unaddressable {
            let pos = self.value_pos("/kind");
            self.error(pos, Problem::Unaddressable(why.to_string()));
            return None;
        }
        let slug = self.slug(kind, &spec);
        self.schema(kind, slug.as_deref(), &spec, &bad_embedded);
        self.promql(kind, &spec);
        self.literal_secrets(kind, slug.as_deref(), &spec);
        if self.failed {
            return None;
        }
        Some(Manifest {
            kind,
            slug,
            spec: std::sync::Arc::new(spec),
            file: self.file.to_path_buf(),
            pos: self.doc.start,
            spans,
            digest: std::sync::OnceLock::new(),
            lean: None,
            prepared: std::mem::take(&mut self.prepared),
        })
    }

    /// The `api_version`/`kind`/`spec` envelope: the kind and the spec, when both are usable.
    fn envelope(&mut self, value: Value) -> Option<(Kind, serde_json::Map<String, Value>)> {
        let Value::Object(mut envelope) = value else {
            let found = crate::util::jsonpath::type_name(&value);
            self.error(self.doc.start, Problem::NotMapping { found });
            return None;
        };
        if self.file.extension().is_some_and(|e| e == "json")
            && !["api_version", "kind", "spec"]
                .iter()
                .any(|k| envelope.contains_key(*k))
        {
            let name = self.file.file_name().unwrap_or_default().to_string_lossy();
            let problem = Problem::NotAManifest(format!(
                "a JSON document with no `api_version`, `kind` or `spec`, and no manifest names \
                 it with `${{file:…}}`; to keep a dashboard in its own file, reference it from \
                 its manifest, `dashboard_json: ${{file:{name}}}` (relative to the manifest; \
                 docs/manifests.md), and the file is read as the dashboard, not as a manifest"
            ));
            self.error(self.doc.start, problem);
            return None;
        }
        match envelope.get("api_version") {
            None => self.error(self.doc.start, Problem::MissingApiVersion),
            Some(Value::String(v)) if v == API_VERSION => {}
            Some(other) => {
                let pos = self.value_pos("/api_version");
                self.error(pos, Problem::UnknownApiVersion(other.to_string()));
            }
        }
        let kind = match envelope.get("kind") {
            None => {
                self.error(self.doc.start, Problem::MissingKind);
                None
            }
            Some(value) => {
                let kind = value.as_str().and_then(Kind::from_name);
                if kind.is_none() {
                    let suggestion = value.as_str().and_then(Kind::suggest);
                    let pos = self.value_pos("/kind");
                    self.error(
                        pos,
                        Problem::UnknownKind {
                            name: value.to_string(),
                            suggestion,
                        },
                    );
                }
                kind
            }
        };
        for key in envelope.keys() {
            if !matches!(key.as_str(), "api_version" | "kind" | "spec") {
                let pos = self.key_pos(&format!("/{}", escape_pointer(key)));
                let belongs_in_spec = kind.is_some_and(|k| spec::has_field(k, key));
                self.error(
                    pos,
                    Problem::UnknownEnvelopeField {
                        field: key.clone(),
                        belongs_in_spec,
                    },
                );
            }
        }
        let kind = kind?;
        match envelope.shift_remove("spec") {
            None => {
                self.error(self.doc.start, Problem::MissingSpec(kind));
                None
            }
            Some(Value::Object(spec)) => Some((kind, spec)),
            Some(other) => {
                let pos = self.value_pos("/spec");
                self.error(
                    pos,
                    Problem::SpecNotMapping(crate::util::jsonpath::type_name(&other)),
                );
                None
            }
        }
    }

    /// The spec's slug (none for a singleton), checked usable.
    fn slug(&mut self, kind: Kind, spec: &Value) -> Option<String> {
        if kind.def().singleton {
            return None;
        }
        match spec.get("slug") {
            Some(Value::String(s)) if !crate::api::wire::is_usable_segment(s) && !s.is_empty() => {
                let pos = self.value_pos("/spec/slug");
                self.error(
                    pos,
                    Problem::UnusableSlug {
                        kind,
                        slug: s.clone(),
                    },
                );
                None
            }
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            // A slug of another type is the schema check's to report.
            Some(v) if !v.is_string() => None,
            _ => {
                let pos = self.key_pos("/spec");
                self.error(pos, Problem::MissingSlug(kind));
                None
            }
        }
    }

    /// The spec against the kind's schema and its one-of rules.
    fn schema(&mut self, kind: Kind, slug: Option<&str>, spec: &Value, bad_embedded: &[String]) {
        let address = || Address::new(kind, slug.map(str::to_string)).to_string();
        for problem in spec::check_spec(kind, spec) {
            // An embedded document that failed its own check is reported once.
            if bad_embedded.contains(&problem.pointer) {
                continue;
            }
            let pointer = format!("/spec{}", problem.pointer);
            if self.unresolved(&pointer) {
                continue;
            }
            let pos = match self.doc.spans.nearest(&pointer) {
                Some(s) if problem.at_key => s.field(),
                Some(s) if problem.pointer.is_empty() => s.key.unwrap_or(s.value),
                Some(s) => s.value,
                None => self.doc.start,
            };
            self.error(
                pos,
                Problem::Schema {
                    address: address(),
                    message: problem.message,
                },
            );
        }
        if slug.is_some() {
            for rule in kind.def().required {
                if !rule.satisfied_by(spec) {
                    let pos = self.key_pos("/spec");
                    self.error(
                        pos,
                        Problem::RequiredOneOf {
                            address: address(),
                            rule: rule.describe(),
                        },
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
