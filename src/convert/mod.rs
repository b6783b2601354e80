//! Manifests written for the user: `export` (the target's state as new manifests),
//! `pull` (the target's changes back into existing manifests) and `import` (Prometheus and
//! Grafana files as manifests).

pub mod export;
pub mod import;
pub mod pull;
