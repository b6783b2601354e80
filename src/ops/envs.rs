//! Environments of `cfgctl.yaml` for the commands that plan (docs/environments.md): which ones
//! a command line selects ([`select`]), each one's target ([`target_for`]: its `url`, its token
//! from the variable its `token_env` names), the manifests of several loaded once for all
//! ([`SharedLoad`]) and several plans run at once in one runtime ([`plan_each`]), one failure
//! never stopping the others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::config::environments::Environment;
use crate::render::environments::EnvStage;

use super::load::SharedLoad;
use super::{PlanRequest, Planned, TargetSettings};

/// Why the environments of a command line cannot be worked on (nothing is read or sent).
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{flag}: {} declares no environments (docs/environments.md)", .file.display())]
    NoneDeclared { flag: String, file: PathBuf },
    #[error("{} declares environments ({}): choose with --env NAME (repeatable) or --all-envs", .file.display(), .known.join(", "))]
    NoneSelected { file: PathBuf, known: Vec<String> },
    #[error("unknown environment `{}`; {} declares {}", crate::util::output::Inert(.name), .file.display(), .known.join(", "))]
    Unknown {
        name: String,
        file: PathBuf,
        known: Vec<String>,
    },
    #[error("--url (or CFGCTL_URL) names one target, but environments are selected: each environment's target is its `url` in cfgctl.yaml (unset CFGCTL_URL, or leave out --env/--all-envs)")]
    OneTarget,
    #[error("the environments `{}` and `{}` have one url, so one tenant: run together, each would change (and with --prune delete) what the other declares; give each its own url, or run them one at a time with --env: nothing was done", crate::util::output::Inert(.0), crate::util::output::Inert(.1))]
    OneTenantTwice(String, String),
    #[error("{} is not valid: nothing was done", .file.display())]
    Settings {
        file: PathBuf,
        problems: Vec<crate::config::diagnostic::Diagnostic>,
    },
}

impl EnvError {
    /// The error for the command edge: an invalid `cfgctl.yaml` with its problems, located
    /// (red team E5: `--env` printed only the file's name).
    pub fn diagnosed(self) -> anyhow::Error {
        match self {
            EnvError::Settings { file, problems } => super::Diagnosed {
                message: format!("{} is not valid: nothing was done", file.display()),
                diagnostics: problems,
            }
            .into(),
            other => other.into(),
        }
    }
}

/// The environments `--env NAME`... or `--all-envs` select in `dir`'s `cfgctl.yaml`, sorted by
/// name: `None` when neither flag is given and the file declares none (a command as before
/// environments). Declared environments and no flag is an error naming them and the flags.
pub fn select(
    dir: &Path,
    names: &[String],
    all: bool,
) -> Result<Option<Vec<Environment>>, EnvError> {
    let file = dir.join(crate::config::settings::FILE_NAME);
    let flagged = all || !names.is_empty();
    let declared = match std::fs::read_to_string(&file) {
        Err(_) => Default::default(),
        Ok(text) => match crate::config::settings::parse(&file, &text) {
            Ok(settings) => settings.environments,
            // The load reports the settings' problems, located.
            Err(_) if !flagged => return Ok(None),
            Err(problems) => return Err(EnvError::Settings { file, problems }),
        },
    };
    let known: Vec<String> = declared.keys().cloned().collect();
    if declared.is_empty() {
        if !flagged {
            return Ok(None);
        }
        let flag = match names.first() {
            Some(name) => format!("--env {}", crate::util::output::Inert(name)),
            None => "--all-envs".to_string(),
        };
        return Err(EnvError::NoneDeclared { flag, file });
    }
    if !flagged {
        return Err(EnvError::NoneSelected { file, known });
    }
    if all {
        return Ok(Some(declared.into_values().collect()));
    }
    let asked: BTreeSet<&String> = names.iter().collect();
    asked
        .into_iter()
        .map(|name| {
            declared
                .get(name)
                .cloned()
                .ok_or_else(|| EnvError::Unknown {
                    name: name.clone(),
                    file: file.clone(),
                    known: known.clone(),
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Several environments run at once, each against its own tenant: two that name one URL
/// (`https://t` and `https://t/`) would write one tenant together, and with `--prune` each
/// would delete what only the other declares (red team E12).
pub fn refuse_one_tenant_twice(selected: &[Environment]) -> Result<(), EnvError> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for env in selected {
        let Some(url) = &env.url else { continue };
        let key = url.trim().trim_end_matches('/').to_ascii_lowercase();
        if let Some(first) = seen.insert(key, &env.name) {
            return Err(EnvError::OneTenantTwice(first.into(), env.name.clone()));
        }
    }
    Ok(())
}

/// Refuses a single target (`--url`) given beside environments: which one would be meant is
/// not clear. A token given for one target (`--token`, `CFGCTL_TOKEN`) is never sent to an
/// environment's target: each environment's token is its `token_env`'s.
pub fn refuse_one_target(base: &TargetSettings) -> Result<(), EnvError> {
    if base.url.is_some() && base.local.is_none() {
        return Err(EnvError::OneTarget);
    }
    Ok(())
}

/// Why an environment has no target: printable (it never holds a token).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("the environment `{}` has no `url` in cfgctl.yaml", crate::util::output::Inert(.0))]
    NoUrl(String),
    #[error("{}", no_token(.var, .env))]
    NoToken { var: String, env: String },
}

/// The message of an unset `token_env` variable: its name only when it looks like one
/// (capitals, digits, `_`); anything else may be a token pasted where its variable's name
/// belongs, and is not printed (red team E2: a `ghp_…` token was echoed by every command).
fn no_token(var: &str, env: &str) -> String {
    let env = crate::util::output::Inert(env);
    let named = var
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if named {
        let var = crate::util::output::Inert(var);
        format!("the variable `{var}` (token_env of the environment `{env}`) is not set")
    } else {
        format!(
            "the variable that token_env of the environment `{env}` names is not set; its name is not shown, since it does not look like a variable's name (capitals, digits, `_`) and may be a token itself: token_env holds the NAME of the variable that holds the token"
        )
    }
}

/// The target of one environment, from the command line's settings (`base`: timeouts,
/// retries, limits): its `url` and the token read from its `token_env` variable (registered
/// as a secret at once); none when it names no variable or the variable is empty. With `--local[=PATH]` each
/// environment has its own local tenant, `PATH` with the environment's name before its
/// extension (`.cfgctl/local.staging.db`).
pub fn target_for(base: &TargetSettings, env: &Environment) -> Result<TargetSettings, TargetError> {
    if let Some(local) = &base.local {
        return Ok(TargetSettings {
            url: None,
            token: None,
            local: Some(local_store(local, &env.name)),
            ..base.clone()
        });
    }
    let Some(url) = env.url.clone() else {
        return Err(TargetError::NoUrl(env.name.clone()));
    };
    crate::util::output::register_url_secrets(&url);
    // Unset (or not Unicode) is a failure; set but empty is no token, as an empty
    // `CFGCTL_TOKEN` is.
    let token = match &env.token_env {
        None => None,
        Some(var) => {
            let Ok(value) = std::env::var(var) else {
                return Err(TargetError::NoToken {
                    var: var.clone(),
                    env: env.name.clone(),
                });
            };
            let value = value.trim();
            crate::util::output::register_secret(value);
            Some(value.to_string()).filter(|t| !t.is_empty())
        }
    };
    Ok(TargetSettings {
        url: Some(url),
        token,
        local: None,
        ..base.clone()
    })
}

/// `.cfgctl/local.db` for `staging`: `.cfgctl/local.staging.db`.
fn local_store(path: &Path, env: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{env}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{env}"),
    };
    path.with_file_name(name)
}

/// One environment's plan, or what stopped it (and where, when known).
pub struct EnvOutcome {
    pub name: String,
    /// The environment's target as `cfgctl.yaml` names it.
    pub url: Option<String>,
    pub planned: Result<Planned, anyhow::Error>,
    pub stage: Option<EnvStage>,
}

/// Plans every environment at once in this runtime (each its own connection, connection pool
/// and throttle), the manifests loaded once for all: one environment's failure is its
/// outcome and never stops the others. `requests` are the environments' requests, or why
/// an environment has no target; outcomes come back in the same order.
pub async fn plan_each(
    dir: &Path,
    requests: Vec<(Environment, Result<PlanRequest, TargetError>)>,
) -> Vec<EnvOutcome> {
    let planned: Vec<String> = requests
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(e, _)| e.name.clone())
        .collect();
    // Lean when no environment's plan keeps its manifests (each reads back what it needs).
    let lean = requests
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok())
        .all(PlanRequest::loads_lean);
    let shared = SharedLoad::new(dir, planned, lean);
    let runs = requests.into_iter().map(|(env, request)| {
        let shared = shared.clone();
        async move {
            let (planned, stage) = match request {
                Err(e) => (Err(e.into()), Some(EnvStage::Connecting)),
                Ok(req) => {
                    let planned = super::plan::plan_sharing(&req, Some(&shared)).await;
                    let stage = planned
                        .as_ref()
                        .err()
                        .and_then(|e| stage_of(e, shared.failed(&env.name)));
                    (planned, stage)
                }
            };
            EnvOutcome {
                name: env.name,
                url: env.url,
                planned,
                stage,
            }
        }
    });
    futures_util::future::join_all(runs).await
}

/// Where a plan stopped, from its error: its load (`loaded_failed`, or a load error), its
/// connection (the target unreachable, a URL or token refused: 401, 403), the reading of its
/// state, or the planner's located problems.
pub fn stage_of(err: &anyhow::Error, load_failed: bool) -> Option<EnvStage> {
    use crate::remote::client::ClientError;
    if load_failed {
        return Some(EnvStage::Loading);
    }
    for cause in err.chain() {
        if cause.downcast_ref::<crate::manifest::LoadError>().is_some() {
            return Some(EnvStage::Loading);
        }
        if let Some(e) = cause.downcast_ref::<ClientError>() {
            return Some(match e {
                ClientError::InvalidUrl { .. }
                | ClientError::NoScheme { .. }
                | ClientError::InsecureHttp { .. }
                | ClientError::ApiPath { .. }
                | ClientError::Transport { .. }
                | ClientError::Unreachable { .. }
                | ClientError::Status {
                    status: 401 | 403, ..
                } => EnvStage::Connecting,
                _ => EnvStage::Reading,
            });
        }
        if cause.downcast_ref::<super::Diagnosed>().is_some() {
            return Some(EnvStage::Planning);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Loaded;
    use std::sync::Arc;

    fn repo(settings: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cfgctl.yaml"), settings).unwrap();
        dir
    }

    fn names(selected: Option<Vec<Environment>>) -> Option<Vec<String>> {
        selected.map(|envs| envs.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn selection_follows_the_flags_and_the_declared_environments() {
        let two = repo("environments:\n  staging: {url: https://s.example.com}\n  prod: {}\n");
        let d = two.path();
        let s = |n: &[&str], all| {
            let n: Vec<String> = n.iter().map(|n| n.to_string()).collect();
            select(d, &n, all).map(names).map_err(|e| e.to_string())
        };
        assert_eq!(
            s(&[], true),
            Ok(Some(vec!["prod".into(), "staging".into()]))
        );
        assert_eq!(
            s(&["staging", "prod", "staging"], false),
            Ok(Some(vec!["prod".into(), "staging".into()]))
        );
        let file = d.join("cfgctl.yaml");
        assert_eq!(
            s(&[], false),
            Err(format!("{} declares environments (prod, staging): choose with --env NAME (repeatable) or --all-envs", file.display()))
        );
        assert_eq!(
            s(&["qa"], false),
            Err(format!(
                "unknown environment `qa`; {} declares prod, staging",
                file.display()
            ))
        );
        let none = repo("max_deletes: 3\n");
        let d = none.path();
        assert_eq!(select(d, &[], false).map(names).ok(), Some(None));
        let err = select(d, &["prod".into()], false).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "--env prod: {} declares no environments (docs/environments.md)",
                d.join("cfgctl.yaml").display()
            )
        );
    }

    #[test]
    fn an_environment_target_takes_its_url_and_its_token_variable() {
        let base = TargetSettings {
            url: None,
            token: Some("one-target-token".into()),
            local: None,
            timeout: std::time::Duration::from_secs(1),
            max_retries: 0,
            insecure_http: false,
            max_pages: 1,
            max_response_bytes: 1,
        };
        let env = |url: Option<&str>, var: Option<&str>| Environment {
            name: "staging".into(),
            url: url.map(str::to_string),
            token_env: var.map(str::to_string),
            vars: Default::default(),
            overlay: None,
            overlay_pos: crate::util::yaml::Pos::new(1, 1),
        };
        assert_eq!(
            target_for(&base, &env(None, None)).unwrap_err().to_string(),
            "the environment `staging` has no `url` in cfgctl.yaml"
        );
        let var = "CFGCTL_ENVS_TEST_UNSET_TOKEN_VARIABLE";
        assert_eq!(
            target_for(&base, &env(Some("https://s.example.com"), Some(var)))
                .unwrap_err()
                .to_string(),
            format!("the variable `{var}` (token_env of the environment `staging`) is not set")
        );
        // A token pasted where the variable's name belongs is never printed (red team E2).
        let pasted = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
        let said = target_for(&base, &env(Some("https://s.example.com"), Some(pasted)))
            .unwrap_err()
            .to_string();
        assert!(
            !said.contains(pasted) && !said.contains("16C7e42"),
            "{said}"
        );
        assert!(
            said.contains("token_env holds the NAME of the variable"),
            "{said}"
        );
        // No token_env: no token, and never the single target's.
        let t = target_for(&base, &env(Some("https://s.example.com"), None)).unwrap();
        assert_eq!(
            (t.url.as_deref(), t.token),
            (Some("https://s.example.com"), None)
        );
        let local = TargetSettings {
            local: Some(".cfgctl/local.db".into()),
            ..base
        };
        let t = target_for(&local, &env(None, None)).unwrap();
        assert_eq!(t.local, Some(PathBuf::from(".cfgctl/local.staging.db")));
    }

    /// A Team read alike in every environment (`plain.yaml`) and one named by `${var:name}`
    /// (`vars.yaml`).
    fn write_teams(d: &Path) {
        std::fs::write(
            d.join("plain.yaml"),
            "api_version: v1/config\nkind: Team\nspec: {slug: plain, name: Plain}\n",
        )
        .unwrap();
        std::fs::write(
            d.join("vars.yaml"),
            "api_version: v1/config\nkind: Team\nspec:\n  slug: named\n  name: ${var:name}\n",
        )
        .unwrap();
    }

    #[test]
    fn a_shared_load_parses_once_digests_once_and_names_a_failed_environment() {
        let dir =
            repo("environments:\n  a: {vars: {name: Alpha}}\n  b: {vars: {name: Beta}}\n  c: {}\n");
        let d = dir.path();
        write_teams(d);
        let shared = SharedLoad::new(d, vec!["a".into(), "b".into(), "c".into()], false);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (a, b, c) = runtime.block_on(async {
            let a = shared.take("a").await.unwrap().unwrap();
            let b = shared.take("b").await.unwrap().unwrap();
            (a, b, shared.take("c").await)
        });
        // `c` has no `name`: its load fails, and only its.
        let err = c.unwrap_err().to_string();
        assert!(err.starts_with("1 error in the manifests under"), "{err}");
        assert!(shared.failed("c") && !shared.failed("a") && !shared.failed("b"));
        let spec = |l: &Loaded, slug: &str| {
            let m = l
                .manifests
                .iter()
                .find(|m| m.slug.as_deref() == Some(slug))
                .unwrap();
            (Arc::clone(&m.spec), m.digest.get().copied())
        };
        // The file without `${` is one spec for both, digested once; the other differs.
        let (pa, da) = spec(&a, "plain");
        let (pb, db) = spec(&b, "plain");
        assert!(Arc::ptr_eq(&pa, &pb));
        assert!(da.is_some() && da == db);
        let (na, nda) = spec(&a, "named");
        let (nb, ndb) = spec(&b, "named");
        assert_eq!(
            (na["name"].as_str(), nb["name"].as_str()),
            (Some("Alpha"), Some("Beta"))
        );
        assert!(nda.is_some() && ndb.is_some() && nda != ndb);
    }

    /// A lean shared load (no plan keeps its manifests) hands each environment manifests
    /// without their specs, with the digests the full shared load works out.
    #[test]
    fn a_lean_shared_load_keeps_digests_not_specs() {
        let dir = repo("environments:\n  a: {vars: {name: Alpha}}\n  b: {vars: {name: Beta}}\n");
        let d = dir.path();
        write_teams(d);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let loads = |lean: bool| {
            let shared = SharedLoad::new(d, vec!["a".into(), "b".into()], lean);
            runtime.block_on(async {
                let a = shared.take("a").await.unwrap().unwrap();
                let b = shared.take("b").await.unwrap().unwrap();
                [a, b]
            })
        };
        let digests = |loads: &[Loaded; 2]| -> Vec<(String, bool, Option<[u8; 16]>)> {
            loads
                .iter()
                .flat_map(|l| &l.manifests)
                .map(|m| {
                    (
                        m.address().to_string(),
                        m.is_lean(),
                        m.digest.get().copied(),
                    )
                })
                .collect()
        };
        let (lean, full) = (digests(&loads(true)), digests(&loads(false)));
        assert_eq!(lean.len(), 4);
        for (l, f) in lean.iter().zip(&full) {
            assert_eq!((&l.0, l.1, f.1), (&f.0, true, false));
            assert!(l.2.is_some() && l.2 == f.2, "{}", l.0);
        }
    }

    #[test]
    fn a_local_store_per_environment() {
        assert_eq!(
            local_store(Path::new(".cfgctl/local.db"), "staging"),
            Path::new(".cfgctl/local.staging.db")
        );
        assert_eq!(
            local_store(Path::new("store"), "prod"),
            Path::new("store.prod")
        );
    }
}
