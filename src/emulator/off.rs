//! The emulator in a build without the `emulator` feature (no axum, no SQLite): its settings
//! and fault parser are the same, and starting it fails saying which feature is missing, so
//! `cfgctl serve` and `--local` end with that one line (exit 1).

mod config;
pub mod faults;

pub use config::Config;

/// Why the emulator could not start: this build has none.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error("this cfgctl is built without the emulator (cargo feature `emulator`), which `serve` and `--local` need")]
    NotBuilt,
}

/// An emulator this build never runs (no value of it exists).
pub struct Emulator {
    never: std::convert::Infallible,
}

impl Emulator {
    /// Fails: see [`EmulatorError::NotBuilt`].
    pub async fn start(
        _config: &Config,
        _listen: std::net::SocketAddr,
    ) -> Result<Emulator, EmulatorError> {
        Err(EmulatorError::NotBuilt)
    }

    pub fn url(&self) -> String {
        match self.never {}
    }

    pub async fn stop(self) {
        match self.never {}
    }
}
