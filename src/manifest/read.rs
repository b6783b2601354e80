//! Reading a manifest file: which files are manifests, the text (UTF-8, located problems), and
//! a JSON file's array split into its documents.

use std::path::{Path, PathBuf};

use super::*;

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
