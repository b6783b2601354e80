//! cfgctl: GitOps for the Configuration Management REST API v1.
pub mod registry;
pub mod yaml;
pub mod spec;
