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

use super::load::{first_with, load_fetch, Source};
use super::{
    connect, let_go, plural, target_for, Connection, Diagnosed, SharedLoad, TargetError,
    TargetSettings,
};
use crate::api::registry::Kind;
use crate::config::pattern::Pattern;
use crate::manifest::Loaded;
use crate::ops::memo::{Memo, Remembered};
use crate::plan::{Current, Plan};

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
    let mut planned = plan_read(req, shared, base).await?;
    let (commit, dirty) = commit.await.context("reading git")?;
    planned.plan.review.commit = commit;
    planned.plan.review.uncommitted_changes = dirty;
    Ok(planned)
}

/// [`plan_sharing`] once the base (REV and its commit) is known.
async fn plan_read(
    req: &PlanRequest,
    shared: Option<&SharedLoad>,
    base: Option<(String, String)>,
) -> anyhow::Result<Planned> {
    let source = Source {
        dir: req.dir.clone(),
        env: req.environment.clone(),
        shared: shared.cloned(),
        lean: req.loads_lean(),
        listed: Default::default(),
    };
    tracing::debug!(
        drift = req.drift,
        environment = req.environment.as_deref(),
        "planning"
    );
    let (memo, loaded, conn, fetched) = match remembered_or_read(req, &source).await? {
        Reading::Remembered(planned) => return Ok(*planned),
        Reading::Read(read) => *read,
        // No memo, or its way could not start (no connection, the files not hashed): the
        // manifests load while the target is read, which reports a problem as without it.
        Reading::Unread { memo, conn } => {
            let connecting = async {
                match conn {
                    Some(conn) => Ok(*conn),
                    None => connect(&req.target).await,
                }
            };
            let (loaded, conn, fetched) = load_fetch(&source, connecting).await?;
            (memo, loaded, conn, fetched)
        }
    };
    planned(req, memo.as_ref(), conn, loaded, fetched, base).await
}

/// The memo of a request that may be answered from it: one that keeps nothing but the plan,
/// with no dry run (a folder that cannot be used is only logged).
fn memo_for(req: &PlanRequest) -> Option<Memo> {
    // A plan compared with a base depends on REV too, which no memo key holds.
    if req.server_validate || req.keep.anything() || req.base.is_some() {
        return None;
    }
    let dir = req.cache.as_deref()?;
    let request = crate::ops::memo::Request {
        prune: req.prune,
        only: req.only.clone(),
        environment: req.environment.clone(),
    };
    Memo::open_for(dir, req.target.token.as_deref(), request)
        .map_err(|e| tracing::warn!("{e}; planning without it"))
        .ok()
}

/// What the memo's way read: the files hashed (not parsed) while the lists were read (their
/// texts kept, not worked out), and the manifests loading already when nothing was
/// remembered.
struct MemoRead {
    memo: Memo,
    conn: Connection,
    remembered: Option<Remembered>,
    loading: Option<tokio::task::JoinHandle<anyhow::Result<Option<Loaded>>>>,
    listing: Result<crate::remote::state::Listing, crate::remote::client::ClientError>,
    /// The manifests' digests, worked out as they load (when nothing was remembered), for the
    /// pages worked out as they arrive (`state::WorkOut`).
    expected: crate::plan::Expected,
}

/// How far the memo's way went: to the plan itself, to what planning needs, or not at all
/// (with the memo and the connection, when there are).
enum Reading {
    Remembered(Box<Planned>),
    Read(
        Box<(
            Option<Memo>,
            Loaded,
            Connection,
            crate::remote::state::Fetched,
        )>,
    ),
    Unread {
        memo: Option<Memo>,
        conn: Option<Box<Connection>>,
    },
}

/// The memo's one hit-or-miss branch: the remembered plan when the target answers as it did
/// then (hit), else the manifests loaded and the lists read worked out (miss). Without a memo
/// (none asked, or its folder could not be used), unread.
async fn remembered_or_read(req: &PlanRequest, source: &Source) -> anyhow::Result<Reading> {
    let MemoRead {
        memo,
        conn,
        remembered,
        loading,
        listing,
        expected,
    } = match read_for_memo(req, source).await {
        Ok(read) => read,
        Err((memo, conn)) => {
            let conn = conn.map(Box::new);
            return Ok(Reading::Unread { memo, conn });
        }
    };
    // Hit or miss.
    let listing = match remembered {
        Some(remembered) => {
            let listing =
                listing.with_context(|| format!("reading the current state of {}", conn.name))?;
            if listing.answers == remembered.answers {
                tracing::info!("the manifests and the target are as at a no-change plan");
                // The pages read (megabytes): the command ends with this plan (`let_go`).
                let_go(listing);
                return Ok(Reading::Remembered(Box::new(Planned {
                    plan: remembered.plan,
                    known: remembered.known,
                    current: None,
                    manifests: None,
                    connection: None,
                    files_read_back: 0,
                })));
            }
            Ok(listing)
        }
        None => listing,
    };
    let (loaded, fetched) = work_out(source, &conn, loading, listing, expected).await?;
    Ok(Reading::Read(Box::new((Some(memo), loaded, conn, fetched))))
}

/// Opens the memo, then hashes the files while the lists are read, and recalls the entry of
/// what was hashed. `Err` with the memo and the connection (each when there is one) when
/// either could not be done: a memo that cannot be opened is only logged, and nothing is
/// hashed or read for it.
async fn read_for_memo(
    req: &PlanRequest,
    source: &Source,
) -> Result<MemoRead, (Option<Memo>, Option<Connection>)> {
    let Some(memo) = memo_for(req) else {
        return Err((None, None));
    };
    // Started now, while the connection is made; not when the memo remembers no plan at all
    // (a fresh CI runner's): nothing can be recalled, and a plan is remembered under the
    // hashes its own load makes, so the manifests load at once.
    let hashing = (!memo.remembers_nothing()).then(|| {
        let source = source.clone();
        tokio::spawn(async move { source.sources().await })
    });
    let Ok(conn) = connect(&req.target).await else {
        return Err((Some(memo), None));
    };
    // Once nothing is remembered, the pages are worked out as they arrive and the manifests
    // digested as they load, both while the lists are still read.
    let (work, expected) = <(crate::remote::state::WorkOut, crate::plan::Expected)>::default();
    let Some(hashing) = hashing else {
        tracing::debug!("the plan cache remembers nothing: loading at once");
        work.start(&expected);
        let loading = digested_as_loaded(source.spawn_early(), expected.clone());
        let listing = crate::remote::state::list_deferred_until(&conn.client, &work).await;
        return Ok(MemoRead {
            memo,
            conn,
            remembered: None,
            loading: Some(loading),
            listing,
            expected,
        });
    };
    let read = {
        let listing = crate::remote::state::list_deferred_until(&conn.client, &work);
        tokio::pin!(listing);
        let (hashed, listed) = first_with(hashing, listing.as_mut()).await;
        match hashed {
            Ok(Some(sources)) => {
                let id = memo.entry_id(&conn.name, &sources);
                let remembered = memo.recall(&id);
                // Nothing remembered: the manifests load while the lists are still read.
                let loading = remembered.is_none().then(|| {
                    work.start(&expected);
                    digested_as_loaded(source.spawn_early(), expected.clone())
                });
                let listing = match listed {
                    Some(l) => l,
                    None => listing.await,
                };
                Some((remembered, loading, listing))
            }
            _ => None,
        }
    };
    match read {
        Some((remembered, loading, listing)) => Ok(MemoRead {
            memo,
            conn,
            remembered,
            loading,
            listing,
            expected,
        }),
        None => Err((Some(memo), Some(conn))),
    }
}

/// The manifests of `early` (loading), digested on all cores as soon as they are loaded, while
/// the lists are still read (`plan::Expected::prepare`; a digest worked out already, as a shared
/// load's, is not worked out again).
fn digested_as_loaded(
    early: tokio::task::JoinHandle<anyhow::Result<Option<Loaded>>>,
    expected: crate::plan::Expected,
) -> tokio::task::JoinHandle<anyhow::Result<Option<Loaded>>> {
    tokio::spawn(async move {
        let loaded = early.await.context("loading the manifests")??;
        tokio::task::spawn_blocking(move || {
            loaded.iter().for_each(|l| expected.prepare(l));
            loaded
        })
        .await
        .context("digesting the manifests")
    })
}

/// The manifests loaded (already loading when nothing was remembered) and the kept pages
/// worked out. A manifest problem wins over a target problem, as without the memo.
async fn work_out(
    source: &Source,
    conn: &Connection,
    loading: Option<tokio::task::JoinHandle<anyhow::Result<Option<Loaded>>>>,
    listing: Result<crate::remote::state::Listing, crate::remote::client::ClientError>,
    expected: crate::plan::Expected,
) -> anyhow::Result<(Loaded, crate::remote::state::Fetched)> {
    let loading = loading.unwrap_or_else(|| source.spawn_early());
    // The lists worked out now, while the manifests still load: once the load knows what the
    // target holds, a lean load keeps the specs the plan will send (`Source::listed`).
    let finishing = {
        let (expected, listed) = (expected.clone(), std::sync::Arc::clone(&source.listed));
        tokio::task::spawn_blocking(move || {
            let fetched = listing?.finish(&expected)?;
            let _ = listed.set(crate::plan::Listed::of(&fetched.current));
            Ok::<_, crate::remote::client::ClientError>(fetched)
        })
    };
    // A manifest problem wins over a target problem.
    let loaded = loading.await.context("loading the manifests")??;
    let loaded = source.deferred(loaded).await?;
    let mut fetched = finishing
        .await
        .context("reading the lists")?
        .with_context(|| format!("reading the current state of {}", conn.name))?;
    tokio::task::spawn_blocking(move || {
        // Only the manifests the target has are compared (digested); the objects they
        // describe exactly let go of their text.
        let compared: Vec<&crate::manifest::Manifest> = loaded
            .manifests
            .iter()
            .filter(|m| fetched.current.resources.contains_key(&m.address()))
            .collect();
        crate::plan::prepare(&compared);
        expected.set(&compared, &loaded.settings);
        fetched.current.release_expected(&expected);
        anyhow::Ok((loaded, fetched))
    })
    .await
    .context("reading the lists")?
}

/// Plans in full; with `--server-validate` the server checks every create and update; with a
/// memo, the plan is remembered when it has nothing to do (a cache that cannot be written is
/// only logged). Keeps what the request asks for and lets go of the rest.
async fn planned(
    req: &PlanRequest,
    memo: Option<&Memo>,
    conn: Connection,
    loaded: Loaded,
    fetched: crate::remote::state::Fetched,
    base: Option<(String, String)>,
) -> anyhow::Result<Planned> {
    let (loaded, files_read_back) = super::load::read_back(loaded, &fetched.current).await?;
    let answers = fetched.answers;
    // Secrets answered in clear were compared with the resolved values, which no key holds.
    let in_clear = crate::plan::secrets::answered_in_clear(&fetched.current);
    let (refs, review) = super::base::review_of(&loaded, &req.dir, &fetched.current, base).await?;
    let (mut plan, current) =
        plan_fetched(&conn, &loaded, fetched, req.prune, &req.only, refs.as_ref())?;
    plan.review = review;
    // A plan (not a drift report) fails at the field of a secret it would send but cannot.
    if !req.drift {
        let unresolved = crate::plan::secrets::unresolved(&plan);
        if !unresolved.is_empty() {
            return Err(unresolved_error(&loaded, unresolved).into());
        }
    }
    if req.server_validate {
        let rejected =
            crate::apply::dry_run::server_validate(&conn.client, &mut plan, &loaded.manifests)
                .await
                .context("validating on the server")?;
        if !rejected.is_empty() {
            let message = format!(
                "the server rejected {} (dry run)",
                plural(rejected.len(), "change", "changes")
            );
            return Err(Diagnosed {
                diagnostics: rejected,
                message,
            }
            .into());
        }
    }
    if let Some(memo) = memo {
        // Keyed by what the load read, not by the hashing ahead (a file may have changed).
        let id = memo.entry_id(&conn.name, &loaded.sources);
        if in_clear {
            tracing::info!("secrets answered in clear: the plan is not remembered");
        } else if let Err(e) =
            memo.remember_resolved(&id, answers, &plan, &current.known, &loaded.resolved)
        {
            tracing::warn!("{e}");
        }
    }
    // What the request keeps; the rest is let go (the plan is all the caller needs of it).
    let mut current = current;
    let (known, current) = if req.keep.current {
        (current.known.clone(), Some(current))
    } else {
        let known = std::mem::take(&mut current.known);
        let_go(current);
        (known, None)
    };
    let manifests = if req.keep.manifests {
        Some(loaded)
    } else {
        let_go(loaded);
        None
    };
    Ok(Planned {
        plan,
        known,
        current,
        manifests,
        connection: req.keep.connection.then_some(conn),
        files_read_back,
    })
}

/// The secrets a plan sends but cannot resolve, each at its field.
fn unresolved_error(
    loaded: &Loaded,
    unresolved: Vec<crate::plan::secrets::Unresolved>,
) -> Diagnosed {
    let by_address: std::collections::BTreeMap<_, _> =
        loaded.manifests.iter().map(|m| (m.address(), m)).collect();
    let mut locator = crate::manifest::Locator::of(loaded);
    let diagnostics: Vec<crate::config::diagnostic::Diagnostic> = unresolved
        .into_iter()
        .filter_map(|u| {
            let m = by_address.get(&u.address)?;
            let pos = locator.field_pos(m, &u.pointer);
            let problem = crate::config::diagnostic::Problem::UnresolvedSecret {
                address: u.address.to_string(),
                field: u.path,
                reference: u.reference,
                reason: u.reason,
            };
            Some(crate::config::diagnostic::Diagnostic::error(
                &m.file, pos, problem,
            ))
        })
        .collect();
    Diagnosed {
        message: format!(
            "the plan cannot be made: {} it sends cannot be resolved; nothing was sent",
            plural(diagnostics.len(), "secret", "secrets")
        ),
        diagnostics,
    }
}

/// Plans the manifests against what was read from the target; plan errors are located.
fn plan_fetched(
    conn: &Connection,
    loaded: &Loaded,
    fetched: crate::remote::state::Fetched,
    prune: bool,
    only: &[Pattern],
    base: Option<&super::base::BaseRefs>,
) -> anyhow::Result<(Plan, Current)> {
    let mut fetched = fetched;
    // What the target answered for secrets stands as the manifests' references (`secrets`),
    // or as the base's where the reference changed since it.
    crate::plan::secrets::stand_in(&loaded.manifests, &mut fetched.current, base)?;
    let opts = crate::plan::PlanOptions {
        target: conn.name.clone(),
        prune,
        only: only.to_vec(),
    };
    let mut plan = match crate::plan::plan(
        &loaded.manifests,
        &fetched.current,
        &fetched.caps,
        &loaded.settings,
        &opts,
    ) {
        Ok(p) => p,
        Err(mut e) => {
            loaded.locate(&mut e.0);
            return Err(Diagnosed::from(e).into());
        }
    };
    let mut warnings = fetched.warnings;
    warnings.append(&mut plan.warnings);
    plan.warnings = warnings;
    Ok((plan, fetched.current))
}
