//! `cfgctl apply PLANFILE`'s own checks: the saved plan read back (a kind its target adds
//! registered first), its environment's target, the plan held to that target (the target it
//! was made for, nothing changed since, its cascades worked out again) and the guards apply
//! keeps when the plan's are not sealed for this user. [`apply_saved`] then sends it as
//! `ops::apply` sends a plan made now.

use std::path::Path;

use anyhow::Context;

use super::apply::{keeping_tokens, send, ApplySettings, ApplyUi, Ready};
use super::Connection;
use crate::plan::{Current, Plan};

/// A saved plan refused because the target changed since it was made; the command edge lists
/// the resources, one a line, above the error.
#[derive(Debug, thiserror::Error)]
#[error("the saved plan is stale ({} changed since it was made): nothing was changed; run `cfgctl plan --out` again", super::plural(.resources.len(), "resource", "resources"))]
pub struct StalePlan {
    pub resources: Vec<String>,
}

/// `cfgctl apply PLANFILE`: the saved plan read, against its target, confirmed, executed,
/// reported. Whether every action succeeded.
pub async fn apply_saved(opts: ApplySettings, ui: &ApplyUi<'_>) -> anyhow::Result<bool> {
    let plan = read_saved_plan(&opts).await?;
    let opts = saved_settings(opts, plan.guard.environment.as_deref())?;
    keeping_tokens(opts.service_account_tokens.as_deref(), async {
        let (conn, plan) = check_saved_plan(&opts, plan).await?;
        // Its `${file:…}` secrets are held to this checkout (no load checked them here).
        let scope = crate::plan::secrets::saved_plan_scope(&plan);
        let ready = Ready {
            conn,
            plan,
            current: Current::default(),
            scope: Some(scope),
        };
        // Its guards, when not sealed for this user, also keep apply's own.
        send(&opts, ready, |plan| unsealed_refusals(&opts, plan), ui).await
    })
    .await
}

/// The saved plan (parsed already) against its target, connected: refused when made for
/// another target or stale; with `--force-delete-buckets` its cascades are worked out again
/// from the target.
async fn check_saved_plan(
    opts: &ApplySettings,
    mut plan: Plan,
) -> anyhow::Result<(Connection, Plan)> {
    let conn = super::connect(&opts.request.target).await?;
    refuse_other_target(opts, &plan.target, &conn)?;
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

/// A saved plan is applied only to the target it was made for, checked before any request.
fn refuse_other_target(
    opts: &ApplySettings,
    made_for: &str,
    conn: &Connection,
) -> anyhow::Result<()> {
    if made_for != conn.name {
        anyhow::bail!(
            "the plan in {} was made for {}, not for {}: nothing was changed",
            opts.request.dir.display(),
            made_for,
            conn.name
        );
    }
    Ok(())
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
            // A kind the target adds: its description registers it, then the plan is read;
            // the plan's own target first, before any request (red team E13).
            let recorded = std::fs::File::open(&path)
                .map_err(|e| crate::apply::saved::SavedPlanError::Invalid(e.to_string()))
                .and_then(|f| crate::apply::saved::recorded_of(std::io::BufReader::new(f)))
                .with_context(|| format!("reading the plan file {}", path.display()))?;
            let target = saved_settings(opts.clone(), recorded.environment.as_deref())?;
            let conn = super::connect(&target.request.target).await?;
            refuse_other_target(opts, recorded.target.as_deref().unwrap_or_default(), &conn)?;
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
