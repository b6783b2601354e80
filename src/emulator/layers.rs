//! The middleware in front of the API: the request log, the rate limit, the token check and
//! fault injection.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::*;

/// The header that carries the id of every response.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Logs and counts every API request (the path and the user agent: never the token), and
/// gives every response an `X-Request-Id`, as a real tenant does.
pub(super) async fn record(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    let user_agent = req
        .headers()
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let request_id = format!("{:016x}", fastrand::u64(..));
    let started = Instant::now();
    let mut response = next.run(req).await;
    let reset = response.extensions().get::<ResetMarker>().is_some();
    let status = if reset { 0 } else { response.status().as_u16() };
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    tracing::info!(
        target: "cfgctl::emulator",
        %method,
        %path,
        status,
        request_id = %request_id,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "request"
    );
    state.stats.record(RequestRecord {
        method,
        path,
        query,
        status,
        request_id,
        user_agent,
    });
    response
}

/// `--rate-limit N`: a token from the tenant's bucket, or 429 with `Retry-After`.
pub(super) async fn rate_limit(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(bucket) = &state.bucket {
        let taken = bucket
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(ratelimit::now());
        if let Err(wait) = taken {
            let mut r = error_response(
                StatusCode::TOO_MANY_REQUESTS,
                "rate limit exceeded: too many requests for this tenant",
                Some(8),
            );
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                HeaderValue::from(ratelimit::retry_after_secs(wait)),
            );
            return r;
        }
    }
    next.run(req).await
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from timings.
pub(super) fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(super) async fn check_token(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(expected) = &state.token {
        if req.uri().path() != SWAGGER_PATH {
            let given = req
                .headers()
                .get(TOKEN_HEADER)
                .map(HeaderValue::as_bytes)
                .unwrap_or_default();
            if !same_secret(given, expected.as_bytes()) {
                return error_response(
                    StatusCode::UNAUTHORIZED,
                    "missing or invalid API token (header API-Token)",
                    Some(16),
                );
            }
        }
    }
    next.run(req).await
}

#[derive(Clone, Copy)]
pub(super) struct ResetMarker;

pub(super) async fn inject_faults(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let faults = &state.faults;
    if let Some(status) = faults.refusal(req.uri().path()) {
        return error_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN),
            "this tenant does not have this product area (refused by --faults)",
            Some(7),
        );
    }
    if !faults.latency.is_zero() {
        tokio::time::sleep(faults.latency).await;
    }
    let drawn = {
        let mut rng = state.fault_rng.lock().unwrap_or_else(|e| e.into_inner());
        faults.draw(&mut rng)
    };
    match drawn {
        None => next.run(req).await,
        Some(Fault::Status(429)) => {
            let mut r = error_response(
                StatusCode::TOO_MANY_REQUESTS,
                "rate limit exceeded (injected)",
                Some(8),
            );
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                HeaderValue::from_static("1"),
            );
            r
        }
        Some(Fault::Status(status)) => error_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            format!("injected failure {status}"),
            Some(14),
        ),
        Some(Fault::Reset) => reset_response(),
        Some(Fault::Lost) => {
            let _ = next.run(req).await;
            reset_response()
        }
    }
}

/// A response whose body fails after the headers: the server closes the connection and the
/// client sees the exchange cut short.
pub(super) fn reset_response() -> Response {
    let stream = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "injected connection reset",
        ))
    });
    let mut r = Response::new(Body::from_stream(stream));
    r.extensions_mut().insert(ResetMarker);
    r
}
