//! The command line: clap types, and their resolution into the per-command options the
//! library takes. Architecture invariant: clap types stop here; no other module sees them.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;
use crate::emulator::faults::Faults;
use crate::pattern::Pattern;
use crate::registry::Profile;

/// GitOps for the Configuration Management API v1: validate, plan and apply YAML manifests.
#[derive(Debug, Parser)]
#[command(name = "cfgctl", version = crate::VERSION, about, long_about = None, propagate_version = true)]
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
    /// Pages one list may take before the run stops with an error (a list that never ends).
    #[arg(long, global = true, default_value_t = crate::client::DEFAULT_MAX_PAGES, value_name = "N")]
    pub max_pages: usize,
    /// The largest answer read from the target, in MiB: a larger one (a list page, anything)
    /// is refused while it arrives.
    #[arg(long, global = true, default_value_t = crate::client::DEFAULT_MAX_RESPONSE_MB, value_name = "MIB")]
    pub max_response_mb: u64,
    /// Where plan and drift remember no-change plans (default $XDG_CACHE_HOME/cfgctl, else
    /// ~/.cache/cfgctl).
    #[arg(long, global = true, env = "CFGCTL_CACHE_DIR", value_name = "PATH")]
    pub cache_dir: Option<PathBuf>,
    /// Neither use nor write the plan cache: every plan is made in full.
    #[arg(long, global = true, env = "CFGCTL_NO_CACHE", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_cache: bool,
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
        /// Send force_delete=true on bucket deletes (cascades to what references the bucket;
        /// refused when the cascade would take an excluded, managed or out-of-scope resource).
        #[arg(long)]
        force_delete_buckets: bool,
        /// Only resources matching KIND/SLUG-GLOB (repeatable).
        #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
        only: Vec<Pattern>,
    },
    /// Report whether the target still matches the manifests (for cron jobs).
    ///
    /// Exit 2 on drift (managed changes, or unmanaged resources inside the prune scope),
    /// 0 when the target matches, 1 on any error. Every drifted resource is named: changed
    /// (with its fields, manifest -> target), deleted on the target, or unmanaged inside the
    /// prune scope. `cfgctl pull` adopts the changes into the manifests; `apply` reverts them.
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
    /// it, only the files an earlier export wrote (listed in OUT/.cfgctl-export.json) are
    /// replaced or removed: other files are kept, an export that would overwrite one is
    /// refused, nothing is written through a symlink, and a failed export changes nothing.
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
    /// Write the target's state back into the manifests: the way from a UI edit to git.
    ///
    /// Each managed resource whose state differs from its manifest is rewritten in place, in
    /// the file where its manifest lives; the rest of the file stays byte for byte. Resources
    /// gone from the target are reported, not removed. Sends nothing but reads.
    Pull {
        /// Directory of manifests.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Only resources matching KIND/SLUG-GLOB (repeatable).
        #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
        only: Vec<Pattern>,
        /// Also write the unmanaged resources inside the prune scope, as new files in
        /// export's layout (`<kind>/<slug>.yaml`).
        #[arg(long)]
        include_unmanaged: bool,
    },
    /// Print the JSON Schema of manifests, for editors (yaml-language-server).
    Schema {
        /// Write the schema to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the dependency graph of the plan's actions (Graphviz DOT or Mermaid).
    ///
    /// Plans like `plan` (it needs a target), then prints one node per change and an arrow
    /// to each change that waits for it: `cfgctl graph config | dot -Tsvg > plan.svg`.
    Graph {
        /// Directory of manifests.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// dot for Graphviz, mermaid for Markdown (GitHub renders it).
        #[arg(long, value_enum, default_value_t = GraphFormatArg::Dot)]
        format: GraphFormatArg,
        /// Delete resources inside the `prune` patterns of cfgctl.yaml that no manifest declares.
        #[arg(long)]
        prune: bool,
        /// Only resources matching KIND/SLUG-GLOB (repeatable).
        #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
        only: Vec<Pattern>,
    },
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
        /// Fill the documented defaults a write leaves out (interval_secs: 60, ...), as a real
        /// tenant does; `off` answers without them.
        #[arg(long, value_enum, default_value_t = OnOff::On, value_name = "on|off")]
        server_defaults: OnOff,
        /// Serve this API description (swagger 2.0 JSON, say a newer one) instead of the
        /// embedded one; objects are validated against it.
        #[arg(long, value_name = "FILE")]
        swagger: Option<PathBuf>,
        /// At most N requests a second for the tenant (a token bucket); 429 with Retry-After beyond.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        rate_limit: Option<u32>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormatArg {
    Dot,
    Mermaid,
}

impl From<GraphFormatArg> for crate::render::graph::GraphFormat {
    fn from(f: GraphFormatArg) -> crate::render::graph::GraphFormat {
        match f {
            GraphFormatArg::Dot => crate::render::graph::GraphFormat::Dot,
            GraphFormatArg::Mermaid => crate::render::graph::GraphFormat::Mermaid,
        }
    }
}

fn parse_pattern(text: &str) -> Result<Pattern, String> {
    Pattern::parse(text).map_err(|e| e.to_string())
}

/// The target options every networked command shares.
/// The plan cache's directory, or `None` when it is off (or there is nowhere to put it).
fn cache_dir(global: &GlobalArgs) -> Option<PathBuf> {
    let given = global
        .cache_dir
        .clone()
        .filter(|d| !d.as_os_str().is_empty());
    (!global.no_cache).then(|| given.or_else(crate::memo::default_dir))?
}

fn target_options(global: &GlobalArgs) -> anyhow::Result<commands::TargetOptions> {
    Ok(commands::TargetOptions {
        url: global.url.clone().filter(|u| !u.trim().is_empty()),
        token: commands::resolve_token(global.token.as_deref(), global.token_file.as_deref())?,
        local: global.local.clone(),
        timeout: std::time::Duration::from_secs(global.timeout.max(1)),
        max_retries: global.max_retries,
        insecure_http: global.insecure_http,
        max_pages: global.max_pages.max(1),
        max_response_bytes: global.max_response_mb.max(1).saturating_mul(1 << 20),
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
        .with_writer(crate::output::log_writer)
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
                // One line, redacted, whatever the server or the manifests put in it.
                let text = format!("{err:#}");
                let _ = writeln!(
                    crate::output::stderr(),
                    "error: {}",
                    crate::output::Inert(text)
                );
            }
            ExitCode::from(1)
        }
    }
}

/// Registers every secret of the command line with the output layer before anything is
/// printed: the token, and what a `--url` carries in its user info or query.
fn register_secrets(global: &GlobalArgs) {
    if let Ok(Some(token)) =
        commands::resolve_token(global.token.as_deref(), global.token_file.as_deref())
    {
        crate::output::register_secret(&token);
    }
    if let Some(url) = &global.url {
        crate::output::register_url_secrets(url);
    }
    // A panic message goes through the same layer as everything else.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            crate::output::stderr(),
            "cfgctl panicked (a bug): {}",
            crate::output::Inert(info)
        );
    }));
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    register_secrets(&cli.global);
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
            cache: cache_dir(&cli.global),
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
            cache: cache_dir(&cli.global),
            target: target_options(&cli.global)?,
        }),
        Command::Schema { out } => commands::schema(out.as_deref()),
        Command::Graph {
            dir,
            format,
            prune,
            only,
        } => commands::graph(commands::GraphCommand {
            dir,
            format: format.into(),
            prune,
            only,
            target: target_options(&cli.global)?,
        }),
        Command::Pull {
            dir,
            only,
            include_unmanaged,
        } => commands::pull(commands::PullCommand {
            dir,
            only,
            include_unmanaged,
            target: target_options(&cli.global)?,
        }),
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
            server_defaults,
            swagger,
            rate_limit,
        } => commands::serve(commands::ServeOptions {
            listen,
            config: crate::emulator::Config {
                data,
                token: commands::resolve_token(
                    cli.global.token.as_deref(),
                    cli.global.token_file.as_deref(),
                )?,
                profile: profile.into(),
                page_size,
                faults: faults.unwrap_or_default(),
                server_defaults: server_defaults == OnOff::On,
                swagger,
                rate_limit,
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
