//! cfgctl: GitOps for the Configuration Management REST API v1.
//!
//! See ARCHITECTURE.md for the code map and the invariants.
pub mod apply;
pub mod cli;
pub mod client;
pub mod commands;
pub mod diagnostic;
pub mod docs;
pub mod drift;
pub mod emulator;
pub mod environments;
pub mod export;
pub mod file_ref;
pub mod import;
pub mod json_string;
pub mod jsonpath;
pub mod manifest;
pub mod memo;
pub mod ops;
pub mod output;
pub mod pattern;
pub mod plan;
pub mod policy;
pub mod promql;
pub mod pull;
pub mod registry;
pub mod render;
pub mod safe_write;
pub mod secrets;
pub mod semantics;
pub mod settings;
pub mod spec;
pub mod state;
#[cfg(test)]
mod test_support;
pub mod throttle;
pub mod wire;
pub mod yaml;

/// `cfgctl --version`: the package version and the commit it was built from (`build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CFGCTL_COMMIT"),
    ")"
);
