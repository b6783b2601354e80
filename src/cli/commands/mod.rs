//! The commands: one thin file per command (after cargo's `bin/cargo/commands/*.rs`). Each
//! takes its settings struct (`*Settings`, resolved from the command line by `cli`; never clap
//! types), asks `ops` (or a layer of the library) for what it shows, renders it and returns
//! the exit code. Errors that end a command come back as `anyhow` errors with context; `main`
//! prints them once. The runtime is made here, at the edge: `ops` only awaits.

mod apply;
mod apply_envs;
mod export;
mod graph;
mod import;
mod plan;
mod plan_envs;
mod pull;
mod schema;
mod serve;
mod test_policy;
mod validate;

pub use apply::*;
pub use apply_envs::apply_several;
pub use export::*;
pub use graph::*;
pub use import::*;
pub use plan::*;
pub use plan_envs::plan_several;
pub use pull::*;
pub use schema::*;
pub use serve::*;
pub use test_policy::*;
pub use validate::*;

use anyhow::Context;

pub(crate) use crate::ops::plural;

/// Output format of plan and drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// The commands' runtime: one thread for all their requests. Their CPU work runs elsewhere
/// (manifests and list pages on blocking threads and rayon), so a second worker only moved
/// tasks between threads (wake-ups, task switches), which cost apply CPU and wall time on a
/// small machine (docs/performance.md).
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Prints the located problems behind an error (`ops::Diagnosed`), each on its line, before
/// the error itself is printed; and what apply's errors list above their line: the resources
/// a stale saved plan changed (`ops::StalePlan`), what changed since review
/// (`ops::ReviewedError::Changed`).
pub fn print_diagnosed(err: &anyhow::Error) {
    use std::io::Write;
    let mut out = crate::util::output::stderr();
    for cause in err.chain() {
        if let Some(d) = cause.downcast_ref::<crate::ops::Diagnosed>() {
            for d in &d.diagnostics {
                let _ = writeln!(out, "{d}");
            }
        }
        if let Some(stale) = cause.downcast_ref::<crate::ops::StalePlan>() {
            for s in &stale.resources {
                let _ = writeln!(out, "  {}", crate::util::output::Inert(s));
            }
        }
        if let Some(crate::ops::ReviewedError::Changed { differences, .. }) = cause.downcast_ref() {
            let _ = writeln!(out, "changed since review:");
            for d in differences {
                let _ = writeln!(out, "  {d}");
            }
        }
    }
}

/// An error and its causes on one line, `a: b: c` (as `{:#}` prints them), leaving out a cause
/// whose message the line already holds: an error whose message includes its source's (as
/// walkdir's errors, and ours that write `{source}`, do) would otherwise say it twice
/// ("Permission denied (os error 13); nothing was written: Permission denied (os error 13)").
pub fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
