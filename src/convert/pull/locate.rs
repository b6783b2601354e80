//! Where each document of a manifest file starts and ends (YAML and JSON), and rendering a
//! rewritten document in the file's own form.

use super::*;

pub(super) fn locate(file: &Path, text: &str, json: bool) -> Result<Vec<Located>, PullError> {
    let unreadable = |message: String| PullError::Unreadable {
        file: file.to_path_buf(),
        message,
    };
    if json {
        locate_json(text).ok_or_else(|| unreadable("not one JSON object or array".into()))
    } else {
        locate_yaml(text).map_err(|e| unreadable(format!("{}: {}", e.pos, e.message)))
    }
}

/// One line of a text: byte range with its line break, and the text without it.
pub(super) struct Line<'a> {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) text: &'a str,
}

impl Line<'_> {
    pub(super) fn raw_ends_with_newline(&self) -> bool {
        self.end > self.start + self.text.len()
    }
}

pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for raw in text.split_inclusive('\n') {
        let end = start + raw.len();
        out.push(Line {
            start,
            end,
            text: raw.trim_end_matches(['\n', '\r']),
        });
        start = end;
    }
    out
}

/// A `---` or `...` line: a document boundary (at column 0, never inside a document).
pub(super) fn is_marker(line: &str) -> bool {
    ["---", "..."].iter().any(|m| {
        line.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

pub(super) fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

pub(super) fn locate_yaml(text: &str) -> Result<Vec<Located>, crate::util::yaml::SyntaxError> {
    let docs = crate::util::yaml::parse_documents(text)?;
    let lines = lines(text);
    let mut out = Vec::new();
    for doc in docs {
        let Some(at) = usize::try_from(doc.start.line)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .filter(|&l| l < lines.len())
        else {
            continue;
        };
        let inline_marker = is_marker(lines[at].text);
        let (first, last) = if inline_marker {
            let end = (at + 1..lines.len())
                .find(|&i| is_marker(lines[i].text))
                .unwrap_or(lines.len());
            let last = (at..end)
                .rev()
                .find(|&i| !trailing_outside(lines[i].text))
                .unwrap_or(at);
            (at, last)
        } else {
            let begin = (0..at)
                .rev()
                .find(|&i| is_marker(lines[i].text))
                .map_or(0, |i| i + 1);
            let end = (at + 1..lines.len())
                .find(|&i| is_marker(lines[i].text))
                .unwrap_or(lines.len());
            // Comments and blank lines before the document's first node and after its last
            // line are outside it (indented `#` lines at the end may be block-scalar text).
            let first = (begin..=at)
                .find(|&i| !is_blank_or_comment(lines[i].text))
                .unwrap_or(at);
            let last = (at..end)
                .rev()
                .find(|&i| !trailing_outside(lines[i].text))
                .unwrap_or(at);
            (first, last)
        };
        out.push(Located {
            address: address_of(&doc.value),
            range: lines[first].start..lines[last].end,
            value: doc.value,
            inline_marker,
            spans: Some(doc.spans),
            last_line: last,
        });
    }
    Ok(out)
}

pub(super) fn trailing_outside(line: &str) -> bool {
    line.trim().is_empty() || line.starts_with('#')
}

pub(super) fn render_yaml(text: &str, doc: &Located, envelope: &Value) -> Result<String, String> {
    let mut out = serde_saphyr::to_string(envelope).map_err(|e| e.to_string())?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if doc.inline_marker {
        out.insert_str(0, "---\n");
    }
    let original = &text[doc.range.clone()];
    if !original.ends_with('\n') {
        out.pop();
    }
    if original.contains("\r\n") {
        out = out.replace('\n', "\r\n");
    }
    Ok(out)
}

/// Documents of a JSON file: the object, or each object of the array.
pub(super) fn locate_json(text: &str) -> Option<Vec<Located>> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(body).ok()?;
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, text.len() - body.len());
    let one = |range: Range<usize>, value: Value| Located {
        address: address_of(&value),
        range,
        value,
        inline_marker: false,
        spans: None,
        last_line: 0,
    };
    match value {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            let mut at = start + 1;
            for item in items {
                at = skip_ws(bytes, at);
                let end = value_end(bytes, at)?;
                out.push(one(at..end, item));
                at = skip_ws(bytes, end);
                if bytes.get(at) == Some(&b',') {
                    at += 1;
                }
            }
            Some(out)
        }
        other => {
            let end = value_end(bytes, start)?;
            Some(vec![one(start..end, other)])
        }
    }
}

pub(super) fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the JSON value starting at `at`, in a text serde_json accepted.
pub(super) fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                // A scalar ends where its container does.
                b'}' | b']' if depth == 0 => return (i > at).then_some(i),
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                b',' | b' ' | b'\t' | b'\r' | b'\n' if depth == 0 => return Some(i),
                _ => {}
            }
        }
        i += 1;
    }
    (depth == 0 && !in_string && i > at).then_some(i)
}

/// The indentation before `start` when only whitespace precedes it on its line.
pub(super) fn json_base(text: &str, start: usize) -> &str {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let prefix = &text[line_start..start];
    if prefix.chars().all(|c| c == ' ' || c == '\t') {
        prefix
    } else {
        ""
    }
}

/// The indentation step of the JSON document at `start`: how much deeper than the
/// document's own line the first indented line below it is.
pub(super) fn json_indent_unit(text: &str, start: usize) -> &str {
    let base = json_base(text, start);
    text[start..]
        .lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|ws| ws.len() > base.len() && ws.starts_with(base))
        .map_or("  ", |ws| &ws[base.len()..])
}

/// The envelope as pretty JSON, indented like the text around `start`.
pub(super) fn render_json(text: &str, start: usize, envelope: &Value) -> String {
    let base = json_base(text, start);
    let unit = json_indent_unit(text, start);
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    let pretty = match serde::Serialize::serialize(envelope, &mut ser) {
        Ok(()) => String::from_utf8(buf).unwrap_or_default(),
        Err(_) => envelope.to_string(),
    };
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    pretty
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                l.to_string()
            } else {
                format!("{base}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join(newline)
}

impl PullInput<'_> {
    /// The text of a manifest file as the load read it.
    pub(super) fn text_of(&self, file: &Path) -> Result<&String, PullError> {
        self.texts.get(file).ok_or_else(|| PullError::Unreadable {
            file: file.to_path_buf(),
            message: "not read".into(),
        })
    }
}
