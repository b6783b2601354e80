//! The manifests, loaded on blocking threads (all cores) while the target is read on the
//! runtime: the download hides behind the parsing. A manifest problem wins over a target
//! problem, as if the manifests had been loaded first; when the load fails, the reading is
//! abandoned.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use anyhow::Context;

use super::{plural, Connection, Diagnosed};
use crate::diagnostic::Severity;
use crate::manifest;
use crate::registry::Address;

/// Loads the manifests for a command that needs them all valid.
pub fn load_valid(dir: &Path) -> anyhow::Result<manifest::Loaded> {
    valid(manifest::load_dir(dir)?, dir)
}

/// Whether a load met a kind this cfgctl does not know: a target with a newer API may
/// describe it, so the manifests are loaded again once its description is read.
fn names_unknown_kinds(loaded: &manifest::Loaded) -> bool {
    loaded.diagnostics.iter().any(|d| {
        matches!(
            d.problem,
            crate::diagnostic::Problem::UnknownKind {
                suggestion: None,
                ..
            }
        )
    })
}

/// Loads the manifests before the target's description is read: `None` when they name a
/// kind this cfgctl does not know (the description may add it: see [`load_deferred`]).
pub(super) fn load_early(dir: &Path) -> anyhow::Result<Option<manifest::Loaded>> {
    let loaded = manifest::load_dir(dir)?;
    if names_unknown_kinds(&loaded) {
        return Ok(None);
    }
    valid(loaded, dir).map(Some)
}

/// What [`load_early`] deferred, loaded now that the target's description is read.
pub(super) async fn load_deferred(
    early: Option<manifest::Loaded>,
    dir: &Path,
) -> anyhow::Result<manifest::Loaded> {
    match early {
        Some(loaded) => Ok(loaded),
        None => {
            let dir = dir.to_path_buf();
            tokio::task::spawn_blocking(move || load_valid(&dir))
                .await
                .context("loading the manifests")?
        }
    }
}

/// The loaded manifests, or their errors as a [`Diagnosed`] error.
fn valid(loaded: manifest::Loaded, dir: &Path) -> anyhow::Result<manifest::Loaded> {
    let errors = loaded.error_count();
    if errors > 0 {
        let diagnostics = loaded
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        return Err(Diagnosed {
            diagnostics,
            message: format!(
                "{} in the manifests under `{}`: run `cfgctl validate` for details",
                plural(errors, "error", "errors"),
                dir.display()
            ),
        }
        .into());
    }
    if loaded.manifest_files == 0 {
        anyhow::bail!(
            "no manifests in `{}` (no *.yaml, *.yml or *.json files)",
            dir.display()
        );
    }
    Ok(loaded)
}

/// Loads the manifests while a connection is made (or handed over) and the target read:
/// every manifest is digested ahead while the target is still being read (the reading lets
/// go of the objects that match), only those it has once it is read.
pub async fn load_fetch(
    dir: &Path,
    connecting: impl std::future::Future<Output = anyhow::Result<Connection>>,
) -> anyhow::Result<(manifest::Loaded, Connection, crate::state::Fetched)> {
    let owned = dir.to_path_buf();
    let expected = crate::plan::Expected::default();
    let expecting = expected.clone();
    // What the target has, once read: then only those manifests need their digests.
    let listed: Arc<OnceLock<BTreeSet<Address>>> = Arc::default();
    let listing = Arc::clone(&listed);
    let mut loading = tokio::task::spawn_blocking(move || {
        // Loaded again once the target's description (which may add a kind) is read.
        let Some(loaded) = load_early(&owned)? else {
            return anyhow::Ok(None);
        };
        // While the target is still being read, every manifest is digested ahead (the
        // reading lets go of what matches); once it is read, only those it has.
        let compared: Vec<&manifest::Manifest> = match listing.get() {
            Some(existing) => loaded
                .manifests
                .iter()
                .filter(|m| existing.contains(&m.address()))
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
        anyhow::Ok(Some(loaded))
    });
    let reading = async {
        let conn = connecting.await?;
        let fetched = crate::state::fetch_expecting(&conn.client, &expected)
            .await
            .with_context(|| format!("reading the current state of {}", conn.name))?;
        let _ = listed.set(fetched.current.resources.keys().cloned().collect());
        anyhow::Ok((conn, fetched))
    };
    tokio::pin!(reading);
    let (loaded, read) = first_with(&mut loading, reading.as_mut()).await;
    let loaded = loaded.context("loading the manifests")??;
    let read = match read {
        Some(r) => r,
        None => reading.await,
    };
    // A manifest problem wins over a target problem: a kind the target did not add stays
    // unknown, and the load's errors are reported first.
    let loaded = load_deferred(loaded, dir).await?;
    let (conn, mut fetched) = read?;
    // Pages read before the digests were known kept every object's text.
    fetched.current.release_expected(&expected);
    Ok((loaded, conn, fetched))
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
