//! `cfgctl plan` and `cfgctl drift`: read the target, plan, render.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::*;

/// Options of `cfgctl plan` and `cfgctl drift`.
#[derive(Debug, Clone)]
pub struct PlanCommand {
    pub dir: PathBuf,
    pub format: Format,
    pub detailed_exitcode: bool,
    pub out: Option<PathBuf>,
    pub prune: bool,
    pub server_validate: bool,
    pub only: Vec<crate::pattern::Pattern>,
    /// `drift`: exit 2 on drift, the prune scope counted.
    pub drift: bool,
    pub verbose: bool,
    /// The plan cache's directory (`crate::memo`); `None`: off.
    pub cache: Option<PathBuf>,
    /// Where the user's secret that seals saved plans lives (see `seal_key`).
    pub secret_dir: Option<PathBuf>,
    pub target: TargetOptions,
}

/// `cfgctl plan` / `cfgctl drift`.
pub fn plan(opts: PlanCommand) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let (mut plan, known) = if opts.server_validate {
            let (loaded, conn, fetched) = load_connect_fetch(&opts.dir, &opts.target).await?;
            let (mut plan, current) =
                plan_fetched(&conn, &loaded, fetched, opts.prune, &opts.only)?;
            let rejected =
                crate::apply::dry_run::server_validate(&conn.client, &mut plan, &loaded.manifests)
                    .await
                    .context("validating on the server")?;
            if !rejected.is_empty() {
                print_diagnostics(&rejected);
                anyhow::bail!(
                    "the server rejected {} (dry run)",
                    plural(rejected.len(), "change", "changes")
                );
            }
            (plan, current.known)
        } else {
            remembered_or_planned(&opts).await?
        };

        // Written as it is made, through a buffer: a plan of thousands of creates is
        // megabytes of text, never held whole.
        {
            let mut out = crate::output::stdout_buffered();
            let written = match opts.format {
                format if opts.drift => write_drift(&mut out, &plan, &known, format, opts.verbose),
                Format::Text => crate::render::write_text(
                    &mut out,
                    &plan,
                    crate::render::TextOptions {
                        color: crate::output::stdout_has_color(),
                        verbose: opts.verbose,
                        drift: opts.drift,
                    },
                ),
                Format::Json => crate::render::write_json_plan(&mut out, &plan, false),
                Format::Markdown => out.write_all(
                    crate::render::markdown(&plan, crate::render::MARKDOWN_BUDGET, opts.drift)
                        .as_bytes(),
                ),
            };
            written
                .and_then(|()| out.flush())
                .context("writing to stdout")?;
        }
        if let Some(path) = &opts.out {
            if let Some(key) = seal_key(opts.target.token.as_deref(), opts.secret_dir.as_deref()) {
                plan.guard.seal = Some(
                    plan.guard
                        .seal_with(&plan.target, &key)
                        .to_hex()
                        .to_string(),
                );
            }
            let file = std::fs::File::create(path)
                .with_context(|| format!("writing the plan to {}", path.display()))?;
            let mut w = std::io::BufWriter::new(file);
            crate::render::write_saved_plan(&mut w, &plan)
                .and_then(|()| w.flush())
                .with_context(|| format!("writing the plan to {}", path.display()))?;
        }
        let code = if opts.drift {
            if plan.has_drift() {
                2
            } else {
                0
            }
        } else if opts.detailed_exitcode && plan.has_changes() {
            2
        } else {
            0
        };
        // The command ends here (`let_go`).
        super::let_go((plan, known));
        Ok(ExitCode::from(code))
    })
}

/// The plan, remembered when the manifests and the target's answers are those of an earlier
/// no-change plan (`crate::memo`), else made (and remembered when it has nothing to do); the
/// kinds read.
async fn remembered_or_planned(
    opts: &PlanCommand,
) -> anyhow::Result<(crate::plan::Plan, BTreeSet<crate::registry::Kind>)> {
    let memo = opts.cache.as_deref().and_then(|dir| {
        crate::memo::Memo::open(dir, opts.target.token.as_deref())
            .map_err(|e| tracing::warn!("{e}; planning without it"))
            .ok()
    });
    let Some(memo) = memo else {
        let (loaded, conn, fetched) = load_connect_fetch(&opts.dir, &opts.target).await?;
        let (plan, current) = plan_fetched(&conn, &loaded, fetched, opts.prune, &opts.only)?;
        super::let_go(loaded);
        return Ok((plan, known_of(current)));
    };
    let inputs = |sources, target| crate::memo::Inputs {
        sources,
        target,
        prune: opts.prune,
        only: &opts.only,
    };
    // The files hashed (not parsed) while the lists are read (their texts kept, not worked
    // out). A problem with either: planned in full, which reports it as without the memo.
    let dir = opts.dir.clone();
    let hashing = tokio::task::spawn_blocking(move || crate::manifest::sources(&dir));
    let Ok(conn) = connect(&opts.target).await else {
        let (loaded, conn, fetched) = load_connect_fetch(&opts.dir, &opts.target).await?;
        return plan_remembering(&memo, opts, &conn, &loaded, fetched);
    };
    // Once nothing is remembered, the pages are worked out as they arrive and the manifests
    // digested as they load, both while the lists are still read.
    let (work, expected) = <(crate::state::WorkOut, crate::plan::Expected)>::default();
    let read = {
        let listing = crate::state::list_deferred_until(&conn.client, &work);
        tokio::pin!(listing);
        let (hashed, listed) = first_with(hashing, listing.as_mut()).await;
        match hashed {
            Ok(Ok(sources)) => {
                let id = memo.entry_id(&inputs(&sources, &conn.name));
                let remembered = memo.recall(&id);
                // Nothing remembered: the manifests load while the lists are still read.
                let dir = opts.dir.clone();
                let loading = remembered.is_none().then(|| {
                    work.start(&expected);
                    let expected = expected.clone();
                    tokio::task::spawn_blocking(move || {
                        let loaded = load_early(&dir)?;
                        loaded.iter().for_each(|l| expected.prepare(l));
                        anyhow::Ok(loaded)
                    })
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
    let Some((remembered, loading, listing)) = read else {
        let (loaded, conn, fetched) = load_fetch(&opts.dir, async { Ok(conn) }).await?;
        return plan_remembering(&memo, opts, &conn, &loaded, fetched);
    };
    let listing = match remembered {
        Some(remembered) => {
            let listing =
                listing.with_context(|| format!("reading the current state of {}", conn.name))?;
            if listing.answers == remembered.answers {
                tracing::info!("the manifests and the target are as at a no-change plan");
                // The pages read (megabytes): the command ends with this plan (`let_go`).
                super::let_go(listing);
                return Ok((remembered.plan, remembered.known));
            }
            Ok(listing)
        }
        None => listing,
    };
    // Planned in full from what was read; the manifests are loading already when nothing was
    // remembered.
    let loading = loading.unwrap_or_else(|| {
        let dir = opts.dir.clone();
        tokio::task::spawn_blocking(move || load_early(&dir))
    });
    // A manifest problem wins over a target problem, as without the memo.
    let loaded = loading.await.context("loading the manifests")??;
    let loaded = load_deferred(loaded, &opts.dir).await?;
    let listing = listing.with_context(|| format!("reading the current state of {}", conn.name))?;
    let name = conn.name.clone();
    let (loaded, fetched) = tokio::task::spawn_blocking(move || {
        let mut fetched = listing
            .finish(&expected)
            .with_context(|| format!("reading the current state of {name}"))?;
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
    .context("reading the lists")??;
    let planned = plan_remembering(&memo, opts, &conn, &loaded, fetched);
    super::let_go(loaded);
    planned
}

/// Plans in full and remembers the plan when it has nothing to do (a cache that cannot be
/// written is only logged).
fn plan_remembering(
    memo: &crate::memo::Memo,
    opts: &PlanCommand,
    conn: &Connection,
    loaded: &crate::manifest::Loaded,
    fetched: crate::state::Fetched,
) -> anyhow::Result<(crate::plan::Plan, BTreeSet<crate::registry::Kind>)> {
    let answers = fetched.answers;
    // Secrets answered in clear were compared with the resolved values, which no key holds.
    let in_clear = crate::secrets::answered_in_clear(&fetched.current);
    let (plan, current) = plan_fetched(conn, loaded, fetched, opts.prune, &opts.only)?;
    let inputs = crate::memo::Inputs {
        sources: &loaded.sources,
        target: &conn.name,
        prune: opts.prune,
        only: &opts.only,
    };
    // Keyed by what the load read, not by the hashing ahead (a file may have changed since).
    let id = memo.entry_id(&inputs);
    if in_clear {
        tracing::info!("secrets answered in clear: the plan is not remembered");
    } else if let Err(e) = memo.remember(&id, answers, &plan, &current.known) {
        tracing::warn!("{e}");
    }
    Ok((plan, known_of(current)))
}

/// The kinds the target's objects were read from; the objects are let go (`let_go`: the plan
/// is all the command still needs).
fn known_of(mut current: crate::plan::Current) -> BTreeSet<crate::registry::Kind> {
    let known = std::mem::take(&mut current.known);
    super::let_go(current);
    known
}

/// The `drift` report in the chosen format (JSON written as it is made).
fn write_drift(
    w: &mut impl Write,
    plan: &crate::plan::Plan,
    known: &std::collections::BTreeSet<crate::registry::Kind>,
    format: Format,
    verbose: bool,
) -> std::io::Result<()> {
    match format {
        Format::Text => w.write_all(
            crate::render::drift::text(plan, known, crate::output::stdout_has_color(), verbose)
                .as_bytes(),
        ),
        Format::Json => crate::render::drift::write_json(w, plan, known),
        Format::Markdown => w.write_all(
            crate::render::drift::markdown(plan, known, crate::render::MARKDOWN_BUDGET).as_bytes(),
        ),
    }
}
