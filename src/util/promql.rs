//! PromQL checked offline: a query, expression, label selector or SLO query template parsed by
//! `promql-parser`, a syntax error located at the byte of the text that caused it.
//!
//! The crate says what is wrong but not where; this module finds where: a lexer error at the
//! shortest prefix that fails the same way, a grammar error by running the crate's own grammar
//! (`promql/promql.y`, the copy of the pinned version's) through `lrpar` without actions (it
//! reports the offending token's span), and an error of an action at the token its message
//! quotes. Placeholders (`{{ .Window }}` in a template, `$name` variables inside a selector)
//! are stood in for by something parseable in their place, and offsets mapped back.

use std::borrow::Cow;
use std::sync::OnceLock;

use cfgrammar::yacc::{YaccGrammar, YaccKind};
use lrpar::{LexParseError, Lexeme, NonStreamingLexer, RTParserBuilder};
use lrtable::StateTable;

pub mod threshold;

/// How a field's text is read (derived from the field's description, see the registry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Form {
    /// A label selector without its braces (`service="checkout"`).
    pub selector: bool,
    /// Go template placeholders (`{{ .Window }}`) stand for parts of the query.
    pub template: bool,
    /// `$name` inside a selector stands for a label matcher (a derived metric's variables).
    pub variables: bool,
}

/// A syntax error: the parser's message and the byte offset in the text it is about
/// (`text.len()` for the end of the text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

/// The longest text the offline check reads, and the most tokens it parses. promql-parser's
/// parse takes time quadratic in the number of tokens (`1+1+...`: a second at 20,000 terms,
/// a minute at 150,000) and recurses as deep as the expression nests; a pull request may hold
/// any text, so a longer one is an error at its field rather than a hang (R4-9). Real queries
/// are far shorter; at these sizes the lexer (linear) and the parse take a few milliseconds,
/// and the nesting fits any thread's stack.
pub const MAX_BYTES: usize = 64 * 1024;
/// See [`MAX_BYTES`].
pub const MAX_TOKENS: usize = 4000;

/// Parses `text` as `form` says. A text that parsed once in this process is not parsed again
/// (the same query is often in many manifests; only successes are remembered, by a keyed
/// 64-bit hash, so an error is always worked out and located).
pub fn check(text: &str, form: Form) -> Result<(), SyntaxError> {
    use std::collections::HashSet;
    use std::hash::BuildHasher;
    use std::sync::Mutex;
    static PARSED: OnceLock<(std::collections::hash_map::RandomState, Mutex<HashSet<u64>>)> =
        OnceLock::new();
    if text.len() > MAX_BYTES {
        return Err(SyntaxError {
            offset: 0,
            message: format!(
                "{} bytes, too long to check offline (at most {MAX_BYTES}): split the query",
                text.len()
            ),
        });
    }
    let (keys, parsed) = PARSED.get_or_init(Default::default);
    let id = keys.hash_one((text, form));
    if parsed.lock().is_ok_and(|p| p.contains(&id)) {
        return Ok(());
    }
    parse(text, form)?;
    if let Ok(mut p) = parsed.lock() {
        p.insert(id);
    }
    Ok(())
}

/// Parses `text` as `form` says, every time (`check`'s oracle).
fn parse(text: &str, form: Form) -> Result<(), SyntaxError> {
    let standin = StandIn::new(text, form);
    if let Ok(lexer) = promql_parser::parser::lexer(&standin.text) {
        // The lexer ends with an end-of-input token: not one of the text's.
        let tokens = lrpar::Lexer::iter(&lexer).count().saturating_sub(1);
        if tokens > MAX_TOKENS {
            return Err(SyntaxError {
                offset: 0,
                message: format!(
                    "{tokens} tokens, too many to check offline (at most {MAX_TOKENS}): split the query"
                ),
            });
        }
    }
    match promql_parser::parser::parse(&standin.text) {
        Ok(_) => Ok(()),
        Err(mut message) => {
            let at = locate(&standin.text, &message);
            if message == "invalid promql query" {
                // The crate says no more: name what the grammar refused.
                let rest = standin.text.get(at..).unwrap_or("").trim_end();
                let token = promql_parser::parser::lexer(&standin.text)
                    .ok()
                    .and_then(|l| {
                        lrpar::Lexer::iter(&l)
                            .flatten()
                            .find(|t| t.span().start() == at)
                            .map(|t| l.span_str(t.span()).to_string())
                    });
                message = match token {
                    _ if rest.is_empty() => format!("{message}: unexpected end of the query"),
                    Some(t) if !t.is_empty() => format!("{message}: unexpected `{t}`"),
                    _ => message,
                };
            }
            Err(SyntaxError {
                offset: standin.original(at).min(text.len()),
                message,
            })
        }
    }
}

/// The text given to the parser, and the stretches of it that stand for something else.
struct StandIn<'a> {
    text: Cow<'a, str>,
    /// (offset in `text`, its length, offset in the original, the original's length).
    replaced: Vec<(usize, usize, usize, usize)>,
}

impl<'a> StandIn<'a> {
    fn new(original: &'a str, form: Form) -> StandIn<'a> {
        let needs = form.selector
            || (form.template && original.contains("{{"))
            || (form.variables && original.contains('$'));
        if !needs {
            return StandIn {
                text: Cow::Borrowed(original),
                replaced: Vec::new(),
            };
        }
        let mut out = StandIn {
            text: Cow::Owned(String::with_capacity(original.len() + 16)),
            replaced: Vec::new(),
        };
        if form.selector {
            out.push_replaced("{", 0, 0);
        }
        out.scan(original, form);
        if form.selector {
            out.push_replaced("}", original.len(), 0);
        }
        out
    }

    fn buf(&mut self) -> &mut String {
        self.text.to_mut()
    }

    fn push_replaced(&mut self, with: &str, at: usize, len: usize) {
        let start = self.text.len();
        self.buf().push_str(with);
        self.replaced.push((start, with.len(), at, len));
    }

    /// Copies `original`, standing in for placeholders by what the context they are in takes:
    /// a duration inside `[]`, a label matcher inside `{}`, a label name in a grouping, a
    /// number elsewhere.
    fn scan(&mut self, original: &str, form: Form) {
        // The open brackets, `(` marked when it follows a grouping keyword.
        let mut open: Vec<(u8, bool)> = Vec::new();
        if form.selector {
            open.push((b'{', false));
        }
        let bytes = original.as_bytes();
        let mut i = 0;
        let mut quote: Option<u8> = None;
        while i < bytes.len() {
            let b = bytes[i];
            if form.template && original[i..].starts_with("{{") {
                if let Some(end) = original[i + 2..].find("}}") {
                    let len = end + 4;
                    let with = if quote.is_some() {
                        "x"
                    } else {
                        match open.last() {
                            Some((b'[', _)) => "5m",
                            Some((b'{', _)) => "__placeholder__=~\".+\"",
                            Some((b'(', true)) => "__placeholder__",
                            _ => "1",
                        }
                    };
                    self.push_replaced(with, i, len);
                    i += len;
                    continue;
                }
            }
            if let Some(q) = quote {
                if b == b'\\' && q != b'`' {
                    self.buf().push_str(&original[i..(i + 2).min(bytes.len())]);
                    i += 2;
                    continue;
                }
                if b == q {
                    quote = None;
                }
            } else if form.variables && b == b'$' && matches!(open.last(), Some((b'{', _))) {
                let name_len = original[i + 1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(original.len() - i - 1);
                if name_len > 0 {
                    let with = format!("{}=~\".+\"", &original[i + 1..i + 1 + name_len]);
                    self.push_replaced(&with, i, name_len + 1);
                    i += name_len + 1;
                    continue;
                }
            } else {
                match b {
                    b'"' | b'\'' | b'`' => quote = Some(b),
                    b'(' => open.push((b'(', follows_grouping(&original[..i]))),
                    b'[' | b'{' => open.push((b, false)),
                    b')' | b']' | b'}' => {
                        open.pop();
                    }
                    _ => {}
                }
            }
            let len = original[i..].chars().next().map_or(1, char::len_utf8);
            self.buf().push_str(&original[i..i + len]);
            i += len;
        }
    }

    /// The offset in the original text of `at`, an offset in the stand-in text.
    fn original(&self, at: usize) -> usize {
        let mut shift: isize = 0;
        for &(start, len, orig, orig_len) in &self.replaced {
            if at < start {
                break;
            }
            if at < start + len {
                return orig;
            }
            shift += orig_len as isize - len as isize;
        }
        at.saturating_add_signed(shift)
    }
}

fn follows_grouping(before: &str) -> bool {
    let word = before
        .trim_end()
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    matches!(
        word.to_ascii_lowercase().as_str(),
        "by" | "without" | "on" | "ignoring" | "group_left" | "group_right"
    )
}

/// How many bytes the search for a lexer error's place lexes prefix by prefix before it bisects.
const SCAN_BYTES: usize = 1 << 22;

/// Where in `text` the parser's `message` is about.
fn locate(text: &str, message: &str) -> usize {
    let lexed = promql_parser::parser::lexer(text);
    let Ok(lexer) = lexed else {
        // The lexer stops at its first error: the shortest prefix failing the same way ends
        // with the character at fault. Prefixes are tried in order while that lexes little
        // (a long text would be lexed once per character: quadratic); past that, the text is
        // bisected (every longer prefix fails the same way, but for an error about the end of
        // the input, which a shorter prefix may also meet: the place found is then a later one).
        let ends = text
            .char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .collect::<Vec<_>>();
        let fails = |end: usize| {
            promql_parser::parser::lexer(&text[..end]).err().as_deref() == Some(message)
        };
        let mut lexed = 0;
        let scanned = ends.iter().take_while(|&&end| {
            lexed += end;
            lexed <= SCAN_BYTES
        });
        let first = match scanned.copied().find(|&end| fails(end)) {
            Some(end) => Some(end),
            None => ends
                .get(ends.partition_point(|&end| !fails(end)))
                .copied()
                .filter(|&end| fails(end)),
        };
        return match first {
            Some(end) => text[..end].char_indices().next_back().map_or(0, |(i, _)| i),
            None => text.len(),
        };
    };
    if let Some(at) = grammar_error(&lexer) {
        // The end of the input: just after its last character.
        return at.min(text.trim_end().len());
    }
    if message.starts_with("unexpected end of input") {
        return text.trim_end().len();
    }
    // An action's error: at the token its message quotes (`'rate'`, `'and'`), else at the start.
    let quoted = message
        .split('\'')
        .nth(1)
        .filter(|q| !q.is_empty() && message.matches('\'').count() >= 2);
    if let Some(q) = quoted {
        for lexeme in lrpar::Lexer::iter(&lexer).flatten() {
            let span = lexeme.span();
            if lexer.span_str(span) == q {
                return span.start();
            }
        }
    }
    0
}

/// The start of the token the grammar refuses, if it refuses one.
fn grammar_error(
    lexer: &lrlex::LRNonStreamingLexer<'_, '_, lrlex::DefaultLexerTypes<u16>>,
) -> Option<usize> {
    let (grammar, table) = grammar()?;
    let errors: Vec<LexParseError<u16, lrlex::DefaultLexerTypes<u16>>> =
        RTParserBuilder::new(grammar, table)
            .recoverer(lrpar::RecoveryKind::None)
            .parse_map(lexer, &|_| (), &|_, _| ())
            .1;
    errors.first().map(|e| match e {
        LexParseError::ParseError(p) => p.lexeme().span().start(),
        LexParseError::LexError(l) => lrpar::LexError::span(l).start(),
    })
}

type Grammar = (YaccGrammar<u16>, StateTable<u16>);

/// promql-parser's grammar and its table, built on the first error only: a repository whose
/// queries all parse never pays for building it (docs/performance.md).
fn grammar() -> Option<&'static Grammar> {
    static GRAMMAR: OnceLock<Option<Grammar>> = OnceLock::new();
    GRAMMAR
        .get_or_init(|| {
            let grammar = YaccGrammar::<u16>::new_with_storaget(
                YaccKind::Grmtools,
                include_str!("promql/promql.y"),
            )
            .ok()?;
            let (_, table) = lrtable::from_yacc(&grammar, lrtable::Minimiser::Pager).ok()?;
            Some((grammar, table))
        })
        .as_ref()
}

#[cfg(test)]
mod tests;
