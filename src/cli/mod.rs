//! The command line: clap types, and their resolution into the per-command options the
//! library takes. Architecture invariant: clap types stop here; no other module sees them.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};

mod command;
pub mod commands;
mod resolve;
mod target;

pub use command::{
    ApplyArgs, Command, CompletionsArgs, DriftArgs, ExportArgs, FormatArg, GraphArgs,
    GraphFormatArg, ImportCommand, ImportGrafanaArgs, ImportPrometheusArgs, OnOff, PlanArgs,
    ProfileArg, PullArgs, SchemaArgs, ServeArgs, ValidateArgs,
};
pub use target::{CacheArgs, TargetArgs};

use resolve::Targets;

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
        .with_writer(crate::util::output::log_writer)
        .with_ansi(crate::util::output::stderr_has_color());
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
                // The located problems behind it first (`ops::Diagnosed`), one a line.
                commands::print_diagnosed(&err);
                // One line, redacted, whatever the server or the manifests put in it.
                let text = error_line(&err);
                let _ = writeln!(
                    crate::util::output::stderr(),
                    "error: {}",
                    crate::util::output::Inert(text)
                );
            }
            ExitCode::from(1)
        }
    }
}

pub use crate::cli::commands::error_line;

/// Registers every secret of the command line with the output layer before anything is
/// printed: the token, and what a `--url` carries in its user info or query.
fn register_secrets(cli: &Cli) {
    let serving = match &cli.command {
        Command::Serve(serve) => Some((serve.token.as_deref(), serve.token_file.as_deref())),
        _ => None,
    };
    let targets = [Some(&cli.target), cli.command.target()];
    let tokens = targets
        .iter()
        .flatten()
        .map(|t| (t.token.as_deref(), t.token_file.as_deref()))
        .chain(serving);
    for (token, file) in tokens {
        if let Ok(Some(token)) = crate::ops::resolve_token(token, file) {
            crate::util::output::register_secret(&token);
        }
    }
    for url in targets.iter().flatten().filter_map(|t| t.url.as_deref()) {
        crate::util::output::register_url_secrets(url);
    }
    // A panic message goes through the same layer as everything else.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            crate::util::output::stderr(),
            "cfgctl panicked (a bug): {}",
            crate::util::output::Inert(info)
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
        Command::Plan(PlanArgs { target, cache, .. })
        | Command::Drift(DriftArgs { target, cache, .. }) => {
            target.merge(own, before, &matches);
            cache.merge(own, before_cache, &matches);
        }
        Command::Apply(ApplyArgs { target, .. })
        | Command::Export(ExportArgs { target, .. })
        | Command::Pull(PullArgs { target, .. })
        | Command::Graph(GraphArgs { target, .. }) => target.merge(own, before, &matches),
        Command::Serve(ServeArgs {
            token, token_file, ..
        }) => {
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
        Command::Validate(_)
        | Command::Import(_)
        | Command::Schema(_)
        | Command::TestPolicy(_)
        | Command::Completions(_) => {}
    }
    Ok(cli)
}

/// Runs a parsed command line: its settings resolved (`resolve`), then its command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    register_secrets(&cli);
    let choice = match cli.global.color {
        ColorArg::Auto => anstream::ColorChoice::Auto,
        ColorArg::Always => anstream::ColorChoice::Always,
        ColorArg::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    init_logging(&cli.global, matches!(cli.command, Command::Serve(_)));
    let global = &cli.global;
    match cli.command {
        Command::Validate(args) => commands::validate(&resolve::validate(args, global)),
        Command::Plan(args) => plan(resolve::plan(args, global)?),
        Command::Drift(args) => plan(resolve::drift(args, global)?),
        Command::Apply(args) => apply(resolve::apply(args, global, &cli.cache)?),
        Command::Graph(args) => commands::graph(resolve::graph(args)?),
        Command::Pull(args) => commands::pull(resolve::pull(args)?),
        Command::Export(args) => commands::export(resolve::export(args)?),
        Command::Import(args) => commands::import(&resolve::import(args)),
        Command::Schema(args) => commands::schema(&resolve::schema(args)),
        Command::TestPolicy(args) => commands::test_policy(&args.dir),
        Command::Serve(args) => commands::serve(resolve::serve(args)?),
        Command::Completions(CompletionsArgs { shell }) => {
            // Completions are about the command line itself: they stay here, with clap.
            let mut cmd = <Cli as clap::CommandFactory>::command();
            #[allow(clippy::disallowed_methods)]
            clap_complete::generate(shell, &mut cmd, "cfgctl", &mut std::io::stdout().lock());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `plan` or `drift`: against one target, or over several environments at once.
fn plan(planning: resolve::Planning) -> anyhow::Result<ExitCode> {
    match planning {
        Targets::One(settings) => commands::plan(settings),
        Targets::Several(settings, envs) => commands::plan_several(&settings, envs),
    }
}

/// `apply`: a saved plan, or the manifests against one target or several environments.
fn apply(applying: resolve::Applying) -> anyhow::Result<ExitCode> {
    match applying {
        resolve::Applying::Saved(opts) => commands::apply_saved(opts),
        resolve::Applying::Manifests(Targets::One(opts)) => commands::apply(opts),
        resolve::Applying::Manifests(Targets::Several(opts, envs)) => {
            commands::apply_several(&opts, envs)
        }
    }
}

#[cfg(test)]
mod tests;
