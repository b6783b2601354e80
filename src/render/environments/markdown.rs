//! The Markdown report of several environments, for one pull-request comment: the title and
//! the summary table, then one `<details>` per environment holding its single-target report
//! (`render::markdown`, `render::drift::markdown`) or its failure, then the closing line.
//!
//! The whole comment stays under the budget however large each plan: the table, the closing
//! line and the failures are written whole; what room is left is shared among the
//! environments' reports, each made to fit its share by the single-target renderer, which
//! keeps its own summary (counts and risk summary) whole and cuts its per-resource details
//! first. Shares are fair: an environment that needs less than an equal share takes only
//! what it needs, and the rest goes to the larger ones.

use std::fmt::Write as _;

use super::{
    by_name, closing, drift_rows, plan_rows, table, DriftOf, EnvDrift, EnvFailure, EnvPlan,
    DRIFT_COLUMNS, PLAN_COLUMNS,
};
use crate::plan::{ActionKind, Plan};
use crate::util::output::{Inert, Markdown};

/// Room kept for the last-resort note and rounding.
const RESERVE: usize = 300;
/// How much of a failure's message its section shows.
const MESSAGE_CAP: usize = 2_000;

/// One environment's section: its `<details>` (open when there is something to review) and
/// its body, made for a room of characters (a failure's is the same for any room).
struct Section<'a> {
    open: bool,
    summary: String,
    body: Box<dyn Fn(usize) -> String + 'a>,
    /// A fixed body (a failure): not part of the shared room.
    fixed: bool,
}

impl Section<'_> {
    fn wrap(&self, body: &str) -> String {
        format!(
            "<details{}><summary>{}</summary>\n\n{body}\n</details>\n\n",
            if self.open { " open" } else { "" },
            self.summary
        )
    }
}

fn name_html(name: &str) -> String {
    format!("<b>{}</b>", Markdown(name))
}

fn target_html(target: &str) -> String {
    format!("<code>{}</code>", Markdown(target))
}

fn failure_section<'a>(name: &str, f: &'a EnvFailure) -> Section<'a> {
    let target = f
        .target
        .as_deref()
        .map(|t| format!(" — {}", target_html(t)))
        .unwrap_or_default();
    Section {
        open: true,
        summary: format!("{}{target}: {}", name_html(name), f.what()),
        body: Box::new(move |_| failure_body(f)),
        fixed: true,
    }
}

/// A failure's section: what stopped it, its message in a code block (inert, each line
/// indented, so none starts a workflow command in a log; cut at [`MESSAGE_CAP`]).
fn failure_body(f: &EnvFailure) -> String {
    let mut message = String::new();
    for line in f.message.lines() {
        if message.len() > MESSAGE_CAP {
            message.push_str("…\n");
            break;
        }
        let _ = writeln!(message, "  {}", Inert(line));
    }
    let fence = "`".repeat(
        message
            .split(|c| c != '`')
            .map(str::len)
            .max()
            .unwrap_or(0)
            .max(2)
            + 1,
    );
    let mut what = f.what();
    if let Some(first) = what.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    format!(
        "**{what}.** Nothing was done for this environment; the others went on as usual.\n\n{fence}text\n{message}{fence}\n"
    )
}

/// "1 to create, 2 to update" (or "no changes"), for a section's summary.
fn changes_phrase(plan: &Plan) -> String {
    let s = plan.summary();
    let parts: Vec<String> = [
        (s.create, ActionKind::Create, "to create"),
        (s.update, ActionKind::Update, "to update"),
        (s.delete, ActionKind::Delete, "to delete"),
        (s.upsert, ActionKind::Upsert, "to upsert"),
        (s.unsupported, ActionKind::Unsupported, "unsupported"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, a, what)| format!("<code>{}</code> {n} {what}", a.symbol()))
    .collect();
    if parts.is_empty() {
        "no changes".to_string()
    } else {
        parts.join(", ")
    }
}

/// The Markdown plan of several environments, at most `budget` characters (see the module's
/// doc): pass [`crate::render::MARKDOWN_BUDGET`] for a pull-request comment.
pub fn markdown(envs: &[EnvPlan<'_>], budget: usize) -> String {
    let envs = by_name(envs);
    let rows = plan_rows(&envs);
    let sections = envs
        .iter()
        .map(|(name, outcome)| match outcome {
            Ok(plan) => Section {
                open: !plan.actions.is_empty() || !plan.guard_violations.is_empty(),
                summary: format!(
                    "{} — {}: {}",
                    name_html(name),
                    target_html(&plan.target),
                    changes_phrase(plan)
                ),
                body: Box::new(move |room| crate::render::markdown(plan, room, false)),
                fixed: false,
            },
            Err(f) => failure_section(name, f),
        })
        .collect();
    assemble(
        format!("### cfgctl plan for {} environments\n\n", envs.len()),
        table::markdown(&PLAN_COLUMNS, &rows),
        sections,
        closing(&rows, "planned", |n| {
            format!("<code>{}</code>", Markdown(n))
        }),
        budget,
    )
}

/// The Markdown drift report of several environments, at most `budget` characters: the
/// table (with a `drift` column), then each environment's report as
/// [`crate::render::drift::markdown`] writes it (within its share), or its failure.
pub fn drift_markdown(envs: &[EnvDrift<'_>], budget: usize) -> String {
    let envs = by_name(envs);
    let rows = drift_rows(&envs);
    let sections = envs
        .iter()
        .map(|(name, outcome)| match outcome {
            Ok(DriftOf { plan, known }) => {
                let (plan, known) = (*plan, *known);
                let drifted = crate::plan::drift::drifted(plan, known).len();
                Section {
                    open: plan.has_drift(),
                    summary: format!(
                        "{} — {}: {}",
                        name_html(name),
                        target_html(&plan.target),
                        if drifted == 0 {
                            "no drift".to_string()
                        } else {
                            super::plural(drifted, "resource drifted", "resources drifted")
                        }
                    ),
                    body: Box::new(move |room| crate::render::drift::markdown(plan, known, room)),
                    fixed: false,
                }
            }
            Err(f) => failure_section(name, f),
        })
        .collect();
    assemble(
        format!("### cfgctl drift for {} environments\n\n", envs.len()),
        table::markdown(&DRIFT_COLUMNS, &rows),
        sections,
        closing(&rows, "compared", |n| {
            format!("<code>{}</code>", Markdown(n))
        }),
        budget,
    )
}

/// The report: the title, the table, the sections (the room left shared among the reports),
/// the closing line; within `budget` (see [`shares`]).
fn assemble(
    title: String,
    table: String,
    sections: Vec<Section<'_>>,
    closing: String,
    budget: usize,
) -> String {
    let closing = format!("**Environments:** {closing}\n");
    let mut out = title;
    out.push_str(&table);
    out.push('\n');
    // What is written whatever the room: the head, the closing line, every section's wrapper
    // and every failure.
    let fixed_bodies: Vec<Option<String>> = sections
        .iter()
        .map(|s| s.fixed.then(|| (s.body)(0)))
        .collect();
    let fixed = out.len()
        + closing.len()
        + RESERVE
        + sections
            .iter()
            .zip(&fixed_bodies)
            .map(|(s, body)| s.wrap(body.as_deref().unwrap_or_default()).len())
            .sum::<usize>();
    let mut bodies = shares(&sections, budget.saturating_sub(fixed));
    for ((section, fixed), body) in sections.iter().zip(fixed_bodies).zip(bodies.iter_mut()) {
        let body = fixed.unwrap_or_else(|| std::mem::take(body));
        out.push_str(&section.wrap(&body));
    }
    out.push_str(&closing);
    if out.len() > budget {
        // Only when the summaries alone pass the budget (hundreds of environments, or warnings
        // by the thousand): cut, saying so, rather than lose the whole comment to GitHub's
        // limit. The table comes first, so it is the last thing cut.
        let mut cut = budget.saturating_sub(RESERVE);
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        let _ = write!(
            out,
            "\n\n> **Report cut at {budget} characters:** run `cfgctl` in text or JSON for all of it.\n"
        );
    }
    out
}

/// Each report section's body within `room` characters in all: every one whole when they all
/// fit; otherwise, smallest first, each takes what it needs up to an equal share of what is
/// left, and one that needs more is made for its share (its renderer keeps its summary and
/// cuts its details). A failure's body is not made here (empty).
fn shares(sections: &[Section<'_>], room: usize) -> Vec<String> {
    let whole: Vec<Option<String>> = sections
        .iter()
        .map(|s| (!s.fixed).then(|| (s.body)(room)))
        .collect();
    let needed: usize = whole.iter().flatten().map(String::len).sum();
    if needed <= room {
        return whole.into_iter().map(Option::unwrap_or_default).collect();
    }
    let mut order: Vec<usize> = (0..sections.len())
        .filter(|&i| whole[i].is_some())
        .collect();
    order.sort_by_key(|&i| whole[i].as_ref().map_or(0, String::len));
    let mut bodies = vec![String::new(); sections.len()];
    let mut left = room;
    for (done, &i) in order.iter().enumerate() {
        let fair = left / (order.len() - done);
        let body = match &whole[i] {
            Some(full) if full.len() <= fair => full.clone(),
            _ => (sections[i].body)(fair),
        };
        left = left.saturating_sub(body.len());
        bodies[i] = body;
    }
    bodies
}
