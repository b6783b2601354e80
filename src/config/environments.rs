//! `environments:` in `cfgctl.yaml` (docs/environments.md): one repository, several tenants.
//!
//! ```yaml
//! environments:
//!   staging:
//!     url: https://staging.example.com
//!     token_env: STAGING_API_TOKEN
//!     vars: {region: eu, min_replicas: 1}
//!     overlay: envs/staging
//! ```
//!
//! `settings` reads that mapping (checked by the settings schema, every problem located); the
//! loader substitutes `${var:NAME}` (`manifest::vars`) and merges the overlay
//! (`manifest::overlay`) for one environment at a time.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::util::yaml::Pos;

/// A variable's value: a scalar of `cfgctl.yaml`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum Scalar {
    String(String),
    Number(serde_json::Number),
    Bool(bool),
}

impl Scalar {
    /// The value put where a whole plain `${var:NAME}` was.
    pub fn to_value(&self) -> Value {
        match self {
            Scalar::String(s) => Value::String(s.clone()),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::Bool(b) => Value::Bool(*b),
        }
    }

    /// The text put where `${var:NAME}` is part of a string (or quoted).
    pub fn to_text(&self) -> String {
        match self {
            Scalar::String(s) => s.clone(),
            Scalar::Number(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// One declared environment.
#[derive(Clone, Debug, PartialEq)]
pub struct Environment {
    pub name: String,
    pub url: Option<String>,
    /// The name of the variable that holds this tenant's API token.
    pub token_env: Option<String>,
    pub vars: BTreeMap<String, Scalar>,
    /// The overlay directory, relative to the manifest directory and inside it.
    pub overlay: Option<PathBuf>,
    /// Where `overlay:` is written in `cfgctl.yaml` (a missing directory is reported there).
    pub overlay_pos: Pos,
}

/// Registers the token of every environment whose `token_env` is set as a secret, whichever
/// environments the command runs: a manifest may name another environment's token variable
/// (`${env:PROD_TOKEN}`) in a printed field, and `--env staging` must not show it. Called
/// where `cfgctl.yaml` is read (`settings`: the document as read, whatever else is wrong
/// with it), so that no command can read the file and miss it. The environments' names are
/// registered as public: shown even where one starts a token (red team E3).
pub(crate) fn register_tokens(settings: &Value) {
    let environments = settings.get("environments").and_then(Value::as_object);
    for name in environments.into_iter().flat_map(|e| e.keys()) {
        crate::util::output::register_public(name);
    }
    let names = environments.into_iter().flat_map(|e| e.values());
    for var in names.filter_map(|e| e.get("token_env")?.as_str()) {
        if let Ok(token) = std::env::var(var) {
            crate::util::output::register_secret(&token);
        }
    }
}

/// The variables that hold cfgctl's own API tokens, each with whose it is: every environment's
/// `token_env` and `CFGCTL_TOKEN` (`--token`). A manifest never reads them (`manifest::vars`).
pub fn token_variables(environments: &BTreeMap<String, Environment>) -> Vec<(String, String)> {
    let mut out = vec![("CFGCTL_TOKEN".to_string(), "`--token`".to_string())];
    for (name, env) in environments {
        if let Some(var) = &env.token_env {
            out.push((var.clone(), format!("environment `{name}`")));
        }
    }
    out
}

/// An environment's overlay directory inside another's (`envs/prod/canary` in `envs/prod`):
/// the outer one's files are read recursively, so its environment would take the inner one's
/// patches too (red team E1). Each is an error at the inner `overlay:`.
pub(crate) fn nested_overlays(
    file: &Path,
    environments: &BTreeMap<String, Environment>,
) -> Vec<crate::config::diagnostic::Diagnostic> {
    let overlays: Vec<(&Environment, &PathBuf)> = environments
        .values()
        .filter_map(|e| Some((e, e.overlay.as_ref()?)))
        .collect();
    let mut out = Vec::new();
    for (inner, inner_dir) in &overlays {
        let outer = overlays
            .iter()
            .find(|(_, dir)| inner_dir != dir && inner_dir.starts_with(dir));
        if let Some((outer, outer_dir)) = outer {
            out.push(crate::config::diagnostic::Diagnostic::error(
                file,
                inner.overlay_pos,
                crate::config::diagnostic::Problem::Settings(format!(
                    "environment `{}`: its overlay `{}` is inside `{}`, the overlay of `{}`, whose files are all read for `{}` too: give each environment a folder of its own (such as `envs/{}`)",
                    inner.name,
                    inner_dir.display(),
                    outer_dir.display(),
                    outer.name,
                    outer.name,
                    inner.name
                )),
            ));
        }
    }
    out
}

/// A relative path with only normal components (no `..`, no root): inside the repository.
pub(crate) fn overlay_dir(text: &str) -> Option<PathBuf> {
    let path = Path::new(text.trim_end_matches('/'));
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (BTreeMap<String, Environment>, Vec<String>) {
        match crate::config::settings::parse(Path::new("cfgctl.yaml"), text) {
            Ok(s) => (s.environments, vec![]),
            Err(d) => (BTreeMap::new(), d.iter().map(|d| d.to_string()).collect()),
        }
    }

    #[test]
    fn full_form() {
        let (envs, errors) = read(
            "environments:\n  staging:\n    url: https://staging.example.com\n    token_env: STAGING_API_TOKEN\n    vars: {region: eu, min_replicas: 1, on: true}\n    overlay: envs/staging/\n  prod: {}\n",
        );
        assert_eq!(errors, Vec::<String>::new());
        let staging = &envs["staging"];
        assert_eq!(staging.url.as_deref(), Some("https://staging.example.com"));
        assert_eq!(staging.token_env.as_deref(), Some("STAGING_API_TOKEN"));
        assert_eq!(staging.overlay, Some(PathBuf::from("envs/staging")));
        assert_eq!(staging.overlay_pos, Pos::new(6, 14));
        assert_eq!(staging.vars["region"], Scalar::String("eu".into()));
        assert_eq!(staging.vars["min_replicas"], Scalar::Number(1.into()));
        assert_eq!(staging.vars["on"], Scalar::Bool(true));
        assert_eq!(envs["prod"].vars, BTreeMap::new());
    }

    #[test]
    fn located_errors() {
        let (_, errors) = read(
            "environments:\n  Staging: {}\n  prod:\n    overlay: ../elsewhere\n    vars: {a: [1]}\n    tokn_env: X\n",
        );
        assert_eq!(
            errors,
            vec![
                "cfgctl.yaml:2:3: error: invalid settings file: environment name `Staging`: use lower-case letters, digits, `-` and `_`, starting with a letter or digit",
                "cfgctl.yaml:4:14: error: invalid settings file: `environments.prod.overlay`: \"../elsewhere\" must be a directory inside the repository, relative to it (no `..`, not absolute)",
                "cfgctl.yaml:5:15: error: invalid settings file: `environments.prod.vars`: `a` must be a string, number or boolean, found a list",
                "cfgctl.yaml:6:5: error: invalid settings file: environment `prod`: unknown field `tokn_env` (did you mean `token_env`?); expected url, token_env, vars or overlay",
            ]
        );
    }

    /// One environment's overlay inside another's is refused at the inner one (red team E1:
    /// prod took canary's patches); two that share one folder are fine.
    #[test]
    fn an_overlay_inside_another_environments_overlay_is_refused() {
        let (_, errors) = read(
            "environments:\n  prod:\n    overlay: envs/prod\n  canary:\n    overlay: envs/prod/canary\n  eu: {overlay: envs/eu}\n  us: {overlay: envs/eu}\n  other: {overlay: envs/production}\n",
        );
        assert_eq!(
            errors,
            vec!["cfgctl.yaml:5:14: error: invalid settings file: environment `canary`: its overlay `envs/prod/canary` is inside `envs/prod`, the overlay of `prod`, whose files are all read for `prod` too: give each environment a folder of its own (such as `envs/canary`)"]
        );
    }
}
