//! The emulator's request log and counters (`/__emulator/stats`), by route template.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::api::wire::API_PREFIX;

/// One request as the emulator saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub query: String,
    /// The status answered; 0 for a reset connection.
    pub status: u16,
    /// The `X-Request-Id` the response carried.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    /// The client's `User-Agent`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
}

/// Request counters, by `METHOD /route/template`, and the log of API requests in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    pub total: u64,
    pub by_route: BTreeMap<String, u64>,
    pub log: Vec<RequestRecord>,
}

impl StatsSnapshot {
    /// Requests of one method whose route template is `route`.
    pub fn count(&self, method: &str, route: &str) -> u64 {
        self.by_route
            .get(&format!("{method} {route}"))
            .copied()
            .unwrap_or(0)
    }
}

/// The in-process request counter.
#[derive(Debug, Default)]
pub struct Stats(Mutex<StatsSnapshot>);

/// The request log keeps at most this many entries (counters keep counting).
pub(super) const MAX_LOG: usize = 200_000;

impl Stats {
    fn lock(&self) -> MutexGuard<'_, StatsSnapshot> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn record(&self, record: RequestRecord) {
        let mut s = self.lock();
        s.total += 1;
        *s.by_route
            .entry(format!(
                "{} {}",
                record.method,
                route_template(&record.path)
            ))
            .or_insert(0) += 1;
        if s.log.len() < MAX_LOG {
            s.log.push(record);
        }
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        self.lock().clone()
    }

    pub fn reset(&self) {
        *self.lock() = StatsSnapshot::default();
    }
}

/// `/api/v1/config/buckets/x` → `/api/v1/config/buckets/{slug}`.
pub fn route_template(path: &str) -> String {
    match path.strip_prefix(API_PREFIX) {
        Some(rest) => {
            let segments: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
            match segments.as_slice() {
                [collection, _slug] => format!("{API_PREFIX}/{collection}/{{slug}}"),
                _ => path.to_string(),
            }
        }
        None => path.to_string(),
    }
}
