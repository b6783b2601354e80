//! Redaction on a normalised form of what is printed.
//!
//! A server may echo a request body in any dialect of JSON (`\/` for `/`, Go's `\u0026`, Python's
//! `\u00e4`, every character as `\uXXXX`, a JSON document escaped again inside a string), in a
//! URL's percent-encoding, or in HTML entities, and it may cut the echo short. Listing the forms
//! of a secret cannot keep up with that, so the text is decoded instead: [`Normal`] undoes those
//! escapes (layer by layer, up to [`MAX_LAYERS`]) and remembers, for each decoded byte, the span of
//! the original text it came from. The secrets, normalised the same way, are searched in the
//! decoded bytes, and the original spans of what matched are replaced. Text with nothing to
//! decode is searched as it is (the bulk of any output).
//!
//! An echo cut short leaves a prefix of the secret: a prefix of at least [`prefix_floor`] bytes
//! that ends where the text, a line or a quoted string ends (or at an ellipsis) is a secret too.

use std::borrow::Cow;

/// How many layers of escaping are undone: a JSON document in a JSON string in a JSON string.
const MAX_LAYERS: usize = 4;

/// A registered secret (or one of its encoded forms), normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Form {
    bytes: Vec<u8>,
}

impl Form {
    pub(super) fn new(text: &str) -> Form {
        Form {
            bytes: Normal::of(text.as_bytes()).bytes,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// The shortest prefix of a secret that counts as the secret cut short: half of a short
/// secret (at least 6 bytes), 10 bytes of a longer one. Shorter shared starts (`https://`,
/// `xoxb-`) say nothing of the secret and stay readable.
fn prefix_floor(len: usize) -> usize {
    (len / 2).clamp(6, 10).min(len)
}

/// Whether a prefix of a secret, `len` bytes of `whole`, followed by `rest`, is an echo cut
/// short: it ends the text or a line, a quoted string, or meets an ellipsis (`…`, `...`); or it
/// is long (at least [`LONG_CUT`] bytes and half the secret) and what follows is no letter or
/// digit of the secret's (a message goes on after it: `…/services/T0/B0/dial (n.yaml:1)`). A
/// short word that merely starts like a secret and goes on in prose (`redirect refused` for a
/// token `redirect-…`) is no cut.
fn ends_a_cut(len: usize, whole: usize, rest: &[u8]) -> bool {
    match rest.first() {
        None | Some(b'\n' | b'\r' | b'"' | b'\'') => true,
        _ if rest.starts_with("…".as_bytes()) || rest.starts_with(b"...") => true,
        Some(b) => len >= LONG_CUT && 2 * len >= whole && !b.is_ascii_alphanumeric(),
    }
}

/// The length from which a prefix of a secret followed by a space or punctuation is taken for
/// the secret cut short.
const LONG_CUT: usize = 16;

/// Decoded text and, for each of its bytes, the span of the original text it stands for.
struct Normal {
    bytes: Vec<u8>,
    /// Empty when nothing was decoded (each byte stands for itself).
    spans: Vec<(usize, usize)>,
}

impl Normal {
    fn of(text: &[u8]) -> Normal {
        let mut normal = Normal {
            bytes: text.to_vec(),
            spans: Vec::new(),
        };
        for _ in 0..MAX_LAYERS {
            let Some((bytes, spans)) = decode_layer(&normal.bytes) else {
                break;
            };
            normal.spans = if normal.spans.is_empty() {
                spans
            } else {
                spans
                    .iter()
                    .map(|&(s, e)| (normal.spans[s].0, normal.spans[e - 1].1))
                    .collect()
            };
            normal.bytes = bytes;
        }
        normal
    }

    /// The original span of decoded bytes `start..end`.
    fn original(&self, start: usize, end: usize) -> (usize, usize) {
        if self.spans.is_empty() {
            (start, end)
        } else {
            (self.spans[start].0, self.spans[end - 1].1)
        }
    }
}

/// Whether a text may hold something [`decode_layer`] decodes.
fn has_escapes(text: &[u8]) -> bool {
    memchr::memchr3(b'\\', b'%', b'&', text).is_some()
}

/// Decoded bytes and the span of the layer below that each stands for.
type Layer = (Vec<u8>, Vec<(usize, usize)>);

/// One layer of escapes undone, or `None` when there was nothing to undo.
fn decode_layer(text: &[u8]) -> Option<Layer> {
    if !has_escapes(text) {
        return None;
    }
    let mut bytes = Vec::with_capacity(text.len());
    let mut spans = Vec::with_capacity(text.len());
    let mut decoded_any = false;
    let mut i = 0;
    while i < text.len() {
        let (decoded, used) = match text[i] {
            b'\\' => json_escape(&text[i..]),
            b'%' => percent_escape(&text[i..]),
            b'&' => html_entity(&text[i..]),
            _ => (None, 1),
        };
        match decoded {
            Some(c) => {
                decoded_any = true;
                let mut buf = [0u8; 4];
                let out: &[u8] = match c {
                    Decoded::Char(c) => c.encode_utf8(&mut buf).as_bytes(),
                    Decoded::Byte(b) => {
                        buf[0] = b;
                        &buf[..1]
                    }
                };
                for &b in out {
                    bytes.push(b);
                    spans.push((i, i + used));
                }
                i += used;
            }
            None => {
                bytes.push(text[i]);
                spans.push((i, i + 1));
                i += 1;
            }
        }
    }
    decoded_any.then_some((bytes, spans))
}

fn hex4(text: &[u8]) -> Option<u32> {
    let digits = text.get(..4)?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// What an escape stands for: a character, or one byte of a percent-encoded character.
#[derive(Clone, Copy)]
enum Decoded {
    Char(char),
    Byte(u8),
}

/// A JSON escape at the start of `text` (`\/`, `\uXXXX`, a surrogate pair, ...).
fn json_escape(text: &[u8]) -> (Option<Decoded>, usize) {
    let (c, used) = json_char(text);
    (c.map(Decoded::Char), used)
}

fn json_char(text: &[u8]) -> (Option<char>, usize) {
    let simple = match text.get(1) {
        Some(b'"') => Some('"'),
        Some(b'\\') => Some('\\'),
        Some(b'/') => Some('/'),
        Some(b'\'') => Some('\''),
        Some(b'b') => Some('\u{8}'),
        Some(b'f') => Some('\u{c}'),
        Some(b'n') => Some('\n'),
        Some(b'r') => Some('\r'),
        Some(b't') => Some('\t'),
        _ => None,
    };
    if simple.is_some() {
        return (simple, 2);
    }
    if text.get(1) != Some(&b'u') {
        return (None, 1);
    }
    let Some(unit) = hex4(&text[2..]) else {
        return (None, 1);
    };
    if (0xD800..0xDC00).contains(&unit) && text.get(6..8) == Some(b"\\u") {
        if let Some(low) = hex4(&text[8..]).filter(|l| (0xDC00..0xE000).contains(l)) {
            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            return (char::from_u32(c), 12);
        }
    }
    (char::from_u32(unit), 6)
}

/// A percent-encoded byte at the start of `text` (a multi-byte character's bytes are decoded
/// one at a time, which the search meets as the same bytes).
fn percent_escape(text: &[u8]) -> (Option<Decoded>, usize) {
    let Some(digits) = text
        .get(1..3)
        .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
        .and_then(|d| std::str::from_utf8(d).ok())
    else {
        return (None, 1);
    };
    match u8::from_str_radix(digits, 16) {
        Ok(b) => (Some(Decoded::Byte(b)), 3),
        Err(_) => (None, 1),
    }
}

/// An HTML entity at the start of `text` (named for `&<>"'`, or numeric).
fn html_entity(text: &[u8]) -> (Option<Decoded>, usize) {
    let Some(end) = text.iter().take(12).position(|&b| b == b';') else {
        return (None, 1);
    };
    let name = &text[1..end];
    let c = match name {
        b"amp" => Some('&'),
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"quot" => Some('"'),
        b"apos" => Some('\''),
        _ => {
            let number = std::str::from_utf8(name.strip_prefix(b"#").unwrap_or(b"")).ok();
            number
                .and_then(|n| match n.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => n.parse().ok(),
                })
                .and_then(char::from_u32)
        }
    };
    match c {
        Some(c) => (Some(Decoded::Char(c)), end + 1),
        None => (None, 1),
    }
}

/// Where `key` starts in `text`, ASCII case ignored (a server may echo a secret lower-cased:
/// `https%3a%2f%2fhooks...`).
fn find_iter_ci<'a>(text: &'a [u8], key: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let first = key.first().copied().unwrap_or_default();
    let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    memchr::memchr2_iter(lower, upper, text).filter(move |&at| {
        text.get(at..at + key.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(key))
    })
}

/// The registered forms, longest first, with one automaton over the start of each (its
/// [`prefix_floor`] bytes, ASCII case ignored): a text is searched once for all of them, not
/// once per form (fifty secrets have ~450 forms).
#[derive(Debug, Default)]
pub(super) struct Forms {
    forms: Vec<Form>,
    /// Built when a text is first searched after forms were added (secrets registered one by
    /// one build it once), `None` inside when it cannot be built.
    finder: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>>,
}

impl Forms {
    pub(super) const fn new() -> Forms {
        Forms {
            forms: Vec::new(),
            finder: std::sync::OnceLock::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Adds the forms not there yet and orders them; the automaton is built again when needed.
    pub(super) fn extend(&mut self, forms: Vec<Form>) {
        for form in forms {
            if !self.forms.contains(&form) {
                self.forms.push(form);
            }
        }
        // Longest first, so a secret that contains another is replaced whole.
        self.forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        self.finder = std::sync::OnceLock::new();
    }

    fn finder(&self) -> Option<&aho_corasick::AhoCorasick> {
        let keys = || self.forms.iter().map(|f| &f.bytes[..prefix_floor(f.len())]);
        // Without an automaton (it cannot be built) each form is searched on its own.
        let build = || {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(keys())
                .ok()
        };
        self.finder.get_or_init(build).as_ref()
    }

    /// The same forms searched one by one, as when no automaton could be built (tests).
    #[cfg(test)]
    pub(super) fn one_by_one(mut self) -> Forms {
        self.finder = std::sync::OnceLock::from(None);
        self
    }

    /// Where a form's start is found in `text`: the form and the position.
    fn starts<'a>(&'a self, text: &'a [u8]) -> Box<dyn Iterator<Item = (&'a Form, usize)> + 'a> {
        match self.finder() {
            Some(finder) => Box::new(
                finder
                    .find_overlapping_iter(text)
                    .filter_map(|m| Some((self.forms.get(m.pattern().as_usize())?, m.start()))),
            ),
            None => Box::new(self.forms.iter().flat_map(move |form| {
                let key = &form.bytes[..prefix_floor(form.len())];
                find_iter_ci(text, key).map(move |at| (form, at))
            })),
        }
    }
}

/// The spans of `text` (decoded) that hold a form or a prefix of one cut short, ASCII case
/// ignored. A prefix that is a whole `public` name as written (a word on its own, the same
/// case: an echo in another case would tell the secret's case) is no cut.
fn matches(text: &[u8], forms: &Forms, public: &[Vec<u8>]) -> Vec<(usize, usize)> {
    let is_public = |at: usize, len: usize| {
        let word = &text[at..at + len];
        let alone = at == 0 || !text[at - 1].is_ascii_alphanumeric();
        alone && public.iter().any(|p| p == word)
    };
    let mut found = Vec::new();
    for (form, at) in forms.starts(text) {
        let common = text[at..]
            .iter()
            .zip(&form.bytes)
            .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
            .count();
        let cut = ends_a_cut(common, form.len(), &text[at + common..]) && !is_public(at, common);
        if common == form.len() || cut {
            found.push((at, at + common));
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// The text with every form (and prefix of one cut short) replaced by `mark`.
pub(super) fn redact<'a>(
    text: &'a str,
    forms: &Forms,
    public: &[Vec<u8>],
    mark: &str,
) -> Cow<'a, str> {
    if forms.is_empty() {
        return Cow::Borrowed(text);
    }
    let raw = text.as_bytes();
    let normal;
    let (searched, decoded) = if has_escapes(raw) {
        normal = Normal::of(raw);
        (&normal.bytes[..], Some(&normal))
    } else {
        (raw, None)
    };
    let mut found = matches(searched, forms, public);
    // Base64 wrapped in lines is searched again joined: a form across a line break is found
    // whole, not as a prefix before the break and nothing after it.
    if let Some((joined, at)) = unwrapped(searched) {
        let across = matches(&joined, forms, public);
        found.extend(across.into_iter().map(|(s, e)| (at[s], at[e - 1] + 1)));
        found.sort_unstable();
        found.dedup();
    }
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut written = 0;
    for (start, end) in found {
        let (start, end) = match decoded {
            Some(n) => n.original(start, end),
            None => (start, end),
        };
        if end <= written {
            continue;
        }
        out.extend_from_slice(&raw[written..start.max(written)]);
        if start >= written {
            out.extend_from_slice(mark.as_bytes());
        }
        written = end;
    }
    out.extend_from_slice(&raw[written..]);
    // A span's ends are escape or character boundaries of valid UTF-8, except where a
    // percent-encoded byte of a character was matched alone: lossy keeps it printable.
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// The run of base64 characters that ends a line for the break after it to be taken for
/// wrapping (PEM wraps at 64 columns, MIME at 76).
const WRAPPED: usize = 48;

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=')
}

/// Where a line break at `at` ends: a character, or one escaped as in a JSON string (the text
/// as printed may not have been decoded).
fn line_break(text: &[u8], at: usize) -> Option<usize> {
    const BREAKS: [&[u8]; 5] = [b"\r\n", b"\n", b"\r", b"\\r\\n", b"\\n"];
    let rest = &text[at..];
    BREAKS
        .iter()
        .find(|eol| rest.starts_with(eol))
        .map(|eol| at + eol.len())
}

/// Base64 wrapped in lines, joined: each line break (with the next line's indentation) that
/// follows a run of at least [`WRAPPED`] base64 characters and precedes another taken out, and
/// for each byte kept its position in `text`. `None` when there is no such break.
fn unwrapped(text: &[u8]) -> Option<(Vec<u8>, Vec<usize>)> {
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for at in memchr::memchr3_iter(b'\r', b'\n', b'\\', text) {
        if cuts.last().is_some_and(|&(_, end)| at < end) || at < WRAPPED {
            continue;
        }
        if !text[at - WRAPPED..at].iter().all(|&b| is_base64(b)) {
            continue;
        }
        let Some(end) = line_break(text, at) else {
            continue;
        };
        let next = end
            + text[end..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
        if text.get(next).is_some_and(|&b| is_base64(b)) {
            cuts.push((at, next));
        }
    }
    if cuts.is_empty() {
        return None;
    }
    let mut joined = Vec::with_capacity(text.len());
    let mut at = Vec::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in cuts.into_iter().chain([(text.len(), text.len())]) {
        joined.extend_from_slice(&text[from..start]);
        at.extend(from..start);
        from = end;
    }
    Some((joined, at))
}
