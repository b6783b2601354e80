//! cfgctl: GitOps for the Configuration Management REST API v1.
//!
//! See ARCHITECTURE.md for the code map and the invariants.
pub mod api;
pub mod apply;
pub mod cli;
pub mod config;
pub mod convert;
// Without the `emulator` feature `emulator/off.rs` stands in: `serve` and `--local` say so.
#[cfg_attr(not(feature = "emulator"), path = "emulator/off.rs")]
pub mod emulator;
pub mod manifest;
pub mod ops;
pub mod plan;
pub mod remote;
pub mod render;
pub mod util;

/// `cfgctl --version`: the package version and the commit it was built from (`build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CFGCTL_COMMIT"),
    ")"
);
