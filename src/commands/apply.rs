//! `cfgctl apply [DIR | PLANFILE]` against one target: plan (or read a saved plan), confirm,
//! execute, report. What it refuses from the command line alone, and which environments it
//! applies to, is resolved before (`cli::resolve`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::{plural, runtime};
use crate::ops::{self, Connection, PlanRequest};

/// Settings of `cfgctl apply`.
#[derive(Debug, Clone)]
pub struct ApplySettings {
    /// The plan to make (keeping the manifests, the target's objects and the connection);
    /// when its `dir` is a plan file written by `plan --out`, only its target counts.
    pub request: PlanRequest,
    pub auto_approve: bool,
    pub allow_empty_prune: bool,
    pub force_delete_buckets: bool,
    /// `--max-deletes`: what a saved plan's unsealed guards may not exceed.
    pub max_deletes: Option<u32>,
    /// `--rotate-secrets`: the patterns (empty: every resource with a secret field).
    pub rotate_secrets: Option<Vec<crate::pattern::Pattern>>,
    /// `--service-account-tokens FILE`.
    pub service_account_tokens: Option<PathBuf>,
    /// Where the user's secret that seals saved plans lives (see `ops::seal_key`).
    pub secret_dir: Option<PathBuf>,
    pub parallelism: usize,
    pub verbose: bool,
    /// `--env NAME` (repeatable).
    pub envs: Vec<String>,
    /// `--all-envs`.
    pub all_envs: bool,
    /// `--reviewed PLANFILE`: the saved plan a reviewer approved; the plan made now is applied
    /// only when all of it is in there.
    pub reviewed: Option<PathBuf>,
}

pub(super) fn ask_confirmation(plan: &crate::plan::Plan) -> anyhow::Result<bool> {
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
fn write_plan_text(plan: &crate::plan::Plan, verbose: bool) -> std::io::Result<()> {
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

fn join_rendering(rendering: std::thread::JoinHandle<std::io::Result<()>>) -> anyhow::Result<()> {
    rendering
        .join()
        .map_err(|_| anyhow::anyhow!("writing the plan failed"))?
        .context("writing to stdout")
}

/// A saved plan's guards count when sealed under this user's key (the token, else the
/// user's secret); otherwise the plan must also keep the guards apply enforces without it:
/// `--max-deletes`, the `cfgctl.yaml` of the current directory, else the defaults.
fn unsealed_refusals(
    opts: &ApplySettings,
    plan: &crate::plan::Plan,
) -> anyhow::Result<Vec<String>> {
    let key = ops::seal_key(
        opts.request.target.token.as_deref(),
        opts.secret_dir.as_deref(),
    );
    if key.is_some_and(|k| plan.guard.is_sealed(&plan.target, &k)) {
        return Ok(Vec::new());
    }
    let mut applied = crate::plan::GuardContext::default();
    let settings_file = Path::new(crate::settings::FILE_NAME);
    if settings_file.is_file() {
        let text = std::fs::read_to_string(settings_file)
            .with_context(|| format!("reading {}", settings_file.display()))?;
        let settings =
            crate::settings::parse(settings_file, &text).map_err(|problems| ops::Diagnosed {
                diagnostics: problems,
                message: format!(
                    "{} is not valid: nothing was changed",
                    settings_file.display()
                ),
            })?;
        applied.max_deletes = settings.max_deletes;
        applied.prune = settings.prune;
        applied.exclude = settings.exclude;
        applied.manage = settings.manage;
    }
    if let Some(max) = opts.max_deletes {
        applied.max_deletes = max;
    }
    Ok(crate::plan::unsealed_refusals(
        plan,
        &applied,
        opts.allow_empty_prune,
    ))
}

/// A saved plan, read as a stream (a plan of thousands of creates is tens of megabytes of
/// text, never held whole beside the objects it holds), before anything is sent.
fn parse_saved_plan(path: &Path) -> anyhow::Result<crate::plan::Plan> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("reading the plan file {}", path.display()))?;
    crate::apply::saved::parse(std::io::BufReader::with_capacity(1 << 16, file))
        .with_context(|| format!("reading the plan file {}", path.display()))
}

/// [`parse_saved_plan`] of `apply PLANFILE`'s file. A plan that names a kind this cfgctl does
/// not know may hold a kind its target adds (R4-5): the target's description is read first (the
/// environment the plan records names it, as for the apply), which registers the kinds it adds,
/// then the plan again.
fn read_saved_plan(opts: &ApplySettings) -> anyhow::Result<crate::plan::Plan> {
    let path = opts.request.dir.clone();
    match parse_saved_plan(&path) {
        Err(e)
            if e.downcast_ref::<crate::apply::saved::SavedPlanError>()
                .is_some_and(crate::apply::saved::names_an_unknown_kind) =>
        {
            // A kind the target adds: its description registers it, then the plan is read.
            let environment = std::fs::File::open(&path)
                .map_err(|e| crate::apply::saved::SavedPlanError::Invalid(e.to_string()))
                .and_then(|f| crate::apply::saved::environment_of(std::io::BufReader::new(f)))
                .with_context(|| format!("reading the plan file {}", path.display()))?;
            let target = saved_settings(opts.clone(), environment.as_deref())?;
            runtime()?.block_on(async {
                let conn = ops::connect(&target.request.target).await?;
                crate::state::capabilities(&conn.client)
                    .await
                    .context("reading the target's API description")
            })?;
            parse_saved_plan(&path)
        }
        read => read,
    }
}

/// A saved plan for the environments asked for (`--env`, `--all-envs`: refused unless exactly
/// its own, before anything is sent) and its target: the environment it records is applied
/// to that environment's target of the current directory's `cfgctl.yaml`, unless `--url` or
/// `--local` names one (the plan's target check still holds).
fn saved_settings(opts: ApplySettings, saved: Option<&str>) -> anyhow::Result<ApplySettings> {
    let here = Path::new(".");
    let requested: Vec<String> = if opts.all_envs {
        ops::select(here, &[], true)?
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect()
    } else {
        opts.envs.clone()
    };
    if let Some(refusal) = crate::plan::refuse_other_environment(saved, &requested) {
        return Err(refusal.into());
    }
    let Some(name) = saved else {
        return Ok(opts);
    };
    let target = &opts.request.target;
    if requested.is_empty() && target.url.is_some() && target.local.is_none() {
        return Ok(opts);
    }
    ops::refuse_one_target(target)?;
    let env = ops::select(here, &[name.to_string()], false)
        .with_context(|| {
            format!(
                "the saved plan was made for the environment `{}`, whose target is named by the cfgctl.yaml of the current directory (or pass --url)",
                crate::output::Inert(name)
            )
        })?
        .and_then(|envs| envs.into_iter().next())
        .context("no environment selected")?;
    let request = opts.request.for_environment(&env)?;
    Ok(ApplySettings { request, ..opts })
}

/// The saved plan (parsed already), refused when made for another target or stale; with
/// `--force-delete-buckets` its cascades are worked out again from the target.
async fn check_saved_plan(
    opts: &ApplySettings,
    conn: &Connection,
    mut plan: crate::plan::Plan,
) -> anyhow::Result<crate::plan::Plan> {
    if plan.target != conn.name {
        anyhow::bail!(
            "the plan in {} was made for {}, not for {}: nothing was changed",
            opts.request.dir.display(),
            plan.target,
            conn.name
        );
    }
    let stale = crate::apply::saved::stale(&conn.client, &plan, opts.parallelism)
        .await
        .context("checking the saved plan against the target")?;
    if !stale.is_empty() {
        let mut err = crate::output::stderr();
        for s in &stale {
            let _ = writeln!(err, "  {}", crate::output::Inert(s));
        }
        anyhow::bail!(
            "the saved plan is stale ({} changed since it was made): nothing was changed; run `cfgctl plan --out` again",
            plural(stale.len(), "resource", "resources")
        );
    }
    if opts.force_delete_buckets {
        crate::apply::saved::recompute_cascades(&conn.client, &mut plan)
            .await
            .context("reading what the saved plan's cascading deletes would take")?;
    }
    Ok(plan)
}

/// `cfgctl apply DIR` against one target (the command line's, or the one environment
/// selected: `cli::resolve`): plan, confirm, execute, report. Several environments are
/// applied by `apply_envs`.
pub fn apply(opts: ApplySettings) -> anyhow::Result<ExitCode> {
    apply_one(opts, None)
}

/// `cfgctl apply PLANFILE`: the saved plan read, against its target, confirmed, executed,
/// reported.
pub fn apply_saved(opts: ApplySettings) -> anyhow::Result<ExitCode> {
    let plan = read_saved_plan(&opts)?;
    let opts = saved_settings(opts, plan.guard.environment.as_deref())?;
    apply_one(opts, Some(plan))
}

/// Applies to one target: the plan made now, or the saved plan given.
fn apply_one(opts: ApplySettings, saved: Option<crate::plan::Plan>) -> anyhow::Result<ExitCode> {
    // The tokens file exists before anything is sent: a token is never created with nowhere
    // to keep it.
    if let Some(path) = &opts.service_account_tokens {
        crate::secrets::open_token_file(path).with_context(|| {
            format!(
                "--service-account-tokens: cannot create {}: nothing was changed",
                path.display()
            )
        })?;
    }
    let applied = apply_planned(&opts, saved);
    let succeeded = matches!(applied, Ok(ExitCode::SUCCESS));
    crate::secrets::close_token_file(succeeded)?;
    applied
}

/// Plans (or reads the saved plan), confirms, executes and reports.
fn apply_planned(
    opts: &ApplySettings,
    saved: Option<crate::plan::Plan>,
) -> anyhow::Result<ExitCode> {
    let from_file = saved.is_some();
    runtime()?.block_on(async {
        let (conn, plan, current) = planned_or_saved(opts, saved).await?;
        // What is sent: the plan's secret references resolved (the plan keeps them, for what
        // is shown); a reference that cannot be resolved stops the run before any request.
        // A saved plan's `${file:…}` are held to this checkout (no load checked them here).
        let scope = from_file.then(|| crate::secrets::saved_plan_scope(&plan));
        let sent = crate::secrets::fill_plan_in(&plan, scope.as_ref())?;
        // The very same check for a plan made now and a saved one; a saved plan whose guards
        // are not sealed for this user also keeps apply's own.
        let mut refused =
            crate::plan::refusals(&plan, opts.allow_empty_prune, opts.force_delete_buckets);
        if from_file {
            refused.extend(unsealed_refusals(opts, &plan)?);
        }
        let plan = std::sync::Arc::new(plan);
        let Some(rendering) = show_and_confirm(opts, &plan, &refused)? else {
            return Ok(ExitCode::SUCCESS);
        };
        let client = std::sync::Arc::new(conn.client);
        let outcomes = execute(opts, &client, &plan, sent.as_ref(), &current, rendering).await?;
        let summary =
            crate::apply::report::summary(&plan, &outcomes, client.throttle().slow_down());
        crate::output::stdout()
            .write_all(summary.as_bytes())
            .context("writing to stdout")?;
        let code = if crate::apply::report::all_ok(&plan, &outcomes) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
        // The command ends here (`let_go`).
        ops::let_go((plan, sent, outcomes, current));
        Ok(code)
    })
}

/// The plan made now through `ops` (with the target's objects, for the conflict rules), or
/// the saved plan read back; the connection it is sent through.
async fn planned_or_saved(
    opts: &ApplySettings,
    saved: Option<crate::plan::Plan>,
) -> anyhow::Result<(Connection, crate::plan::Plan, crate::plan::Current)> {
    if let Some(plan) = saved {
        let conn = ops::connect(&opts.request.target).await?;
        let plan = check_saved_plan(opts, &conn, plan).await?;
        return Ok((conn, plan, crate::plan::Current::default()));
    }
    let ops::Planned {
        mut plan,
        current: Some(current),
        manifests,
        connection: Some(conn),
        ..
    } = ops::plan(&opts.request).await?
    else {
        anyhow::bail!("the plan came back without what apply keeps");
    };
    plan.guard.environment = opts.request.environment.clone();
    let environment = opts.request.environment.as_deref();
    rotate_and_check(opts, &mut plan, manifests, &current, environment, false)?;
    if let Some(reviewed) = &opts.reviewed {
        if let Err(e) = ops::check_reviewed(reviewed, &plan) {
            if let ops::ReviewedError::Changed { differences, .. } = &e {
                let mut err = crate::output::stderr();
                let _ = writeln!(err, "changed since review:");
                for d in differences {
                    let _ = writeln!(err, "  {d}");
                }
            }
            return Err(e.into());
        }
    }
    Ok((conn, plan, current))
}

/// What apply does to a plan made now before anything is sent: the rotations asked for added
/// (`--rotate-secrets`: the manifests are kept for it), then the policy run on the plan, with
/// its own environment's manifests (its findings prefixed with its name when it is
/// `one_of_several`); a deny stops this target. The manifests, when kept, are
/// freed (on another thread, not before the first request): the plan holds what is sent.
pub(super) fn rotate_and_check(
    opts: &ApplySettings,
    plan: &mut crate::plan::Plan,
    manifests: Option<crate::manifest::Loaded>,
    current: &crate::plan::Current,
    environment: Option<&str>,
    one_of_several: bool,
) -> anyhow::Result<()> {
    if let (Some(patterns), Some(loaded)) = (&opts.rotate_secrets, &manifests) {
        crate::secrets::add_rotations(plan, &loaded.manifests, current, patterns);
    }
    crate::policy::check_planned(&opts.request.dir, manifests.as_ref(), plan, environment)?
        .print_and_enforce_in(environment.filter(|_| one_of_several))
        .map_err(|e| anyhow::anyhow!("{e}: nothing was changed"))?;
    if let Some(loaded) = manifests {
        ops::free_aside(loaded);
    }
    Ok(())
}

/// Shows the plan, refuses or asks for confirmation: `None` when there is nothing to do,
/// else the plan's text still being written (when approved ahead).
///
/// Approved ahead (`--auto-approve`) with something to do: the plan's text is written while
/// the first actions run (it is megabytes for thousands of creates), and the progress waits
/// for it, so the output reads as if it had come first. Otherwise the text comes first: it is
/// what is refused, or what is confirmed.
fn show_and_confirm(
    opts: &ApplySettings,
    plan: &std::sync::Arc<crate::plan::Plan>,
    refused: &[String],
) -> anyhow::Result<Option<Option<Rendering>>> {
    use std::io::IsTerminal;
    let ahead = opts.auto_approve && refused.is_empty() && !plan.actions.is_empty();
    let rendering = {
        let plan = std::sync::Arc::clone(plan);
        let verbose = opts.verbose;
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
    if !opts.auto_approve {
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

type Rendering = std::thread::JoinHandle<std::io::Result<()>>;

/// Runs the plan's actions with the progress on stderr (held until the plan's text is out);
/// then writes the new ServiceAccounts' tokens when asked.
async fn execute(
    opts: &ApplySettings,
    client: &std::sync::Arc<crate::client::Client>,
    plan: &crate::plan::Plan,
    sent: Option<&crate::plan::Plan>,
    current: &crate::plan::Current,
    rendering: Option<Rendering>,
) -> anyhow::Result<Vec<crate::apply::Outcome>> {
    let progress = std::sync::Arc::new(crate::apply::report::Progress::held(
        plan.actions.len(),
        crate::output::stderr_is_terminal(),
    ));
    let rendered = match rendering {
        // The progress is let go when the text is written.
        Some(rendering) => {
            let progress = std::sync::Arc::clone(&progress);
            Some(tokio::task::spawn_blocking(move || {
                let written = join_rendering(rendering);
                progress.release();
                written
            }))
        }
        None => {
            progress.release();
            None
        }
    };
    let outcomes = crate::apply::execute(
        std::sync::Arc::clone(client),
        sent.unwrap_or(plan),
        current,
        crate::apply::ExecOptions {
            parallelism: opts.parallelism,
            force_delete_buckets: opts.force_delete_buckets,
        },
        |a, o| progress.report(a, o),
    )
    .await;
    if let Some(rendered) = rendered {
        rendered.await.context("writing the plan")??;
    }
    progress.finish();
    Ok(outcomes)
}
