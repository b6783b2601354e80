//! A target: its settings as the command line resolved them, the connection to it (a
//! `--url`, or the in-process `--local` tenant), the API token and the seal key of saved plans.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Where the commands that need a tenant send their requests, and how.
#[derive(Debug, Clone)]
pub struct TargetSettings {
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
    pub client: crate::remote::client::Client,
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
        None => crate::ops::memo::user_secret(cache?).map(|s| blake3::derive_key(USER, &s)),
    }
}

/// Connects to `--url` or starts the `--local` tenant.
pub async fn connect(t: &TargetSettings) -> anyhow::Result<Connection> {
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
    let config = crate::remote::client::ClientConfig {
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
        max_retry_after: crate::remote::client::MAX_RETRY_AFTER,
        max_pages: t.max_pages,
        max_response_bytes: t.max_response_bytes,
    };
    let client = crate::remote::client::Client::new(&config)?;
    // What the target is called in plans: the local store, or the URL as it may be shown.
    let name = name.unwrap_or_else(|| client.target());
    Ok(Connection {
        client,
        name,
        _local: local,
    })
}

/// Everything the target holds, read in full (no manifests to expect).
pub async fn fetch(conn: &Connection) -> anyhow::Result<crate::remote::state::Fetched> {
    crate::remote::state::fetch(&conn.client)
        .await
        .with_context(|| format!("reading the current state of {}", conn.name))
}

/// The API token from `--token`/`CFGCTL_TOKEN` or `--token-file`/`CFGCTL_TOKEN_FILE`.
pub fn resolve_token(
    token: Option<&str>,
    token_file: Option<&Path>,
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
