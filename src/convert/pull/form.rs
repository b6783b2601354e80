//! Values written in the author's form: a one-line flow collection stays one line of flow
//! style, a literal block keeps its header and indentation (so a diff shows only the lines
//! that changed), and every string is written so that any YAML 1.2 reader reads it back the
//! same (DEL, C1 controls, NEL, LS and PS escaped, never raw).

use serde_json::Value;

/// Characters written as escapes, beyond JSON's (which escapes C0 controls): DEL, the C1
/// controls (NEL among them), the line and paragraph separators, the byte order mark and the
/// two non-characters YAML refuses. Raw, YAML 1.1 readers and ruamel.yaml take NEL, LS and
/// PS as line breaks, and YAML 1.2 readers refuse DEL and C1 controls.
pub(super) fn escaped(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// `s` as a YAML double-quoted scalar on one line: JSON's escapes, which every YAML 1.2 reader
/// (and cfgctl's block reader) reads, and `\uXXXX` for the characters of [`escaped`].
pub(super) fn double_quoted(s: &str) -> String {
    let json = Value::from(s).to_string();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{:04X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// A string every YAML reader takes as that string when written plain inside a flow
/// collection: a conservative set (no indicators, nothing a YAML 1.1 or 1.2 reader resolves
/// to a boolean, null or number).
fn plain_in_flow(s: &str) -> bool {
    const WORDS: [&str; 12] = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf", "infinity",
    ];
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && !s.ends_with(' ')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | '@' | ' '))
        && !WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

fn flow_scalar(s: &str) -> String {
    if plain_in_flow(s) {
        s.to_string()
    } else {
        double_quoted(s)
    }
}

/// `value` as a one-line flow collection or scalar; `padded` writes `{ a: 1 }` and `[ x ]`
/// (as the author did) instead of `{a: 1}`.
pub(super) fn flow(value: &Value, padded: bool) -> String {
    let (open, close) = if padded { (" ", " ") } else { ("", "") };
    match value {
        Value::String(s) => flow_scalar(s),
        Value::Object(m) if m.is_empty() => "{}".to_string(),
        Value::Array(a) if a.is_empty() => "[]".to_string(),
        Value::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", flow_scalar(k), flow(v, padded)))
                .collect();
            format!("{{{open}{}{close}}}", members.join(", "))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(|v| flow(v, padded)).collect();
            format!("[{open}{}{close}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// `new` as a one-line flow value written like `text` (the flow value `old` as the author
/// wrote it): the members and items whose value did not change keep their bytes, a changed
/// one keeps its key as written and its quoting where the new value allows, new members go
/// last. `None` when `text` is not a flow collection this can take apart.
pub(super) fn flow_like(text: &str, old: &Value, new: &Value) -> Option<String> {
    let padded = text.as_bytes().get(1) == Some(&b' ');
    let pieces = flow_pieces(text)?;
    let (open, close) = (&text[..1], &text[text.len() - 1..]);
    let (lead, trail) = if padded { (" ", " ") } else { ("", "") };
    let body: Vec<String> = match (old, new) {
        (Value::Object(o), Value::Object(n)) if open == "{" => {
            let mut written = Vec::new();
            for piece in &pieces {
                let (key_text, value_text) = split_member(piece)?;
                written.push((scalar_value(key_text)?, key_text, value_text));
            }
            if written.len() != o.len() || written.iter().any(|(k, _, _)| !o.contains_key(k)) {
                return None;
            }
            let mut out = Vec::new();
            for (k, v) in n {
                match written.iter().find(|(wk, _, _)| wk == k) {
                    Some((_, key_text, value_text)) if o.get(k) == Some(v) => {
                        out.push(format!("{key_text}: {value_text}"))
                    }
                    Some((_, key_text, value_text)) => {
                        let value = value_like(value_text, o.get(k)?, v, padded);
                        out.push(format!("{key_text}: {value}"));
                    }
                    None => out.push(format!("{}: {}", flow_scalar(k), flow(v, padded))),
                }
            }
            out
        }
        (Value::Array(o), Value::Array(n)) if open == "[" && o.len() == pieces.len() => n
            .iter()
            .enumerate()
            .map(|(i, v)| match (pieces.get(i), o.get(i)) {
                (Some(piece), Some(ov)) if ov == v => piece.to_string(),
                (Some(piece), Some(ov)) => value_like(piece, ov, v, padded),
                _ => flow(v, padded),
            })
            .collect(),
        _ => return None,
    };
    if body.is_empty() {
        return Some(format!("{open}{close}"));
    }
    Some(format!("{open}{lead}{}{trail}{close}", body.join(", ")))
}

/// One changed value inside a flow collection, written like `text`.
fn value_like(text: &str, old: &Value, new: &Value, padded: bool) -> String {
    if let Some(like) = flow_like(text, old, new) {
        return like;
    }
    match (new, text.chars().next()) {
        (Value::String(s), Some('\'')) if !s.chars().any(|c| c.is_control() || escaped(c)) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        (Value::String(s), Some('"')) => double_quoted(s),
        _ => flow(new, padded),
    }
}

/// The members (or items) of the one-line flow collection `text`, trimmed; `None` when it is
/// not one flow collection.
fn flow_pieces(text: &str) -> Option<Vec<&str>> {
    if !text.starts_with(['{', '[']) || flow_end(text)? != text.len() {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    let mut pieces = Vec::new();
    let (mut start, mut at) = (0, 0);
    while at < inner.len() {
        let rest = &inner[at..];
        let c = rest.chars().next()?;
        // A quote starts a quoted scalar only where a scalar starts (`it's` is plain).
        let before = inner[start..at].trim_end();
        let starts = before.is_empty() || before.ends_with(':');
        match c {
            '[' | '{' | '"' | '\'' if starts => {
                at += match c {
                    '[' | '{' => flow_end(rest)?,
                    _ => quoted_end(rest)?,
                };
                continue;
            }
            ',' => {
                pieces.push(inner[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
        at += c.len_utf8();
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        pieces.push(last);
    }
    (!pieces.iter().any(|p| p.is_empty())).then_some(pieces)
}

/// The end (exclusive) of the quoted scalar `s` starts with.
fn quoted_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let quote = *b.first()?;
    let mut i = 1;
    while i < b.len() {
        match (b[i], quote) {
            (b'\\', b'"') => i += 1,
            (b'\'', b'\'') if b.get(i + 1) == Some(&b'\'') => i += 1,
            (c, q) if c == q => return Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A flow member `key: value` split at its indicator (outside quotes and brackets).
fn split_member(piece: &str) -> Option<(&str, &str)> {
    let key_len = match piece.chars().next()? {
        '"' | '\'' => quoted_end(piece)?,
        '[' | '{' => return None,
        _ => piece
            .find(": ")
            .or_else(|| piece.strip_suffix(':').map(str::len))?,
    };
    let rest = piece[key_len..].trim_start().strip_prefix(':')?;
    Some((&piece[..key_len], rest.trim_start()))
}

/// The string a key written plain or quoted stands for (`None`: not a string this reads).
fn scalar_value(text: &str) -> Option<String> {
    match text.chars().next()? {
        '"' => serde_json::from_str(text).ok(),
        '\'' => Some(text[1..text.len() - 1].replace("''", "'")),
        _ if plain_in_flow(text) => Some(text.to_string()),
        _ => None,
    }
}

/// The end (exclusive, in bytes) of the flow collection that `s` starts with.
pub(super) fn flow_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i < b.len() {
        match b[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => loop {
                i += 1;
                match *b.get(i)? {
                    b'\\' => i += 1,
                    b'"' => break,
                    _ => {}
                }
            },
            b'\'' => loop {
                i += 1;
                if *b.get(i)? == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        i += 1;
                    } else {
                        break;
                    }
                }
            },
            _ => {}
        }
        i += 1;
    }
    None
}

/// The lines of a literal block (`|`, `|-`) holding `s`, each after `indent`, with the
/// indicator its ending needs; `None` when a literal block cannot hold it as it is (a
/// character to escape, a first line starting with a space, trailing empty lines, a line of
/// spaces only).
pub(super) fn literal(s: &str, indent: &str) -> Option<(&'static str, String)> {
    let (indicator, body) = match s.strip_suffix('\n') {
        Some(b) if !b.ends_with('\n') => ("|", b),
        Some(_) => return None,
        None => ("|-", s),
    };
    if body.is_empty()
        || body.starts_with([' ', '\t'])
        || body
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || escaped(c))
    {
        return None;
    }
    let mut out = String::with_capacity(body.len() + indent.len() * 8);
    for line in body.split('\n') {
        if !line.is_empty() {
            if line.trim_start_matches([' ', '\t']).is_empty() {
                return None;
            }
            out.push_str(indent);
            out.push_str(line);
        }
        out.push('\n');
    }
    Some((indicator, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flow_keeps_plain_what_reads_back_and_quotes_the_rest() {
        assert_eq!(
            flow(
                &json!({"op": "GT", "value": 1.5, "on": "yes", "x": [null, true]}),
                false
            ),
            r#"{op: GT, value: 1.5, "on": "yes", x: [null, true]}"#
        );
        assert_eq!(
            flow(&json!({"a": ["b, c", "d "]}), true),
            r#"{ a: [ "b, c", "d " ] }"#
        );
        assert_eq!(
            double_quoted("a\u{7f}\u{85}\u{9f}\u{2028}\u{2029}\n"),
            r#""a\u007F\u0085\u009F\u2028\u2029\n""#
        );
    }

    #[test]
    fn flow_like_keeps_what_did_not_change_byte_for_byte() {
        let text = "{h: 8, w: 12, x: 12, 'y': 0}";
        let like = |old: Value, new: Value| flow_like(text, &old, &new);
        assert_eq!(
            like(
                json!({"h": 8, "w": 12, "x": 12, "y": 0}),
                json!({"h": 8, "w": 12, "x": 12, "y": 8})
            )
            .as_deref(),
            Some("{h: 8, w: 12, x: 12, 'y': 8}")
        );
        assert_eq!(
            like(
                json!({"h": 8, "w": 12, "x": 12, "y": 0}),
                json!({"h": 8, "x": 1, "y": 0, "on": true})
            )
            .as_deref(),
            Some("{h: 8, x: 1, 'y': 0, \"on\": true}")
        );
        let text = "{ expr: 'rate(x{a=\"b\", c=~\"d\"}[5m])', refId: A, l: [a, 'b'] }";
        let old = json!({"expr": "rate(x{a=\"b\", c=~\"d\"}[5m])", "refId": "A", "l": ["a", "b"]});
        let new = json!({"expr": "it's", "refId": "A", "l": ["a", "c"]});
        assert_eq!(
            flow_like(text, &old, &new).as_deref(),
            Some("{ expr: 'it''s', refId: A, l: [a, 'c'] }")
        );
        // Not one flow collection, or keys it cannot read: the caller writes it anew.
        assert_eq!(
            flow_like("{a: 1} # c", &json!({"a": 1}), &json!({"a": 2})),
            None
        );
        assert_eq!(
            flow_like("{? a : 1}", &json!({"a": 1}), &json!({"a": 2})),
            None
        );
    }

    #[test]
    fn literal_blocks_by_their_ending() {
        assert_eq!(
            literal("{\n  \"a\": 1\n}\n", "    "),
            Some(("|", "    {\n      \"a\": 1\n    }\n".to_string()))
        );
        assert_eq!(
            literal("x\n\ny", "  "),
            Some(("|-", "  x\n\n  y\n".to_string()))
        );
        assert_eq!(literal("x\n\n", "  "), None);
        assert_eq!(literal(" x\n", "  "), None);
        assert_eq!(literal("x\u{85}\n", "  "), None);
    }
}
