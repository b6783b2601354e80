//! `--rate-limit N`: at most N requests a second per tenant, as a token bucket.
//!
//! The bucket holds at most N tokens (one second's worth, the burst a tenant allows) and
//! refills at N a second. A request takes a token or is answered 429 with `Retry-After`: the
//! whole seconds until a token is back (at least 1). A refused request takes nothing.
//! Pure: the caller passes the time, so the tests need no clock. The middleware passes
//! [`now`], tokio's clock: a test that pauses it (`tokio::time::pause`, `start_paused`)
//! decides when the bucket refills, whatever the machine's speed.

use std::time::Duration;

use tokio::time::Instant;

/// The time the bucket is read at: tokio's clock, which a test can pause and advance.
pub fn now() -> Instant {
    Instant::now()
}

#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `per_second` tokens (at least 1).
    pub fn new(per_second: u32, now: Instant) -> TokenBucket {
        let rate = f64::from(per_second.max(1));
        TokenBucket {
            rate,
            tokens: rate,
            last: now,
        }
    }

    /// Takes a token, or says how long until one is back.
    pub fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate);
        self.last = self.last.max(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / self.rate))
        }
    }
}

/// `Retry-After` in whole seconds (the header has no fractions), at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_n_then_n_a_second() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(4, t0);
        for _ in 0..4 {
            assert_eq!(b.take(t0), Ok(()));
        }
        let wait = b.take(t0).unwrap_err();
        assert_eq!(wait, Duration::from_millis(250));
        // A refused request took nothing: a quarter second later there is exactly one.
        let later = t0 + Duration::from_millis(250);
        assert_eq!(b.take(later), Ok(()));
        assert!(b.take(later).is_err());
        // Idle for long: never more than one second's worth.
        let idle = later + Duration::from_secs(60);
        for _ in 0..4 {
            assert_eq!(b.take(idle), Ok(()));
        }
        assert!(b.take(idle).is_err());
    }

    #[test]
    fn time_going_backwards_is_no_refill() {
        let t0 = Instant::now() + Duration::from_secs(5);
        let mut b = TokenBucket::new(1, t0);
        assert_eq!(b.take(t0), Ok(()));
        assert!(b.take(t0 - Duration::from_secs(2)).is_err());
        assert!(b.take(t0).is_err());
    }

    #[test]
    fn retry_after_is_whole_seconds_at_least_one() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(25)), 1);
        assert_eq!(retry_after_secs(Duration::from_secs(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(3)), 3);
    }
}
