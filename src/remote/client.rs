//! The one generic API client: every kind through the same few functions, driven by the
//! registry and the shared wire format.
//!
//! Transport rules: rustls only; the `API-Token` header is marked sensitive and is never put in
//! an error, a log line or a URL; plain http is refused for a non-loopback host unless
//! `--insecure-http`; a redirect is followed only to the same scheme, host and port.
//! 429, 500, 502, 503, 504 and transport failures are retried with exponential backoff and
//! full jitter (backon), honouring `Retry-After`, up to `max_retries` times.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use reqwest::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use crate::api::registry::{Address, Kind};
use crate::api::wire::{self, ErrorBody};

mod body;
mod error;
mod list;
mod url;
pub use body::Swagger;
use body::{serialise, Answer};
pub use error::{request_id, ClientError, Credentials, ServerReply, REQUEST_ID_HEADERS};
pub use list::ListError;
pub use url::{is_loopback_host, parse_base_url, request_url};

/// How to reach a target.
#[derive(Clone)]
pub struct ClientConfig {
    pub base_url: String,
    pub token: Option<String>,
    pub timeout: Duration,
    pub max_retries: u32,
    pub insecure_http: bool,
    /// First retry delay (doubled per attempt, capped at 10 s, then full jitter).
    pub min_backoff: Duration,
    /// The longest wait a `Retry-After` can ask for (docs/product.md §3: 60 s; tests use less).
    pub max_retry_after: Duration,
    /// Pages one list walk may take before it is an error (`--max-pages`).
    pub max_pages: usize,
    /// The largest body an answer may have, in bytes (`--max-response-mb`): a larger one is
    /// refused while it is read, never held whole.
    pub max_response_bytes: u64,
}

/// The cap on a server's `Retry-After`.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Default of `--max-pages`.
pub const DEFAULT_MAX_PAGES: usize = 100_000;
/// Default of `--max-response-mb`: a list page of 1,000 large dashboards is a few MiB; a body
/// past this is a broken or hostile server, not a tenant (reading a body takes several times
/// its size in memory).
pub const DEFAULT_MAX_RESPONSE_MB: u64 = 64;
pub(crate) const MIB: u64 = 1 << 20;

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("base_url", &self.base_url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

impl ClientConfig {
    pub fn new(base_url: impl Into<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into(),
            token: None,
            timeout: Duration::from_secs(30),
            max_retries: 5,
            insecure_http: false,
            min_backoff: Duration::from_millis(200),
            max_retry_after: MAX_RETRY_AFTER,
            max_pages: DEFAULT_MAX_PAGES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_MB * MIB,
        }
    }
}

/// The delay before retry number `attempt` (from 0): exponential, capped, full jitter, or the
/// server's `Retry-After` when it gave one, at most `max_retry_after` (a server asking for
/// 999999999 s does not stop the run; the retry still counts against `--max-retries`).
/// `draw` is in [0, 1).
pub fn retry_delay(
    computed: Duration,
    retry_after: Option<Duration>,
    draw: f64,
    max_retry_after: Duration,
) -> Duration {
    match retry_after {
        Some(d) => d.min(max_retry_after),
        None => computed.mul_f64(draw.clamp(0.0, 1.0)),
    }
}

pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: Option<HeaderValue>,
    max_retries: u32,
    min_backoff: Duration,
    /// Adaptive concurrency and `Retry-After` pauses, shared with the executor.
    throttle: std::sync::Arc<crate::remote::throttle::Throttle>,
    max_retry_after: Duration,
    max_pages: usize,
    max_response: u64,
    /// Whether the target has answered once: until it has, a connection it refuses is most
    /// likely a wrong URL, said at once rather than retried.
    answered: std::sync::atomic::AtomicBool,
    /// One request's time limit, and whether a retry after a transport error (a timeout, a
    /// connection lost) was said: the first is a warning, the rest are not.
    timeout: Duration,
    retry_said: std::sync::atomic::AtomicBool,
}

impl Client {
    pub fn new(config: &ClientConfig) -> Result<Client, ClientError> {
        let base = parse_base_url(&config.base_url, config.insecure_http)?;
        let origin = base.origin();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                attempt.error("too many redirects")
            } else if attempt.url().origin() != origin {
                attempt
                    .error("redirect to another host refused (the API token stays with the target)")
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::Client::builder()
            .use_rustls_tls()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .redirect(policy)
            .user_agent(concat!("cfgctl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::Setup(e.to_string()))?;
        let token = match &config.token {
            Some(t) => {
                let mut v = HeaderValue::from_str(t).map_err(|_| {
                    ClientError::Setup("the API token has characters a header cannot carry".into())
                })?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        Ok(Client {
            http,
            base,
            token,
            max_retries: config.max_retries,
            min_backoff: config.min_backoff,
            throttle: Default::default(),
            max_retry_after: config.max_retry_after,
            max_pages: config.max_pages.max(1),
            max_response: config.max_response_bytes.max(1),
            answered: std::sync::atomic::AtomicBool::new(false),
            timeout: config.timeout,
            retry_said: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The throttle every response is reported to (the executor reads its window).
    pub fn throttle(&self) -> &crate::remote::throttle::Throttle {
        &self.throttle
    }

    /// The target's base URL, as shown to users and written into saved plans: without user
    /// info, query or fragment (a secret can ride there), no trailing slash.
    pub fn target(&self) -> String {
        crate::util::output::display_url(self.base.as_str())
    }

    async fn attempt<A: Answer>(
        &self,
        method: &Method,
        path: &str,
        query: &str,
        body: Option<&bytes::Bytes>,
        resource: &Option<Address>,
    ) -> Result<A, ClientError> {
        let url = request_url(&self.base, path, query);
        let mut req = self.http.request(method.clone(), url);
        if let Some(t) = &self.token {
            req = req.header(wire::TOKEN_HEADER, t.clone());
        }
        if let Some(b) = body {
            // What `RequestBuilder::json` sends, from bytes serialised once for every attempt
            // (shared, not copied, by each).
            req = req
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(b.clone());
        }
        let transport = |e: reqwest::Error| ClientError::Transport {
            method: method.clone(),
            path: path.to_string(),
            resource: resource.clone(),
            reason: transport_reason(&e),
        };
        self.throttle.ready().await;
        let started = std::time::Instant::now();
        let resp = req.send().await.map_err(|e| {
            self.unreachable(method, path, &e)
                .unwrap_or_else(|| transport(e))
        })?;
        self.answered
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let status = resp.status();
        tracing::debug!(
            %method,
            path,
            query,
            status = status.as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "response"
        );
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|secs| Duration::from_secs(secs).min(self.max_retry_after));
        self.throttle
            .observe(status.as_u16(), retry_after, crate::remote::throttle::now());
        if status.is_success() && is_html(resp.headers()) {
            return Err(ClientError::BadResponse {
                method: method.clone(),
                path: path.to_string(),
                reason: "the answer is an HTML page (Content-Type: text/html), not the API's \
                         JSON: a proxy or a sign-in page in front of the API? Check --url"
                    .into(),
            });
        }
        let request_id = request_id(resp.headers());
        let not_json = |e: serde_json::Error| ClientError::BadResponse {
            method: method.clone(),
            path: path.to_string(),
            reason: format!("body is not JSON ({e})"),
        };
        let too_large = |declared| ClientError::TooLarge {
            method: method.clone(),
            path: path.to_string(),
            resource: resource.clone(),
            list: None,
            declared,
            limit: self.max_response,
        };
        let chunks = body::read_capped(resp, self.max_response)
            .await
            .map_err(|e| match e {
                body::Capped::TooLarge { declared } => too_large(declared),
                body::Capped::Transport(e) => transport(e),
            })?;
        if status.is_success() && A::CHUNKED {
            return A::from_chunks(chunks).map_err(not_json);
        }
        let bytes = body::join(chunks);
        if status.is_success() {
            if bytes.is_empty() {
                return Ok(A::empty());
            }
            return A::from_body(bytes).map_err(not_json);
        }
        let (message, code) = error_reply(status, &bytes);
        Err(ClientError::Status {
            method: method.clone(),
            path: path.to_string(),
            resource: resource.clone(),
            status: status.as_u16(),
            reply: Box::new(ServerReply {
                message,
                code,
                request_id,
            }),
            retry_after,
            credentials: (status == StatusCode::UNAUTHORIZED).then_some(match self.token {
                Some(_) => Credentials::Refused,
                None => Credentials::NoneGiven,
            }),
        })
    }

    /// One API call with retries; the JSON body of the success.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        query: &str,
        body: Option<&Value>,
        resource: Option<Address>,
    ) -> Result<Value, ClientError> {
        let body = body.map(|b| serialise(&method, path, b)).transpose()?;
        self.call_with(method, path, query, body.as_ref(), resource)
            .await
    }

    /// One API call with retries, its body already serialised (once, for every attempt); the
    /// success read as `A`.
    async fn call_with<A: Answer>(
        &self,
        method: Method,
        path: &str,
        query: &str,
        body: Option<&bytes::Bytes>,
        resource: Option<Address>,
    ) -> Result<A, ClientError> {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.min_backoff)
            .with_max_delay(Duration::from_secs(10))
            .with_factor(2.0)
            .with_max_times(usize::try_from(self.max_retries).unwrap_or(usize::MAX));
        let run = || self.attempt(&method, path, query, body, &resource);
        run.retry(backoff)
            .sleep(tokio::time::sleep)
            .when(ClientError::retryable)
            .adjust(|e, computed| {
                let retry_after = match e {
                    ClientError::Status { retry_after, .. } => *retry_after,
                    _ => None,
                };
                computed.map(|d| retry_delay(d, retry_after, fastrand::f64(), self.max_retry_after))
            })
            .notify(|e, delay| {
                tracing::debug!(error = %e, delay_ms = delay.as_millis() as u64, "retrying");
                self.say_first_retry(e);
            })
            .await
    }

    /// The first retry after a transport error, as a warning: a target that takes connections
    /// and never answers would otherwise be minutes of silence (every request waiting
    /// `--timeout`, `--max-retries` times). A status the API retries (429, 5xx) is routine
    /// under load and stays in the debug log.
    fn say_first_retry(&self, e: &ClientError) {
        use std::sync::atomic::Ordering;
        if matches!(e, ClientError::Transport { .. })
            && !self.retry_said.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "{e}; retrying (each request waits up to --timeout {} s and is tried again up to --max-retries {} times; further retries are not reported)",
                self.timeout.as_secs(),
                self.max_retries
            );
        }
    }

    /// The target's self-description (not read when it is the embedded one as served).
    pub async fn swagger(&self) -> Result<Swagger, ClientError> {
        self.call_with(Method::GET, wire::SWAGGER_PATH, "", None, None)
            .await
    }

    /// One resource, or `None` when the target has no such resource (404).
    pub async fn read(&self, kind: Kind, slug: Option<&str>) -> Result<Option<Value>, ClientError> {
        usable(&Method::GET, kind, slug)?;
        let address = Address::new(kind, slug.map(str::to_string));
        let path = wire::item_path(kind, slug);
        match self.call(Method::GET, &path, "", None, Some(address)).await {
            Ok(body) => Ok(wire::parse_one_response(kind, &body)),
            Err(e) if e.status() == Some(StatusCode::NOT_FOUND.as_u16()) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// POST; the created object (None for a dry run).
    pub async fn create(
        &self,
        kind: Kind,
        object: &Value,
        commit: wire::Commit,
    ) -> Result<Option<Value>, ClientError> {
        let resp: Value = self.post(kind, object, commit).await?;
        Ok(wire::parse_one_response(kind, &resp))
    }

    /// PUT the full object; the updated object (None for a dry run).
    pub async fn update(
        &self,
        kind: Kind,
        slug: Option<&str>,
        object: &Value,
        if_missing: wire::IfMissing,
        commit: wire::Commit,
    ) -> Result<Option<Value>, ClientError> {
        let resp: Value = self.put(kind, slug, object, if_missing, commit).await?;
        Ok(wire::parse_one_response(kind, &resp))
    }

    /// DELETE; `force_delete=true` only when asked and the kind has it.
    pub async fn delete(
        &self,
        kind: Kind,
        slug: Option<&str>,
        cascade: wire::Cascade,
    ) -> Result<(), ClientError> {
        usable(&Method::DELETE, kind, slug)?;
        let address = Address::new(kind, slug.map(str::to_string));
        let query = wire::delete_query(kind, cascade);
        self.call(
            Method::DELETE,
            &wire::item_path(kind, slug),
            &query,
            None,
            Some(address),
        )
        .await
        .map(|_| ())
    }
}

/// The message and code of an error answer: its `ErrorBody`; a body of another shape that
/// still has a `message` (a string `code`, say), read for it whole; else the text itself,
/// redacted whole before it is cut to 200 characters (a cut inside a secret the server echoed
/// would leave a prefix of it that no longer matches it), the cut marked.
fn error_reply(status: reqwest::StatusCode, bytes: &[u8]) -> (String, Option<i32>) {
    if let Ok(b) = serde_json::from_slice::<ErrorBody>(bytes) {
        return (b.message, b.code);
    }
    let lenient = serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| v.get("message")?.as_str().map(str::to_string));
    if let Some(message) = lenient {
        return (message, None);
    }
    let whole = String::from_utf8_lossy(bytes);
    let whole = crate::util::output::redact(&whole);
    let mut text: String = whole.chars().take(200).collect();
    if text.len() < whole.len() {
        text.push('…');
    }
    let message = if text.trim().is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text.trim().to_string()
    };
    (message, None)
}

/// Refuses a slug that would not stay one path segment (`.`, `..`, empty): the URL would name
/// the collection or the API root instead of the resource.
fn usable(method: &Method, kind: Kind, slug: Option<&str>) -> Result<(), ClientError> {
    match slug {
        Some(s) if !kind.def().singleton && !wire::is_usable_segment(s) => {
            Err(ClientError::UnusableSlug {
                method: method.clone(),
                address: Address::new(kind, Some(s.to_string())),
                slug: s.to_string(),
            })
        }
        _ => Ok(()),
    }
}

/// A transport failure in words, without the URL's query (reqwest's own text is kept short).
impl Client {
    /// A connection that fails before the target has ever answered: the URL tried, and where
    /// to look. `None` once the target has answered (a refusal then is passing, and retried).
    fn unreachable(&self, method: &Method, path: &str, e: &reqwest::Error) -> Option<ClientError> {
        if !e.is_connect() || self.answered.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let detail = deepest_source(e);
        let detail = if detail.contains("refused") {
            "nothing answers there".to_string()
        } else {
            detail
        };
        Some(ClientError::Unreachable {
            method: method.clone(),
            path: path.to_string(),
            url: self.target(),
            detail,
        })
    }
}

/// The innermost cause of a request's error (the operating system's words).
fn deepest_source(e: &reqwest::Error) -> String {
    let mut source = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    detail
}

/// Whether an answer says it is an HTML page (what a proxy or a sign-in page in front of the
/// API answers with a 200), which no answer of the API is.
fn is_html(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"))
}

fn transport_reason(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_redirect() {
        "redirect refused"
    } else if e.is_body() || e.is_decode() {
        "connection lost while reading the response"
    } else {
        "request failed"
    };
    let detail = deepest_source(e);
    if detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}

#[cfg(test)]
mod tests;
