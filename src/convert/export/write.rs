//! Writing an export to disk, safely.
//!
//! - An index (`.cfgctl-export.json`, hidden so the loader skips it) lists every file an
//!   export wrote. `--force` replaces and removes only files in that index: a hand-written
//!   file, or a manifest added next to the export, is never deleted or overwritten (an export
//!   that would overwrite one is refused before anything is written).
//! - Nothing is written through a symlink, and all or nothing: the files, the removals of the
//!   earlier export's files whose resources are gone and the new index are one
//!   [`crate::util::safe_write::Batch`], checked before anything is written and undone on failure.

use std::collections::BTreeSet;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ExportedFile;
use crate::util::safe_write::{Batch, Failed};

/// The index file, relative to the output folder.
pub const INDEX: &str = ".cfgctl-export.json";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    format_version: u32,
    files: Vec<String>,
}

/// Why an export was not written. Nothing in the output folder changed, unless a
/// [`WriteError::Write`] says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(
        "`{dir}` is not empty: pass --force to replace the manifests of an earlier export there"
    )]
    NotEmpty { dir: PathBuf },
    #[error("{path} exists and no earlier export wrote it (it is not in {INDEX}): move it away or export elsewhere; nothing was written")]
    WouldOverwrite { path: PathBuf },
    #[error("the export index {path} is not readable ({reason}): remove it to start over; nothing was written")]
    Index { path: PathBuf, reason: String },
    #[error("{path}: {source}; nothing was written")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Refused by the safe writer's checks, or failed while writing (then undone).
    #[error(transparent)]
    Write(#[from] Failed),
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

/// The files the earlier export wrote, and whether its index exists.
fn read_index(out: &Path) -> Result<(BTreeSet<PathBuf>, bool), WriteError> {
    let path = out.join(INDEX);
    let text = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((BTreeSet::new(), false)),
        Err(e) => return Err(io_err(&path)(e)),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(Failed::from(crate::util::safe_write::WriteError::Symlink(path)).into())
        }
        Ok(_) => std::fs::read_to_string(&path).map_err(io_err(&path))?,
    };
    let index: Index = serde_json::from_str(&text).map_err(|e| WriteError::Index {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let files = index
        .files
        .iter()
        .map(|f| {
            contained(f).ok_or_else(|| WriteError::Index {
                path: path.clone(),
                reason: format!("`{f}` is not a path inside the folder"),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok((files, true))
}

/// What an export changed in the folder.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub written: usize,
    /// Files of the earlier export whose resources are gone.
    pub removed: Vec<PathBuf>,
}

/// `out` holds something (a missing folder is empty).
pub fn is_non_empty(out: &Path) -> bool {
    std::fs::read_dir(out)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
}

/// Writes `files` under `out` (see the module documentation for the rules).
pub fn write_export(
    out: &Path,
    files: &[ExportedFile],
    force: bool,
) -> Result<Written, WriteError> {
    if let Ok(m) = std::fs::metadata(out) {
        if !m.is_dir() {
            return Err(io_err(out)(io::Error::other("not a folder")));
        }
    }
    if is_non_empty(out) && !force {
        return Err(WriteError::NotEmpty {
            dir: out.to_path_buf(),
        });
    }
    let (earlier, has_index) = read_index(out)?;
    let mut batch = Batch::new(out);
    for f in files {
        if earlier.contains(&f.path) && out.join(&f.path).is_file() {
            batch.replace(&f.path, f.text.as_str());
            continue;
        }
        // A file, or a folder on the way that is a file, that no export wrote.
        let mut at = out.to_path_buf();
        for c in f.path.components() {
            at.push(c);
            let meta = std::fs::symlink_metadata(&at);
            let last = at == out.join(&f.path);
            // A symlink is the safe writer's to refuse, by name.
            let ours = |m: &std::fs::Metadata| !m.file_type().is_symlink() && (last || m.is_file());
            if meta.as_ref().is_ok_and(ours) {
                return Err(WriteError::WouldOverwrite { path: at });
            }
        }
        batch.create(&f.path, f.text.as_str());
    }
    let new: BTreeSet<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let mut removed = Vec::new();
    for p in earlier.iter().filter(|p| !new.contains(p.as_path())) {
        // A file the earlier export wrote and someone removed since: nothing to remove.
        if std::fs::symlink_metadata(out.join(p)).is_ok() {
            batch.remove(p);
            removed.push(p.clone());
        }
    }
    let index = Index {
        format_version: 1,
        files: files
            .iter()
            .map(|f| f.path.to_string_lossy().replace('\\', "/"))
            .collect(),
    };
    let text = serde_json::to_string_pretty(&index).unwrap_or_default() + "\n";
    if has_index {
        batch.replace(INDEX, text);
    } else {
        batch.create(INDEX, text);
    }
    batch.commit()?;
    Ok(Written {
        written: files.len(),
        removed,
    })
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
        assert!(matches!(e, WriteError::Write(_)), "{e}");
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
        assert!(
            e.to_string().ends_with(
                "teams` is a symlink: cfgctl never writes through one; nothing was written"
            ),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    /// Issue 3: two files for one path (names that meet) are refused before anything is
    /// written; on main the second rename failed after the first file was moved into place,
    /// leaving it and the staging folder behind, and the next `--force` refused that file.
    #[test]
    fn one_path_twice_writes_nothing_and_force_works_after() {
        use crate::util::safe_write::tests::listing;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write_export(&out, &[file("teams/a.yaml", "a")], false).unwrap();
        let before = listing(&out);
        let e = write_export(
            &out,
            &[file("teams/b.yaml", "b1"), file("teams/b.yaml", "b2")],
            true,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .ends_with("teams/b.yaml` would be written twice in one run; nothing was written"),
            "{e}"
        );
        assert_eq!(listing(&out), before, "byte for byte as before");
        let w = write_export(&out, &[file("teams/b.yaml", "b")], true).unwrap();
        assert_eq!(w.removed, vec![PathBuf::from("teams/a.yaml")]);
        assert_eq!(
            std::fs::read_to_string(out.join("teams/b.yaml")).unwrap(),
            "b"
        );
    }
}
