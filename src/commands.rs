//! The commands, one function each, taking resolved options (never clap types) and
//! returning the exit code. Errors that end a command come back as `anyhow` errors with
//! context; `main` prints them once.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use anyhow::Context;

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

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `cfgctl validate DIR`: offline checks; exit 1 on any error.
pub fn validate(opts: &ValidateOptions) -> anyhow::Result<ExitCode> {
    let loaded = manifest::load_dir(&opts.dir)?;
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
    let mut out = anstream::stdout().lock();
    let error_style = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
    let warning_style = Style::new().bold().fg_color(Some(AnsiColor::Yellow.into()));
    for d in &loaded.diagnostics {
        let style = match d.severity {
            Severity::Error => error_style,
            Severity::Warning => warning_style,
        };
        writeln!(
            out,
            "{}: {style}{}{style:#}: {}",
            d.location(),
            d.severity.as_str(),
            d.problem
        )
        .context("writing to stdout")?;
        if opts.github_annotations {
            writeln!(out, "{}", d.github_annotation()).context("writing to stdout")?;
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

/// `cfgctl schema`: the editor JSON Schema on stdout.
pub fn schema() -> anyhow::Result<ExitCode> {
    let text = serde_json::to_string_pretty(&crate::spec::manifest_schema())
        .context("serialising the schema")?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// Options of `cfgctl serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: std::net::SocketAddr,
    pub config: crate::emulator::Config,
}

/// `cfgctl serve`: runs the emulator until Ctrl-C.
pub fn serve(opts: ServeOptions) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let emulator = crate::emulator::Emulator::start(&opts.config, opts.listen)
            .await
            .context("starting the emulator")?;
        let store = opts
            .config
            .data
            .as_ref()
            .map_or("in memory".to_string(), |p| p.display().to_string());
        let profile = match opts.config.profile {
            crate::registry::Profile::Full => "full",
            crate::registry::Profile::Seed => "seed",
        };
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", emulator.url()).context("writing to stdout")?;
            out.flush().context("writing to stdout")?;
        }
        tracing::info!(
            target: "cfgctl::emulator",
            url = %emulator.url(),
            profile,
            store = %store,
            token = opts.config.token.is_some(),
            "listening"
        );
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        tracing::info!(target: "cfgctl::emulator", "shutting down");
        emulator.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}
