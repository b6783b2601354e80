//! The optional project settings file, `cfgctl.yaml` at the root of the manifest directory.
//!
//! ```yaml
//! prune: ["Dashboard/*"]        # resources the repository owns (deleted with --prune)
//! exclude: ["Bucket/legacy-*"]  # never touched, never reported
//! max_deletes: 25               # apply refuses more deletes than this
//! ignore:                       # server-side fields that never show as a diff
//!   - {kind: Monitor, path: labels.generated_by}
//! manage:                       # per-resource management modes, first match wins
//!   - {match: "Dashboard/team-*", mode: create-only}
//! environments: {staging: {url: ..., vars: {...}, overlay: envs/staging}}  # docs/environments.md
//! policy: policy                # a directory of Rego rules (docs/policy.md)
//! secrets: {file_dirs: [/run/secrets]}  # where a secret field's `${file:}` may also read
//! ```
//!
//! Checked by its JSON Schema (`schema/settings.schema.json`, the checker the manifests use),
//! every problem located at its line and column, like a manifest's.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::api::registry::Kind;
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::config::pattern::Pattern;
use crate::util::jsonpath::escape_pointer;
use crate::util::yaml::{self, Pos};

mod check;

/// The settings file's name.
pub const FILE_NAME: &str = "cfgctl.yaml";

/// `max_deletes` when the file does not say.
pub const DEFAULT_MAX_DELETES: u32 = 25;

/// How far cfgctl manages a resource (`manage:` in `cfgctl.yaml`; see docs/prune.md,
/// "Management modes").
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Created, updated and (with `--prune`, inside the prune scope) deleted.
    #[default]
    Full,
    /// Created when missing, never updated: an edit on the target is no diff.
    CreateOnly,
    /// Never deleted: declared by no manifest, it is `orphaned` (kept).
    NoDelete,
    /// Never written, only compared (`drift`).
    Observe,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Full, Mode::CreateOnly, Mode::NoDelete, Mode::Observe];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::CreateOnly => "create-only",
            Mode::NoDelete => "no-delete",
            Mode::Observe => "observe",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// A resource of this mode is never deleted.
    pub fn keeps(self) -> bool {
        matches!(self, Mode::NoDelete | Mode::Observe)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `manage:` rule: the resources its pattern matches have its mode (first match wins).
#[derive(Clone, Debug, PartialEq)]
pub struct ManageRule {
    pub pattern: Pattern,
    pub mode: Mode,
}

/// The mode of `address` under `rules`: the first matching rule's, else [`Mode::Full`].
pub fn mode_of(rules: &[ManageRule], address: &crate::api::registry::Address) -> Mode {
    rules
        .iter()
        .find(|r| r.pattern.matches(address))
        .map_or(Mode::Full, |r| r.mode)
}

/// A field the comparison skips for one kind.
#[derive(Clone, Debug, PartialEq)]
pub struct IgnoreRule {
    pub kind: Kind,
    /// Dotted path inside the spec (`labels.generated_by`).
    pub path: String,
}

/// `policy:`, the directory of Rego rules (docs/policy.md), relative to the repository.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyDir {
    /// A relative path with no `..` (it stays inside the repository).
    pub path: std::path::PathBuf,
    /// Where `policy:` is given, for problems with the directory.
    pub pos: Pos,
}

/// Project settings, defaults when there is no file.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub prune: Vec<Pattern>,
    pub exclude: Vec<Pattern>,
    pub max_deletes: u32,
    pub ignore: Vec<IgnoreRule>,
    /// A literal value in a secret field is a warning, not an error.
    pub allow_literal_secrets: bool,
    pub manage: Vec<ManageRule>,
    /// `environments:` by name (see `crate::config::environments`).
    pub environments: std::collections::BTreeMap<String, crate::config::environments::Environment>,
    pub policy: Option<PolicyDir>,
    /// `secrets.file_dirs`: directories outside the repository a secret field's `${file:…}`
    /// may read under (mounted CI secrets); relative ones are relative to the repository.
    pub secret_file_dirs: Vec<std::path::PathBuf>,
}

impl Settings {
    /// The management mode of `address` (first matching `manage` rule, else full).
    pub fn mode(&self, address: &crate::api::registry::Address) -> Mode {
        mode_of(&self.manage, address)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            prune: Vec::new(),
            exclude: Vec::new(),
            max_deletes: DEFAULT_MAX_DELETES,
            ignore: Vec::new(),
            allow_literal_secrets: false,
            manage: Vec::new(),
            environments: Default::default(),
            policy: None,
            secret_file_dirs: Vec::new(),
        }
    }
}

/// The JSON Schema of `cfgctl.yaml`, the one description of its fields: the file is checked by
/// it ([`check`]) and read into [`SettingsFile`]'s types, which
/// `settings::tests::the_schema_and_the_typed_file_agree` holds to it. `cfgctl schema
/// --settings` prints it.
pub const SCHEMA: &str = include_str!("../../schema/settings.schema.json");

/// `cfgctl.yaml` as written, once its schema let it through.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
struct SettingsFile {
    prune: Vec<String>,
    exclude: Vec<String>,
    /// A whole number written in digits (the schema's `integer`, and `check::misspelt_whole_number`
    /// for how it is written) up to `u32::MAX`.
    max_deletes: Option<u32>,
    ignore: Vec<IgnoreEntry>,
    allow_literal_secrets: bool,
    manage: Vec<ManageEntry>,
    environments: BTreeMap<String, EnvironmentEntry>,
    policy: Option<String>,
    secrets: SecretsEntry,
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
struct IgnoreEntry {
    kind: String,
    path: String,
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
struct ManageEntry {
    #[serde(rename = "match")]
    pattern: String,
    mode: Mode,
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
struct EnvironmentEntry {
    url: Option<String>,
    token_env: Option<String>,
    vars: BTreeMap<String, crate::config::environments::Scalar>,
    overlay: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
struct SecretsEntry {
    file_dirs: Vec<String>,
}

/// Reads the settings text; problems come back as located diagnostics.
pub fn parse(file: &Path, text: &str) -> Result<Settings, Vec<Diagnostic>> {
    let docs = match yaml::parse_documents(text) {
        Ok(docs) => docs,
        Err(e) => {
            return Err(vec![Diagnostic::error(
                file,
                e.pos,
                Problem::Settings(format!("invalid YAML: {}", e.message)),
            )])
        }
    };
    let Some(doc) = docs.first() else {
        return Ok(Settings::default());
    };
    crate::config::environments::register_tokens(&doc.value);
    let spans = &doc.spans;
    let at = |pointer: &str, at_key: bool| {
        spans
            .nearest(pointer)
            .map(|s| if at_key { s.field() } else { s.value })
            .unwrap_or(Pos::new(1, 1))
    };
    let mut diagnostics = Vec::new();
    if docs.len() > 1 {
        diagnostics.push(Diagnostic::error(
            file,
            docs[1].start,
            Problem::Settings("the settings file holds one document".into()),
        ));
    }
    let placeholders = check::placeholders(&doc.value, String::new());
    for pointer in &placeholders {
        let message = "cfgctl.yaml is not substituted: `${…}` is read only in manifests (an environment's values go in its `vars:`, its token's variable in `token_env:`)";
        diagnostics.push(Diagnostic::error(
            file,
            at(pointer, false),
            Problem::Settings(message.into()),
        ));
    }
    // A placeholder's value is not checked as the value (one error, not two).
    let problems = check::problems(&doc.value)
        .into_iter()
        .filter(|(pointer, _, _)| !placeholders.contains(pointer));
    for (pointer, at_key, message) in problems {
        let pos = at(&pointer, at_key);
        diagnostics.push(Diagnostic::error(file, pos, Problem::Settings(message)));
    }
    let environments = doc
        .value
        .get("environments")
        .and_then(serde_json::Value::as_object);
    let names = environments
        .into_iter()
        .flat_map(|e| e.keys().map(String::as_str));
    for (pos, written, read) in check::renamed_keys(text, spans, "/environments", names) {
        let message = format!(
            "the environment name `{written}` is read by YAML as `{read}`: quote it (\"{written}\")"
        );
        diagnostics.push(Diagnostic::error(file, pos, Problem::Settings(message)));
    }
    if diagnostics.is_empty() {
        if let Some((pos, found)) = check::misspelt_whole_number(text, spans.get("/max_deletes")) {
            let message = format!(
                "`max_deletes` must be a whole number written in digits, such as 25, found `{found}`"
            );
            diagnostics.push(Diagnostic::error(file, pos, Problem::Settings(message)));
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let read = SettingsFile::deserialize(&doc.value).map_err(|e| {
        vec![Diagnostic::error(
            file,
            at("", false),
            Problem::Settings(e.to_string()),
        )]
    })?;
    let settings = settings_from(read, |pointer| at(pointer, false));
    let nested = crate::config::environments::nested_overlays(file, &settings.environments);
    if !nested.is_empty() {
        return Err(nested);
    }
    Ok(settings)
}

/// The settings of a file its schema let through. What only cfgctl checks (a pattern's or an
/// ignore rule's kind, a path inside the repository) the schema's formats checked already.
fn settings_from(read: SettingsFile, at: impl Fn(&str) -> Pos) -> Settings {
    let patterns = |texts: Vec<String>| -> Vec<Pattern> {
        texts
            .iter()
            .filter_map(|p| Pattern::parse(p).ok())
            .collect()
    };
    let environments = read
        .environments
        .into_iter()
        .map(|(name, e)| {
            let overlay_pos = at(&format!("/environments/{}/overlay", escape_pointer(&name)));
            let env = crate::config::environments::Environment {
                name: name.clone(),
                url: e.url,
                token_env: e.token_env,
                vars: e.vars,
                overlay: e
                    .overlay
                    .as_deref()
                    .and_then(crate::config::environments::overlay_dir),
                overlay_pos,
            };
            (name, env)
        })
        .collect();
    Settings {
        prune: patterns(read.prune),
        exclude: patterns(read.exclude),
        max_deletes: read.max_deletes.unwrap_or(DEFAULT_MAX_DELETES),
        ignore: read
            .ignore
            .into_iter()
            .filter_map(|i| {
                let kind = Kind::from_name(&i.kind)?;
                Some(IgnoreRule { kind, path: i.path })
            })
            .collect(),
        allow_literal_secrets: read.allow_literal_secrets,
        manage: read
            .manage
            .into_iter()
            .filter_map(|m| {
                let pattern = Pattern::parse(&m.pattern).ok()?;
                Some(ManageRule {
                    pattern,
                    mode: m.mode,
                })
            })
            .collect(),
        environments,
        policy: read.policy.map(|p| PolicyDir {
            path: p.into(),
            pos: at("/policy"),
        }),
        secret_file_dirs: read.secrets.file_dirs.into_iter().map(Into::into).collect(),
    }
}

/// A relative path that stays inside the repository (no `..`, no root).
fn inside(path: &str) -> bool {
    use std::path::Component;
    let path = std::path::Path::new(path);
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests;
