//! `cfgctl validate [DIR]`: the offline checks.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use anyhow::Context;

use super::*;
use crate::config::diagnostic::Severity;
use crate::manifest;

/// Settings of `cfgctl validate`.
#[derive(Debug, Clone)]
pub struct ValidateSettings {
    pub dir: PathBuf,
    /// Also print GitHub workflow annotations (`GITHUB_ACTIONS=true`).
    pub github_annotations: bool,
    /// Print only the problems, not the summary line.
    pub quiet: bool,
    /// `--env NAME` (repeatable): check these environments.
    pub envs: Vec<String>,
    /// `--all-envs`: check every environment (also what no flag does when there are some).
    pub all_envs: bool,
}

/// `cfgctl validate DIR`: offline checks; exit 1 on any error.
pub fn validate(opts: &ValidateSettings) -> anyhow::Result<ExitCode> {
    let (loaded, problems) = load(opts)?;
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
    let mut out = crate::util::output::stdout();
    let error_style = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
    let warning_style = Style::new().bold().fg_color(Some(AnsiColor::Yellow.into()));
    // On a terminal, each problem comes with its source line; logs and CI get one line each.
    let on_terminal = crate::util::output::stdout_is_terminal();
    let mut sources: std::collections::BTreeMap<PathBuf, Option<String>> = Default::default();
    for (envs, d) in &problems {
        // In which environments (when there are some): `[prod, staging] file:line:col: ...`.
        let prefix = if envs.is_empty() {
            String::new()
        } else {
            format!("[{}] ", envs.join(", "))
        };
        if on_terminal && !opts.github_annotations {
            let source = sources
                .entry(d.file.clone())
                .or_insert_with(|| std::fs::read_to_string(&d.file).ok());
            if let Some(text) = source
                .as_deref()
                .and_then(|src| crate::config::diagnostic::render_snippet(d, src, true))
            {
                writeln!(out, "{prefix}{text}\n").context("writing to stdout")?;
                continue;
            }
        }
        let style = match d.severity {
            Severity::Error => error_style,
            Severity::Warning => warning_style,
        };
        writeln!(
            out,
            "{prefix}{}: {style}{}{style:#}: {}",
            d.location(),
            d.severity.as_str(),
            crate::util::output::Inert(&d.problem)
        )
        .context("writing to stdout")?;
        if opts.github_annotations {
            // The environments go before the message (after the properties' `::`).
            let mut annotation = d.github_annotation();
            if let Some(at) = annotation.get(2..).and_then(|rest| rest.find("::")) {
                annotation.insert_str(at + 4, &prefix);
            }
            out.command(&annotation).context("writing to stdout")?;
        }
    }
    let errors = problems
        .iter()
        .filter(|(_, d)| d.severity == Severity::Error)
        .count();
    if loaded.manifests.is_empty() && errors == 0 {
        anyhow::bail!(
            "no manifests in `{dir}`: its {} hold no documents",
            plural(loaded.manifest_files, "YAML/JSON file", "YAML/JSON files")
        );
    }
    if !crate::util::CHECKS_PROMQL {
        let note =
            "note: PromQL is not checked: this cfgctl is built without it (cargo feature `promql`)";
        let _ = writeln!(crate::util::output::stderr(), "{note}");
    }
    if !opts.quiet {
        writeln!(
            out,
            "{}: {} in {}, {}, {}",
            if errors == 0 { "valid" } else { "invalid" },
            plural(loaded.manifests.len(), "manifest", "manifests"),
            plural(loaded.manifest_files, "file", "files"),
            plural(errors, "error", "errors"),
            plural(problems.len() - errors, "warning", "warnings"),
        )
        .context("writing to stdout")?;
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The load to report on and its problems, each with the environments it occurs in (none
/// named when no environment is checked). Without `--env`/`--all-envs`, a repository that
/// declares environments is checked in every one of them; a problem found alike in several is
/// shown once, naming them all.
type Problems = Vec<(Vec<String>, crate::config::diagnostic::Diagnostic)>;

fn load(opts: &ValidateSettings) -> anyhow::Result<(manifest::Loaded, Problems)> {
    let mut names: Vec<String> = opts.envs.clone();
    if names.is_empty() {
        names = declared(&opts.dir);
        if names.is_empty() {
            // No environment (or a settings file that cannot say which): the base alone.
            let mut base = manifest::load_dir(&opts.dir)?;
            base.locate_warnings();
            let policy = crate::ops::policy::check(&opts.dir, &base, None, None);
            base.diagnostics.extend(policy.diagnostics);
            let problems = base
                .diagnostics
                .iter()
                .map(|d| (vec![], d.clone()))
                .collect();
            return Ok((base, problems));
        }
    }
    names.sort();
    names.dedup();
    let asked: Vec<Option<&str>> = names.iter().map(|n| Some(n.as_str())).collect();
    let mut loads = manifest::load_dir_envs(&opts.dir, &asked)?;
    // The policy's manifest rules, with each environment's manifests and name.
    for (name, loaded) in names.iter().zip(loads.iter_mut()) {
        loaded.locate_warnings();
        let policy = crate::ops::policy::check(&opts.dir, loaded, None, Some(name));
        loaded.diagnostics.extend(policy.diagnostics);
    }
    let mut found: std::collections::BTreeMap<
        _,
        (Vec<String>, crate::config::diagnostic::Diagnostic),
    > = Default::default();
    for (name, loaded) in names.iter().zip(&loads) {
        for d in &loaded.diagnostics {
            found
                .entry(d.sort_key())
                .or_insert_with(|| (Vec::new(), d.clone()))
                .0
                .push(name.clone());
        }
    }
    let problems = found.into_values().collect();
    // The summary counts the largest environment's manifests.
    let loaded = loads
        .into_iter()
        .max_by_key(|l| l.manifests.len())
        .unwrap_or_default();
    Ok((loaded, problems))
}

/// The environments `cfgctl.yaml` declares (none when it cannot be read: the load says why).
fn declared(dir: &std::path::Path) -> Vec<String> {
    let path = dir.join(crate::config::settings::FILE_NAME);
    std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| crate::config::settings::parse(&path, &text).ok())
        .map(|s| s.environments.into_keys().collect())
        .unwrap_or_default()
}
