//! `cfgctl pull [DIR]`: the target's state written back into the manifests.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::{plural, runtime};
use crate::ops::{self, PlanRequest};

/// Settings of `cfgctl pull`: its plan never prunes, and keeps the manifests and the
/// target's objects.
#[derive(Debug, Clone)]
pub struct PullSettings {
    pub request: PlanRequest,
    pub include_unmanaged: bool,
}

/// `cfgctl pull`: writes the target's state back into the manifests (reads only from the
/// target); the files are written at the end, all or none ([`crate::safe_write`]).
pub fn pull(opts: PullSettings) -> anyhow::Result<ExitCode> {
    let ops::Planned {
        plan,
        current: Some(current),
        manifests: Some(loaded),
        ..
    } = runtime()?.block_on(ops::plan(&opts.request))?
    else {
        anyhow::bail!("the plan came back without what pull keeps");
    };
    let dir = &opts.request.dir;
    let texts = read_texts(&loaded.manifests)?;
    let pulled = crate::pull::pull(&crate::pull::PullInput {
        manifests: &loaded.manifests,
        texts: &texts,
        current: &current,
        plan: &plan,
        ignore: &loaded.settings.ignore,
        include_unmanaged: opts.include_unmanaged,
    })
    .context("nothing was written")?;
    // One batch: every file is checked before anything is written, and a failure midway
    // undoes what was already in place.
    let mut batch = crate::safe_write::Batch::new(dir);
    for f in &pulled.rewritten {
        batch.replace(under(dir, &f.path)?, f.text.as_str());
    }
    for f in &pulled.created {
        batch.create(&f.path, f.text.as_str());
    }
    batch.commit()?;
    let new_paths: Vec<PathBuf> = pulled.created.iter().map(|f| dir.join(&f.path)).collect();

    // Names from the target are printed inert (no control characters reach the terminal).
    let inert = |s: &dyn std::fmt::Display| crate::output::Inert(s).to_string();
    let mut out = String::new();
    let _ = writeln!(out, "cfgctl pull from {}", inert(&plan.target));
    for w in &plan.warnings {
        let _ = writeln!(out, "warning: {}", inert(w));
    }
    if !pulled.rewritten.is_empty() || !pulled.created.is_empty() {
        let _ = writeln!(out, "\nFiles changed:");
    }
    for f in &pulled.rewritten {
        let names: Vec<String> = f.addresses.iter().map(|a| inert(a)).collect();
        let _ = writeln!(
            out,
            "  ~ {}: {}",
            inert(&f.path.display()),
            names.join(", ")
        );
    }
    for (f, path) in pulled.created.iter().zip(&new_paths) {
        let _ = writeln!(
            out,
            "  + {}: {} (new file)",
            inert(&display_path(path)),
            inert(&f.address)
        );
    }
    if !pulled.gone.is_empty() {
        let _ = writeln!(
            out,
            "\nGone from the target (manifests kept; remove them to accept the deletion, or `cfgctl apply` to create them again):"
        );
        for g in &pulled.gone {
            let _ = writeln!(out, "  - {} ({})", inert(&g.address), inert(&g.source));
        }
    }
    if !pulled.not_compared.is_empty() {
        let names: Vec<String> = pulled.not_compared.iter().map(|a| inert(a)).collect();
        let _ = writeln!(
            out,
            "\nNot pulled (the target cannot read them): {}",
            names.join(", ")
        );
    }
    let in_scope = plan.unmanaged.iter().filter(|u| u.in_prune_scope).count();
    if in_scope > 0 && !opts.include_unmanaged {
        let _ = writeln!(
            out,
            "\n{} inside the prune scope not pulled: --include-unmanaged writes them as new files.",
            plural(in_scope, "unmanaged resource", "unmanaged resources")
        );
    }
    let vars = new_secret_variables(&pulled, &texts, dir);
    if !vars.is_empty() {
        let names: Vec<String> = vars.iter().map(|v| inert(v)).collect();
        let _ = writeln!(
            out,
            "\nSecrets are written as references: set {} before planning: {}",
            if vars.len() == 1 {
                "this variable"
            } else {
                "these variables"
            },
            names.join(", ")
        );
    }
    let pulled_count: usize = pulled.rewritten.iter().map(|f| f.addresses.len()).sum();
    let _ = writeln!(
        out,
        "\nPull: {} pulled into {}, {} new, {} gone from the target, {} unchanged.",
        plural(pulled_count, "resource", "resources"),
        plural(pulled.rewritten.len(), "file", "files"),
        plural(pulled.created.len(), "file", "files"),
        pulled.gone.len(),
        plan.unchanged
    );
    crate::output::stdout()
        .write_all(out.as_bytes())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The text of every manifest file, as read now (what `pull` rewrites).
fn read_texts(
    manifests: &[crate::manifest::Manifest],
) -> anyhow::Result<std::collections::BTreeMap<PathBuf, String>> {
    let mut texts = std::collections::BTreeMap::new();
    for m in manifests {
        if !texts.contains_key(&m.file) {
            let text = std::fs::read_to_string(&m.file)
                .with_context(|| format!("reading {}", m.file.display()))?;
            texts.insert(m.file.clone(), text);
        }
    }
    Ok(texts)
}

/// Secrets come back as `${env:...}` references: the variables this pull adds (in new files,
/// and in rewritten files beyond those they named already), sorted.
fn new_secret_variables(
    pulled: &crate::pull::Pulled,
    texts: &std::collections::BTreeMap<PathBuf, String>,
    dir: &std::path::Path,
) -> std::collections::BTreeSet<String> {
    let mut vars = std::collections::BTreeSet::new();
    for f in &pulled.created {
        vars.extend(crate::secrets::env_variables(&f.text));
    }
    for f in &pulled.rewritten {
        let before = texts
            .get(&f.path)
            .or_else(|| texts.get(&dir.join(&f.path)))
            .map(|t| crate::secrets::env_variables(t))
            .unwrap_or_default();
        vars.extend(
            crate::secrets::env_variables(&f.text)
                .difference(&before)
                .cloned(),
        );
    }
    vars
}

/// A manifest file's path (as the load shows it) relative to the directory loaded.
fn under(dir: &std::path::Path, file: &std::path::Path) -> anyhow::Result<PathBuf> {
    let shown = dir.strip_prefix(".").unwrap_or(dir);
    file.strip_prefix(dir)
        .or_else(|_| file.strip_prefix(shown))
        .map(std::path::Path::to_path_buf)
        .with_context(|| {
            format!(
                "{} is not under {}: nothing was written",
                file.display(),
                dir.display()
            )
        })
}

pub(super) fn display_path(path: &std::path::Path) -> String {
    path.strip_prefix(".").unwrap_or(path).display().to_string()
}
