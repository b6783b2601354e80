//! A kind whose list the target refuses: its answer kept for the planner (`plan::refused`).

use super::{ClientError, Kind, KindRead};

/// The answer of a target that refuses a kind's list (403, 404 or 501: a tenant without that
/// product area, or an older target whose description could not be read): the kind is not read,
/// and the planner decides whether the plan needs it (`plan::refused`). Any other failure
/// ends the reading.
fn refusal(e: &ClientError) -> Option<String> {
    let status = e.status().filter(|s| matches!(s, 403 | 404 | 501))?;
    // The status and the server's message: no request id, so that the note reads the same
    // from one run to the next (a pull-request comment does not churn).
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or_default();
    let answer = match e.server_message().map(str::trim).filter(|m| !m.is_empty()) {
        Some(message) => format!("{status} {reason}: {message}"),
        None => format!("{status} {reason}"),
    };
    Some(crate::util::output::Inert(answer).to_string())
}

/// A refused kind's reading, hashed by its status alone (a message may carry a request id).
pub(super) fn refused(
    kind: Kind,
    e: &ClientError,
    mut hash: blake3::Hasher,
) -> Option<(Kind, KindRead, blake3::Hash)> {
    let answer = refusal(e)?;
    hash.update(b"refused");
    hash.update(&e.status().unwrap_or_default().to_le_bytes());
    tracing::info!(kind = kind.name(), answer = %answer, "the target refused this kind's list");
    Some((kind, KindRead::Refused(answer), hash.finalize()))
}
