//! How the emulator is set up: what `cfgctl serve`'s options and `--local` make, in every
//! build (the `emulator` feature or not).

use std::path::PathBuf;

use super::faults::Faults;
use crate::api::registry::Profile;

/// Largest page the emulator returns, whatever the client prefers.
pub const MAX_PAGE_SIZE: u64 = 1000;

/// How the emulator is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// SQLite file; in memory when absent.
    pub data: Option<PathBuf>,
    /// The API token every request must carry; none checked when absent.
    pub token: Option<String>,
    pub profile: Profile,
    /// Page size when a list states none.
    pub page_size: u64,
    /// The largest page served, whatever `page.max_size` asks for (at most 1000).
    pub max_page_size: u64,
    pub faults: Faults,
    /// Fill documented defaults a write leaves out (a real tenant does).
    pub server_defaults: bool,
    /// Answer secrets `**REDACTED**` (a current tenant does; `false`: in clear).
    pub redact_secrets: bool,
    /// Serve this API description instead of the embedded one.
    pub swagger: Option<PathBuf>,
    /// At most this many API requests a second (`--rate-limit`); unlimited when absent.
    pub rate_limit: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data: None,
            token: None,
            profile: Profile::Full,
            page_size: 100,
            max_page_size: MAX_PAGE_SIZE,
            faults: Faults::default(),
            server_defaults: true,
            redact_secrets: true,
            swagger: None,
            rate_limit: None,
        }
    }
}
