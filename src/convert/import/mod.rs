//! `cfgctl import`: another system's configuration turned into manifests (docs/import.md).
//!
//! Each importer (`prometheus`) is pure up to its [`Output`]: the files to write (paths
//! relative to the output folder, texts) and a [`Report`] of what was made, what was changed or
//! not mapped (each with its source file and line) and which variables hold the credentials.
//! This module holds what importers share: finding the kinds they write by the fields they
//! write (the registry, never a kind's name), unique slugs, the manifest text (sorted,
//! deterministic: the same input gives the same bytes), the report (`IMPORT.md` and the
//! summary), and the all-or-nothing write that refuses to replace a file without `--force`.

pub mod grafana;
pub mod prometheus;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::api::registry::Kind;
use crate::util::output::{code_span, Inert, Markdown};

/// Why an import did not happen. Nothing is written when one is returned.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}:{line}:{column}: {message}", file.display())]
    Located {
        file: PathBuf,
        line: u32,
        column: u32,
        message: String,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no input file found (rule files end in .yaml, .yml or .json)", path.display())]
    NoInput { path: PathBuf },
    #[error("the API description has no kind with the fields {fields:?}, which the import writes")]
    NoKind { fields: &'static [&'static str] },
    #[error("{0}")]
    Options(String),
    #[error("import prometheus reads PromQL, and this cfgctl is built without it (cargo feature `promql`)")]
    WithoutPromql,
    #[error("{} already exist{} in {}: nothing was written (--force replaces them)", list(.paths), if .paths.len() == 1 { "s" } else { "" }, .dir.display())]
    Exists { dir: PathBuf, paths: Vec<PathBuf> },
    #[error("writing {}: {source}; nothing was written", dir.display())]
    Write {
        dir: PathBuf,
        #[source]
        source: crate::util::safe_write::WriteError,
    },
}

fn list(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    match paths.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}

/// Where something came from: a file as the user named it, and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Source {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One thing not mapped, or mapped with a change: where, what, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    pub source: Source,
    /// What it is about (`alert HostDown`, `receiver team-X`).
    pub subject: String,
    pub message: String,
}

/// A credential written as a reference: the variable and what it stands for (never its value).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Variable {
    pub name: String,
    pub source: Source,
    pub holds: String,
}

/// What an import made and what it could not keep as it was.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The command as a user would type it again (for the report's heading).
    pub command: String,
    pub inputs: Vec<String>,
    pub counts: BTreeMap<&'static str, usize>,
    pub notes: Vec<Note>,
    pub variables: Vec<Variable>,
}

impl Report {
    pub fn note(
        &mut self,
        source: &Source,
        subject: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.notes.push(Note {
            source: source.clone(),
            subject: subject.into(),
            message: message.into(),
        });
    }

    /// The report as Markdown (`IMPORT.md`): counts, variables, then every note by source.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# Import report\n\n");
        let _ = writeln!(out, "Written by {} from:\n", code_span(&self.command));
        for input in &self.inputs {
            let _ = writeln!(out, "- {}", code_span(input));
        }
        out.push_str("\n| Kind | Manifests |\n| --- | ---: |\n");
        for (kind, n) in &self.counts {
            let _ = writeln!(out, "| {kind} | {n} |");
        }
        if !self.variables.is_empty() {
            out.push_str("\n## Variables to set\n\nEvery credential was written as an `${env:NAME}` reference, never as its value. Set these before `plan` or `apply`:\n\n| Variable | Holds | Source |\n| --- | --- | --- |\n");
            for v in self.sorted_variables() {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} |",
                    code_span(&v.name),
                    message_cell(&v.holds),
                    cell(&v.source.to_string())
                );
            }
        }
        out.push_str("\n## Not mapped or changed\n\n");
        if self.notes.is_empty() {
            out.push_str("Everything was mapped as it was.\n");
            return out;
        }
        out.push_str("| Source | Item | What happened |\n| --- | --- | --- |\n");
        for n in self.sorted_notes() {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                cell(&n.source.to_string()),
                cell(&n.subject),
                message_cell(&n.message)
            );
        }
        out
    }

    /// The summary for stderr: one line per note, then the counts and the variables.
    pub fn summary(&self, out_dir: &Path) -> String {
        let mut out = String::new();
        for n in self.sorted_notes() {
            // Input text (a title, an alert name) never starts a line of its own.
            let _ = writeln!(
                out,
                "{}: note: {}: {}",
                Inert(&n.source),
                Inert(&n.subject),
                Inert(&n.message)
            );
        }
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let total: usize = self.counts.values().sum();
        let _ = writeln!(
            out,
            "imported {total} manifests ({}) into {} ({} not mapped or changed: see {})",
            counts.join(", "),
            out_dir.display(),
            self.notes.len(),
            out_dir.join(REPORT).display()
        );
        let vars = self.sorted_variables();
        if !vars.is_empty() {
            let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
            let _ = writeln!(
                out,
                "set these variables before planning (credentials are written as references): {}",
                names.join(", ")
            );
        }
        out
    }

    fn sorted_notes(&self) -> Vec<&Note> {
        let mut notes: Vec<&Note> = self.notes.iter().collect();
        notes.sort();
        notes
    }

    fn sorted_variables(&self) -> Vec<&Variable> {
        let mut vars: Vec<&Variable> = self.variables.iter().collect();
        vars.sort();
        vars
    }
}

/// A Markdown table cell of text from the input (a title, an alert name): one line, inert,
/// no HTML or Markdown of its own (`output::Markdown`).
fn cell(text: &str) -> String {
    Markdown(text).to_string()
}

/// A Markdown table cell of a message cfgctl wrote (its code spans kept) that may quote the
/// input: one line, inert, no HTML, pipes escaped.
fn message_cell(text: &str) -> String {
    let text = Inert(text).to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' => out.push_str("\\|"),
            c => out.push(c),
        }
    }
    out
}

/// The report's file name in the output folder.
pub const REPORT: &str = "IMPORT.md";

/// What an import produced: files by path (relative to the output folder) and the report.
#[derive(Debug, Default)]
pub struct Output {
    pub files: BTreeMap<PathBuf, String>,
    pub report: Report,
}

/// The kind whose object has every one of `fields` (the fields an importer writes): the
/// registry's kinds as the embedded API description defines them. Exactly one must; where
/// several kinds share one definition (ClassicDashboard reuses GrafanaDashboard's), the kind
/// the definition is named after is the one.
pub fn kind_with(fields: &'static [&'static str]) -> Result<Kind, ImportError> {
    let doc = crate::api::registry::embedded_doc();
    let found: Vec<&crate::api::registry::KindDef> = crate::api::registry::embedded_kinds()
        .into_iter()
        .filter(|def| {
            let props = &doc["definitions"][def.definition]["properties"];
            fields.iter().all(|f| props.get(f).is_some())
        })
        .collect();
    let own: Vec<&crate::api::registry::KindDef> = found
        .iter()
        .copied()
        .filter(|def| def.definition.ends_with(def.name))
        .collect();
    match (found.as_slice(), own.as_slice()) {
        ([def], _) | (_, [def]) => Ok(def.kind),
        _ => Err(ImportError::NoKind { fields }),
    }
}

/// The properties of a definition the embedded description names (`$ref` followed once).
pub fn properties_of(kind: Kind, path: &[&str]) -> BTreeSet<String> {
    let doc = crate::api::registry::embedded_doc();
    let mut schema = &doc["definitions"][kind.def().definition];
    for step in path {
        schema = &schema["properties"][*step];
        if let Some(name) = schema["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/definitions/"))
        {
            schema = &doc["definitions"][name];
        }
    }
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Longest slug an import makes.
const MAX_SLUG: usize = 100;

/// `text` as a slug: lower-case letters and digits, runs of anything else one `-`. Letters
/// outside ASCII are transliterated first (`é` -> `e`, `ß` -> `ss`, `Ж` -> `Zh`: deunicode's
/// tables), so a title in another language keeps its words.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in deunicode::deunicode(text).chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_string();
    out.truncate(MAX_SLUG);
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "unnamed".to_string()
    } else {
        out
    }
}

/// Slugs handed out once each: a taken one gets `-2`, `-3`, ... in the order asked, skipping
/// the slugs reserved for the names still to come ([`Slugs::reserving`]).
#[derive(Debug, Default)]
pub struct Slugs(BTreeSet<String>, BTreeSet<String>);

impl Slugs {
    /// Slugs for `names` (those to be asked for): each one's own slug is reserved for it, so
    /// that a suffixed slug is never another name's own (red team E17).
    pub fn reserving<'a>(names: impl IntoIterator<Item = &'a str>) -> Slugs {
        Slugs(BTreeSet::new(), names.into_iter().map(slug).collect())
    }

    /// `text`'s slug, unique among those given so far, and none of `kept` (slugs that belong
    /// to their exact owners: a Grafana uid that is a slug as it is) unless `text` is one of
    /// them itself and still free.
    pub fn unique_keeping(&mut self, text: &str, kept: &BTreeSet<String>) -> String {
        let base = slug(text);
        if base == text && kept.contains(&base) && self.0.insert(base.clone()) {
            return base;
        }
        if !kept.contains(&base) && self.0.insert(base.clone()) {
            return base;
        }
        let mut n = 1;
        loop {
            n += 1;
            let candidate = format!("{base}-{n}");
            let free = !kept.contains(&candidate) && !self.1.contains(&candidate);
            if free && self.0.insert(candidate.clone()) {
                return candidate;
            }
        }
    }

    pub fn unique(&mut self, text: &str) -> String {
        self.unique_keeping(text, &BTreeSet::new())
    }
}

/// Manifests as one YAML file: each spec in the vendor envelope, one document each.
pub fn manifest_file(docs: &[(Kind, Value)]) -> String {
    let mut out = String::new();
    for (kind, spec) in docs {
        let mut envelope = Map::new();
        envelope.insert("api_version".into(), crate::api::spec::API_VERSION.into());
        envelope.insert("kind".into(), kind.name().into());
        envelope.insert("spec".into(), spec.clone());
        if !out.is_empty() {
            out.push_str("---\n");
        }
        // A JSON value always serialises; an empty document is never written.
        out.push_str(&serde_saphyr::to_string(&Value::Object(envelope)).unwrap_or_default());
    }
    out
}

/// Writes `output` into `dir` with its report, all or nothing. Files already there are
/// refused, naming them, unless `force` (then they are replaced; other files stay).
pub fn write(dir: &Path, output: &Output, force: bool) -> Result<(), ImportError> {
    let mut files = output.files.clone();
    files.insert(PathBuf::from(REPORT), output.report.markdown());
    let existing: Vec<PathBuf> = files
        .keys()
        .filter(|rel| dir.join(rel).symlink_metadata().is_ok())
        .cloned()
        .collect();
    if !existing.is_empty() && !force {
        return Err(ImportError::Exists {
            dir: dir.to_path_buf(),
            paths: existing,
        });
    }
    let mut batch = crate::util::safe_write::Batch::new(dir);
    for (rel, text) in files {
        if existing.contains(&rel) {
            batch.replace(rel, text);
        } else {
            batch.create(rel, text);
        }
    }
    batch.commit().map_err(|failed| ImportError::Write {
        dir: dir.to_path_buf(),
        source: failed.error,
    })
}

/// The input files under `paths`: a file as given, a folder's `.yaml`/`.yml`/`.json` files
/// (sorted, hidden entries skipped). A path that names nothing is an error.
pub fn input_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| ImportError::Read {
            path: path.clone(),
            source,
        })?;
        if !meta.is_dir() {
            out.push(path.clone());
            continue;
        }
        let before = out.len();
        let walk = walkdir::WalkDir::new(path)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walk {
            let entry = entry.map_err(|e| ImportError::Read {
                path: e.path().unwrap_or(path).to_path_buf(),
                source: e.into(),
            })?;
            let name = entry.file_name().to_string_lossy();
            if entry.file_type().is_file()
                && [".yaml", ".yml", ".json"].iter().any(|x| name.ends_with(x))
            {
                out.push(entry.into_path());
            }
        }
        if out.len() == before {
            return Err(ImportError::NoInput { path: path.clone() });
        }
    }
    Ok(out)
}

/// A file's text, read whole.
pub fn read(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// A located error at `pos` in `file`.
pub fn located(
    file: &Path,
    pos: crate::util::yaml::Pos,
    message: impl Into<String>,
) -> ImportError {
    ImportError::Located {
        file: file.to_path_buf(),
        line: pos.line,
        column: pos.column,
        message: message.into(),
    }
}

#[cfg(test)]
mod tests;
