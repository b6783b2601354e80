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
/// With `has_refs` (the text holds `${`), a document that needs substitution is substituted
/// here when the block reader took the file (`yaml::parse_documents_plain_refs`), else read
/// located; any problem of substitution reads the file located too.
pub(super) fn load_plain(
    src: &super::vars::Source<'_>,
    has_refs: bool,
    ctx: &super::vars::Context<'_>,
    loaded: &mut Loaded,
) -> bool {
    let (text, shown) = (src.text, src.shown);
    let refs = has_refs
        .then(|| yaml::parse_documents_plain_refs(text))
        .flatten();
    let substitutes = refs.is_some();
    let Some(docs) = refs.or_else(|| yaml::parse_documents_plain(text)) else {
        return false;
    };
    let mut manifests = Vec::with_capacity(docs.len());
    let mut diagnostics = Vec::new();
    for plain in docs {
        let mut doc = Document {
            value: plain.value,
            start: plain.start,
            spans: Spans::default(),
        };
        let mut outcome = match has_refs && super::vars::needed(&doc.value) {
            false => None,
            true if !substitutes => return false,
            true => Some(super::vars::substitute(
                &mut doc,
                src,
                ctx,
                &mut diagnostics,
            )),
        };
        let (from_files, unresolved) = outcome
            .as_mut()
            .map(|o| {
                let taken = std::mem::take(&mut o.whole_files);
                (taken, std::mem::take(&mut o.unresolved))
            })
            .unwrap_or_default();
        let value = std::mem::take(&mut doc.value);
        let mut check = DocCheck {
            file: shown,
            text,
            doc: &doc,
            diagnostics: &mut diagnostics,
            failed: false,
            from_files: &from_files,
            unresolved: &unresolved,
            read_document: ctx.read_document,
            prepared: Vec::new(),
        };
        if let Some(m) = check.check(value) {
            manifests.push((m, outcome));
        }
        if !diagnostics.is_empty() {
            return false;
        }
    }
    for (m, outcome) in manifests {
        if let Some(mut outcome) = outcome {
            loaded.data_files.extend(outcome.files.drain(..));
            loaded.provenance.record(&m, outcome, &mut loaded.resolved);
        }
        loaded.manifests.push(m);
    }
    true
}

/// A file's documents read again: each one's start and field positions.
type FileFields = Vec<(Pos, Spans)>;

/// Field positions of manifests that were read without them, found by reading their file
/// again ([`yaml::field_positions`]: the block reader's located mode, else the located
/// reader); only a problem found after loading needs one, and each file is read at most once.
#[derive(Default)]
pub struct Locator {
    /// The file read last and its documents (`None`: unreadable, or edited since the load).
    /// Only one is kept: its positions weigh more than its text, and a load's problems come
    /// file after file.
    last: Option<(PathBuf, Option<FileFields>)>,
    /// The hash of each file as the load read it: a file that reads otherwise now (edited
    /// since) gives no positions, only its manifests' document starts as loaded, never a
    /// field of another version. Without it (a file just read), every file is taken.
    loaded: Option<BTreeMap<PathBuf, [u8; 32]>>,
}

impl Locator {
    /// A locator for the files of a load made earlier (the files hashed as that load read them).
    pub fn of(loaded: &Loaded) -> Locator {
        Locator {
            last: None,
            loaded: Some(loaded.sources.0.iter().cloned().collect()),
        }
    }

    /// The position of a field (JSON pointer inside the spec) of `m`, or of its document.
    pub fn field_pos(&mut self, m: &Manifest, pointer: &str) -> Pos {
        if !m.spans.is_empty() {
            return m.field_pos(pointer);
        }
        if self.last.as_ref().is_none_or(|(file, _)| *file != m.file) {
            let docs = self.documents(&m.file);
            self.last = Some((m.file.clone(), docs));
        }
        let docs = self.last.as_ref().and_then(|(_, docs)| docs.as_deref());
        pos_in(docs, m, pointer)
    }

    /// Where the value at `pointer` of `m` was written: the overlay file when an
    /// environment's overlay set it (see [`Provenance::overlay_field`]), else `m`'s own file.
    pub(super) fn written_at(
        &mut self,
        provenance: &overlay::Provenance,
        m: &Manifest,
        pointer: &str,
    ) -> (PathBuf, Pos) {
        match provenance.overlay_field(&m.address(), pointer) {
            Some((file, pos)) => (file.to_path_buf(), pos),
            None => (m.file.clone(), self.field_pos(m, pointer)),
        }
    }

    /// [`Locator::field_pos`] of many fields at once: each file read again once, the files on
    /// all cores (a repository whose every manifest has a problem found after loading, such as
    /// references to resources another repository declares, reads them all again).
    pub fn field_positions(&self, wanted: &[(&Manifest, &str)]) -> Vec<Pos> {
        let mut by_file: BTreeMap<&Path, Vec<usize>> = BTreeMap::new();
        for (i, (m, _)) in wanted.iter().enumerate() {
            if m.spans.is_empty() {
                by_file.entry(m.file.as_path()).or_default().push(i);
            }
        }
        let found: Vec<(usize, Pos)> = by_file
            .into_par_iter()
            .flat_map_iter(|(file, at)| {
                let docs = self.documents(file);
                at.into_iter()
                    .map(|i| (i, pos_in(docs.as_deref(), wanted[i].0, wanted[i].1)))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut positions: Vec<Pos> = wanted.iter().map(|(m, p)| m.field_pos(p)).collect();
        for (i, pos) in found {
            positions[i] = pos;
        }
        positions
    }

    /// A file's documents read again, their starts and field positions
    /// ([`yaml::field_positions`]); `None` when it cannot be read or reads otherwise than the
    /// load read it.
    fn documents(&self, file: &Path) -> Option<FileFields> {
        let text = read_text(file).ok()?;
        if let Some(loaded) = &self.loaded {
            let hash = *blake3::hash(text.as_bytes()).as_bytes();
            if loaded.get(file) != Some(&hash) {
                return None;
            }
        }
        yaml::field_positions(&text)
    }
}

/// The position of a field of `m` among its file's documents read again (`None`: not read),
/// else of its document.
fn pos_in(docs: Option<&[(Pos, Spans)]>, m: &Manifest, pointer: &str) -> Pos {
    docs.into_iter()
        .flatten()
        .find(|(start, _)| *start == m.pos)
        .map(|(_, spans)| spec_spans_of(spans, m.kind))
        .and_then(|spans| spans.nearest(pointer).map(|s| s.field()))
        .unwrap_or(m.pos)
}

impl Loaded {
    /// Points the load's own reference warnings at their field (they point at their document
    /// until then: only a command that shows warnings needs their fields, and finding them
    /// reads files again).
    pub fn locate_warnings(&mut self) {
        let mut diagnostics = std::mem::take(&mut self.diagnostics);
        self.locate(&mut diagnostics);
        self.diagnostics = diagnostics;
    }

    /// Points reference problems (the planner's, the load's warnings) at their field: the
    /// planner is pure and has only the positions the loader kept (see [`Locator`]).
    pub fn locate(&self, diagnostics: &mut [Diagnostic]) {
        let fast_read: BTreeMap<(&Path, String), &Manifest> = self
            .manifests
            .iter()
            .filter(|m| m.spans.is_empty())
            .map(|m| ((m.file.as_path(), m.address().to_string()), m))
            .collect();
        let mut at = Vec::new();
        let mut pointers = Vec::new();
        let mut in_overlays = Vec::new();
        let patched: BTreeMap<String, &Manifest> = self
            .manifests
            .iter()
            .filter(|m| self.provenance.patched(&m.address()))
            .map(|m| (m.address().to_string(), m))
            .collect();
        for (i, d) in diagnostics.iter().enumerate() {
            let Some((from, path)) = d.problem.reference() else {
                continue;
            };
            // A value an environment's overlay wrote is at the overlay's field.
            if let Some(found) = patched
                .get(from)
                .and_then(|m| self.overlay_reference(m, path))
            {
                in_overlays.push((i, found));
                continue;
            }
            let Some(m) = fast_read.get(&(d.file.as_path(), from.to_string())) else {
                continue;
            };
            if let Some(r) = m.references().iter().find(|r| r.path == path) {
                at.push((i, *m));
                pointers.push(r.pointer.clone());
            }
        }
        let wanted: Vec<(&Manifest, &str)> = at
            .iter()
            .zip(&pointers)
            .map(|((_, m), p)| (*m, p.as_str()))
            .collect();
        let positions = Locator::of(self).field_positions(&wanted);
        for ((i, _), pos) in at.iter().zip(positions) {
            diagnostics[*i].pos = pos;
        }
        for (i, (file, pos)) in in_overlays {
            (diagnostics[i].file, diagnostics[i].pos) = (file, pos);
        }
    }

    /// Where an environment's overlay wrote the reference at `path` of `m`; `None` when no
    /// overlay wrote it.
    fn overlay_reference(&self, m: &Manifest, path: &str) -> Option<(PathBuf, Pos)> {
        let references = m.references();
        let r = references.iter().find(|r| r.path == path)?;
        let (file, pos) = self.provenance.overlay_field(&m.address(), &r.pointer)?;
        Some((file.to_path_buf(), pos))
    }
}

/// The positions of a document's spec, re-rooted at it, without the nodes inside embedded
/// documents (checked at load and never pointed at later).
pub(super) fn spec_spans(doc: &Document, kind: Kind) -> Spans {
    spec_spans_of(&doc.spans, kind)
}

fn spec_spans_of(spans: &Spans, kind: Kind) -> Spans {
    let mut spans = spans.subtree("/spec");
    for embedded in kind.def().embedded_json {
        spans.remove_below(&format!("/{}", escape_pointer(embedded.field)));
    }
    spans
}
