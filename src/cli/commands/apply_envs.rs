//! `apply DIR` over several environments (docs/environments.md): every environment planned
//! at once, one report and one confirmation for all, then each environment applied on its
//! own, at once (its own connection, throttle and `--parallelism`); the summary says which
//! succeeded. One environment's failure (unreachable, refused, a failed action) never stops
//! the others; the exit code is 1 when any failed.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;

use super::apply::ApplySettings;
use super::plan_envs::{failure, plan_all};
use super::{plural, runtime};
use crate::config::environments::Environment;
use crate::ops;
use crate::plan::{Current, Plan};
use crate::render::environments::{self as report, EnvFailure};
use crate::util::output::Inert;

/// An environment ready to be applied: its plan (what is shown), what is sent, its state and
/// its client.
struct Ready {
    plan: Arc<Plan>,
    sent: Option<Plan>,
    current: Current,
    client: Arc<crate::remote::client::Client>,
}

/// One environment: ready, or why not.
type Prepared = (String, Result<Ready, EnvFailure>);

/// `cfgctl apply DIR --env A --env B` / `--all-envs`.
pub fn apply_several(opts: &ApplySettings, envs: Vec<Environment>) -> anyhow::Result<ExitCode> {
    if opts.service_account_tokens.is_some() {
        anyhow::bail!(
            "--service-account-tokens writes one tenant's tokens: apply one environment (--env NAME) at a time with it: nothing was changed"
        );
    }
    let runtime = runtime()?;
    let outcomes = plan_all(&runtime, &opts.request, envs);
    let prepared: Vec<Prepared> = outcomes
        .into_iter()
        .map(|o| {
            let ready = match o.planned {
                Ok(planned) => {
                    prepare(opts, &o.name, planned).map_err(|e| failure(&o.name, o.url, None, &e))
                }
                Err(e) => Err(failure(&o.name, o.url, o.stage, &e)),
            };
            (o.name, ready)
        })
        .collect();
    show(&prepared, opts.verbose)?;
    let actions: usize = prepared
        .iter()
        .filter_map(|(_, r)| Some(r.as_ref().ok()?.plan.actions.len()))
        .sum();
    let failed = prepared.iter().any(|(_, r)| r.is_err());
    if actions == 0 {
        writeln!(crate::util::output::stdout(), "\nNothing to apply.")
            .context("writing to stdout")?;
        return Ok(ExitCode::from(u8::from(failed)));
    }
    if !opts.auto_approve {
        confirm(&prepared, actions)?;
    }
    let applied = runtime.block_on(execute_all(opts, &prepared));
    let ok = summarize(&prepared, &applied)?;
    // The command ends here (`let_go`).
    ops::let_go((prepared, applied));
    Ok(ExitCode::from(u8::from(failed || !ok)))
}

/// An environment's plan made ready to apply: rotations added, secrets resolved into what is
/// sent, and apply's refusals (a refused environment is a failure: nothing is sent to it).
fn prepare(opts: &ApplySettings, name: &str, planned: ops::Planned) -> anyhow::Result<Ready> {
    let ops::Planned {
        mut plan,
        current: Some(current),
        manifests,
        connection: Some(conn),
        ..
    } = planned
    else {
        anyhow::bail!("the plan came back without what apply keeps");
    };
    plan.guard.environment = Some(name.to_string());
    let (dir, rotate) = (&opts.request.dir, opts.rotate_secrets.as_deref());
    ops::rotate_and_check(
        dir,
        rotate,
        &mut plan,
        manifests,
        &current,
        Some(name),
        true,
    )?;
    let sent = crate::plan::secrets::fill_plan(&plan)?;
    let mut refused =
        crate::plan::refusals(&plan, opts.allow_empty_prune, opts.force_delete_buckets);
    refused.extend(crate::plan::over_ceiling(&plan, opts.max_deletes));
    if !refused.is_empty() {
        return Err(super::apply::refusal(&refused));
    }
    Ok(Ready {
        plan: Arc::new(plan),
        sent,
        current,
        client: Arc::new(conn.client),
    })
}

/// The report of every environment's plan (or failure) on stdout.
fn show(prepared: &[Prepared], verbose: bool) -> anyhow::Result<()> {
    let envs: Vec<report::EnvPlan<'_>> = prepared
        .iter()
        .map(|(n, r)| (n.as_str(), r.as_ref().map(|r| r.plan.as_ref())))
        .collect();
    let mut out = crate::util::output::stdout_buffered();
    report::write_text(
        &mut out,
        &envs,
        crate::render::TextOptions {
            color: crate::util::output::stdout_has_color(),
            verbose,
            drift: false,
        },
    )
    .and_then(|()| out.flush())
    .context("writing to stdout")
}

/// One confirmation for every environment, on a terminal only.
fn confirm(prepared: &[Prepared], actions: usize) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal};
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "apply needs --auto-approve when standard input is not a terminal: nothing was changed"
        );
    }
    let names: Vec<String> = prepared
        .iter()
        .filter(|(_, r)| r.as_ref().is_ok_and(|r| !r.plan.actions.is_empty()))
        .map(|(n, _)| Inert(n).to_string())
        .collect();
    let mut err = crate::util::output::stderr();
    write!(
        err,
        "\nApply {} to {} ({})? Only 'yes' is accepted: ",
        plural(actions, "action", "actions"),
        plural(names.len(), "environment", "environments"),
        names.join(", ")
    )
    .and_then(|()| err.flush())
    .context("writing to stderr")?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("reading the answer")?;
    if answer.trim() != "yes" {
        anyhow::bail!("not confirmed: nothing was changed");
    }
    Ok(())
}

/// Every ready environment's actions, at once: one line per finished action on stderr,
/// prefixed with its environment.
async fn execute_all(
    opts: &ApplySettings,
    prepared: &[Prepared],
) -> Vec<Option<Vec<crate::apply::Outcome>>> {
    let runs = prepared.iter().map(|(name, ready)| async move {
        let ready = ready.as_ref().ok()?;
        let outcomes = crate::apply::execute(
            Arc::clone(&ready.client),
            ready.sent.as_ref().unwrap_or(&ready.plan),
            &ready.current,
            crate::apply::ExecOptions {
                parallelism: opts.parallelism,
                force_delete_buckets: opts.force_delete_buckets,
            },
            |a, o| {
                let line = crate::apply::report::progress_line(a, o);
                let _ = writeln!(crate::util::output::stderr(), "[{}] {line}", Inert(name));
            },
        )
        .await;
        Some(outcomes)
    });
    futures_util::future::join_all(runs).await
}

/// Each environment's apply summary, then which environments succeeded and which failed;
/// whether every applied one succeeded.
fn summarize(
    prepared: &[Prepared],
    applied: &[Option<Vec<crate::apply::Outcome>>],
) -> anyhow::Result<bool> {
    let mut out = crate::util::output::stdout();
    let (mut succeeded, mut failed) = (Vec::new(), Vec::new());
    let mut order: Vec<usize> = (0..prepared.len()).collect();
    order.sort_by(|a, b| prepared[*a].0.cmp(&prepared[*b].0));
    for i in order {
        let (name, ready) = &prepared[i];
        let name = Inert(name).to_string();
        match (ready, &applied[i]) {
            (Ok(ready), Some(outcomes)) => {
                let summary = crate::apply::report::summary(
                    &ready.plan,
                    outcomes,
                    ready.client.throttle().slow_down(),
                );
                writeln!(out, "\n{name}:\n{}", summary.trim_end()).context("writing to stdout")?;
                if crate::apply::report::all_ok(&ready.plan, outcomes) {
                    succeeded.push(name);
                } else {
                    failed.push(name);
                }
            }
            _ => failed.push(format!("{name} (nothing applied)")),
        }
    }
    let list = |names: &[String]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    writeln!(
        out,
        "\nEnvironments: succeeded: {}; failed: {}",
        list(&succeeded),
        list(&failed)
    )
    .context("writing to stdout")?;
    Ok(failed.is_empty())
}
