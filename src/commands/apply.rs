//! `cfgctl apply [DIR | PLANFILE]` against one target: the terminal's side of it. `ops::apply`
//! plans (or reads the saved plan), checks and sends; this file shows the plan, asks for
//! confirmation, shows the progress and the summary, and picks the exit code. What it refuses
//! from the command line alone, and which environments it applies to, is resolved before
//! (`cli::resolve`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Context;

use super::{plural, runtime};
use crate::apply::report::Progress;
use crate::apply::Outcome;
use crate::plan::{Action, Plan};

pub use crate::ops::ApplySettings;

/// `cfgctl apply DIR` against one target (the command line's, or the one environment
/// selected: `cli::resolve`): plan, confirm, execute, report. Several environments are
/// applied by `apply_envs`. Apply PLANFILE (`saved`) applies the saved plan to its target.
fn run(opts: ApplySettings, saved: bool) -> anyhow::Result<ExitCode> {
    let ui = Terminal {
        auto_approve: opts.auto_approve,
        verbose: opts.verbose,
        progress: OnceLock::new(),
        rendered: Mutex::new(None),
    };
    let runtime = runtime()?;
    let applied = if saved {
        runtime.block_on(crate::ops::apply_saved(opts, &ui))
    } else {
        runtime.block_on(crate::ops::apply(opts, &ui))
    };
    match applied {
        Ok(ok) => Ok(ExitCode::from(u8::from(!ok))),
        Err(e) => {
            explain(&e);
            Err(e)
        }
    }
}

/// `cfgctl apply DIR` against one target.
pub fn apply(opts: ApplySettings) -> anyhow::Result<ExitCode> {
    run(opts, false)
}

/// `cfgctl apply PLANFILE`: the saved plan read, against its target, confirmed, executed,
/// reported.
pub fn apply_saved(opts: ApplySettings) -> anyhow::Result<ExitCode> {
    run(opts, true)
}

/// What an error lists above its line on stderr: the resources a stale saved plan changed,
/// what changed since review.
fn explain(e: &anyhow::Error) {
    let mut err = crate::output::stderr();
    if let Some(stale) = e.downcast_ref::<crate::ops::StalePlan>() {
        for s in &stale.resources {
            let _ = writeln!(err, "  {}", crate::output::Inert(s));
        }
    }
    if let Some(crate::ops::ReviewedError::Changed { differences, .. }) = e.downcast_ref() {
        let _ = writeln!(err, "changed since review:");
        for d in differences {
            let _ = writeln!(err, "  {d}");
        }
    }
}

/// The plan's text still being written, when approved ahead.
type Rendering = std::thread::JoinHandle<std::io::Result<()>>;

/// The terminal apply runs on: the plan on stdout, the question and the progress on stderr,
/// the answer on stdin.
struct Terminal {
    auto_approve: bool,
    verbose: bool,
    /// The progress, made when the plan is confirmed.
    progress: OnceLock<Arc<Progress>>,
    /// What lets the progress go once the plan's text is out (when approved ahead).
    rendered: Mutex<Option<std::thread::JoinHandle<anyhow::Result<()>>>>,
}

impl crate::ops::ApplyUi for Terminal {
    fn confirm(&self, plan: &Arc<Plan>, refused: &[String]) -> anyhow::Result<bool> {
        let Some(rendering) = show_and_confirm(self, plan, refused)? else {
            return Ok(false);
        };
        let progress = Arc::new(Progress::held(
            plan.actions.len(),
            crate::output::stderr_is_terminal(),
        ));
        let _ = self.progress.set(Arc::clone(&progress));
        match rendering {
            // The progress is let go when the text is written.
            Some(rendering) => {
                let released = std::thread::spawn(move || {
                    let written = join_rendering(rendering);
                    progress.release();
                    written
                });
                *self.rendered.lock().unwrap_or_else(|e| e.into_inner()) = Some(released);
            }
            None => progress.release(),
        }
        Ok(true)
    }

    fn progress(&self, action: &Action, outcome: &Outcome) {
        if let Some(progress) = self.progress.get() {
            progress.report(action, outcome);
        }
    }

    fn finished(&self) -> anyhow::Result<()> {
        let rendered = self
            .rendered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(rendered) = rendered {
            rendered
                .join()
                .map_err(|_| anyhow::anyhow!("writing the plan failed"))??;
        }
        if let Some(progress) = self.progress.get() {
            progress.finish();
        }
        Ok(())
    }

    fn summary(
        &self,
        plan: &Plan,
        outcomes: &[Outcome],
        slowed: Option<crate::throttle::SlowDown>,
    ) -> anyhow::Result<()> {
        let summary = crate::apply::report::summary(plan, outcomes, slowed);
        crate::output::stdout()
            .write_all(summary.as_bytes())
            .context("writing to stdout")
    }
}

fn ask_confirmation(plan: &Plan) -> anyhow::Result<bool> {
    use std::io::BufRead;
    let mut err = crate::output::stderr();
    write!(
        err,
        "\nApply {} to {}? Only 'yes' is accepted: ",
        plural(plan.actions.len(), "action", "actions"),
        crate::output::Inert(&plan.target)
    )
    .context("writing to stderr")?;
    err.flush().context("writing to stderr")?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("reading the answer")?;
    Ok(answer.trim() == "yes")
}

/// The plan's text on stdout, written as it is rendered, through a buffer: a plan of thousands
/// of creates is megabytes of text, never held whole, and not one system call a line.
fn write_plan_text(plan: &Plan, verbose: bool) -> std::io::Result<()> {
    let mut out = crate::output::stdout_buffered();
    crate::render::write_text(
        &mut out,
        plan,
        crate::render::TextOptions {
            color: crate::output::stdout_has_color(),
            verbose,
            drift: false,
        },
    )?;
    out.flush()
}

fn join_rendering(rendering: Rendering) -> anyhow::Result<()> {
    rendering
        .join()
        .map_err(|_| anyhow::anyhow!("writing the plan failed"))?
        .context("writing to stdout")
}

/// Shows the plan, refuses or asks for confirmation: `None` when there is nothing to do,
/// else the plan's text still being written (when approved ahead).
///
/// Approved ahead (`--auto-approve`) with something to do: the plan's text is written while
/// the first actions run (it is megabytes for thousands of creates), and the progress waits
/// for it, so the output reads as if it had come first. Otherwise the text comes first: it is
/// what is refused, or what is confirmed.
fn show_and_confirm(
    ui: &Terminal,
    plan: &Arc<Plan>,
    refused: &[String],
) -> anyhow::Result<Option<Option<Rendering>>> {
    use std::io::IsTerminal;
    let ahead = ui.auto_approve && refused.is_empty() && !plan.actions.is_empty();
    let rendering = {
        let plan = Arc::clone(plan);
        let verbose = ui.verbose;
        std::thread::spawn(move || write_plan_text(&plan, verbose))
    };
    let rendering = if ahead {
        Some(rendering)
    } else {
        join_rendering(rendering)?;
        None
    };
    if !refused.is_empty() {
        return Err(refusal(refused));
    }
    if plan.actions.is_empty() {
        writeln!(crate::output::stdout(), "\nNothing to apply.").context("writing to stdout")?;
        return Ok(None);
    }
    if !ui.auto_approve {
        if !std::io::stdin().is_terminal() {
            anyhow::bail!(
                "apply needs --auto-approve when standard input is not a terminal: nothing was changed"
            );
        }
        if !ask_confirmation(plan)? {
            anyhow::bail!("not confirmed: nothing was changed");
        }
    }
    Ok(Some(rendering))
}

/// Why apply refuses the plan: one reason in the error; several one a line on stderr above
/// it (a guard's reason is a sentence; joined, they made one line of thousands of
/// characters, and the error line is one line).
pub(super) fn refusal(refused: &[String]) -> anyhow::Error {
    if let [one] = refused {
        return anyhow::anyhow!("refusing to apply: {one}; nothing was changed");
    }
    let mut err = crate::output::stderr();
    for reason in refused {
        let _ = writeln!(err, "  - {}", crate::output::Inert(reason));
    }
    anyhow::anyhow!(
        "refusing to apply ({} reasons above); nothing was changed",
        refused.len()
    )
}
