//! `cfgctl schema [--settings] [--out FILE]`: the editor JSON Schema of the manifests, or of
//! `cfgctl.yaml`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

/// Settings of `cfgctl schema`.
#[derive(Debug, Clone)]
pub struct SchemaSettings {
    /// The file to write; stdout when `None`.
    pub out: Option<std::path::PathBuf>,
    /// `cfgctl.yaml`'s schema (the one its check uses) instead of the manifests'.
    pub settings: bool,
}

/// `cfgctl schema`: the editor JSON Schema on stdout, or in `out`.
pub fn schema(settings: &SchemaSettings) -> anyhow::Result<ExitCode> {
    let text = if settings.settings {
        crate::config::settings::SCHEMA.trim_end().to_string()
    } else {
        serde_json::to_string_pretty(&crate::api::spec::manifest_schema())
            .context("serialising the schema")?
    };
    match &settings.out {
        Some(path) => std::fs::write(path, text + "\n")
            .with_context(|| format!("writing the schema to {}", path.display()))?,
        None => {
            let mut out = crate::util::output::stdout();
            writeln!(out, "{text}").context("writing to stdout")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
