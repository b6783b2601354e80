//! The edge of `pull`: writing files. A rewrite replaces the file atomically (a temporary
//! file in the same folder, then a rename) and keeps its permissions; a new file never
//! replaces anything. Neither ever writes through a symbolic link.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("`{}` is a symbolic link: cfgctl never writes through one", .0.display())]
    Symlink(PathBuf),
    #[error("`{}` already exists: a new file never replaces one (move it away or declare the resource in it)", .0.display())]
    Exists(PathBuf),
    #[error("`{}` is not a regular file", .0.display())]
    NotAFile(PathBuf),
    #[error("`{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("`{}`", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A new file `rel` under `dir` can be created: no folder on the way is a symbolic link
/// (or a file), and nothing is at the path yet.
pub fn check_new_path(dir: &Path, rel: &Path) -> Result<(), WriteError> {
    let mut at = dir.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(&at)(e)),
            Ok(m) if m.file_type().is_symlink() => return Err(WriteError::Symlink(at)),
            Ok(_) if last => return Err(WriteError::Exists(at)),
            Ok(m) if !m.is_dir() => return Err(WriteError::NotADirectory(at)),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// An existing file can be replaced: a regular file, not a symbolic link.
pub fn check_replace(path: &Path) -> Result<(), WriteError> {
    let meta = std::fs::symlink_metadata(path).map_err(io(path))?;
    if meta.file_type().is_symlink() {
        return Err(WriteError::Symlink(path.to_path_buf()));
    }
    if !meta.is_file() {
        return Err(WriteError::NotAFile(path.to_path_buf()));
    }
    Ok(())
}

/// Writes `text` to `path` through a temporary file in the same folder. `replace`: the file
/// exists and is replaced (it must be a regular file, its permissions are kept); otherwise
/// the file must not exist, and its folders are created.
pub fn atomically(path: &Path, text: &str, replace: bool) -> Result<(), WriteError> {
    let permissions = if replace {
        check_replace(path)?;
        Some(std::fs::metadata(path).map_err(io(path))?.permissions())
    } else {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        None
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (temp, mut file) = temp_file(&dir, &name)?;
    let result = (|| {
        file.write_all(text.as_bytes()).map_err(io(&temp))?;
        if let Some(p) = permissions {
            file.set_permissions(p).map_err(io(&temp))?;
        }
        file.sync_all().map_err(io(&temp))?;
        drop(file);
        if replace {
            std::fs::rename(&temp, path).map_err(io(path))
        } else {
            // A hard link fails when the name is taken: no race can make this replace a file.
            match std::fs::hard_link(&temp, path) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&temp);
                    Ok(())
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Err(WriteError::Exists(path.to_path_buf()))
                }
                Err(e) => Err(io(path)(e)),
            }
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// A new hidden temporary file next to the target (hidden, so a concurrent load skips it).
fn temp_file(dir: &Path, name: &str) -> Result<(PathBuf, std::fs::File), WriteError> {
    for n in 0..100u32 {
        let temp = dir.join(format!(
            ".{name}.cfgctl-pull-{}-{n}.tmp",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
        {
            Ok(f) => return Ok((temp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&temp)(e)),
        }
    }
    Err(WriteError::Exists(
        dir.join(format!(".{name}.cfgctl-pull.tmp")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_in_place_and_creates_without_clobbering() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.yaml");
        std::fs::write(&f, "old\n").unwrap();
        atomically(&f, "new\n", true).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
        let err = atomically(&f, "other\n", false).unwrap_err();
        assert!(matches!(err, WriteError::Exists(_)), "{err}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
        let g = dir.path().join("sub/b.yaml");
        check_new_path(dir.path(), Path::new("sub/b.yaml")).unwrap();
        atomically(&g, "b\n", false).unwrap();
        assert_eq!(std::fs::read_to_string(&g).unwrap(), "b\n");
        assert!(matches!(
            check_new_path(dir.path(), Path::new("sub/b.yaml")),
            Err(WriteError::Exists(_))
        ));
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let real = outside.path().join("real.yaml");
        std::fs::write(&real, "keep\n").unwrap();
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(
            atomically(&link, "x\n", true),
            Err(WriteError::Symlink(_))
        ));
        std::os::unix::fs::symlink(outside.path(), dir.path().join("dashboards")).unwrap();
        assert!(matches!(
            check_new_path(dir.path(), Path::new("dashboards/new.yaml")),
            Err(WriteError::Symlink(_))
        ));
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep\n");
    }
}
