//! [`plan()`]: the one door to a plan. It owns the whole way there: the manifests loaded while
//! the target is read, the no-change memo (one hit-or-miss branch), the planner, the server's
//! dry run, and what the caller keeps of it all ([`Keep`]). `plan`, `drift`, `apply`,
//! `graph` and `pull` plan through it.
//!
//! A request carries everything a plan depends on (its target, its manifests, its options),
//! so several plans may run at once in one runtime, one per target or environment.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Context;

use super::{target_for, Connection, SharedLoad, TargetError, TargetSettings};
use crate::api::registry::Kind;
use crate::config::pattern::Pattern;
use crate::manifest::Loaded;
use crate::plan::{Current, Plan};

mod made;
mod read;

/// What to plan, against what, and what to keep of the way there.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    pub target: TargetSettings,
    /// The manifests' directory.
    pub dir: PathBuf,
    /// The environment the manifests are planned for (variables, overlay); part of the memo's
    /// key (the files hashed hold `cfgctl.yaml` and every overlay).
    pub environment: Option<String>,
    /// Deletes inside the prune scope (`--prune`).
    pub prune: bool,
    /// Only the resources matching these (all when empty).
    pub only: Vec<Pattern>,
    /// Every create and update sent as a dry run, so the server's own validation runs.
    pub server_validate: bool,
    /// A drift report is asked for: the same plan (said for the log and for hooks).
    pub drift: bool,
    /// The no-change memo's folder (`crate::ops::memo`); `None`: off.
    pub cache: Option<PathBuf>,
    /// `--base REV`: the git revision whose secret references are compared with the working
    /// tree's (`ops::base`); `None`: references are not compared.
    pub base: Option<String>,
    pub keep: Keep,
}

impl PlanRequest {
    /// The request of one environment: its target, its manifests.
    pub fn for_environment(
        &self,
        env: &crate::config::environments::Environment,
    ) -> Result<PlanRequest, TargetError> {
        Ok(PlanRequest {
            target: target_for(&self.target, env)?,
            environment: Some(env.name.clone()),
            ..self.clone()
        })
    }

    /// Whether its manifests load lean (`ops::load::Source::lean`): it keeps none and sends
    /// none for a dry run, so each lets go of its spec as it loads.
    pub fn loads_lean(&self) -> bool {
        !self.keep.manifests && !self.server_validate
    }
}

/// What the caller needs besides the plan and the kinds read. Each is kept only when asked
/// (the rest is let go at once), and each rules the memo out: a remembered plan has none.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    /// The loaded manifests (`pull`; `apply` with `--rotate-secrets` or a policy).
    pub manifests: bool,
    /// The target's objects as read (`apply`'s conflict rules, `pull`).
    pub current: bool,
    /// The connection (`apply` sends through it).
    pub connection: bool,
}

impl Keep {
    fn anything(self) -> bool {
        self.manifests || self.current || self.connection
    }
}

/// A plan and what its request asked to keep.
pub struct Planned {
    pub plan: Plan,
    /// The kinds the target's objects were read from.
    pub known: BTreeSet<Kind>,
    /// When [`Keep::current`].
    pub current: Option<Current>,
    /// When [`Keep::manifests`].
    pub manifests: Option<Loaded>,
    /// When [`Keep::connection`].
    pub connection: Option<Connection>,
    /// How many manifest files were read again for the specs the plan needed (a request that
    /// keeps no manifests loads them lean: `ops::load::read_back`); none for a no-change plan.
    pub files_read_back: usize,
}

/// The plan of `req`: remembered when the manifests and the target's answers are those of an
/// earlier no-change plan (`crate::ops::memo`), else made (and remembered when it has nothing to
/// do). Plan errors are [`Diagnosed`], located.
pub async fn plan(req: &PlanRequest) -> anyhow::Result<Planned> {
    plan_sharing(req, None).await
}

/// [`plan()`], its environment's manifests taken from a load several environments share
/// (`ops::envs`), when given.
pub(super) async fn plan_sharing(
    req: &PlanRequest,
    shared: Option<&SharedLoad>,
) -> anyhow::Result<Planned> {
    // The commit is asked of git while the plan is made; the base first: one that cannot be
    // read fails before any request.
    let dir = req.dir.clone();
    let commit = tokio::task::spawn_blocking(move || {
        // One more git call only when there is a commit to name.
        let commit = super::base::head_commit(&dir);
        let dirty = commit.is_some() && super::base::uncommitted_changes(&dir);
        (commit, dirty)
    });
    let base = match req.base.clone() {
        Some(rev) => {
            let dir = req.dir.clone();
            let resolved = tokio::task::spawn_blocking(move || {
                super::base::resolve(&dir, &rev).map(|commit| (rev, commit))
            });
            Some(resolved.await.context("reading git")??)
        }
        None => None,
    };
    let mut planned = read::plan_read(req, shared, base).await?;
    let (commit, dirty) = commit.await.context("reading git")?;
    planned.plan.review.commit = commit;
    planned.plan.review.uncommitted_changes = dirty;
    Ok(planned)
}
