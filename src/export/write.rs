//! Writing an export to disk, safely.
//!
//! - An index (`.cfgctl-export.json`, hidden so the loader skips it) lists every file an
//!   export wrote. `--force` replaces and removes only files in that index: a hand-written
//!   file, or a manifest added next to the export, is never deleted or overwritten (an export
//!   that would overwrite one is refused before anything is written).
//! - Nothing is written through a symlink: an existing path component under the output folder
//!   that is a symlink refuses the export.
//! - All or nothing: the files are first written into a staging folder inside the output
//!   folder; only when every one is written are they moved into place (renames in one file
//!   system), and the files of the earlier export that are gone are removed. A failure while
//!   staging removes the staging folder and leaves the output folder as it was.

use std::collections::BTreeSet;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ExportedFile;

/// The index file, relative to the output folder.
pub const INDEX: &str = ".cfgctl-export.json";
const STAGING: &str = ".cfgctl-export.staging";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    format_version: u32,
    files: Vec<String>,
}

/// Why an export was not written. Nothing in the output folder changed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(
        "`{dir}` is not empty: pass --force to replace the manifests of an earlier export there"
    )]
    NotEmpty { dir: PathBuf },
    #[error("{path} exists and no earlier export wrote it (it is not in {INDEX}): move it away or export elsewhere; nothing was written")]
    WouldOverwrite { path: PathBuf },
    #[error("{path} is a symlink: export never writes through one; nothing was written")]
    Symlink { path: PathBuf },
    #[error("the export index {path} is not readable ({reason}): remove it to start over; nothing was written")]
    Index { path: PathBuf, reason: String },
    #[error("{path}: {source}; nothing was written")]
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

/// A relative path from the index that stays inside the folder (no `..`, not absolute).
fn contained(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(rel);
    p.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(p)
        .filter(|p| p.components().next().is_some())
}

fn read_index(out: &Path) -> Result<BTreeSet<PathBuf>, WriteError> {
    let path = out.join(INDEX);
    let text = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(io_err(&path)(e)),
        Ok(m) if m.file_type().is_symlink() => return Err(WriteError::Symlink { path }),
        Ok(_) => std::fs::read_to_string(&path).map_err(io_err(&path))?,
    };
    let index: Index = serde_json::from_str(&text).map_err(|e| WriteError::Index {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    index
        .files
        .iter()
        .map(|f| {
            contained(f).ok_or_else(|| WriteError::Index {
                path: path.clone(),
                reason: format!("`{f}` is not a path inside the folder"),
            })
        })
        .collect()
}

/// Refuses a symlink at any existing component of `rel` under `out`.
fn check_no_symlink(out: &Path, rel: &Path) -> Result<(), WriteError> {
    let mut at = out.to_path_buf();
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err(WriteError::Symlink { path: at }),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err(&at)(e)),
        }
    }
    Ok(())
}

/// What an export changed in the folder.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub written: usize,
    /// Files of the earlier export whose resources are gone.
    pub removed: Vec<PathBuf>,
}

/// Writes `files` under `out` (see the module documentation for the rules).
pub fn write_export(
    out: &Path,
    files: &[ExportedFile],
    force: bool,
) -> Result<Written, WriteError> {
    if let Ok(m) = std::fs::symlink_metadata(out) {
        if !m.is_dir() && !m.file_type().is_symlink() {
            return Err(WriteError::Io {
                path: out.to_path_buf(),
                source: io::Error::other("not a folder"),
            });
        }
    }
    let non_empty = std::fs::read_dir(out)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if non_empty && !force {
        return Err(WriteError::NotEmpty {
            dir: out.to_path_buf(),
        });
    }
    let earlier = read_index(out)?;
    // Every check before anything is written.
    for f in files {
        check_no_symlink(out, &f.path)?;
        let target = out.join(&f.path);
        if !earlier.contains(&f.path) && std::fs::symlink_metadata(&target).is_ok() {
            return Err(WriteError::WouldOverwrite { path: target });
        }
        // A folder on the way that is a file nobody exported.
        let mut at = out.to_path_buf();
        let parents: Vec<_> = f
            .path
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .collect();
        for c in parents {
            at.push(c);
            if at.is_file() {
                return Err(WriteError::WouldOverwrite { path: at });
            }
        }
    }
    let new: BTreeSet<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let gone: Vec<PathBuf> = earlier
        .iter()
        .filter(|p| !new.contains(p.as_path()))
        .cloned()
        .collect();
    for p in &gone {
        check_no_symlink(out, p)?;
    }

    let created_out = !out.exists();
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let staging = out.join(STAGING);
    if std::fs::symlink_metadata(&staging).is_ok() {
        // Left over by an export that was killed: it is ours to remove.
        check_no_symlink(out, Path::new(STAGING))?;
        std::fs::remove_dir_all(&staging).map_err(io_err(&staging))?;
    }
    let staged = stage(&staging, files);
    if let Err(e) = staged {
        let _ = std::fs::remove_dir_all(&staging);
        if created_out {
            let _ = std::fs::remove_dir_all(out);
        }
        return Err(e);
    }
    // Into place: renames within one folder tree.
    for f in files {
        let target = out.join(&f.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        std::fs::rename(staging.join(&f.path), &target).map_err(io_err(&target))?;
    }
    let _ = std::fs::remove_dir_all(&staging);
    let mut removed = Vec::new();
    for p in gone {
        let path = out.join(&p);
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&path)(e)),
        }
    }
    let index = Index {
        format_version: 1,
        files: files
            .iter()
            .map(|f| f.path.to_string_lossy().replace('\\', "/"))
            .collect(),
    };
    let index_path = out.join(INDEX);
    let text = serde_json::to_string_pretty(&index).unwrap_or_default() + "\n";
    std::fs::write(&index_path, text).map_err(io_err(&index_path))?;
    Ok(Written {
        written: files.len(),
        removed,
    })
}

fn stage(staging: &Path, files: &[ExportedFile]) -> Result<(), WriteError> {
    for f in files {
        let path = staging.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        std::fs::write(&path, &f.text).map_err(io_err(&path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> ExportedFile {
        ExportedFile {
            path: PathBuf::from(path),
            text: text.to_string(),
        }
    }

    #[test]
    fn index_paths_stay_inside() {
        assert!(contained("teams/a.yaml").is_some());
        assert!(contained("../etc/passwd").is_none());
        assert!(contained("/etc/passwd").is_none());
        assert!(contained("").is_none());
        assert!(contained("teams/../../x").is_none());
    }

    #[test]
    fn force_keeps_what_no_export_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        write_export(
            out,
            &[file("teams/a.yaml", "a"), file("teams/b.yaml", "b")],
            false,
        )
        .unwrap();
        std::fs::write(out.join("teams/notes.yaml"), "# mine\n").unwrap();
        let w = write_export(out, &[file("teams/a.yaml", "a2")], true).unwrap();
        assert_eq!(w.removed, vec![PathBuf::from("teams/b.yaml")]);
        assert_eq!(
            std::fs::read_to_string(out.join("teams/a.yaml")).unwrap(),
            "a2"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("teams/notes.yaml")).unwrap(),
            "# mine\n"
        );
        // Overwriting a hand-written file is refused, and nothing changes.
        let e = write_export(
            out,
            &[file("teams/a.yaml", "a3"), file("teams/notes.yaml", "x")],
            true,
        )
        .unwrap_err();
        assert!(matches!(e, WriteError::WouldOverwrite { .. }), "{e}");
        assert_eq!(
            std::fs::read_to_string(out.join("teams/a.yaml")).unwrap(),
            "a2"
        );
    }

    #[test]
    fn a_failed_export_leaves_the_folder_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new");
        let long = format!("teams/{}.yaml", "x".repeat(300));
        let e =
            write_export(&out, &[file("teams/a.yaml", "a"), file(&long, "b")], false).unwrap_err();
        assert!(matches!(e, WriteError::Io { .. }), "{e}");
        assert!(!out.exists(), "the folder it created is gone again");
    }

    #[cfg(unix)]
    #[test]
    fn never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::os::unix::fs::symlink(elsewhere.path(), out.join("teams")).unwrap();
        let e = write_export(out, &[file("teams/a.yaml", "a")], true).unwrap_err();
        assert!(matches!(e, WriteError::Symlink { .. }), "{e}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}
