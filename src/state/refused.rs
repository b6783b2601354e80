//! A kind whose list the target refuses: its answer kept for the planner (`plan::refused`).

use super::{ClientError, Kind, KindRead};

/// The answer of a target that refuses a kind's list (403, 404 or 501: a tenant without that
/// product area, or an older target whose description could not be read): the kind is not read,
/// and the planner decides whether the plan needs it (`plan::refused`). Any other failure
/// ends the reading.
fn refusal(e: &ClientError) -> Option<String> {
    match e.status() {
        Some(403 | 404 | 501) => Some(crate::output::Inert(e).to_string()),
        _ => None,
    }
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
