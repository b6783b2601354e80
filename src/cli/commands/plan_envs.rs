//! `plan`, `drift` and `apply` over several environments (docs/environments.md): every
//! environment planned at once (`ops::plan_each`), one failure never stopping the others; one
//! report (`render::environments`): the summary table, then a section per environment. Which
//! environments is resolved before (`cli::resolve`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

use super::plan::PlanSettings;
use super::{runtime, Format};
use crate::api::registry::Kind;
use crate::config::environments::Environment;
use crate::ops::{self, EnvOutcome, PlanRequest};
use crate::plan::Plan;
use crate::render::environments::{self as report, DriftOf, EnvFailure};

/// One environment's plan and the kinds read, or why it has none.
pub(super) type Kept = (
    String,
    Result<(Plan, std::collections::BTreeSet<Kind>), EnvFailure>,
);

/// Plans every environment of `envs` at once in `runtime`; each outcome kept as the report
/// takes it (the located problems of a failed one printed on stderr, prefixed with its name).
pub(super) fn plan_all(
    runtime: &tokio::runtime::Runtime,
    request: &PlanRequest,
    envs: Vec<Environment>,
) -> Vec<EnvOutcome> {
    let requests = envs
        .into_iter()
        .map(|env| {
            let req = request.for_environment(&env);
            (env, req)
        })
        .collect();
    runtime.block_on(ops::plan_each(&request.dir, requests))
}

/// An environment's error as its section shows it: the error and its causes on one line
/// (its located problems printed on stderr before, each prefixed with the environment).
pub(super) fn failure(
    name: &str,
    url: Option<String>,
    stage: Option<report::EnvStage>,
    err: &anyhow::Error,
) -> EnvFailure {
    let mut out = crate::util::output::stderr();
    for cause in err.chain() {
        if let Some(d) = cause.downcast_ref::<ops::Diagnosed>() {
            for d in &d.diagnostics {
                let _ = writeln!(out, "[{}] {d}", crate::util::output::Inert(name));
            }
        }
    }
    EnvFailure {
        stage,
        message: super::error_line(err),
        target: url,
    }
}

/// `cfgctl plan` / `cfgctl drift` over several environments (`--env A --env B`,
/// `--all-envs`): one report; its exit code is the worst of theirs.
pub fn plan_several(settings: &PlanSettings, envs: Vec<Environment>) -> anyhow::Result<ExitCode> {
    if settings.out.is_some() {
        anyhow::bail!(
            "--out saves one environment's plan: run `cfgctl plan --env NAME --out FILE` for each environment"
        );
    }
    // Kept to the command's end, as the blocking threads it holds.
    let runtime = runtime()?;
    let outcomes = plan_all(&runtime, &settings.request, envs);
    // Each environment's manifests, when its request kept them (for the policy).
    let mut manifests = Vec::new();
    let kept: Vec<Kept> = outcomes
        .into_iter()
        .map(|o| {
            let kept = match o.planned {
                Ok(ops::Planned {
                    mut plan,
                    known,
                    manifests: loaded,
                    ..
                }) => {
                    plan.guard.environment = Some(o.name.clone());
                    manifests.push(loaded);
                    Ok((plan, known))
                }
                Err(e) => Err(failure(&o.name, o.url, o.stage, &e)),
            };
            (o.name, kept)
        })
        .collect();
    let mut kept = kept;
    // The policy's findings are part of each environment's plan: shown in the report, enforced
    // once it is printed whole.
    let findings = if settings.request.drift {
        Vec::new()
    } else {
        policy_findings(settings, &mut kept, &manifests)?
    };
    let code = render(settings, &kept)?;
    enforce_policy(findings)?;
    // The command ends here (`let_go`).
    ops::let_go((kept, manifests));
    Ok(ExitCode::from(code))
}

/// The policy on every planned environment's plan, with the manifests it was made from
/// (`manifests`: the planned ones', in order), as `plan` runs it on one, recorded in the plan
/// (`ops::policy_into_plan`).
fn policy_findings(
    settings: &PlanSettings,
    kept: &mut [Kept],
    manifests: &[Option<crate::manifest::Loaded>],
) -> anyhow::Result<Vec<(String, crate::ops::policy::Findings)>> {
    let mut out = Vec::new();
    let planned = kept
        .iter_mut()
        .filter_map(|(name, k)| Some((name, k.as_mut().ok()?)));
    for ((name, (plan, _)), loaded) in planned.zip(manifests) {
        let name: &str = name;
        let dir = &settings.request.dir;
        let findings =
            ops::policy_into_plan(dir, plan, loaded.as_ref(), Some(name)).with_context(|| {
                format!(
                    "running the policy for {}",
                    crate::util::output::Inert(name)
                )
            })?;
        out.push((name.to_string(), findings));
    }
    Ok(out)
}

/// The findings on stderr, each prefixed with its environment; fails naming the environments
/// the policy denies.
fn enforce_policy(findings: Vec<(String, crate::ops::policy::Findings)>) -> anyhow::Result<()> {
    let mut denied = Vec::new();
    for (name, findings) in findings {
        match findings.print_and_enforce_in(Some(&name)) {
            Ok(()) => {}
            Err(crate::ops::policy::PolicyError::Failed { errors }) => denied.push(format!(
                "{}: {}",
                crate::util::output::Inert(&name),
                super::plural(errors, "error", "errors")
            )),
            Err(e) => return Err(e.into()),
        }
    }
    if !denied.is_empty() {
        anyhow::bail!("the policy fails in {}", denied.join("; "));
    }
    Ok(())
}

/// Writes the report of several environments in the chosen format; its exit code.
fn render(settings: &PlanSettings, kept: &[Kept]) -> anyhow::Result<u8> {
    let mut out = crate::util::output::stdout_buffered();
    let (color, verbose) = (crate::util::output::stdout_has_color(), settings.verbose);
    let budget = crate::render::MARKDOWN_BUDGET;
    let code;
    let written = if settings.request.drift {
        let envs: Vec<report::EnvDrift<'_>> = kept
            .iter()
            .map(|(n, k)| {
                let d = k.as_ref().map(|(plan, known)| DriftOf { plan, known });
                (n.as_str(), d)
            })
            .collect();
        code = report::drift_exit_code(&envs);
        match settings.format {
            Format::Text => out.write_all(report::drift_text(&envs, color, verbose).as_bytes()),
            Format::Json => report::write_drift_json(&mut out, &envs),
            Format::Markdown => out.write_all(report::drift_markdown(&envs, budget).as_bytes()),
        }
    } else {
        let envs: Vec<report::EnvPlan<'_>> = kept
            .iter()
            .map(|(n, k)| (n.as_str(), k.as_ref().map(|(plan, _)| plan)))
            .collect();
        code = report::plan_exit_code(&envs, settings.detailed_exitcode);
        match settings.format {
            Format::Text => report::write_text(
                &mut out,
                &envs,
                crate::render::TextOptions {
                    color,
                    verbose,
                    drift: false,
                },
            ),
            Format::Json => report::write_json(&mut out, &envs),
            Format::Markdown => out.write_all(report::markdown(&envs, budget).as_bytes()),
        }
    };
    written
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(code)
}
