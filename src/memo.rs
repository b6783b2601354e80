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
//! - what reaches the planner from the command line: the target's name, `--prune`, `--only`;
//! - cfgctl itself: its version and commit, and its executable's size and modification time
//!   (a rebuilt binary never trusts an older one's memo).
//!
//! Only plans with no action and no guard violation are remembered: their whole content is
//! the target, the unchanged count, the unmanaged resources, the warnings, the delete guards'
//! context and the kinds read, enough to write every format (`--out` included) byte for byte
//! as planning would. Looking up works in two steps: the manifests and options name the entry
//! ([`Memo::entry_id`], before any request), and the entry holds the answers' hash, compared
//! once the lists are read; anything different and the plan is made in full.
//!
//! Trust: an entry is authenticated with a BLAKE3 keyed hash and refused unless it verifies.
//! The key is derived from the API token when there is one, so someone who can write the cache
//! directory but does not hold the token cannot make an entry cfgctl accepts. Without a token
//! (`--local`, an open emulator) the key is a constant, and entries are
//! only as trustworthy as the directory. The directory is made private (0700, files 0600) and
//! not used at all when others may write it. The token is never written, only hashes under the
//! key derived from it.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::manifest::Sources;
use crate::pattern::Pattern;
use crate::plan::file::GuardsFile;
use crate::plan::{Plan, Unmanaged};
use crate::registry::Kind;
use crate::state::Answers;

/// Version of an entry's body; another version is not read.
const FORMAT: u32 = 1;
/// Entries kept; the oldest beyond this are removed when one is written.
const KEEP: usize = 256;
/// A larger entry is not read (one with a million unmanaged resources is ~60 MB).
const MAX_ENTRY: u64 = 128 << 20;
const KEY_CONTEXT_TOKEN: &str = "cfgctl 2026-11-23 no-change memo: API token";
const KEY_CONTEXT_OPEN: &str = "cfgctl 2026-11-23 no-change memo: target without a token";

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
    key: [u8; 32],
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

/// What names an entry: everything a plan is made from except the target's answers.
pub struct Inputs<'a> {
    pub sources: &'a Sources,
    pub target: &'a str,
    pub prune: bool,
    pub only: &'a [Pattern],
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
    warnings: Vec<String>,
    guards: GuardsFile,
    known: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UnmanagedEntry {
    address: String,
    in_prune_scope: bool,
}

impl Memo {
    /// The memo in `dir` (made, private, when missing), keyed by `token` when there is one.
    pub fn open(dir: &Path, token: Option<&str>) -> Result<Memo, MemoError> {
        let bad = |reason: String| MemoError::Directory {
            dir: dir.to_path_buf(),
            reason,
        };
        let plans = dir.join("plans");
        create_private_dir(&plans).map_err(|e| bad(e.to_string()))?;
        for d in [dir, plans.as_path()] {
            check_private(d).map_err(&bad)?;
        }
        let key = match token {
            Some(token) => blake3::derive_key(KEY_CONTEXT_TOKEN, token.as_bytes()),
            None => blake3::derive_key(KEY_CONTEXT_OPEN, b""),
        };
        Ok(Memo { dir: plans, key })
    }

    /// The id of the entry for these inputs (a keyed hash: it says nothing of them).
    pub fn entry_id(&self, inputs: &Inputs<'_>) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        field(&mut h, b"entry");
        field(&mut h, crate::VERSION.as_bytes());
        field(&mut h, &build_identity());
        field(&mut h, inputs.target.as_bytes());
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

    /// The entry `id`, if there is one that verifies under this key and reads back whole.
    pub fn recall(&self, id: &[u8; 32]) -> Option<Remembered> {
        let path = self.dir.join(hex(id));
        let mut text = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| {
                std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_ENTRY + 1), &mut text)
            })
            .ok()?;
        if text.len() as u64 > MAX_ENTRY {
            return None;
        }
        let (tag, body) = text.split_at_checked(64)?;
        let body = body.strip_prefix(b"\n")?;
        // `blake3::Hash` compares in constant time.
        let tag = std::str::from_utf8(tag)
            .ok()
            .and_then(|t| blake3::Hash::from_hex(t).ok());
        if tag != Some(self.tag(id, body)) {
            tracing::warn!(entry = %path.display(), "plan cache entry does not verify: ignored");
            return None;
        }
        let body: Body = serde_json::from_slice(body).ok()?;
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
        if !plan.actions.is_empty() || !plan.guard_violations.is_empty() {
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
            warnings: plan.warnings.clone(),
            guards: crate::plan::file::guards_file(plan),
            known: known.iter().map(|k| k.name().to_string()).collect(),
        };
        // Plain data always serialises.
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut text = self.tag(id, &body).to_hex().as_bytes().to_vec();
        text.push(b'\n');
        text.extend_from_slice(&body);
        let path = self.dir.join(hex(id));
        let tmp = self
            .dir
            .join(format!(".{}.{}.tmp", hex(id), fastrand::u64(..)));
        let written = write_private(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(source) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(MemoError::Write { path, source });
        }
        self.trim();
        Ok(true)
    }

    fn tag(&self, id: &[u8; 32], body: &[u8]) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        field(&mut h, b"body");
        h.update(id);
        field(&mut h, body);
        h.finalize()
    }

    /// Removes the oldest entries beyond [`KEEP`].
    fn trim(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let modified = e.metadata().ok()?.modified().ok()?;
                Some((modified, e.path()))
            })
            .collect();
        if found.len() <= KEEP {
            return;
        }
        found.sort();
        for (_, path) in &found[..found.len() - KEEP] {
            let _ = std::fs::remove_file(path);
        }
    }
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
        warnings: body.warnings,
        guard_violations: Vec::new(),
        guard: crate::plan::file::guard_context(&body.guards).ok()?,
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

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Refuses a directory others may write (or a symlink in its place).
#[cfg(unix)]
fn check_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err("not a directory".into());
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err("others may write it (make it 0700)".into());
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_dir: &Path) -> Result<(), String> {
    Ok(())
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)
}

#[cfg(test)]
mod tests;
