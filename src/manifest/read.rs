//! Reading a manifest file: which files are manifests, the text (UTF-8, located problems), and
//! a JSON file's array split into its documents.

use std::path::{Path, PathBuf};

use super::*;

/// What a load read: each file's path as shown and the BLAKE3 hash of its bytes, the settings
/// file first, then the manifest files in walk order (an unreadable file hashes to zeros).
/// Equal sources load to equal results: the no-change memo (`memo`) keys on them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources(pub Vec<(PathBuf, [u8; 32])>);

/// The [`Sources`] a load of `dir` would read, without parsing anything. On one thread: it
/// runs while the target's lists are read, and the other core is the server's (on loopback)
/// or idle; hashing is far quicker than the lists' arrival.
pub fn sources(dir: &Path) -> Result<Sources, LoadError> {
    use std::io::Read;
    let walk = walk(dir)?;
    // One buffer for every file: each file read into fresh allocations costs new page faults.
    let mut buf = Vec::new();
    let hashed = walk
        .settings
        .iter()
        .chain(&walk.files)
        .map(|(path, shown)| {
            buf.clear();
            let read = std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut buf));
            let hash = read.map_or([0; 32], |_| *blake3::hash(&buf).as_bytes());
            (shown.clone(), hash)
        })
        .collect();
    Ok(Sources(hashed))
}

/// The files under a directory that a load reads.
pub(super) struct Walk {
    /// The settings file (path, path as shown), if there is one.
    pub settings: Option<(PathBuf, PathBuf)>,
    /// The manifest files (path, path as shown), in walk (sorted) order.
    pub files: Vec<(PathBuf, PathBuf)>,
    pub other_files: usize,
    /// What the walk refused or left out and says so: a symlinked settings file (an error:
    /// its rules would silently not apply), a `cfgctl.yaml` below the root (a warning: it is
    /// a settings file, not a manifest, and is not read).
    pub problems: Vec<Diagnostic>,
}

/// Why an entry the walk passes over would have been read (a manifest file's name, or a
/// symbolic link to a folder) but is not: a user who links shared manifests in is told that
/// they are not loaded, rather than seeing their resources planned for deletion.
fn not_followed(entry: &walkdir::DirEntry) -> Option<String> {
    let path = entry.path();
    let kind = entry.file_type();
    if kind.is_symlink() {
        let to_folder = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        return (to_folder || is_manifest_file(path)).then(|| {
            let what = if to_folder {
                "a symbolic link to a folder"
            } else {
                "a symbolic link"
            };
            format!(
                "{what}, and cfgctl follows none (one could lead out of the repository): \
                 nothing in it is loaded; put the files themselves here"
            )
        });
    }
    (!kind.is_dir() && is_manifest_file(path))
        .then(|| "not a regular file (a FIFO, a socket or a device): not read".to_string())
}

/// Walks `dir`: hidden entries skipped, symlinks not followed, sorted by file name.
pub(super) fn walk(dir: &Path) -> Result<Walk, LoadError> {
    let meta = std::fs::metadata(dir).map_err(|_| LoadError::NotFound(dir.to_path_buf()))?;
    if !meta.is_dir() {
        return Err(LoadError::NotADirectory(dir.to_path_buf()));
    }
    let settings_path = dir.join(settings::FILE_NAME);
    let mut found = Walk {
        settings: None,
        files: Vec::new(),
        other_files: 0,
        problems: Vec::new(),
    };
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !is_hidden(e));
    for entry in walker {
        let entry = entry.map_err(|source| LoadError::Walk {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        if entry.file_type().is_symlink() && path == settings_path {
            found.problems.push(Diagnostic::error(
                display_path(path),
                Pos::new(1, 1),
                Problem::Settings(format!(
                    "`{}` is a symlink, and cfgctl follows none: its prune, exclude, max_deletes \
                     and ignore rules would not apply; put the file itself there",
                    settings::FILE_NAME
                )),
            ));
            continue;
        }
        if !entry.file_type().is_file() {
            if let Some(why) = not_followed(&entry) {
                found.problems.push(Diagnostic::warning(
                    display_path(path),
                    Pos::new(1, 1),
                    Problem::NotFollowed(why),
                ));
            }
            continue;
        }
        if !is_manifest_file(path) {
            found.other_files += 1;
            continue;
        }
        let entry = (path.to_path_buf(), display_path(path));
        if path == settings_path {
            found.settings = Some(entry);
        } else if path.file_name().is_some_and(|n| n == settings::FILE_NAME) {
            found.problems.push(Diagnostic::warning(
                &entry.1,
                Pos::new(1, 1),
                Problem::NestedSettings {
                    root: match display_path(dir).display().to_string() {
                        shown if shown.is_empty() => ".".to_string(),
                        shown => shown,
                    },
                },
            ));
            found.other_files += 1;
        } else if is_settings_near_miss(path) {
            // `cfgctl.yml`, `CFGCTL.yaml`: meant as settings, never read as manifests (red
            // team E21: three manifest errors and no hint).
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            found.problems.push(Diagnostic::error(
                &entry.1,
                Pos::new(1, 1),
                Problem::NotAManifest(format!(
                    "`{name}` reads as a settings file, but cfgctl reads its settings from `{}` only: rename it",
                    settings::FILE_NAME
                )),
            ));
            found.other_files += 1;
        } else {
            found.files.push(entry);
        }
    }
    Ok(found)
}

/// A name that is `cfgctl.yaml` but for its case or its extension (`cfgctl.yml`, `Cfgctl.YAML`).
fn is_settings_near_miss(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let lower = name.to_ascii_lowercase();
    name != settings::FILE_NAME && matches!(lower.as_str(), "cfgctl.yaml" | "cfgctl.yml")
}

pub(super) fn is_manifest_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

pub(super) fn is_hidden(entry: &walkdir::DirEntry) -> bool {
    entry.depth() > 0 && entry.file_name().to_string_lossy().starts_with('.')
}

/// The path shown to users: `dir/rel`, without a leading `./`.
pub(super) fn display_path(path: &Path) -> PathBuf {
    path.strip_prefix(".").unwrap_or(path).to_path_buf()
}

/// Reads a file as UTF-8 text, or says why not (with the position of a bad byte).
pub(super) fn read_text(path: &Path) -> Result<String, (Pos, Problem)> {
    let bytes =
        std::fs::read(path).map_err(|e| (Pos::new(1, 1), Problem::Unreadable(e.to_string())))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = &e.as_bytes()[..offset];
        // The prefix is valid UTF-8 by construction.
        let prefix = std::str::from_utf8(valid).unwrap_or_default();
        let line = prefix.matches('\n').count() + 1;
        let col = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (
            Pos::new(
                u32::try_from(line).unwrap_or(u32::MAX),
                u32::try_from(col).unwrap_or(u32::MAX),
            ),
            Problem::NotUtf8 { offset },
        )
    })
}

/// A JSON Schema document (such as the one `cfgctl schema --out` writes): a top-level mapping
/// with `$schema` and `definitions`, `$defs` or `properties`. A manifest never has `$schema`,
/// so only a text that holds it is parsed here.
pub(super) fn is_json_schema(text: &str, is_json: bool) -> bool {
    if !text.contains("$schema") {
        return false;
    }
    let value = if is_json {
        serde_json::from_str::<Value>(text).ok()
    } else {
        yaml::parse_documents(text)
            .ok()
            .filter(|docs| docs.len() == 1)
            .and_then(|docs| docs.into_iter().next())
            .map(|d| d.value)
    };
    let Some(Value::Object(top)) = value else {
        return false;
    };
    top.contains_key("$schema")
        && ["definitions", "$defs", "properties"]
            .iter()
            .any(|k| top.contains_key(*k))
}

pub(super) fn split_json_array(doc: Document) -> Vec<Document> {
    let Value::Array(items) = doc.value else {
        return vec![doc];
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let prefix = format!("/{i}");
            let spans = doc.spans.subtree(&prefix);
            let start = spans.get("").map(|s| s.value).unwrap_or(doc.start);
            Document {
                value,
                start,
                spans,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_schema_documents_are_told_from_manifests() {
        let schema = crate::api::spec::manifest_schema();
        let text = serde_json::to_string_pretty(&schema).unwrap();
        assert!(is_json_schema(&text, true), "what `cfgctl schema` writes");
        assert!(is_json_schema(
            "$schema: http://json-schema.org/draft-07/schema#\nproperties: {}\n",
            false
        ));
        // A manifest that mentions `$schema` (in a dashboard, say) is still a manifest.
        let manifest = r#"{"api_version": "v1/config", "kind": "Dashboard",
            "spec": {"slug": "d", "dashboard_json": {"$schema": "x", "properties": {}}}}"#;
        assert!(!is_json_schema(manifest, true));
        assert!(
            !is_json_schema(r#"{"$schema": "x"}"#, true),
            "no definitions"
        );
        assert!(!is_json_schema("{not json", true));
    }
}

/// Why a directory a setting names (`policy:`, an environment's `overlay:`) is not one cfgctl
/// reads: it does not exist, or a component of its path is a symlink (which could lead out of
/// the repository; cfgctl follows none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotInside {
    Missing,
    /// The first component that is a symlink, as `repo.join(...)` up to it.
    Symlink(PathBuf),
}

/// Checks every component of `rel` below `repo`, so that no symlink leads the directory out
/// of the repository (walkdir follows a symlinked root, so the walk cannot tell).
pub fn no_symlink_on_the_way(repo: &Path, rel: &Path) -> Result<(), NotInside> {
    let mut walked = repo.to_path_buf();
    for part in rel.components() {
        walked.push(part);
        match walked.symlink_metadata() {
            Err(_) => return Err(NotInside::Missing),
            Ok(m) if m.file_type().is_symlink() => return Err(NotInside::Symlink(walked)),
            Ok(_) => {}
        }
    }
    Ok(())
}
