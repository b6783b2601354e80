//! The commands: one thin file per command (after cargo's `bin/cargo/commands/*.rs`), each
//! taking resolved option structs (never clap types) and returning the exit code; the work
//! itself lives in the library's layers (`manifest`, `state`, `plan`, `render`, `apply`,
//! `export`, `pull`, `drift`). Errors that end a command come back as `anyhow` errors with
//! context; `main` prints them once. This file holds what the commands share: connecting to a
//! target, loading manifests that must be valid, planning against the target.

mod apply;
mod export;
mod graph;
mod plan;
mod pull;
mod schema;
mod serve;
mod test_policy;
mod validate;

pub use apply::*;
pub use export::*;
pub use graph::*;
pub use plan::*;
pub use pull::*;
pub use schema::*;
pub use serve::*;
pub use test_policy::*;
pub use validate::*;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::Context;

use crate::diagnostic::Severity;
use crate::manifest;
use crate::registry::Address;

pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Where the commands that need a tenant send their requests.
#[derive(Debug, Clone)]
pub struct TargetOptions {
    pub url: Option<String>,
    pub token: Option<String>,
    /// The embedded local tenant's store.
    pub local: Option<PathBuf>,
    pub timeout: std::time::Duration,
    pub max_retries: u32,
    pub insecure_http: bool,
    /// Pages one list walk may take (`--max-pages`).
    pub max_pages: usize,
    /// The largest answer read, in bytes (`--max-response-mb`).
    pub max_response_bytes: u64,
}

/// A connected target: the client, what to call it, and the in-process emulator of `--local`
/// (kept alive as long as the connection).
pub struct Connection {
    pub client: crate::client::Client,
    pub name: String,
    _local: Option<crate::emulator::Emulator>,
}

/// The key a saved plan's guards are sealed with (see `GuardContext::seal_with`): from the API
/// token when there is one, else from the user's secret in the cache folder; `None` when
/// there is neither (the plan is then written unsealed).
pub fn seal_key(token: Option<&str>, cache: Option<&Path>) -> Option<[u8; 32]> {
    const TOKEN: &str = "cfgctl 2026-11-25 saved plan guards: API token";
    const USER: &str = "cfgctl 2026-11-25 saved plan guards: user secret";
    match token {
        Some(token) => Some(blake3::derive_key(TOKEN, token.as_bytes())),
        None => crate::memo::user_secret(cache?).map(|s| blake3::derive_key(USER, &s)),
    }
}

/// Connects to `--url` or starts the `--local` tenant.
pub async fn connect(t: &TargetOptions) -> anyhow::Result<Connection> {
    let (url, name, local) = match (&t.url, &t.local) {
        (Some(_), Some(_)) => anyhow::bail!("--url and --local name two targets: choose one"),
        (None, None) => anyhow::bail!(
            "no target: pass --url URL (or set CFGCTL_URL) for a tenant, or --local for the embedded local tenant"
        ),
        (Some(url), None) => (url.clone(), None, None),
        (None, Some(path)) => {
            let config = crate::emulator::Config {
                data: Some(path.clone()),
                ..crate::emulator::Config::default()
            };
            let emulator = crate::emulator::Emulator::start(
                &config,
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            )
            .await
            .with_context(|| format!("starting the local tenant over {}", path.display()))?;
            let url = emulator.url();
            (url, Some(format!("local:{}", path.display())), Some(emulator))
        }
    };
    let config = crate::client::ClientConfig {
        base_url: url,
        token: if local.is_some() {
            None
        } else {
            t.token.clone()
        },
        timeout: t.timeout,
        max_retries: t.max_retries,
        insecure_http: t.insecure_http,
        min_backoff: std::time::Duration::from_millis(200),
        max_retry_after: crate::client::MAX_RETRY_AFTER,
        max_pages: t.max_pages,
        max_response_bytes: t.max_response_bytes,
    };
    let client = crate::client::Client::new(&config)?;
    // What the target is called in plans: the local store, or the URL as it may be shown.
    let name = name.unwrap_or_else(|| client.target());
    Ok(Connection {
        client,
        name,
        _local: local,
    })
}

/// The API token from `--token`/`CFGCTL_TOKEN` or `--token-file`/`CFGCTL_TOKEN_FILE`.
pub fn resolve_token(
    token: Option<&str>,
    token_file: Option<&std::path::Path>,
) -> anyhow::Result<Option<String>> {
    if let Some(token) = token {
        return Ok(Some(token.trim().to_string()).filter(|t| !t.is_empty()));
    }
    match token_file {
        None => Ok(None),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?;
            let token = text.trim().to_string();
            if token.is_empty() {
                anyhow::bail!("the token file {} is empty", path.display());
            }
            Ok(Some(token))
        }
    }
}

/// Output format of plan and drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// Lets go of a command's large structures at its end without freeing them one by one: the
/// process exits right after the command, and the system takes the memory back at once.
/// Freeing the manifests, the target's objects and the plan one allocation at a time is
/// time on the critical path, after the last request (docs/performance.md). Only for values
/// whose drop frees memory and does nothing else, at the very end of a command.
pub(crate) fn let_go<T>(value: T) {
    std::mem::forget(value);
}

/// Frees a large value on another thread: the memory is given back while the command goes on
/// (the manifests once apply has its plan) rather than before it goes on.
pub(crate) fn free_aside<T: Send + 'static>(value: T) {
    std::thread::spawn(move || drop(value));
}

/// The commands' runtime: one thread for all their requests. Their CPU work runs elsewhere
/// (manifests and list pages on blocking threads and rayon), so a second worker only moved
/// tasks between threads (wake-ups, task switches), which cost apply CPU and wall time on a
/// small machine (docs/performance.md).
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Loads the manifests for a command that needs them all valid; problems go to stderr.
pub fn load_valid(dir: &std::path::Path) -> anyhow::Result<manifest::Loaded> {
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
pub(crate) fn load_early(dir: &std::path::Path) -> anyhow::Result<Option<manifest::Loaded>> {
    let loaded = manifest::load_dir(dir)?;
    if names_unknown_kinds(&loaded) {
        return Ok(None);
    }
    valid(loaded, dir).map(Some)
}

/// What [`load_early`] deferred, loaded now that the target's description is read.
pub(crate) async fn load_deferred(
    early: Option<manifest::Loaded>,
    dir: &std::path::Path,
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

/// The loaded manifests, or their errors printed and an error.
fn valid(loaded: manifest::Loaded, dir: &std::path::Path) -> anyhow::Result<manifest::Loaded> {
    let errors = loaded.error_count();
    if errors > 0 {
        let mut err = crate::output::stderr();
        for d in loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
        {
            let _ = writeln!(err, "{d}");
        }
        anyhow::bail!(
            "{} in the manifests under `{}`: run `cfgctl validate` for details",
            plural(errors, "error", "errors"),
            dir.display()
        );
    }
    if loaded.manifest_files == 0 {
        anyhow::bail!(
            "no manifests in `{}` (no *.yaml, *.yml or *.json files)",
            dir.display()
        );
    }
    Ok(loaded)
}

pub(crate) fn print_diagnostics(diagnostics: &[crate::diagnostic::Diagnostic]) {
    let mut err = crate::output::stderr();
    for d in diagnostics {
        let _ = writeln!(err, "{d}");
    }
}

/// Loads the manifests (on blocking threads, all cores) while connecting and reading the
/// target (on the runtime): the download hides behind the parsing. A manifest problem wins
/// over a target problem, as if the manifests had been loaded first; when the load fails, the
/// reading is abandoned.
pub(crate) async fn load_connect_fetch(
    dir: &std::path::Path,
    target: &TargetOptions,
) -> anyhow::Result<(manifest::Loaded, Connection, crate::state::Fetched)> {
    load_fetch(dir, connect(target)).await
}

/// [`load_connect_fetch`] over a connection being made (or made already).
pub(crate) async fn load_fetch(
    dir: &std::path::Path,
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
pub(crate) async fn first_with<A, B>(
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

async fn fetch(conn: &Connection) -> anyhow::Result<crate::state::Fetched> {
    crate::state::fetch(&conn.client)
        .await
        .with_context(|| format!("reading the current state of {}", conn.name))
}

/// Reads the target and plans the manifests against it; plan errors are printed located.
pub async fn plan_against(
    conn: &Connection,
    loaded: &manifest::Loaded,
    prune: bool,
    only: &[crate::pattern::Pattern],
) -> anyhow::Result<(crate::plan::Plan, crate::plan::Current)> {
    let fetched = fetch(conn).await?;
    plan_fetched(conn, loaded, fetched, prune, only)
}

/// Plans the manifests against what was read from the target; plan errors are printed located.
pub(crate) fn plan_fetched(
    conn: &Connection,
    loaded: &manifest::Loaded,
    fetched: crate::state::Fetched,
    prune: bool,
    only: &[crate::pattern::Pattern],
) -> anyhow::Result<(crate::plan::Plan, crate::plan::Current)> {
    let mut fetched = fetched;
    // What the target answered for secrets stands as the manifests' references (`secrets`).
    crate::secrets::stand_in(&loaded.manifests, &mut fetched.current)?;
    let opts = crate::plan::PlanOptions {
        target: conn.name.clone(),
        prune,
        only: only.to_vec(),
    };
    let mut plan = match crate::plan::plan(
        &loaded.manifests,
        &fetched.current,
        &fetched.caps,
        &loaded.settings,
        &opts,
    ) {
        Ok(p) => p,
        Err(mut e) => {
            loaded.locate(&mut e.0);
            print_diagnostics(&e.0);
            return Err(e.into());
        }
    };
    let mut warnings = fetched.warnings;
    warnings.append(&mut plan.warnings);
    plan.warnings = warnings;
    Ok((plan, fetched.current))
}
