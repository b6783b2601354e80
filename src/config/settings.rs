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
//! Every problem is located at its line and column, like a manifest's.

use std::path::Path;

mod secrets;

use serde_json::Value;

use crate::api::registry::Kind;
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::config::pattern::Pattern;
use crate::util::yaml::{self, Pos, Spans};

/// The settings file's name.
pub const FILE_NAME: &str = "cfgctl.yaml";

/// `max_deletes` when the file does not say.
pub const DEFAULT_MAX_DELETES: u32 = 25;

const FIELDS: &[&str] = &[
    "prune",
    "exclude",
    "max_deletes",
    "ignore",
    "allow_literal_secrets",
    "manage",
    "environments",
    "policy",
    "secrets",
];

/// How far cfgctl manages a resource (`manage:` in `cfgctl.yaml`; see docs/prune.md,
/// "Management modes").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

struct Reader<'a> {
    file: &'a Path,
    spans: &'a Spans,
    diagnostics: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn error(&mut self, pointer: &str, at_key: bool, message: String) {
        let pos = self
            .spans
            .nearest(pointer)
            .map(|s| if at_key { s.field() } else { s.value })
            .unwrap_or(Pos::new(1, 1));
        self.diagnostics.push(Diagnostic::error(
            self.file,
            pos,
            Problem::Settings(message),
        ));
    }

    fn patterns(&mut self, value: &Value, field: &str) -> Vec<Pattern> {
        let pointer = format!("/{field}");
        let Some(items) = value.as_array() else {
            self.error(
                &pointer,
                false,
                format!("`{field}` must be a list of KIND/SLUG-GLOB patterns"),
            );
            return vec![];
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = format!("{pointer}/{i}");
            match item.as_str().map(Pattern::parse) {
                Some(Ok(p)) => out.push(p),
                Some(Err(e)) => self.error(&at, false, format!("`{field}[{i}]`: {e}")),
                None => self.error(
                    &at,
                    false,
                    format!("`{field}[{i}]` must be a string such as \"Dashboard/team-a-*\""),
                ),
            }
        }
        out
    }
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
    let mut settings = Settings::default();
    let Some(doc) = docs.first() else {
        return Ok(settings);
    };
    let mut r = Reader {
        file,
        spans: &doc.spans,
        diagnostics: Vec::new(),
    };
    if docs.len() > 1 {
        r.diagnostics.push(Diagnostic::error(
            file,
            docs[1].start,
            Problem::Settings("the settings file holds one document".into()),
        ));
    }
    let Some(map) = doc.value.as_object() else {
        r.error(
            "",
            false,
            "the settings file must be a mapping with `prune`, `exclude`, `max_deletes`, `ignore`, `manage`, `environments`, `policy` or `secrets`"
                .into(),
        );
        return Err(r.diagnostics);
    };
    for (key, value) in map {
        let pointer = format!("/{}", crate::util::jsonpath::escape_pointer(key));
        match key.as_str() {
            "prune" => settings.prune = r.patterns(value, "prune"),
            "exclude" => settings.exclude = r.patterns(value, "exclude"),
            "max_deletes" => match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) => settings.max_deletes = n,
                None => r.error(
                    &pointer,
                    false,
                    format!("`max_deletes` must be a whole number of 0 or more, found {value}"),
                ),
            },
            "ignore" => settings.ignore = ignore_rules(&mut r, value),
            "allow_literal_secrets" => match value.as_bool() {
                Some(b) => settings.allow_literal_secrets = b,
                None => r.error(
                    &pointer,
                    false,
                    format!("`allow_literal_secrets` must be true or false, found {value}"),
                ),
            },
            "manage" => settings.manage = manage_rules(&mut r, value),
            "environments" => {
                settings.environments =
                    crate::config::environments::parse(file, r.spans, value, &mut r.diagnostics);
                crate::config::environments::register_tokens(&settings.environments);
            }
            "policy" => match value.as_str().filter(|p| inside(p)) {
                Some(p) => {
                    let pos = r
                        .spans
                        .nearest(&pointer)
                        .map_or(Pos::new(1, 1), |s| s.value);
                    let path = p.into();
                    settings.policy = Some(PolicyDir { path, pos });
                }
                None => r.error(
                    &pointer,
                    false,
                    format!(
                        "`policy` must name a directory of Rego files inside the repository \
                         (a relative path without `..`), found {value}"
                    ),
                ),
            },
            "secrets" => settings.secret_file_dirs = secrets::file_dirs(&mut r, value),
            other => {
                let known: Vec<String> = FIELDS.iter().map(|s| s.to_string()).collect();
                let hint = crate::util::jsonpath::closest(other, &known)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                r.error(
                    &pointer,
                    true,
                    format!(
                        "unknown field `{other}`{hint}; expected prune, exclude, max_deletes, ignore, allow_literal_secrets, manage, environments, policy or secrets"
                    ),
                );
            }
        }
    }
    if r.diagnostics.is_empty() {
        Ok(settings)
    } else {
        Err(r.diagnostics)
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

/// `manage: [{match: PATTERN, mode: MODE}]`, every problem located.
fn manage_rules(r: &mut Reader<'_>, value: &Value) -> Vec<ManageRule> {
    let Some(items) = value.as_array() else {
        r.error(
            "/manage",
            false,
            "`manage` must be a list of {match: KIND/SLUG-GLOB, mode: MODE}".into(),
        );
        return vec![];
    };
    let modes: Vec<String> = Mode::ALL.iter().map(|m| m.as_str().to_string()).collect();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("/manage/{i}");
        let Some(map) = item.as_object() else {
            r.error(
                &at,
                false,
                format!("`manage[{i}]` must be a mapping {{match: KIND/SLUG-GLOB, mode: MODE}}"),
            );
            continue;
        };
        for key in map.keys().filter(|k| *k != "match" && *k != "mode") {
            let hint = crate::util::jsonpath::closest(key, &["match".into(), "mode".into()])
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            r.error(
                &format!("{at}/{}", crate::util::jsonpath::escape_pointer(key)),
                true,
                format!("`manage[{i}]`: unknown field `{key}`{hint}; expected `match` and `mode`"),
            );
        }
        let pattern = match map
            .get("match")
            .map(|v| (v, v.as_str().map(Pattern::parse)))
        {
            Some((_, Some(Ok(p)))) => Some(p),
            Some((_, Some(Err(e)))) => {
                r.error(
                    &format!("{at}/match"),
                    false,
                    format!("`manage[{i}].match`: {e}"),
                );
                None
            }
            Some((_, None)) => {
                r.error(
                    &format!("{at}/match"),
                    false,
                    format!("`manage[{i}].match` must be a string such as \"Dashboard/team-*\""),
                );
                None
            }
            None => {
                r.error(
                    &at,
                    false,
                    format!("`manage[{i}]` needs `match`, a KIND/SLUG-GLOB pattern"),
                );
                None
            }
        };
        let mode = match map.get("mode") {
            Some(v) => match v.as_str().and_then(Mode::from_name) {
                Some(m) => Some(m),
                None => {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    let hint = v
                        .as_str()
                        .and_then(|s| crate::util::jsonpath::closest(s, &modes))
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    r.error(
                        &format!("{at}/mode"),
                        false,
                        format!(
                            "`manage[{i}].mode`: unknown mode `{text}`{hint}; expected {}",
                            modes.join(", ")
                        ),
                    );
                    None
                }
            },
            None => {
                r.error(
                    &at,
                    false,
                    format!("`manage[{i}]` needs `mode`: {}", modes.join(", ")),
                );
                None
            }
        };
        if let (Some(pattern), Some(mode)) = (pattern, mode) {
            out.push(ManageRule { pattern, mode });
        }
    }
    out
}

fn ignore_rules(r: &mut Reader<'_>, value: &Value) -> Vec<IgnoreRule> {
    let Some(items) = value.as_array() else {
        r.error(
            "/ignore",
            false,
            "`ignore` must be a list of {kind: KIND, path: FIELD.PATH}".into(),
        );
        return vec![];
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("/ignore/{i}");
        let Some(map) = item.as_object() else {
            r.error(
                &at,
                false,
                format!("`ignore[{i}]` must be a mapping {{kind: KIND, path: FIELD.PATH}}"),
            );
            continue;
        };
        for key in map.keys().filter(|k| *k != "kind" && *k != "path") {
            r.error(
                &format!("{at}/{key}"),
                true,
                format!("`ignore[{i}]`: unknown field `{key}`; expected `kind` and `path`"),
            );
        }
        let kind = match map.get("kind").and_then(Value::as_str) {
            Some(name) => match Kind::from_name(name) {
                Some(k) => Some(k),
                None => {
                    let hint = Kind::suggest(name)
                        .map(|k| format!(" (did you mean `{k}`?)"))
                        .unwrap_or_default();
                    r.error(
                        &format!("{at}/kind"),
                        false,
                        format!("`ignore[{i}].kind`: unknown kind `{name}`{hint}"),
                    );
                    None
                }
            },
            None => {
                r.error(
                    &at,
                    false,
                    format!("`ignore[{i}]` needs `kind`, a kind name such as Monitor"),
                );
                None
            }
        };
        let path = match map.get("path").and_then(Value::as_str) {
            Some(p) if !p.trim().is_empty() && !p.split('.').any(str::is_empty) => {
                Some(p.to_string())
            }
            Some(p) => {
                r.error(
                    &format!("{at}/path"),
                    false,
                    format!("`ignore[{i}].path`: {p:?} is not a dotted field path such as labels.generated_by"),
                );
                None
            }
            None => {
                r.error(
                    &at,
                    false,
                    format!("`ignore[{i}]` needs `path`, a dotted field path such as labels.generated_by"),
                );
                None
            }
        };
        if let (Some(kind), Some(path)) = (kind, path) {
            out.push(IgnoreRule { kind, path });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        match parse(Path::new("cfgctl.yaml"), text) {
            Ok(_) => vec![],
            Err(d) => d.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn full_file() {
        let s = parse(
            Path::new("cfgctl.yaml"),
            "prune: [\"Dashboard/*\"]\nexclude: [Bucket/legacy-*]\nmax_deletes: 3\nignore:\n  - {kind: Monitor, path: labels.generated_by}\n",
        )
        .unwrap();
        assert_eq!(s.prune.len(), 1);
        assert_eq!(s.exclude[0].as_str(), "Bucket/legacy-*");
        assert_eq!(s.max_deletes, 3);
        assert_eq!(
            s.ignore,
            vec![IgnoreRule {
                kind: Kind::named("Monitor"),
                path: "labels.generated_by".into()
            }]
        );
    }

    #[test]
    fn empty_file_is_defaults() {
        assert_eq!(
            parse(Path::new("cfgctl.yaml"), "# nothing\n").unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn located_errors() {
        assert_eq!(
            errors("prune:\n  - Dashbord/*\nmax_delete: 3\n"),
            vec![
                "cfgctl.yaml:2:5: error: invalid settings file: `prune[0]`: pattern `Dashbord/*` names unknown kind `Dashbord` (did you mean `Dashboard`?)",
                "cfgctl.yaml:3:1: error: invalid settings file: unknown field `max_delete` (did you mean `max_deletes`?); expected prune, exclude, max_deletes, ignore, allow_literal_secrets, manage, environments, policy or secrets",
            ]
        );
        assert_eq!(
            errors("max_deletes: -1\n"),
            vec!["cfgctl.yaml:1:14: error: invalid settings file: `max_deletes` must be a whole number of 0 or more, found -1"]
        );
        assert_eq!(
            errors("ignore:\n  - {kind: Monitr, path: \"a..b\"}\n"),
            vec![
                "cfgctl.yaml:2:12: error: invalid settings file: `ignore[0].kind`: unknown kind `Monitr` (did you mean `Monitor`?)",
                "cfgctl.yaml:2:26: error: invalid settings file: `ignore[0].path`: \"a..b\" is not a dotted field path such as labels.generated_by",
            ]
        );
    }

    #[test]
    fn manage_rules_first_match_wins() {
        let s = parse(
            Path::new("cfgctl.yaml"),
            "manage:\n  - {match: \"Dashboard/team-*\", mode: create-only}\n  - {match: \"*/*\", mode: no-delete}\n",
        )
        .unwrap();
        let dash = |slug: &str| {
            crate::api::registry::Address::new(Kind::named("Dashboard"), Some(slug.to_string()))
        };
        assert_eq!(s.mode(&dash("team-a")), Mode::CreateOnly);
        assert_eq!(s.mode(&dash("other")), Mode::NoDelete);
        assert_eq!(
            s.mode(&crate::api::registry::Address::new(
                Kind::named("ResourcePools"),
                None
            )),
            Mode::Full
        );
    }

    #[test]
    fn manage_errors_are_located_with_hints() {
        assert_eq!(
            errors("manage:\n  - {match: \"Dashbord/x\", mode: create-once}\n  - {mach: \"Monitor/*\"}\n  - observe\n"),
            vec![
                "cfgctl.yaml:2:13: error: invalid settings file: `manage[0].match`: pattern `Dashbord/x` names unknown kind `Dashbord` (did you mean `Dashboard`?)",
                "cfgctl.yaml:2:33: error: invalid settings file: `manage[0].mode`: unknown mode `create-once` (did you mean `create-only`?); expected full, create-only, no-delete, observe",
                "cfgctl.yaml:3:6: error: invalid settings file: `manage[1]`: unknown field `mach` (did you mean `match`?); expected `match` and `mode`",
                "cfgctl.yaml:3:5: error: invalid settings file: `manage[1]` needs `match`, a KIND/SLUG-GLOB pattern",
                "cfgctl.yaml:3:5: error: invalid settings file: `manage[1]` needs `mode`: full, create-only, no-delete, observe",
                "cfgctl.yaml:4:5: error: invalid settings file: `manage[2]` must be a mapping {match: KIND/SLUG-GLOB, mode: MODE}",
            ]
        );
    }
}
