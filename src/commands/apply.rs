//! `cfgctl apply [DIR | PLANFILE]`: plan (or read a saved plan), confirm, execute, report.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::*;

/// Options of `cfgctl apply`.
#[derive(Debug, Clone)]
pub struct ApplyCommand {
    /// A manifest directory, or a plan file written by `plan --out`.
    pub source: PathBuf,
    pub auto_approve: bool,
    pub prune: bool,
    pub allow_empty_prune: bool,
    pub force_delete_buckets: bool,
    pub only: Vec<crate::pattern::Pattern>,
    pub parallelism: usize,
    pub verbose: bool,
    pub target: TargetOptions,
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

/// `cfgctl apply`: plan (or read a saved plan), confirm, execute, report.
pub fn apply(opts: ApplyCommand) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;

    let from_file = opts.source.is_file();
    runtime()?.block_on(async {
        let (conn, loaded) = if from_file {
            (connect(&opts.target).await?, None)
        } else {
            let (loaded, conn, fetched) = load_connect_fetch(&opts.source, &opts.target).await?;
            (conn, Some((loaded, fetched)))
        };
        let (plan, current) = match loaded {
            None => {
                let text = std::fs::read_to_string(&opts.source)
                    .with_context(|| format!("reading the plan file {}", opts.source.display()))?;
                let plan = crate::apply::saved::parse(&text)
                    .with_context(|| format!("reading the plan file {}", opts.source.display()))?;
                drop(text);
                if plan.target != conn.name {
                    anyhow::bail!(
                        "the plan in {} was made for {}, not for {}: nothing was changed",
                        opts.source.display(),
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
                (plan, crate::plan::Current::default())
            }
            // The manifests are dropped here: the plan holds what apply sends.
            Some((loaded, fetched)) => {
                plan_fetched(&conn, &loaded, fetched, opts.prune, &opts.only)?
            }
        };
        // Written as it is rendered, through a buffer: a plan of thousands of creates is
        // megabytes of text, never held whole, and not one system call a line.
        {
            let mut out = crate::output::stdout_buffered();
            crate::render::write_text(
                &mut out,
                &plan,
                crate::render::TextOptions {
                    color: crate::output::stdout_has_color(),
                    verbose: opts.verbose,
                    drift: false,
                },
            )
            .and_then(|()| out.flush())
            .context("writing to stdout")?;
        }
        // The very same check for a plan made now and a saved one.
        let refused =
            crate::plan::refusals(&plan, opts.allow_empty_prune, opts.force_delete_buckets);
        if !refused.is_empty() {
            anyhow::bail!("refusing to apply: {}; nothing was changed", refused.join("; "));
        }
        if plan.actions.is_empty() {
            writeln!(crate::output::stdout(), "\nNothing to apply.").context("writing to stdout")?;
            return Ok(ExitCode::SUCCESS);
        }
        if !opts.auto_approve {
            if !std::io::stdin().is_terminal() {
                anyhow::bail!(
                    "apply needs --auto-approve when standard input is not a terminal: nothing was changed"
                );
            }
            if !ask_confirmation(&plan)? {
                anyhow::bail!("not confirmed: nothing was changed");
            }
        }

        let progress =
            crate::apply::report::Progress::new(plan.actions.len(), std::io::stderr().is_terminal());
        let client = std::sync::Arc::new(conn.client);
        let outcomes = crate::apply::execute(
            std::sync::Arc::clone(&client),
            &plan,
            &current,
            crate::apply::ExecOptions {
                parallelism: opts.parallelism,
                force_delete_buckets: opts.force_delete_buckets,
            },
            |a, o| progress.report(a, o),
        )
        .await;
        progress.finish();
        let summary =
            crate::apply::report::summary(&plan, &outcomes, client.throttle().slow_down());
        crate::output::stdout()
            .write_all(summary.as_bytes())
            .context("writing to stdout")?;
        Ok(if crate::apply::report::all_ok(&plan, &outcomes) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    })
}
