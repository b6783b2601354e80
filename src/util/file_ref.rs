//! Reading the file a `${file:PATH}` names (docs/manifests.md, "Values from files"): inside
//! the repository only, a regular file only, up to a size cap.
//!
//! A pull request controls the manifests, so it controls the paths: without these rules
//! `${file:/proc/self/environ}` or `${file:../../.ssh/id_ed25519}` would land in a plan comment
//! or be sent to a URL the manifest names, a FIFO would hang the run and `/dev/zero` would
//! grow without bound. The path is resolved against the manifest's folder and canonicalised
//! (every symlink followed), and the result must lie under the repository's canonical root;
//! a secret field may also read under a directory `cfgctl.yaml` allows for secrets
//! (`secrets: {file_dirs: [...]}`, mounted CI secrets). The file is then opened without
//! blocking and without following a symlink, and must be a regular file of at most
//! [`MAX_BYTES`].

use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The largest file a `${file:…}` reads: far above any dashboard, far below harm.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Where `${file:…}` may read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileScope {
    /// The repository (the manifest directory), canonical. `None`: no confinement (a saved
    /// plan's secrets, whose references were checked when the plan was made; unit tests).
    pub root: Option<PathBuf>,
    /// The directories a secret field may also read under (`secrets.file_dirs`), canonical.
    pub secret_dirs: Vec<PathBuf>,
}

impl FileScope {
    /// The scope of the manifest directory `dir`, with the secret directories `cfgctl.yaml`
    /// allows (relative ones are relative to `dir`). A directory that does not exist is left
    /// out (nothing can be read under it).
    pub fn of_dir(dir: &Path, secret_dirs: &[PathBuf]) -> FileScope {
        FileScope {
            root: std::fs::canonicalize(dir).ok(),
            secret_dirs: secret_dirs
                .iter()
                .filter_map(|d| std::fs::canonicalize(dir.join(d)).ok())
                .collect(),
        }
    }

    /// The canonical path `path` (as written in a `${file:…}` of the manifest `manifest`)
    /// names, when the scope allows it; else why not.
    pub fn resolve(&self, manifest: &Path, path: &str, secret: bool) -> Result<PathBuf, String> {
        let written = Path::new(path);
        let full = manifest.parent().unwrap_or(Path::new("")).join(written);
        let canonical = std::fs::canonicalize(&full)
            .map_err(|e| format!("cannot read {}: {e}", full.display()))?;
        self.allows(written, path, &canonical, secret)?;
        Ok(canonical)
    }

    /// Where a secret field's `${file:PATH}` that does not exist (yet: a secret mounted only
    /// where `apply` runs) would point, checked as far as it can be: `Ok(None)` when it would be
    /// allowed, `Ok(Some(path))` when it exists (then [`FileScope::resolve`] it).
    pub fn check_missing(&self, manifest: &Path, path: &str) -> Result<Option<PathBuf>, String> {
        let written = Path::new(path);
        let full = manifest.parent().unwrap_or(Path::new("")).join(written);
        if full.exists() {
            return Ok(Some(full));
        }
        // The manifest's folder exists: the rest is folded by its names.
        let folder = manifest.parent().unwrap_or(Path::new("."));
        let folder = std::fs::canonicalize(if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        })
        .map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
        let lexical = joined(&folder.join("x"), path);
        self.allows(written, path, &lexical, true)?;
        Ok(None)
    }

    /// Whether `canonical` (what `path`, as `written`, names) may be read.
    fn allows(
        &self,
        written: &Path,
        path: &str,
        canonical: &Path,
        secret: bool,
    ) -> Result<(), String> {
        let Some(root) = &self.root else {
            return Ok(());
        };
        let in_secret_dir = || secret && self.secret_dirs.iter().any(|d| canonical.starts_with(d));
        let absolute = written.has_root()
            || written
                .components()
                .any(|c| matches!(c, Component::Prefix(_)));
        if absolute && !in_secret_dir() {
            return Err(format!(
                "`{path}` is an absolute path; a `${{file:…}}` names a file inside the manifest \
                 directory, relative to the manifest{}",
                secret_hint(secret)
            ));
        }
        // Git's own folder is never data (red team D30): actions/checkout keeps the token it
        // fetched with in `.git/config`.
        let in_git = canonical
            .strip_prefix(root)
            .is_ok_and(|inside| inside.components().any(|c| c.as_os_str() == ".git"));
        if in_git {
            return Err(format!(
                "`{path}` names a file inside `.git`, which holds git's own state (a checkout's \
                 credentials among it), never a value"
            ));
        }
        if canonical.starts_with(root) || in_secret_dir() {
            return Ok(());
        }
        Err(format!(
            "`{path}` leads outside the manifest directory {} (to {}); a `${{file:…}}` reads \
             only files inside the directory the command reads, and follows no symlink out of it{}",
            root.display(),
            canonical.display(),
            secret_hint(secret)
        ))
    }
}

fn secret_hint(secret: bool) -> &'static str {
    if secret {
        " (a secret field may also read under a directory that `secrets: {file_dirs: [...]}` in \
         cfgctl.yaml allows)"
    } else {
        ""
    }
}

/// The text of the regular file at `path` (canonical: no symlink is followed), at most
/// [`MAX_BYTES`], opened without blocking (a FIFO or a device is refused, never waited on).
pub fn read(path: &Path) -> Result<String, String> {
    use rustix::fs::{Mode, OFlags};
    let shown = path.display();
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty())
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let file = std::fs::File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{shown} is not a regular file ({}); a `${{file:…}}` reads regular files only",
            file_type_name(&meta.file_type())
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(too_large(path));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // A file that grows while it is read still stops at the cap.
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_large(path));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown} is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// [`read`] without reading: the checks only (a secret is read only when it is sent).
pub fn check(path: &Path) -> Result<(), String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file ({}); a `${{file:…}}` reads regular files only",
            path.display(),
            file_type_name(&meta.file_type())
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(too_large(path));
    }
    Ok(())
}

fn too_large(path: &Path) -> String {
    format!(
        "{} is larger than {} MiB, the most a `${{file:…}}` reads",
        path.display(),
        MAX_BYTES / (1024 * 1024)
    )
}

fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// The file a `${file:PATH}` of the manifest `manifest` names, joined and with `.` and
/// `..` folded where they can be (as the load shows a file: `dashboards/payments.json`).
pub fn joined(manifest: &Path, path: &str) -> PathBuf {
    let joined = manifest.parent().unwrap_or(Path::new("")).join(path);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if out
                    .components()
                    .next_back()
                    .is_some_and(|l| matches!(l, Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The value of a `${file:…}`: the file's text without one final line break.
pub fn value_of(mut text: String) -> String {
    // A byte-order mark (what Windows editors and PowerShell write first) is no part of it.
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, FileScope) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::write(dir.path().join("x"), "outside").unwrap();
        std::fs::write(dir.path().join("repo/in.json"), "{}").unwrap();
        let scope = FileScope::of_dir(&dir.path().join("repo"), &[]);
        (dir, scope)
    }

    #[test]
    fn only_files_inside_the_repository_are_named() {
        let (dir, scope) = repo();
        let manifest = dir.path().join("repo/m.yaml");
        assert!(scope.resolve(&manifest, "in.json", false).is_ok());
        assert!(
            scope.resolve(&manifest, "./sub/../in.json", false).is_err(),
            "sub is missing"
        );
        let up = scope.resolve(&manifest, "../x", false).unwrap_err();
        // The directory named is the one the command reads (a subfolder of a git repository,
        // say), not "the repository" (red team D22).
        let root = std::fs::canonicalize(dir.path().join("repo")).unwrap();
        let named = format!(
            "`../x` leads outside the manifest directory {} (to ",
            root.display()
        );
        assert!(up.contains(&named), "{up}");
        let abs = scope
            .resolve(&manifest, "/proc/self/environ", false)
            .unwrap_err();
        assert!(
            abs.contains("`/proc/self/environ` is an absolute path"),
            "{abs}"
        );
        std::os::unix::fs::symlink(dir.path().join("x"), dir.path().join("repo/link")).unwrap();
        let link = scope.resolve(&manifest, "link", false).unwrap_err();
        assert!(
            link.contains("leads outside the manifest directory "),
            "{link}"
        );
        assert!(link.contains("no symlink out"), "{link}");
        // A secret field's hint names the setting.
        let secret = scope.resolve(&manifest, "../x", true).unwrap_err();
        assert!(secret.contains("secrets: {file_dirs"), "{secret}");
    }

    #[test]
    fn a_secret_may_read_under_an_allowed_directory() {
        let (dir, _) = repo();
        std::fs::create_dir(dir.path().join("mounted")).unwrap();
        std::fs::write(dir.path().join("mounted/token"), "t\n").unwrap();
        let scope = FileScope::of_dir(&dir.path().join("repo"), &[PathBuf::from("../mounted")]);
        let manifest = dir.path().join("repo/m.yaml");
        let absolute = dir.path().join("mounted/token");
        let absolute = absolute.to_str().unwrap();
        let path = scope.resolve(&manifest, absolute, true).unwrap();
        assert_eq!(value_of(read(&path).unwrap()), "t");
        // A byte-order mark is no part of the value (red team D22).
        assert_eq!(value_of("\u{feff}{\"a\": 1}\r\n".to_string()), "{\"a\": 1}");
        // Not outside secret fields.
        assert!(scope.resolve(&manifest, absolute, false).is_err());
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert!(
            err.contains("not a regular file (a character device)"),
            "{err}"
        );
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Neither opening nor checking waits for a writer.
        let err = read(&fifo).unwrap_err();
        assert!(err.contains("not a regular file (a FIFO)"), "{err}");
        assert!(check(&fifo).unwrap_err().contains("a FIFO"));
        assert!(read(dir.path()).unwrap_err().contains("a directory"));
        let big = dir.path().join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_BYTES + 1).unwrap();
        assert!(read(&big).unwrap_err().contains("larger than 16 MiB"));
        assert!(check(&big).unwrap_err().contains("larger than 16 MiB"));
    }
}
