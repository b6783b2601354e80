//! All-or-nothing writing of a set of files under one folder: the one writer of `export` and
//! `pull`.
//!
//! A [`Batch`] lists changes under a root folder: create a new file, replace a regular file,
//! remove a regular file. [`Batch::commit`] makes all of them or none:
//!
//! 1. Every check runs before anything is written: each path stays inside the root, no path is
//!    changed twice, no existing component of a path is a symlink, every existing folder on the
//!    way is a folder, a new file's name is free, a replaced or removed file is a regular file.
//! 2. Staging: every new text goes into a hidden temporary file next to its target (so the final
//!    rename stays within one file system), creating the missing folders, each recorded.
//! 3. Into place, in order: a replaced file is first hard-linked to a hidden backup and then
//!    atomically renamed over; a removed file is renamed to a backup; a new file is hard-linked
//!    to its name, which fails rather than replace a file that appeared since the checks.
//! 4. Any failure undoes what was done, newest first: backups moved back, new files removed,
//!    temporaries and the folders this batch created removed. The error says what failed and
//!    that nothing was written, or names every path the undo could not restore.
//! 5. Success removes the backups.
//!
//! Leaf module: it imports nothing of the crate.

use std::fmt;
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};

/// Why a change cannot be made. Paths are as given (root joined with the relative path).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("`{}` is a symlink: cfgctl never writes through one", .0.display())]
    Symlink(PathBuf),
    #[error("`{}` already exists: a new file never replaces one (move it away or declare the resource in it)", .0.display())]
    Exists(PathBuf),
    #[error("`{}` is not a regular file", .0.display())]
    NotAFile(PathBuf),
    #[error("`{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("`{}` is not a path inside the folder written to", .0.display())]
    Outside(PathBuf),
    #[error("`{}` would be written twice in one run", .0.display())]
    Twice(PathBuf),
    #[error("`{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A commit that did not happen: the first error, and what the undo left.
#[derive(Debug)]
pub struct Failed {
    pub error: WriteError,
    /// Files that were already in place when the error came, and were put back.
    pub undone: usize,
    /// What the undo could not restore: the path and why (with where its earlier content is).
    pub not_restored: Vec<(PathBuf, String)>,
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)?;
        if self.not_restored.is_empty() {
            write!(f, "; nothing was written")?;
            if self.undone > 0 {
                let s = if self.undone == 1 { "" } else { "s" };
                write!(
                    f,
                    " (the {} file{s} already in place put back as they were)",
                    self.undone
                )?;
            }
            return Ok(());
        }
        write!(f, "; the undo could not restore: ")?;
        for (i, (path, why)) in self.not_restored.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}`{}` ({why})", path.display())?;
        }
        write!(f, "; every other change was undone")
    }
}

impl std::error::Error for Failed {}

impl From<WriteError> for Failed {
    fn from(error: WriteError) -> Failed {
        Failed {
            error,
            undone: 0,
            not_restored: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Create(String),
    Replace(String),
    Remove,
}

/// A step a test can make fail: the `n`th staged file (1-based) or the `n`th move into place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Stage(usize),
    Commit(usize),
}

impl Fault {
    /// `__CFGCTL_TEST_WRITE_FAULT=stage:N|commit:N`, read by debug builds only: the integration
    /// tests make the real binary fail mid-write (a read-only folder does not stop root).
    fn from_env() -> Option<Fault> {
        if !cfg!(debug_assertions) {
            return None;
        }
        let spec = std::env::var("__CFGCTL_TEST_WRITE_FAULT").ok()?;
        let (phase, n) = spec.split_once(':')?;
        let n = n.parse().ok()?;
        match phase {
            "stage" => Some(Fault::Stage(n)),
            "commit" => Some(Fault::Commit(n)),
            _ => None,
        }
    }

    fn check(self, now: Fault, path: &Path) -> Result<(), WriteError> {
        if self == now {
            return Err(io_err(path)(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "Permission denied (injected by __CFGCTL_TEST_WRITE_FAULT)",
            )));
        }
        Ok(())
    }
}

/// A set of changes under one root folder, made all together or not at all.
#[derive(Debug)]
pub struct Batch {
    root: PathBuf,
    changes: Vec<(PathBuf, Op)>,
    fault: Option<Fault>,
}

/// What has been done so far, to undo.
#[derive(Default)]
struct Done {
    dirs: Vec<PathBuf>,
    temps: Vec<PathBuf>,
    /// Per change in place: the target, and its backup (a replaced or removed file).
    placed: Vec<(PathBuf, Option<PathBuf>)>,
}

impl Batch {
    /// An empty batch under `root` (which need not exist yet: it is created, and removed again
    /// on failure).
    pub fn new(root: impl Into<PathBuf>) -> Batch {
        let root = root.into();
        Batch {
            // Paths under `.` are named without `./` in messages.
            root: if root == Path::new(".") {
                PathBuf::new()
            } else {
                root
            },
            changes: Vec::new(),
            fault: Fault::from_env(),
        }
    }

    /// Makes one step fail (unit tests; the integration tests use `__CFGCTL_TEST_WRITE_FAULT`).
    #[cfg(test)]
    pub(crate) fn with_fault(mut self, fault: Fault) -> Batch {
        self.fault = Some(fault);
        self
    }

    /// A new file at `rel`: nothing may be there.
    pub fn create(&mut self, rel: impl Into<PathBuf>, text: impl Into<String>) {
        self.changes.push((rel.into(), Op::Create(text.into())));
    }

    /// A new text for the regular file at `rel` (its permissions are kept).
    pub fn replace(&mut self, rel: impl Into<PathBuf>, text: impl Into<String>) {
        self.changes.push((rel.into(), Op::Replace(text.into())));
    }

    /// Removes the regular file at `rel`.
    pub fn remove(&mut self, rel: impl Into<PathBuf>) {
        self.changes.push((rel.into(), Op::Remove));
    }

    /// Every check of step 1, without writing anything.
    pub fn check(&self) -> Result<(), WriteError> {
        let mut seen = std::collections::BTreeSet::new();
        for (rel, op) in &self.changes {
            let path = self.root.join(rel);
            let inside = rel.components().next().is_some()
                && rel.components().all(|c| matches!(c, Component::Normal(_)));
            if !inside {
                return Err(WriteError::Outside(path));
            }
            if !seen.insert(rel.clone()) {
                return Err(WriteError::Twice(path));
            }
            check_path(&self.root, rel, matches!(op, Op::Create(_)))?;
        }
        Ok(())
    }

    /// Makes every change or none (see the module documentation).
    pub fn commit(self) -> Result<(), Failed> {
        self.check()?;
        let mut done = Done::default();
        let result = self.stage(&mut done).and_then(|staged| {
            let mut placed = 0;
            for ((rel, op), temp) in self.changes.iter().zip(staged) {
                placed += 1;
                let target = self.root.join(rel);
                if let Some(fault) = self.fault {
                    fault.check(Fault::Commit(placed), &target)?;
                }
                let backup = place(&target, op, temp.as_deref())?;
                done.placed.push((target, backup));
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                for (_, backup) in &done.placed {
                    if let Some(b) = backup {
                        let _ = std::fs::remove_file(b);
                    }
                }
                remove_temps(&done.temps);
                Ok(())
            }
            Err(error) => Err(undo(error, done)),
        }
    }

    /// Step 2: the temporary files, one per change that writes (`None` for a removal).
    fn stage(&self, done: &mut Done) -> Result<Vec<Option<PathBuf>>, WriteError> {
        ensure_dir(&self.root, &mut done.dirs)?;
        let mut staged = Vec::new();
        let mut n = 0;
        for (rel, op) in &self.changes {
            let target = self.root.join(rel);
            let (text, permissions) = match op {
                Op::Remove => {
                    staged.push(None);
                    continue;
                }
                Op::Create(text) => (text, None),
                Op::Replace(text) => {
                    let meta = std::fs::metadata(&target).map_err(io_err(&target))?;
                    (text, Some(meta.permissions()))
                }
            };
            n += 1;
            let dir = target.parent().unwrap_or(&self.root).to_path_buf();
            ensure_dir(&dir, &mut done.dirs)?;
            if let Some(fault) = self.fault {
                fault.check(Fault::Stage(n), &target)?;
            }
            let (temp, mut file) = hidden_file(&dir, "tmp")?;
            done.temps.push(temp.clone());
            file.write_all(text.as_bytes()).map_err(io_err(&temp))?;
            if let Some(p) = permissions {
                file.set_permissions(p).map_err(io_err(&temp))?;
            }
            file.sync_all().map_err(io_err(&temp))?;
            staged.push(Some(temp));
        }
        Ok(staged)
    }
}

/// Step 1 for one path: walks its existing components.
fn check_path(root: &Path, rel: &Path, create: bool) -> Result<(), WriteError> {
    let mut at = root.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&at) {
            // Nothing below a missing component exists: free for a new file.
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => return Ok(()),
            Err(e) => return Err(io_err(&at)(e)),
            Ok(m) if m.file_type().is_symlink() => return Err(WriteError::Symlink(at)),
            Ok(_) if last && create => return Err(WriteError::Exists(at)),
            Ok(m) if last && !m.is_file() => return Err(WriteError::NotAFile(at)),
            Ok(m) if !last && !m.is_dir() => return Err(WriteError::NotADirectory(at)),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Creates `dir` and its missing ancestors, recording each one created (outermost first).
fn ensure_dir(dir: &Path, created: &mut Vec<PathBuf>) -> Result<(), WriteError> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::symlink_metadata(d) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(d.to_path_buf()),
            Err(e) => return Err(io_err(d)(e)),
        }
        at = d.parent();
    }
    for d in missing.into_iter().rev() {
        std::fs::create_dir(&d).map_err(io_err(&d))?;
        created.push(d);
    }
    Ok(())
}

/// A new hidden file in `dir` (hidden, so a load running meanwhile skips it). Short names: a
/// target's name may already be near the file system's limit.
fn hidden_file(dir: &Path, ext: &str) -> Result<(PathBuf, std::fs::File), WriteError> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!(".cfgctl-{}-{n}.{ext}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1_000_000 => continue,
            Err(e) => return Err(io_err(&path)(e)),
        }
    }
}

/// A free hidden name for a backup of `target`, next to it.
fn backup_of(target: &Path) -> Result<PathBuf, WriteError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let (path, file) = hidden_file(dir, "bak")?;
    drop(file);
    std::fs::remove_file(&path).map_err(io_err(&path))?;
    Ok(path)
}

/// Step 3 for one change; the backup made, if any.
fn place(target: &Path, op: &Op, temp: Option<&Path>) -> Result<Option<PathBuf>, WriteError> {
    match (op, temp) {
        (Op::Create(_), Some(temp)) => {
            // A hard link fails when the name is taken: nothing appeared since the checks can
            // be replaced.
            match std::fs::hard_link(temp, target) {
                Ok(()) => Ok(None),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    Err(WriteError::Exists(target.to_path_buf()))
                }
                // A file system without hard links: a rename, once the name is seen free.
                Err(e) => match std::fs::symlink_metadata(target) {
                    Err(free) if free.kind() == io::ErrorKind::NotFound => {
                        std::fs::rename(temp, target).map_err(io_err(target))?;
                        Ok(None)
                    }
                    _ => Err(io_err(target)(e)),
                },
            }
        }
        (Op::Replace(_), Some(temp)) => {
            let backup = backup_of(target)?;
            if std::fs::hard_link(target, &backup).is_err() {
                // A file system without hard links: a copy of the earlier content.
                if let Err(e) = std::fs::copy(target, &backup) {
                    let _ = std::fs::remove_file(&backup);
                    return Err(io_err(target)(e));
                }
            }
            if let Err(e) = std::fs::rename(temp, target) {
                let _ = std::fs::remove_file(&backup);
                return Err(io_err(target)(e));
            }
            Ok(Some(backup))
        }
        (Op::Remove, _) => {
            let backup = backup_of(target)?;
            std::fs::rename(target, &backup).map_err(io_err(target))?;
            Ok(Some(backup))
        }
        _ => Err(io_err(target)(io::Error::other("nothing staged"))),
    }
}

fn remove_temps(temps: &[PathBuf]) {
    for t in temps {
        // A temporary already renamed into place is gone: nothing to do.
        let _ = std::fs::remove_file(t);
    }
}

/// Step 4: puts everything back, newest first.
fn undo(error: WriteError, done: Done) -> Failed {
    let mut not_restored = Vec::new();
    let undone = done.placed.len();
    for (target, backup) in done.placed.into_iter().rev() {
        let result = match &backup {
            Some(b) => std::fs::rename(b, &target),
            None => std::fs::remove_file(&target),
        };
        if let Err(e) = result {
            let why = match &backup {
                Some(b) => format!("{e}; its earlier content is in `{}`", b.display()),
                None => format!("{e}; it was not there before"),
            };
            not_restored.push((target, why));
        }
    }
    remove_temps(&done.temps);
    for d in done.dirs.iter().rev() {
        // Only an empty folder: anything else in it is not ours.
        let _ = std::fs::remove_dir(d);
    }
    Failed {
        error,
        undone,
        not_restored,
    }
}

#[cfg(test)]
pub(crate) mod tests;
