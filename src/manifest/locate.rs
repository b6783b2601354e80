//! The fast way through a manifest file and the positions it leaves out: most files are read
//! without the position of every field (less time and much less memory); a file with
//! a problem is read again by the located reader, and a problem found after loading finds its
//! field through [`Locator`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;

/// The fast way through a YAML file: read without positions below each document's start, and
/// kept when every document passes its checks. A file with any problem is read again by the
/// located reader (false), so every diagnostic points at its field. The manifests of a file
/// read this way have no field positions ([`Locator`] finds one when a later check needs it).
/// With `has_refs` (the text holds `${`), a document that needs substitution is read located.
pub(super) fn load_plain(text: &str, shown: &Path, has_refs: bool, loaded: &mut Loaded) -> bool {
    let Some(docs) = yaml::parse_documents_plain(text) else {
        return false;
    };
    let mut manifests = Vec::with_capacity(docs.len());
    let mut diagnostics = Vec::new();
    for plain in docs {
        if has_refs && super::vars::needed(&plain.value) {
            return false;
        }
        let doc = Document {
            value: Value::Null,
            start: plain.start,
            spans: Spans::default(),
        };
        let mut ctx = DocCheck {
            file: shown,
            text,
            doc: &doc,
            diagnostics: &mut diagnostics,
            failed: false,
        };
        if let Some(m) = ctx.check(plain.value) {
            manifests.push(m);
        }
        if !diagnostics.is_empty() {
            return false;
        }
    }
    loaded.manifests.append(&mut manifests);
    true
}

/// Field positions of manifests that were read without them, found by reading their file
/// again with the located reader; only a problem found after loading needs one, so this is
/// rare and each file is read at most once.
#[derive(Default)]
pub struct Locator {
    files: BTreeMap<PathBuf, Option<Vec<Document>>>,
    /// The hash of each file as the load read it: a file that reads otherwise now (edited
    /// since) gives no positions, only its manifests' document starts as loaded, never a
    /// field of another version. Without it (a file just read), every file is taken.
    loaded: Option<BTreeMap<PathBuf, [u8; 32]>>,
}

impl Locator {
    /// A locator for the files of a load made earlier (the files hashed as that load read them).
    pub fn of(loaded: &Loaded) -> Locator {
        Locator {
            files: BTreeMap::new(),
            loaded: Some(loaded.sources.0.iter().cloned().collect()),
        }
    }

    /// The position of a field (JSON pointer inside the spec) of `m`, or of its document.
    pub fn field_pos(&mut self, m: &Manifest, pointer: &str) -> Pos {
        if !m.spans.is_empty() {
            return m.field_pos(pointer);
        }
        let loaded = &self.loaded;
        let docs = self.files.entry(m.file.clone()).or_insert_with(|| {
            let text = read_text(&m.file).ok()?;
            if let Some(loaded) = loaded {
                let hash = *blake3::hash(text.as_bytes()).as_bytes();
                if loaded.get(&m.file) != Some(&hash) {
                    return None;
                }
            }
            yaml::parse_documents(&text).ok()
        });
        docs.iter()
            .flatten()
            .find(|d| d.start == m.pos)
            .map(|d| spec_spans(d, m.kind))
            .and_then(|spans| spans.nearest(pointer).map(|s| s.field()))
            .unwrap_or(m.pos)
    }
}

impl Loaded {
    /// Points the planner's reference problems at their field: the planner is pure and has
    /// only the positions the loader kept (see [`Locator`]).
    pub fn locate(&self, diagnostics: &mut [Diagnostic]) {
        let mut locator = Locator::of(self);
        for d in diagnostics {
            let Some((from, path)) = d.problem.reference() else {
                continue;
            };
            let Some(m) = self.manifests.iter().find(|m| {
                m.file == d.file && m.spans.is_empty() && m.address().to_string() == from
            }) else {
                continue;
            };
            if let Some(r) = m.references().into_iter().find(|r| r.path == path) {
                d.pos = locator.field_pos(m, &r.pointer);
            }
        }
    }
}

/// The positions of a document's spec, re-rooted at it, without the nodes inside embedded
/// documents (checked at load and never pointed at later).
pub(super) fn spec_spans(doc: &Document, kind: Kind) -> Spans {
    let mut spans = doc.spans.subtree("/spec");
    for embedded in kind.def().embedded_json {
        spans.remove_below(&format!("/{}", escape_pointer(embedded.field)));
    }
    spans
}
