//! Minimal edits of a YAML document: only the mapping entries whose value changed are
//! rewritten (a changed scalar is one line in the diff), new entries go after the last entry
//! of their mapping, removed ones are cut. Works on block-style mappings; anything else
//! (flow style, a key after `- ` that would have to go) returns `None` and the caller
//! rewrites the whole document. The caller reads the result back and compares it with what
//! was meant, so a wrong guess here can only cost the minimal diff, never correctness.

use std::ops::Range;

use serde_json::{Map, Value};

use super::changes::{changes, Change};

use super::form::{self, double_quoted, escaped};
use super::Line;
use crate::util::jsonpath::escape_pointer;
use crate::util::yaml::{Pos, Spans};

fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|s| format!("/{}", escape_pointer(s)))
        .collect()
}

/// The byte offset of a 1-based line and (character) column.
fn offset(lines: &[Line], pos: Pos) -> Option<usize> {
    let line = lines.get(usize::try_from(pos.line).ok()?.checked_sub(1)?)?;
    let col = usize::try_from(pos.column).ok()?.checked_sub(1)?;
    let within = line
        .text
        .char_indices()
        .nth(col)
        .map_or(line.text.len(), |(i, _)| i);
    Some(line.start + within)
}

fn line_index(pos: Pos) -> usize {
    usize::try_from(pos.line)
        .unwrap_or(usize::MAX)
        .saturating_sub(1)
}

fn start_of(span: &crate::util::yaml::NodeSpan) -> Pos {
    span.key.unwrap_or(span.value)
}

/// The entry at `pointer`: its key's position and the index of its last line.
fn entry(lines: &[Line], spans: &Spans, pointer: &str, last_line: usize) -> Option<(Pos, usize)> {
    let key = spans.get(pointer)?.key?;
    let inside = format!("{pointer}/");
    let next = spans
        .iter()
        .filter(|(p, _)| p.as_str() != pointer && !p.starts_with(&inside))
        .map(|(_, s)| start_of(s))
        .filter(|s| *s > key)
        .min();
    let mut end = match next {
        // Something else on the key's line: flow style, not for line edits.
        Some(n) if n.line == key.line => return None,
        Some(n) => line_index(n).checked_sub(1)?,
        None => last_line,
    };
    let key_indent = usize::try_from(key.column).ok()?.saturating_sub(1);
    // Blank lines and comments at the entry's indentation or less before the next node
    // belong to what follows (deeper `#` lines may be block-scalar text).
    while end > line_index(key) {
        let t = lines.get(end)?.text;
        let indent = t.len() - t.trim_start().len();
        if t.trim().is_empty() || (t.trim_start().starts_with('#') && indent <= key_indent) {
            end -= 1;
        } else {
            break;
        }
    }
    Some((key, end))
}

/// What stands before the key on its line: only spaces (`Some(false)`), spaces and `- `
/// sequence dashes (`Some(true)`), or anything else (`None`).
fn key_prefix(lines: &[Line], key: Pos) -> Option<bool> {
    let line = lines.get(line_index(key))?;
    let col = usize::try_from(key.column).ok()?.checked_sub(1)?;
    let before: String = line.text.chars().take(col).collect();
    if before.chars().all(|c| c == ' ') {
        Some(false)
    } else if before.chars().all(|c| c == ' ' || c == '-') && before.ends_with(' ') {
        Some(true)
    } else {
        None
    }
}

/// `{key: value}` as block YAML, every line after the first indented by `indent` spaces
/// (and the first too when `first` is set).
fn entry_text(
    key: &str,
    value: &Value,
    indent: usize,
    first: bool,
    compact: bool,
) -> Option<String> {
    let mut one = Map::new();
    one.insert(key.to_string(), value.clone());
    let options = serde_saphyr::ser_options! { compact_list_indent: compact };
    let text = serde_saphyr::to_string_with_options(&Value::Object(one), options).ok()?;
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if (i > 0 || first) && !line.is_empty() {
            out.push_str(&pad);
        }
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

/// A one-line scalar replaced by a scalar in the same quoting style, the rest of the line (a
/// comment after it) kept: `duration: "6h"  # why` becomes `duration: "24h"  # why`.
fn scalar_in_place(
    lines: &[Line],
    spans: &Spans,
    pointer: &str,
    value: &Value,
) -> Option<(Range<usize>, String)> {
    let span = spans.get(pointer)?;
    let line = lines.get(line_index(span.value))?;
    let start = offset(lines, span.value)?;
    match span.key {
        Some(k) if k.line == span.value.line => {}
        // A list item alone after its dashes (`- x`, `- - x`).
        None if line.text[..start - line.start]
            .split_whitespace()
            .all(|d| d == "-")
            && line.text[..start - line.start].ends_with(' ') => {}
        _ => return None,
    }
    let old = &line.text[start - line.start..];
    let old_len = match old.chars().next()? {
        '"' => {
            let b = old.as_bytes();
            let mut i = 1;
            loop {
                match *b.get(i)? {
                    b'\\' => i += 2,
                    b'"' => break i + 1,
                    _ => i += 1,
                }
            }
        }
        '\'' => {
            let b = old.as_bytes();
            let mut i = 1;
            loop {
                match (*b.get(i)?, b.get(i + 1)) {
                    (b'\'', Some(b'\'')) => i += 2,
                    (b'\'', _) => break i + 1,
                    _ => i += 1,
                }
            }
        }
        '|' | '>' | '&' | '*' | '!' | '#' | '[' | '{' => return None,
        _ => old.find(" #").unwrap_or(old.len()),
    };
    let plain = old[..old_len].trim_end();
    let text = match (value, old.chars().next()?) {
        (Value::String(s), '\'') if !s.chars().any(|c| c.is_control() || escaped(c)) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        (Value::String(s), first)
            if !s.contains('\n')
                && (first == '"' || s.chars().any(|c| c.is_control() || escaped(c))) =>
        {
            double_quoted(s)
        }
        (Value::String(_) | Value::Number(_) | Value::Bool(_), _) => {
            let t = serde_saphyr::to_string(value).ok()?;
            let t = t.strip_suffix('\n').unwrap_or(&t);
            let quoted = t.starts_with(['"', '\'']) || t.contains('\n');
            match value {
                // A plain scalar that must now be quoted takes its neighbours' quotes.
                Value::String(s)
                    if quoted && neighbours_quote(lines, spans, pointer) == Some('\'') =>
                {
                    if s.chars().any(|c| c.is_control() || escaped(c)) {
                        double_quoted(s)
                    } else {
                        format!("'{}'", s.replace('\'', "''"))
                    }
                }
                // A long string the serialiser would fold stays on its line, quoted.
                Value::String(s) if t.contains('\n') && !s.contains('\n') => double_quoted(s),
                _ if t.contains('\n') => return None,
                _ => t.to_string(),
            }
        }
        _ => return None,
    };
    Some((start..start + plain.len(), text))
}

/// The quote the other values of `pointer`'s mapping or list are written with, when they
/// agree on one (`'` or `"`); `None` when none is quoted or they differ.
fn neighbours_quote(lines: &[Line], spans: &Spans, pointer: &str) -> Option<char> {
    let parent = &pointer[..pointer.rfind('/')?];
    let inside = format!("{parent}/");
    let mut quote = None;
    for (p, _) in spans.iter() {
        let sibling = p.strip_prefix(&inside).is_some_and(|r| !r.contains('/'));
        if !sibling || p.as_str() == pointer {
            continue;
        }
        match (value_char(lines, spans, p), quote) {
            (Some(c @ ('\'' | '"')), None) => quote = Some(c),
            (Some(c @ ('\'' | '"')), Some(q)) if c != q => return None,
            _ => {}
        }
    }
    quote
}

/// The first character of the value at `pointer` as written.
fn value_char(lines: &[Line], spans: &Spans, pointer: &str) -> Option<char> {
    let span = spans.get(pointer)?;
    let line = lines.get(line_index(span.value))?;
    let at = offset(lines, span.value)?;
    line.text.get(at - line.start..)?.chars().next()
}

/// Changes inside a flow collection (`spec: {a: 1}`) become one replacement of the outermost
/// one, which [`flow_in_place`] writes on its line again.
fn lift_flow(
    lines: &[Line],
    spans: &Spans,
    wanted: &Value,
    list: Vec<Change>,
) -> Option<Vec<Change>> {
    let mut out: Vec<Change> = Vec::new();
    for change in list {
        let path = match &change {
            Change::Replace { path, .. }
            | Change::Remove { path }
            | Change::Append { path, .. } => path.clone(),
            Change::Insert { parent, key, .. } => {
                let mut p = parent.clone();
                p.push(key.clone());
                p
            }
        };
        // Only the ancestors matter: the member's own value may be flow.
        let flow_at = (1..path.len()).find(|&n| {
            matches!(
                value_char(lines, spans, &pointer(&path[..n])),
                Some('[' | '{')
            )
        });
        let Some(n) = flow_at else {
            out.push(change);
            continue;
        };
        let prefix = path[..n].to_vec();
        let lifted = Change::Replace {
            value: wanted.pointer(&pointer(&prefix))?.clone(),
            path: prefix,
        };
        if !out.contains(&lifted) {
            out.push(lifted);
        }
    }
    Some(out)
}

/// A one-line flow collection replaced by the new value in flow style, the rest of the line
/// (a comment) kept.
fn flow_in_place(
    lines: &[Line],
    spans: &Spans,
    (pointer, written): (&str, Option<&Value>),
    value: &Value,
) -> Option<(Range<usize>, String)> {
    if !matches!(value, Value::Object(_) | Value::Array(_)) {
        return None;
    }
    let span = spans.get(pointer)?;
    let line = lines.get(line_index(span.value))?;
    let start = offset(lines, span.value)?;
    let old = line.text.get(start - line.start..)?;
    if !old.starts_with(['[', '{']) {
        return None;
    }
    let len = form::flow_end(old)?;
    let padded = old.as_bytes().get(1) == Some(&b' ');
    let like = written.and_then(|w| form::flow_like(&old[..len], w, value));
    Some((
        start..start + len,
        like.unwrap_or_else(|| form::flow(value, padded)),
    ))
}

/// A list item written as a one-line flow collection after its dashes (`- [a, b]`).
fn item_flow_in_place(
    lines: &[Line],
    spans: &Spans,
    (pointer, written): (&str, &Value),
    value: &Value,
) -> Option<(Range<usize>, String)> {
    let span = spans.get(pointer)?;
    let line = lines.get(line_index(span.value))?;
    let before = &line.text[..offset(lines, span.value)? - line.start];
    if !before.split_whitespace().all(|d| d == "-") || !before.ends_with(' ') {
        return None;
    }
    flow_in_place(lines, spans, (pointer, written.pointer(pointer)), value)
}

/// A block sequence of one-line flow items (`- {op: GT, value: 1}`) written again item by
/// item in that style; an item that did not change keeps its line's bytes.
fn flow_items_in_place(
    lines: &[Line],
    spans: &Spans,
    (pointer, key_line, end): (&str, usize, usize),
    written: Option<&Value>,
    value: &Value,
) -> Option<(Range<usize>, String)> {
    let (Value::Array(items), Some(Value::Array(old))) = (value, written) else {
        return None;
    };
    let mut old_lines: Vec<&str> = Vec::new();
    while let Some(span) = spans.get(&format!("{pointer}/{}", old_lines.len())) {
        let line = lines.get(line_index(span.value))?;
        let at = offset(lines, span.value)? - line.start;
        let item = line.text.get(at..)?;
        // Each item alone on its line after `- `, one after the other.
        if line_index(span.value) != key_line + 1 + old_lines.len()
            || line.text[..at].trim() != "-"
            || !item.starts_with(['{', '['])
            || form::flow_end(item)? != item.trim_end().len()
        {
            return None;
        }
        old_lines.push(line.text);
    }
    if old_lines.is_empty() || key_line + old_lines.len() != end || items.is_empty() {
        return None;
    }
    let mut text = String::new();
    for (i, item) in items.iter().enumerate() {
        let like = old_lines.get(i).copied().unwrap_or(old_lines[0]);
        if old.get(i) == Some(item) {
            text.push_str(like);
        } else {
            // The dash, the spaces after it, and the padding inside the braces as written.
            let dash = like.find('-')?;
            let flow_at = like.len() - like[dash + 1..].trim_start().len();
            let padded = like.as_bytes().get(flow_at + 1) == Some(&b' ');
            text.push_str(&like[..flow_at]);
            let same_line = old.get(i).and_then(|o| {
                let written = old_lines.get(i)?;
                let at = written.len() - written[written.find('-')? + 1..].trim_start().len();
                form::flow_like(written[at..].trim_end(), o, item)
            });
            text.push_str(&same_line.unwrap_or_else(|| form::flow(item, padded)));
        }
        text.push('\n');
    }
    let (from, to) = (lines.get(key_line + 1)?, lines.get(end)?);
    if !to.raw_ends_with_newline() {
        text.pop();
    }
    Some((from.start..to.end, text))
}

/// A literal block (`key: |`) written again with its header's comment and its indentation:
/// unchanged lines keep their bytes, so a diff shows only the lines that changed.
fn literal_in_place(
    lines: &[Line],
    kpos: Pos,
    end: usize,
    value: &Value,
) -> Option<Vec<(Range<usize>, String)>> {
    let Value::String(s) = value else {
        return None;
    };
    let key_line = line_index(kpos);
    let line = lines.get(key_line)?;
    let from_key = offset(lines, kpos)? - line.start;
    // The header: the first `:` after the key followed by spaces and `|`.
    let text = line.text;
    let header = text[from_key..].match_indices(':').find_map(|(i, _)| {
        let rest = &text[from_key + i + 1..];
        let h = rest.trim_start_matches(' ');
        (h.starts_with('|') && h.len() < rest.len()).then(|| text.len() - h.len())
    })?;
    let h = &text[header..];
    let indicator_len = match h.as_bytes().get(1) {
        Some(b'-' | b'+') => 2,
        None | Some(b' ') => 1,
        _ => return None,
    };
    let content = lines.get(key_line + 1..=end)?;
    let indent = content.iter().find(|l| !l.text.trim().is_empty())?.text;
    let indent = &indent[..indent.len() - indent.trim_start_matches(' ').len()];
    if indent.len() <= from_key || !lines.get(end)?.raw_ends_with_newline() {
        return None;
    }
    let (indicator, body) = form::literal(s, indent)?;
    let at = line.start + header;
    Some(vec![
        (at..at + indicator_len, indicator.to_string()),
        (content.first()?.start..content.last()?.end, body),
    ])
}

/// The edits (byte range, replacement) that turn the written document into the wanted one,
/// in the order to apply them (last in the file first); `None` when line edits cannot do it.
pub(super) fn edits(
    lines: &[Line],
    spans: &Spans,
    last_line: usize,
    written: &Value,
    wanted: &Value,
    compact: bool,
) -> Option<Vec<(Range<usize>, String)>> {
    let (Value::Object(w), Value::Object(v)) = (written, wanted) else {
        return None;
    };
    let mut list = Vec::new();
    changes(w, v, &[], &mut list);
    let list = lift_flow(lines, spans, wanted, list)?;
    let mut out: Vec<(Range<usize>, String, usize)> = Vec::new();
    for (n, change) in list.into_iter().enumerate() {
        match change {
            Change::Replace { path, value } if spans.get(&pointer(&path))?.key.is_none() => {
                // A list item: in place on its line, or not at all.
                let at = pointer(&path);
                let edit = scalar_in_place(lines, spans, &at, &value)
                    .or_else(|| item_flow_in_place(lines, spans, (&at, written), &value))?;
                out.push((edit.0, edit.1, n));
            }
            Change::Replace { path, value } => {
                let (kpos, end) = entry(lines, spans, &pointer(&path), last_line)?;
                key_prefix(lines, kpos)?;
                let indent = usize::try_from(kpos.column).ok()?.checked_sub(1)?;
                let start = offset(lines, kpos)?;
                let key = path.last()?;
                let at = pointer(&path);
                let in_place = if end == line_index(kpos) {
                    scalar_in_place(lines, spans, &at, &value)
                        .or_else(|| {
                            flow_in_place(lines, spans, (&at, written.pointer(&at)), &value)
                        })
                        .map(|e| vec![e])
                } else {
                    literal_in_place(lines, kpos, end, &value).or_else(|| {
                        let old = written.pointer(&at);
                        flow_items_in_place(lines, spans, (&at, line_index(kpos), end), old, &value)
                            .map(|e| vec![e])
                    })
                };
                if let Some(edits) = in_place {
                    out.extend(edits.into_iter().map(|(r, t)| (r, t, n)));
                    continue;
                }
                let mut text = entry_text(key, &value, indent, false, compact)?;
                let end_line = lines.get(end)?;
                if !end_line.raw_ends_with_newline() {
                    text.pop();
                }
                out.push((start..end_line.end, text, n));
            }
            // `changes` never gives one: a YAML list added to is replaced whole.
            Change::Append { .. } => return None,
            Change::Remove { path } => {
                let (kpos, end) = entry(lines, spans, &pointer(&path), last_line)?;
                if key_prefix(lines, kpos)? {
                    return None;
                }
                let start = lines.get(line_index(kpos))?.start;
                out.push((start..lines.get(end)?.end, String::new(), n));
            }
            Change::Insert { parent, key, value } => {
                let inside = format!("{}/", pointer(&parent));
                // The parent's last entry in the file.
                let last = spans
                    .iter()
                    .filter(|(p, s)| {
                        p.strip_prefix(&inside)
                            .is_some_and(|rest| !rest.contains('/'))
                            && s.key.is_some()
                    })
                    .max_by_key(|(_, s)| start_of(s))
                    .map(|(p, _)| p.clone())?;
                let (kpos, end) = entry(lines, spans, &last, last_line)?;
                key_prefix(lines, kpos)?;
                let indent = usize::try_from(kpos.column).ok()?.checked_sub(1)?;
                let end_line = lines.get(end)?;
                let mut text = entry_text(&key, &value, indent, true, compact)?;
                if !end_line.raw_ends_with_newline() {
                    text.insert(0, '\n');
                    text.pop();
                }
                out.push((end_line.end..end_line.end, text, n));
            }
        }
    }
    // Ranges may touch but not overlap; apply from the end, and at one offset the later
    // insert first so the earlier one lands before it.
    out.sort_by_key(|e| std::cmp::Reverse((e.0.start, e.2)));
    for pair in out.windows(2) {
        if pair[1].0.end > pair[0].0.start {
            return None;
        }
    }
    Some(out.into_iter().map(|(r, t, _)| (r, t)).collect())
}

#[cfg(test)]
mod tests;
