//! One-line scalars of the block reader: plain ones resolved as the general reader resolves
//! them (or given up on), quoted ones with JSON's escapes.

use serde_json::{Number, Value};

/// Characters that cannot start a plain scalar (or that this reader leaves alone there).
pub(super) fn is_indicator(c: u8) -> bool {
    matches!(
        c,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

/// Where a comment starts in a plain scalar's line (` #`).
pub(super) fn find_comment(s: &[u8]) -> Option<usize> {
    memchr::memmem::find(s, b" #").map(|i| i + 1)
}

/// A plain scalar as the general reader reads it (strict booleans, YAML 1.2 core), or `None`
/// when it might read it as anything but null, a boolean, a canonical decimal number or a
/// string.
pub(super) fn resolve_plain(s: &str) -> Option<Value> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        "<<" | "=" => return None,
        _ => {}
    }
    let b = s.as_bytes();
    let first = b[0];
    if first.is_ascii_digit() && b.iter().any(|&c| never_in_a_number(c)) {
        // A duration or a size (`12h`, `5m`, `30s`, `64Mi`): no spelling of a number, a
        // timestamp or a time of day has such a letter, so the general reader reads text.
        return Some(Value::String(s.to_string()));
    }
    if first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.') {
        return number(s);
    }
    if is_indicator(first) {
        return None;
    }
    // Spellings of non-finite numbers (`yes`, `on`, `y` and the like are strings: strict
    // booleans, as the general reader is set up).
    const WORDS: [&str; 3] = ["inf", "nan", "infinity"];
    if s.len() <= 8 && WORDS.iter().any(|w| w.eq_ignore_ascii_case(s)) {
        return None;
    }
    Some(Value::String(s.to_string()))
}

/// A letter no number of YAML 1.1 or 1.2 has (not a hex digit, not the `x`, `o`, `b` of a
/// base, the `e` of an exponent, the letters of `.inf` and `.nan`, nor the `t`, `z` of a
/// timestamp), nor a `:` of a sexagesimal number or a time.
fn never_in_a_number(c: u8) -> bool {
    c.is_ascii_alphabetic() && !b"abcdefxoinptzABCDEFXOINPTZ".contains(&c)
}

/// `-?(0|[1-9][0-9]*)` (18 digits at most) or that with `.[0-9]+` after it.
fn number(s: &str) -> Option<Value> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let canonical_int = !int.is_empty()
        && int.bytes().all(|c| c.is_ascii_digit())
        && (int == "0" || !int.starts_with('0'));
    if !canonical_int || int.len() > 18 {
        return None;
    }
    match frac {
        None => {
            if neg {
                if int == "0" {
                    return None;
                }
                int.parse::<i64>().ok().map(|v| Value::from(-v))
            } else {
                int.parse::<u64>().ok().map(Value::from)
            }
        }
        Some(f) => {
            if f.is_empty() || f.len() > 17 || !f.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            s.parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
        }
    }
}

/// A double-quoted scalar on one line at the start of `s`: its text and the offset past the
/// closing quote. JSON's escapes only (and no surrogates).
pub(super) fn double_quoted(s: &[u8]) -> Option<(String, usize)> {
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let j = memchr::memchr2(b'"', b'\\', &s[i..])?;
        out.extend_from_slice(&s[i..i + j]);
        i += j;
        if s[i] == b'"' {
            out.shrink_to_fit();
            return String::from_utf8(out).ok().map(|t| (t, i + 1));
        }
        let c = *s.get(i + 1)?;
        match c {
            b'"' | b'\\' | b'/' => out.push(c),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'u' => {
                let hex = std::str::from_utf8(s.get(i + 2..i + 6)?).ok()?;
                if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                    return None;
                }
                let ch = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i += 4;
            }
            _ => return None,
        }
        i += 2;
    }
}

/// A single-quoted scalar on one line at the start of `s`: its text and the offset past the
/// closing quote.
pub(super) fn single_quoted(s: &[u8]) -> Option<(String, usize)> {
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let j = memchr::memchr(b'\'', &s[i..])?;
        out.extend_from_slice(&s[i..i + j]);
        i += j;
        if s.get(i + 1) == Some(&b'\'') {
            out.push(b'\'');
            i += 2;
            continue;
        }
        out.shrink_to_fit();
        return String::from_utf8(out).ok().map(|t| (t, i + 1));
    }
}
