//! Fault injection for tests and demos: `--faults 500:0.05,503:0.05,429:0.02,reset:0.01,latency:20ms`.
//!
//! Each request first waits the latency, then draws once: with the listed probabilities it is
//! answered with that status (429 with `Retry-After`) or its connection is reset, before the
//! operation runs; or (`lost`) the operation runs and its response is lost, the case that
//! tests that a retried create never makes a second resource.
//!
//! `403:SEGMENT` (or 404, 501) answers that status to every request under
//! `/api/v1/config/SEGMENT`, as a tenant without that product area does
//! (`403:log-scale-actions`).
//!
//! `seed:N` makes the draws reproducible: the emulator draws from one generator seeded with N,
//! so the same requests in the same order meet the same faults (tests use it; without a seed
//! every run draws differently).

use std::time::Duration;

/// A parsed fault specification.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    /// Injected statuses and their probabilities.
    pub statuses: Vec<(u16, f64)>,
    /// Probability of a reset connection before the operation runs.
    pub reset: f64,
    /// Probability that the operation runs and its response is lost (connection reset).
    pub lost: f64,
    /// Added to every request.
    pub latency: Duration,
    /// Seed of the draws (`seed:N`); fresh entropy when absent.
    pub seed: Option<u64>,
    /// Collection path segments refused with a status (`403:log-scale-actions`).
    pub refused: Vec<(u16, String)>,
}

/// What to do with one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Status(u16),
    Reset,
    /// The operation runs; the response never arrives.
    Lost,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultSpecError {
    #[error("fault `{0}` is not NAME:VALUE (for example 500:0.05, reset:0.01, latency:20ms)")]
    Malformed(String),
    #[error("fault `{0}`: the probability must be a number from 0 to 1")]
    Probability(String),
    #[error("fault `{0}`: the status must be 429 or a 5xx status (or 403, 404, 501 with a path segment: 403:log-scale-actions)")]
    Status(String),
    #[error("fault `{0}`: latency is a duration such as 20ms or 1s")]
    Latency(String),
    #[error("fault `{0}`: the seed is a whole number such as 7")]
    Seed(String),
    #[error("the fault probabilities add up to {0}, more than 1")]
    Total(String),
}

impl Faults {
    pub fn parse(spec: &str) -> Result<Faults, FaultSpecError> {
        let mut faults = Faults::default();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once(':')
                .ok_or_else(|| FaultSpecError::Malformed(part.to_string()))?;
            let probability = || {
                value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| FaultSpecError::Probability(part.to_string()))
            };
            match name.trim() {
                "reset" => faults.reset = probability()?,
                "lost" => faults.lost = probability()?,
                "seed" => {
                    faults.seed = Some(
                        value
                            .trim()
                            .parse()
                            .map_err(|_| FaultSpecError::Seed(part.to_string()))?,
                    )
                }
                "latency" => {
                    faults.latency = humantime::parse_duration(value.trim())
                        .map_err(|_| FaultSpecError::Latency(part.to_string()))?
                }
                status => {
                    let code: u16 = status
                        .parse()
                        .map_err(|_| FaultSpecError::Malformed(part.to_string()))?;
                    let segment = value.trim();
                    if matches!(code, 403 | 404 | 501)
                        && !segment.is_empty()
                        && segment
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
                    {
                        faults.refused.push((code, segment.to_string()));
                        continue;
                    }
                    if code != 429 && !(500..600).contains(&code) {
                        return Err(FaultSpecError::Status(part.to_string()));
                    }
                    faults.statuses.push((code, probability()?));
                }
            }
        }
        let total: f64 =
            faults.reset + faults.lost + faults.statuses.iter().map(|(_, p)| p).sum::<f64>();
        if total > 1.0 + 1e-9 {
            return Err(FaultSpecError::Total(format!("{total}")));
        }
        Ok(faults)
    }

    /// The status a request to `path` is refused with (`403:SEGMENT`), if any.
    pub fn refusal(&self, path: &str) -> Option<u16> {
        let rest = path.strip_prefix("/api/v1/config/")?;
        let segment = rest.split('/').next().unwrap_or_default();
        self.refused
            .iter()
            .find(|(_, s)| s == segment)
            .map(|(status, _)| *status)
    }

    /// The fault for a draw `x` in [0, 1).
    pub fn pick(&self, x: f64) -> Option<Fault> {
        let mut edge = 0.0;
        for &(status, p) in &self.statuses {
            edge += p;
            if x < edge {
                return Some(Fault::Status(status));
            }
        }
        edge += self.reset;
        if x < edge {
            return Some(Fault::Reset);
        }
        edge += self.lost;
        (x < edge).then_some(Fault::Lost)
    }

    /// The generator the draws come from: seeded by `seed:N`, else from fresh entropy.
    pub fn rng(&self) -> fastrand::Rng {
        match self.seed {
            Some(seed) => fastrand::Rng::with_seed(seed),
            None => fastrand::Rng::new(),
        }
    }

    /// Draws the fault for one request from `rng` (see [`Faults::rng`]).
    pub fn draw(&self, rng: &mut fastrand::Rng) -> Option<Fault> {
        self.pick(rng.f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let f = Faults::parse("500:0.05,503:0.05,429:0.02,reset:0.01,latency:20ms").unwrap();
        assert_eq!(f.statuses, vec![(500, 0.05), (503, 0.05), (429, 0.02)]);
        assert_eq!(f.reset, 0.01);
        assert_eq!(f.latency, Duration::from_millis(20));
        assert_eq!(f.seed, None);
    }

    #[test]
    fn a_seed_makes_the_draws_reproducible() {
        let f = Faults::parse("500:0.3,reset:0.2,seed:7").unwrap();
        assert_eq!(f.seed, Some(7));
        let draws = |f: &Faults| {
            let mut rng = f.rng();
            (0..64).map(|_| f.draw(&mut rng)).collect::<Vec<_>>()
        };
        let first = draws(&f);
        assert_eq!(first, draws(&f));
        // Not a constant: both faults and clean answers come up.
        assert!(first.contains(&Some(Fault::Status(500))), "{first:?}");
        assert!(first.contains(&Some(Fault::Reset)), "{first:?}");
        assert!(first.contains(&None), "{first:?}");
        let other = Faults::parse("500:0.3,reset:0.2,seed:8").unwrap();
        assert_ne!(first, draws(&other));
    }

    #[test]
    fn picks_by_cumulative_probability() {
        let f = Faults::parse("500:0.1,429:0.1,reset:0.1,lost:0.1").unwrap();
        assert_eq!(f.pick(0.05), Some(Fault::Status(500)));
        assert_eq!(f.pick(0.15), Some(Fault::Status(429)));
        assert_eq!(f.pick(0.25), Some(Fault::Reset));
        assert_eq!(f.pick(0.35), Some(Fault::Lost));
        assert_eq!(f.pick(0.45), None);
    }

    #[test]
    fn refuses_bad_specs() {
        assert_eq!(
            Faults::parse("404:0.1").unwrap_err(),
            FaultSpecError::Status("404:0.1".into())
        );
        assert!(matches!(
            Faults::parse("500:2"),
            Err(FaultSpecError::Probability(_))
        ));
        assert!(matches!(
            Faults::parse("latency:soon"),
            Err(FaultSpecError::Latency(_))
        ));
        assert!(matches!(
            Faults::parse("500"),
            Err(FaultSpecError::Malformed(_))
        ));
        assert_eq!(
            Faults::parse("seed:-1").unwrap_err(),
            FaultSpecError::Seed("seed:-1".into())
        );
        assert!(matches!(
            Faults::parse("500:0.6,503:0.6"),
            Err(FaultSpecError::Total(_))
        ));
    }
}
