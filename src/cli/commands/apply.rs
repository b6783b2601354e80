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
use crate::plan::Plan;

pub use crate::ops::ApplySettings;

/// `cfgctl apply DIR` against one target (the command line's, or the one environment
/// selected: `cli::resolve`): plan, confirm, execute, report. Several environments are
/// applied by `apply_envs`.
pub fn apply(opts: ApplySettings) -> anyhow::Result<ExitCode> {
    let terminal = Terminal::new(opts.auto_approve, opts.verbose);
    let ui = terminal.ui();
    let ok = runtime()?.block_on(crate::ops::apply(opts, &ui))?;
    Ok(ExitCode::from(u8::from(!ok)))
}

/// `cfgctl apply PLANFILE`: the saved plan read, against its target, confirmed, executed,
/// reported.
pub fn apply_saved(opts: ApplySettings) -> anyhow::Result<ExitCode> {
    let terminal = Terminal::new(opts.auto_approve, opts.verbose);
    let ui = terminal.ui();
    let ok = runtime()?.block_on(crate::ops::apply_saved(opts, &ui))?;
    Ok(ExitCode::from(u8::from(!ok)))
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

impl Terminal {
    fn new(auto_approve: bool, verbose: bool) -> Terminal {
        Terminal {
            auto_approve,
            verbose,
            progress: OnceLock::new(),
            rendered: Mutex::new(None),
        }
    }

    /// What `ops::apply` asks of the terminal.
    fn ui(&self) -> crate::ops::ApplyUi<'_> {
        crate::ops::ApplyUi {
            confirm: Box::new(|plan, refused| self.confirm(plan, refused)),
            progress: Box::new(|action, outcome| {
                if let Some(progress) = self.progress.get() {
                    progress.report(action, outcome);
                }
            }),
            summary: Box::new(|plan, outcomes, slowed| self.summary(plan, outcomes, slowed)),
        }
    }

    /// The plan shown and confirmed (or refused); the progress made, let go once the plan's
    /// text is out.
    fn confirm(&self, plan: &Arc<Plan>, refused: &[String]) -> anyhow::Result<bool> {
        let Some(rendering) = show_and_confirm(self, plan, refused)? else {
            return Ok(false);
        };
        let progress = Arc::new(Progress::held(
            plan.actions.len(),
            crate::util::output::stderr_is_terminal(),
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

    /// Once every action finished: the plan's text waited for, the progress ended, the
    /// summary on stdout.
    fn summary(
        &self,
        plan: &Plan,
        outcomes: &[Outcome],
        slowed: Option<crate::remote::throttle::SlowDown>,
    ) -> anyhow::Result<()> {
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
        let summary = crate::apply::report::summary(plan, outcomes, slowed);
        crate::util::output::stdout()
            .write_all(summary.as_bytes())
            .context("writing to stdout")
    }
}

fn ask_confirmation(plan: &Plan) -> anyhow::Result<bool> {
    use std::io::BufRead;
    let mut err = crate::util::output::stderr();
    write!(
        err,
        "\nApply {} to {}? Only 'yes' is accepted: ",
        plural(plan.actions.len(), "action", "actions"),
        crate::util::output::Inert(&plan.target)
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
    let mut out = crate::util::output::stdout_buffered();
    crate::render::write_text(
        &mut out,
        plan,
        crate::render::TextOptions {
            color: crate::util::output::stdout_has_color(),
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
        writeln!(crate::util::output::stdout(), "\nNothing to apply.")
            .context("writing to stdout")?;
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
    let mut err = crate::util::output::stderr();
    for reason in refused {
        let _ = writeln!(err, "  - {}", crate::util::output::Inert(reason));
    }
    anyhow::anyhow!(
        "refusing to apply ({} reasons above); nothing was changed",
        refused.len()
    )
}
