//! The commands, one function each, taking resolved options (never clap types) and
//! returning the exit code. Errors that end a command come back as `anyhow` errors with
//! context; `main` prints them once.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use anyhow::Context;

use crate::diagnostic::Severity;
use crate::manifest;

/// Options of `cfgctl validate`.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    pub dir: PathBuf,
    /// Also print GitHub workflow annotations (`GITHUB_ACTIONS=true`).
    pub github_annotations: bool,
    /// Print only the problems, not the summary line.
    pub quiet: bool,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `cfgctl validate DIR`: offline checks; exit 1 on any error.
pub fn validate(opts: &ValidateOptions) -> anyhow::Result<ExitCode> {
    let loaded = manifest::load_dir(&opts.dir)?;
    let dir = opts.dir.display();
    if loaded.manifest_files == 0 && loaded.diagnostics.is_empty() {
        if loaded.other_files == 0 {
            anyhow::bail!(
                "no manifests in `{dir}`: it holds no *.yaml, *.yml or *.json files (hidden files and folders are skipped)"
            );
        }
        anyhow::bail!(
            "no manifests in `{dir}`: none of its {} is a *.yaml, *.yml or *.json file (hidden files and folders are skipped)",
            plural(loaded.other_files, "file", "files")
        );
    }
    let mut out = anstream::stdout().lock();
    let error_style = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
    let warning_style = Style::new().bold().fg_color(Some(AnsiColor::Yellow.into()));
    // On a terminal, each problem comes with its source line; logs and CI get one line each.
    let on_terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let mut sources: std::collections::BTreeMap<PathBuf, Option<String>> = Default::default();
    for d in &loaded.diagnostics {
        if on_terminal && !opts.github_annotations {
            let source = sources
                .entry(d.file.clone())
                .or_insert_with(|| std::fs::read_to_string(&d.file).ok());
            if let Some(text) = source
                .as_deref()
                .and_then(|src| crate::diagnostic::render_snippet(d, src, true))
            {
                writeln!(out, "{text}\n").context("writing to stdout")?;
                continue;
            }
        }
        let style = match d.severity {
            Severity::Error => error_style,
            Severity::Warning => warning_style,
        };
        writeln!(
            out,
            "{}: {style}{}{style:#}: {}",
            d.location(),
            d.severity.as_str(),
            d.problem
        )
        .context("writing to stdout")?;
        if opts.github_annotations {
            writeln!(out, "{}", d.github_annotation()).context("writing to stdout")?;
        }
    }
    let errors = loaded.error_count();
    if loaded.manifests.is_empty() && errors == 0 {
        anyhow::bail!(
            "no manifests in `{dir}`: its {} hold no documents",
            plural(loaded.manifest_files, "YAML/JSON file", "YAML/JSON files")
        );
    }
    if !opts.quiet {
        writeln!(
            out,
            "{}: {} in {}, {}, {}",
            if errors == 0 { "valid" } else { "invalid" },
            plural(loaded.manifests.len(), "manifest", "manifests"),
            plural(loaded.manifest_files, "file", "files"),
            plural(errors, "error", "errors"),
            plural(loaded.warning_count(), "warning", "warnings"),
        )
        .context("writing to stdout")?;
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `cfgctl schema`: the editor JSON Schema on stdout.
pub fn schema() -> anyhow::Result<ExitCode> {
    let text = serde_json::to_string_pretty(&crate::spec::manifest_schema())
        .context("serialising the schema")?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// Options of `cfgctl serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: std::net::SocketAddr,
    pub config: crate::emulator::Config,
}

/// `cfgctl serve`: runs the emulator until Ctrl-C.
pub fn serve(opts: ServeOptions) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let emulator = crate::emulator::Emulator::start(&opts.config, opts.listen)
            .await
            .context("starting the emulator")?;
        let store = opts
            .config
            .data
            .as_ref()
            .map_or("in memory".to_string(), |p| p.display().to_string());
        let profile = match opts.config.profile {
            crate::registry::Profile::Full => "full",
            crate::registry::Profile::Seed => "seed",
        };
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", emulator.url()).context("writing to stdout")?;
            out.flush().context("writing to stdout")?;
        }
        tracing::info!(
            target: "cfgctl::emulator",
            url = %emulator.url(),
            profile,
            store = %store,
            token = opts.config.token.is_some(),
            "listening"
        );
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        tracing::info!(target: "cfgctl::emulator", "shutting down");
        emulator.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}

/// Where the commands that need a tenant send their requests.
#[derive(Debug, Clone)]
pub struct TargetOptions {
    pub url: Option<String>,
    pub token: Option<String>,
    /// The embedded local tenant's store.
    pub local: Option<PathBuf>,
    pub timeout: std::time::Duration,
    pub max_retries: u32,
    pub insecure_http: bool,
}

/// A connected target: the client, what to call it, and the in-process emulator of `--local`
/// (kept alive as long as the connection).
pub struct Connection {
    pub client: crate::client::Client,
    pub name: String,
    _local: Option<crate::emulator::Emulator>,
}

/// Connects to `--url` or starts the `--local` tenant.
pub async fn connect(t: &TargetOptions) -> anyhow::Result<Connection> {
    let (url, name, local) = match (&t.url, &t.local) {
        (Some(_), Some(_)) => anyhow::bail!("--url and --local name two targets: choose one"),
        (None, None) => anyhow::bail!(
            "no target: pass --url URL (or set CFGCTL_URL) for a tenant, or --local for the embedded local tenant"
        ),
        (Some(url), None) => (url.clone(), url.trim_end_matches('/').to_string(), None),
        (None, Some(path)) => {
            let config = crate::emulator::Config {
                data: Some(path.clone()),
                ..crate::emulator::Config::default()
            };
            let emulator = crate::emulator::Emulator::start(
                &config,
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            )
            .await
            .with_context(|| format!("starting the local tenant over {}", path.display()))?;
            let url = emulator.url();
            (url, format!("local:{}", path.display()), Some(emulator))
        }
    };
    let config = crate::client::ClientConfig {
        base_url: url,
        token: if local.is_some() {
            None
        } else {
            t.token.clone()
        },
        timeout: t.timeout,
        max_retries: t.max_retries,
        insecure_http: t.insecure_http,
        min_backoff: std::time::Duration::from_millis(200),
    };
    let client = crate::client::Client::new(&config)?;
    Ok(Connection {
        client,
        name,
        _local: local,
    })
}

/// Output format of plan and drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// Options of `cfgctl plan` and `cfgctl drift`.
#[derive(Debug, Clone)]
pub struct PlanCommand {
    pub dir: PathBuf,
    pub format: Format,
    pub detailed_exitcode: bool,
    pub out: Option<PathBuf>,
    pub prune: bool,
    pub server_validate: bool,
    pub only: Vec<crate::pattern::Pattern>,
    /// `drift`: exit 2 on drift, the prune scope counted.
    pub drift: bool,
    pub verbose: bool,
    pub target: TargetOptions,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Loads the manifests for a command that needs them all valid; problems go to stderr.
pub fn load_valid(dir: &std::path::Path) -> anyhow::Result<manifest::Loaded> {
    let loaded = manifest::load_dir(dir)?;
    let errors = loaded.error_count();
    if errors > 0 {
        let mut err = anstream::stderr().lock();
        for d in loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
        {
            let _ = writeln!(err, "{d}");
        }
        anyhow::bail!(
            "{} in the manifests under `{}`: run `cfgctl validate` for details",
            plural(errors, "error", "errors"),
            dir.display()
        );
    }
    if loaded.manifest_files == 0 {
        anyhow::bail!(
            "no manifests in `{}` (no *.yaml, *.yml or *.json files)",
            dir.display()
        );
    }
    Ok(loaded)
}

fn print_diagnostics(diagnostics: &[crate::diagnostic::Diagnostic]) {
    let mut err = anstream::stderr().lock();
    for d in diagnostics {
        let _ = writeln!(err, "{d}");
    }
}

/// Loads the manifests (on blocking threads, all cores) while connecting and reading the
/// target (on the runtime): the download hides behind the parsing. A manifest problem wins
/// over a target problem, as if the manifests had been loaded first; when the load fails, the
/// reading is abandoned.
async fn load_connect_fetch(
    dir: &std::path::Path,
    target: &TargetOptions,
) -> anyhow::Result<(manifest::Loaded, Connection, crate::state::Fetched)> {
    let owned = dir.to_path_buf();
    let mut loading = tokio::task::spawn_blocking(move || load_valid(&owned));
    let reading = async {
        let conn = connect(target).await?;
        let fetched = crate::state::fetch(&conn.client)
            .await
            .with_context(|| format!("reading the current state of {}", conn.name))?;
        anyhow::Ok((conn, fetched))
    };
    tokio::pin!(reading);
    let mut read = None;
    let loaded = loop {
        tokio::select! {
            l = &mut loading => break l,
            r = &mut reading, if read.is_none() => read = Some(r),
        }
    };
    let loaded = loaded.context("loading the manifests")??;
    let (conn, fetched) = match read {
        Some(r) => r?,
        None => reading.await?,
    };
    Ok((loaded, conn, fetched))
}

/// Plans the manifests against what was read from the target; plan errors are printed located.
fn plan_against(
    conn: &Connection,
    loaded: &manifest::Loaded,
    fetched: crate::state::Fetched,
    prune: bool,
    only: &[crate::pattern::Pattern],
) -> anyhow::Result<(crate::plan::Plan, crate::plan::Current)> {
    let opts = crate::plan::PlanOptions {
        target: conn.name.clone(),
        prune,
        only: only.to_vec(),
    };
    let mut plan = match crate::plan::plan(
        &loaded.manifests,
        &fetched.current,
        &fetched.caps,
        &loaded.settings,
        &opts,
    ) {
        Ok(p) => p,
        Err(e) => {
            print_diagnostics(&e.0);
            return Err(e.into());
        }
    };
    let mut warnings = fetched.warnings;
    warnings.append(&mut plan.warnings);
    plan.warnings = warnings;
    Ok((plan, fetched.current))
}

/// `cfgctl plan` / `cfgctl drift`.
pub fn plan(opts: PlanCommand) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let (loaded, conn, fetched) = load_connect_fetch(&opts.dir, &opts.target).await?;
        let (mut plan, _current) = plan_against(&conn, &loaded, fetched, opts.prune, &opts.only)?;
        if opts.server_validate {
            let rejected = server_validate(&conn.client, &mut plan, &loaded.manifests).await?;
            if !rejected.is_empty() {
                print_diagnostics(&rejected);
                anyhow::bail!(
                    "the server rejected {} (dry run)",
                    plural(rejected.len(), "change", "changes")
                );
            }
        }
        let rendered = match opts.format {
            Format::Text => crate::render::text(
                &plan,
                crate::render::TextOptions {
                    color: true,
                    verbose: opts.verbose,
                    drift: opts.drift,
                },
            ),
            Format::Json => {
                serde_json::to_string_pretty(&crate::render::json_plan(&plan, false))
                    .context("serialising the plan")?
                    + "\n"
            }
            Format::Markdown => {
                crate::render::markdown(&plan, crate::render::MARKDOWN_BUDGET, opts.drift)
            }
        };
        {
            let mut out = anstream::stdout().lock();
            out.write_all(rendered.as_bytes())
                .context("writing to stdout")?;
        }
        if let Some(path) = &opts.out {
            let saved = serde_json::to_string_pretty(&crate::render::json_plan(&plan, true))
                .context("serialising the plan")?;
            std::fs::write(path, saved + "\n")
                .with_context(|| format!("writing the plan to {}", path.display()))?;
        }
        let code = if opts.drift {
            if plan.has_drift() {
                2
            } else {
                0
            }
        } else if opts.detailed_exitcode && plan.has_changes() {
            2
        } else {
            0
        };
        Ok(ExitCode::from(code))
    })
}

/// Sends every create and update with `dry_run`; the server's rejections, located at the
/// manifests. Actions waiting for a create cannot be validated and are noted.
async fn server_validate(
    client: &crate::client::Client,
    plan: &mut crate::plan::Plan,
    manifests: &[manifest::Manifest],
) -> anyhow::Result<Vec<crate::diagnostic::Diagnostic>> {
    use crate::plan::ActionKind;
    let mut rejected = Vec::new();
    let mut notes = Vec::new();
    for a in &plan.actions {
        if !matches!(
            a.action,
            ActionKind::Create | ActionKind::Update | ActionKind::Upsert
        ) {
            continue;
        }
        let pending: Vec<String> = a
            .depends_on
            .iter()
            .map(|&d| &plan.actions[d])
            .filter(|d| matches!(d.action, ActionKind::Create | ActionKind::Upsert))
            .map(|d| d.address.to_string())
            .collect();
        if !pending.is_empty() {
            notes.push(format!(
                "{} not validated by the server: it waits for {} to be created",
                a.address,
                pending.join(", ")
            ));
            continue;
        }
        let Some(body) = &a.body else { continue };
        let kind = a.address.kind;
        let result = match a.action {
            ActionKind::Create => client.create(kind, body, true).await.map(|_| ()),
            _ => client
                .update(
                    kind,
                    a.address.slug.as_deref(),
                    body,
                    a.action == ActionKind::Upsert,
                    true,
                )
                .await
                .map(|_| ()),
        };
        match result {
            Ok(()) => {}
            Err(e) if matches!(e.status(), Some(400 | 404 | 409)) => {
                let m = manifests.iter().find(|m| m.address() == a.address);
                let (file, pos) = m
                    .map(|m| (m.file.clone(), m.pos))
                    .unwrap_or_else(|| (PathBuf::from("<plan>"), crate::yaml::Pos::new(1, 1)));
                rejected.push(crate::diagnostic::Diagnostic::error(
                    file,
                    pos,
                    crate::diagnostic::Problem::ServerRejected {
                        address: a.address.to_string(),
                        message: e.server_message().unwrap_or_default().to_string(),
                    },
                ));
            }
            Err(e) => return Err(e).context("validating on the server"),
        }
    }
    plan.warnings.extend(notes);
    Ok(rejected)
}

/// Options of `cfgctl apply`.
#[derive(Debug, Clone)]
pub struct ApplyCommand {
    /// A manifest directory, or a plan file written by `plan --out`.
    pub source: PathBuf,
    pub auto_approve: bool,
    pub prune: bool,
    pub allow_empty_prune: bool,
    pub force_delete_buckets: bool,
    pub only: Vec<crate::pattern::Pattern>,
    pub parallelism: usize,
    pub verbose: bool,
    pub target: TargetOptions,
}

fn ask_confirmation(plan: &crate::plan::Plan) -> anyhow::Result<bool> {
    use std::io::BufRead;
    let mut err = std::io::stderr().lock();
    write!(
        err,
        "\nApply {} to {}? Only 'yes' is accepted: ",
        plural(plan.actions.len(), "action", "actions"),
        plan.target
    )
    .context("writing to stderr")?;
    err.flush().context("writing to stderr")?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("reading the answer")?;
    Ok(answer.trim() == "yes")
}

/// `cfgctl apply`: plan (or read a saved plan), confirm, execute, report.
pub fn apply(opts: ApplyCommand) -> anyhow::Result<ExitCode> {
    use crate::apply::Outcome;
    use crate::plan::{ActionKind, Guard};
    use std::io::IsTerminal;

    let from_file = opts.source.is_file();
    runtime()?.block_on(async {
        let (conn, loaded) = if from_file {
            (connect(&opts.target).await?, None)
        } else {
            let (loaded, conn, fetched) = load_connect_fetch(&opts.source, &opts.target).await?;
            (conn, Some((loaded, fetched)))
        };
        let (plan, current) = match loaded {
            None => {
                let text = std::fs::read_to_string(&opts.source)
                    .with_context(|| format!("reading the plan file {}", opts.source.display()))?;
                let plan = crate::apply::saved::parse(&text)
                    .with_context(|| format!("reading the plan file {}", opts.source.display()))?;
                if plan.target != conn.name {
                    anyhow::bail!(
                        "the plan in {} was made for {}, not for {}: nothing was changed",
                        opts.source.display(),
                        plan.target,
                        conn.name
                    );
                }
                let stale = crate::apply::saved::stale(&conn.client, &plan)
                    .await
                    .context("checking the saved plan against the target")?;
                if !stale.is_empty() {
                    let mut err = anstream::stderr().lock();
                    for s in &stale {
                        let _ = writeln!(err, "  {s}");
                    }
                    anyhow::bail!(
                        "the saved plan is stale ({} changed since it was made): nothing was changed; run `cfgctl plan --out` again",
                        plural(stale.len(), "resource", "resources")
                    );
                }
                (plan, crate::plan::Current::default())
            }
            // The manifests are dropped here: the plan holds what apply sends.
            Some((loaded, fetched)) => plan_against(&conn, &loaded, fetched, opts.prune, &opts.only)?,
        };
        let rendered = crate::render::text(
            &plan,
            crate::render::TextOptions {
                color: true,
                verbose: opts.verbose,
                drift: false,
            },
        );
        anstream::stdout()
            .lock()
            .write_all(rendered.as_bytes())
            .context("writing to stdout")?;
        let refused: Vec<String> = plan
            .guard_violations
            .iter()
            .filter(|g| !(matches!(g, Guard::EmptyPrune { .. }) && opts.allow_empty_prune))
            .map(|g| g.to_string())
            .collect();
        if !refused.is_empty() {
            anyhow::bail!("refusing to apply: {}; nothing was changed", refused.join("; "));
        }
        if plan.actions.is_empty() {
            writeln!(anstream::stdout().lock(), "\nNothing to apply.").context("writing to stdout")?;
            return Ok(ExitCode::SUCCESS);
        }
        if !opts.auto_approve {
            if !std::io::stdin().is_terminal() {
                anyhow::bail!(
                    "apply needs --auto-approve when standard input is not a terminal: nothing was changed"
                );
            }
            if !ask_confirmation(&plan)? {
                anyhow::bail!("not confirmed: nothing was changed");
            }
        }

        let on_terminal = std::io::stderr().is_terminal();
        let bar = if on_terminal {
            let bar = indicatif::ProgressBar::new(plan.actions.len() as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} [{bar:30}] {pos}/{len} {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            Some(bar)
        } else {
            None
        };
        let report = |a: &crate::plan::Action, o: &Outcome| {
            let line = match o {
                Outcome::Done { elapsed, resolved } => format!(
                    "{} {} ({} ms){}",
                    crate::apply::verb(a.action),
                    a.address,
                    elapsed.as_millis(),
                    resolved
                        .as_ref()
                        .map(|r| format!(": resolved conflict, {r}"))
                        .unwrap_or_default()
                ),
                Outcome::Failed { reason } => {
                    format!("failed to {} {}: {reason}", a.action.as_str(), a.address)
                }
                Outcome::Skipped { because } => {
                    format!("skipped {} {}: {because} failed", a.action.as_str(), a.address)
                }
                Outcome::Unsupported { reason } => {
                    format!("not attempted {}: unsupported, {reason}", a.address)
                }
            };
            match &bar {
                Some(bar) => {
                    bar.inc(1);
                    bar.set_message(a.address.to_string());
                    if !o.is_success() {
                        bar.println(line);
                    }
                }
                None => {
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
            }
        };
        let client = std::sync::Arc::new(conn.client);
        let outcomes = crate::apply::execute(
            std::sync::Arc::clone(&client),
            &plan,
            &current,
            crate::apply::ExecOptions {
                parallelism: opts.parallelism,
                force_delete_buckets: opts.force_delete_buckets,
            },
            report,
        )
        .await;
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }

        let mut summary = String::new();
        let done = outcomes.iter().filter(|o| o.is_success()).count();
        let resolved: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Done {
                    resolved: Some(r), ..
                } => Some(format!("  {}: {r}", a.address)),
                _ => None,
            })
            .collect();
        let failed: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Failed { reason } => {
                    Some(format!("  {} {}: {reason}", a.action.as_str(), a.address))
                }
                _ => None,
            })
            .collect();
        let skipped: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Skipped { because } => Some(format!(
                    "  {} {}: depends on {because}, which failed or is unsupported",
                    a.action.as_str(),
                    a.address
                )),
                _ => None,
            })
            .collect();
        let unsupported: Vec<String> = plan
            .actions
            .iter()
            .zip(&outcomes)
            .filter_map(|(a, o)| match o {
                Outcome::Unsupported { reason } => Some(format!("  {}: {reason}", a.address)),
                _ => None,
            })
            .collect();
        let _ = writeln!(
            summary,
            "\nApply: {} done ({} resolved {}), {} failed, {} skipped, {} unsupported, {} unchanged.",
            done,
            resolved.len(),
            if resolved.len() == 1 { "conflict" } else { "conflicts" },
            failed.len(),
            skipped.len(),
            unsupported.len(),
            plan.unchanged
        );
        for (title, lines) in [
            ("Resolved conflicts:", &resolved),
            ("Failed:", &failed),
            ("Skipped:", &skipped),
            ("Not attempted (unsupported by the target):", &unsupported),
        ] {
            if !lines.is_empty() {
                let _ = writeln!(summary, "{title}");
                for l in lines {
                    let _ = writeln!(summary, "{l}");
                }
            }
        }
        anstream::stdout()
            .lock()
            .write_all(summary.as_bytes())
            .context("writing to stdout")?;
        let all_ok = plan
            .actions
            .iter()
            .zip(&outcomes)
            .all(|(a, o)| o.is_success() && a.action != ActionKind::Unsupported);
        Ok(if all_ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    })
}

/// Options of `cfgctl export`.
#[derive(Debug, Clone)]
pub struct ExportCommand {
    pub out: PathBuf,
    pub force: bool,
    pub only: Vec<crate::pattern::Pattern>,
    pub target: TargetOptions,
}

/// The files an earlier export wrote: `*.yaml` in the kinds' folders and the singleton's file.
fn previous_export(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for def in &crate::registry::KINDS {
        if def.singleton {
            let p = dir.join(format!("{}.yaml", def.path));
            if p.is_file() {
                out.push(p);
            }
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(dir.join(def.path)) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().and_then(|x| x.to_str()) == Some("yaml") && p.is_file() {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// `cfgctl export`: writes the target's state as manifests.
pub fn export(opts: ExportCommand) -> anyhow::Result<ExitCode> {
    let non_empty = std::fs::read_dir(&opts.out)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if non_empty && !opts.force {
        anyhow::bail!(
            "`{}` is not empty: pass --force to replace the manifests of an earlier export there",
            opts.out.display()
        );
    }
    runtime()?.block_on(async {
        let conn = connect(&opts.target).await?;
        let fetched = crate::state::fetch(&conn.client)
            .await
            .with_context(|| format!("reading the current state of {}", conn.name))?;
        let files = crate::export::export_files(&fetched.current, &opts.only)?;
        // With --force, files of resources that no longer exist must not linger.
        for old in previous_export(&opts.out) {
            std::fs::remove_file(&old).with_context(|| format!("removing {}", old.display()))?;
        }
        for f in &files {
            let path = opts.out.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&path, &f.text)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let mut err = anstream::stderr().lock();
        for w in &fetched.warnings {
            let _ = writeln!(err, "warning: {w}");
        }
        for def in crate::registry::KINDS
            .iter()
            .filter(|d| !fetched.caps.can_read_state(d.kind))
        {
            let _ = writeln!(
                err,
                "note: {} not exported: the target cannot list it",
                def.name
            );
        }
        let kinds: std::collections::BTreeSet<_> =
            fetched.current.resources.keys().map(|a| a.kind).collect();
        writeln!(
            anstream::stdout().lock(),
            "exported {} ({}) from {} to {}",
            plural(files.len(), "resource", "resources"),
            plural(kinds.len(), "kind", "kinds"),
            conn.name,
            opts.out.display()
        )
        .context("writing to stdout")?;
        Ok(ExitCode::SUCCESS)
    })
}
