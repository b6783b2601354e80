//! The PromQL check of a document (every field the registry derives as PromQL) and the
//! position of a character inside a string value: the value's source text is decoded again
//! (YAML plain, single- and double-quoted, literal and folded block scalars, JSON strings)
//! keeping where each character came from.

use super::*;
use crate::util::promql;

impl DocCheck<'_> {
    /// Parses every PromQL field of the spec; a syntax error points at its character.
    pub(super) fn promql(&mut self, kind: Kind, spec: &Value) {
        for field in kind.def().promql {
            for pointer in crate::api::registry::pointers_at(&[field.path], spec) {
                let Some(Value::String(text)) = spec.pointer(&pointer) else {
                    continue;
                };
                let located = format!("/spec{pointer}");
                if self.unresolved(&located) {
                    continue;
                }
                let Err(e) = promql::check(text, field.form) else {
                    continue;
                };
                let pos = match self.doc.spans.get(&located) {
                    Some(span) => {
                        scalar_pos(self.text, span.value, text, e.offset).unwrap_or(span.value)
                    }
                    None => self.doc.start,
                };
                self.error(
                    pos,
                    Problem::PromqlSyntax {
                        field: crate::api::registry::strip_indices(&pointer_to_dotted(&pointer)),
                        message: e.message,
                    },
                );
            }
        }
    }
}

/// `/queries/0/query/prometheus_expr` -> `queries[0].query.prometheus_expr`.
fn pointer_to_dotted(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').skip(1) {
        if part.bytes().all(|b| b.is_ascii_digit()) && !part.is_empty() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part.replace("~1", "/").replace("~0", "~"));
        }
    }
    out
}

/// The position of byte `offset` of `value`, the string whose node starts at `at` in `text`
/// (`offset == value.len()`: just after its last character). `None` when the source, decoded
/// again, is not `value` (the caller points at the value).
pub(super) fn scalar_pos(text: &str, at: Pos, value: &str, offset: usize) -> Option<Pos> {
    let start = byte_of(text, at)?;
    // A block scalar's node starts at its content; its header is read from the line it is on.
    let (start, at) = match block_header(text, start) {
        Some(header) => (header, pos_of(text, header)),
        None => (start, at),
    };
    let mut src = Source {
        text,
        i: start,
        pos: at,
    };
    src.skip_properties();
    let (decoded, positions) = match text[src.i..].chars().next()? {
        '"' => src.double_quoted()?,
        '\'' => src.single_quoted()?,
        '|' | '>' => src.block()?,
        _ => src.plain(value.len())?,
    };
    if !decoded.starts_with(value) {
        return None;
    }
    if offset < value.len() {
        return positions.get(offset).copied();
    }
    // Just after the last character.
    let last = positions.get(value.len().checked_sub(1)?)?;
    Some(Pos::new(last.line, last.column + 1))
}

/// The byte index of the header (`|`, `>-`, ...) of the block scalar whose content starts at
/// `start`, if it is one: the content is alone on its line, after empty lines and a header
/// line that ends with the indicator (and perhaps a comment).
fn block_header(text: &str, start: usize) -> Option<usize> {
    let before = &text[..start];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    if !before[line_start..].trim_matches([' ', '\t']).is_empty() {
        return None;
    }
    let mut end = line_start.checked_sub(1)?;
    loop {
        let from = text[..end].rfind('\n').map_or(0, |n| n + 1);
        let line = text[from..end].trim_end_matches('\r');
        if line.trim().is_empty() {
            end = from.checked_sub(1)?;
            continue;
        }
        let code = match line.find(" #") {
            Some(c) => &line[..c],
            None => line,
        }
        .trim_end();
        let indicators =
            code.trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
        let header = indicators.len().checked_sub(1)?;
        let ok = matches!(indicators.as_bytes().last(), Some(b'|' | b'>'))
            && (header == 0 || matches!(code.as_bytes()[header - 1], b' ' | b'\t'));
        return ok.then_some(from + header);
    }
}

/// The 1-based line and column (in characters) of a byte index.
fn pos_of(text: &str, i: usize) -> Pos {
    let before = &text[..i];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    let column = before[line_start..].chars().count() + 1;
    Pos::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// The byte index of a 1-based line and column (in characters).
fn byte_of(text: &str, at: Pos) -> Option<usize> {
    let mut line_start = 0;
    for _ in 1..at.line {
        line_start += text[line_start..].find('\n')? + 1;
    }
    let line = &text[line_start..];
    let col = at.column.checked_sub(1)? as usize;
    let within = line
        .char_indices()
        .nth(col)
        .map(|(i, _)| i)
        .or_else(|| (line.chars().count() == col).then_some(line.len()))?;
    Some(line_start + within)
}

/// A cursor over the source with its line and column.
struct Source<'a> {
    text: &'a str,
    i: usize,
    pos: Pos,
}

type Decoded = (String, Vec<Pos>);

impl Source<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.i..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        if c == '\n' {
            self.pos = Pos::new(self.pos.line + 1, 1);
        } else {
            self.pos.column += 1;
        }
        Some(c)
    }

    /// Skips a tag (`!!str`) or anchor (`&a`) before the scalar.
    fn skip_properties(&mut self) {
        while matches!(self.peek(), Some('!' | '&')) {
            while self.peek().is_some_and(|c| !c.is_whitespace()) {
                self.bump();
            }
            while matches!(self.peek(), Some(' ' | '\t')) {
                self.bump();
            }
        }
    }

    /// After a line break inside a flow scalar: YAML's folding (a space, or a newline per empty
    /// line), leading white space of the next line skipped; `at` is where the break was.
    fn fold(&mut self, out: &mut Decoded, at: Pos) {
        let mut empty = 0;
        loop {
            while matches!(self.peek(), Some(' ' | '\t')) {
                self.bump();
            }
            if self.peek() == Some('\n') {
                self.bump();
                empty += 1;
            } else if self.text[self.i..].starts_with("\r\n") {
                self.bump();
                self.bump();
                empty += 1;
            } else {
                break;
            }
        }
        let folded = if empty == 0 { " " } else { "\n" };
        for _ in 0..empty.max(1) {
            push(out, folded, at);
        }
    }

    /// White space up to a line break is trimmed in a flow scalar.
    fn trailing_space(&self) -> bool {
        let rest = &self.text[self.i..];
        let end = rest.find('\n').unwrap_or(rest.len());
        rest[..end].trim_matches([' ', '\t', '\r']).is_empty() && end < rest.len()
    }

    fn double_quoted(&mut self) -> Option<Decoded> {
        let mut out: Decoded = (String::new(), Vec::new());
        self.bump();
        loop {
            let at = self.pos;
            match self.peek()? {
                '"' => return Some(out),
                '\\' => {
                    self.bump();
                    let c = self.bump()?;
                    let decoded = match c {
                        '\n' => {
                            while matches!(self.peek(), Some(' ' | '\t')) {
                                self.bump();
                            }
                            continue;
                        }
                        'x' => self.hex(2)?,
                        'u' => self.hex_u()?,
                        'U' => self.hex(8)?,
                        _ => escape(c)?,
                    };
                    push(&mut out, decoded.encode_utf8(&mut [0; 4]), at);
                }
                ' ' | '\t' if self.trailing_space() => {
                    while self.peek() != Some('\n') {
                        self.bump();
                    }
                }
                '\n' => {
                    self.bump();
                    self.fold(&mut out, at);
                }
                c => {
                    self.bump();
                    push(&mut out, c.encode_utf8(&mut [0; 4]), at);
                }
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<char> {
        let digits = self.text.get(self.i..self.i + n)?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        for _ in 0..n {
            self.bump();
        }
        char::from_u32(code)
    }

    /// `\uXXXX`, a JSON surrogate pair (`\uD83D\uDE00`) included.
    fn hex_u(&mut self) -> Option<char> {
        let digits = self.text.get(self.i..self.i + 4)?;
        let high = u32::from_str_radix(digits, 16).ok()?;
        for _ in 0..4 {
            self.bump();
        }
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high);
        }
        let low = self.text.get(self.i..self.i + 6)?.strip_prefix("\\u")?;
        let low = u32::from_str_radix(low, 16).ok()?;
        for _ in 0..6 {
            self.bump();
        }
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low.checked_sub(0xDC00)?))
    }

    fn single_quoted(&mut self) -> Option<Decoded> {
        let mut out: Decoded = (String::new(), Vec::new());
        self.bump();
        loop {
            let at = self.pos;
            match self.peek()? {
                '\'' => {
                    self.bump();
                    if self.peek() != Some('\'') {
                        return Some(out);
                    }
                    self.bump();
                    push(&mut out, "'", at);
                }
                ' ' | '\t' if self.trailing_space() => {
                    while self.peek() != Some('\n') {
                        self.bump();
                    }
                }
                '\n' => {
                    self.bump();
                    self.fold(&mut out, at);
                }
                c => {
                    self.bump();
                    push(&mut out, c.encode_utf8(&mut [0; 4]), at);
                }
            }
        }
    }

    /// A plain scalar, read far enough to hold `len` bytes (its end is the caller's check).
    fn plain(&mut self, len: usize) -> Option<Decoded> {
        let mut out: Decoded = (String::new(), Vec::new());
        while out.0.len() < len {
            let at = self.pos;
            match self.peek()? {
                ' ' | '\t' if self.trailing_space() => {
                    while self.peek() != Some('\n') {
                        self.bump();
                    }
                }
                '\r' => {
                    self.bump();
                }
                '\n' => {
                    self.bump();
                    self.fold(&mut out, at);
                }
                c => {
                    self.bump();
                    push(&mut out, c.encode_utf8(&mut [0; 4]), at);
                }
            }
        }
        Some(out)
    }

    /// A literal (`|`) or folded (`>`) block scalar, header included.
    fn block(&mut self) -> Option<Decoded> {
        let folded = self.bump()? == '>';
        let header_line = &self.text[self.text[..self.i].rfind('\n').map_or(0, |n| n + 1)..];
        let parent = header_line.len() - header_line.trim_start_matches(' ').len();
        let mut indent = None;
        while let Some(c) = self.peek().filter(|c| *c != '\n') {
            self.bump();
            if let Some(d) = c.to_digit(10).filter(|d| *d > 0 && indent.is_none()) {
                indent = Some(parent + d as usize);
            }
        }
        self.bump()?;
        let mut out: Decoded = (String::new(), Vec::new());
        // Line breaks not yet given out: how they fold depends on the next content line.
        let mut pending: Vec<Pos> = Vec::new();
        let mut seen_content = false;
        let mut previous_more_indented = false;
        while self.i < self.text.len() {
            let rest = &self.text[self.i..];
            let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
            let spaces = line.len() - line.trim_start_matches(' ').len();
            if !line.trim().is_empty() {
                let want = *indent.get_or_insert(spaces);
                if spaces < want || want <= parent {
                    break;
                }
                for _ in 0..want {
                    self.bump();
                }
                let more = matches!(self.peek(), Some(' ' | '\t'));
                // Leading empty lines are kept as line breaks, folded or not.
                let fold = seen_content && folded && !more && !previous_more_indented;
                emit_breaks(&mut out, &pending, fold);
                pending.clear();
                previous_more_indented = more;
                seen_content = true;
                while let Some(c) = self.peek().filter(|c| *c != '\n' && *c != '\r') {
                    let at = self.pos;
                    self.bump();
                    push(&mut out, c.encode_utf8(&mut [0; 4]), at);
                }
            }
            while self.peek().is_some_and(|c| c != '\n') {
                self.bump();
            }
            let at = self.pos;
            if self.bump().is_none() {
                break;
            }
            if seen_content || line.trim().is_empty() {
                pending.push(at);
            }
        }
        // Clipped: one final break (a strip or keep header only changes the value's end).
        if let Some(at) = pending.first().filter(|_| seen_content) {
            push(&mut out, "\n", *at);
        }
        Some(out)
    }
}

/// The breaks between two content lines of a block scalar: folded to a space when there is
/// one between two ordinary lines of a `>` scalar, newlines otherwise.
fn emit_breaks(out: &mut Decoded, breaks: &[Pos], fold: bool) {
    match breaks {
        [] => {}
        [one] if fold => push(out, " ", *one),
        [_, rest @ ..] if fold => {
            for at in rest {
                push(out, "\n", *at);
            }
        }
        all => {
            for at in all {
                push(out, "\n", *at);
            }
        }
    }
}

fn push(out: &mut Decoded, s: &str, at: Pos) {
    out.0.push_str(s);
    out.1.extend(std::iter::repeat_n(at, s.len()));
}

/// A double-quoted scalar's one-character escape (YAML's, which include JSON's).
fn escape(c: char) -> Option<char> {
    Some(match c {
        '0' => '\0',
        'a' => '\x07',
        'b' => '\x08',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\x0B',
        'f' => '\x0C',
        'r' => '\r',
        'e' => '\x1B',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{A0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
