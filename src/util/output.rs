//! The one layer every printed string passes through: redaction of secrets and inert display
//! of text that came from manifests or from a server.
//!
//! Two halves, so that no output path can forget it:
//! - [`Inert`] and [`Markdown`] are display wrappers for untrusted text (slugs, field names,
//!   server messages, file names). `Inert` escapes control characters (a CR or LF in a slug
//!   cannot start a fake line, an ESC cannot move the cursor) and bidirectional overrides;
//!   `Markdown` also neutralises HTML and Markdown for the pull-request comment. Both redact.
//! - [`stdout`] and [`stderr`] are the writers every command, the error printer of `cli` and
//!   the log use. They redact every registered secret from the bytes written (whatever
//!   carried it: a URL, a server's message, a log field), escape stray control characters
//!   (only `\n`, `\t` and colour sequences pass), and make sure no line starts a GitHub
//!   workflow command (`::` or `##[`) unless it was written with [`Guarded::command`].
//!
//! The secrets come from [`register_secret`], called at startup with the API token (and the
//! password or query values of a `--url`); they are redacted as [`REDACTED`].

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::sync::RwLock;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Secrets shorter than this are not registered: redacting every `a` of the output would
/// make it unreadable, and such a value is no API token.
const MIN_SECRET_LEN: usize = 4;

static SECRETS: RwLock<redact::Forms> = RwLock::new(redact::Forms::new());

/// Names the settings declare (environments'): public, so never taken for a secret cut short.
static PUBLIC: RwLock<Vec<Vec<u8>>> = RwLock::new(Vec::new());

/// Registers a name `cfgctl.yaml` declares (an environment's): where it is a prefix of a
/// secret, it is shown, not taken for that secret cut short (red team E3: `staging` vanished
/// from every report when its token started `STAGING…`). The whole secret, and a longer cut
/// of it, are still redacted.
pub fn register_public(name: &str) {
    let mut public = PUBLIC.write().unwrap_or_else(|e| e.into_inner());
    if !public.iter().any(|p| p == name.as_bytes()) {
        public.push(name.as_bytes().to_vec());
    }
}

/// Registers a secret to be redacted from everything printed from now on, by this process:
/// in any form [`redact`] decodes (JSON, URL and HTML escapes), form-encoded (a space as `+`),
/// base64-encoded, or cut short.
pub fn register_secret(secret: &str) {
    let forms = forms_of(secret);
    if forms.is_empty() {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    secrets.extend(forms);
}

/// The forms a secret is searched in (none for a value too short to be a secret): as it is,
/// form-encoded (a space as `+`) and base64-encoded, each normalised (`redact`).
fn forms_of(secret: &str) -> Vec<redact::Form> {
    let secret = secret.trim();
    if secret.chars().count() < MIN_SECRET_LEN {
        return Vec::new();
    }
    let mut forms = vec![secret.to_string()];
    if secret.contains(' ') {
        forms.push(secret.replace(' ', "+"));
    }
    // A value a server or a log shows encoded (a basic-auth header, a data URL, hex) is the
    // same secret.
    forms.extend(base64_forms(secret.as_bytes()));
    forms.push(secret.bytes().map(|b| format!("{b:02x}")).collect());
    forms.extend(url_parts(secret));
    let mut normal: Vec<redact::Form> = Vec::with_capacity(forms.len());
    for f in forms {
        let form = redact::Form::new(&f);
        if !normal.contains(&form) {
            normal.push(form);
        }
    }
    normal
}

/// A URL secret's parts a server may echo alone: without its scheme, and its path and query
/// (a Slack webhook's secret is its path), when long enough to be secret.
fn url_parts(secret: &str) -> Vec<String> {
    const LONG_ENOUGH: usize = 12;
    let Some((_, rest)) = secret.split_once("://") else {
        return Vec::new();
    };
    let mut parts = vec![rest.to_string()];
    if let Some(at) = rest.find('/') {
        parts.push(rest[at..].to_string());
    }
    parts.retain(|p| p.len() >= LONG_ENOUGH);
    parts
}

/// The base64 forms of a value: standard and URL-safe alphabets, with and without padding,
/// and as it reads inside a longer base64 text (an echoed request body): there the value may
/// start at any of a three-byte group's bytes, and the characters that also encode a
/// neighbour's bits are left out.
fn base64_forms(bytes: &[u8]) -> Vec<String> {
    let mut forms = Vec::new();
    for url_safe in [false, true] {
        let whole = base64(bytes, url_safe);
        let padding = "=".repeat((3 - bytes.len() % 3) % 3);
        forms.push(format!("{whole}{padding}"));
        forms.push(whole);
        for offset in 0..3 {
            let shifted = [&[0u8; 2][..offset], bytes].concat();
            let text = base64(&shifted, url_safe);
            // The first characters hold the bytes before; the last, a partial group's, the
            // bytes after.
            let skip = [0, 2, 3][offset];
            let cut = usize::from(shifted.len() % 3 != 0);
            // Short ones would match ordinary words of the output.
            match text.get(skip..text.len().saturating_sub(cut)) {
                Some(inner) if inner.len() >= 8 => forms.push(inner.to_string()),
                _ => {}
            }
        }
    }
    forms.sort();
    forms.dedup();
    forms
}

/// Base64 without padding.
fn base64(bytes: &[u8], url_safe: bool) -> String {
    const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let table = if url_safe { URL } else { STD };
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(table[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Registers what a `--url` carries that is secret: the user info's password (and a user name
/// that looks like a token) and every query value.
pub fn register_url_secrets(raw: &str) {
    if let Ok(url) = reqwest::Url::parse(raw.trim()) {
        if let Some(p) = url.password() {
            register_secret(p);
            if let Ok(decoded) = percent_decode(p) {
                register_secret(&decoded);
            }
        }
        if !url.username().is_empty() {
            register_secret(url.username());
        }
        for (_, v) in url.query_pairs() {
            register_secret(&v);
        }
    }
}

fn percent_decode(s: &str) -> Result<String, std::string::FromUtf8Error> {
    let bytes: Vec<u8> = form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned().into_bytes())
        .unwrap_or_default();
    String::from_utf8(bytes)
}

/// The text with every registered secret replaced by [`REDACTED`], searched in the text's
/// normalised form (see [`redact`](mod@redact)).
pub fn redact(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    let public = PUBLIC.read().unwrap_or_else(|e| e.into_inner());
    redact::redact(text, &secrets, &public, REDACTED)
}

/// A URL as it may be shown: without user info, query or fragment.
pub fn display_url(raw: &str) -> String {
    match reqwest::Url::parse(raw.trim()) {
        Ok(mut url) => {
            let had_credentials = !url.username().is_empty() || url.password().is_some();
            let _ = url.set_username("");
            let _ = url.set_password(None);
            let had_query = url.query().is_some() || url.fragment().is_some();
            url.set_query(None);
            url.set_fragment(None);
            let mut shown = url.as_str().trim_end_matches('/').to_string();
            if had_credentials {
                shown = shown.replacen("://", &format!("://{REDACTED}@"), 1);
            }
            if had_query {
                shown.push_str(&format!("?{REDACTED}"));
            }
            Inert(shown).to_string()
        }
        // Not a URL: nothing can be told apart, so only its scheme-like start is kept.
        Err(_) => {
            let head: String = raw
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '.' | '-'))
                .take(40)
                .collect();
            format!("{}…", Inert(head))
        }
    }
}

/// Whether a character is shown escaped in text output: C0 and C1 controls (a tab too, so a
/// value keeps its column), DEL, and the bidirectional controls that reorder what a terminal
/// shows (CVE-2021-42574).
fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        // JSON's escape form: the guard may meet a C1 control inside a JSON string (serde_json
        // leaves them raw), and this keeps the document valid and exact.
        c => out.push_str(&format!("\\u{:04x}", u32::from(c))),
    }
}

/// Control characters escaped (`\n`, `\r`, `\t`, `\u001b`), everything else as it is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Untrusted text for text output: redacted, control characters escaped. Never spans lines.
#[derive(Clone, Copy, Debug)]
pub struct Inert<T>(pub T);

impl<T: fmt::Display> fmt::Display for Inert<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        f.write_str(&escape_controls(&redact(&text)))
    }
}

/// Untrusted text for the Markdown plan: inert, and HTML and Markdown neutralised (entities
/// for `<>&"'`, backslashes before Markdown's punctuation), so a slug cannot close a tag,
/// open a link, a table cell or a heading. Safe inside HTML elements and in Markdown text.
#[derive(Clone, Copy, Debug)]
pub struct Markdown<T>(pub T);

impl<T: fmt::Display> fmt::Display for Markdown<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = Inert(&self.0).to_string();
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '&' => out.push_str("&amp;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&#39;"),
                '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '|' | '!' | '~' | '@'
                | '{' | '}' => {
                    // As a numeric entity: it holds in Markdown text and inside HTML alike
                    // (a backslash escape would show literally inside `<code>`).
                    out.push_str(&format!("&#{};", u32::from(c)));
                }
                c => out.push(c),
            }
        }
        f.write_str(&out)
    }
}

/// Untrusted text as a Markdown code span: inert, between backticks longer than any run of
/// backticks inside it (so it cannot close the span early).
pub fn code_span(text: &str) -> String {
    let text = Inert(text).to_string();
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    if longest == 0 {
        return format!("`{text}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

/// GitHub workflow command escaping of a message (`%`, CR, LF), after redaction.
pub fn workflow_data(text: &str) -> String {
    redact(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub workflow command escaping of a property value (also `:` and `,`).
pub fn workflow_property(text: &str) -> String {
    workflow_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A line of output made safe: redacted, stray control characters escaped (colour sequences
/// `ESC [ … m` pass), and a workflow command defused unless `command` is set. Borrowed when
/// nothing had to change (the bulk of any output), so that it is written as it is.
fn guard_line(line: &str, command: bool) -> Cow<'_, str> {
    let line = redact(line);
    // Printable ASCII and tabs (the bulk of any plan) have nothing to escape.
    let plain = line
        .bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    let mut out = if plain {
        line
    } else {
        Cow::Owned(escaped(&line))
    };
    if !command {
        let trimmed = out.trim_start();
        // The runner trims leading white space before it looks for a command.
        if trimmed.starts_with("::") || trimmed.starts_with("##[") {
            let at = out.len() - trimmed.len();
            out.to_mut().insert(at, '\\');
        }
    }
    out
}

/// The line with every unsafe character escaped (colour sequences kept).
fn escaped(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' {
            if let Some(len) = sgr_len(&line[i..]) {
                out.push_str(&line[i..i + len]);
                for _ in 1..line[i..i + len].chars().count() {
                    chars.next();
                }
                continue;
            }
        }
        if c == '\t' || !is_unsafe_char(c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    out
}

/// The length of a colour sequence (`ESC [ digits/; m`) at the start of `s`.
fn sgr_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("\u{1b}[")?;
    let params = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (rest.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

/// A writer that guards every complete line written to it (see the module doc). Lines are
/// buffered until their newline, or until the writer is flushed or dropped, so a secret split
/// across two writes is still redacted.
pub struct Guarded<W: Write> {
    inner: W,
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no newline: a line written in many small
    /// pieces (serde_json writes a string between its escapes) is searched once, not once a
    /// piece.
    searched: usize,
}

impl<W: Write> Guarded<W> {
    pub fn new(inner: W) -> Guarded<W> {
        Guarded {
            inner,
            pending: Vec::new(),
            searched: 0,
        }
    }

    /// Writes a GitHub workflow command line: the one way to start a line with `::`.
    pub fn command(&mut self, line: &str) -> io::Result<()> {
        // A command starts its own line.
        if !self.pending.is_empty() {
            self.pending.push(b'\n');
        }
        self.flush_pending(true)?;
        let line = line.replace(['\r', '\n'], " ");
        let safe = guard_line(&line, true);
        self.inner.write_all(safe.as_bytes())?;
        self.inner.write_all(b"\n")
    }

    fn emit(&mut self, bytes: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(bytes);
        let (body, newline) = match text.strip_suffix('\n') {
            Some(b) => (b, true),
            None => (text.as_ref(), false),
        };
        // The line and its newline in one write: one system call a line on an unbuffered
        // stream (standard error), not two.
        match guard_line(body, false) {
            // Nothing changed: the line as it came (`body` is the start of `text`).
            Cow::Borrowed(_) => self.inner.write_all(text.as_bytes()),
            Cow::Owned(mut safe) => {
                if newline {
                    safe.push('\n');
                }
                self.inner.write_all(safe.as_bytes())
            }
        }
    }

    /// Writes out the buffered partial line (`all`) or only the complete lines.
    fn flush_pending(&mut self, all: bool) -> io::Result<()> {
        // Walk the lines by offset and drop the written ones once at the end: draining the
        // buffer line by line would shift it each time, quadratic in a large write (a plan
        // of thousands of creates is written at once).
        let mut pending = std::mem::take(&mut self.pending);
        let mut start = 0;
        let mut from = self.searched.min(pending.len());
        while let Some(i) = memchr::memchr(b'\n', &pending[from..]) {
            let end = from + i + 1;
            if let Err(e) = self.emit(&pending[start..end]) {
                // What could not be written is dropped, as a failed write drops it.
                self.searched = 0;
                return Err(e);
            }
            start = end;
            from = end;
        }
        pending.drain(..start);
        self.searched = pending.len();
        if all && !pending.is_empty() {
            let emitted = self.emit(&pending);
            pending.clear();
            self.searched = 0;
            emitted?;
        }
        self.pending = pending;
        Ok(())
    }
}

impl<W: Write> Write for Guarded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if memchr::memchr(b'\n', buf).is_some() {
            self.flush_pending(false)?;
        } else {
            // No line ended: nothing to write yet, and nothing more to search.
            self.searched = self.pending.len();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_pending(true)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Guarded<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The one place the process's streams are opened: `clippy.toml` forbids `std::io::stdout`,
/// `std::io::stderr`, `anstream::stdout`/`stderr` (and raw descriptors) everywhere else, so
/// nothing can write to them but through the writers below.
#[allow(clippy::disallowed_methods)]
mod raw {
    use std::io;

    pub(super) fn stdout() -> anstream::AutoStream<io::StdoutLock<'static>> {
        anstream::stdout().lock()
    }

    pub(super) fn stderr() -> anstream::AutoStream<io::StderrLock<'static>> {
        anstream::stderr().lock()
    }

    pub(super) fn log() -> io::Stderr {
        io::stderr()
    }

    pub(super) fn stdout_color() -> anstream::ColorChoice {
        anstream::AutoStream::choice(&io::stdout())
    }

    pub(super) fn stderr_color() -> anstream::ColorChoice {
        anstream::AutoStream::choice(&io::stderr())
    }

    pub(super) fn stdout_is_terminal() -> bool {
        io::IsTerminal::is_terminal(&io::stdout())
    }

    pub(super) fn stderr_is_terminal() -> bool {
        io::IsTerminal::is_terminal(&io::stderr())
    }
}

/// Whether what is written to standard output shows colour (a terminal, `--color`,
/// `NO_COLOR`): renderers style their text only then.
pub fn stdout_has_color() -> bool {
    raw::stdout_color() != anstream::ColorChoice::Never
}

/// Whether what is written to standard error shows colour (the log's ANSI styling).
pub fn stderr_has_color() -> bool {
    raw::stderr_color() != anstream::ColorChoice::Never
}

/// Whether standard output is a terminal (problems shown under their source lines).
pub fn stdout_is_terminal() -> bool {
    raw::stdout_is_terminal()
}

/// Whether standard error is a terminal (a progress bar instead of one line per action).
pub fn stderr_is_terminal() -> bool {
    raw::stderr_is_terminal()
}

/// Standard output, guarded (colour handled by anstream).
pub fn stdout() -> Guarded<anstream::AutoStream<io::StdoutLock<'static>>> {
    Guarded::new(raw::stdout())
}

/// Standard output, guarded, through a buffer: for a large text (a plan of thousands of
/// actions), written in large chunks instead of one system call a line. Flushed when dropped.
pub fn stdout_buffered() -> Guarded<io::BufWriter<anstream::AutoStream<io::StdoutLock<'static>>>> {
    Guarded::new(io::BufWriter::with_capacity(64 * 1024, raw::stdout()))
}

/// Standard error, guarded (colour handled by anstream).
pub fn stderr() -> Guarded<anstream::AutoStream<io::StderrLock<'static>>> {
    Guarded::new(raw::stderr())
}

/// The log's writer: standard error, guarded.
pub fn log_writer() -> Guarded<io::Stderr> {
    Guarded::new(raw::log())
}

mod redact;

#[cfg(test)]
mod tests;
