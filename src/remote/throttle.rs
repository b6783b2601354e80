//! Adaptive concurrency for a rate-limited target (docs/product.md §3, "Rate limits").
//!
//! [`Aimd`] is the pure rule, after TCP's congestion avoidance: `--parallelism` is a ceiling,
//! not a constant. Every 429 cuts the number of requests allowed in flight in half (never
//! below one); every success grows it back by `1 / ceiling`, so it climbs again by one
//! request per ceiling's worth of successes while the target keeps up.
//!
//! Why so gently: against a fast server the number in flight barely bounds the rate (each
//! answer comes back in a millisecond); what a 429 costs is its `Retry-After`, and every
//! request in flight when the tenant's budget runs out meets one. Growing by `1 / window`
//! (TCP's rule) climbed back to about nine requests within each second of a 40/s limit and
//! met nine 429s a second; `1 / ceiling` keeps it at one or two.
//!
//! [`Throttle`] shares one `Aimd` between the client, which reports every response to it, and
//! the executor, which asks it how many actions may be in flight. A 429 that carries
//! `Retry-After` also pauses every new request of the run until then: the tenant's limit is
//! the tenant's, so the other requests would only meet 429s of their own.
//!
//! The pause is kept and waited out on tokio's clock ([`now`]), so a test that pauses that
//! clock sees the same waits on any machine.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

/// The time responses are observed at: tokio's clock, which a test can pause and advance.
pub fn now() -> Instant {
    Instant::now()
}

/// Multiplicative decrease on a 429.
const DECREASE: f64 = 0.5;
/// The longest pause a `Retry-After` can impose (docs/product.md §3: honoured, capped at 60 s).
pub const MAX_PAUSE: Duration = Duration::from_secs(60);

/// The pure AIMD rule over the number of requests in flight.
#[derive(Clone, Debug, PartialEq)]
pub struct Aimd {
    ceiling: usize,
    window: f64,
    lowest: f64,
    throttled: u64,
}

/// How a run was slowed down, for the apply summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowDown {
    /// The ceiling (`--parallelism`).
    pub ceiling: usize,
    /// The fewest requests in flight it allowed.
    pub lowest: usize,
    /// What it allowed at the end.
    pub last: usize,
    /// The 429 answers met.
    pub throttled: u64,
}

impl Aimd {
    /// Starts at the ceiling (at least 1).
    pub fn new(ceiling: usize) -> Aimd {
        let ceiling = ceiling.max(1);
        Aimd {
            ceiling,
            window: ceiling as f64,
            lowest: ceiling as f64,
            throttled: 0,
        }
    }

    /// How many requests may be in flight now: from 1 to the ceiling.
    pub fn limit(&self) -> usize {
        // The window stays within [1, ceiling], so the cast cannot truncate a large value.
        (self.window.floor() as usize).clamp(1, self.ceiling)
    }

    /// The target answered 429: halve the window.
    pub fn on_throttled(&mut self) {
        self.throttled += 1;
        self.window = (self.window * DECREASE).max(1.0);
        self.lowest = self.lowest.min(self.window);
    }

    /// A request succeeded: grow by one request per `ceiling` successes.
    pub fn on_success(&mut self) {
        let ceiling = self.ceiling as f64;
        self.window = (self.window + 1.0 / ceiling).min(ceiling);
    }

    /// `None` when nothing was ever throttled.
    pub fn slow_down(&self) -> Option<SlowDown> {
        (self.throttled > 0).then(|| SlowDown {
            ceiling: self.ceiling,
            lowest: (self.lowest.floor() as usize).clamp(1, self.ceiling),
            last: self.limit(),
            throttled: self.throttled,
        })
    }
}

#[derive(Debug)]
struct State {
    aimd: Aimd,
    paused_until: Option<Instant>,
}

/// The run's shared throttle: the AIMD window and a pause until the latest `Retry-After`.
#[derive(Debug)]
pub struct Throttle(Mutex<State>);

impl Default for Throttle {
    fn default() -> Self {
        Throttle::new(usize::MAX)
    }
}

impl Throttle {
    pub fn new(ceiling: usize) -> Throttle {
        Throttle(Mutex::new(State {
            aimd: Aimd::new(ceiling),
            paused_until: None,
        }))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts over with a new ceiling (the executor's `--parallelism`).
    pub fn reset(&self, ceiling: usize) {
        let mut s = self.lock();
        s.aimd = Aimd::new(ceiling);
    }

    /// How many requests may be in flight now.
    pub fn limit(&self) -> usize {
        self.lock().aimd.limit()
    }

    /// Reports one response: a 429 (with its `Retry-After`, if any) or another status.
    /// Only 429 and successes move the window: a 4xx says nothing about the rate.
    pub fn observe(&self, status: u16, retry_after: Option<Duration>, now: Instant) {
        let mut s = self.lock();
        if status == 429 {
            s.aimd.on_throttled();
            if let Some(d) = retry_after {
                let until = now + d.min(MAX_PAUSE);
                s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
            }
        } else if (200..300).contains(&status) {
            s.aimd.on_success();
        }
    }

    /// How long a new request must wait for the pause a `Retry-After` asked for.
    pub fn wait_needed(&self, now: Instant) -> Option<Duration> {
        self.lock()
            .paused_until
            .and_then(|until| until.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    /// Waits out the pause, if there is one.
    pub async fn ready(&self) {
        while let Some(d) = self.wait_needed(now()) {
            tokio::time::sleep(d).await;
        }
    }

    pub fn slow_down(&self) -> Option<SlowDown> {
        self.lock().aimd.slow_down()
    }
}

impl std::fmt::Display for SlowDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the target rate-limited {} {} (429): cfgctl slowed down from {} requests in flight to {} ({} at the end)",
            self.throttled,
            if self.throttled == 1 { "request" } else { "requests" },
            self.ceiling,
            self.lowest,
            self.last
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_the_ceiling_and_halves_on_429() {
        let mut a = Aimd::new(32);
        assert_eq!(a.limit(), 32);
        assert_eq!(a.slow_down(), None);
        a.on_throttled();
        assert_eq!(a.limit(), 16);
        a.on_throttled();
        a.on_throttled();
        assert_eq!(a.limit(), 4);
        for _ in 0..10 {
            a.on_throttled();
        }
        assert_eq!(a.limit(), 1, "never below one request");
        assert_eq!(
            a.slow_down(),
            Some(SlowDown {
                ceiling: 32,
                lowest: 1,
                last: 1,
                throttled: 13
            })
        );
    }

    #[test]
    fn grows_back_by_one_per_ceiling_of_successes_up_to_the_ceiling() {
        let mut a = Aimd::new(8);
        for _ in 0..3 {
            a.on_throttled();
        }
        assert_eq!(a.limit(), 1);
        for _ in 0..7 {
            a.on_success();
        }
        assert_eq!(a.limit(), 1, "7 successes are not yet 8");
        a.on_success();
        assert_eq!(a.limit(), 2);
        for _ in 0..8 {
            a.on_success();
        }
        assert_eq!(a.limit(), 3);
        for _ in 0..1000 {
            a.on_success();
        }
        assert_eq!(a.limit(), 8, "never above the ceiling");
        let s = a.slow_down().unwrap();
        assert_eq!((s.lowest, s.last, s.throttled), (1, 8, 3));
    }

    #[test]
    fn a_zero_ceiling_is_one() {
        let mut a = Aimd::new(0);
        assert_eq!(a.limit(), 1);
        a.on_success();
        assert_eq!(a.limit(), 1);
    }

    #[test]
    fn retry_after_pauses_every_request_until_the_latest() {
        let t = Throttle::new(4);
        let now = Instant::now();
        assert_eq!(t.wait_needed(now), None);
        t.observe(429, Some(Duration::from_secs(2)), now);
        t.observe(429, Some(Duration::from_secs(1)), now);
        assert_eq!(t.wait_needed(now), Some(Duration::from_secs(2)));
        assert_eq!(
            t.wait_needed(now + Duration::from_secs(1)),
            Some(Duration::from_secs(1))
        );
        assert_eq!(t.wait_needed(now + Duration::from_secs(2)), None);
        // A server asking for a day gets the cap.
        t.observe(429, Some(Duration::from_secs(86_400)), now);
        assert_eq!(t.wait_needed(now), Some(MAX_PAUSE));
        let now = now + MAX_PAUSE;
        assert_eq!(t.limit(), 1);
        // Other errors do not move the window; successes do.
        t.observe(400, None, now);
        t.observe(503, None, now);
        assert_eq!(t.limit(), 1);
        for _ in 0..4 {
            t.observe(200, None, now);
        }
        assert_eq!(t.limit(), 2);
        t.reset(3);
        assert_eq!(t.limit(), 3);
        assert_eq!(t.slow_down(), None);
    }

    #[test]
    fn slow_down_in_words() {
        let s = SlowDown {
            ceiling: 32,
            lowest: 1,
            last: 4,
            throttled: 12,
        };
        assert_eq!(
            s.to_string(),
            "the target rate-limited 12 requests (429): cfgctl slowed down from 32 requests in flight to 1 (4 at the end)"
        );
    }
}
