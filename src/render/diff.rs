//! The shown lines of a change and the unified diffs they carry: the leaf that the field
//! lines (`fields`), multi-line strings (`multiline`) and dashboard panels (`panels`) all build
//! on, so none of them imports another's helpers back (no import circle).
//!
//! A line knows what it is ([`Line`]), so each form lays it out its own way: the text indents a
//! diff or a value's block under its field; the Markdown plan puts every `+`/`-` line at
//! column 0 inside its ```` ```diff ```` block, where GitHub colours it.

use std::fmt::Write as _;

use serde_json::Value;

/// What the two sides of a change are called in a unified diff's header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sides {
    pub before: &'static str,
    pub after: &'static str,
}

/// The plan's words: what the target has now, what the manifests want.
pub(crate) const PLAN: Sides = Sides {
    before: "current",
    after: "desired",
};

/// The drift report's: the same direction, named neutrally.
pub(crate) const DRIFT: Sides = Sides {
    before: "target",
    after: "manifests",
};

/// One shown line of a field change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// The field's own line, starting with its sign: `+ path: a`, `~ path:` (a diff follows).
    Head(String),
    /// A value changed in place, each side on one line (`path`, `before`, `after` printable
    /// already): `~ path: a -> b` in the text; a `-` old / `+` new pair in Markdown.
    Change {
        path: String,
        before: String,
        after: String,
    },
    /// The drift report's [`Line::Change`]: `~ path: target has a, manifests have b`.
    Drifted {
        path: String,
        target: String,
        manifests: String,
    },
    /// The `---`/`+++` header of a unified diff under a `~` head.
    DiffHeader(String),
    /// A line of a unified diff (`@@ …`, `-old`, `+new`, ` context`).
    Diff(String),
    /// A line of a value shown under a `+`/`-` head (a pretty-printed JSON value, a
    /// multi-line string), with the head's sign.
    Body(char, String),
    /// The head of one part of a document (a dashboard's panel, what lies outside its
    /// panels), under the field's head: `~ panels[3] "Latency": moved: ...`.
    Part(String),
    /// A line of a part's unified diff, under the part's head.
    PartDiff(String),
}

impl Line {
    /// The line in the text plan: diffs and values indented under their field, a part's
    /// diff under its part.
    pub(crate) fn text(&self) -> String {
        match self {
            Line::Head(s) => s.clone(),
            Line::Change {
                path,
                before,
                after,
            } => format!("~ {path}: {before} -> {after}"),
            Line::Drifted {
                path,
                target,
                manifests,
            } => format!("~ {path}: target has {target}, manifests have {manifests}"),
            Line::DiffHeader(s) | Line::Diff(s) | Line::Body(_, s) | Line::Part(s) => {
                format!("    {s}")
            }
            Line::PartDiff(s) => format!("        {s}"),
        }
    }

    /// The line inside a Markdown ```` ```diff ```` block, or `None` when it is left out: a
    /// diff's line at column 0 (so GitHub colours `+`/`-`), a value's line after its sign (as
    /// wide as the text's indent), no `---`/`+++` header (GitHub would colour it as a change).
    /// No line starts with `~`, which GitHub leaves grey: a changed value is a `-` old / `+`
    /// new pair (two lines), and the head of a diff (`~ path:`, a panel's `~ …:`) an `@@ … @@`
    /// line.
    pub(crate) fn markdown(&self) -> Option<String> {
        match self {
            Line::Change {
                path,
                before,
                after,
            } => Some(format!("- {path}: {before}\n+ {path}: {after}")),
            Line::Drifted {
                path,
                target,
                manifests,
            } => Some(format!(
                "- {path}: {target} (target)\n+ {path}: {manifests} (manifests)"
            )),
            Line::Head(s) | Line::Part(s) if s.starts_with("~ ") => {
                let head = s[2..].strip_suffix(':').unwrap_or(&s[2..]);
                Some(format!("@@ {head} @@"))
            }
            Line::Head(s) | Line::Diff(s) | Line::Part(s) | Line::PartDiff(s) => Some(s.clone()),
            Line::DiffHeader(_) => None,
            Line::Body(sign, s) => Some(format!("{sign}   {s}")),
        }
    }

    /// Whether the line belongs to a unified diff (whose `-`/`+` need their sides named).
    pub(crate) fn is_diff(&self) -> bool {
        matches!(self, Line::Diff(_) | Line::PartDiff(_))
    }
}

/// One line of a string, made safe to print: control characters (but tab) and the Unicode
/// bidirectional controls become `\u{..}` escapes, so a value cannot move the cursor, clear
/// the screen or reorder what is shown around it.
pub(crate) fn inert_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if (c.is_control() && c != '\t') || bidi {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The lines of a unified diff: the header apart from the rest, each line inert.
pub(crate) fn diff_lines(diff: &str) -> Vec<Line> {
    let mut hunks = false;
    diff.lines()
        .map(|l| {
            hunks |= l.starts_with("@@");
            let l = inert_line(l);
            if hunks {
                Line::Diff(l)
            } else {
                Line::DiffHeader(l)
            }
        })
        .collect()
}

/// A JSON value pretty-printed, with a final line break; nothing for `None`.
pub(crate) fn pretty(v: Option<&Value>) -> String {
    v.map(|v| serde_json::to_string_pretty(v).unwrap_or_default() + "\n")
        .unwrap_or_default()
}

/// A unified diff of two JSON documents, pretty-printed.
pub(crate) fn document_diff(before: Option<&Value>, after: Option<&Value>, sides: Sides) -> String {
    let (old, new) = (pretty(before), pretty(after));
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(sides.before, sides.after)
        .to_string()
}

/// The hunks of a unified diff of two texts that end with a line break, without a header
/// (the document's header names the sides once), each hunk's `@@` line naming the part it is
/// in, as git names a hunk's function; each line inert.
pub(crate) fn hunk_lines(before: &str, after: &str, part: &str) -> Vec<Line> {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .to_string()
        .lines()
        .map(|l| {
            if l.starts_with("@@") {
                Line::PartDiff(inert_line(&format!("{l} {part}")))
            } else {
                Line::PartDiff(inert_line(l))
            }
        })
        .collect()
}

/// A unified diff of two texts, line by line, headed with the names of the two sides.
pub(crate) fn text_diff(before: &str, after: &str, sides: Sides) -> String {
    // When neither ends with a newline, add one to both: the diff then has no
    // "no newline at end of file" notes that say nothing about the change.
    let (b, a) = if !before.ends_with('\n') && !after.ends_with('\n') {
        (format!("{before}\n"), format!("{after}\n"))
    } else {
        (before.to_string(), after.to_string())
    };
    similar::TextDiff::from_lines(&b, &a)
        .unified_diff()
        .context_radius(3)
        .header(sides.before, sides.after)
        .to_string()
}
