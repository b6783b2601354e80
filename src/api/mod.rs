//! The vendor's API as cfgctl knows it: the kinds registry, the embedded description and
//! its schemas, the field semantics, the wire forms of requests and pages, and the generated
//! reference.

pub mod docs;
pub mod registry;
pub mod semantics;
pub mod spec;
pub mod wire;
