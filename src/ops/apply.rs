//! `cfgctl apply` against one target, orchestrated: the plan made now (rotations, policy, the
//! reviewed check) or the saved plan read back (its environment, its target, its staleness,
//! its unsealed guards), the secrets filled into what is sent, apply's refusals, the actions
//! run, the tokens file kept. What the user sees and answers goes through [`ApplyUi`]: `ops`
//! neither prints nor reads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use super::{Connection, PlanRequest};
use crate::apply::Outcome;
use crate::plan::{Action, Current, Plan};

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
    pub rotate_secrets: Option<Vec<crate::config::pattern::Pattern>>,
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

/// What apply asks of whoever runs it (the command's terminal), in this order: the plan
/// shown and confirmed, each finished action, the summary. `ops` neither prints nor reads.
pub struct ApplyUi<'a> {
    /// Shows the plan and what refuses it; an error when refused or not confirmed, `false`
    /// when there is nothing to send.
    pub confirm: Confirm<'a>,
    /// One action finished.
    pub progress: Progress<'a>,
    /// Every action finished: the run's summary (the plan, each action's outcome, how the
    /// target slowed it down), once what is still being shown is out.
    pub summary: Summary<'a>,
}

/// [`ApplyUi::confirm`].
pub type Confirm<'a> = Box<dyn Fn(&Arc<Plan>, &[String]) -> anyhow::Result<bool> + 'a>;

/// [`ApplyUi::progress`].
pub type Progress<'a> = Box<dyn Fn(&Action, &Outcome) + 'a>;

/// [`ApplyUi::summary`].
pub type Summary<'a> = Box<
    dyn Fn(&Plan, &[Outcome], Option<crate::remote::throttle::SlowDown>) -> anyhow::Result<()> + 'a,
>;

/// A saved plan refused because the target changed since it was made; the command edge lists
/// the resources, one a line, above the error.
#[derive(Debug, thiserror::Error)]
#[error("the saved plan is stale ({} changed since it was made): nothing was changed; run `cfgctl plan --out` again", super::plural(.resources.len(), "resource", "resources"))]
pub struct StalePlan {
    pub resources: Vec<String>,
}

/// `cfgctl apply DIR` against one target (the command line's, or the one environment
/// selected: `cli::resolve`): plan, confirm, execute, report. Whether every action succeeded.
pub async fn apply(opts: ApplySettings, ui: &ApplyUi<'_>) -> anyhow::Result<bool> {
    apply_one(opts, None, ui).await
}

/// `cfgctl apply PLANFILE`: the saved plan read, against its target, confirmed, executed,
/// reported. Whether every action succeeded.
pub async fn apply_saved(opts: ApplySettings, ui: &ApplyUi<'_>) -> anyhow::Result<bool> {
    let plan = read_saved_plan(&opts).await?;
    let opts = saved_settings(opts, plan.guard.environment.as_deref())?;
    apply_one(opts, Some(plan), ui).await
}

/// Applies to one target: the plan made now, or the saved plan given.
async fn apply_one(
    opts: ApplySettings,
    saved: Option<Plan>,
    ui: &ApplyUi<'_>,
) -> anyhow::Result<bool> {
    // The tokens file exists before anything is sent: a token is never created with nowhere
    // to keep it.
    if let Some(path) = &opts.service_account_tokens {
        crate::plan::secrets::open_token_file(path).with_context(|| {
            format!(
                "--service-account-tokens: cannot create {}: nothing was changed",
                path.display()
            )
        })?;
    }
    let applied = apply_planned(&opts, saved, ui).await;
    let succeeded = matches!(applied, Ok(true));
    crate::plan::secrets::close_token_file(succeeded)?;
    applied
}

/// Plans (or reads the saved plan), confirms, executes and reports.
async fn apply_planned(
    opts: &ApplySettings,
    saved: Option<Plan>,
    ui: &ApplyUi<'_>,
) -> anyhow::Result<bool> {
    let from_file = saved.is_some();
    let (conn, plan, current) = planned_or_saved(opts, saved).await?;
    // What is sent: the plan's secret references resolved (the plan keeps them, for what
    // is shown); a reference that cannot be resolved stops the run before any request.
    // A saved plan's `${file:…}` are held to this checkout (no load checked them here).
    let scope = from_file.then(|| crate::plan::secrets::saved_plan_scope(&plan));
    let sent = crate::plan::secrets::fill_plan_in(&plan, scope.as_ref())?;
    // The very same check for a plan made now and a saved one; a saved plan whose guards
    // are not sealed for this user also keeps apply's own.
    let mut refused =
        crate::plan::refusals(&plan, opts.allow_empty_prune, opts.force_delete_buckets);
    if from_file {
        refused.extend(unsealed_refusals(opts, &plan)?);
    }
    let plan = Arc::new(plan);
    if !(ui.confirm)(&plan, &refused)? {
        return Ok(true);
    }
    let client = Arc::new(conn.client);
    let outcomes = crate::apply::execute(
        Arc::clone(&client),
        sent.as_ref().unwrap_or(&plan),
        &current,
        crate::apply::ExecOptions {
            parallelism: opts.parallelism,
            force_delete_buckets: opts.force_delete_buckets,
        },
        |a, o| (ui.progress)(a, o),
    )
    .await;
    (ui.summary)(&plan, &outcomes, client.throttle().slow_down())?;
    let ok = crate::apply::report::all_ok(&plan, &outcomes);
    // The command ends here (`let_go`).
    super::let_go((plan, sent, outcomes, current));
    Ok(ok)
}

/// The plan made now through `ops` (with the target's objects, for the conflict rules), or
/// the saved plan read back; the connection it is sent through.
async fn planned_or_saved(
    opts: &ApplySettings,
    saved: Option<Plan>,
) -> anyhow::Result<(Connection, Plan, Current)> {
    if let Some(plan) = saved {
        let (conn, plan) = check_saved_plan(opts, plan).await?;
        return Ok((conn, plan, Current::default()));
    }
    let super::Planned {
        mut plan,
        current: Some(current),
        manifests,
        connection: Some(conn),
        ..
    } = super::plan(&opts.request).await?
    else {
        anyhow::bail!("the plan came back without what apply keeps");
    };
    plan.guard.environment = opts.request.environment.clone();
    let environment = opts.request.environment.as_deref();
    rotate_and_check(opts, &mut plan, manifests, &current, environment, false)?;
    if let Some(reviewed) = &opts.reviewed {
        super::check_reviewed(reviewed, &plan)?;
    }
    Ok((conn, plan, current))
}

/// What apply does to a plan made now before anything is sent: the rotations asked for added
/// (`--rotate-secrets`: the manifests are kept for it), then the policy run on the plan, with
/// its own environment's manifests (its findings prefixed with its name when it is
/// `one_of_several`); a deny stops this target. The manifests, when kept, are
/// freed (on another thread, not before the first request): the plan holds what is sent.
pub fn rotate_and_check(
    opts: &ApplySettings,
    plan: &mut Plan,
    manifests: Option<crate::manifest::Loaded>,
    current: &Current,
    environment: Option<&str>,
    one_of_several: bool,
) -> anyhow::Result<()> {
    if let (Some(patterns), Some(loaded)) = (&opts.rotate_secrets, &manifests) {
        crate::plan::secrets::add_rotations(plan, &loaded.manifests, current, patterns);
    }
    crate::ops::policy::check_planned(&opts.request.dir, manifests.as_ref(), plan, environment)?
        .print_and_enforce_in(environment.filter(|_| one_of_several))
        .map_err(|e| anyhow::anyhow!("{e}: nothing was changed"))?;
    if let Some(loaded) = manifests {
        super::free_aside(loaded);
    }
    Ok(())
}

/// The saved plan (parsed already) against its target, connected: refused when made for
/// another target or stale; with `--force-delete-buckets` its cascades are worked out again
/// from the target.
async fn check_saved_plan(
    opts: &ApplySettings,
    mut plan: Plan,
) -> anyhow::Result<(Connection, Plan)> {
    let conn = super::connect(&opts.request.target).await?;
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
        return Err(StalePlan { resources: stale }.into());
    }
    if opts.force_delete_buckets {
        crate::apply::saved::recompute_cascades(&conn.client, &mut plan)
            .await
            .context("reading what the saved plan's cascading deletes would take")?;
    }
    Ok((conn, plan))
}

/// A saved plan's guards count when sealed under this user's key (the token, else the
/// user's secret); otherwise the plan must also keep the guards apply enforces without it:
/// `--max-deletes`, the `cfgctl.yaml` of the current directory, else the defaults.
fn unsealed_refusals(opts: &ApplySettings, plan: &Plan) -> anyhow::Result<Vec<String>> {
    let key = super::seal_key(
        opts.request.target.token.as_deref(),
        opts.secret_dir.as_deref(),
    );
    if key.is_some_and(|k| plan.guard.is_sealed(&plan.target, &k)) {
        return Ok(Vec::new());
    }
    let mut applied = crate::plan::GuardContext::default();
    let settings_file = Path::new(crate::config::settings::FILE_NAME);
    if settings_file.is_file() {
        let text = std::fs::read_to_string(settings_file)
            .with_context(|| format!("reading {}", settings_file.display()))?;
        let settings =
            crate::config::settings::parse(settings_file, &text).map_err(|problems| {
                super::Diagnosed {
                    diagnostics: problems,
                    message: format!(
                        "{} is not valid: nothing was changed",
                        settings_file.display()
                    ),
                }
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
fn parse_saved_plan(path: &Path) -> anyhow::Result<Plan> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("reading the plan file {}", path.display()))?;
    crate::apply::saved::parse(std::io::BufReader::with_capacity(1 << 16, file))
        .with_context(|| format!("reading the plan file {}", path.display()))
}

/// [`parse_saved_plan`] of `apply PLANFILE`'s file. A plan that names a kind this cfgctl does
/// not know may hold a kind its target adds (R4-5): the target's description is read first (the
/// environment the plan records names it, as for the apply), which registers the kinds it adds,
/// then the plan again.
async fn read_saved_plan(opts: &ApplySettings) -> anyhow::Result<Plan> {
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
            let conn = super::connect(&target.request.target).await?;
            crate::remote::state::capabilities(&conn.client)
                .await
                .context("reading the target's API description")?;
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
        super::select(here, &[], true)?
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
    super::refuse_one_target(target)?;
    let env = super::select(here, &[name.to_string()], false)
        .with_context(|| {
            format!(
                "the saved plan was made for the environment `{}`, whose target is named by the cfgctl.yaml of the current directory (or pass --url)",
                crate::util::output::Inert(name)
            )
        })?
        .and_then(|envs| envs.into_iter().next())
        .context("no environment selected")?;
    let request = opts.request.for_environment(&env)?;
    Ok(ApplySettings { request, ..opts })
}
