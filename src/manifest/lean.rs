//! The lean load: for a plan that keeps no manifest, each manifest gives up its spec as soon
//! as its file is checked, keeping only what the set's checks and the planner read of it
//! without comparing ([`Facts`]: its references and unique-field values; its digest is set by
//! the caller's hook before). Specs are most of what a load holds, so a no-change plan holds
//! digests, not the repository. The few manifests the planner then needs in full (to create,
//! to update, to upsert) are read back from their files ([`Loaded::read_back`]), each file
//! checked against the hash of the bytes the first load read: a file changed in between is
//! refused, never mixed with the first version.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{load_text, read_text, vars, Loaded, Manifest};
use crate::api::registry::{FoundReference, Volatile};
use crate::config::settings::Settings;

/// The hook of a lean load, called on each manifest as soon as its file is checked: it sets
/// what the caller needs of the spec (its digest) and says whether the spec may go.
pub type LetGo<'a> = dyn Fn(&Manifest, &Settings) -> bool + Sync + 'a;

/// How the caller of a lean load reads an embedded document for its digest
/// (`plan::normalize::read_document`): the document's comparable bytes (`Some(None)`: nothing
/// is left of it), `None` when it does not take the text on.
pub type ReadDocument = fn(&str, &[Volatile]) -> Option<Option<Vec<u8>>>;

/// An embedded document's field and what [`ReadDocument`] read of it.
pub type Prepared = (&'static str, Option<Vec<u8>>);

/// The caller's part in a lean load.
#[derive(Clone, Copy)]
pub struct Lean<'a> {
    /// Called on each manifest as soon as its file is checked.
    pub let_go: &'a LetGo<'a>,
    /// Reads each embedded document given as a string, in place of the check's own parse of
    /// it (a text it takes on is JSON: an object when it starts with `{`). The bytes are kept
    /// on the manifest ([`Manifest::prepared`]) for `let_go`'s digest, then let go: a plan
    /// reads each document once. One it does not take on is parsed by the check as ever,
    /// which locates its errors.
    pub read_document: ReadDocument,
}

/// What the load's set checks and the planner read of a manifest whose spec was let go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Every reference the spec makes (`KindDef::references_in`).
    pub references: Vec<FoundReference>,
    /// The kind's unique fields that hold a string, with that string.
    pub unique: Vec<(&'static str, String)>,
}

impl Facts {
    fn of(m: &Manifest) -> Facts {
        let def = m.kind.def();
        Facts {
            references: def.references_in(&m.spec),
            unique: def
                .unique_fields
                .iter()
                .filter_map(|&f| Some((f, m.spec.get(f)?.as_str()?.to_string())))
                .collect(),
        }
    }
}

impl Manifest {
    /// Records what is read of the spec without it ([`Facts`]) and lets the spec go (it
    /// becomes `null` until [`Loaded::read_back`] restores it).
    pub fn let_go_of_spec(&mut self) {
        if self.lean.is_none() {
            self.lean = Some(Box::new(Facts::of(self)));
            self.spec = Arc::new(Value::Null);
        }
    }

    /// Whether the spec was let go (a lean load) and not read back.
    pub fn is_lean(&self) -> bool {
        self.lean.is_some()
    }

    /// Every reference the spec makes, in registry order (recorded when the spec was let go:
    /// borrowed, not copied, for every manifest a plan checks).
    pub fn references(&self) -> std::borrow::Cow<'_, [FoundReference]> {
        match &self.lean {
            Some(facts) => std::borrow::Cow::Borrowed(&facts.references),
            None => std::borrow::Cow::Owned(self.kind.def().references_in(&self.spec)),
        }
    }

    /// The string the spec holds at a top-level `field` (recorded for the kind's unique
    /// fields when the spec was let go).
    pub fn unique_value(&self, field: &str) -> Option<&str> {
        match &self.lean {
            Some(facts) => facts
                .unique
                .iter()
                .find(|(f, _)| *f == field)
                .map(|(_, v)| v.as_str()),
            None => self.spec.get(field).and_then(Value::as_str),
        }
    }
}

/// Why the specs a plan needs could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadBackError {
    #[error("`{}` changed while the plan was being made (its bytes are not those loaded at the start): run the plan again", .file.display())]
    Changed { file: PathBuf },
    #[error("`{token}` in `{}` reads another value than when the plan started: run the plan again", .file.display())]
    ValueChanged { file: PathBuf, token: String },
    #[error("cannot read `{}` again while making the plan: {reason}", .file.display())]
    Unreadable { file: PathBuf, reason: String },
}

impl Loaded {
    /// Reads back the specs of the lean manifests `wanted` picks, reading each of their files
    /// once, and only those files. A file whose bytes (or whose `${file:…}`/`${env:…}` values)
    /// are not those of the first load is refused. The number of files read.
    pub fn read_back(
        &mut self,
        wanted: impl Fn(&Manifest) -> bool,
    ) -> Result<usize, ReadBackError> {
        let mut by_file: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        for (i, m) in self.manifests.iter().enumerate() {
            if m.is_lean() && wanted(m) {
                by_file.entry(m.file.clone()).or_default().push(i);
            }
        }
        let files = by_file.len();
        for (file, wanted) in by_file {
            let specs = self.read_again(&file)?;
            for i in wanted {
                let m = &mut self.manifests[i];
                let Some(spec) = specs
                    .iter()
                    .find(|s| s.pos == m.pos && s.address() == m.address())
                else {
                    return Err(ReadBackError::Changed { file });
                };
                m.spec = Arc::clone(&spec.spec);
                m.lean = None;
            }
        }
        Ok(files)
    }

    /// The manifests of one file, loaded again as at the first load (same environment), when
    /// what it reads is what the first load read.
    fn read_again(&self, file: &Path) -> Result<Vec<Manifest>, ReadBackError> {
        let text = read_text(file).map_err(|(_, problem)| ReadBackError::Unreadable {
            file: file.to_path_buf(),
            reason: problem.to_string(),
        })?;
        let first: BTreeMap<&Path, &[u8; 32]> = self
            .sources
            .0
            .iter()
            .map(|(p, h)| (p.as_path(), h))
            .collect();
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        if first.get(file) != Some(&&hash) {
            return Err(ReadBackError::Changed {
                file: file.to_path_buf(),
            });
        }
        let tokens = crate::config::environments::token_variables(&self.settings.environments);
        let ctx = vars::Context {
            env: self
                .environment
                .as_deref()
                .and_then(|name| self.settings.environments.get(name)),
            declared: !self.settings.environments.is_empty(),
            files: Some(&self.file_scope),
            tokens: &tokens,
            read_document: None,
        };
        let mut again = Loaded::default();
        load_text(file, file, &text, &ctx, &mut again);
        // What `${file:…}`/`${env:…}` read must be what the first load read.
        let read_first: BTreeMap<&str, &[u8; 32]> = self
            .resolved
            .iter()
            .map(|r| (r.source.as_str(), &r.hash))
            .collect();
        if let Some(read) = again
            .resolved
            .iter()
            .find(|r| read_first.get(r.source.as_str()) != Some(&&r.hash))
        {
            return Err(ReadBackError::ValueChanged {
                file: file.to_path_buf(),
                token: read.token.clone(),
            });
        }
        // A manifest that does not load again as it did is missing here: `Changed`.
        Ok(again.manifests)
    }
}
