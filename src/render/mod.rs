//! The three faces of a plan: text for terminals and CI logs (Terraform-like), JSON
//! (`format_version: 1`, stable), and Markdown for pull-request comments (size-bounded).
//! Pure functions from a [`Plan`] to a `String`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use crate::plan::{Action, ActionKind, Plan};
use crate::util::output::Inert;

mod diff;
pub mod drift;
pub mod environments;
mod fields;
pub mod graph;
mod lines;
mod markdown;
mod modes;
mod multiline;
mod panels;
mod policy;
mod risk;

#[cfg(test)]
use diff::document_diff;
pub use environments::{DriftOf, EnvDrift, EnvFailure, EnvPlan, EnvStage};
pub use markdown::markdown;
pub(crate) use markdown::{cap_details, diff_block};

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
        "{} to create, {} to update, {} to delete, {} to upsert, {} unsupported, {} unchanged.{}",
        s.create,
        s.update,
        s.delete,
        s.upsert,
        s.unsupported,
        s.unchanged,
        modes::summary_tail(plan)
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

/// The Terraform-like text plan, whole: the oracle of [`write_text`], which the commands use.
#[cfg(test)]
pub(crate) fn text(plan: &Plan, opts: TextOptions) -> String {
    let mut all = String::new();
    let _ = text_chunks(plan, opts, |chunk| {
        all.push_str(chunk);
        Ok(())
    });
    all
}

/// The Terraform-like text plan, written as it is made, an action at a time, without holding
/// the whole text of a plan of thousands of actions in memory (the tests hold it to `text`,
/// the whole text made at once).
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
    if plan.actions.is_empty() && plan.observed.is_empty() {
        let _ = writeln!(
            out,
            "\nNo changes: the target matches the manifests ({}).",
            plural(plan.unchanged, "resource", "resources")
        );
    }
    // The risk summary first, worked out from the whole plan before any action is written.
    if !opts.drift {
        let summary = crate::plan::risk::summarize(plan);
        if !summary.is_quiet() {
            out.push_str(&risk::text(&summary, &plan.target));
        } else if let Some(refs) = &summary.secret_references {
            let _ = writeln!(out, "\nSecret references: {}", Inert(refs.sentence()));
        }
        out.push_str(&policy::text_rest(plan));
    }
    sink(&out)?;
    out.clear();
    // Each action's text on all cores (a dashboard's create counts its document's lines), a
    // batch at a time, written in plan order.
    for batch in plan.actions.chunks(256) {
        use rayon::prelude::*;
        let texts: Vec<String> = batch
            .par_iter()
            .map(|a| {
                let mut text = action_text(a, opts);
                if !plan.review.policy.is_empty() {
                    text.push_str(&policy::text_at(plan, &a.address.to_string()));
                }
                text
            })
            .collect();
        for text in &texts {
            sink(text)?;
        }
    }
    out.push_str(&modes::text(plan, opts));
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
        for line in fields::field_lines(a.address.kind, f) {
            let line = line.text();
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

/// The JSON plan as a `Value`, the whole [`crate::plan::file::PlanFile`] built first: the
/// oracle of [`write_json_plan`], which the commands use.
#[cfg(test)]
pub(crate) fn json_plan(plan: &Plan, saved: bool) -> serde_json::Value {
    serde_json::to_value(crate::plan::file::PlanFile::from_plan(plan, saved))
        .unwrap_or(serde_json::Value::Null)
}

/// The JSON plan of docs/product.md §4, pretty-printed with a final newline, written as it is
/// made (see [`crate::plan::file::PlanFileWriter`]). `saved` adds what `apply PLANFILE` needs:
/// the objects to send, the fingerprints of the current objects, step-level dependencies and
/// the guards; one typed format ([`crate::plan::file::PlanFile`]) for both. The tests hold it
/// to `json_plan`, the whole `PlanFile` serialised.
pub fn write_json_plan(
    w: &mut impl std::io::Write,
    plan: &Plan,
    saved: bool,
) -> std::io::Result<()> {
    write_json_document(w, &crate::plan::file::PlanFileWriter { plan, saved }, true)
}

/// The saved plan of `plan --out`: the JSON plan plus what `apply PLANFILE` needs, written
/// compact with a final newline. It is a file for `apply`, shown by `plan` (and by `jq .`):
/// indentation would be a large share of the file, text that `apply` has to read past.
pub fn write_saved_plan(w: &mut impl std::io::Write, plan: &Plan) -> std::io::Result<()> {
    write_json_document(
        w,
        &crate::plan::file::PlanFileWriter { plan, saved: true },
        false,
    )
}

/// A JSON document (pretty or compact) and a final newline, written as it is serialised.
/// serde_json writes in pieces of a few bytes: the writer (the output guard, a file) sees them
/// 64 KiB at a time, not one call a piece.
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

#[cfg(test)]
mod tests;
