//! The command line resolved into the commands' settings (after uv's `settings.rs`): one
//! function per command, the one place where clap's types become `commands::*Settings` and
//! `ops` requests. What a command keeps of its plan (`ops::Keep`) is decided here too, with
//! the rest of its request, and so are the targets of `plan`, `drift` and `apply`
//! ([`Targets`]: the environments selected), so that a command's settings go down once.

use super::command::{
    ApplyArgs, DriftArgs, ExportArgs, GraphArgs, ImportCommand, PlanArgs, PullArgs, SchemaArgs,
    ServeArgs, ValidateArgs,
};
use super::{CacheArgs, GlobalArgs, OnOff, TargetArgs};
use crate::cli::commands::{
    ApplySettings, ExportSettings, GraphSettings, ImportSettings, ImportSource, PlanSettings,
    PullSettings, SchemaSettings, ServeSettings, ValidateSettings,
};
use crate::ops::{self, Keep, PlanRequest, TargetSettings};

/// The target options as the commands take them (the token read, the bounds at least 1).
pub fn target(args: &TargetArgs) -> anyhow::Result<TargetSettings> {
    Ok(TargetSettings {
        url: args.url.clone().filter(|u| !u.trim().is_empty()),
        token: ops::resolve_token(args.token.as_deref(), args.token_file.as_deref())?,
        local: args.local.clone(),
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
        max_retries: args.max_retries,
        insecure_http: args.insecure_http,
        max_pages: args.max_pages.max(1),
        max_response_bytes: args.max_response_mb.max(1).saturating_mul(1 << 20),
    })
}

/// A plan request with nothing kept but the plan, no dry run, no memo.
fn request(args: &TargetArgs, dir: std::path::PathBuf) -> anyhow::Result<PlanRequest> {
    Ok(PlanRequest {
        target: target(args)?,
        dir,
        environment: None,
        prune: false,
        only: vec![],
        server_validate: false,
        drift: false,
        cache: None,
        base: None,
        keep: Keep::default(),
    })
}

pub fn validate(args: ValidateArgs, global: &GlobalArgs) -> ValidateSettings {
    ValidateSettings {
        dir: args.dir,
        github_annotations: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
        quiet: global.quiet,
        envs: args.envs.envs,
        all_envs: args.envs.all_envs,
    }
}

/// The targets a command line names (docs/environments.md): one (its own, or the one
/// environment `--env`/`--all-envs` select, in the command's request) or several environments
/// at once, each its own target.
#[derive(Debug)]
pub enum Targets<S> {
    One(S),
    Several(S, Vec<crate::config::environments::Environment>),
}

/// What `plan` and `drift` plan.
pub type Planning = Targets<PlanSettings>;

/// What `apply` applies: a saved plan (its target resolved when it is read), or the
/// manifests planned now against their targets.
#[derive(Debug)]
pub enum Applying {
    Saved(ApplySettings),
    Manifests(Targets<ApplySettings>),
}

/// The environments `names`/`all` select in the `cfgctl.yaml` of the request's manifests
/// (`request` finds it in the settings): none (no flag, none declared) keeps the command
/// line's target; one is the command's target; several are planned each against its own (a
/// target named beside them refused).
fn targets<S>(
    mut settings: S,
    request: fn(&mut S) -> &mut PlanRequest,
    names: &[String],
    all: bool,
) -> anyhow::Result<Targets<S>> {
    let req = request(&mut settings);
    let Some(selected) = ops::select(&req.dir, names, all).map_err(ops::EnvError::diagnosed)?
    else {
        return Ok(Targets::One(settings));
    };
    ops::refuse_one_target(&req.target)?;
    match <[_; 1]>::try_from(selected) {
        Ok([env]) => {
            *req = req.for_environment(&env)?;
            Ok(Targets::One(settings))
        }
        Err(several) => {
            if req.target.local.is_none() {
                ops::refuse_one_tenant_twice(&several)?;
            }
            Ok(Targets::Several(settings, several))
        }
    }
}

/// `plan` keeps the manifests when `cfgctl.yaml` names a policy: it judges the very manifests
/// planned (`ops::policy_into_plan`), never a second load; such a plan is not remembered.
pub fn plan(args: PlanArgs, global: &GlobalArgs) -> anyhow::Result<Planning> {
    let request = request(&args.target, args.dir)?;
    let keep = Keep {
        manifests: crate::ops::policy::named_in(&request.dir),
        ..Keep::default()
    };
    let settings = PlanSettings {
        request: PlanRequest {
            prune: args.prune,
            only: args.only,
            server_validate: args.server_validate,
            cache: args.cache.dir(),
            base: args.base,
            keep,
            ..request
        },
        format: args.format.into(),
        detailed_exitcode: args.detailed_exitcode,
        out: args.out,
        verbose: global.verbose > 0,
        secret_dir: args.cache.secret_dir(),
    };
    targets(
        settings,
        |s| &mut s.request,
        &args.envs.envs,
        args.envs.all_envs,
    )
}

/// `drift` is a plan without prune or `--only`, reported as drift (exit 2 on drift).
pub fn drift(args: DriftArgs, global: &GlobalArgs) -> anyhow::Result<Planning> {
    let settings = PlanSettings {
        request: PlanRequest {
            drift: true,
            cache: args.cache.dir(),
            base: args.base,
            ..request(&args.target, args.dir)?
        },
        format: args.format.into(),
        detailed_exitcode: true,
        out: None,
        verbose: global.verbose > 0,
        secret_dir: args.cache.secret_dir(),
    };
    targets(
        settings,
        |s| &mut s.request,
        &args.envs.envs,
        args.envs.all_envs,
    )
}

/// `apply` keeps the manifests only for what reads them after the plan (`--rotate-secrets`,
/// and a policy, which then sees the very manifests planned); otherwise they load lean, as
/// `plan`'s, so a large repository is not held whole while its changes are sent. It keeps the
/// target's objects (the conflict rules) and the connection (it sends through it); it has no
/// plan cache of its own, but seals with the user's secret of the one written before its name.
pub fn apply(args: ApplyArgs, global: &GlobalArgs, cache: &CacheArgs) -> anyhow::Result<Applying> {
    let request = request(&args.target, args.source)?;
    let keeps_manifests =
        args.rotate_secrets.is_some() || crate::ops::policy::named_in(&request.dir);
    let opts = ApplySettings {
        request: PlanRequest {
            prune: args.prune,
            only: args.only,
            base: args.base,
            keep: Keep {
                manifests: keeps_manifests,
                current: true,
                connection: true,
            },
            ..request
        },
        auto_approve: args.auto_approve,
        allow_empty_prune: args.allow_empty_prune,
        force_delete_buckets: args.force_delete_buckets,
        max_deletes: args.max_deletes,
        rotate_secrets: args.rotate_secrets.map(|p| p.into_iter().collect()),
        service_account_tokens: args.service_account_tokens,
        secret_dir: cache.secret_dir(),
        parallelism: args.target.parallelism.max(1),
        verbose: global.verbose > 0,
        envs: args.envs.envs,
        all_envs: args.envs.all_envs,
        reviewed: args.reviewed,
    };
    let from_file = opts.request.dir.is_file();
    // Neither a saved plan nor a directory (red team E18: "directory `x.plan` does not exist").
    if !opts.request.dir.exists() {
        anyhow::bail!(
            "{} does not exist: apply takes a saved plan (plan --out FILE) or a directory of manifests; nothing was changed",
            opts.request.dir.display()
        );
    }
    refuse_before_anything(&opts, from_file)?;
    if from_file {
        return Ok(Applying::Saved(opts));
    }
    let (names, all) = (opts.envs.clone(), opts.all_envs);
    let reviewed = opts.reviewed.is_some();
    match targets(opts, |o| &mut o.request, &names, all)? {
        Targets::Several(..) if reviewed => anyhow::bail!(
            "--reviewed holds one plan: apply one environment at a time (--env NAME): nothing was changed"
        ),
        targets => Ok(Applying::Manifests(targets)),
    }
}

/// What `apply` refuses before it reads or sends anything.
fn refuse_before_anything(opts: &ApplySettings, from_file: bool) -> anyhow::Result<()> {
    if let Some(path) = &opts.service_account_tokens {
        // Refused before anything is sent: the file is never overwritten.
        if path.symlink_metadata().is_ok() {
            anyhow::bail!(
                "--service-account-tokens: {} exists; name a new file (it is created with mode 0600): nothing was changed",
                path.display()
            );
        }
    }
    if from_file && opts.reviewed.is_some() {
        anyhow::bail!("--reviewed holds a fresh plan of a directory to a reviewed one; a saved plan is applied as it is: nothing was changed");
    }
    if from_file && opts.request.base.is_some() {
        anyhow::bail!("--base compares the manifests of a directory with a revision; a saved plan was compared when it was made (plan --base): nothing was changed");
    }
    if from_file && opts.rotate_secrets.is_some() {
        anyhow::bail!("--rotate-secrets needs the manifests (a directory), not a saved plan: nothing was changed");
    }
    // What a plan is made of was decided when it was saved (red team E9: these were accepted
    // and the whole saved plan applied).
    if from_file && !opts.request.only.is_empty() {
        anyhow::bail!("--only chooses what a plan of a directory holds; a saved plan is applied whole (make it with plan --only ... --out FILE): nothing was changed");
    }
    if from_file && opts.request.prune {
        anyhow::bail!("--prune decides a plan's deletes when it is made; a saved plan holds its own (make it with plan --prune --out FILE): nothing was changed");
    }
    if from_file && opts.request.server_validate {
        anyhow::bail!("--server-validate checks a plan as it is made; a saved plan was checked when it was made (plan --server-validate --out FILE): nothing was changed");
    }
    Ok(())
}

pub fn schema(args: SchemaArgs) -> SchemaSettings {
    SchemaSettings {
        out: args.out,
        settings: args.settings,
    }
}

/// `graph` draws one plan: with environments, one environment's (against its own target).
pub fn graph(args: GraphArgs) -> anyhow::Result<GraphSettings> {
    if args.envs.all_envs || args.envs.envs.len() > 1 {
        anyhow::bail!("graph draws one environment's plan at a time: pass one --env NAME");
    }
    let settings = GraphSettings {
        request: PlanRequest {
            prune: args.prune,
            only: args.only,
            ..request(&args.target, args.dir)?
        },
        format: args.format.into(),
    };
    match targets(settings, |s| &mut s.request, &args.envs.envs, false)? {
        Targets::One(settings) => Ok(settings),
        Targets::Several(..) => {
            anyhow::bail!("graph draws one environment's plan at a time: pass one --env NAME")
        }
    }
}

/// `pull` never prunes; it keeps the manifests and the target's objects (what it merges).
/// It pulls one environment at a time: a value of the base pulled from two targets would
/// be written twice, differently.
pub fn pull(args: PullArgs) -> anyhow::Result<PullSettings> {
    if args.envs.all_envs || args.envs.envs.len() > 1 {
        anyhow::bail!(
            "pull writes one environment at a time (the base files are shared, and two targets may disagree on them): pass one --env NAME"
        );
    }
    let request = PlanRequest {
        only: args.only,
        keep: Keep {
            manifests: true,
            current: true,
            connection: false,
        },
        ..request(&args.target, args.dir)?
    };
    // `--env NAME`: that environment's manifests against its target (`ops::target_for`).
    let request = match args.envs.envs.first() {
        None => request,
        Some(name) => {
            let env = ops::select(&request.dir, std::slice::from_ref(name), false)
                .map_err(ops::EnvError::diagnosed)?
                .and_then(|envs| envs.into_iter().next())
                .ok_or_else(|| anyhow::anyhow!("no environment selected"))?;
            request.for_environment(&env)?
        }
    };
    Ok(PullSettings {
        request,
        include_unmanaged: args.include_unmanaged,
    })
}

pub fn export(args: ExportArgs) -> anyhow::Result<ExportSettings> {
    Ok(ExportSettings {
        out: args.out,
        force: args.force,
        dashboards_as_files: args.dashboards_as_files,
        only: args.only,
        target: target(&args.target)?,
        dir: args.dir,
        envs: args.envs.envs,
        all_envs: args.envs.all_envs,
    })
}

/// `import`: the command line is kept for the report's heading, as a user would type it
/// (without `--out`: the same input gives the same report wherever it is written).
pub fn import(command: ImportCommand) -> ImportSettings {
    match command {
        ImportCommand::Prometheus(args) => {
            let mut line = vec!["cfgctl import prometheus".to_string()];
            line.extend(args.inputs.iter().map(|p| p.display().to_string()));
            for (flag, value) in [
                ("--bucket", args.bucket.clone()),
                ("--collection", args.collection.clone()),
                (
                    "--alertmanager",
                    args.alertmanager.as_ref().map(|p| p.display().to_string()),
                ),
                ("--team", args.team.clone()),
            ] {
                if let Some(v) = value {
                    line.push(format!("{flag} {v}"));
                }
            }
            ImportSettings {
                out: args.out,
                force: args.force,
                source: ImportSource::Prometheus(crate::cli::commands::PrometheusSettings {
                    inputs: args.inputs,
                    alertmanager: args.alertmanager,
                    bucket: args.bucket,
                    collection: args.collection,
                    team: args.team,
                    command: line.join(" "),
                }),
            }
        }
        ImportCommand::Grafana(args) => {
            let mut line = vec!["cfgctl import grafana".to_string()];
            line.extend(args.inputs.iter().map(|p| p.display().to_string()));
            for (flag, value) in [
                ("--bucket", &args.bucket),
                ("--collection", &args.collection),
            ] {
                if let Some(v) = value {
                    line.push(format!("{flag} {v}"));
                }
            }
            ImportSettings {
                out: args.out,
                force: args.force,
                source: ImportSource::Grafana(crate::cli::commands::GrafanaSettings {
                    inputs: args.inputs,
                    bucket: args.bucket,
                    collection: args.collection,
                    command: line.join(" "),
                }),
            }
        }
    }
}

pub fn serve(args: ServeArgs) -> anyhow::Result<ServeSettings> {
    Ok(ServeSettings {
        listen: args.listen,
        config: crate::emulator::Config {
            data: args.data,
            token: ops::resolve_token(args.token.as_deref(), args.token_file.as_deref())?,
            profile: args.profile.into(),
            page_size: args.page_size,
            faults: args.faults.unwrap_or_default(),
            server_defaults: args.server_defaults == OnOff::On,
            redact_secrets: args.redact_secrets == OnOff::On,
            swagger: args.swagger,
            rate_limit: args.rate_limit,
            ..crate::emulator::Config::default()
        },
    })
}
