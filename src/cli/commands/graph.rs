//! `cfgctl graph [DIR]`: the plan's action graph as DOT or Mermaid.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

use super::runtime;
use crate::ops::{self, PlanRequest};

/// Settings of `cfgctl graph`.
#[derive(Debug, Clone)]
pub struct GraphSettings {
    pub request: PlanRequest,
    pub format: crate::render::graph::GraphFormat,
}

/// `cfgctl graph`: the plan's action graph as DOT or Mermaid on stdout.
pub fn graph(settings: GraphSettings) -> anyhow::Result<ExitCode> {
    let planned = runtime()?.block_on(ops::plan(&settings.request))?;
    let text = crate::render::graph::render(&planned.plan, settings.format);
    crate::util::output::stdout()
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
