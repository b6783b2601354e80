//! The report of a run over several environments (docs/product.md §2 "Environments"): a
//! summary table first (one row per environment, its counts or its failure), then one
//! section per environment, which is that environment's own plan (or drift report) as the
//! single-target renderers write it, or what stopped it. Text, Markdown (the whole comment
//! under [`super::MARKDOWN_BUDGET`]) and JSON (`{"format_version": 1, "environments":
//! {NAME: PLAN | {"error": ...}}}`, each PLAN exactly the single-target JSON plan).
//!
//! Pure, like the rest of `render`: the caller (the command that plans each environment)
//! hands over every environment's outcome, in any order; environments are shown sorted by
//! name. One environment's failure is one row and one section: it never hides the others.
//! Untrusted text (names, targets, messages) goes through `output::Inert` (text) and
//! `output::Markdown` (Markdown), as everywhere.
//!
//! The exit code of such a run is [`worst`] of the environments' codes ([`plan_exit_code`],
//! [`drift_exit_code`]): an error (1) wins over changes (2), so a CI job never reads a failed
//! environment as "changes present".
//!
//! Wiring, for the command that plans each environment: keep each outcome as
//! `(name, Result<Plan, EnvFailure>)` (a failure's `message` the error chain as it would print
//! for one target, `format!("{err:#}")`, its `stage` and the environment's `url`); set
//! `plan.guard.environment = Some(name)` on each plan before it is rendered, sealed or saved
//! (the risk summary and a saved plan then name it); then
//! `let envs: Vec<EnvPlan> = outcomes.iter().map(|(n, o)| (n.as_str(), o.as_ref())).collect()`
//! and [`write_text`] (colour and `-v` as for one target), [`markdown`] with
//! [`super::MARKDOWN_BUDGET`] or [`write_json`], and exit with [`plan_exit_code`]. `drift`
//! likewise with [`DriftOf`] and the `drift_*` functions.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anstyle::Style;

use super::{plural, TextOptions};
use crate::api::registry::Kind;
use crate::plan::drift::{drifted, DriftClass};
use crate::plan::Plan;
use crate::util::output::Inert;

mod markdown;
mod table;

pub use markdown::{drift_markdown, markdown};

/// Where an environment's run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvStage {
    /// Its manifests (variables, overlay) could not be loaded.
    Loading,
    /// Its target could not be reached or refused the token (unreachable, 401).
    Connecting,
    /// Its target's state could not be read.
    Reading,
    /// The plan could not be made (a reference to nothing, a cycle).
    Planning,
}

impl EnvStage {
    /// The JSON report's `stage`.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvStage::Loading => "loading",
            EnvStage::Connecting => "connecting",
            EnvStage::Reading => "reading",
            EnvStage::Planning => "planning",
        }
    }

    fn phrase(self) -> &'static str {
        match self {
            EnvStage::Loading => "while loading its manifests",
            EnvStage::Connecting => "while connecting",
            EnvStage::Reading => "while reading the target",
            EnvStage::Planning => "while planning",
        }
    }
}

/// Why an environment has no plan. `message` is printable and already redacted (the
/// command's error chain, as it would print it for a single target; it may hold several
/// lines); it is shown inert all the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvFailure {
    pub stage: Option<EnvStage>,
    pub message: String,
    /// The environment's target (its `url`), when it was known.
    pub target: Option<String>,
}

impl EnvFailure {
    /// "failed while connecting" (or just "failed").
    fn what(&self) -> String {
        match self.stage {
            Some(stage) => format!("failed {}", stage.phrase()),
            None => "failed".to_string(),
        }
    }

    /// The message's first line, at most `max` characters: for the summary table.
    fn short(&self, max: usize) -> String {
        let first = self.message.lines().next().unwrap_or_default();
        if first.chars().count() <= max && !self.message.contains('\n') {
            return first.to_string();
        }
        let mut cut: String = first.chars().take(max).collect();
        cut.push('…');
        cut
    }
}

/// One environment's plan, or why it has none: what the plan reports take, one per
/// environment (`(name, outcome)`).
pub type EnvPlan<'a> = (&'a str, Result<&'a Plan, &'a EnvFailure>);

/// What one environment's drift report is made of: its plan and the kinds its state was read
/// for (as `render::drift` takes them).
#[derive(Clone, Copy, Debug)]
pub struct DriftOf<'a> {
    pub plan: &'a Plan,
    pub known: &'a BTreeSet<Kind>,
}

/// One environment's drift, or why it has none: what the drift reports take.
pub type EnvDrift<'a> = (&'a str, Result<DriftOf<'a>, &'a EnvFailure>);

/// The environments in name order (the caller may hand them over in any).
fn by_name<'e, T>(envs: &'e [(&str, T)]) -> Vec<&'e (&'e str, T)> {
    let mut sorted: Vec<&(&str, T)> = envs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    sorted
}

/// The exit code of a run over several environments: the worst of theirs. An error (1, or
/// any code other than 0 and 2) is the worst: `plan --detailed-exitcode` and `drift` exit 2
/// for "changes present", and a failed environment must never read as that, so an error
/// wins over changes, which win over success (0). No codes: 0.
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    let mut worst = 0;
    for code in codes {
        match code {
            0 => {}
            2 => worst = 2,
            _ => return 1,
        }
    }
    worst
}

/// The exit code of `plan` over several environments: 1 when one failed, else (with
/// `--detailed-exitcode`) 2 when one has changes, else 0; as a single target's, per
/// environment, then [`worst`].
pub fn plan_exit_code(envs: &[EnvPlan<'_>], detailed_exitcode: bool) -> u8 {
    worst(envs.iter().map(|(_, outcome)| match outcome {
        Err(_) => 1,
        Ok(plan) if detailed_exitcode && plan.has_changes() => 2,
        Ok(_) => 0,
    }))
}

/// The exit code of `drift` over several environments: 1 when one failed, else 2 when one
/// drifted, else 0.
pub fn drift_exit_code(envs: &[EnvDrift<'_>]) -> u8 {
    worst(envs.iter().map(|(_, outcome)| match outcome {
        Err(_) => 1,
        Ok(d) if d.plan.has_drift() => 2,
        Ok(_) => 0,
    }))
}

/// The plan's counts in the table's columns.
const PLAN_COLUMNS: [&str; 6] = [
    "create",
    "update",
    "delete",
    "upsert",
    "unsupported",
    "unchanged",
];

fn plan_counts(plan: &Plan) -> Vec<usize> {
    let s = plan.summary();
    vec![
        s.create,
        s.update,
        s.delete,
        s.upsert,
        s.unsupported,
        s.unchanged,
    ]
}

/// The drift report's counts in the table's columns: every drifted resource, then by class.
const DRIFT_COLUMNS: [&str; 6] = [
    "drift",
    "changed",
    "missing",
    "unmanaged",
    "unreadable",
    "unchanged",
];

fn drift_counts(d: &DriftOf<'_>) -> Vec<usize> {
    let items = drifted(d.plan, d.known);
    let mut counts = vec![items.len()];
    counts.extend(
        DriftClass::ALL
            .iter()
            .map(|&c| items.iter().filter(|i| i.class == c).count()),
    );
    counts.push(d.plan.unchanged);
    counts
}

/// The summary table's rows, in name order.
fn plan_rows(envs: &[&EnvPlan<'_>]) -> Vec<table::Row> {
    envs.iter()
        .map(|(name, outcome)| table::Row {
            name: name.to_string(),
            cells: match outcome {
                Ok(plan) => Ok(plan_counts(plan)),
                Err(f) => Err((*f).clone()),
            },
        })
        .collect()
}

fn drift_rows(envs: &[&EnvDrift<'_>]) -> Vec<table::Row> {
    envs.iter()
        .map(|(name, outcome)| table::Row {
            name: name.to_string(),
            cells: match outcome {
                Ok(d) => Ok(drift_counts(d)),
                Err(f) => Err((*f).clone()),
            },
        })
        .collect()
}

/// The closing line: which environments were planned (`done`) and which failed, each name
/// shown by `show` (inert text, or Markdown).
fn closing(rows: &[table::Row], done: &str, show: impl Fn(&str) -> String) -> String {
    let (ok, failed): (Vec<&table::Row>, Vec<&table::Row>) =
        rows.iter().partition(|r| r.cells.is_ok());
    let names = |rows: &[&table::Row]| {
        rows.iter()
            .map(|r| show(&r.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!("{} {done}", ok.len());
    if !ok.is_empty() {
        let _ = write!(out, " ({})", names(&ok));
    }
    if !failed.is_empty() {
        let _ = write!(out, ", {} failed ({})", failed.len(), names(&failed));
    }
    out.push('.');
    out
}

fn inert(name: &str) -> String {
    Inert(name).to_string()
}

/// A section's heading in the text report: `=== staging (https://staging.example.com) ===`.
fn text_heading(name: &str, target: Option<&str>, bold: Style) -> String {
    let target = target
        .map(|t| format!(" ({})", Inert(t)))
        .unwrap_or_default();
    format!("\n{bold}=== {}{target} ==={bold:#}\n\n", Inert(name))
}

/// A failed environment's section body (text).
fn failure_text(f: &EnvFailure) -> String {
    let mut out = String::new();
    let mut what = f.what();
    if let Some(first) = what.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    let _ = writeln!(out, "{what}:");
    for line in f.message.lines() {
        let _ = writeln!(out, "  {}", Inert(line));
    }
    let _ = writeln!(
        out,
        "Nothing was done for this environment; the others went on as usual."
    );
    out
}

fn bold(color: bool) -> Style {
    if color {
        Style::new().bold()
    } else {
        Style::new()
    }
}

/// The text plan of several environments, written as it is made: the title and the summary
/// table, then each environment's section (its plan as [`super::write_text`] writes it,
/// streamed, or its failure), then a closing line naming the planned and the failed ones.
pub fn write_text(
    w: &mut impl std::io::Write,
    envs: &[EnvPlan<'_>],
    opts: TextOptions,
) -> std::io::Result<()> {
    let envs = by_name(envs);
    let rows = plan_rows(&envs);
    let b = bold(opts.color);
    let mut head = format!(
        "{b}cfgctl plan{b:#} for {}\n\n",
        plural(envs.len(), "environment", "environments")
    );
    head.push_str(&table::text(&PLAN_COLUMNS, &rows));
    w.write_all(head.as_bytes())?;
    for (name, outcome) in envs {
        match outcome {
            Ok(plan) => {
                w.write_all(text_heading(name, Some(&plan.target), b).as_bytes())?;
                super::write_text(
                    w,
                    plan,
                    TextOptions {
                        drift: false,
                        ..opts
                    },
                )?;
            }
            Err(f) => {
                w.write_all(text_heading(name, f.target.as_deref(), b).as_bytes())?;
                w.write_all(failure_text(f).as_bytes())?;
            }
        }
    }
    w.write_all(
        format!(
            "\n{b}Environments:{b:#} {}\n",
            closing(&rows, "planned", inert)
        )
        .as_bytes(),
    )
}

/// [`write_text`] into a string (for tests: the commands stream it).
#[cfg(test)]
pub(crate) fn text(envs: &[EnvPlan<'_>], opts: TextOptions) -> String {
    let mut out = Vec::new();
    let _ = write_text(&mut out, envs, opts);
    String::from_utf8_lossy(&out).into_owned()
}

/// The text drift report of several environments: the table (with a `drift` column), then
/// each environment's report as [`super::drift::text`] writes it, or its failure.
pub fn drift_text(envs: &[EnvDrift<'_>], color: bool, verbose: bool) -> String {
    let envs = by_name(envs);
    let rows = drift_rows(&envs);
    let b = bold(color);
    let mut out = format!(
        "{b}cfgctl drift{b:#} for {}\n\n",
        plural(envs.len(), "environment", "environments")
    );
    out.push_str(&table::text(&DRIFT_COLUMNS, &rows));
    for (name, outcome) in envs {
        match outcome {
            Ok(d) => {
                out.push_str(&text_heading(name, Some(&d.plan.target), b));
                out.push_str(&super::drift::text(d.plan, d.known, color, verbose));
            }
            Err(f) => {
                out.push_str(&text_heading(name, f.target.as_deref(), b));
                out.push_str(&failure_text(f));
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{b}Environments:{b:#} {}",
        closing(&rows, "compared", inert)
    );
    out
}

/// A failed environment's entry in the JSON report.
#[derive(serde::Serialize)]
struct FailureFile<'a> {
    error: &'a str,
    /// `loading`, `connecting`, `reading`, `planning`, or null.
    stage: Option<&'static str>,
    target: Option<&'a str>,
}

fn failure_file(f: &EnvFailure) -> FailureFile<'_> {
    FailureFile {
        error: &f.message,
        stage: f.stage.map(EnvStage::as_str),
        target: f.target.as_deref(),
    }
}

/// One environment's entry in the JSON report, written as it is made.
enum Entry<'a> {
    Plan(crate::plan::file::PlanFileWriter<'a>),
    Drift(super::drift::Report<'a>),
    Failed(FailureFile<'a>),
}

impl serde::Serialize for Entry<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Plan(plan) => plan.serialize(s),
            Entry::Drift(drift) => drift.serialize(s),
            Entry::Failed(f) => f.serialize(s),
        }
    }
}

/// `{"format_version": 1, "environments": {NAME: ENTRY, ...}}`, names in order.
struct Report<'a>(Vec<(&'a str, Entry<'a>)>);

impl serde::Serialize for Report<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Entries<'r, 'a>(&'r [(&'a str, Entry<'a>)]);
        impl serde::Serialize for Entries<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(self.0.iter().map(|(name, entry)| (name, entry)))
            }
        }
        let mut st = s.serialize_struct("Environments", 2)?;
        st.serialize_field("format_version", &crate::plan::file::FORMAT_VERSION)?;
        st.serialize_field("environments", &Entries(&self.0))?;
        st.end()
    }
}

/// The JSON plan of several environments, pretty-printed with a final newline and written as
/// it is made: `{"format_version": 1, "environments": {"prod": PLAN, "staging": {"error":
/// "...", "stage": "connecting", "target": "https://..."}}}`, where PLAN is exactly the JSON
/// plan of [`super::write_json_plan`] (its value; only its indentation differs) and a failed
/// environment's entry names the failure (`stage` and `target` null when unknown).
pub fn write_json(w: &mut impl std::io::Write, envs: &[EnvPlan<'_>]) -> std::io::Result<()> {
    let report = Report(
        by_name(envs)
            .into_iter()
            .map(|(name, outcome)| {
                let entry = match outcome {
                    Ok(plan) => {
                        Entry::Plan(crate::plan::file::PlanFileWriter { plan, saved: false })
                    }
                    Err(f) => Entry::Failed(failure_file(f)),
                };
                (*name, entry)
            })
            .collect(),
    );
    super::write_json_document(w, &report, true)
}

/// The JSON drift report of several environments: [`write_json`]'s shape, each entry the
/// single target's drift report (the JSON plan and its `drift` list) or its failure.
pub fn write_drift_json(w: &mut impl std::io::Write, envs: &[EnvDrift<'_>]) -> std::io::Result<()> {
    let report = Report(
        by_name(envs)
            .into_iter()
            .map(|(name, outcome)| {
                let entry = match outcome {
                    Ok(d) => Entry::Drift(super::drift::Report {
                        plan: d.plan,
                        known: d.known,
                    }),
                    Err(f) => Entry::Failed(failure_file(f)),
                };
                (*name, entry)
            })
            .collect(),
    );
    super::write_json_document(w, &report, true)
}

#[cfg(test)]
mod tests;
