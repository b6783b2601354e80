//! The no-change memo: a plan that found nothing to do, remembered under a keyed hash of
//! everything it was made from, so that the next plan over the same manifests and the same
//! answers reads the lists (one request a page, as always) and parses not one YAML or JSON
//! document. A cron `drift` or a re-run CI `plan` against a tenant nobody touched is then
//! about as fast as the download.
//!
//! A plan is a pure function of its inputs, so remembering it is exact when the key covers
//! them all:
//! - the manifests: every file's path and bytes ([`manifest::Sources`], the settings file
//!   included);
//! - the target's answers: its description and every listed object's text, in list order
//!   ([`state::Answers`]);
//! - what reaches the planner from the command line: the target's name, the environment
//!   (`--env`), `--prune`, `--only`;
//! - cfgctl itself: its version and commit, and its executable's size and modification time
//!   (a rebuilt binary never trusts an older one's memo).
//!
//! Only plans with no action, no observed difference and no guard violation are remembered:
//! their whole content is the target, the unchanged count, the unmanaged and orphaned resources, the warnings, the delete guards'
//! context and the kinds read, enough to write every format (`--out` included) byte for byte
//! as planning would. Looking up works in two steps: the manifests and options name the entry
//! ([`Memo::entry_id`], before any request), and the entry holds the answers' hash, compared
//! once the lists are read; anything different and the plan is made in full.
//!
//! Trust: an entry is authenticated with a BLAKE3 keyed hash and refused unless it verifies.
//! The key is derived from the user's memo secret (32 random bytes kept in the cache folder,
//! readable by this user alone) and the API token when there is one, so nobody who cannot read
//! the folder can make an entry cfgctl accepts, with or without a token. The folder must
//! belong to this user and be writable by nobody else; it is opened without following symbolic
//! links and worked in relative to that handle, entries are read only when they are this
//! user's regular files, and the trim removes only cfgctl's own entries (see [`folder`]). The
//! token is never written, only hashes under the key derived from it.

mod folder;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::api::registry::Kind;
use crate::config::pattern::Pattern;
use crate::manifest::Sources;
use crate::plan::file::GuardsFile;
use crate::plan::{Plan, Unmanaged};
use crate::remote::state::Answers;

/// Version of an entry's body; another version is not read.
const FORMAT: u32 = 1;
/// Entries kept; the oldest beyond this are removed when one is written.
const KEEP: usize = 256;
/// A larger entry is not read (well above what an entry of a very large tenant holds).
const MAX_ENTRY: u64 = 128 << 20;
const KEY_CONTEXT: &str = "cfgctl 2026-11-25 no-change memo: user secret and API token";

/// Why the memo cannot be used (it is then left alone: planning goes on without it).
#[derive(Debug, thiserror::Error)]
pub enum MemoError {
    #[error("cannot use the plan cache {}: {reason}", dir.display())]
    Directory { dir: PathBuf, reason: String },
    #[error("cannot write the plan cache entry {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The memo in one cache directory, under one key.
pub struct Memo {
    dir: PathBuf,
    folder: folder::Folder,
    key: [u8; 32],
    /// What the plan request adds to every entry's inputs (bound when opened).
    request: Request,
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Memo").field("dir", &self.dir).finish()
    }
}

/// The cache directory of the platform's convention: `$XDG_CACHE_HOME/cfgctl`, else
/// `~/.cache/cfgctl` (`None` when neither variable is set).
pub fn default_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    non_empty("XDG_CACHE_HOME")
        .map(|d| PathBuf::from(d).join("cfgctl"))
        .or_else(|| non_empty("HOME").map(|d| PathBuf::from(d).join(".cache").join("cfgctl")))
}

/// The cache directory: the one `given` (`--cache-dir`, when not empty), else the platform's
/// ([`default_dir`]); `None` when `off` (`--no-cache`) or there is nowhere to put it.
pub fn cache_dir(given: Option<&Path>, off: bool) -> Option<PathBuf> {
    if off {
        return None;
    }
    given
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .or_else(default_dir)
}

/// The user's secret kept in the cache folder `dir` (made the first time), for what must be
/// authenticated without a token (a saved plan's guards); `None` when the folder cannot be
/// used.
pub fn user_secret(dir: &Path) -> Option<[u8; 32]> {
    folder::Folder::open(dir, folder::current_user())
        .map_err(|reason| tracing::warn!("cannot use the cache folder {}: {reason}", dir.display()))
        .ok()
        .map(|(_, secret)| secret)
}

/// What names an entry: everything a plan is made from except the target's answers.
pub struct Inputs<'a> {
    pub sources: &'a Sources,
    pub target: &'a str,
    pub prune: bool,
    pub only: &'a [Pattern],
    /// The environment of `cfgctl.yaml` planned (`--env NAME`), `None` without environments:
    /// two environments on one URL (or one URL renamed) never share an entry, and a
    /// remembered plan's `guard.environment` (saved in its entry) is the one asked for.
    pub environment: Option<&'a str>,
}

/// What a plan request adds to an entry's [`Inputs`] besides the files read and the target,
/// bound to the memo when it is opened ([`Memo::open_for`]).
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub prune: bool,
    pub only: Vec<Pattern>,
    pub environment: Option<String>,
}

/// A remembered no-change plan and the kinds it read.
#[derive(Debug)]
pub struct Remembered {
    pub answers: Answers,
    pub plan: Plan,
    pub known: BTreeSet<Kind>,
}

/// An entry's body, as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    format: u32,
    answers: String,
    target: String,
    unchanged: usize,
    unmanaged: Vec<UnmanagedEntry>,
    #[serde(default)]
    orphaned: Vec<String>,
    warnings: Vec<String>,
    guards: GuardsFile,
    known: Vec<String>,
    /// The manifests hold secret references (the plan says they were not compared).
    #[serde(default)]
    holds_secrets: bool,
    /// The `${env:…}`/`${file:…}` the load resolved (`env:NAME`, `file:PATH`) and the hash of
    /// each value: the entry holds only while each resolves to the same value again.
    #[serde(default)]
    resolved: Vec<(String, String)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UnmanagedEntry {
    address: String,
    in_prune_scope: bool,
}

impl Memo {
    /// The memo in `dir` (made, private, when missing), keyed by the user's secret and
    /// `token` when there is one.
    pub fn open(dir: &Path, token: Option<&str>) -> Result<Memo, MemoError> {
        Memo::open_as(dir, token, folder::current_user())
    }

    /// [`Memo::open`] for the entries of one plan request (see [`Memo::entry_id`]).
    pub fn open_for(dir: &Path, token: Option<&str>, request: Request) -> Result<Memo, MemoError> {
        let memo = Memo::open(dir, token)?;
        Ok(Memo { request, ..memo })
    }

    /// [`Memo::open`], for a folder that must belong to `owner`.
    fn open_as(dir: &Path, token: Option<&str>, owner: u32) -> Result<Memo, MemoError> {
        let (folder, secret) =
            folder::Folder::open(dir, owner).map_err(|reason| MemoError::Directory {
                dir: dir.to_path_buf(),
                reason,
            })?;
        let mut material = Vec::with_capacity(64);
        material.extend_from_slice(&secret);
        if let Some(token) = token {
            material.push(1);
            material.extend_from_slice(token.as_bytes());
        }
        let key = blake3::derive_key(KEY_CONTEXT, &material);
        Ok(Memo {
            dir: dir.join("plans"),
            folder,
            key,
            request: Request::default(),
        })
    }

    /// The id of the entry of the request the memo was opened for ([`Memo::open_for`]), for
    /// the files read and the target.
    pub fn entry_id(&self, target: &str, sources: &Sources) -> [u8; 32] {
        self.id_of(&Inputs {
            sources,
            target,
            prune: self.request.prune,
            only: &self.request.only,
            environment: self.request.environment.as_deref(),
        })
    }

    /// The id of the entry for these inputs (a keyed hash: it says nothing of them).
    pub fn id_of(&self, inputs: &Inputs<'_>) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        field(&mut h, b"entry");
        field(&mut h, crate::VERSION.as_bytes());
        field(&mut h, &build_identity());
        field(&mut h, inputs.target.as_bytes());
        match inputs.environment {
            None => field(&mut h, b"no environment"),
            Some(name) => {
                field(&mut h, b"environment");
                field(&mut h, name.as_bytes());
            }
        }
        field(&mut h, &[u8::from(inputs.prune)]);
        h.update(&(inputs.only.len() as u64).to_le_bytes());
        for p in inputs.only {
            field(&mut h, p.to_string().as_bytes());
        }
        h.update(&(inputs.sources.0.len() as u64).to_le_bytes());
        for (path, hash) in &inputs.sources.0 {
            field(&mut h, path.to_string_lossy().as_bytes());
            h.update(hash);
        }
        *h.finalize().as_bytes()
    }

    /// True when the folder holds no entry at all (a fresh cache, as on a new CI runner):
    /// nothing can be recalled, whatever the inputs.
    pub fn remembers_nothing(&self) -> bool {
        !self.folder.has_entries()
    }

    /// The entry `id`, if there is one that verifies under this key and reads back whole.
    pub fn recall(&self, id: &[u8; 32]) -> Option<Remembered> {
        let text = self.folder.read(&hex(id), MAX_ENTRY)?;
        if text.len() as u64 > MAX_ENTRY {
            return None;
        }
        let text = text.strip_prefix(folder::HEADER)?;
        let (tag, body) = text.split_at_checked(64)?;
        let body = body.strip_prefix(b"\n")?;
        // `blake3::Hash` compares in constant time.
        let tag = std::str::from_utf8(tag)
            .ok()
            .and_then(|t| blake3::Hash::from_hex(t).ok());
        if tag != Some(self.tag(id, body)) {
            tracing::warn!(entry = %self.dir.join(hex(id)).display(), "plan cache entry does not verify: ignored");
            return None;
        }
        let body: Body = serde_json::from_slice(body).ok()?;
        if !still_resolved(&body.resolved) {
            tracing::info!(
                "a variable or a data file the manifests name has changed: not remembered"
            );
            return None;
        }
        remembered(body)
    }

    /// Remembers a plan under `id` when it has nothing to do (true when it was written).
    pub fn remember(
        &self,
        id: &[u8; 32],
        answers: Answers,
        plan: &Plan,
        known: &BTreeSet<Kind>,
    ) -> Result<bool, MemoError> {
        self.remember_resolved(id, answers, plan, known, &[])
    }

    /// [`Memo::remember`] of a plan whose manifests resolved `resolved` at load
    /// (`manifest::Loaded::resolved`): recalled only while each resolves as it did.
    pub fn remember_resolved(
        &self,
        id: &[u8; 32],
        answers: Answers,
        plan: &Plan,
        known: &BTreeSet<Kind>,
        resolved: &[crate::manifest::Resolved],
    ) -> Result<bool, MemoError> {
        if !plan.actions.is_empty()
            || !plan.observed.is_empty()
            || !plan.guard_violations.is_empty()
        {
            return Ok(false);
        }
        let body = Body {
            format: FORMAT,
            answers: hex(&answers.0),
            target: plan.target.clone(),
            unchanged: plan.unchanged,
            unmanaged: plan
                .unmanaged
                .iter()
                .map(|u| UnmanagedEntry {
                    address: u.address.to_string(),
                    in_prune_scope: u.in_prune_scope,
                })
                .collect(),
            orphaned: plan.orphaned.iter().map(|a| a.to_string()).collect(),
            warnings: plan.warnings.clone(),
            guards: crate::plan::file::guards_file(plan),
            known: known.iter().map(|k| k.name().to_string()).collect(),
            holds_secrets: plan.review.holds_secrets,
            resolved: resolved
                .iter()
                .map(|r| (r.source.clone(), hex(&r.hash)))
                .collect(),
        };
        // Plain data always serialises.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut text = folder::HEADER.to_vec();
        text.extend_from_slice(self.tag(id, &body).to_hex().as_bytes());
        text.push(b'\n');
        text.extend_from_slice(&body);
        if let Err(source) = self.folder.write(&hex(id), &text) {
            return Err(MemoError::Write {
                path: self.dir.join(hex(id)),
                source,
            });
        }
        self.folder.trim(KEEP);
        Ok(true)
    }

    fn tag(&self, id: &[u8; 32], body: &[u8]) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        field(&mut h, b"body");
        h.update(id);
        field(&mut h, body);
        h.finalize()
    }
}

/// Whether each `env:NAME` / `file:PATH` resolves to a value of the hash it had (hex).
fn still_resolved(resolved: &[(String, String)]) -> bool {
    resolved.iter().all(|(source, hash)| {
        let value = if let Some(name) = source.strip_prefix("env:") {
            std::env::var(name).ok()
        } else if let Some(path) = source.strip_prefix("file:") {
            crate::util::file_ref::read(Path::new(path))
                .ok()
                .map(crate::util::file_ref::value_of)
        } else {
            None
        };
        value.is_some_and(|v| hex(blake3::hash(v.as_bytes()).as_bytes()) == *hash)
    })
}

/// A field into a hash, its length first (so that no two lists of fields hash alike).
fn field(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

fn remembered(body: Body) -> Option<Remembered> {
    if body.format != FORMAT {
        return None;
    }
    let answers = *blake3::Hash::from_hex(&body.answers).ok()?.as_bytes();
    let unmanaged = body
        .unmanaged
        .into_iter()
        .map(|u| {
            Some(Unmanaged {
                address: crate::plan::file::parse_address(&u.address)?,
                in_prune_scope: u.in_prune_scope,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let orphaned = body
        .orphaned
        .iter()
        .map(|a| crate::plan::file::parse_address(a))
        .collect::<Option<Vec<_>>>()?;
    let known = body
        .known
        .iter()
        .map(|k| Kind::from_name(k))
        .collect::<Option<BTreeSet<_>>>()?;
    let plan = Plan {
        target: body.target,
        actions: Vec::new(),
        unchanged: body.unchanged,
        unmanaged,
        orphaned,
        observed: Vec::new(),
        warnings: body.warnings,
        guard_violations: Vec::new(),
        guard: crate::plan::file::guard_context(&body.guards).ok()?,
        review: crate::plan::review::Review {
            holds_secrets: body.holds_secrets,
            ..Default::default()
        },
    };
    Some(Remembered {
        answers: Answers(answers),
        plan,
        known,
    })
}

/// What tells this build of cfgctl from another with the same version and commit (a build of
/// uncommitted changes): its executable's size and modification time.
fn build_identity() -> Vec<u8> {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    let mut id = Vec::new();
    if let Ok(meta) = meta {
        id.extend_from_slice(&meta.len().to_le_bytes());
        if let Ok(since) = meta
            .modified()
            .map(|m| m.duration_since(std::time::UNIX_EPOCH).unwrap_or_default())
        {
            id.extend_from_slice(&since.as_nanos().to_le_bytes());
        }
    }
    id
}

/// Lower-case hex of 32 bytes (entry names, the answers' hash in a body).
fn hex(bytes: &[u8; 32]) -> String {
    blake3::Hash::from(*bytes).to_hex().to_string()
}

#[cfg(test)]
mod tests;
