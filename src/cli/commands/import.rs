//! `cfgctl import prometheus|grafana`: another system's configuration as manifests in `--out`, with
//! `IMPORT.md` and a summary on stderr. Thin over `crate::convert::import`, which reads and maps; this
//! writes (all or nothing, refusing to replace files without `--force`) and prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

pub use crate::convert::import::grafana::GrafanaSettings;
pub use crate::convert::import::prometheus::PrometheusSettings;

/// Settings of `cfgctl import`.
#[derive(Debug, Clone)]
pub struct ImportSettings {
    pub out: PathBuf,
    pub force: bool,
    pub source: ImportSource,
}

/// What is imported.
#[derive(Debug, Clone)]
pub enum ImportSource {
    Prometheus(PrometheusSettings),
    Grafana(GrafanaSettings),
}

/// `cfgctl import`: maps, writes, then prints the summary (stderr) and one line (stdout).
pub fn import(settings: &ImportSettings) -> anyhow::Result<ExitCode> {
    let output = match &settings.source {
        ImportSource::Prometheus(opts) => crate::convert::import::prometheus::import(opts)?,
        ImportSource::Grafana(opts) => crate::convert::import::grafana::import(opts)?,
    };
    crate::convert::import::write(&settings.out, &output, settings.force)?;
    let summary = output.report.summary(&settings.out);
    let mut err = crate::util::output::stderr();
    for line in summary.lines() {
        let _ = writeln!(err, "{}", crate::util::output::Inert(line));
    }
    let files = output.files.len();
    writeln!(
        crate::util::output::stdout(),
        "wrote {} and {} to {}",
        super::plural(files, "file", "files"),
        crate::convert::import::REPORT,
        settings.out.display()
    )
    .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
