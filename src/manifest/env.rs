//! Loading for environments (docs/environments.md): the directory is walked and every file
//! read once; a file with `${` is read once per environment asked (its values differ), any
//! other file once for all; then each environment's overlay is merged and the set checked.

use super::*;
use crate::config::environments::Environment;

/// Loads `dir` for one environment (`None`: none selected). An environment `cfgctl.yaml` does
/// not declare is a [`LoadError::UnknownEnvironment`] (unless the settings file has errors:
/// they are reported instead).
pub fn load_dir_for(dir: &Path, env: Option<&str>) -> Result<Loaded, LoadError> {
    let mut all = load_dir_envs(dir, &[env])?;
    Ok(all.pop().unwrap_or_default())
}

/// [`load_dir_for`], lean (`manifest::lean`): each manifest is handed to `lean.let_go` as
/// soon as its file is checked, and gives up its spec when it says so. Not with an overlay (it
/// is merged into the specs after every file is in): then every spec is kept.
pub fn load_dir_lean(dir: &Path, env: Option<&str>, lean: &Lean<'_>) -> Result<Loaded, LoadError> {
    let mut all = load_envs(dir, &[env], Some(lean))?;
    Ok(all.pop().unwrap_or_default())
}

/// Loads `dir` once for each of `envs` (`None`: no environment), in that order; a file the
/// environments read alike is parsed once.
pub fn load_dir_envs(dir: &Path, envs: &[Option<&str>]) -> Result<Vec<Loaded>, LoadError> {
    load_envs(dir, envs, None)
}

/// [`load_dir_envs`], lean (`manifest::lean`): each manifest is handed to `lean.let_go` as
/// soon as its file is checked (once for all environments when the file reads alike in all),
/// and gives up its spec when it says so. Not when an environment asked has an overlay: then
/// every spec is kept.
pub fn load_dir_envs_lean(
    dir: &Path,
    envs: &[Option<&str>],
    lean: &Lean<'_>,
) -> Result<Vec<Loaded>, LoadError> {
    load_envs(dir, envs, Some(lean))
}

fn load_envs(
    dir: &Path,
    envs: &[Option<&str>],
    lean: Option<&Lean<'_>>,
) -> Result<Vec<Loaded>, LoadError> {
    let walk = walk(dir)?;
    let mut common = Loaded {
        other_files: walk.other_files,
        manifest_files: walk.files.len(),
        diagnostics: walk.problems,
        ..Loaded::default()
    };
    if let Some((path, shown)) = &walk.settings {
        read_settings(path, shown, &mut common);
    }
    let settings_failed = !common.diagnostics.is_empty();
    let selected = envs
        .iter()
        .map(|name| match name {
            None => Ok(None),
            Some(name) => match common.settings.environments.get(*name) {
                Some(env) => Ok(Some(env)),
                None if settings_failed => Ok(None),
                None => Err(LoadError::UnknownEnvironment {
                    name: name.to_string(),
                    known: common.settings.environments.keys().cloned().collect(),
                }),
            },
        })
        .collect::<Result<Vec<Option<&Environment>>, LoadError>>()?;
    let declared = !common.settings.environments.is_empty();
    common.file_scope =
        crate::util::file_ref::FileScope::of_dir(dir, &common.settings.secret_file_dirs);
    let files = common.file_scope.clone();
    let tokens = crate::config::environments::token_variables(&common.settings.environments);
    // A lean load lets go of each spec as soon as its file is checked: not when an overlay is
    // merged into the specs once every file is in.
    let lean = lean.filter(|_| selected.iter().flatten().all(|e| e.overlay.is_none()));
    let contexts: Vec<vars::Context<'_>> = selected
        .iter()
        .map(|env| vars::Context {
            env: *env,
            declared,
            files: Some(&files),
            tokens: &tokens,
            read_document: lean.map(|l| l.read_document),
        })
        .collect();
    // Overlay directories are never base manifests; their files are still hashed, so the
    // sources match what `sources(dir)` hashes.
    let overlays: Vec<PathBuf> = common
        .settings
        .environments
        .values()
        .filter_map(|e| e.overlay.as_ref().map(|o| dir.join(o)))
        .collect();
    let in_overlay = |path: &Path| overlays.iter().any(|o| path.starts_with(o));
    let settings = &common.settings;
    // Every file on its own, on all cores (one job each: `util::par::each`); the results are
    // put back in walk order, so the outcome is the same as a sequential load.
    let per_file: Vec<(Vec<Loaded>, [u8; 32])> =
        crate::util::par::each(&walk.files, |(path, shown)| {
            if in_overlay(path) {
                let hash = std::fs::read(path).map_or([0; 32], |b| *blake3::hash(&b).as_bytes());
                return (Vec::new(), hash);
            }
            let mut results = Vec::with_capacity(1);
            let hash = load_file(path, shown, &contexts, &mut results);
            if let Some(lean) = lean {
                for m in results.iter_mut().flat_map(|l| &mut l.manifests) {
                    if (lean.let_go)(m, settings) {
                        m.let_go_of_spec();
                    }
                    // Read for the hook's digest: not kept past it.
                    m.prepared = Vec::new();
                }
            }
            (results, hash)
        });
    let data = data_files(&per_file, &walk.files);
    let mut out: Vec<Loaded> = (0..contexts.len()).map(|_| common.clone()).collect();
    for (i, ((results, hash), (path, shown))) in per_file.into_iter().zip(&walk.files).enumerate() {
        if in_overlay(path) || data.contains(&i) {
            set_aside(&mut out, &results, shown, hash, !in_overlay(path));
            continue;
        }
        let shared = results.len() == 1;
        let mut results = results.into_iter();
        let mut last = None;
        for (i, loaded) in out.iter_mut().enumerate() {
            // One result for all environments: cloned into all but the last.
            let one = if shared && i + 1 < contexts.len() {
                last.get_or_insert_with(|| results.next().unwrap_or_default())
                    .clone()
            } else if shared {
                last.take().or_else(|| results.next()).unwrap_or_default()
            } else {
                results.next().unwrap_or_default()
            };
            add_file(loaded, one, shown, hash);
        }
    }
    for (loaded, env) in out.iter_mut().zip(&selected) {
        loaded.environment = env.map(|e| e.name.clone());
        if let Some(env) = env {
            overlay::apply(dir, env, declared, loaded);
        }
        finish(loaded);
    }
    Ok(out)
}

/// A file that is no base manifest (an overlay's, or a value a `${file:…}` names): counted
/// with the other files and hashed; a value that also reads as manifests is said to be one.
fn set_aside(out: &mut [Loaded], results: &[Loaded], shown: &Path, hash: [u8; 32], value: bool) {
    let declared = results.iter().map(|r| r.manifests.len()).max().unwrap_or(0);
    for loaded in out {
        loaded.manifest_files -= 1;
        loaded.sources.0.push((shown.to_path_buf(), hash));
        // A file is a manifest or a value, never both: its resources would otherwise vanish
        // from the plan (and be pruned) because a field somewhere names the file.
        if declared > 0 && value {
            loaded.diagnostics.push(Diagnostic::error(
                shown,
                Pos::new(1, 1),
                Problem::NotAManifest(format!(
                    "a `${{file:…}}` names this file as a value, but it holds {declared} \
                     manifest(s): keep the value in a file of its own (a file is a manifest or a value, never both)"
                )),
            ));
        }
    }
}

/// `cfgctl.yaml` into the load: its settings or its problems, and its hash.
fn read_settings(path: &Path, shown: &Path, common: &mut Loaded) {
    let mut hash = [0; 32];
    match read_text(path) {
        Ok(text) => {
            hash = *blake3::hash(text.as_bytes()).as_bytes();
            match settings::parse(shown, &text) {
                Ok(s) => common.settings = s,
                Err(d) => common.diagnostics.extend(d),
            }
        }
        Err((pos, problem)) => common
            .diagnostics
            .push(Diagnostic::error(shown, pos, problem)),
    }
    common.sources.0.push((shown.to_path_buf(), hash));
}

/// The indices (in walk order) of the files some `${file:…}` names: data, not manifests, so
/// what reading them as manifests found is dropped.
fn data_files(
    per_file: &[(Vec<Loaded>, [u8; 32])],
    files: &[(PathBuf, PathBuf)],
) -> std::collections::BTreeSet<usize> {
    let named: std::collections::BTreeSet<&PathBuf> = per_file
        .iter()
        .flat_map(|(results, _)| results.iter().flat_map(|l| &l.data_files))
        .collect();
    if named.is_empty() {
        return Default::default();
    }
    files
        .iter()
        .enumerate()
        .filter(|(_, (path, _))| std::fs::canonicalize(path).is_ok_and(|c| named.contains(&c)))
        .map(|(i, _)| i)
        .collect()
}

/// One file's results into an environment's load, its source hash in walk order.
fn add_file(loaded: &mut Loaded, mut one: Loaded, shown: &Path, hash: [u8; 32]) {
    loaded.manifests.append(&mut one.manifests);
    loaded.other_files += one.other_files;
    loaded.manifest_files -= one.other_files;
    loaded.diagnostics.append(&mut one.diagnostics);
    loaded.sources.0.push((shown.to_path_buf(), hash));
    // What `${env:…}`/`${file:…}` read at load counts as read.
    loaded.sources.0.append(&mut one.sources.0);
    loaded.resolved.append(&mut one.resolved);
    loaded.provenance.extend(one.provenance);
    loaded.data_files.append(&mut one.data_files);
}

/// The checks across manifests, once every file (and overlay) is in.
fn finish(loaded: &mut Loaded) {
    if loaded.settings.allow_literal_secrets {
        for d in &mut loaded.diagnostics {
            if matches!(d.problem, Problem::LiteralSecret { .. }) {
                d.severity = diagnostic::Severity::Warning;
            }
        }
    }
    check_set(loaded);
    diagnostic::sort(&mut loaded.diagnostics);
}
