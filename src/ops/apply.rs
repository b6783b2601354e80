//! `cfgctl apply` against one target: [`apply()`], the plan made now (`ops::review`: rotations,
//! policy, the reviewed check); `ops::saved` holds `apply PLANFILE`'s own checks. Then, for
//! both, the one way a plan is sent ([`send`]): the secrets filled into what is sent, apply's
//! refusals, the actions run, the tokens file kept. What the user sees and answers goes
//! through [`ApplyUi`]: `ops` neither prints nor reads.

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

/// `cfgctl apply DIR` against one target (the command line's, or the one environment
/// selected: `cli::resolve`): plan, confirm, execute, report. Whether every action succeeded.
pub async fn apply(opts: ApplySettings, ui: &ApplyUi<'_>) -> anyhow::Result<bool> {
    keeping_tokens(opts.service_account_tokens.as_deref(), async {
        let (conn, plan, current) = super::review::plan_for_apply(
            &opts.request,
            opts.rotate_secrets.as_deref(),
            opts.reviewed.as_deref(),
        )
        .await?;
        let ready = Ready {
            conn,
            plan,
            current,
            scope: None,
        };
        send(&opts, ready, |_| Ok(Vec::new()), ui).await
    })
    .await
}

/// Runs an apply (`run`) with the `--service-account-tokens` file: created before anything is
/// sent (a token is never created with nowhere to keep it), closed after.
pub(super) async fn keeping_tokens(
    tokens: Option<&Path>,
    run: impl std::future::Future<Output = anyhow::Result<bool>>,
) -> anyhow::Result<bool> {
    if let Some(path) = tokens {
        crate::plan::secrets::open_token_file(path).with_context(|| {
            format!(
                "--service-account-tokens: cannot create {}: nothing was changed",
                path.display()
            )
        })?;
    }
    let applied = run.await;
    let succeeded = matches!(applied, Ok(true));
    crate::plan::secrets::close_token_file(succeeded)?;
    applied
}

/// A plan ready to be sent: made now, or saved and checked against its target.
pub(super) struct Ready {
    /// What it is sent through.
    pub conn: Connection,
    pub plan: Plan,
    /// The target's objects (the conflict rules); none for a saved plan.
    pub current: Current,
    /// Where its `${file:…}` secrets may be read, when not where its manifests were loaded.
    pub scope: Option<crate::util::file_ref::FileScope>,
}

/// Sends a plan: what is sent is the plan's secret references resolved (the plan keeps them,
/// for what is shown; a reference that cannot be resolved stops the run before any request);
/// apply's refusals (the very same check for a plan made now and a saved one, with `refusals`'
/// own: a saved plan's unsealed guards), confirmed, executed, reported.
pub(super) async fn send(
    opts: &ApplySettings,
    ready: Ready,
    refusals: impl FnOnce(&Plan) -> anyhow::Result<Vec<String>>,
    ui: &ApplyUi<'_>,
) -> anyhow::Result<bool> {
    let Ready {
        conn,
        plan,
        current,
        scope,
    } = ready;
    let sent = crate::plan::secrets::fill_plan_in(&plan, scope.as_ref())?;
    let mut refused =
        crate::plan::refusals(&plan, opts.allow_empty_prune, opts.force_delete_buckets);
    refused.extend(refusals(&plan)?);
    refused.extend(crate::plan::over_ceiling(&plan, opts.max_deletes));
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
