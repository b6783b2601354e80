//! The command line: clap types, and their resolution into the per-command options the
//! library takes. Architecture invariant: clap types stop here; no other module sees them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;
use crate::emulator::faults::Faults;
use crate::pattern::Pattern;
use crate::registry::Profile;

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
    /// Use the embedded local tenant: an in-process emulator over the store at PATH
    /// (default .cfgctl/local.db).
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
    /// Show what apply would change: create, update, delete, in dependency order.
    ///
    /// Reads the target's lists only (one request per page). Exit 0, or with
    /// --detailed-exitcode 2 when there are changes; 1 on any error.
    Plan {
        /// Directory of manifests.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Output format: text for people, json for machines, markdown for PR comments.
        #[arg(long, value_enum, default_value_t = FormatArg::Text)]
        format: FormatArg,
        /// Exit 2 when the plan has changes (upserts excepted), 0 when it has none.
        #[arg(long)]
        detailed_exitcode: bool,
        /// Also write the plan, with fingerprints of the current state, for `apply FILE`.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Delete resources inside the `prune` patterns of cfgctl.yaml that no manifest declares.
        #[arg(long)]
        prune: bool,
        /// Send every create and update with dry_run, so the server's own validation runs.
        #[arg(long)]
        server_validate: bool,
        /// Only resources matching KIND/SLUG-GLOB (repeatable).
        #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
        only: Vec<Pattern>,
    },
    /// Make the target match the manifests (or apply a saved plan), in dependency order.
    ///
    /// Shows the plan, asks for confirmation on a terminal (--auto-approve otherwise), then
    /// runs the actions concurrently (--parallelism). Exit 0 only when every action succeeded.
    Apply {
        /// Directory of manifests, or a plan file written by `plan --out`.
        #[arg(default_value = ".", value_name = "DIR|PLANFILE")]
        source: PathBuf,
        /// Do not ask for confirmation (needed without a terminal).
        #[arg(long)]
        auto_approve: bool,
        /// Delete resources inside the `prune` patterns of cfgctl.yaml that no manifest declares.
        #[arg(long)]
        prune: bool,
        /// Allow a prune that deletes every resource of a kind no manifest declares.
        #[arg(long)]
        allow_empty_prune: bool,
        /// Send force_delete=true on bucket deletes (cascades to what references the bucket).
        #[arg(long)]
        force_delete_buckets: bool,
        /// Only resources matching KIND/SLUG-GLOB (repeatable).
        #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
        only: Vec<Pattern>,
    },
    /// Report whether the target still matches the manifests (for cron jobs).
    ///
    /// Exit 2 on drift (managed changes, or unmanaged resources inside the prune scope),
    /// 0 when the target matches, 1 on any error.
    Drift {
        /// Directory of manifests.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = FormatArg::Text)]
        format: FormatArg,
    },
    /// Write the target's current state as manifests, one file per resource.
    ///
    /// `plan OUT` right after shows no changes. Refuses a non-empty OUT without --force; with
    /// it, the manifests of an earlier export there are replaced (other files are kept).
    Export {
        /// Folder to write (`<kind>/<slug>.yaml`, `resource-pools.yaml`).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Replace an earlier export in a non-empty folder.
        #[arg(long)]
        force: bool,
        /// Only resources matching KIND/SLUG-GLOB (repeatable).
        #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
        only: Vec<Pattern>,
    },
    /// Print the JSON Schema of manifests, for editors (yaml-language-server).
    Schema,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Run a local emulator of the Config API v1 (every kind, with the server's habits).
    ///
    /// The API token is the global --token / CFGCTL_TOKEN / --token-file: when one is given,
    /// every request must carry it in the API-Token header. The listening URL is printed on
    /// stdout; the request log goes to stderr. Stop with Ctrl-C.
    Serve {
        /// Address to listen on (port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// SQLite file of the emulated tenant (created if missing); in memory when absent.
        #[arg(long, value_name = "FILE")]
        data: Option<PathBuf>,
        /// Which operations the tenant offers: every operation, or the seed tenant's subset.
        #[arg(long, value_enum, default_value_t = ProfileArg::Full)]
        profile: ProfileArg,
        /// Items per list page when the client states no page.max_size (at most 1000).
        #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
        page_size: u64,
        /// Inject failures, e.g. 500:0.05,503:0.05,429:0.02,reset:0.01,latency:20ms (lost:P runs the operation, then drops the response)
        #[arg(long, value_name = "SPEC", value_parser = parse_faults)]
        faults: Option<Faults>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    Markdown,
}

impl From<FormatArg> for commands::Format {
    fn from(f: FormatArg) -> commands::Format {
        match f {
            FormatArg::Text => commands::Format::Text,
            FormatArg::Json => commands::Format::Json,
            FormatArg::Markdown => commands::Format::Markdown,
        }
    }
}

fn parse_pattern(text: &str) -> Result<Pattern, String> {
    Pattern::parse(text).map_err(|e| e.to_string())
}

/// The target options every networked command shares.
fn target_options(global: &GlobalArgs) -> anyhow::Result<commands::TargetOptions> {
    Ok(commands::TargetOptions {
        url: global.url.clone().filter(|u| !u.trim().is_empty()),
        token: resolve_token(global)?,
        local: global.local.clone(),
        timeout: std::time::Duration::from_secs(global.timeout.max(1)),
        max_retries: global.max_retries,
        insecure_http: global.insecure_http,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// Every operation of every kind.
    Full,
    /// The operations of the seed tenant only.
    Seed,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Full => Profile::Full,
            ProfileArg::Seed => Profile::Seed,
        }
    }
}

fn parse_faults(spec: &str) -> Result<Faults, String> {
    Faults::parse(spec).map_err(|e| e.to_string())
}

/// The API token from `--token`/`CFGCTL_TOKEN` or `--token-file`/`CFGCTL_TOKEN_FILE`.
fn resolve_token(global: &GlobalArgs) -> anyhow::Result<Option<String>> {
    if let Some(token) = &global.token {
        return Ok(Some(token.trim().to_string()).filter(|t| !t.is_empty()));
    }
    match &global.token_file {
        None => Ok(None),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?;
            let token = text.trim().to_string();
            if token.is_empty() {
                anyhow::bail!("the token file {} is empty", path.display());
            }
            Ok(Some(token))
        }
    }
}

/// Sets up the log on stderr: warnings by default (info for `serve`, whose request log is
/// its output), more with -v, only errors with -q. `CFGCTL_LOG` overrides with a filter.
fn init_logging(global: &GlobalArgs, default_info: bool) {
    let level = match (global.quiet, global.verbose, default_info) {
        (true, _, _) => "error",
        (false, 0, false) => "warn",
        (false, 0, true) | (false, 1, _) => "info",
        (false, 2, _) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CFGCTL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("cfgctl={level},warn")));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(
            anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never,
        );
    let _ = match global.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
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
            // A reader that went away (`cfgctl plan | head`) is not worth a message.
            let broken_pipe = err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if !broken_pipe {
                eprintln!("error: {err:#}");
            }
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
    init_logging(&cli.global, matches!(cli.command, Command::Serve { .. }));
    match cli.command {
        Command::Validate { dir } => commands::validate(&commands::ValidateOptions {
            dir,
            github_annotations: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
            quiet: cli.global.quiet,
        }),
        Command::Plan {
            dir,
            format,
            detailed_exitcode,
            out,
            prune,
            server_validate,
            only,
        } => commands::plan(commands::PlanCommand {
            dir,
            format: format.into(),
            detailed_exitcode,
            out,
            prune,
            server_validate,
            only,
            drift: false,
            verbose: cli.global.verbose > 0,
            target: target_options(&cli.global)?,
        }),
        Command::Apply {
            source,
            auto_approve,
            prune,
            allow_empty_prune,
            force_delete_buckets,
            only,
        } => commands::apply(commands::ApplyCommand {
            source,
            auto_approve,
            prune,
            allow_empty_prune,
            force_delete_buckets,
            only,
            parallelism: cli.global.parallelism.max(1),
            verbose: cli.global.verbose > 0,
            target: target_options(&cli.global)?,
        }),
        Command::Drift { dir, format } => commands::plan(commands::PlanCommand {
            dir,
            format: format.into(),
            detailed_exitcode: true,
            out: None,
            prune: false,
            server_validate: false,
            only: vec![],
            drift: true,
            verbose: cli.global.verbose > 0,
            target: target_options(&cli.global)?,
        }),
        Command::Schema => commands::schema(),
        Command::Export { out, force, only } => commands::export(commands::ExportCommand {
            out,
            force,
            only,
            target: target_options(&cli.global)?,
        }),
        Command::Completions { shell } => {
            // Completions are about the command line itself: they stay here, with clap.
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "cfgctl", &mut std::io::stdout().lock());
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve {
            listen,
            data,
            profile,
            page_size,
            faults,
        } => commands::serve(commands::ServeOptions {
            listen,
            config: crate::emulator::Config {
                data,
                token: resolve_token(&cli.global)?,
                profile: profile.into(),
                page_size,
                faults: faults.unwrap_or_default(),
                ..crate::emulator::Config::default()
            },
        }),
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
