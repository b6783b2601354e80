//! The lines of one field change, shared by the plan and the drift report, in text and in
//! Markdown. A line knows what it is ([`Line`]), so each form lays it out its own way: the
//! text indents a diff or a value's block under its field; the Markdown plan puts every `+`/`-`
//! line at column 0 inside its ```` ```diff ```` block, where GitHub colours it.
//!
//! Both read a change the plan's way: `before` is the target's value, `after` the manifests'.

use serde_json::Value;

use super::{lines, multiline};
use crate::output::Inert;
use crate::plan::normalize::FieldChange;
use crate::registry::Kind;

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
    /// The field's own line, starting with its sign: `~ path: a -> b`, `+ path:`.
    Head(String),
    /// The `---`/`+++` header of a unified diff under a `~` head.
    DiffHeader(String),
    /// A line of a unified diff (`@@ …`, `-old`, `+new`, ` context`).
    Diff(String),
    /// A line of a value shown under a `+`/`-` head (a pretty-printed JSON value, a
    /// multi-line string), with the head's sign.
    Body(char, String),
}

impl Line {
    /// The line in the text plan: diffs and values indented under their field.
    pub(crate) fn text(&self) -> String {
        match self {
            Line::Head(s) => s.clone(),
            Line::DiffHeader(s) | Line::Diff(s) | Line::Body(_, s) => format!("    {s}"),
        }
    }

    /// The line inside a Markdown ```` ```diff ```` block, or `None` when it is left out: a
    /// diff's line at column 0 (so GitHub colours `+`/`-`), a value's line after its sign (as
    /// wide as the text's indent), no `---`/`+++` header (GitHub would colour it as a change).
    pub(crate) fn markdown(&self) -> Option<String> {
        match self {
            Line::Head(s) | Line::Diff(s) => Some(s.clone()),
            Line::DiffHeader(_) => None,
            Line::Body(sign, s) => Some(format!("{sign}   {s}")),
        }
    }
}

/// The lines of a unified diff: the header apart from the rest, each line inert.
pub(crate) fn diff_lines(diff: &str) -> Vec<Line> {
    let mut hunks = false;
    diff.lines()
        .map(|l| {
            hunks |= l.starts_with("@@");
            let l = multiline::inert_line(l);
            if hunks {
                Line::Diff(l)
            } else {
                Line::DiffHeader(l)
            }
        })
        .collect()
}

/// A unified diff of two JSON documents, pretty-printed.
pub(crate) fn document_diff(before: Option<&Value>, after: Option<&Value>, sides: Sides) -> String {
    let pretty = |v: Option<&Value>| {
        v.map(|v| serde_json::to_string_pretty(v).unwrap_or_default() + "\n")
            .unwrap_or_default()
    };
    let (old, new) = (pretty(before), pretty(after));
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(sides.before, sides.after)
        .to_string()
}

/// A value as one line when short, else pretty-printed.
fn value_lines(v: &Value) -> Vec<String> {
    let one = v.to_string();
    if one.len() <= 100 {
        vec![one]
    } else {
        serde_json::to_string_pretty(v)
            .unwrap_or(one)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn is_document(kind: Kind, path: &str) -> bool {
    kind.def().embedded_json.iter().any(|e| e.field == path)
}

/// Documents and multi-line strings: an added or removed document's size, a diff of a changed
/// one, a multi-line string as a block or a line diff. `None` for any other field.
fn special_lines(kind: Kind, f: &FieldChange, sides: Sides) -> Option<Vec<Line>> {
    if is_document(kind, &f.path) && (f.before.is_none() || f.after.is_none()) {
        // Only its size: counted from its text, as it would be pretty-printed once parsed,
        // without parsing it into a value.
        let doc = f.after.as_ref().or(f.before.as_ref());
        let n = doc.map(lines::document_lines).unwrap_or(0);
        let sign = if f.before.is_none() { '+' } else { '-' };
        return Some(vec![Line::Head(format!(
            "{sign} {}: (JSON document, {n} lines)",
            Inert(&f.path)
        ))]);
    }
    let f = &*crate::plan::normalize::displayed(kind, f);
    if is_document(kind, &f.path) {
        let mut out = vec![Line::Head(format!("~ {}:", Inert(&f.path)))];
        out.extend(diff_lines(&document_diff(
            f.before.as_ref(),
            f.after.as_ref(),
            sides,
        )));
        return Some(out);
    }
    multiline::field_lines(f, sides)
}

/// The plan's lines of a field change: `~ path: before -> after`, `+ path: value`, ...
pub(crate) fn field_lines(kind: Kind, f: &FieldChange) -> Vec<Line> {
    // A secret field (or an object holding one) is shown masked, never its reference or value.
    let masked = crate::plan::normalize::secret::mask(kind, f);
    let f = masked.as_ref().unwrap_or(f);
    if let Some(lines) = special_lines(kind, f, PLAN) {
        return lines;
    }
    let mut out = Vec::new();
    match (&f.before, &f.after) {
        (None, Some(a)) => push_value(&mut out, '+', &f.path, a),
        (Some(b), None) => push_value(&mut out, '-', &f.path, b),
        (Some(b), Some(a)) => {
            let (bl, al) = (value_lines(b), value_lines(a));
            if bl.len() == 1 && al.len() == 1 {
                out.push(Line::Head(format!(
                    "~ {}: {} -> {}",
                    Inert(&f.path),
                    Inert(&bl[0]),
                    Inert(&al[0])
                )));
            } else {
                push_value(&mut out, '-', &f.path, b);
                push_value(&mut out, '+', &f.path, a);
            }
        }
        (None, None) => {}
    }
    out
}

fn push_value(out: &mut Vec<Line>, sign: char, path: &str, v: &Value) {
    let lines = value_lines(v);
    let path = Inert(path);
    if lines.len() == 1 {
        out.push(Line::Head(format!("{sign} {path}: {}", Inert(&lines[0]))));
    } else {
        out.push(Line::Head(format!("{sign} {path}:")));
        out.extend(lines.iter().map(|l| Line::Body(sign, Inert(l).to_string())));
    }
}

/// The drift report's lines of a field change, in the plan's direction and named neutrally:
/// `~ path: target has a, manifests have b`; a member or field on one side only says which.
pub(crate) fn drift_field_lines(kind: Kind, f: &FieldChange) -> Vec<Line> {
    let masked = crate::plan::normalize::secret::mask(kind, f);
    let f = masked.as_ref().unwrap_or(f);
    if let Some(lines) = special_lines(kind, f, DRIFT) {
        return lines;
    }
    let v = |v: &Value| Inert(v.to_string()).to_string();
    let path = Inert(&f.path);
    match (&f.before, &f.after) {
        (Some(t), Some(m)) => vec![Line::Head(format!(
            "~ {path}: target has {}, manifests have {}",
            v(t),
            v(m)
        ))],
        (None, Some(m)) => vec![Line::Head(format!(
            "+ {path}: {} (only in the manifests)",
            v(m)
        ))],
        (Some(t), None) => vec![Line::Head(format!(
            "- {path}: {} (only on the target)",
            v(t)
        ))],
        (None, None) => vec![],
    }
}
