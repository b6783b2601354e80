//! `cfgctl export --out DIR`: the target's state as manifest files; with `--env NAME`, the
//! target of that environment of `--dir`'s cfgctl.yaml (several: one folder each, `DIR/NAME`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::{plural, runtime};
use crate::ops::{self, TargetSettings};

/// Settings of `cfgctl export`.
#[derive(Debug, Clone)]
pub struct ExportSettings {
    pub out: PathBuf,
    pub force: bool,
    /// `--dashboards-as-files`: each embedded document in its own JSON file.
    pub dashboards_as_files: bool,
    pub only: Vec<crate::config::pattern::Pattern>,
    pub target: TargetSettings,
    /// The directory whose cfgctl.yaml declares the environments of `--env`.
    pub dir: PathBuf,
    /// `--env NAME`...
    pub envs: Vec<String>,
    /// `--all-envs`.
    pub all_envs: bool,
}

/// `cfgctl export`: writes the target's state as manifests.
pub fn export(opts: ExportSettings) -> anyhow::Result<ExitCode> {
    let jobs = jobs(&opts)?;
    // Refuse a non-empty folder before reading any target at all.
    for (out, _) in &jobs {
        if crate::convert::export::write::is_non_empty(out) && !opts.force {
            return Err(
                crate::convert::export::write::WriteError::NotEmpty { dir: out.clone() }.into(),
            );
        }
    }
    runtime()?.block_on(async {
        for (out, target) in &jobs {
            export_one(&opts, out, target).await?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Each folder to write and the target to export into it: the global target, or each
/// environment's (its url and token, `commands::pull::environment_target`).
fn jobs(opts: &ExportSettings) -> anyhow::Result<Vec<(PathBuf, TargetSettings)>> {
    if opts.envs.is_empty() && !opts.all_envs {
        return Ok(vec![(opts.out.clone(), opts.target.clone())]);
    }
    let declared = environments(&opts.dir)?;
    let names: Vec<String> = if opts.all_envs {
        declared.keys().cloned().collect()
    } else {
        let mut names = opts.envs.clone();
        names.sort();
        names.dedup();
        names
    };
    if names.is_empty() {
        anyhow::bail!(
            "--all-envs: {} declares no environments",
            dir_settings(&opts.dir).display()
        );
    }
    let several = names.len() > 1;
    names
        .iter()
        .map(|name| {
            let env = declared.get(name).with_context(|| {
                let known: Vec<&str> = declared.keys().map(String::as_str).collect();
                format!(
                    "environment `{name}` is not declared in {} (declared: {})",
                    dir_settings(&opts.dir).display(),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )
            })?;
            let out = if several {
                opts.out.join(name)
            } else {
                opts.out.clone()
            };
            Ok((out, super::pull::environment_target(&opts.target, env)?))
        })
        .collect()
}

fn dir_settings(dir: &Path) -> PathBuf {
    super::pull::display_path(&dir.join(crate::config::settings::FILE_NAME)).into()
}

/// The environments `dir`'s cfgctl.yaml declares; its problems as located diagnostics.
fn environments(
    dir: &Path,
) -> anyhow::Result<std::collections::BTreeMap<String, crate::config::environments::Environment>> {
    let shown = dir_settings(dir);
    let text = std::fs::read_to_string(dir.join(crate::config::settings::FILE_NAME)).with_context(
        || {
            format!(
                "reading {} (--env names an environment it declares; --dir says where it is)",
                shown.display()
            )
        },
    )?;
    match crate::config::settings::parse(&shown, &text) {
        Ok(settings) => Ok(settings.environments),
        Err(diagnostics) => Err(ops::Diagnosed {
            message: format!("{} is not valid", shown.display()),
            diagnostics,
        }
        .into()),
    }
}

/// One export: `target`'s state into `out`.
async fn export_one(
    opts: &ExportSettings,
    out: &Path,
    target: &TargetSettings,
) -> anyhow::Result<()> {
    let conn = ops::connect(target).await?;
    let fetched = ops::fetch(&conn).await?;
    let layout = crate::convert::export::Layout {
        dashboards_as_files: opts.dashboards_as_files,
    };
    let files = crate::convert::export::export_files_in(&fetched.current, &opts.only, layout)?;
    crate::convert::export::write::write_export(out, &files, opts.force)?;
    let mut err = crate::util::output::stderr();
    for w in &fetched.warnings {
        let _ = writeln!(err, "warning: {}", crate::util::output::Inert(w));
    }
    for def in crate::api::registry::kinds()
        .into_iter()
        .filter(|d| !fetched.caps.can_read_state(d.kind))
    {
        let _ = writeln!(
            err,
            "note: {} not exported: the target cannot list it",
            def.name
        );
    }
    for (kind, answer) in &fetched.current.refused {
        let _ = writeln!(
            err,
            "note: {kind} not exported: the target refused its list ({})",
            crate::util::output::Inert(answer)
        );
    }
    let vars = crate::convert::export::secret_variables(&fetched.current, &opts.only);
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
    // Resources, not files (`--dashboards-as-files` writes a document's file beside each).
    let exported: Vec<_> = (fetched.current.resources.keys())
        .filter(|a| opts.only.is_empty() || opts.only.iter().any(|p| p.matches(a)))
        .collect();
    let kinds: std::collections::BTreeSet<_> = exported.iter().map(|a| a.kind).collect();
    writeln!(
        crate::util::output::stdout(),
        "exported {} ({}) from {} to {}",
        plural(exported.len(), "resource", "resources"),
        plural(kinds.len(), "kind", "kinds"),
        conn.name,
        out.display()
    )
    .context("writing to stdout")?;
    Ok(())
}
