//! The lines of one field change, shared by the plan and the drift report, in text and in
//! Markdown (the line types and diffs are [`super::diff`]'s). A changed dashboard is shown
//! panel by panel ([`super::panels`]).
//!
//! Both read a change the plan's way: `before` is the target's value, `after` the manifests'.

use serde_json::Value;

use super::diff::{diff_lines, document_diff, Sides};
pub(crate) use super::diff::{Line, DRIFT, PLAN};
use super::{lines, multiline, panels};
use crate::api::registry::Kind;
use crate::plan::normalize::FieldChange;
use crate::util::output::Inert;

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
        // A dashboard: panel by panel, each part headed by the panel it is in.
        if let (Some(before), Some(after)) = (&f.before, &f.after) {
            if let Some(parts) = panels::document_lines(before, after, sides) {
                out.extend(parts);
                return Some(out);
            }
        }
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
    // A secret field (or an object holding one) is shown masked, never its value; a changed
    // reference (`--base`) as both references.
    let masked = crate::plan::normalize::secret::mask(kind, f);
    let f = masked.as_ref().unwrap_or(f);
    if let Some(line) = reference_line(kind, f) {
        return vec![line];
    }
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
                out.push(Line::Change {
                    path: Inert(&f.path).to_string(),
                    before: Inert(&bl[0]).to_string(),
                    after: Inert(&al[0]).to_string(),
                });
            } else {
                push_value(&mut out, '-', &f.path, b);
                push_value(&mut out, '+', &f.path, a);
            }
        }
        (None, None) => {}
    }
    out
}

/// `~ path: (sensitive) ${env:A} -> ${env:B}`: a secret field whose reference changed.
fn reference_line(kind: Kind, f: &FieldChange) -> Option<Line> {
    if !crate::api::registry::is_secret_path(kind.def().secrets, &f.path) {
        return None;
    }
    let (before, after) = crate::plan::normalize::secret::reference_change(f)?;
    Some(Line::Change {
        path: Inert(&f.path).to_string(),
        before: format!("{} {}", crate::api::registry::SHOWN, Inert(before)),
        after: Inert(after).to_string(),
    })
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
    if let Some(line) = reference_line(kind, f) {
        return vec![line];
    }
    if let Some(lines) = special_lines(kind, f, DRIFT) {
        return lines;
    }
    let v = |v: &Value| Inert(v.to_string()).to_string();
    let path = Inert(&f.path);
    match (&f.before, &f.after) {
        (Some(t), Some(m)) => vec![Line::Drifted {
            path: path.to_string(),
            target: v(t),
            manifests: v(m),
        }],
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
