//! `cfgctl export --out DIR`: the target's state as manifest files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::{plural, runtime};
use crate::ops::{self, TargetSettings};

/// Settings of `cfgctl export`.
#[derive(Debug, Clone)]
pub struct ExportSettings {
    pub out: PathBuf,
    pub force: bool,
    pub only: Vec<crate::pattern::Pattern>,
    pub target: TargetSettings,
}

/// `cfgctl export`: writes the target's state as manifests.
pub fn export(opts: ExportSettings) -> anyhow::Result<ExitCode> {
    // Refuse a non-empty folder before reading the target at all.
    if crate::export::write::is_non_empty(&opts.out) && !opts.force {
        return Err(crate::export::write::WriteError::NotEmpty {
            dir: opts.out.clone(),
        }
        .into());
    }
    runtime()?.block_on(async {
        let conn = ops::connect(&opts.target).await?;
        let fetched = ops::fetch(&conn).await?;
        let files = crate::export::export_files(&fetched.current, &opts.only)?;
        crate::export::write::write_export(&opts.out, &files, opts.force)?;
        let mut err = crate::output::stderr();
        for w in &fetched.warnings {
            let _ = writeln!(err, "warning: {}", crate::output::Inert(w));
        }
        for def in crate::registry::kinds()
            .into_iter()
            .filter(|d| !fetched.caps.can_read_state(d.kind))
        {
            let _ = writeln!(
                err,
                "note: {} not exported: the target cannot list it",
                def.name
            );
        }
        let vars = crate::export::secret_variables(&fetched.current, &opts.only);
        if !vars.is_empty() {
            let _ = writeln!(
                err,
                "note: secrets are written as references; set {} before planning: {}",
                if vars.len() == 1 {
                    "this variable"
                } else {
                    "these variables"
                },
                vars.join(", ")
            );
        }
        let kinds: std::collections::BTreeSet<_> =
            fetched.current.resources.keys().map(|a| a.kind).collect();
        writeln!(
            crate::output::stdout(),
            "exported {} ({}) from {} to {}",
            plural(files.len(), "resource", "resources"),
            plural(kinds.len(), "kind", "kinds"),
            conn.name,
            opts.out.display()
        )
        .context("writing to stdout")?;
        Ok(ExitCode::SUCCESS)
    })
}
