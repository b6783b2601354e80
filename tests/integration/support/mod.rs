//! What the integration tests share, in one place: the emulator as a `Tenant`, the `Cfgctl`
//! builder that runs the binary, fixture copies and file helpers, and `cfgctl_snapshot!`.

pub mod files;
pub mod run;
pub mod snapshot;
pub mod tenant;
pub mod wire;

use std::path::PathBuf;

pub use files::{copy_dir, read, scratch_copy, write};
pub use run::{Cfgctl, Run};
// The free functions the tests used before `Cfgctl`: tests on other branches still call them.
#[allow(unused_imports)]
pub use run::{cfgctl, cfgctl_in, run, run_in};
pub(crate) use snapshot::cfgctl_snapshot;
pub use tenant::{fixture_objects, seeded, Reply, Tenant};

/// The repository root (where `fixtures/` is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
