//! What the management modes add to the text and Markdown plans: the observed differences
//! (shown, never sent) and the orphaned resources (in no manifest, kept by their mode).

use std::fmt::Write as _;

use super::{action_text, plural, TextOptions};
use crate::plan::Plan;
use crate::util::output::{Inert, Markdown};

const OBSERVED: &str =
    "Observed (mode observe): compared, never written; `cfgctl drift` reports them";

fn orphaned_heading(plan: &Plan) -> String {
    format!(
        "Orphaned: {} on the target in no manifest, kept by {} mode (no-delete, observe): never deleted, even with --prune",
        plural(plan.orphaned.len(), "resource", "resources"),
        if plan.orphaned.len() == 1 { "its" } else { "their" }
    )
}

/// The summary line's tail: what the modes hold back, when they do.
pub(super) fn summary_tail(plan: &Plan) -> String {
    let mut parts = Vec::new();
    if !plan.observed.is_empty() {
        parts.push(format!("{} observed (never sent)", plan.observed.len()));
    }
    if !plan.orphaned.is_empty() {
        parts.push(format!("{} orphaned (kept)", plan.orphaned.len()));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" Modes: {}.", parts.join(", "))
    }
}

/// The text plan's section: every observed action, then every orphaned resource.
pub(super) fn text(plan: &Plan, opts: TextOptions) -> String {
    let mut out = String::new();
    if !plan.observed.is_empty() {
        let _ = writeln!(out, "\n{OBSERVED}:");
        for a in &plan.observed {
            out.push_str(&action_text(a, opts));
        }
    }
    if !plan.orphaned.is_empty() {
        let _ = writeln!(out, "\n{}:", orphaned_heading(plan));
        for a in &plan.orphaned {
            let _ = writeln!(out, "  = {}", Inert(a));
        }
    }
    out
}

/// The Markdown plan's part: observed and orphaned resources by address (never cut: there
/// are as many as the modes name, and each is one line).
pub(super) fn markdown(plan: &Plan) -> String {
    let mut out = String::new();
    if !plan.observed.is_empty() {
        let _ = writeln!(out, "{OBSERVED}:\n");
        for a in &plan.observed {
            let _ = writeln!(
                out,
                "- <code>{} {}</code> (would {})",
                a.action.symbol(),
                Markdown(&a.address),
                a.action.as_str()
            );
        }
        out.push('\n');
    }
    if !plan.orphaned.is_empty() {
        let _ = writeln!(out, "{}:\n", orphaned_heading(plan));
        for a in &plan.orphaned {
            let _ = writeln!(out, "- <code>{}</code>", Markdown(a));
        }
        out.push('\n');
    }
    out
}
