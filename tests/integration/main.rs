//! The integration test binary: drives the real `cfgctl` binary (and the library where a
//! test needs its parser) against the fixture folders.

mod apply;
mod apply_scale;
mod cascade;
mod ci_examples;
mod conformance;
mod docs;
mod emulator;
mod emulator_hardening;
mod environments;
mod environments_ops;
mod export;
mod fidelity;
mod first_hour;
mod graph;
mod hostile;
mod install;
mod kinds;
mod limits;
mod memo;
mod modes;
mod plan;
mod property;
mod pull;
mod risk;
mod saved_guards;
mod schema;
mod secrets;
mod structure;
mod support;
mod traffic;
mod validate;
mod workflows;
