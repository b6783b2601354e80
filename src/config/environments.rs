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
//! This module reads that mapping (every problem located, like the other settings); the
//! loader substitutes `${var:NAME}` (`manifest::vars`) and merges the overlay
//! (`manifest::overlay`) for one environment at a time.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::config::diagnostic::{Diagnostic, Problem};
use crate::util::yaml::{Pos, Spans};

const FIELDS: &[&str] = &["url", "token_env", "vars", "overlay"];

/// A variable's value: a scalar of `cfgctl.yaml`.
#[derive(Clone, Debug, PartialEq)]
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
/// where `cfgctl.yaml` is read, so that no command can read the file and miss it.
pub fn register_tokens(environments: &BTreeMap<String, Environment>) {
    for var in environments.values().filter_map(|e| e.token_env.as_deref()) {
        if let Ok(token) = std::env::var(var) {
            crate::util::output::register_secret(&token);
        }
    }
}

/// Whether `name` can name an environment: `[a-z0-9][a-z0-9_-]*`, usable in file names,
/// flags and report keys.
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Reads the `environments:` mapping; `spans` are the settings document's.
pub(crate) fn parse(
    file: &Path,
    spans: &Spans,
    value: &Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Environment> {
    let mut error = |pointer: &str, at_key: bool, message: String| {
        let pos = spans
            .nearest(pointer)
            .map(|s| if at_key { s.field() } else { s.value })
            .unwrap_or(Pos::new(1, 1));
        diagnostics.push(Diagnostic::error(file, pos, Problem::Settings(message)));
    };
    let mut out = BTreeMap::new();
    let Some(map) = value.as_object() else {
        error(
            "/environments",
            false,
            "`environments` must be a mapping of names to {url, token_env, vars, overlay}".into(),
        );
        return out;
    };
    for (name, item) in map {
        let at = format!(
            "/environments/{}",
            crate::util::jsonpath::escape_pointer(name)
        );
        if !is_valid_name(name) {
            error(
                &at,
                true,
                format!("environment name `{name}`: use lower-case letters, digits, `-` and `_`, starting with a letter or digit"),
            );
            continue;
        }
        let Some(fields) = item.as_object() else {
            error(
                &at,
                false,
                format!(
                    "environment `{name}` must be a mapping with url, token_env, vars or overlay"
                ),
            );
            continue;
        };
        let mut env = Environment {
            name: name.clone(),
            url: None,
            token_env: None,
            vars: BTreeMap::new(),
            overlay: None,
            overlay_pos: spans
                .get(&format!("{at}/overlay"))
                .map_or(Pos::new(1, 1), |s| s.value),
        };
        for (key, v) in fields {
            let here = format!("{at}/{}", crate::util::jsonpath::escape_pointer(key));
            let field = format!("`environments.{name}.{key}`");
            match (key.as_str(), v) {
                ("url", Value::String(s)) if !s.trim().is_empty() => env.url = Some(s.clone()),
                ("token_env", Value::String(s)) if is_variable_name(s) => {
                    env.token_env = Some(s.clone())
                }
                ("vars", Value::Object(vars)) => {
                    for (var, value) in vars {
                        let scalar = match value {
                            Value::String(s) => Scalar::String(s.clone()),
                            Value::Number(n) => Scalar::Number(n.clone()),
                            Value::Bool(b) => Scalar::Bool(*b),
                            other => {
                                error(
                                    &format!("{here}/{}", crate::util::jsonpath::escape_pointer(var)),
                                    false,
                                    format!("{field}: `{var}` must be a string, number or boolean, found {}", crate::util::jsonpath::type_name(other)),
                                );
                                continue;
                            }
                        };
                        env.vars.insert(var.clone(), scalar);
                    }
                }
                ("overlay", Value::String(s)) => match overlay_dir(s) {
                    Some(dir) => env.overlay = Some(dir),
                    None => error(
                        &here,
                        false,
                        format!("{field}: {s:?} must be a directory inside the repository, relative to it (no `..`, not absolute)"),
                    ),
                },
                ("url", _) => error(&here, false, format!("{field} must be a URL")),
                ("token_env", _) => error(
                    &here,
                    false,
                    format!("{field} must be the name of an environment variable (letters, digits, `_`)"),
                ),
                ("vars", _) => error(
                    &here,
                    false,
                    format!("{field} must be a mapping of names to strings, numbers or booleans"),
                ),
                ("overlay", _) => error(&here, false, format!("{field} must be a directory")),
                (other, _) => {
                    let known: Vec<String> = FIELDS.iter().map(|s| s.to_string()).collect();
                    let hint = crate::util::jsonpath::closest(other, &known)
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    error(
                        &here,
                        true,
                        format!("environment `{name}`: unknown field `{other}`{hint}; expected url, token_env, vars or overlay"),
                    );
                }
            }
        }
        out.insert(name.clone(), env);
    }
    out
}

fn is_variable_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A relative path with only normal components (no `..`, no root): inside the repository.
fn overlay_dir(text: &str) -> Option<PathBuf> {
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
}
