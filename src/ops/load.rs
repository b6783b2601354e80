//! The manifests, loaded on blocking threads (all cores) while the target is read on the
//! runtime: the download hides behind the parsing. A manifest problem wins over a target
//! problem, as if the manifests had been loaded first; when the load fails, the reading is
//! abandoned.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Context;

use super::{plural, Connection, Diagnosed};
use crate::api::registry::Address;
use crate::config::diagnostic::Severity;
use crate::manifest;
use crate::manifest::Loaded;

/// Loads the manifests for a command that needs them all valid, for one environment (its
/// variables and overlay) or none.
pub fn load_valid(dir: &Path, env: Option<&str>) -> anyhow::Result<manifest::Loaded> {
    valid(manifest::load_dir_for(dir, env)?, dir, env)
}

/// Whether a load met a kind this cfgctl does not know: a target with a newer API may
/// describe it, so the manifests are loaded again once its description is read.
fn names_unknown_kinds(loaded: &manifest::Loaded) -> bool {
    loaded.diagnostics.iter().any(|d| {
        matches!(
            d.problem,
            crate::config::diagnostic::Problem::UnknownKind {
                suggestion: None,
                ..
            }
        )
    })
}

/// Where a plan's manifests come from: its directory, for its environment (or none), loaded
/// on its own or taken from the load several environments share.
#[derive(Clone, Debug)]
pub(super) struct Source {
    pub dir: PathBuf,
    pub env: Option<String>,
    pub shared: Option<SharedLoad>,
    /// Nothing is kept of the manifests but the plan: each lets go of its spec as it loads
    /// (`manifest::load_dir_lean`; not a shared load's), and [`read_back`] reads the few the
    /// plan needs again.
    pub lean: bool,
    /// What the target holds, once its lists are read (while a lean load still runs: from
    /// then on, a manifest the plan sends keeps its spec instead of being read back).
    pub listed: Arc<OnceLock<crate::plan::Listed>>,
}

impl Source {
    /// The manifests loaded before the target's description is read: `None` when they name a
    /// kind this cfgctl does not know (the description may add it: see [`Source::deferred`]).
    pub async fn early(&self) -> anyhow::Result<Option<manifest::Loaded>> {
        if let (Some(shared), Some(env)) = (&self.shared, &self.env) {
            return shared.take(env).await;
        }
        let (dir, env, lean) = (self.dir.clone(), self.env.clone(), self.lean);
        let listed = Arc::clone(&self.listed);
        tokio::task::spawn_blocking(move || {
            early_of(
                load(&dir, env.as_deref(), lean, &listed)?,
                &dir,
                env.as_deref(),
            )
        })
        .await
        .context("loading the manifests")?
    }

    /// The hashes of the files the manifests are read from (the memo's key), hashed on a
    /// blocking thread (once for all environments of a shared load); `None` when they could
    /// not be read.
    pub async fn sources(&self) -> Option<manifest::Sources> {
        if let Some(shared) = &self.shared {
            return shared.sources().await;
        }
        let dir = self.dir.clone();
        let hashing = tokio::task::spawn_blocking(move || manifest::sources(&dir));
        hashing.await.ok().and_then(Result::ok)
    }

    /// [`Source::early`] as a task of its own, going on while the caller reads the target.
    pub fn spawn_early(&self) -> tokio::task::JoinHandle<anyhow::Result<Option<manifest::Loaded>>> {
        let source = self.clone();
        tokio::spawn(async move { source.early().await })
    }

    /// What [`Source::early`] deferred, loaded now that the target's description is read.
    pub async fn deferred(
        &self,
        early: Option<manifest::Loaded>,
    ) -> anyhow::Result<manifest::Loaded> {
        match early {
            Some(loaded) => Ok(loaded),
            None => {
                let (dir, env, lean) = (self.dir.clone(), self.env.clone(), self.lean);
                let listed = Arc::clone(&self.listed);
                tokio::task::spawn_blocking(move || {
                    let loaded = load(&dir, env.as_deref(), lean, &listed)?;
                    valid(loaded, &dir, env.as_deref())
                })
                .await
                .context("loading the manifests")?
            }
        }
    }
}

/// Loads the manifests, lean (see [`Source::lean`]; what the target holds, once `listed`,
/// decides too) or not.
fn load(
    dir: &Path,
    env: Option<&str>,
    lean: bool,
    listed: &OnceLock<crate::plan::Listed>,
) -> Result<manifest::Loaded, manifest::LoadError> {
    if lean {
        let let_go = |m: &manifest::Manifest, settings: &crate::config::settings::Settings| {
            crate::plan::may_let_go_given(m, settings, listed.get())
        };
        let lean = manifest::Lean {
            let_go: &let_go,
            ..crate::plan::LEAN
        };
        manifest::load_dir_lean(dir, env, &lean)
    } else {
        manifest::load_dir_for(dir, env)
    }
}

/// The lean manifests whose specs a plan against `current` reads (`plan::needs_spec`).
fn needed(loaded: &manifest::Loaded, current: &crate::plan::Current) -> BTreeSet<Address> {
    use rayon::prelude::*;
    // A lookup of every manifest in the target's state: on all cores (the plan's serial end).
    let needed: Vec<Address> = loaded
        .manifests
        .par_iter()
        .filter(|m| m.is_lean() && crate::plan::needs_spec(m, current))
        .map(manifest::Manifest::address)
        .collect();
    needed.into_iter().collect()
}

/// Reads back the specs of the `needed` manifests: only their files, each checked unchanged
/// since the load. The number of files read.
fn read_back_of(
    loaded: &mut manifest::Loaded,
    needed: &BTreeSet<Address>,
) -> Result<usize, manifest::ReadBackError> {
    let files = loaded.read_back(|m| needed.contains(&m.address()))?;
    tracing::debug!(files, "specs read back");
    Ok(files)
}

/// Reads back, on a blocking thread, the specs a plan against `current` needs of a lean load
/// (none for a no-change plan). The load and the number of files read.
pub(super) async fn read_back(
    loaded: manifest::Loaded,
    current: &crate::plan::Current,
) -> anyhow::Result<(manifest::Loaded, usize)> {
    let needed = needed(&loaded, current);
    if needed.is_empty() {
        return Ok((loaded, 0));
    }
    tokio::task::spawn_blocking(move || {
        let mut loaded = loaded;
        let files = read_back_of(&mut loaded, &needed)?;
        anyhow::Ok((loaded, files))
    })
    .await
    .context("reading back the manifests")?
}

/// A load made before the target's description is read: `None` when it names a kind this
/// cfgctl does not know (the description may add it), else the manifests if valid.
pub(super) fn early_of(
    loaded: manifest::Loaded,
    dir: &Path,
    env: Option<&str>,
) -> anyhow::Result<Option<manifest::Loaded>> {
    if names_unknown_kinds(&loaded) {
        return Ok(None);
    }
    valid(loaded, dir, env).map(Some)
}

/// The loaded manifests, or their errors as a [`Diagnosed`] error. A `cfgctl.yaml` below the
/// root, which `validate` warns of, stops a command that plans: its rules would silently not
/// apply; so does a manifest file or folder not followed (a symbolic link, a FIFO): its
/// resources would be planned as undeclared, deleted under `prune`. A folder with no manifests
/// is refused unless its `cfgctl.yaml` has prune patterns (a decommission: the plan deletes
/// the scope, and apply needs `--allow-empty-prune`).
fn valid(
    loaded: manifest::Loaded,
    dir: &Path,
    env: Option<&str>,
) -> anyhow::Result<manifest::Loaded> {
    let nested: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| {
            matches!(
                d.problem,
                crate::config::diagnostic::Problem::NestedSettings { .. }
                    | crate::config::diagnostic::Problem::NotFollowed(_)
            )
        })
        .map(|d| crate::config::diagnostic::Diagnostic {
            severity: Severity::Error,
            ..d.clone()
        })
        .collect();
    if !nested.is_empty() {
        return Err(Diagnosed {
            message: format!(
                "{} below `{}` would not be read: nothing was planned",
                match nested.iter().all(|d| matches!(
                    d.problem,
                    crate::config::diagnostic::Problem::NestedSettings { .. }
                )) {
                    true => plural(nested.len(), "settings file", "settings files"),
                    false => plural(nested.len(), "file", "files"),
                },
                dir.display()
            ),
            diagnostics: nested,
        }
        .into());
    }
    let errors = loaded.error_count();
    if errors > 0 {
        let diagnostics = loaded
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        return Err(Diagnosed {
            diagnostics,
            message: match env {
                None => format!(
                    "{} in the manifests under `{}`: run `cfgctl validate` for details",
                    plural(errors, "error", "errors"),
                    dir.display()
                ),
                Some(name) => format!(
                    "{} in the manifests under `{}` for environment `{name}`: run `cfgctl validate --env {name}` for details",
                    plural(errors, "error", "errors"),
                    dir.display()
                ),
            },
        }
        .into());
    }
    if loaded.manifest_files == 0 && loaded.settings.prune.is_empty() {
        anyhow::bail!(
            "no manifests in `{}` (no *.yaml, *.yml or *.json files, and no prune patterns in cfgctl.yaml to decommission)",
            dir.display()
        );
    }
    Ok(loaded)
}

/// Loads the manifests while a connection is made (or handed over) and the target read:
/// every manifest is digested ahead while the target is still being read (the reading lets
/// go of the objects that match), only those it has once it is read.
pub(super) async fn load_fetch(
    source: &Source,
    connecting: impl std::future::Future<Output = anyhow::Result<Connection>>,
) -> anyhow::Result<(manifest::Loaded, Connection, crate::remote::state::Fetched)> {
    let expected = crate::plan::Expected::default();
    let expecting = expected.clone();
    // What the target has, once read: then only those manifests need their digests (and a
    // lean load keeps the specs of the others: `Source::listed`).
    let listed = Arc::clone(&source.listed);
    let listing = Arc::clone(&listed);
    let early = source.spawn_early();
    let loading = async move {
        // Loaded again once the target's description (which may add a kind) is read.
        let Some(loaded) = early.await.context("loading the manifests")?? else {
            return anyhow::Ok(None);
        };
        tokio::task::spawn_blocking(move || digest_ahead(loaded, &listing, &expecting))
            .await
            .context("loading the manifests")
            .map(Some)
    };
    let reading = async {
        let conn = connecting.await?;
        let fetched = crate::remote::state::fetch_expecting(&conn.client, &expected)
            .await
            .with_context(|| format!("reading the current state of {}", conn.name))?;
        let _ = listed.set(crate::plan::Listed::of(&fetched.current));
        anyhow::Ok((conn, fetched))
    };
    tokio::pin!(reading);
    tokio::pin!(loading);
    let (loaded, read) = first_with(&mut loading, reading.as_mut()).await;
    let loaded = loaded?;
    let read = match read {
        Some(r) => r,
        None => reading.await,
    };
    // A manifest problem wins over a target problem: a kind the target did not add stays
    // unknown, and the load's errors are reported first.
    let loaded = source.deferred(loaded).await?;
    let (conn, mut fetched) = read?;
    // Pages read before the digests were known kept every object's text.
    fetched.current.release_expected(&expected);
    Ok((loaded, conn, fetched))
}

/// Digests the manifests ahead while the target is still being read (the reading lets go of
/// what matches): every one while the listing is not known, once it is only those it has.
fn digest_ahead(
    loaded: manifest::Loaded,
    listing: &OnceLock<crate::plan::Listed>,
    expecting: &crate::plan::Expected,
) -> manifest::Loaded {
    {
        let compared: Vec<&manifest::Manifest> = match listing.get() {
            Some(existing) => loaded
                .manifests
                .iter()
                .filter(|m| existing.holds(m))
                .collect(),
            None => loaded.manifests.iter().collect(),
        };
        crate::plan::prepare(&compared);
        expecting.set(&compared, &loaded.settings);
        tracing::info!(
            manifests = loaded.manifests.len(),
            files = loaded.manifest_files,
            "loaded"
        );
    }
    loaded
}

/// Awaits `first` while `second` makes progress too; `second`'s output when it finished first
/// (else it is left to be awaited).
pub(super) async fn first_with<A, B>(
    first: impl std::future::Future<Output = A>,
    mut second: std::pin::Pin<&mut impl std::future::Future<Output = B>>,
) -> (A, Option<B>) {
    tokio::pin!(first);
    let mut done = None;
    let a = loop {
        tokio::select! {
            a = &mut first => break a,
            b = &mut second, if done.is_none() => done = Some(b),
        }
    };
    (a, done)
}

type LoadResult = anyhow::Result<Option<Loaded>>;

/// The manifests of several environments, loaded together once the first of them is needed
/// (`manifest::load_dir_envs`: a file without `${` is parsed once for all), and the digests of
/// the specs they share worked out once. Each environment's plan takes its own load; a
/// remembered plan takes none, and when none does nothing is loaded.
#[derive(Clone)]
pub struct SharedLoad(Arc<Shared>);

struct Shared {
    dir: PathBuf,
    names: Vec<String>,
    /// Every environment's plan keeps no manifests: the load is lean ([`Source::lean`]).
    lean: bool,
    slots: Mutex<Slots>,
    /// The files' hashes (the memo's key), read once for all (`None`: could not be read).
    sources: tokio::sync::OnceCell<Option<crate::manifest::Sources>>,
    /// The environments whose manifests could not be loaded.
    failed: Arc<Mutex<BTreeSet<String>>>,
}

#[derive(Default)]
struct Slots {
    started: bool,
    senders: Vec<Option<tokio::sync::oneshot::Sender<LoadResult>>>,
    receivers: Vec<Option<tokio::sync::oneshot::Receiver<LoadResult>>>,
}

impl std::fmt::Debug for SharedLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLoad")
            .field("dir", &self.0.dir)
            .field("names", &self.0.names)
            .finish()
    }
}

impl SharedLoad {
    /// The load of the environments `names` of `dir`, lean when no plan keeps its manifests
    /// ([`Source::lean`]: each reads back what it needs).
    pub fn new(dir: &Path, names: Vec<String>, lean: bool) -> SharedLoad {
        let (senders, receivers) = names
            .iter()
            .map(|_| {
                let (tx, rx) = tokio::sync::oneshot::channel();
                (Some(tx), Some(rx))
            })
            .unzip();
        SharedLoad(Arc::new(Shared {
            dir: dir.to_path_buf(),
            names,
            lean,
            slots: Mutex::new(Slots {
                started: false,
                senders,
                receivers,
            }),
            sources: tokio::sync::OnceCell::new(),
            failed: Arc::default(),
        }))
    }

    /// Whether `name`'s manifests could not be loaded (its failure is then its load's).
    pub fn failed(&self, name: &str) -> bool {
        self.0
            .failed
            .lock()
            .map(|f| f.contains(name))
            .unwrap_or(false)
    }

    /// The hashes of the files the manifests are read from, hashed once for all
    /// environments (`manifest::sources`).
    pub(super) async fn sources(&self) -> Option<crate::manifest::Sources> {
        let dir = self.0.dir.clone();
        self.0
            .sources
            .get_or_init(|| async move {
                let hashing = tokio::task::spawn_blocking(move || crate::manifest::sources(&dir));
                hashing.await.ok().and_then(Result::ok)
            })
            .await
            .clone()
    }

    /// `name`'s early load (`None`: deferred until the target's description is read, see
    /// `load::load_early`); the first call starts the load of every environment.
    pub(super) async fn take(&self, name: &str) -> LoadResult {
        let receiver = {
            let mut slots = self
                .0
                .slots
                .lock()
                .map_err(|_| anyhow::anyhow!("loading the manifests failed"))?;
            if !slots.started {
                slots.started = true;
                let senders: Vec<_> = slots.senders.iter_mut().map(Option::take).collect();
                let (dir, names) = (self.0.dir.clone(), self.0.names.clone());
                let (lean, failed) = (self.0.lean, Arc::clone(&self.0.failed));
                tokio::task::spawn_blocking(move || load_all(&dir, &names, lean, senders, &failed));
            }
            let at = self.0.names.iter().position(|n| n == name);
            at.and_then(|i| slots.receivers.get_mut(i)?.take())
        };
        let Some(receiver) = receiver else {
            anyhow::bail!("no shared load for the environment `{name}`");
        };
        receiver
            .await
            .map_err(|_| anyhow::anyhow!("loading the manifests stopped"))?
    }
}

/// Loads every environment at once (lean or not), digests each spec once (the environments
/// share the specs of the files they read alike), and hands each environment its load.
fn load_all(
    dir: &Path,
    names: &[String],
    lean: bool,
    senders: Vec<Option<tokio::sync::oneshot::Sender<LoadResult>>>,
    failed: &Mutex<BTreeSet<String>>,
) {
    let asked: Vec<Option<&str>> = names.iter().map(|n| Some(n.as_str())).collect();
    let loading = match lean {
        true => crate::manifest::load_dir_envs_lean(dir, &asked, &crate::plan::LEAN),
        false => crate::manifest::load_dir_envs(dir, &asked),
    };
    let loads: Vec<LoadResult> = match loading {
        Ok(loads) => loads
            .into_iter()
            // Each environment's report names it: the problems are not said to be its own.
            .map(|loaded| early_of(loaded, dir, None))
            .collect(),
        Err(e) => names.iter().map(|_| Err(anyhow::anyhow!("{e}"))).collect(),
    };
    digest_shared(&loads);
    for ((name, load), sender) in names.iter().zip(loads).zip(senders) {
        if load.is_err() {
            if let Ok(mut f) = failed.lock() {
                f.insert(name.clone());
            }
        }
        if let Some(sender) = sender {
            // A receiver gone (a remembered plan) wants nothing.
            let _ = sender.send(load);
        }
    }
}

/// The digests of every spec the loads hold, each spec worked out once on all cores (a spec
/// shared by several environments is one allocation; a lean load's are set already).
fn digest_shared(loads: &[LoadResult]) {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&crate::manifest::Manifest> = loads
        .iter()
        .filter_map(|l| l.as_ref().ok()?.as_ref())
        .flat_map(|l| &l.manifests)
        .filter(|m| m.digest.get().is_none() && seen.insert(Arc::as_ptr(&m.spec)))
        .collect();
    crate::plan::prepare(&unique);
    let digests: std::collections::HashMap<*const serde_json::Value, [u8; 16]> = unique
        .iter()
        .filter_map(|m| Some((Arc::as_ptr(&m.spec), *m.digest.get()?)))
        .collect();
    for loaded in loads.iter().filter_map(|l| l.as_ref().ok()?.as_ref()) {
        for m in &loaded.manifests {
            if let Some(d) = digests.get(&Arc::as_ptr(&m.spec)) {
                let _ = m.digest.set(*d);
            }
        }
    }
}

#[cfg(test)]
mod tests;
