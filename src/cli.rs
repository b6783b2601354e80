//! The command line: clap types, and their resolution into the per-command options the
//! library takes. Architecture invariant: clap types stop here; no other module sees them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;

/// GitOps for the Configuration Management API v1: validate, plan and apply YAML manifests.
#[derive(Debug, Parser)]
#[command(name = "cfgctl", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 success, 1 error (invalid input, unreachable target, failed action), 2 changes present (plan --detailed-exitcode, drift)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command accepts.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Base URL of the tenant's API (https://tenant.example.com).
    #[arg(long, global = true, env = "CFGCTL_URL", value_name = "URL")]
    pub url: Option<String>,
    /// API token, sent in the API-Token header. Prefer CFGCTL_TOKEN or --token-file.
    #[arg(
        long,
        global = true,
        env = "CFGCTL_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// Read the API token from this file.
    #[arg(long, global = true, env = "CFGCTL_TOKEN_FILE", value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Use the embedded local tenant (an in-process emulator over the store at PATH).
    #[arg(long, global = true, value_name = "PATH", num_args = 0..=1, require_equals = true, default_missing_value = ".cfgctl/local.db")]
    pub local: Option<PathBuf>,
    /// Maximum number of API calls in flight.
    #[arg(long, global = true, default_value_t = 8, value_name = "N")]
    pub parallelism: usize,
    /// Retries of a request that failed with 429, 5xx or a connection error.
    #[arg(long, global = true, default_value_t = 5, value_name = "N")]
    pub max_retries: u32,
    /// Timeout of one request, in seconds.
    #[arg(long, global = true, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    /// When to colour output (NO_COLOR is honoured by `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// More log output (-v, -vv).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Format of log lines on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Allow plain http to a non-loopback host (the token would cross the network unencrypted).
    #[arg(long, global = true)]
    pub insecure_http: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check manifests offline: syntax, schema, duplicates, references.
    ///
    /// Prints `file:line:col: error: message` for every problem (and GitHub annotations when
    /// GITHUB_ACTIONS=true). Exit 0 when there is no error, 1 otherwise.
    Validate {
        /// Directory of manifests.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Print the JSON Schema of manifests, for editors (yaml-language-server).
    Schema,
}

/// Parses the command line and runs it; the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors are input errors: exit 1
            // (2 means "changes present" to CI jobs).
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let choice = match cli.global.color {
        ColorArg::Auto => anstream::ColorChoice::Auto,
        ColorArg::Always => anstream::ColorChoice::Always,
        ColorArg::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    match cli.command {
        Command::Validate { dir } => commands::validate(&commands::ValidateOptions {
            dir,
            github_annotations: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
            quiet: cli.global.quiet,
        }),
        Command::Schema => commands::schema(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn local_defaults_to_the_project_store() {
        let cli = Cli::try_parse_from(["cfgctl", "--local", "validate"]).unwrap();
        assert_eq!(cli.global.local, Some(PathBuf::from(".cfgctl/local.db")));
        let cli = Cli::try_parse_from(["cfgctl", "validate", "--local=x.db"]).unwrap();
        assert_eq!(cli.global.local, Some(PathBuf::from("x.db")));
    }
}
