//! The options of the commands that talk to a target (`--url`, `--token`, `--local`, ...) and of
//! the plan cache. They are written before the command (`cfgctl --url U plan`, the grammar of
//! docs/product.md §4, which scripts use) or after it (`cfgctl plan --url U`), but only the
//! commands that take them show and accept them after their name: `validate`, `schema` and
//! `completions` do not list them, and `serve` refuses them. A value given on the command line,
//! wherever, wins over one from the environment.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

/// Where the target is and how to talk to it.
#[derive(Clone, Debug, Args)]
#[command(next_help_heading = "Target options")]
pub struct TargetArgs {
    /// Base URL of the tenant's API (https://tenant.example.com).
    #[arg(long, env = "CFGCTL_URL", hide_env_values = true, value_name = "URL")]
    pub url: Option<String>,
    /// API token, sent in the API-Token header. Prefer CFGCTL_TOKEN or --token-file.
    #[arg(
        long,
        env = "CFGCTL_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// Read the API token from this file.
    #[arg(
        long,
        env = "CFGCTL_TOKEN_FILE",
        hide_env_values = true,
        value_name = "PATH"
    )]
    pub token_file: Option<PathBuf>,
    /// Use the embedded local tenant: an in-process emulator over the store at PATH
    /// (default .cfgctl/local.db). Wins over CFGCTL_URL.
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true, default_missing_value = ".cfgctl/local.db")]
    pub local: Option<PathBuf>,
    /// Maximum number of API calls in flight.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub parallelism: usize,
    /// Retries of a request that failed with 429, 5xx or a connection error.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub max_retries: u32,
    /// Timeout of one request, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    /// Allow plain http to a non-loopback host (the token would cross the network unencrypted).
    #[arg(long)]
    pub insecure_http: bool,
    /// Pages one list may take before the run stops with an error (a list that never ends).
    #[arg(long, default_value_t = crate::remote::client::DEFAULT_MAX_PAGES, value_name = "N")]
    pub max_pages: usize,
    /// The largest answer read from the target, in MiB: a larger one (a list page, anything)
    /// is refused while it arrives.
    #[arg(long, default_value_t = crate::remote::client::DEFAULT_MAX_RESPONSE_MB, value_name = "MIB")]
    pub max_response_mb: u64,
}

/// The no-change plan cache of `plan` and `drift`.
#[derive(Clone, Debug, Args)]
#[command(next_help_heading = "Plan cache options")]
pub struct CacheArgs {
    /// Where plan and drift remember no-change plans (default $XDG_CACHE_HOME/cfgctl, else
    /// ~/.cache/cfgctl).
    #[arg(
        long,
        env = "CFGCTL_CACHE_DIR",
        hide_env_values = true,
        value_name = "PATH"
    )]
    pub cache_dir: Option<PathBuf>,
    /// Neither use nor write the plan cache: every plan is made in full.
    #[arg(long, env = "CFGCTL_NO_CACHE", hide_env_values = true, value_parser = clap::builder::BoolishValueParser::new())]
    pub no_cache: bool,
}

/// The target flags a command line gave before the command's name (the environment and the
/// defaults do not count): `serve` refuses them.
pub const TARGET_IDS: [&str; 10] = [
    "url",
    "token",
    "token_file",
    "local",
    "parallelism",
    "max_retries",
    "timeout",
    "insecure_http",
    "max_pages",
    "max_response_mb",
];

/// Whether `id` was written on the command line (not taken from the environment or a default).
pub fn given(m: &ArgMatches, id: &str) -> bool {
    m.try_get_raw(id).is_ok() && m.value_source(id) == Some(ValueSource::CommandLine)
}

/// `field` from before the command's name when it was written there and not after it.
macro_rules! take_written {
    ($own:ident, $before:ident, $own_m:ident, $before_m:ident, $($field:ident),+) => {
        $(
            if !given($own_m, stringify!($field)) && given($before_m, stringify!($field)) {
                $own.$field = $before.$field.clone();
            }
        )+
    };
}

impl TargetArgs {
    /// The options of a command (`self`, parsed from after its name, `own`) with what was
    /// written before its name (`before`, `before_m`): a flag written after the name wins,
    /// then one written before it, then the environment, then the default. A `--local` written
    /// anywhere wins over a `CFGCTL_URL` from the environment (`--url` and `--local` both
    /// written stay two targets, refused when connecting).
    pub fn merge(&mut self, own: &ArgMatches, before: &TargetArgs, before_m: &ArgMatches) {
        take_written!(
            self,
            before,
            own,
            before_m,
            url,
            token,
            token_file,
            local,
            parallelism,
            max_retries,
            timeout,
            insecure_http,
            max_pages,
            max_response_mb
        );
        let written = |id| given(own, id) || given(before_m, id);
        if self.local.is_some() && !written("url") {
            self.url = None;
        }
    }
}

impl CacheArgs {
    /// The plan cache's directory, or `None` when it is off (or there is nowhere to put it).
    pub fn dir(&self) -> Option<PathBuf> {
        crate::ops::memo::cache_dir(self.cache_dir.as_deref(), self.no_cache)
    }

    /// Where the user's secret that seals saved plans lives, whether or not the plan cache is
    /// used.
    pub fn secret_dir(&self) -> Option<PathBuf> {
        crate::ops::memo::cache_dir(self.cache_dir.as_deref(), false)
    }

    /// As [`TargetArgs::merge`].
    pub fn merge(&mut self, own: &ArgMatches, before: &CacheArgs, before_m: &ArgMatches) {
        take_written!(self, before, own, before_m, cache_dir, no_cache);
    }
}
