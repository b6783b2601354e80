//! `cfgctl graph [DIR]`: the plan's action graph as DOT or Mermaid.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::*;

/// Options of `cfgctl graph`.
#[derive(Debug, Clone)]
pub struct GraphCommand {
    pub dir: PathBuf,
    pub format: crate::render::graph::GraphFormat,
    pub prune: bool,
    pub only: Vec<crate::pattern::Pattern>,
    pub target: TargetOptions,
}

/// `cfgctl graph`: the plan's action graph as DOT or Mermaid on stdout.
pub fn graph(opts: GraphCommand) -> anyhow::Result<ExitCode> {
    let loaded = load_valid(&opts.dir)?;
    runtime()?.block_on(async {
        let conn = connect(&opts.target).await?;
        let (plan, _current) = plan_against(&conn, &loaded, opts.prune, &opts.only).await?;
        let text = crate::render::graph::render(&plan, opts.format);
        crate::output::stdout()
            .write_all(text.as_bytes())
            .context("writing to stdout")?;
        Ok(ExitCode::SUCCESS)
    })
}
