//! The three faces of a plan: text for terminals and CI logs (Terraform-like), JSON
//! (`format_version: 1`, stable), and Markdown for pull-request comments (size-bounded).
//! Pure functions from a [`Plan`] to a `String`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use serde_json::Value;

use crate::output::{code_span, Inert, Markdown};
use crate::plan::normalize::FieldChange;
use crate::plan::{Action, ActionKind, Plan};

pub mod graph;
mod lines;
mod multiline;

/// GitHub's comment limit is 65,536 characters; stay well under it.
pub const MARKDOWN_BUDGET: usize = 60_000;

/// How the text plan is shown.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    pub color: bool,
    /// List unmanaged resources one by one.
    pub verbose: bool,
    /// Heading word: "plan" or "drift".
    pub drift: bool,
}

fn style_for(kind: ActionKind, color: bool) -> Style {
    if !color {
        return Style::new();
    }
    let c = match kind {
        ActionKind::Create => AnsiColor::Green,
        ActionKind::Update | ActionKind::Upsert => AnsiColor::Yellow,
        ActionKind::Delete | ActionKind::Unsupported => AnsiColor::Red,
    };
    Style::new().fg_color(Some(c.into()))
}

fn compact(v: &Value) -> String {
    v.to_string()
}

/// A value as one line when short, else pretty-printed.
fn value_lines(v: &Value) -> Vec<String> {
    let one = compact(v);
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

fn is_document(action: &Action, path: &str) -> bool {
    action
        .address
        .kind
        .def()
        .embedded_json
        .iter()
        .any(|e| e.field == path)
}

/// A unified diff of two JSON documents, pretty-printed.
pub fn document_diff(before: Option<&Value>, after: Option<&Value>) -> String {
    let pretty = |v: Option<&Value>| {
        v.map(|v| serde_json::to_string_pretty(v).unwrap_or_default() + "\n")
            .unwrap_or_default()
    };
    let (old, new) = (pretty(before), pretty(after));
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("current", "desired")
        .to_string()
}

/// The field lines of an action, without colour: `~ path: before -> after`.
fn field_lines(action: &Action, f: &FieldChange) -> Vec<String> {
    let mut out = Vec::new();
    if is_document(action, &f.path) && (f.before.is_none() || f.after.is_none()) {
        // An added or removed document shows only its size: counted from its text, as it
        // would be pretty-printed once parsed, without parsing it into a value.
        let doc = f.after.as_ref().or(f.before.as_ref());
        let n = doc.map(lines::document_lines).unwrap_or(0);
        let sign = if f.before.is_none() { '+' } else { '-' };
        out.push(format!(
            "{sign} {}: (JSON document, {n} lines)",
            Inert(&f.path)
        ));
        return out;
    }
    let f = &*crate::plan::normalize::displayed(action.address.kind, f);
    if is_document(action, &f.path) {
        out.push(format!("~ {}:", Inert(&f.path)));
        for line in document_diff(f.before.as_ref(), f.after.as_ref()).lines() {
            out.push(format!("    {line}"));
        }
        return out;
    }
    if let Some(lines) = multiline::field_lines(f) {
        return lines;
    }
    match (&f.before, &f.after) {
        (None, Some(a)) => push_value(&mut out, '+', &f.path, a),
        (Some(b), None) => push_value(&mut out, '-', &f.path, b),
        (Some(b), Some(a)) => {
            let (bl, al) = (value_lines(b), value_lines(a));
            if bl.len() == 1 && al.len() == 1 {
                out.push(format!("~ {}: {} -> {}", Inert(&f.path), bl[0], al[0]));
            } else {
                push_value(&mut out, '-', &f.path, b);
                push_value(&mut out, '+', &f.path, a);
            }
        }
        (None, None) => {}
    }
    out
}

fn push_value(out: &mut Vec<String>, sign: char, path: &str, v: &Value) {
    let lines = value_lines(v);
    let path = Inert(path);
    if lines.len() == 1 {
        out.push(format!("{sign} {path}: {}", lines[0]));
    } else {
        out.push(format!("{sign} {path}:"));
        for l in lines {
            out.push(format!("    {l}"));
        }
    }
}

/// Under a delete that can cascade: what `--force-delete-buckets` would take with it.
fn cascade_lines(a: &Action) -> Vec<String> {
    if a.cascade.is_empty() {
        return vec![];
    }
    let mut out = vec![format!(
        "# with --force-delete-buckets the delete also takes {}:",
        plural(a.cascade.len(), "resource", "resources")
    )];
    for m in &a.cascade {
        let refused = if m.status.may_be_taken() {
            ""
        } else {
            "; apply refuses this"
        };
        out.push(format!(
            "#   {} ({}{refused})",
            m.address,
            m.status.describe()
        ));
    }
    out
}

fn location(a: &Action) -> String {
    a.source
        .as_ref()
        .map(|s| format!("  ({}:{})", Inert(s.file.display()), s.line))
        .unwrap_or_default()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The summary line.
pub fn summary_line(plan: &Plan) -> String {
    let s = plan.summary();
    format!(
        "{} to create, {} to update, {} to delete, {} to upsert, {} unsupported, {} unchanged.",
        s.create, s.update, s.delete, s.upsert, s.unsupported, s.unchanged
    )
}

fn unmanaged_by_kind(plan: &Plan) -> BTreeMap<String, usize> {
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for u in &plan.unmanaged {
        *by_kind
            .entry(u.address.kind.name().to_string())
            .or_default() += 1;
    }
    by_kind
}

/// The Terraform-like text plan.
pub fn text(plan: &Plan, opts: TextOptions) -> String {
    let mut all = String::new();
    let _ = text_chunks(plan, opts, |chunk| {
        all.push_str(chunk);
        Ok(())
    });
    all
}

/// The text plan of [`text`], written as it is made, an action at a time: the same bytes,
/// without holding the whole text of a plan of thousands of actions in memory.
pub fn write_text(
    w: &mut impl std::io::Write,
    plan: &Plan,
    opts: TextOptions,
) -> std::io::Result<()> {
    text_chunks(plan, opts, |chunk| w.write_all(chunk.as_bytes()))
}

/// The text plan in chunks (the heading, each action, the rest), each passed to `sink`.
fn text_chunks(
    plan: &Plan,
    opts: TextOptions,
    mut sink: impl FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = String::new();
    let bold = if opts.color {
        Style::new().bold()
    } else {
        Style::new()
    };
    let word = if opts.drift { "drift" } else { "plan" };
    let _ = writeln!(
        out,
        "{bold}cfgctl {word}{bold:#} for {}",
        Inert(&plan.target)
    );
    if plan.actions.is_empty() {
        let _ = writeln!(
            out,
            "\nNo changes: the target matches the manifests ({}).",
            plural(plan.unchanged, "resource", "resources")
        );
    }
    sink(&out)?;
    out.clear();
    // Each action's text on all cores (a dashboard's create counts its document's lines), a
    // batch at a time, written in plan order.
    for batch in plan.actions.chunks(256) {
        use rayon::prelude::*;
        let texts: Vec<String> = batch.par_iter().map(|a| action_text(a, opts)).collect();
        for text in &texts {
            sink(text)?;
        }
    }
    if !plan.unmanaged.is_empty() {
        let parts: Vec<String> = unmanaged_by_kind(plan)
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let in_scope = plan.unmanaged.iter().filter(|u| u.in_prune_scope).count();
        let _ = writeln!(
            out,
            "\nUnmanaged: {} on the target {} not in the manifests ({}){}{}",
            plural(plan.unmanaged.len(), "resource", "resources"),
            if plan.unmanaged.len() == 1 {
                "is"
            } else {
                "are"
            },
            parts.join(", "),
            if in_scope > 0 {
                format!("; {in_scope} inside the prune scope (deleted by --prune)")
            } else {
                String::new()
            },
            if opts.verbose {
                ":"
            } else {
                "; -v lists them."
            }
        );
        if opts.verbose {
            for u in &plan.unmanaged {
                let mark = if u.in_prune_scope {
                    " (prune scope)"
                } else {
                    ""
                };
                let _ = writeln!(out, "  ? {}{mark}", Inert(&u.address));
            }
        }
    }
    for w in plan
        .warnings
        .iter()
        .cloned()
        .chain(plan.guard_violations.iter().map(|g| g.to_string()))
    {
        let _ = writeln!(out, "\nWarning: {}", Inert(&w));
    }
    let _ = writeln!(out, "\n{bold}Plan:{bold:#} {}", summary_line(plan));
    sink(&out)
}

/// The text of one action in the text plan.
fn action_text(a: &Action, opts: TextOptions) -> String {
    let mut out = String::new();
    let st = style_for(a.action, opts.color);
    let _ = writeln!(
        out,
        "\n  {st}{} {}{st:#}{}",
        a.action.symbol(),
        Inert(&a.address),
        location(a)
    );
    match a.action {
        ActionKind::Unsupported => {
            let intended = a.intended.map(ActionKind::as_str).unwrap_or("change");
            let _ = writeln!(
                out,
                "      unsupported {intended}: {}",
                Inert(a.reason.as_deref().unwrap_or(""))
            );
        }
        _ => {
            if let Some(r) = &a.reason {
                let _ = writeln!(out, "      # {}", Inert(r));
            }
        }
    }
    for line in cascade_lines(a) {
        let _ = writeln!(out, "      {line}");
    }
    for f in a.shown_fields().iter() {
        for line in field_lines(a, f) {
            let sign = line.chars().next().unwrap_or(' ');
            let fs = match sign {
                '+' => style_for(ActionKind::Create, opts.color),
                '-' => style_for(ActionKind::Delete, opts.color),
                '~' => style_for(ActionKind::Update, opts.color),
                _ => Style::new(),
            };
            let _ = writeln!(out, "      {fs}{line}{fs:#}");
        }
    }
    out
}

/// The JSON plan of PRODUCT.md §4. `saved` adds what `apply PLANFILE` needs: the objects to
/// send, the fingerprints of the current objects, step-level dependencies and the guards.
/// One typed format ([`crate::plan::file::PlanFile`]) for both.
pub fn json_plan(plan: &Plan, saved: bool) -> Value {
    serde_json::to_value(crate::plan::file::PlanFile::from_plan(plan, saved)).unwrap_or(Value::Null)
}

/// The JSON plan, pretty-printed with a final newline, written as it is made (see
/// [`crate::plan::file::PlanFileWriter`]): the same bytes as `json_plan` pretty-printed.
pub fn write_json_plan(
    w: &mut impl std::io::Write,
    plan: &Plan,
    saved: bool,
) -> std::io::Result<()> {
    write_json_document(w, &crate::plan::file::PlanFileWriter { plan, saved }, true)
}

/// The saved plan of `plan --out`: the JSON plan plus what `apply PLANFILE` needs, written
/// compact with a final newline. It is a file for `apply`, shown by `plan` (and by `jq .`):
/// its indentation was 40% of the file, text that `apply` has to read past.
pub fn write_saved_plan(w: &mut impl std::io::Write, plan: &Plan) -> std::io::Result<()> {
    write_json_document(
        w,
        &crate::plan::file::PlanFileWriter { plan, saved: true },
        false,
    )
}

/// A JSON document (pretty or compact) and a final newline, written as it is serialised.
/// serde_json writes in pieces of a few bytes: the writer (the output guard, a file) sees them
/// 64 KiB at a time (a 10,000-create JSON plan: 1.2 -> 1.0 s).
pub(crate) fn write_json_document(
    w: &mut impl std::io::Write,
    doc: &impl serde::Serialize,
    pretty: bool,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut w = std::io::BufWriter::with_capacity(64 * 1024, w);
    if pretty {
        serde_json::to_writer_pretty(&mut w, doc)?;
    } else {
        serde_json::to_writer(&mut w, doc)?;
    }
    w.write_all(b"\n")?;
    w.flush()
}

fn markdown_details(a: &Action) -> String {
    let mut body = String::new();
    if let Some(r) = &a.reason {
        let _ = writeln!(body, "# {}", Inert(r));
    }
    for line in cascade_lines(a) {
        let _ = writeln!(body, "{line}");
    }
    for f in a.shown_fields().iter() {
        for line in field_lines(a, f) {
            let _ = writeln!(body, "{line}");
        }
    }
    cap_details(&mut body, "plan");
    let loc = a
        .source
        .as_ref()
        .map(|s| format!(" — <code>{}:{}</code>", Markdown(s.file.display()), s.line))
        .unwrap_or_default();
    let mut out = format!(
        "<details><summary><code>{} {}</code> <b>{}</b>{loc}</summary>\n\n",
        a.action.symbol(),
        a.action.as_str(),
        Markdown(&a.address)
    );
    if body.is_empty() {
        out.push_str("_no field details_\n");
    } else {
        let _ = write!(out, "{}", diff_block(&body));
    }
    out.push_str("\n</details>\n");
    out
}

/// One resource may not eat the whole comment: its details are cut at 20,000 bytes, with a note
/// naming the command (`plan`, `drift`) that shows all of it.
pub(crate) fn cap_details(body: &mut String, command: &str) {
    const PER_RESOURCE: usize = 20_000;
    if body.len() > PER_RESOURCE {
        let mut cut = PER_RESOURCE;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push_str(&format!(
            "\n… (diff truncated; run cfgctl {command} for all of it)\n"
        ));
    }
}

/// A `diff` code block around `body`, fenced longer than any run of backticks in it.
pub(crate) fn diff_block(body: &str) -> String {
    let fence = "`".repeat(
        body.split(|c| c != '`')
            .map(str::len)
            .max()
            .unwrap_or(0)
            .max(2)
            + 1,
    );
    format!("{fence}diff\n{body}{fence}\n")
}

/// The Markdown plan for a pull-request comment, at most `budget` characters.
pub fn markdown(plan: &Plan, budget: usize, drift: bool) -> String {
    let s = plan.summary();
    let mut head = String::new();
    let word = if drift { "drift" } else { "plan" };
    let _ = writeln!(head, "### cfgctl {word} for {}\n", code_span(&plan.target));
    let _ = writeln!(head, "**{}**\n", summary_line(plan));
    let _ = writeln!(head, "| action | resources |\n|---|---:|");
    for (label, n) in [
        ("`+` create", s.create),
        ("`~` update", s.update),
        ("`-` delete", s.delete),
        ("`^` upsert", s.upsert),
        ("`!` unsupported", s.unsupported),
        ("unchanged", s.unchanged),
        ("unmanaged", plan.unmanaged.len()),
    ] {
        let _ = writeln!(head, "| {label} | {n} |");
    }
    head.push('\n');
    let mut tail = String::new();
    for w in plan
        .warnings
        .iter()
        .cloned()
        .chain(plan.guard_violations.iter().map(|g| g.to_string()))
    {
        let _ = writeln!(tail, "> **Warning:** {}\n", Markdown(&w));
    }
    if !plan.unmanaged.is_empty() {
        let parts: Vec<String> = unmanaged_by_kind(plan)
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let _ = writeln!(
            tail,
            "Unmanaged on the target (not in the manifests): {}.\n",
            parts.join(", ")
        );
    }
    const NOTE_RESERVE: usize = 300;
    let mut out = head;
    if !drift {
        let room = (budget / 5).min(budget.saturating_sub(out.len() + tail.len() + NOTE_RESERVE));
        if let Some(diagram) = graph::markdown_section(plan, room) {
            out.push_str(&diagram);
        }
    }
    let mut shown = 0;
    for a in &plan.actions {
        let d = markdown_details(a);
        if out.len() + d.len() + tail.len() + NOTE_RESERVE > budget {
            break;
        }
        out.push_str(&d);
        shown += 1;
    }
    let left = plan.actions.len() - shown;
    if left > 0 {
        let _ = writeln!(
            out,
            "\n> **{} not shown:** the comment is kept under {budget} characters. Run `cfgctl plan` for the full plan.\n",
            plural(left, "more resource", "more resources")
        );
    }
    out.push('\n');
    out.push_str(&tail);
    out
}

#[cfg(test)]
mod tests;
