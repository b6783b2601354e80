//! The reading a plan is made from: the no-change memo's one hit-or-miss branch, else the
//! manifests loaded while the target's lists are read and worked out. It ends by handing what
//! was read to [`made`](super::made), which makes the plan.

use anyhow::Context;

use super::made::planned;
use super::PlanRequest;
use crate::manifest::Loaded;
use crate::ops::load::{first_with, load_fetch, Source};
use crate::ops::memo::{Memo, Remembered};
use crate::ops::Connection;
use crate::ops::{connect, let_go, Planned, SharedLoad};

/// [`plan_sharing`] once the base (REV and its commit) is known.
pub(super) async fn plan_read(
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
        // Only the manifests the target has are compared (digested), unless every one was as
        // it loaded; the objects they describe exactly let go of their text.
        if !expected.is_set() {
            let compared: Vec<&crate::manifest::Manifest> = loaded
                .manifests
                .iter()
                .filter(|m| fetched.current.resources.contains_key(&m.address()))
                .collect();
            crate::plan::prepare(&compared);
            expected.set(&compared, &loaded.settings);
        }
        fetched.current.release_expected(&expected);
        anyhow::Ok((loaded, fetched))
    })
    .await
    .context("reading the lists")?
}
