//! The command line: clap types, and their resolution into the per-command options the
//! library takes. Architecture invariant: clap types stop here; no other module sees them.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};

mod command;
mod target;

pub use command::{Command, FormatArg, GraphFormatArg, OnOff, ProfileArg};
pub use target::{CacheArgs, TargetArgs};

use crate::commands;

/// GitOps for the Configuration Management API v1: validate, plan and apply YAML manifests.
#[derive(Debug, Parser)]
#[command(name = "cfgctl", version = crate::VERSION, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 success, 1 error (invalid input, unreachable target, failed action), 2 changes present (plan --detailed-exitcode, drift)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The target options written before the command's name (`cfgctl --url U plan`): merged
    /// into the command's own by [`parse_from`].
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command accepts, after its name too: how much to print and how.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
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
        .with_ansi(crate::output::stderr_has_color());
    let _ = match global.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Parses the command line and runs it; the process exit code.
pub fn main() -> ExitCode {
    let cli = match parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors are input errors: exit 1
            // (2 means "changes present" to CI jobs).
            #[allow(clippy::disallowed_methods)]
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
                let text = error_line(&err);
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

/// An error and its causes on one line, `a: b: c` (as `{:#}` prints them), leaving out a cause
/// whose message the line already holds: an error whose message includes its source's (as
/// walkdir's errors, and ours that write `{source}`, do) would otherwise say it twice
/// ("Permission denied (os error 13); nothing was written: Permission denied (os error 13)").
pub fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Registers every secret of the command line with the output layer before anything is
/// printed: the token, and what a `--url` carries in its user info or query.
fn register_secrets(cli: &Cli) {
    let serving = match &cli.command {
        Command::Serve {
            token, token_file, ..
        } => Some((token.as_deref(), token_file.as_deref())),
        _ => None,
    };
    let targets = [Some(&cli.target), cli.command.target()];
    let tokens = targets
        .iter()
        .flatten()
        .map(|t| (t.token.as_deref(), t.token_file.as_deref()))
        .chain(serving);
    for (token, file) in tokens {
        if let Ok(Some(token)) = commands::resolve_token(token, file) {
            crate::output::register_secret(&token);
        }
    }
    for url in targets.iter().flatten().filter_map(|t| t.url.as_deref()) {
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

/// Parses a command line: clap, then the target and cache options written before the
/// command's name merged into the command's own (`cfgctl --url U plan` is `cfgctl plan --url
/// U`). `serve` refuses target options: it is the target.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    let Some((_, own)) = matches.subcommand() else {
        return Ok(cli);
    };
    let (before, before_cache) = (&cli.target, &cli.cache);
    match &mut cli.command {
        Command::Plan { target, cache, .. } | Command::Drift { target, cache, .. } => {
            target.merge(own, before, &matches);
            cache.merge(own, before_cache, &matches);
        }
        Command::Apply { target, .. }
        | Command::Export { target, .. }
        | Command::Pull { target, .. }
        | Command::Graph { target, .. } => target.merge(own, before, &matches),
        Command::Serve {
            token, token_file, ..
        } => {
            let refused = target::TARGET_IDS
                .iter()
                .find(|id| !matches!(**id, "token" | "token_file") && target::given(&matches, id));
            if let Some(id) = refused {
                let message = format!(
                    "--{} is not an option of `serve`: the emulator is a target, it does not talk to one (it listens on --listen)",
                    id.replace('_', "-")
                );
                // Told with serve's usage, as clap tells `serve --url`.
                let mut cmd = Cli::command();
                cmd.build();
                let kind = clap::error::ErrorKind::ArgumentConflict;
                return Err(match cmd.find_subcommand_mut("serve") {
                    Some(serve) => serve.error(kind, message),
                    None => cmd.error(kind, message),
                });
            }
            if !target::given(own, "token") && target::given(&matches, "token") {
                token.clone_from(&before.token);
            }
            if !target::given(own, "token_file") && target::given(&matches, "token_file") {
                token_file.clone_from(&before.token_file);
            }
        }
        Command::Validate { .. }
        | Command::Schema { .. }
        | Command::TestPolicy { .. }
        | Command::Completions { .. } => {}
    }
    Ok(cli)
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    register_secrets(&cli);
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
            target,
            cache,
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
            cache: cache.dir(),
            secret_dir: cache.secret_dir(),
            target: target.options()?,
        }),
        Command::Apply {
            source,
            auto_approve,
            prune,
            allow_empty_prune,
            force_delete_buckets,
            only,
            max_deletes,
            rotate_secrets,
            service_account_tokens,
            target,
        } => commands::apply(commands::ApplyCommand {
            source,
            auto_approve,
            prune,
            allow_empty_prune,
            force_delete_buckets,
            only,
            max_deletes,
            rotate_secrets: rotate_secrets.map(|p| p.into_iter().collect()),
            service_account_tokens,
            secret_dir: cli.cache.secret_dir(),
            parallelism: target.parallelism.max(1),
            verbose: cli.global.verbose > 0,
            target: target.options()?,
        }),
        Command::Drift {
            dir,
            format,
            target,
            cache,
        } => commands::plan(commands::PlanCommand {
            dir,
            format: format.into(),
            detailed_exitcode: true,
            out: None,
            prune: false,
            server_validate: false,
            only: vec![],
            drift: true,
            verbose: cli.global.verbose > 0,
            cache: cache.dir(),
            secret_dir: cache.secret_dir(),
            target: target.options()?,
        }),
        Command::Schema { out } => commands::schema(out.as_deref()),
        Command::TestPolicy { dir } => commands::test_policy(&dir),
        Command::Graph {
            dir,
            format,
            prune,
            only,
            target,
        } => commands::graph(commands::GraphCommand {
            dir,
            format: format.into(),
            prune,
            only,
            target: target.options()?,
        }),
        Command::Pull {
            dir,
            only,
            include_unmanaged,
            target,
        } => commands::pull(commands::PullCommand {
            dir,
            only,
            include_unmanaged,
            target: target.options()?,
        }),
        Command::Export {
            out,
            force,
            only,
            target,
        } => commands::export(commands::ExportCommand {
            out,
            force,
            only,
            target: target.options()?,
        }),
        Command::Completions { shell } => {
            // Completions are about the command line itself: they stay here, with clap.
            let mut cmd = <Cli as clap::CommandFactory>::command();
            #[allow(clippy::disallowed_methods)]
            clap_complete::generate(shell, &mut cmd, "cfgctl", &mut std::io::stdout().lock());
            Ok(ExitCode::SUCCESS)
        }
        serve @ Command::Serve { .. } => run_serve(serve),
    }
}

/// `cfgctl serve` from its parsed options.
fn run_serve(command: Command) -> anyhow::Result<ExitCode> {
    let Command::Serve {
        listen,
        data,
        profile,
        page_size,
        faults,
        server_defaults,
        redact_secrets,
        swagger,
        rate_limit,
        token,
        token_file,
    } = command
    else {
        anyhow::bail!("not the serve command");
    };
    commands::serve(commands::ServeOptions {
        listen,
        config: crate::emulator::Config {
            data,
            token: commands::resolve_token(token.as_deref(), token_file.as_deref())?,
            profile: profile.into(),
            page_size,
            faults: faults.unwrap_or_default(),
            server_defaults: server_defaults == OnOff::On,
            redact_secrets: redact_secrets == OnOff::On,
            swagger,
            rate_limit,
            ..crate::emulator::Config::default()
        },
    })
}

#[cfg(test)]
mod tests;
