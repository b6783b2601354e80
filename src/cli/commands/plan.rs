//! `cfgctl plan` and `cfgctl drift` against one target: plan (`ops::plan`), render, save, exit
//! code. With environments (docs/environments.md), `cli::resolve` names the target: one
//! environment selected is planned here, as a single target named in the plan; several are
//! planned at once by `plan_envs`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::{runtime, Format};
use crate::ops::{self, PlanRequest};

/// Settings of `cfgctl plan` and `cfgctl drift`.
#[derive(Debug, Clone)]
pub struct PlanSettings {
    pub request: PlanRequest,
    pub format: Format,
    pub detailed_exitcode: bool,
    pub out: Option<PathBuf>,
    pub verbose: bool,
    /// Where the user's secret that seals saved plans lives (see `ops::seal_key`).
    pub secret_dir: Option<PathBuf>,
}

/// `cfgctl plan` / `cfgctl drift` against one target: the plan, or the drift report, in the
/// chosen format (JSON and text written as they are made), saved with `--out`; the exit code.
pub fn plan(settings: PlanSettings) -> anyhow::Result<ExitCode> {
    // Kept to the command's end, as the blocking threads it holds.
    let runtime = runtime()?;
    let ops::Planned {
        mut plan,
        known,
        manifests,
        ..
    } = runtime.block_on(ops::plan(&settings.request))?;
    // Named in the risk summary; recorded (and sealed) in a saved plan.
    plan.guard.environment = settings.request.environment.clone();
    let drift = settings.request.drift;
    // The policy's findings are part of the plan: shown in every form, enforced once it is
    // printed whole (a denied plan explains itself). It judges the manifests planned.
    let findings = if drift {
        None
    } else {
        let environment = settings.request.environment.as_deref();
        let dir = &settings.request.dir;
        Some(ops::policy_into_plan(
            dir,
            &mut plan,
            manifests.as_ref(),
            environment,
        )?)
    };
    // Written as it is made, through a buffer: a plan of thousands of creates is megabytes of
    // text, never held whole.
    {
        let mut out = crate::util::output::stdout_buffered();
        let (color, verbose) = (crate::util::output::stdout_has_color(), settings.verbose);
        let budget = crate::render::MARKDOWN_BUDGET;
        let written = match settings.format {
            Format::Text if drift => {
                out.write_all(crate::render::drift::text(&plan, &known, color, verbose).as_bytes())
            }
            Format::Json if drift => crate::render::drift::write_json(&mut out, &plan, &known),
            Format::Markdown if drift => {
                out.write_all(crate::render::drift::markdown(&plan, &known, budget).as_bytes())
            }
            Format::Text => crate::render::write_text(
                &mut out,
                &plan,
                crate::render::TextOptions {
                    color,
                    verbose,
                    drift,
                },
            ),
            Format::Json => crate::render::write_json_plan(&mut out, &plan, false),
            Format::Markdown => {
                out.write_all(crate::render::markdown(&plan, budget, drift).as_bytes())
            }
        };
        written
            .and_then(|()| out.flush())
            .context("writing to stdout")?;
    }
    if let Some(findings) = findings {
        // The plan is shown; a denied one is not saved (`--out`) and fails the command.
        findings.print_and_enforce()?;
    }
    if let Some(path) = &settings.out {
        let token = settings.request.target.token.as_deref();
        if let Some(key) = ops::seal_key(token, settings.secret_dir.as_deref()) {
            plan.guard.seal = Some(
                plan.guard
                    .seal_with(&plan.target, &key)
                    .to_hex()
                    .to_string(),
            );
        }
        write_saved(path, &plan)?;
    }
    let code = if drift {
        u8::from(plan.has_drift()) * 2
    } else {
        u8::from(settings.detailed_exitcode && plan.has_changes()) * 2
    };
    // The command ends here (`let_go`).
    ops::let_go((plan, known, manifests));
    Ok(ExitCode::from(code))
}

/// The saved plan of `plan --out`, for `apply PLANFILE`.
fn write_saved(path: &std::path::Path, plan: &crate::plan::Plan) -> anyhow::Result<()> {
    let file = std::fs::File::create(path)
        .with_context(|| format!("writing the plan to {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    crate::render::write_saved_plan(&mut w, plan)
        .and_then(|()| w.flush())
        .with_context(|| format!("writing the plan to {}", path.display()))
}
