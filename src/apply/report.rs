//! What `apply` tells its user while it runs and when it is done: one line per finished action
//! (or a progress bar on a terminal, with the failures printed above it), and the summary of
//! done, resolved, failed, skipped and unsupported actions. Every name from a manifest or the
//! server is printed inert (`output::Inert`).

use std::fmt::Write as _;
use std::io::Write as _;

use super::Outcome;
use crate::output::Inert;
use crate::plan::{Action, ActionKind, Plan};

/// The line for one finished action.
pub fn progress_line(a: &Action, o: &Outcome) -> String {
    let address = Inert(&a.address);
    match o {
        Outcome::Done { elapsed, resolved } => format!(
            "{} {} ({} ms){}",
            super::verb(a.action),
            address,
            elapsed.as_millis(),
            resolved
                .as_ref()
                .map(|r| format!(": resolved conflict, {r}"))
                .unwrap_or_default()
        ),
        Outcome::Failed { reason } => {
            format!(
                "failed to {} {address}: {}",
                a.action.as_str(),
                Inert(reason)
            )
        }
        Outcome::Skipped { because } => {
            format!(
                "skipped {} {address}: {} failed",
                a.action.as_str(),
                Inert(because)
            )
        }
        Outcome::Unsupported { reason } => {
            format!("not attempted {address}: unsupported, {}", Inert(reason))
        }
    }
}

/// Progress while the plan runs: a bar on a terminal (failures printed above it), else one
/// line per finished action on stderr.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    pub fn new(actions: usize, on_terminal: bool) -> Progress {
        let bar = on_terminal.then(|| {
            let bar = indicatif::ProgressBar::new(actions as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        Progress { bar }
    }

    /// One action ended.
    pub fn report(&self, a: &Action, o: &Outcome) {
        let line = progress_line(a, o);
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(Inert(&a.address).to_string());
                if !o.is_success() {
                    bar.println(crate::output::redact(&line));
                }
            }
            None => {
                let _ = writeln!(crate::output::stderr(), "{line}");
            }
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The summary after the run; `slowed` says how far a rate limit made cfgctl slow down.
pub fn summary(
    plan: &Plan,
    outcomes: &[Outcome],
    slowed: Option<crate::throttle::SlowDown>,
) -> String {
    let pairs = || plan.actions.iter().zip(outcomes);
    let done = outcomes.iter().filter(|o| o.is_success()).count();
    let resolved: Vec<String> = pairs()
        .filter_map(|(a, o)| match o {
            Outcome::Done {
                resolved: Some(r), ..
            } => Some(format!("  {}: {r}", Inert(&a.address))),
            _ => None,
        })
        .collect();
    let failed: Vec<String> = pairs()
        .filter_map(|(a, o)| match o {
            Outcome::Failed { reason } => Some(format!(
                "  {} {}: {}",
                a.action.as_str(),
                Inert(&a.address),
                Inert(reason)
            )),
            _ => None,
        })
        .collect();
    let skipped: Vec<String> = pairs()
        .filter_map(|(a, o)| match o {
            Outcome::Skipped { because } => Some(format!(
                "  {} {}: depends on {}, which failed or is unsupported",
                a.action.as_str(),
                Inert(&a.address),
                Inert(because)
            )),
            _ => None,
        })
        .collect();
    let unsupported: Vec<String> = pairs()
        .filter_map(|(a, o)| match o {
            Outcome::Unsupported { reason } => {
                Some(format!("  {}: {}", Inert(&a.address), Inert(reason)))
            }
            _ => None,
        })
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nApply: {} done ({} resolved {}), {} failed, {} skipped, {} unsupported, {} unchanged.",
        done,
        resolved.len(),
        if resolved.len() == 1 {
            "conflict"
        } else {
            "conflicts"
        },
        failed.len(),
        skipped.len(),
        unsupported.len(),
        plan.unchanged
    );
    if let Some(slowed) = slowed {
        let _ = writeln!(out, "Rate limit: {slowed}.");
    }
    for (title, lines) in [
        ("Resolved conflicts:", &resolved),
        ("Failed:", &failed),
        ("Skipped:", &skipped),
        ("Not attempted (unsupported by the target):", &unsupported),
    ] {
        if !lines.is_empty() {
            let _ = writeln!(out, "{title}");
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    out
}

/// Every action done, and none unsupported: the run succeeded (exit 0).
pub fn all_ok(plan: &Plan, outcomes: &[Outcome]) -> bool {
    plan.actions
        .iter()
        .zip(outcomes)
        .all(|(a, o)| o.is_success() && a.action != ActionKind::Unsupported)
}
