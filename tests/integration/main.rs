//! The integration test binary: drives the real `cfgctl` binary (and the library where a
//! test needs its parser) against the fixture folders.

mod apply;
mod ci_examples;
mod docs;
mod emulator;
mod emulator_hardening;
mod export;
mod hostile;
mod plan;
mod property;
mod schema;
mod support;
mod validate;
