//! The repository's configuration: `cfgctl.yaml` (settings, environments), resource
//! patterns, and the located diagnostics every reader of the user's files reports with.

pub mod diagnostic;
pub mod environments;
pub mod pattern;
pub mod settings;
