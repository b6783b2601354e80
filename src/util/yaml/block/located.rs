//! The block reader's located mode, for the manifest loader's `Locator`: where each field of a
//! file that passed the fast reader is, found by reading it again the fast way rather than
//! through serde-saphyr's located reader (a repository whose every dashboard refers to a
//! collection another repository declares has a warning per manifest, and each is located).
//!
//! It records what [`NodeSpan::field`] gives for every node but a document's root: a mapping
//! entry's key, a sequence item's value. The value positions of mapping entries are not read
//! here, so the spans it makes hold the key in both places: they are field positions only.

use super::super::{NodeSpan, Pos, Spans};
use super::Reader;

/// The current JSON pointer and the field positions found so far in a document.
#[derive(Default)]
pub(super) struct Fields {
    pointer: String,
    pub(super) spans: Spans,
}

/// Every document's start and its field positions (see the module), or `None` when the text is
/// not in the block reader's subset, or a sequence item starts on a line after its dash (whose
/// position the located reader gives otherwise).
pub(in crate::util::yaml) fn field_positions_block(text: &str) -> Option<Vec<(Pos, Spans)>> {
    let mut fields = Vec::new();
    let docs = super::read(text, false, Some(&mut fields))?;
    Some(docs.into_iter().map(|d| d.start).zip(fields).collect())
}

impl Reader<'_> {
    /// Enters the entry of `key`, whose key starts at byte `col` of the current line: its
    /// position recorded. The pointer's length before it, to leave it by.
    pub(super) fn enter_key(&mut self, key: &str, col: usize) -> Option<usize> {
        // Nothing to do (nothing built) unless positions are recorded: the fast reader's way.
        self.fields.as_ref()?;
        let segment = crate::util::jsonpath::escape_pointer(key);
        self.enter(&segment, col, true)
    }

    /// Enters item `index` of a sequence, whose value (`item`) starts at byte `col` of the
    /// current line. When positions are recorded, `None` (giving up) for an item whose value
    /// the located reader places elsewhere: on a later line, or a block scalar (`|`, `>`: at
    /// its first content line).
    pub(super) fn enter_item(
        &mut self,
        index: usize,
        col: usize,
        on_next_lines: bool,
        item: &[u8],
    ) -> Option<Option<usize>> {
        if self.fields.is_none() {
            return Some(None);
        }
        if on_next_lines || matches!(item.first(), Some(b'|' | b'>')) {
            return None;
        }
        Some(self.enter(&index.to_string(), col, false))
    }

    /// Records the node at `segment` below the current pointer, at byte `col` of the current
    /// line: as its key (`keyed`) or as an item's value. The pointer's length before it.
    fn enter(&mut self, segment: &str, col: usize, keyed: bool) -> Option<usize> {
        let line = self.line;
        let f = self.fields.as_mut()?;
        let mark = f.pointer.len();
        f.pointer.push('/');
        f.pointer.push_str(segment);
        // Columns count characters; only spaces and `- ` come before a key or an item.
        let at = Pos::new(line, u32::try_from(col).ok()? + 1);
        let key = keyed.then_some(at);
        f.spans
            .insert(f.pointer.clone(), NodeSpan { key, value: at });
        Some(mark)
    }

    /// Leaves what [`Reader::enter_key`] or [`Reader::enter_item`] entered.
    pub(super) fn leave(&mut self, mark: Option<usize>) {
        if let (Some(f), Some(mark)) = (self.fields.as_mut(), mark) {
            f.pointer.truncate(mark);
        }
    }
}
