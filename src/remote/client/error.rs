//! What went wrong talking to the target (`ClientError`), what the server said about it
//! (`ServerReply`, with its code and request id), and how each is put in words.

use std::time::Duration;

use reqwest::Method;

use super::MIB;
use crate::api::registry::{Address, Kind};
use crate::api::wire;

/// What went wrong talking to the target. Never holds the token.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid target URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("the target URL has no scheme: did you mean {suggested}?")]
    NoScheme { suggested: String },
    #[error("the target URL holds the API's path (`/api/...`): give the tenant's address alone, --url {base}")]
    ApiPath { base: String },
    #[error("refusing plain http to {host}, which is not this machine: the API token and the tenant's configuration would cross the network unencrypted; use https, or pass --insecure-http")]
    InsecureHttp { host: String },
    #[error("{method} {path}{}: {status} {reply}{}", context(.resource), credentials.map(|c| format!("; {c}")).unwrap_or_default())]
    Status {
        method: Method,
        path: String,
        resource: Option<Address>,
        status: u16,
        /// The server's message, code and request id (boxed: errors stay small).
        reply: Box<ServerReply>,
        retry_after: Option<Duration>,
        /// On a 401: whether a token was sent (the server's message rarely says).
        credentials: Option<Credentials>,
    },
    #[error("{method} {path}{}: {reason}", context(.resource))]
    Transport {
        method: Method,
        path: String,
        resource: Option<Address>,
        reason: String,
    },
    #[error(
        "{method} {path}: cannot connect to {url}: {detail}; is the tenant's URL right (--url)?"
    )]
    Unreachable {
        method: Method,
        path: String,
        /// The base URL, as it may be shown.
        url: String,
        detail: String,
    },
    #[error("{method} {path}: unexpected response: {reason}")]
    BadResponse {
        method: Method,
        path: String,
        reason: String,
    },
    #[error("{method} {path}{}: {}", context(.resource), too_large(.list, .declared, *.limit))]
    TooLarge {
        method: Method,
        path: String,
        resource: Option<Address>,
        /// The kind, when the answer was a page of its list.
        list: Option<Kind>,
        /// The size the answer announced (`Content-Length`), when it did.
        declared: Option<u64>,
        limit: u64,
    },
    #[error("cannot build the HTTP client: {0}")]
    Setup(String),
    #[error("{method} {}: {}; no request was sent", .address.kind, crate::api::wire::unusable_segment_reason(.slug))]
    UnusableSlug {
        method: Method,
        address: Address,
        slug: String,
    },
}

/// What a 401 means for this run: the server's message is the same for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Credentials {
    #[error("the target requires a token: none was given (--token, CFGCTL_TOKEN or --token-file)")]
    NoneGiven,
    #[error("the target refused the token")]
    Refused,
}

fn too_large(list: &Option<Kind>, declared: &Option<u64>, limit: u64) -> String {
    let subject = list.map_or("the answer".to_string(), |k| format!("the {k} list page"));
    let limit = if limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else {
        format!("{limit} bytes")
    };
    match declared {
        Some(n) => format!(
            "{subject} announces {n} bytes, more than the limit of {limit} (--max-response-mb); none of it was read"
        ),
        None => format!(
            "{subject} is larger than the limit of {limit} (--max-response-mb); reading stopped there"
        ),
    }
}

fn context(resource: &Option<Address>) -> String {
    resource
        .as_ref()
        .map(|a| format!(" ({a})"))
        .unwrap_or_default()
}

/// What the server said about a failure: its `message` (or the start of its body), the error
/// body's `code` kept with it (the gateway's gRPC code), and the response's `X-Request-Id` (or
/// the vendor's `Chrono-Request-Id`), which a support engineer needs to find the request.
/// Shown as `message (code 3, request id abc)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerReply {
    pub message: String,
    pub code: Option<i32>,
    pub request_id: Option<String>,
}

impl std::fmt::Display for ServerReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        match (&self.code, &self.request_id) {
            (None, None) => Ok(()),
            (Some(c), None) => write!(f, " (code {c})"),
            (None, Some(r)) => write!(f, " (request id {r})"),
            (Some(c), Some(r)) => write!(f, " (code {c}, request id {r})"),
        }
    }
}

/// The headers that carry a request id, in order of preference.
pub const REQUEST_ID_HEADERS: [&str; 2] = ["x-request-id", "chrono-request-id"];

/// The request id a response carries, printable (at most 128 visible ASCII characters).
pub fn request_id(headers: &reqwest::header::HeaderMap) -> Option<String> {
    REQUEST_ID_HEADERS.iter().find_map(|name| {
        let v = headers.get(*name)?.to_str().ok()?.trim();
        let ok = !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| v.to_string())
    })
}

impl ClientError {
    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The server's message, when it answered with an error.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            ClientError::Status { reply, .. } => Some(&reply.message),
            _ => None,
        }
    }

    /// The server's message with its code and request id, as printed (`message (code 3,
    /// request id abc)`), when it answered with an error.
    pub fn server_reply(&self) -> Option<&ServerReply> {
        match self {
            ClientError::Status { reply, .. } => Some(reply),
            _ => None,
        }
    }

    /// The response's request id, when the server sent one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            ClientError::Status { reply, .. } => reply.request_id.as_deref(),
            _ => None,
        }
    }

    /// The error body's `code`, when it had one.
    pub fn code(&self) -> Option<i32> {
        match self {
            ClientError::Status { reply, .. } => reply.code,
            _ => None,
        }
    }

    /// The error of a request for a page of `kind`'s list, said as such.
    pub(crate) fn listing(mut self, kind: Kind) -> ClientError {
        if let ClientError::TooLarge { list, .. } = &mut self {
            *list = Some(kind);
        }
        self
    }

    pub(super) fn retryable(&self) -> bool {
        match self {
            ClientError::Status { status, .. } => wire::is_retryable_status(*status),
            ClientError::Transport { .. } => true,
            _ => false,
        }
    }
}
