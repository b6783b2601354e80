//! Minimal edits of a JSON document: only the members whose value changed are rewritten, in
//! the style around them (a value written on one line stays on one line, a multi-line one is
//! pretty-printed at its indentation). Anything it cannot express returns `None` and the
//! caller rewrites the whole document; the caller also reads the result back.

use std::ops::Range;

use serde_json::Value;

use super::changes::{changes_appending, Change};

/// A JSON value's bytes and, for an object, its members (key bytes and value).
#[derive(Debug)]
struct Node {
    range: Range<usize>,
    members: Vec<(String, Range<usize>, Node)>,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Parses the value at `i` (the text is known to be valid JSON).
fn node(text: &str, i: usize) -> Option<Node> {
    let b = text.as_bytes();
    match *b.get(i)? {
        b'{' => {
            let mut members = Vec::new();
            let mut at = skip_ws(b, i + 1);
            if b.get(at) == Some(&b'}') {
                return Some(Node {
                    range: i..at + 1,
                    members,
                });
            }
            loop {
                let key_end = string_end(b, at)?;
                let key: String = serde_json::from_str(&text[at..key_end]).ok()?;
                let colon = skip_ws(b, key_end);
                let value = node(text, skip_ws(b, colon + 1))?;
                let next = skip_ws(b, value.range.end);
                members.push((key, at..key_end, value));
                match b.get(next)? {
                    b',' => at = skip_ws(b, next + 1),
                    b'}' => {
                        return Some(Node {
                            range: i..next + 1,
                            members,
                        })
                    }
                    _ => return None,
                }
            }
        }
        b'[' => {
            // Items are members named by their index (no key: they are never removed or
            // inserted one by one, only changed inside).
            let mut members = Vec::new();
            let mut at = skip_ws(b, i + 1);
            if b.get(at) == Some(&b']') {
                return Some(Node {
                    range: i..at + 1,
                    members,
                });
            }
            loop {
                let value = node(text, at)?;
                let next = skip_ws(b, value.range.end);
                let key = value.range.start..value.range.start;
                members.push((members.len().to_string(), key, value));
                match b.get(next)? {
                    b',' => at = skip_ws(b, next + 1),
                    b']' => {
                        return Some(Node {
                            range: i..next + 1,
                            members,
                        })
                    }
                    _ => return None,
                }
            }
        }
        _ => Some(Node {
            range: i..super::value_end(b, i)?,
            members: vec![],
        }),
    }
}

fn find<'a>(mut n: &'a Node, path: &[String]) -> Option<&'a Node> {
    for seg in path {
        n = &n.members.iter().find(|(k, _, _)| k == seg)?.2;
    }
    Some(n)
}

/// The leading whitespace of the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start().len()]
}

/// One line, with a space after `:` and `,` as people write it.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// `value` as JSON: on one line, or pretty with `unit` steps, later lines after `base`.
fn render(value: &Value, multiline: bool, base: &str, unit: &str, newline: &str) -> Option<String> {
    let mut buf = Vec::new();
    if multiline {
        let f = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        serde::Serialize::serialize(
            value,
            &mut serde_json::Serializer::with_formatter(&mut buf, f),
        )
        .ok()?;
    } else {
        serde::Serialize::serialize(
            value,
            &mut serde_json::Serializer::with_formatter(&mut buf, Spaced),
        )
        .ok()?;
    }
    let text = String::from_utf8(buf).ok()?;
    Some(
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.to_string()
                } else {
                    format!("{base}{l}")
                }
            })
            .collect::<Vec<_>>()
            .join(newline),
    )
}

/// `items` written after the last item of `list` as that item is written (on one line, or
/// pretty at its indentation), each on a line of its own when the list spans lines.
fn appended(
    text: &str,
    list: &Node,
    items: &[Value],
    unit: &str,
    newline: &str,
) -> Option<(Range<usize>, String)> {
    let (_, _, last) = list.members.last()?;
    let base = line_indent(text, last.range.start);
    let sep = match text[list.range.clone()].contains('\n') {
        true => format!(",{newline}{base}"),
        false => ", ".to_string(),
    };
    let multiline = text[last.range.clone()].contains('\n');
    let mut added = String::new();
    for item in items {
        added.push_str(&sep);
        added.push_str(&render(item, multiline, base, unit, newline)?);
    }
    let at = last.range.end;
    Some((at..at, added))
}

/// The edits (byte range, replacement) of the document at `start`, last first.
pub(super) fn edits(
    text: &str,
    start: usize,
    written: &Value,
    wanted: &Value,
    unit: &str,
) -> Option<Vec<(Range<usize>, String)>> {
    let (Value::Object(w), Value::Object(v)) = (written, wanted) else {
        return None;
    };
    let root = node(text, start)?;
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut list = Vec::new();
    changes_appending(w, v, &mut list);
    let mut out: Vec<(Range<usize>, String, usize)> = Vec::new();
    for (n, change) in list.into_iter().enumerate() {
        match change {
            Change::Replace { path, value } => {
                let node = find(&root, &path)?;
                let old = &text[node.range.clone()];
                let base = line_indent(text, node.range.start);
                let new = render(&value, old.contains('\n'), base, unit, newline)?;
                out.push((node.range.clone(), new, n));
            }
            Change::Remove { path } => {
                let (last, parent_path) = path.split_last()?;
                let parent = find(&root, parent_path)?;
                let i = parent.members.iter().position(|(k, _, _)| k == last)?;
                let range = match (parent.members.get(i + 1), i.checked_sub(1)) {
                    // Up to the next member's key, the comma and space with it.
                    (Some(next), _) => parent.members[i].1.start..next.1.start,
                    // The last of several: from the end of the one before.
                    (None, Some(before)) => {
                        parent.members[before].2.range.end..parent.members[i].2.range.end
                    }
                    (None, None) => return None,
                };
                out.push((range, String::new(), n));
            }
            Change::Insert { parent, key, value } => {
                let parent = find(&root, &parent)?;
                let (_, key_range, last) = parent.members.last()?;
                let multiline = text[parent.range.clone()].contains('\n');
                let base = line_indent(text, key_range.start);
                let sep = if multiline {
                    format!(",{newline}{base}")
                } else {
                    ", ".to_string()
                };
                let key = serde_json::to_string(&key).ok()?;
                let value = render(&value, multiline, base, unit, newline)?;
                let at = last.range.end;
                out.push((at..at, format!("{sep}{key}: {value}"), n));
            }
            Change::Append { path, items } => {
                let (range, added) = appended(text, find(&root, &path)?, &items, unit, newline)?;
                out.push((range, added, n));
            }
        }
    }
    out.sort_by_key(|e| std::cmp::Reverse((e.0.start, e.2)));
    for pair in out.windows(2) {
        if pair[1].0.end > pair[0].0.start {
            return None;
        }
    }
    Some(out.into_iter().map(|(r, t, _)| (r, t)).collect())
}

/// The JSON text `text` (holding `written`) changed to hold `wanted` by the same minimal
/// member edits as a JSON file gets: an embedded document written as a JSON string keeps the
/// author's layout (one line stays one line, a pretty one keeps its indentation) and changes
/// only where its values do.
pub(super) fn edited_text(text: &str, written: &Value, wanted: &Value) -> Option<String> {
    let start = text.len() - text.trim_start().len();
    let edits = edits(
        text,
        start,
        written,
        wanted,
        super::json_indent_unit(text, start),
    )?;
    let mut out = text.to_string();
    for (range, replacement) in edits {
        out.replace_range(range, &replacement);
    }
    (serde_json::from_str::<Value>(&out).ok()? == *wanted).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(text: &str, wanted: Value) -> String {
        let written: Value = serde_json::from_str(text).unwrap();
        let mut out = text.to_string();
        for (r, t) in edits(text, 0, &written, &wanted, "  ").unwrap() {
            out.replace_range(r, &t);
        }
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            wanted,
            "{out}"
        );
        out
    }

    #[test]
    fn only_the_changed_members_move() {
        let text = "{\n  \"spec\": {\n    \"slug\": \"m\",\n    \"when\": {\"op\": \"GT\", \"value\": 1},\n    \"gone\": 1,\n    \"list\": [\n      1\n    ]\n  }\n}";
        let out = apply(
            text,
            json!({"spec": {"slug": "m", "when": {"op": "LT", "value": 1}, "list": [1, 2], "new": {"a": 1}}}),
        );
        assert_eq!(
            out,
            "{\n  \"spec\": {\n    \"slug\": \"m\",\n    \"when\": {\"op\": \"LT\", \"value\": 1},\n    \"list\": [\n      1,\n      2\n    ],\n    \"new\": {\n      \"a\": 1\n    }\n  }\n}"
        );
    }

    /// A panel added at the end of a list goes after the last one, written as its siblings
    /// are (one line each, or pretty at their indentation); the others keep their bytes, also
    /// when one of them changed in place (red team D16: the whole list was laid out anew).
    #[test]
    fn items_added_at_the_end_of_a_list_are_written_as_their_siblings() {
        let text = "{\n  \"panels\": [\n    {\"id\": 1, \"title\": \"a\"},\n    {\"id\": 2, \"title\": \"b\"}\n  ]\n}";
        let out = apply(
            text,
            json!({"panels": [{"id": 1, "title": "A"}, {"id": 2, "title": "b"}, {"id": 3, "title": "c"}]}),
        );
        assert_eq!(
            out,
            "{\n  \"panels\": [\n    {\"id\": 1, \"title\": \"A\"},\n    {\"id\": 2, \"title\": \"b\"},\n    {\"id\": 3, \"title\": \"c\"}\n  ]\n}"
        );
        let pretty = "{\n  \"panels\": [\n    {\n      \"id\": 1\n    }\n  ]\n}";
        let out = apply(pretty, json!({"panels": [{"id": 1}, {"id": 2}]}));
        assert_eq!(
            out,
            "{\n  \"panels\": [\n    {\n      \"id\": 1\n    },\n    {\n      \"id\": 2\n    }\n  ]\n}"
        );
        let inline = "{\"tags\": [\"a\"], \"n\": 1}";
        assert_eq!(
            apply(inline, json!({"tags": ["a", "b", "c"], "n": 1})),
            "{\"tags\": [\"a\", \"b\", \"c\"], \"n\": 1}"
        );
    }

    #[test]
    fn one_line_objects_stay_on_one_line() {
        let out = apply(
            "{\"a\": {\"b\": 1, \"c\": 2}}",
            json!({"a": {"c": 3, "d": [1]}}),
        );
        assert_eq!(out, "{\"a\": {\"c\": 3, \"d\": [1]}}");
    }
}
