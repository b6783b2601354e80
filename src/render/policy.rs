//! The policy's findings (`plan::review::Review::policy`) in the text and Markdown plans: the
//! Markdown plan lists every one right after the risk summary; the text plan prints each at the
//! action it is about, and the rest (about no action of the plan) after the risk summary.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::plan::review::{PolicyFinding, PolicySeverity};
use crate::plan::Plan;
use crate::util::output::{Inert, Markdown};

/// `deny: message [rule] (file:line:col)`.
fn text_line(f: &PolicyFinding) -> String {
    let source = f
        .source
        .as_deref()
        .map(|s| format!(" ({})", Inert(s)))
        .unwrap_or_default();
    format!(
        "{}: {} [{}]{source}",
        f.severity.as_str(),
        Inert(&f.message),
        Inert(&f.rule)
    )
}

/// The text plan's lines under an action: the findings about its address.
pub(super) fn text_at(plan: &Plan, address: &str) -> String {
    let mut out = String::new();
    for f in &plan.review.policy {
        if f.address.as_deref() == Some(address) {
            let _ = writeln!(out, "      policy {}", text_line(f));
        }
    }
    out
}

/// The text plan's section for the findings about no action of the plan (empty: none).
pub(super) fn text_rest(plan: &Plan) -> String {
    let actions: BTreeSet<String> = plan.actions.iter().map(|a| a.address.to_string()).collect();
    let rest: Vec<&PolicyFinding> = plan
        .review
        .policy
        .iter()
        .filter(|f| f.address.as_ref().is_none_or(|a| !actions.contains(a)))
        .collect();
    if rest.is_empty() {
        return String::new();
    }
    let mut out = format!("\nPolicy ({}):\n", counts(&plan.review.policy));
    for f in rest {
        let about = f
            .address
            .as_deref()
            .map(|a| format!("{}: ", Inert(a)))
            .unwrap_or_default();
        let _ = writeln!(out, "  {about}{}", text_line(f));
    }
    out
}

/// `1 deny, 2 warn`.
pub(super) fn counts(findings: &[PolicyFinding]) -> String {
    let denies = findings
        .iter()
        .filter(|f| f.severity == PolicySeverity::Deny)
        .count();
    let warns = findings.len() - denies;
    let mut parts = Vec::new();
    if denies > 0 {
        parts.push(format!("{denies} deny"));
    }
    if warns > 0 {
        parts.push(format!("{warns} warn"));
    }
    parts.join(", ")
}

/// The Markdown plan's section, right after the risk summary: every finding, denials first
/// (in the policy's order otherwise), at most `room` characters.
pub(super) fn markdown_section(plan: &Plan, room: usize) -> String {
    let findings = &plan.review.policy;
    if findings.is_empty() {
        return String::new();
    }
    let mut out = format!("#### Policy: {}\n\n", counts(findings));
    let ordered = findings
        .iter()
        .filter(|f| f.severity == PolicySeverity::Deny)
        .chain(
            findings
                .iter()
                .filter(|f| f.severity == PolicySeverity::Warn),
        );
    for (i, f) in ordered.enumerate() {
        let mark = match f.severity {
            PolicySeverity::Deny => "⛔ **deny**",
            PolicySeverity::Warn => "⚠️ **warn**",
        };
        let about = f
            .address
            .as_deref()
            .map(|a| format!(" <code>{}</code>:", Markdown(a)))
            .unwrap_or_default();
        let source = f
            .source
            .as_deref()
            .map(|s| format!(" — <code>{}</code>", Markdown(s)))
            .unwrap_or_default();
        let item = format!(
            "- {mark}{about} {} (<code>{}</code>){source}\n",
            Markdown(&f.message),
            Markdown(&f.rule)
        );
        if out.len() + item.len() + 100 > room {
            let _ = writeln!(
                out,
                "- … and {} more (the text and JSON plans list every one)",
                findings.len() - i
            );
            break;
        }
        out.push_str(&item);
    }
    out.push('\n');
    out
}
