//! The Markdown plan, for a pull-request comment: the summary table, the diagram of the
//! changes' order, one `<details>` per resource with its lines in a ```` ```diff ```` block
//! (every `+`/`-` line at column 0, so GitHub colours it), under a character budget.

use std::fmt::Write as _;

use super::fields::{self, Line};
use super::{cascade_lines, graph, plural, summary_line, unmanaged_by_kind};
use crate::plan::{Action, ActionKind, Plan};
use crate::util::output::{code_span, Inert, Markdown};

fn markdown_details(a: &Action) -> String {
    let mut body = String::new();
    if let Some(r) = &a.reason {
        let _ = writeln!(body, "# {}", Inert(r));
    }
    for line in cascade_lines(a) {
        let _ = writeln!(body, "{line}");
    }
    for f in a.shown_fields().iter() {
        for line in fields::field_lines(a.address.kind, f)
            .iter()
            .filter_map(Line::markdown)
        {
            let _ = writeln!(body, "{line}");
        }
    }
    cap_details(&mut body, "plan");
    let loc = a
        .source
        .as_ref()
        .map(|s| format!(" — <code>{}:{}</code>", Markdown(s.file.display()), s.line))
        .unwrap_or_default();
    // A delete is marked where a reviewer scanning the list sees it.
    let mark = if a.action == ActionKind::Delete {
        "⚠️ "
    } else {
        ""
    };
    let mut out = format!(
        "<details><summary>{mark}<code>{} {}</code> <b>{}</b>{loc}</summary>\n\n",
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
    let risk = crate::plan::risk::summarize(plan);
    if !drift {
        head.push_str(&headline(plan, &risk));
    }
    if !drift && !risk.is_quiet() {
        let _ = writeln!(head, "#### Risk summary\n");
    }
    let _ = writeln!(head, "**{}**\n", summary_line(plan));
    // The risk summary: counts per action and kind, then (a plan, not a drift report) its
    // lists. Written first and never cut; the details below get the room it leaves.
    let by_action = super::risk::by_action(&risk.counts);
    let kinds_of = |action: ActionKind| {
        by_action
            .iter()
            .find(|(a, _, _)| *a == action)
            .map(|(_, _, kinds)| kinds.clone())
            .unwrap_or_default()
    };
    let _ = writeln!(head, "| action | resources | by kind |\n|---|---:|---|");
    for (label, n, kinds) in [
        ("`+` create", s.create, kinds_of(ActionKind::Create)),
        ("`~` update", s.update, kinds_of(ActionKind::Update)),
        ("`-` delete", s.delete, kinds_of(ActionKind::Delete)),
        ("`^` upsert", s.upsert, kinds_of(ActionKind::Upsert)),
        (
            "`!` unsupported",
            s.unsupported,
            kinds_of(ActionKind::Unsupported),
        ),
        ("unchanged", s.unchanged, String::new()),
        ("unmanaged", plan.unmanaged.len(), String::new()),
    ] {
        // Rows of zeros say nothing.
        if n > 0 {
            let _ = writeln!(head, "| {label} | {n} | {kinds} |");
        }
    }
    head.push('\n');
    if !drift && !risk.is_quiet() {
        let room = (budget / 2).saturating_sub(head.len());
        head.push_str(&super::risk::markdown_lists(&risk, room, &plan.target));
    }
    if !drift {
        let room = (budget * 3 / 4).saturating_sub(head.len());
        head.push_str(&super::policy::markdown_section(plan, room));
    }
    let mut tail = super::modes::markdown(plan);
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
    for a in risky_first(plan) {
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

/// The actions in the order a reviewer reads their details, so that a comment cut at its
/// budget cuts the least risky (red team D21): deletes, unsupported actions, actions that send
/// a secret, then the rest, each group in plan order.
fn risky_first(plan: &Plan) -> Vec<&crate::plan::Action> {
    let rank = |a: &crate::plan::Action| match a.action {
        ActionKind::Delete => 0,
        ActionKind::Unsupported => 1,
        _ if a
            .body
            .as_ref()
            .is_some_and(|b| !a.address.kind.def().secrets_in(b).is_empty()) =>
        {
            2
        }
        _ => 3,
    };
    let mut actions: Vec<&crate::plan::Action> = plan.actions.iter().collect();
    actions.sort_by_key(|a| rank(a));
    actions
}

/// What a reviewer must see first, before any table: the deletes, the secrets sent, the
/// unsupported actions and the policy's denials (or that there are none), then the commit the
/// plan was made from.
fn headline(plan: &Plan, risk: &crate::plan::risk::Risk) -> String {
    let mut risky = Vec::new();
    let named = |addresses: Vec<&str>| {
        let shown: Vec<String> = addresses
            .iter()
            .take(5)
            .map(|a| format!("<code>{}</code>", Markdown(a)))
            .collect();
        let more = addresses.len().saturating_sub(5);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    if !risk.deletes.is_empty() {
        let addresses = risk.deletes.iter().map(|d| d.address.as_str()).collect();
        risky.push(format!(
            "⚠️ **{}**: {}",
            plural(risk.deletes.len(), "delete", "deletes"),
            named(addresses)
        ));
    }
    if !risk.secrets.is_empty() {
        let addresses = risk.secrets.iter().map(|s| s.address.as_str()).collect();
        risky.push(format!(
            "🔑 **{} sent**: {}",
            plural(risk.secrets.len(), "secret", "secrets"),
            named(addresses)
        ));
    }
    if !risk.unsupported.is_empty() {
        let addresses = risk
            .unsupported
            .iter()
            .map(|u| u.address.as_str())
            .collect();
        risky.push(format!(
            "❗ **{} unsupported**: {}",
            risk.unsupported.len(),
            named(addresses)
        ));
    }
    let denials = plan.review.denials();
    if denials > 0 {
        risky.push(format!(
            "⛔ **{}** (below)",
            plural(denials, "policy denial", "policy denials")
        ));
    }
    if !risk.guards.refused.is_empty() {
        risky.push("⛔ **apply refuses this plan** (guards, below)".to_string());
    }
    let mut out = if risky.is_empty() {
        "No deletes, no secrets sent, nothing unsupported, no policy denial.\n\n".to_string()
    } else {
        let mut out = String::new();
        for r in risky {
            let _ = writeln!(out, "> {r}  ");
        }
        out.push('\n');
        out
    };
    if let Some(commit) = &plan.review.commit {
        let dirty = if plan.review.uncommitted_changes {
            " (with uncommitted changes)"
        } else {
            ""
        };
        let _ = writeln!(out, "Planned from commit {}{dirty}.\n", code_span(commit));
    }
    out
}
