//! `cfgctl apply [DIR | PLANFILE]`: plan (or read a saved plan), confirm, execute, report.

use std::fmt::Write as _;
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
    use crate::apply::Outcome;
    use crate::plan::ActionKind;
    use std::io::IsTerminal;

    let from_file = opts.source.is_file();
    let loaded = if from_file {
        None
    } else {
        Some(load_valid(&opts.source)?)
    };
    runtime()?.block_on(async {
        let conn = connect(&opts.target).await?;
        let (plan, current) = match &loaded {
            None => {
                let text = std::fs::read_to_string(&opts.source)
                    .with_context(|| format!("reading the plan file {}", opts.source.display()))?;
                let plan = crate::apply::saved::parse(&text)
                    .with_context(|| format!("reading the plan file {}", opts.source.display()))?;
                if plan.target != conn.name {
                    anyhow::bail!(
                        "the plan in {} was made for {}, not for {}: nothing was changed",
                        opts.source.display(),
                        plan.target,
                        conn.name
                    );
                }
                let stale = crate::apply::saved::stale(&conn.client, &plan)
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
            Some(loaded) => plan_against(&conn, loaded, opts.prune, &opts.only).await?,
        };
        let rendered = crate::render::text(
            &plan,
            crate::render::TextOptions {
                color: true,
                verbose: opts.verbose,
                drift: false,
            },
        );
        crate::output::stdout()
            .write_all(rendered.as_bytes())
            .context("writing to stdout")?;
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

        let on_terminal = std::io::stderr().is_terminal();
        let bar = if on_terminal {
            let bar = indicatif::ProgressBar::new(plan.actions.len() as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} [{bar:30}] {pos}/{len} {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            Some(bar)
        } else {
            None
        };
        let report = |a: &crate::plan::Action, o: &Outcome| {
            use crate::output::Inert;
            let address = Inert(&a.address);
            let line = match o {
                Outcome::Done { elapsed, resolved } => format!(
                    "{} {} ({} ms){}",
                    crate::apply::verb(a.action),
                    address,
                    elapsed.as_millis(),
                    resolved
                        .as_ref()
                        .map(|r| format!(": resolved conflict, {}", Inert(r)))
                        .unwrap_or_default()
                ),
                Outcome::Failed { reason } => {
                    format!("failed to {} {address}: {}", a.action.as_str(), Inert(reason))
                }
                Outcome::Skipped { because } => {
                    format!("skipped {} {address}: {} failed", a.action.as_str(), Inert(because))
                }
                Outcome::Unsupported { reason } => {
                    format!("not attempted {address}: unsupported, {}", Inert(reason))
                }
            };
            match &bar {
                Some(bar) => {
                    bar.inc(1);
                    bar.set_message(address.to_string());
                    if !o.is_success() {
                        bar.println(line);
                    }
                }
                None => {
                    let _ = writeln!(crate::output::stderr(), "{line}");
                }
            }
        };
        let client = std::sync::Arc::new(conn.client);
        let outcomes = crate::apply::execute(
            std::sync::Arc::clone(&client),
            &plan,
            &current,
            crate::apply::ExecOptions {
                parallelism: opts.parallelism,
                force_delete_buckets: opts.force_delete_buckets,
            },
            report,
        )
        .await;
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }

        let mut summary = String::new();
        let done = outcomes.iter().filter(|o| o.is_success()).count();
        let resolved: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Done {
                    resolved: Some(r), ..
                } => Some(format!(
                    "  {}: {}",
                    crate::output::Inert(&a.address),
                    crate::output::Inert(r)
                )),
                _ => None,
            })
            .collect();
        let failed: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Failed { reason } => Some(format!(
                    "  {} {}: {}",
                    a.action.as_str(),
                    crate::output::Inert(&a.address),
                    crate::output::Inert(reason)
                )),
                _ => None,
            })
            .collect();
        let skipped: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Skipped { because } => Some(format!(
                    "  {} {}: depends on {}, which failed or is unsupported",
                    a.action.as_str(),
                    crate::output::Inert(&a.address),
                    crate::output::Inert(because)
                )),
                _ => None,
            })
            .collect();
        let unsupported: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Unsupported { reason } => Some(format!(
                    "  {}: {}",
                    crate::output::Inert(&a.address),
                    crate::output::Inert(reason)
                )),
                _ => None,
            })
            .collect();
        let _ = writeln!(
            summary,
            "\nApply: {} done ({} resolved {}), {} failed, {} skipped, {} unsupported, {} unchanged.",
            done,
            resolved.len(),
            if resolved.len() == 1 { "conflict" } else { "conflicts" },
            failed.len(),
            skipped.len(),
            unsupported.len(),
            plan.unchanged
        );
        if let Some(slowed) = client.throttle().slow_down() {
            let _ = writeln!(summary, "Rate limit: {slowed}.");
        }
        for (title, lines) in [
            ("Resolved conflicts:", &resolved),
            ("Failed:", &failed),
            ("Skipped:", &skipped),
            ("Not attempted (unsupported by the target):", &unsupported),
        ] {
            if !lines.is_empty() {
                let _ = writeln!(summary, "{title}");
                for l in lines {
                    let _ = writeln!(summary, "{l}");
                }
            }
        }
        crate::output::stdout()
            .write_all(summary.as_bytes())
            .context("writing to stdout")?;
        let all_ok = plan
            .actions
            .iter()
            .zip(&outcomes)
            .all(|(a, o)| o.is_success() && a.action != ActionKind::Unsupported);
        Ok(if all_ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    })
}
