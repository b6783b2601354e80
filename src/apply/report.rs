//! What `apply` tells its user while it runs and when it is done: one line per finished action
//! (or a progress bar on a terminal, with the failures printed above it), and the summary of
//! done, resolved, failed, skipped and unsupported actions. Every name from a manifest or the
//! server is printed inert (`output::Inert`).

use std::fmt::Write as _;
use std::io::Write as _;

use super::Outcome;
use crate::plan::{Action, ActionKind, Plan};
use crate::util::output::Inert;

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
/// line per finished action on stderr. It may start held ([`Progress::held`]): what it would
/// print waits until [`Progress::release`], so that the plan's text, still being written while
/// the first actions run, comes first in a log that merges stdout and stderr.
pub struct Progress {
    actions: usize,
    on_terminal: bool,
    state: std::sync::Mutex<State>,
}

struct State {
    /// Lines waiting for the release (`None`: released).
    held: Option<Vec<String>>,
    /// Actions ended while held.
    ended: u64,
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    pub fn new(actions: usize, on_terminal: bool) -> Progress {
        let progress = Progress::held(actions, on_terminal);
        progress.release();
        progress
    }

    /// Progress that prints nothing until [`Progress::release`].
    pub fn held(actions: usize, on_terminal: bool) -> Progress {
        Progress {
            actions,
            on_terminal,
            state: std::sync::Mutex::new(State {
                held: Some(Vec::new()),
                ended: 0,
                bar: None,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Prints what was held, and from now on as it comes.
    pub fn release(&self) {
        let mut state = self.state();
        let Some(lines) = state.held.take() else {
            return;
        };
        if self.on_terminal {
            // indicatif draws on stderr itself; only on a terminal (never a CI log, so no
            // workflow command can start there), and every line it prints is redacted.
            #[allow(clippy::disallowed_methods)]
            let bar = indicatif::ProgressBar::new(self.actions as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(state.ended);
            for line in &lines {
                bar.println(crate::util::output::redact(line));
            }
            state.bar = Some(bar);
        } else {
            let mut err = crate::util::output::stderr();
            for line in &lines {
                let _ = writeln!(err, "{line}");
            }
        }
    }

    /// One action ended.
    pub fn report(&self, a: &Action, o: &Outcome) {
        let line = progress_line(a, o);
        let mut guard = self.state();
        let state = &mut *guard;
        if let Some(held) = &mut state.held {
            state.ended += 1;
            // A bar shows only the failures as lines.
            if !self.on_terminal || !o.is_success() {
                held.push(line);
            }
            return;
        }
        match &state.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(Inert(&a.address).to_string());
                if !o.is_success() {
                    bar.println(crate::util::output::redact(&line));
                }
            }
            None => {
                let _ = writeln!(crate::util::output::stderr(), "{line}");
            }
        }
    }

    pub fn finish(&self) {
        self.release();
        if let Some(bar) = &self.state().bar {
            bar.finish_and_clear();
        }
    }
}

/// The summary after the run; `slowed` says how far a rate limit made cfgctl slow down.
pub fn summary(
    plan: &Plan,
    outcomes: &[Outcome],
    slowed: Option<crate::remote::throttle::SlowDown>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::registry::{Address, Kind};

    fn action(slug: &str) -> Action {
        Action {
            address: Address::new(Kind::named("Team"), Some(slug.into())),
            action: ActionKind::Create,
            source: None,
            fields: Vec::new(),
            depends_on: Vec::new(),
            reason: None,
            body: None,
            intended: None,
            fingerprint: None,
            cascade: Vec::new(),
        }
    }

    #[test]
    fn held_progress_keeps_its_lines_in_order_until_released() {
        let done = Outcome::Done {
            elapsed: std::time::Duration::from_millis(3),
            resolved: None,
        };
        let failed = Outcome::Failed {
            reason: super::super::Failure {
                status: Some(500),
                message: "HTTP 500".into(),
                source: None,
                still_referenced_by: Vec::new(),
            },
        };
        let lines = Progress::held(3, false);
        lines.report(&action("a"), &done);
        lines.report(&action("b"), &failed);
        assert_eq!(
            lines.state().held.as_deref(),
            Some(
                &[
                    "created Team/a (3 ms)".to_string(),
                    progress_line(&action("b"), &failed)
                ][..]
            )
        );
        lines.release();
        assert!(lines.state().held.is_none());
        // Released: printed as it comes, nothing held.
        lines.report(&action("c"), &done);
        assert!(lines.state().held.is_none());

        // On a terminal only the failures are lines; the bar starts where the run is.
        let bar = Progress::held(3, true);
        bar.report(&action("a"), &done);
        bar.report(&action("b"), &failed);
        assert_eq!(bar.state().held.as_ref().map(Vec::len), Some(1));
        assert_eq!(bar.state().ended, 2);
        bar.release();
        assert_eq!(bar.state().bar.as_ref().map(|b| b.position()), Some(2));
        bar.finish();
    }
}
