//! The commands and their own options, as clap reads them (the target and cache options
//! are `target`'s).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::{CacheArgs, TargetArgs};
use crate::api::registry::Profile;
use crate::cli::commands;
use crate::config::pattern::Pattern;
use crate::emulator::faults::Faults;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check manifests offline: syntax, schema, duplicates, references.
    ///
    /// Prints `file:line:col: error: message` for every problem (and GitHub annotations when
    /// GITHUB_ACTIONS=true). Exit 0 when there is no error, 1 otherwise.
    Validate(ValidateArgs),
    /// Show what apply would change: create, update, delete, in dependency order.
    ///
    /// Reads the target's lists only (one request per page). Exit 0, or with
    /// --detailed-exitcode 2 when there are changes; 1 on any error. With environments in
    /// cfgctl.yaml, --env NAME or --all-envs: several are planned at once into one report,
    /// and the exit code is the worst of theirs.
    Plan(PlanArgs),
    /// Make the target match the manifests (or apply a saved plan), in dependency order.
    ///
    /// Shows the plan, asks for confirmation on a terminal (--auto-approve otherwise), then
    /// runs the actions concurrently (--parallelism). Exit 0 only when every action succeeded.
    Apply(ApplyArgs),
    /// Report whether the target still matches the manifests (for cron jobs).
    ///
    /// Exit 2 on drift (managed changes, or unmanaged resources inside the prune scope),
    /// 0 when the target matches, 1 on any error. Every drifted resource is named: changed
    /// (with its fields, manifest -> target), deleted on the target, or unmanaged inside the
    /// prune scope. `cfgctl pull` adopts the changes into the manifests; `apply` reverts them.
    Drift(DriftArgs),
    /// Write the target's current state as manifests, one file per resource.
    ///
    /// `plan OUT` right after shows no changes. Refuses a non-empty OUT without --force; with
    /// it, only the files an earlier export wrote (listed in OUT/.cfgctl-export.json) are
    /// replaced or removed: other files are kept, an export that would overwrite one is
    /// refused, nothing is written through a symlink, and a failed export changes nothing.
    Export(ExportArgs),
    /// Turn another system's configuration into manifests (docs/import.md).
    ///
    /// Writes manifests and a report, IMPORT.md, into --out; refuses to replace a file there
    /// without --force. The same input gives byte-identical files.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Write the target's state back into the manifests: the way from a UI edit to git.
    ///
    /// Each managed resource whose state differs from its manifest is rewritten in place, in
    /// the file where its manifest lives; the rest of the file stays byte for byte. Resources
    /// gone from the target are reported, not removed. Sends nothing but reads.
    Pull(PullArgs),
    /// Print the JSON Schema of manifests, for editors (yaml-language-server).
    Schema(SchemaArgs),
    /// Print the dependency graph of the plan's actions (Graphviz DOT or Mermaid).
    ///
    /// Plans like `plan` (it needs a target), then prints one node per change and an arrow
    /// to each change that waits for it: `cfgctl graph config | dot -Tsvg > plan.svg`.
    Graph(GraphArgs),
    /// Run the Rego policy's own tests: every `test_` rule of the directory that cfgctl.yaml's
    /// `policy:` names. Exit 1 when one fails.
    TestPolicy(TestPolicyArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Run a local emulator of the Config API v1 (every kind, with the server's habits).
    ///
    /// With --token (CFGCTL_TOKEN) or --token-file, every request must carry the token in the
    /// API-Token header. The listening URL is printed on stdout; the request log goes to
    /// stderr. Stop with Ctrl-C.
    Serve(ServeArgs),
}

// The options of `cfgctl validate` (its help is the variant's).
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Directory of manifests.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub envs: EnvArgs,
}

/// The options of `cfgctl test-policy`.
#[derive(Debug, Args)]
pub struct TestPolicyArgs {
    /// The repository (its cfgctl.yaml names the policy directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

/// Which environments of cfgctl.yaml a command works on (docs/environments.md).
#[derive(Debug, Args, Clone, Default)]
pub struct EnvArgs {
    /// Work on this environment of cfgctl.yaml (repeatable); validate without it checks every
    /// environment, the other commands need it (or --all-envs) when cfgctl.yaml declares some.
    #[arg(long = "env", value_name = "NAME")]
    pub envs: Vec<String>,
    /// Work on every environment of cfgctl.yaml.
    #[arg(long, conflicts_with = "envs")]
    pub all_envs: bool,
}

// The options of `cfgctl plan` (its help is the variant's).
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Directory of manifests.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Output format: text for people, json for machines, markdown for PR comments.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// Exit 2 when the plan has changes (upserts excepted), 0 when it has none.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Also write the plan, with fingerprints of the current state, for `apply FILE`.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Delete resources inside the `prune` patterns of cfgctl.yaml that no manifest declares.
    #[arg(long)]
    pub prune: bool,
    /// Send every create and update with dry_run, so the server's own validation runs.
    #[arg(long)]
    pub server_validate: bool,
    /// Only resources matching KIND/SLUG-GLOB (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub only: Vec<Pattern>,
    /// Compare secret references with this git revision of the repository holding DIR
    /// (`origin/main` in a pull request, the pushed-over commit on merge): a changed
    /// `${env:}`/`${file:}` reference is an update that sends the new value.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    #[command(flatten)]
    pub envs: EnvArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

// The options of `cfgctl apply` (its help is the variant's).
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Directory of manifests, or a plan file written by `plan --out`.
    #[arg(default_value = ".", value_name = "DIR|PLANFILE")]
    pub source: PathBuf,
    /// Do not ask for confirmation (needed without a terminal).
    #[arg(long)]
    pub auto_approve: bool,
    /// Delete resources inside the `prune` patterns of cfgctl.yaml that no manifest declares.
    #[arg(long)]
    pub prune: bool,
    /// Allow a prune that deletes every resource of a kind no manifest declares.
    #[arg(long)]
    pub allow_empty_prune: bool,
    /// Send force_delete=true on bucket deletes (cascades to what references the bucket;
    /// refused when the cascade would take an excluded, managed or out-of-scope resource).
    #[arg(long)]
    pub force_delete_buckets: bool,
    /// Only resources matching KIND/SLUG-GLOB (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub only: Vec<Pattern>,
    /// The most deletes this apply may send: lowers `max_deletes` of cfgctl.yaml, never
    /// raises it. For a saved plan whose guards are not sealed for this user and token, the
    /// limit itself (else the cfgctl.yaml of the current directory, else 25).
    #[arg(long, value_name = "N")]
    pub max_deletes: Option<u32>,
    /// Send an update to every managed resource with a secret field (those matching
    /// KIND/SLUG-GLOB when given), even when nothing shows a difference: a rotated secret
    /// the target reads back as **REDACTED** cannot show one.
    #[arg(long, value_name = "PATTERN", num_args = 0..=1, value_parser = parse_pattern)]
    pub rotate_secrets: Option<Option<Pattern>>,
    /// Write the tokens of the ServiceAccounts this apply creates to FILE, as
    /// {"ServiceAccount/slug": "token"}; FILE is created with mode 0600 and must not
    /// exist. Without it the tokens are never shown.
    #[arg(long, value_name = "FILE")]
    pub service_account_tokens: Option<PathBuf>,
    /// Compare secret references with this git revision of the repository holding DIR
    /// (`origin/main` in a pull request, the pushed-over commit on merge): a changed
    /// `${env:}`/`${file:}` reference is an update that sends the new value.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Apply only what this saved plan (`plan --out`, the plan a reviewer approved) holds:
    /// plan afresh, and refuse, sending nothing, when the fresh plan has an action or a change
    /// the reviewed plan does not.
    #[arg(long, value_name = "PLANFILE")]
    pub reviewed: Option<PathBuf>,
    #[command(flatten)]
    pub envs: EnvArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

// The options of `cfgctl drift` (its help is the variant's).
#[derive(Debug, Args)]
pub struct DriftArgs {
    /// Directory of manifests.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// Compare secret references with this git revision of the repository holding DIR
    /// (`origin/main` in a pull request, the pushed-over commit on merge): a changed
    /// `${env:}`/`${file:}` reference is an update that sends the new value.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    #[command(flatten)]
    pub envs: EnvArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

// The options of `cfgctl export` (its help is the variant's).
#[derive(Debug, Args)]
#[command(
    mut_arg("envs", |a| a.help("Export the target of this environment of cfgctl.yaml (repeatable; several: one folder each, OUT/NAME)")),
    mut_arg("all_envs", |a| a.help("Export every environment of cfgctl.yaml, each into OUT/NAME")),
)]
pub struct ExportArgs {
    /// Folder to write (`<kind>/<slug>.yaml`, `resource-pools.yaml`).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace an earlier export in a non-empty folder.
    #[arg(long)]
    pub force: bool,
    /// Each dashboard's JSON in its own pretty-printed file beside its manifest
    /// (`<slug>.json`), which references it with `${file:<slug>.json}`.
    #[arg(long)]
    pub dashboards_as_files: bool,
    /// Only resources matching KIND/SLUG-GLOB (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub only: Vec<Pattern>,
    /// The directory whose cfgctl.yaml declares the environments of --env/--all-envs (its
    /// manifests are not read).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub envs: EnvArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// What `cfgctl import` reads.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Prometheus alerting and recording rules (rule files, PrometheusRule objects) and an
    /// Alertmanager configuration -> Monitors, RecordingRules, Notifiers, a NotificationPolicy.
    ///
    /// Every credential of the Alertmanager configuration is written as ${env:NAME}; the
    /// variables to set are printed. What could not be mapped is listed with its file:line.
    Prometheus(ImportPrometheusArgs),
    /// Grafana dashboards (JSON files, export envelopes, ConfigMaps of the sidecar layout) ->
    /// one manifest each, its JSON in its own file beside it (`${file:SLUG.json}`).
    ///
    /// What was changed or left out (ids, versions, library panels, datasources to check) is
    /// listed per dashboard with its file:line.
    Grafana(ImportGrafanaArgs),
}

// The options of `cfgctl import grafana` (its help is the variant's).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("owner").required(true).args(["bucket", "collection"])))]
pub struct ImportGrafanaArgs {
    /// Dashboard JSON files, export envelopes, ConfigMaps, or folders of them.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// Folder to write the manifests, their JSON files and IMPORT.md into.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The collection the dashboards belong to.
    #[arg(long, value_name = "SLUG")]
    pub collection: Option<String>,
    /// The bucket the dashboards belong to.
    #[arg(long, value_name = "SLUG")]
    pub bucket: Option<String>,
    /// Replace the files --out already holds where the import writes (others are kept).
    #[arg(long)]
    pub force: bool,
}

// The options of `cfgctl import prometheus` (its help is the variant's).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("owner").required(true).args(["bucket", "collection"])))]
pub struct ImportPrometheusArgs {
    /// Rule files, PrometheusRule manifests, or folders of them.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// Folder to write the manifests and IMPORT.md into.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The bucket the monitors and recording rules belong to.
    #[arg(long, value_name = "SLUG")]
    pub bucket: Option<String>,
    /// The collection the monitors belong to (recording rules then run in execution groups
    /// named after their rule groups).
    #[arg(long, value_name = "SLUG")]
    pub collection: Option<String>,
    /// An Alertmanager configuration (a file, or a Kubernetes Secret holding alertmanager.yaml).
    #[arg(long, value_name = "FILE")]
    pub alertmanager: Option<PathBuf>,
    /// The team of the NotificationPolicy (else it belongs to --bucket).
    #[arg(long, value_name = "SLUG")]
    pub team: Option<String>,
    /// Replace the files --out already holds where the import writes (others are kept).
    #[arg(long)]
    pub force: bool,
}

// The options of `cfgctl pull` (its help is the variant's).
#[derive(Debug, Args)]
#[command(
    mut_arg("envs", |a| a.help("Pull from this environment of cfgctl.yaml (one): each value is written where the environment's value was written, base or overlay")),
    mut_arg("all_envs", |a| a.help("Refused: pull writes one environment at a time")),
)]
pub struct PullArgs {
    /// Directory of manifests.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Only resources matching KIND/SLUG-GLOB (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub only: Vec<Pattern>,
    /// Also write the unmanaged resources inside the prune scope, as new files in
    /// export's layout (`<kind>/<slug>.yaml`).
    #[arg(long)]
    pub include_unmanaged: bool,
    #[command(flatten)]
    pub envs: EnvArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

// The options of `cfgctl schema` (its help is the variant's).
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write the schema to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The schema of cfgctl.yaml, the settings file, instead of the manifests'.
    #[arg(long)]
    pub settings: bool,
}

// The options of `cfgctl graph` (its help is the variant's).
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Directory of manifests.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// dot for Graphviz, mermaid for Markdown (GitHub renders it).
    #[arg(long, value_enum, default_value_t = GraphFormatArg::Dot)]
    pub format: GraphFormatArg,
    /// Delete resources inside the `prune` patterns of cfgctl.yaml that no manifest declares.
    #[arg(long)]
    pub prune: bool,
    /// Only resources matching KIND/SLUG-GLOB (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub only: Vec<Pattern>,
    #[command(flatten)]
    pub envs: EnvArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

// The options of `cfgctl completions` (its help is the variant's).
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

// The options of `cfgctl serve` (its help is the variant's).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// SQLite file of the emulated tenant (created if missing); in memory when absent.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Which operations the tenant offers: every operation, or the seed tenant's subset.
    #[arg(long, value_enum, default_value_t = ProfileArg::Full)]
    pub profile: ProfileArg,
    /// Items per list page when the client states no page.max_size (at most 1000).
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub page_size: u64,
    /// Inject failures, e.g. 500:0.05,503:0.05,429:0.02,reset:0.01,latency:20ms (lost:P runs the operation, then drops the response)
    #[arg(long, value_name = "SPEC", value_parser = parse_faults)]
    pub faults: Option<Faults>,
    /// Fill the documented defaults a write leaves out (interval_secs: 60, ...), as a real
    /// tenant does; `off` answers without them.
    #[arg(long, value_enum, default_value_t = OnOff::On, value_name = "on|off")]
    pub server_defaults: OnOff,
    /// Answer secret fields `**REDACTED**` once set, as a current tenant does; `off`
    /// answers them in clear, as an older tenant did.
    #[arg(long, value_enum, default_value_t = OnOff::On, value_name = "on|off")]
    pub redact_secrets: OnOff,
    /// Serve this API description (swagger 2.0 JSON, say a newer one) instead of the
    /// embedded one; objects are validated against it.
    #[arg(long, value_name = "FILE")]
    pub swagger: Option<PathBuf>,
    /// At most N requests a second for the tenant (a token bucket); 429 with Retry-After beyond.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,
    /// The API token every request must carry in the API-Token header (none: no check).
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

impl Command {
    /// The target options of a command that talks to a target.
    pub(super) fn target(&self) -> Option<&TargetArgs> {
        match self {
            Command::Plan(PlanArgs { target, .. })
            | Command::Drift(DriftArgs { target, .. })
            | Command::Apply(ApplyArgs { target, .. })
            | Command::Export(ExportArgs { target, .. })
            | Command::Pull(PullArgs { target, .. })
            | Command::Graph(GraphArgs { target, .. }) => Some(target),
            Command::Validate(_)
            | Command::Import(_)
            | Command::Schema(_)
            | Command::TestPolicy(_)
            | Command::Completions(_)
            | Command::Serve(_) => None,
        }
    }
}
