//! The plan made from what was read: the references at the base compared, the planner run,
//! the server's dry run, the memo written, and what the request keeps.

use anyhow::Context;

use super::PlanRequest;
use crate::config::pattern::Pattern;
use crate::manifest::Loaded;
use crate::ops::memo::Memo;
use crate::ops::{let_go, plural, Connection, Diagnosed, Planned};
use crate::plan::{Current, Plan};

/// Plans in full; with `--server-validate` the server checks every create and update; with a
/// memo, the plan is remembered when it has nothing to do (a cache that cannot be written is
/// only logged). Keeps what the request asks for and lets go of the rest.
pub(super) async fn planned(
    req: &PlanRequest,
    memo: Option<&Memo>,
    conn: Connection,
    loaded: Loaded,
    fetched: crate::remote::state::Fetched,
    base: Option<(String, String)>,
) -> anyhow::Result<Planned> {
    let (loaded, files_read_back) = crate::ops::load::read_back(loaded, &fetched.current).await?;
    let answers = fetched.answers;
    // Secrets answered in clear were compared with the resolved values, which no key holds.
    let in_clear = crate::plan::secrets::answered_in_clear(&fetched.current);
    let (refs, review) =
        crate::ops::base::review_of(&loaded, &req.dir, &fetched.current, base).await?;
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
    base: Option<&crate::ops::base::BaseRefs>,
) -> anyhow::Result<(Plan, Current)> {
    let mut fetched = fetched;
    // What the target answered for secrets stands as the manifests' references (`secrets`),
    // or as the base's where the reference changed since it.
    crate::plan::secrets::stand_in(&loaded.manifests, &mut fetched.current, base)?;
    let opts = crate::plan::PlanOptions {
        target: conn.name.clone(),
        prune,
        only: only.to_vec(),
        references_declared: loaded.references_declared,
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
