//! `cfgctl validate [DIR]`: the offline checks.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use anyhow::Context;

use super::*;
use crate::diagnostic::Severity;
use crate::manifest;

/// Options of `cfgctl validate`.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    pub dir: PathBuf,
    /// Also print GitHub workflow annotations (`GITHUB_ACTIONS=true`).
    pub github_annotations: bool,
    /// Print only the problems, not the summary line.
    pub quiet: bool,
}

/// `cfgctl validate DIR`: offline checks; exit 1 on any error.
pub fn validate(opts: &ValidateOptions) -> anyhow::Result<ExitCode> {
    let mut loaded = manifest::load_dir(&opts.dir)?;
    let policy = crate::policy::check(&opts.dir, &loaded, None, None);
    loaded.diagnostics.extend(policy.diagnostics);
    let dir = opts.dir.display();
    if loaded.manifest_files == 0 && loaded.diagnostics.is_empty() {
        if loaded.other_files == 0 {
            anyhow::bail!(
                "no manifests in `{dir}`: it holds no *.yaml, *.yml or *.json files (hidden files and folders are skipped)"
            );
        }
        anyhow::bail!(
            "no manifests in `{dir}`: none of its {} is a *.yaml, *.yml or *.json file (hidden files and folders are skipped)",
            plural(loaded.other_files, "file", "files")
        );
    }
    let mut out = crate::output::stdout();
    let error_style = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
    let warning_style = Style::new().bold().fg_color(Some(AnsiColor::Yellow.into()));
    // On a terminal, each problem comes with its source line; logs and CI get one line each.
    let on_terminal = crate::output::stdout_is_terminal();
    let mut sources: std::collections::BTreeMap<PathBuf, Option<String>> = Default::default();
    for d in &loaded.diagnostics {
        if on_terminal && !opts.github_annotations {
            let source = sources
                .entry(d.file.clone())
                .or_insert_with(|| std::fs::read_to_string(&d.file).ok());
            if let Some(text) = source
                .as_deref()
                .and_then(|src| crate::diagnostic::render_snippet(d, src, true))
            {
                writeln!(out, "{text}\n").context("writing to stdout")?;
                continue;
            }
        }
        let style = match d.severity {
            Severity::Error => error_style,
            Severity::Warning => warning_style,
        };
        writeln!(
            out,
            "{}: {style}{}{style:#}: {}",
            d.location(),
            d.severity.as_str(),
            crate::output::Inert(&d.problem)
        )
        .context("writing to stdout")?;
        if opts.github_annotations {
            out.command(&d.github_annotation())
                .context("writing to stdout")?;
        }
    }
    let errors = loaded.error_count();
    if loaded.manifests.is_empty() && errors == 0 {
        anyhow::bail!(
            "no manifests in `{dir}`: its {} hold no documents",
            plural(loaded.manifest_files, "YAML/JSON file", "YAML/JSON files")
        );
    }
    if !opts.quiet {
        writeln!(
            out,
            "{}: {} in {}, {}, {}",
            if errors == 0 { "valid" } else { "invalid" },
            plural(loaded.manifests.len(), "manifest", "manifests"),
            plural(loaded.manifest_files, "file", "files"),
            plural(errors, "error", "errors"),
            plural(loaded.warning_count(), "warning", "warnings"),
        )
        .context("writing to stdout")?;
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
