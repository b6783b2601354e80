//! The block reader: the common shape of a manifest file (block mappings and sequences, one-line
//! plain and quoted scalars, literal block scalars and folded ones whose lines all sit at the
//! block's indentation, empty `[]`/`{}`, comments, `---` between documents) read line by line,
//! with much less work than the general parser.
//!
//! It gives up (`None`) on anything else, and on anything where the general reader might decide
//! differently: tabs, CR, control characters, anchors, aliases, tags, flow collections with
//! content, kept (`|+`, `>+`) block scalars, a folded one with a blank or a more indented line,
//! multi-line plain or quoted scalars, plain scalars that could be read as anything but a
//! canonical decimal number, `true`/`false`, null or a string (`yes`, `0x1f`, `1e3`, `.inf`, `012`, ...), repeated or non-string keys, merge
//! keys, and inputs past its own limits (kept well under serde-saphyr's budget). The caller then
//! reads the file with serde-saphyr, so a file this reader takes gets the same values and the
//! same document starts as the general reader would give; the tests below and a property test
//! check that on generated and on every kind of hand-written input.

use serde_json::{Map, Value};

use super::{PlainDocument, Pos, Spans};

pub(super) mod located;
mod scalar;
use scalar::{double_quoted, find_comment, is_indicator, resolve_plain, single_quoted};

/// Deepest nesting read here (serde-saphyr's budget refuses past 64).
const MAX_DEPTH: usize = 48;
/// Values in one file (serde-saphyr's budget: 250,000 nodes, 1,000,000 events).
const MAX_NODES: usize = 200_000;
/// Documents in one file (serde-saphyr's budget: 1,024).
const MAX_DOCUMENTS: usize = 1_000;
/// Longest file read here.
const MAX_BYTES: usize = 16 << 20;
/// Longest implicit key in bytes of source, from its start to its `:` (YAML allows 1,024
/// characters, and serde-saphyr refuses past them).
const MAX_KEY: usize = 1_000;

/// Every non-empty document of `text` (its BOM already stripped), or `None` when the text is
/// not in the subset this reader takes.
pub(super) fn parse_documents_block(text: &str) -> Option<Vec<PlainDocument>> {
    read(text, false, None)
}

/// [`parse_documents_block`] of a text with `${` in it, for substitution without positions:
/// every string that is a whole `${var:NAME}` was written plain (one quoted or in a block
/// scalar gives up), since only a plain one takes the variable's type.
pub(super) fn parse_documents_block_refs(text: &str) -> Option<Vec<PlainDocument>> {
    read(text, true, None)
}

/// The documents; with `fields`, each one's field positions pushed there (see [`located`]).
fn read(text: &str, refs: bool, mut fields: Option<&mut Vec<Spans>>) -> Option<Vec<PlainDocument>> {
    if text.len() > MAX_BYTES || !plain_chars(text.as_bytes()) {
        return None;
    }
    let mut r = Reader {
        text,
        b: text.as_bytes(),
        pos: 0,
        end: 0,
        line: 1,
        nodes: 0,
        refs,
        fields: fields.as_ref().map(|_| located::Fields::default()),
    };
    r.end = r.find_end();
    let mut docs = Vec::new();
    let mut markers = 0usize;
    loop {
        r.skip_empty();
        if r.at_end() {
            break;
        }
        let line = r.current();
        if line.starts_with(b"---") && blank_or_comment(&line[3..], true) {
            markers += 1;
            if markers > MAX_DOCUMENTS {
                return None;
            }
            r.next_line();
            continue;
        }
        // Directives, document ends, an indented or non-mapping root: the general reader.
        if line[0] == b'%' || line.starts_with(b"...") || line[0] == b' ' || is_dash_item(line, 0) {
            return None;
        }
        let start = Pos::new(r.line, 1);
        let value = r.mapping(0, 0, 1)?;
        // The root ends only at a document marker or at the end.
        if !r.at_end() {
            let line = r.current();
            if !(line.starts_with(b"---") && blank_or_comment(&line[3..], true)) {
                return None;
            }
        }
        docs.push(PlainDocument { value, start });
        if let (Some(out), Some(f)) = (fields.as_deref_mut(), r.fields.as_mut()) {
            out.push(std::mem::take(&mut f.spans));
        }
        if docs.len() > MAX_DOCUMENTS {
            return None;
        }
    }
    Some(docs)
}

/// No character the general reader refuses or treats specially: tabs, CR, other control
/// characters, DEL, C1 controls (NEL among them), a BOM past the start, U+FFFE/U+FFFF, and the
/// Unicode line and paragraph separators.
fn plain_chars(b: &[u8]) -> bool {
    // Sixteen bytes at a time: a run of printable ASCII and newlines (nearly every byte of a
    // manifest) is passed over by a check without branches; a run with anything else goes
    // byte by byte.
    const RUN: usize = 16;
    let special = |c: u8| (c < 0x20 && c != b'\n') || c >= 0x7f;
    let mut i = 0;
    while i < b.len() {
        let end = (i + RUN).min(b.len());
        let run = &b[i..end];
        if run.len() == RUN && !run.iter().fold(false, |any, &c| any | special(c)) {
            i = end;
            continue;
        }
        while i < end {
            if !plain_at(b, i) {
                return false;
            }
            i += 1;
        }
    }
    true
}

/// [`plain_chars`] at one byte: what it is, or (not ASCII) what starts there.
fn plain_at(b: &[u8], i: usize) -> bool {
    let c = b[i];
    if c < 0x80 {
        return !((c < 0x20 && c != b'\n') || c == 0x7f);
    }
    let next = b.get(i + 1).copied().unwrap_or(0);
    let next2 = b.get(i + 2).copied().unwrap_or(0);
    !matches!(
        (c, next, next2),
        (0xC2, 0x80..=0x9F, _)
            | (0xEF, 0xBB, 0xBF)
            | (0xEF, 0xBF, 0xBE | 0xBF)
            | (0xE2, 0x80, 0xA8 | 0xA9)
    )
}

/// Only spaces, then nothing or a comment. After a marker (`---`) or an indicator the comment
/// must follow a space; `spaced` says whether the text is allowed to start with `#` directly
/// (it is when the text itself starts after a space).
fn blank_or_comment(rest: &[u8], after_token: bool) -> bool {
    let trimmed = trim_start(rest);
    if trimmed.is_empty() {
        return true;
    }
    trimmed[0] == b'#' && (trimmed.len() < rest.len() || !after_token)
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| c == b' ').count();
    &s[n..]
}

fn trim_end(s: &[u8]) -> &[u8] {
    let n = s.iter().rev().take_while(|&&c| c == b' ').count();
    &s[..s.len() - n]
}

fn indent_of(line: &[u8]) -> usize {
    line.iter().take_while(|&&c| c == b' ').count()
}

/// `-` at column `at`, followed by a space or the end of the line.
fn is_dash_item(line: &[u8], at: usize) -> bool {
    line.get(at) == Some(&b'-') && matches!(line.get(at + 1), None | Some(b' '))
}

fn is_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"..."))
        && matches!(line.get(3), None | Some(b' '))
}

/// A whole `${var:NAME}`: substitution gives it the variable's type when it is plain.
fn whole_var(s: &str) -> bool {
    s.strip_prefix("${var:")
        .and_then(|r| r.strip_suffix('}'))
        .is_some_and(|name| !name.contains('}'))
}

/// What starts a mapping entry.
enum Key {
    /// The key and the offset just past its `:`.
    Found(String, usize),
    /// No `key:` here: a scalar.
    None,
    /// Something this reader does not take.
    GiveUp,
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    /// Start of the current line.
    pos: usize,
    /// End of the current line (its newline, or the end of the text).
    end: usize,
    /// 1-based number of the current line.
    line: u32,
    nodes: usize,
    /// Give up on a whole `${var:NAME}` that is not plain (see [`parse_documents_block_refs`]).
    refs: bool,
    /// Where each field is, when asked for (see [`located`]).
    fields: Option<located::Fields>,
}

impl<'a> Reader<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }

    fn find_end(&self) -> usize {
        memchr::memchr(b'\n', &self.b[self.pos..]).map_or(self.b.len(), |i| self.pos + i)
    }

    /// The current line, without its newline.
    fn current(&self) -> &'a [u8] {
        &self.b[self.pos..self.end]
    }

    fn next_line(&mut self) {
        self.pos = (self.end + 1).min(self.b.len());
        self.end = self.find_end();
        self.line += 1;
    }

    /// Skips blank and comment-only lines.
    fn skip_empty(&mut self) {
        while !self.at_end() {
            let t = trim_start(self.current());
            if !t.is_empty() && t[0] != b'#' {
                break;
            }
            self.next_line();
        }
    }

    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    /// The text of `s`, a slice of the input: found by its offset (the input is already
    /// valid UTF-8; slicing checks only that both ends are character boundaries).
    fn str_of(&self, s: &'a [u8]) -> Option<&'a str> {
        let start = (s.as_ptr() as usize).checked_sub(self.b.as_ptr() as usize)?;
        self.text.get(start..start.checked_add(s.len())?)
    }

    /// A block mapping whose keys are at column `indent`; its first key starts at column `col`
    /// of the current line (after a sequence's `- `, or at `indent`). Leaves the reader at the
    /// first content line after it.
    fn mapping(&mut self, indent: usize, col: usize, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        // The entries first, then the map at its exact size: a manifest's many small
        // mappings are held for the whole run, without the room a growing map leaves.
        let mut entries: Vec<(String, Value)> = Vec::new();
        let mut col = col;
        loop {
            let line = self.current();
            let rest = &line[col..];
            let (key, after) = match self.key(rest) {
                Key::Found(k, after) => (k, after),
                Key::None | Key::GiveUp => return None,
            };
            if key == "<<" {
                return None;
            }
            let mark = self.enter_key(&key, col);
            let value = self.value(&rest[after..], indent, true, depth)?;
            self.leave(mark);
            entries.push((key, value));
            match self.after_entry(indent)? {
                None => break,
                // A sequence at the keys' column that is not a key's value.
                Some(true) => return None,
                Some(false) => col = indent,
            }
        }
        let n = entries.len();
        let mut map = Map::with_capacity(n);
        map.extend(entries);
        // A key given twice (the general reader says where).
        (map.len() == n).then_some(Value::Object(map))
    }

    /// A block sequence whose dashes are at column `indent` (the current line is one).
    fn sequence(&mut self, indent: usize, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        let mut items = Vec::new();
        loop {
            let line = self.current();
            let rest = &line[indent + 1..];
            let item = trim_start(rest);
            let col = line.len() - item.len();
            let on_next_lines = item.is_empty() || (item[0] == b'#' && item.len() < rest.len());
            let mark = self.enter_item(items.len(), col, on_next_lines, item)?;
            let value = if on_next_lines {
                self.value(b"", indent, false, depth)?
            } else if is_dash_item(item, 0) {
                return None;
            } else {
                match self.key(item) {
                    Key::Found(..) => self.mapping(col, col, depth + 1)?,
                    Key::None => self.value(item, indent, false, depth)?,
                    Key::GiveUp => return None,
                }
            };
            self.leave(mark);
            items.push(value);
            match self.after_entry(indent)? {
                Some(true) => {}
                // The end, or the next key of a mapping at the dashes' column.
                None | Some(false) => break,
            }
        }
        items.shrink_to_fit();
        Some(Value::Array(items))
    }

    /// Where the collection at column `indent` stands after an entry: `Some(None)` when it
    /// has ended (a line less indented, a document marker, the end), `Some(Some(dash))` when
    /// the next line is at its column (`dash`: a `- ` item), `None` when the next line is
    /// indented deeper (not a shape this reader takes).
    fn after_entry(&self, indent: usize) -> Option<Option<bool>> {
        if self.at_end() {
            return Some(None);
        }
        let line = self.current();
        let ind = indent_of(line);
        if ind < indent || (ind == 0 && is_marker(line)) {
            return Some(None);
        }
        if ind > indent {
            return None;
        }
        Some(Some(is_dash_item(line, ind)))
    }

    /// The collection that starts on the current line at column `indent`.
    fn block(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let line = self.current();
        if is_dash_item(line, indent) {
            self.sequence(indent, depth)
        } else {
            self.mapping(indent, indent, depth)
        }
    }

    /// A `key:` at the start of `s`.
    fn key(&self, s: &'a [u8]) -> Key {
        let (key, end) = match s.first() {
            None => return Key::None,
            Some(b'"') => match double_quoted(s) {
                Some((text, end)) => (text, end),
                None => return Key::GiveUp,
            },
            Some(b'\'') => match single_quoted(s) {
                Some((text, end)) => (text, end),
                None => return Key::GiveUp,
            },
            Some(c) if is_indicator(*c) => return Key::None,
            Some(_) => {
                // The first `: ` (or `:` ending the line) outside a comment.
                let mut i = 0;
                loop {
                    match memchr::memchr2(b':', b'#', &s[i..]) {
                        None => return Key::None,
                        Some(j) => {
                            let at = i + j;
                            if s[at] == b'#' {
                                if s[at - 1] == b' ' {
                                    return Key::None;
                                }
                            } else if matches!(s.get(at + 1), None | Some(b' ')) {
                                // YAML's limit counts from the key's start to its `:`,
                                // spaces before the `:` included.
                                if at > MAX_KEY {
                                    return Key::GiveUp;
                                }
                                let raw = trim_end(&s[..at]);
                                let Some(text) = self.str_of(raw) else {
                                    return Key::GiveUp;
                                };
                                // Only a key that reads as a string.
                                return match resolve_plain(text) {
                                    Some(Value::String(k)) => Key::Found(k, at + 1),
                                    _ => Key::GiveUp,
                                };
                            }
                            i = at + 1;
                        }
                    }
                }
            }
        };
        // A quoted key: its `:` right after the closing quote.
        if s.get(end) == Some(&b':') && matches!(s.get(end + 1), None | Some(b' ')) {
            // The source's length (quotes and escapes), not the text's, is what YAML limits.
            if end > MAX_KEY {
                return Key::GiveUp;
            }
            Key::Found(key, end + 1)
        } else if blank_or_comment(&s[end..], true) {
            Key::None
        } else {
            Key::GiveUp
        }
    }

    /// The value after a mapping's `:` or a sequence's `- ` (`rest`, the rest of the line),
    /// whose parent is at column `parent`. Moves past it, to the next content line.
    fn value(
        &mut self,
        rest: &'a [u8],
        parent: usize,
        in_mapping: bool,
        depth: usize,
    ) -> Option<Value> {
        let r = trim_start(rest);
        if r.is_empty() || r[0] == b'#' {
            if !r.is_empty() && r.len() == rest.len() {
                return None;
            }
            // The value is on the next lines, or there is none.
            self.next_line();
            self.skip_empty();
            if self.at_end() {
                self.count()?;
                return Some(Value::Null);
            }
            let line = self.current();
            let ind = indent_of(line);
            if ind > parent {
                return self.block(ind, depth + 1);
            }
            if in_mapping && ind == parent && is_dash_item(line, ind) && !is_marker(line) {
                return self.sequence(ind, depth + 1);
            }
            self.count()?;
            return Some(Value::Null);
        }
        if r.len() == rest.len() && !rest.is_empty() && in_mapping {
            // `key:value` is not a mapping entry (the key reader never gives this).
            return None;
        }
        self.count()?;
        let value = match r[0] {
            b'|' | b'>' => return self.literal(r, parent),
            b'"' | b'\'' => {
                let (text, end) = if r[0] == b'"' {
                    double_quoted(r)?
                } else {
                    single_quoted(r)?
                };
                if !blank_or_comment(&r[end..], true) || (self.refs && whole_var(&text)) {
                    return None;
                }
                Value::String(text)
            }
            b'[' | b'{' => {
                let close = if r[0] == b'[' { b']' } else { b'}' };
                if r.get(1) != Some(&close) || !blank_or_comment(&r[2..], true) {
                    return None;
                }
                if r[0] == b'[' {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(Map::new())
                }
            }
            c if is_indicator(c) && !(c == b'-' && r.len() > 1 && r[1] != b' ') => return None,
            _ => {
                let text = match find_comment(r) {
                    Some(at) => trim_end(&r[..at]),
                    None => trim_end(r),
                };
                // `a: b: c` and `a: b:` are not scalars.
                if text.ends_with(b":") || memchr::memmem::find(text, b": ").is_some() {
                    return None;
                }
                resolve_plain(self.str_of(text)?)?
            }
        };
        // A scalar on one line: the next content line must not continue it.
        self.next_line();
        self.skip_empty();
        if !self.at_end() && indent_of(self.current()) > parent {
            return None;
        }
        Some(value)
    }

    /// A literal (`|`, `|-`) or folded (`>`, `>-`) block scalar whose header is `header`, inside a parent at
    /// column `parent`.
    fn literal(&mut self, header: &[u8], parent: usize) -> Option<Value> {
        // Folded (`>`): lines at the block's indentation joined by a space; a blank line or a
        // more indented one (which fold otherwise) is left to the general reader.
        let folded = header[0] == b'>';
        let (strip, after) = match header.get(1) {
            Some(b'-') => (true, 2),
            None | Some(b' ') => (false, 1),
            _ => return None,
        };
        if !blank_or_comment(&header[after..], true) {
            return None;
        }
        self.next_line();
        let mut indent: Option<usize> = None;
        let mut out = String::new();
        // Line breaks seen since the last content line (kept only when content follows).
        let mut breaks = 0usize;
        let mut any = false;
        while !self.at_end() {
            let line = self.current();
            let sp = indent_of(line);
            if sp == line.len() {
                // An empty line: at most the indentation's spaces, once it is known.
                match indent {
                    // A blank last line without a line break: the general reader decides
                    // what the scalar keeps (as for a content line below).
                    Some(_) if self.end == self.b.len() && !strip && sp > 0 => return None,
                    Some(k) if sp <= k => {
                        breaks += 1;
                        self.next_line();
                        continue;
                    }
                    _ => return None,
                }
            }
            let k = match indent {
                Some(k) => {
                    if sp < k {
                        break;
                    }
                    if folded && (sp > k || breaks > 0) {
                        return None;
                    }
                    k
                }
                None => {
                    if sp <= parent {
                        // An empty block scalar.
                        return None;
                    }
                    indent = Some(sp);
                    sp
                }
            };
            if any {
                out.push(if folded { ' ' } else { '\n' });
            }
            for _ in 0..breaks {
                out.push('\n');
            }
            breaks = 0;
            out.push_str(self.str_of(&line[k..])?);
            any = true;
            if self.end == self.b.len() && !strip {
                // The last line has no line break: the general reader decides.
                return None;
            }
            self.next_line();
        }
        if !any {
            return None;
        }
        if !strip {
            out.push('\n');
        }
        if self.refs && whole_var(&out) {
            return None;
        }
        self.skip_empty();
        // Held for the whole run (a dashboard's document): no room left over from growing.
        out.shrink_to_fit();
        Some(Value::String(out))
    }
}

#[cfg(test)]
mod tests;
