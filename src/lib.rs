//! cfgctl: GitOps for the Configuration Management REST API v1.
//!
//! See ARCHITECTURE.md for the code map and the invariants.
pub mod apply;
pub mod cli;
pub mod client;
pub mod commands;
pub mod diagnostic;
pub mod docs;
pub mod emulator;
pub mod export;
pub mod manifest;
pub mod output;
pub mod pattern;
pub mod plan;
pub mod registry;
pub mod render;
pub mod settings;
pub mod spec;
pub mod state;
pub mod wire;
pub mod yaml;
