//! `cfgctl plan` and `cfgctl drift`: read the target, plan, render.

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
    pub target: TargetOptions,
}

/// `cfgctl plan` / `cfgctl drift`.
pub fn plan(opts: PlanCommand) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let (loaded, conn, fetched) = load_connect_fetch(&opts.dir, &opts.target).await?;
        let (mut plan, current) = plan_fetched(&conn, &loaded, fetched, opts.prune, &opts.only)?;
        if opts.server_validate {
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
        }
        // Written as it is made, through a buffer: a plan of thousands of creates is
        // megabytes of text, never held whole.
        {
            let mut out = crate::output::stdout_buffered();
            let written = match opts.format {
                format if opts.drift => {
                    write_drift(&mut out, &plan, &current.known, format, opts.verbose)
                }
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
            let file = std::fs::File::create(path)
                .with_context(|| format!("writing the plan to {}", path.display()))?;
            let mut w = std::io::BufWriter::new(file);
            crate::render::write_json_plan(&mut w, &plan, true)
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
        Ok(ExitCode::from(code))
    })
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
            crate::drift::text(plan, known, crate::output::stdout_has_color(), verbose).as_bytes(),
        ),
        Format::Json => crate::drift::write_json(w, plan, known),
        Format::Markdown => w.write_all(
            crate::drift::markdown(plan, known, crate::render::MARKDOWN_BUDGET).as_bytes(),
        ),
    }
}
