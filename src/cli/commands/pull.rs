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

/// What a pull planned: the plan, the target's objects, the manifests.
struct PullPlan {
    plan: crate::plan::Plan,
    current: crate::plan::Current,
    loaded: crate::manifest::Loaded,
}

/// The plan of a pull, through `ops::plan` (with `--env`, the environment's manifests, with
/// the provenance of every value, against its target: `cli::resolve` named it).
async fn planned(request: &PlanRequest) -> anyhow::Result<PullPlan> {
    let ops::Planned {
        plan,
        current: Some(current),
        manifests: Some(loaded),
        ..
    } = ops::plan(request).await?
    else {
        anyhow::bail!("the plan came back without what pull keeps");
    };
    Ok(PullPlan {
        plan,
        current,
        loaded,
    })
}

/// An environment's target: `ops::target_for`, the one rule plan, apply, drift, pull and
/// export share (its `url`, the token in its `token_env` variable, its own `--local` store).
pub(super) fn environment_target(
    base: &ops::TargetSettings,
    env: &crate::config::environments::Environment,
) -> anyhow::Result<ops::TargetSettings> {
    Ok(ops::target_for(base, env)?)
}

/// `cfgctl pull`: writes the target's state back into the manifests (reads only from the
/// target); the files are written at the end, all or none ([`crate::util::safe_write`]).
pub fn pull(opts: PullSettings) -> anyhow::Result<ExitCode> {
    let environment = opts.request.environment.as_deref();
    let PullPlan {
        plan,
        current,
        loaded,
    } = runtime()?.block_on(planned(&opts.request))?;
    let dir = &opts.request.dir;
    let pull_env = match environment {
        Some(name) => Some(crate::convert::pull::PullEnv {
            env: (loaded.settings.environments.get(name))
                .with_context(|| format!("environment `{name}` is not declared in cfgctl.yaml"))?,
            loaded: &loaded,
        }),
        None => None,
    };
    // The environment's overlay directory, relative to DIR.
    let overlay = pull_env.and_then(|e| e.env.overlay.clone());
    let overlay_shown = overlay
        .as_ref()
        .map(|o| PathBuf::from(display_path(&dir.join(o))));
    let mut texts = read_texts(&loaded.manifests, overlay_shown.as_deref())?;
    read_data_files(&mut texts, &loaded.data_files)?;
    let mut pulled = crate::convert::pull::pull(&crate::convert::pull::PullInput {
        manifests: &loaded.manifests,
        texts: &texts,
        current: &current,
        plan: &plan,
        ignore: &loaded.settings.ignore,
        include_unmanaged: opts.include_unmanaged,
        environment: pull_env,
    })
    .context("nothing was written")?;
    // An unmanaged resource of one environment is that environment's: into its overlay.
    if let Some(o) = &overlay {
        for f in &mut pulled.created {
            f.path = o.join(&f.path);
        }
    }
    // One batch: every file is checked before anything is written, and a failure midway
    // undoes what was already in place.
    let mut batch = crate::util::safe_write::Batch::new(dir);
    for f in &pulled.rewritten {
        batch.replace(under(dir, &f.path)?, f.text.as_str());
    }
    for f in &pulled.created {
        batch.create(&f.path, f.text.as_str());
    }
    batch.commit()?;
    let shared = pull_env.map(|e| Shared {
        name: e.env.name.clone(),
        overlay: overlay_shown,
        environments: loaded.settings.environments.len(),
    });
    let out = report(&Report {
        plan: &plan,
        pulled: &pulled,
        texts: &texts,
        dir,
        include_unmanaged: opts.include_unmanaged,
        shared: shared.as_ref(),
    });
    crate::util::output::stdout()
        .write_all(out.as_bytes())
        .context("writing to stdout")?;
    // A value left unpulled: the files are not what the target holds; say so in the code.
    Ok(if pulled.refused.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `pull --env`: the environment, its overlay directory as the load shows it, and how many
/// environments share the base.
struct Shared {
    name: String,
    overlay: Option<PathBuf>,
    environments: usize,
}

/// What the report is made of.
struct Report<'a> {
    plan: &'a crate::plan::Plan,
    pulled: &'a crate::convert::pull::Pulled,
    texts: &'a std::collections::BTreeMap<PathBuf, String>,
    dir: &'a std::path::Path,
    include_unmanaged: bool,
    shared: Option<&'a Shared>,
}

/// Names from the target are printed inert (no control characters reach the terminal).
fn inert(s: &dyn std::fmt::Display) -> String {
    crate::util::output::Inert(s).to_string()
}

/// The report pull prints.
fn report(r: &Report) -> String {
    let (plan, pulled) = (r.plan, r.pulled);
    let mut out = String::new();
    match r.shared {
        Some(s) => writeln!(
            out,
            "cfgctl pull from {} (environment {})",
            inert(&plan.target),
            inert(&s.name)
        ),
        None => writeln!(out, "cfgctl pull from {}", inert(&plan.target)),
    }
    .ok();
    for w in &plan.warnings {
        let _ = writeln!(out, "warning: {}", inert(w));
    }
    if !pulled.rewritten.is_empty() || !pulled.created.is_empty() {
        let _ = writeln!(out, "\nFiles changed:");
    }
    let mut base_changed = false;
    for f in &pulled.rewritten {
        let names: Vec<String> = f.addresses.iter().map(|a| inert(a)).collect();
        // With an environment, a base file is every environment's: say so where it changes.
        let note = match r.shared {
            Some(Shared {
                overlay: Some(o), ..
            }) if f.path.starts_with(o) => " (overlay)".to_string(),
            Some(s) => {
                base_changed = true;
                let n = plural(s.environments, "environment", "environments");
                format!(" (base, shared by {n})")
            }
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  ~ {}: {}{note}",
            inert(&f.path.display()),
            names.join(", ")
        );
    }
    for f in &pulled.created {
        let _ = writeln!(
            out,
            "  + {}: {} (new file)",
            inert(&display_path(&r.dir.join(&f.path))),
            inert(&f.address)
        );
    }
    if base_changed {
        let _ = writeln!(
            out,
            "\nA base file changes every environment that does not set the value in its overlay: `cfgctl plan --all-envs` shows what it does to the others."
        );
    }
    if !pulled.refused.is_empty() {
        let _ = writeln!(
            out,
            "\nNot pulled: the value is written as a reference, which pull never replaces by a literal (change what it reads, or write the value in the manifest in its place):"
        );
        for f in &pulled.refused {
            let _ = writeln!(
                out,
                "  ! {} {}: {} {} ({})",
                inert(&f.address),
                inert(&f.field),
                inert(&f.place()),
                inert(&f.variable),
                inert(&f.why)
            );
        }
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
    not_adopted(&mut out, &pulled.omitted);
    if !pulled.not_compared.is_empty() {
        let names: Vec<String> = pulled.not_compared.iter().map(|a| inert(a)).collect();
        let _ = writeln!(
            out,
            "\nNot pulled (the target cannot read them): {}",
            names.join(", ")
        );
    }
    let in_scope = plan.unmanaged.iter().filter(|u| u.in_prune_scope).count();
    if in_scope > 0 && !r.include_unmanaged {
        let _ = writeln!(
            out,
            "\n{} inside the prune scope not pulled: --include-unmanaged writes them as new files.",
            plural(in_scope, "unmanaged resource", "unmanaged resources")
        );
    }
    let vars = new_secret_variables(pulled, r.texts, r.dir);
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
    summary(&mut out, r);
    out
}

/// The closing lines: the counts.
fn summary(out: &mut String, r: &Report) {
    let pulled = r.pulled;
    // With an environment, one resource may be pulled into its base and its overlay file.
    let pulled_count = pulled
        .rewritten
        .iter()
        .flat_map(|f| &f.addresses)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let _ = writeln!(
        out,
        "\nPull: {} pulled into {}, {} new, {} gone from the target, {} unchanged.",
        plural(pulled_count, "resource", "resources"),
        plural(pulled.rewritten.len(), "file", "files"),
        plural(pulled.created.len(), "file", "files"),
        pulled.gone.len(),
        r.plan.unchanged
    );
    if !pulled.refused.is_empty() {
        let _ = writeln!(
            out,
            "{} not pulled: {} from a reference.",
            plural(pulled.refused.len(), "value", "values"),
            if pulled.refused.len() == 1 {
                "it comes"
            } else {
                "they come"
            }
        );
    }
}

/// The text of every manifest file, as read now (what `pull` rewrites), and of every
/// manifest file of the environment's overlay directory (shown as the load shows it).
fn read_texts(
    manifests: &[crate::manifest::Manifest],
    overlay: Option<&std::path::Path>,
) -> anyhow::Result<std::collections::BTreeMap<PathBuf, String>> {
    let mut files: Vec<PathBuf> = manifests.iter().map(|m| m.file.clone()).collect();
    if let Some(root) = overlay {
        for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
            let entry = entry.with_context(|| format!("reading {}", root.display()))?;
            let ext = entry.path().extension().and_then(|e| e.to_str());
            if entry.file_type().is_file() && matches!(ext, Some("yaml" | "yml" | "json")) {
                files.push(entry.path().to_path_buf());
            }
        }
    }
    let mut texts = std::collections::BTreeMap::new();
    for file in files {
        if let std::collections::btree_map::Entry::Vacant(slot) = texts.entry(file) {
            let text = std::fs::read_to_string(slot.key())
                .with_context(|| format!("reading {}", slot.key().display()))?;
            slot.insert(text);
        }
    }
    Ok(texts)
}

/// The files the manifests' `${file:…}`s name that the load read as data (inside the
/// repository, regular files): `pull` writes a changed document back into its file.
fn read_data_files(
    texts: &mut std::collections::BTreeMap<PathBuf, String>,
    data: &std::collections::BTreeSet<PathBuf>,
) -> anyhow::Result<()> {
    for path in crate::convert::pull::referenced_files(texts) {
        let Ok(canonical) = std::fs::canonicalize(&path) else {
            continue;
        };
        if texts.contains_key(&path) || !data.contains(&canonical) {
            continue;
        }
        let text = crate::util::file_ref::read(&canonical)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("reading {}", path.display()))?;
        texts.insert(path, text);
    }
    Ok(())
}

/// Secrets come back as `${env:...}` references: the variables this pull adds (in new files,
/// and in rewritten files beyond those they named already), sorted.
fn new_secret_variables(
    pulled: &crate::convert::pull::Pulled,
    texts: &std::collections::BTreeMap<PathBuf, String>,
    dir: &std::path::Path,
) -> std::collections::BTreeSet<String> {
    let mut vars = std::collections::BTreeSet::new();
    for f in &pulled.created {
        vars.extend(crate::plan::secrets::env_variables(&f.text));
    }
    // A file a `${file:…}` names is data (never substituted): it asks for no variable.
    let data = crate::convert::pull::referenced_files(texts);
    for f in &pulled.rewritten {
        if data.contains(&f.path) || data.contains(&dir.join(&f.path)) {
            continue;
        }
        let before = texts
            .get(&f.path)
            .or_else(|| texts.get(&dir.join(&f.path)))
            .map(|t| crate::plan::secrets::env_variables(t))
            .unwrap_or_default();
        vars.extend(
            crate::plan::secrets::env_variables(&f.text)
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

/// `--include-unmanaged`'s resources that the environment's overlay omits, not written.
fn not_adopted(out: &mut String, omitted: &[(crate::api::registry::Address, PathBuf)]) {
    if omitted.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nNot adopted (the environment's overlay omits them; delete them with `cfgctl apply --prune`, or remove the omit):"
    );
    for (address, file) in omitted {
        let _ = writeln!(out, "  - {} ({})", inert(address), file.display());
    }
}
