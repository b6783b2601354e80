//! `cfgctl serve`: a local emulator of the Config API v1.
//!
//! One axum router serves every kind through two generic handlers (collection path and item
//! path); the kind comes from the path segment through the registry, the operation from
//! [`wire::route_op`], the rules from [`api::Api`]. Around them: request log and counters,
//! token check, fault injection, a 4 MiB body limit and JSON errors everywhere.
//! `/__emulator/stats` (not in the swagger file) exposes the counters to tests.

pub mod api;
mod config;
pub mod faults;
pub mod idle;
mod layers;
pub mod query;
pub mod ratelimit;
pub mod stats;
pub mod store;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::{self};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use serde_json::Value;

use crate::api::registry::{Kind, Op, Profile};
use crate::api::wire::{self, ErrorBody, ListQuery, API_PREFIX, SWAGGER_PATH, TOKEN_HEADER};
use api::{Api, ApiError};
pub use config::Config;
use faults::{Fault, Faults};
pub use layers::REQUEST_ID_HEADER;
use layers::{check_token, inject_faults, rate_limit, record};
pub use stats::{route_template, RequestRecord, Stats, StatsSnapshot};
use store::{Store, StoreError};

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Path of the request counters.
pub const STATS_PATH: &str = "/__emulator/stats";

/// Why the emulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot read the API description {path}")]
    SwaggerRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} cannot be served as the API description")]
    Swagger {
        path: PathBuf,
        #[source]
        source: crate::api::spec::DescriptionError,
    },
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// Shared state of the router.
pub struct AppState {
    api: Mutex<Api>,
    token: Option<String>,
    profile: Profile,
    faults: Faults,
    /// The fault draws, in the order requests reach them (seeded by `seed:N`).
    fault_rng: Mutex<fastrand::Rng>,
    stats: Arc<Stats>,
    swagger: String,
    /// The served swagger, parsed: what query parameters are checked against.
    swagger_doc: Value,
    /// The tenant's `--rate-limit` bucket.
    bucket: Option<Mutex<ratelimit::TokenBucket>>,
}

impl AppState {
    pub fn new(config: &Config) -> Result<Arc<AppState>, EmulatorError> {
        let store = Store::open(config.data.as_deref())?;
        let description = match &config.swagger {
            None => Arc::clone(crate::api::spec::Description::shared_embedded()),
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| EmulatorError::SwaggerRead {
                        path: path.clone(),
                        source,
                    })?;
                let description =
                    crate::api::spec::Description::from_json(&text).map_err(|source| {
                        EmulatorError::Swagger {
                            path: path.clone(),
                            source,
                        }
                    })?;
                Arc::new(description)
            }
        };
        let swagger = description.for_profile(config.profile).to_string();
        let swagger_doc: Value = serde_json::from_str(&swagger).unwrap_or(Value::Null);
        Ok(Arc::new(AppState {
            api: Mutex::new({
                let mut api = Api::new(
                    store,
                    config.page_size.max(1),
                    description,
                    config.server_defaults,
                )
                .with_max_page_size(config.max_page_size);
                api.redact_secrets = config.redact_secrets;
                api
            }),
            token: config.token.clone().filter(|t| !t.is_empty()),
            profile: config.profile,
            faults: config.faults.clone(),
            fault_rng: Mutex::new(config.faults.rng()),
            stats: Arc::new(Stats::default()),
            swagger,
            swagger_doc,
            bucket: config
                .rate_limit
                .map(|n| Mutex::new(ratelimit::TokenBucket::new(n, ratelimit::now()))),
        }))
    }

    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    fn api(&self) -> MutexGuard<'_, Api> {
        self.api.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn error_response(status: StatusCode, message: impl Into<String>, code: Option<i32>) -> Response {
    let body = ErrorBody {
        message: message.into(),
        code,
    };
    (status, axum::Json(body)).into_response()
}

fn api_error_response(e: &ApiError) -> Response {
    if let ApiError::Store(inner) = e {
        tracing::error!(error = %inner, source = ?std::error::Error::source(inner), "store failure");
    }
    error_response(
        StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        e.client_message(),
        Some(e.code()),
    )
}

/// A 200 answer of JSON text, written whole into one buffer (not `axum::Json`'s many small
/// writes into a growing one).
fn json_response(body: Vec<u8>) -> Response {
    let json = HeaderValue::from_static("application/json");
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, json)],
        body,
    )
        .into_response()
}

/// An answer's JSON text (a `Value` or a page always serialises).
fn written(answer: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(answer).unwrap_or_default()
}

/// The router of the emulator over its state.
pub fn app(state: Arc<AppState>) -> Router {
    let api = Router::new()
        .route(SWAGGER_PATH, get(swagger))
        .route(&format!("{API_PREFIX}/{{collection}}"), any(collection))
        .route(&format!("{API_PREFIX}/{{collection}}/{{slug}}"), any(item))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            inject_faults,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            check_token,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            rate_limit,
        ))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), record));
    Router::new()
        .route(STATS_PATH, get(stats_get).delete(stats_reset))
        // The counters reveal what a tenant holds: the same token as the API.
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            check_token,
        ))
        .merge(api)
        .with_state(state)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        format!("no route for {method} {}", uri.path()),
        Some(5),
    )
}

async fn swagger(State(state): State<Arc<AppState>>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        state.swagger.clone(),
    )
        .into_response()
}

async fn stats_get(State(state): State<Arc<AppState>>) -> Response {
    json_response(written(&state.stats.snapshot()))
}

async fn stats_reset(State(state): State<Arc<AppState>>) -> Response {
    state.stats.reset();
    json_response(b"{}".to_vec())
}

async fn read_json(body: Body) -> Result<Value, Response> {
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body is larger than {} MiB", MAX_BODY_BYTES >> 20),
                Some(3),
            )
        })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        error_response(
            StatusCode::BAD_REQUEST,
            format!("malformed JSON in request body: {e}"),
            Some(3),
        )
    })
}

async fn collection(
    State(state): State<Arc<AppState>>,
    Path(collection): Path<String>,
    method: Method,
    RawQuery(query): RawQuery,
    body: Body,
) -> Response {
    dispatch(
        &state,
        &collection,
        None,
        method,
        query.unwrap_or_default(),
        body,
    )
    .await
}

async fn item(
    State(state): State<Arc<AppState>>,
    Path((collection, slug)): Path<(String, String)>,
    method: Method,
    RawQuery(query): RawQuery,
    body: Body,
) -> Response {
    dispatch(
        &state,
        &collection,
        Some(slug),
        method,
        query.unwrap_or_default(),
        body,
    )
    .await
}

async fn dispatch(
    state: &AppState,
    collection: &str,
    slug: Option<String>,
    method: Method,
    query: String,
    body: Body,
) -> Response {
    let Some(kind) = wire::kind_for_path(collection) else {
        return error_response(
            StatusCode::NOT_FOUND,
            format!("no resource collection \"{collection}\""),
            Some(5),
        );
    };
    let def = kind.def();
    let Some(op) = wire::route_op(def, method.as_str(), slug.is_some()) else {
        let mut r = error_response(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method {method} is not allowed here"),
            Some(12),
        );
        // RFC 9110: a 405 lists the methods the path has.
        let allowed: Vec<&str> = ["GET", "POST", "PUT", "DELETE"]
            .into_iter()
            .filter(|m| wire::route_op(def, m, slug.is_some()).is_some())
            .collect();
        if let Ok(v) = HeaderValue::from_str(&allowed.join(", ")) {
            r.headers_mut().insert(axum::http::header::ALLOW, v);
        }
        return r;
    };
    if !def.ops(state.profile).has(op) {
        return error_response(
            StatusCode::NOT_FOUND,
            format!(
                "{} is not available on this tenant",
                wire::operation_id(kind, op)
            ),
            Some(12),
        );
    }
    if let Err(message) = query::check(&state.swagger_doc, kind, op, &query) {
        return error_response(StatusCode::BAD_REQUEST, message, Some(3));
    }
    let body = match op {
        Op::Create | Op::Update => match read_json(body).await {
            Ok(v) => Some(v),
            Err(r) => return r,
        },
        _ => None,
    };
    let result = run(state, kind, op, slug.as_deref(), &query, body.as_ref());
    match result {
        Ok(value) => json_response(value),
        Err(e) => api_error_response(&e),
    }
}

fn run(
    state: &AppState,
    kind: Kind,
    op: Op,
    slug: Option<&str>,
    query: &str,
    body: Option<&Value>,
) -> Result<Vec<u8>, ApiError> {
    let null = Value::Null;
    let body = body.unwrap_or(&null);
    let mut api = state.api();
    let value = match op {
        Op::List => {
            // A page of a thousand dashboards is megabytes: written into room made for it
            // at once, not grown (and copied) a doubling at a time.
            return api.list(kind, query).map(|page| {
                let mut text = Vec::with_capacity(page.len_hint());
                // A page always serialises.
                let _ = serde_json::to_writer(&mut text, &page);
                text
            });
        }
        Op::Read => api.read(kind, slug),
        Op::Create => api.create(kind, body, &api::now()),
        Op::Update => api.update(kind, slug, body, &api::now()),
        Op::Delete => {
            let q = ListQuery::parse(query).map_err(ApiError::BadRequest)?;
            api.delete(kind, slug, &q)
        }
    }?;
    Ok(written(&value))
}

/// A running emulator; stopped when dropped.
pub struct Emulator {
    addr: SocketAddr,
    stats: Arc<Stats>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Emulator {
    /// Starts the emulator on `listen` (port 0 picks a free port) in the current runtime.
    pub async fn start(config: &Config, listen: SocketAddr) -> Result<Emulator, EmulatorError> {
        Emulator::start_with_idle_timeout(config, listen, idle::DEFAULT_IDLE_TIMEOUT).await
    }

    /// [`Emulator::start`], closing connections silent for `idle` (tests use a short one).
    pub async fn start_with_idle_timeout(
        config: &Config,
        listen: SocketAddr,
        idle: std::time::Duration,
    ) -> Result<Emulator, EmulatorError> {
        let state = AppState::new(config)?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|source| EmulatorError::Bind {
                addr: listen,
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| EmulatorError::Bind {
                addr: listen,
                source,
            })?;
        let stats = state.stats();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let router = app(state);
        let task = tokio::spawn(async move {
            let listener = idle::IdleListener::new(listener, idle);
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
            if let Err(e) = served {
                tracing::error!(error = %e, "emulator stopped");
            }
        });
        Ok(Emulator {
            addr,
            stats,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    pub fn reset_stats(&self) {
        self.stats.reset();
    }

    /// Stops accepting, finishes the requests in flight, and waits for the server to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::layers::same_secret;
    use super::*;

    #[test]
    fn route_templates() {
        assert_eq!(
            route_template("/api/v1/config/buckets/platform"),
            "/api/v1/config/buckets/{slug}"
        );
        assert_eq!(
            route_template("/api/v1/config/buckets"),
            "/api/v1/config/buckets"
        );
        assert_eq!(route_template("/other"), "/other");
    }

    #[test]
    fn secrets_compare_in_full() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
    }
}
