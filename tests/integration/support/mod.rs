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

/// Standard base64 without padding, written here apart from cfgctl's own so that the tests
/// that feed it to cfgctl's redaction do not share its encoder.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..=c.len() {
            out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}
