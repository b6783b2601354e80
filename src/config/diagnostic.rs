//! Located problems in the user's files, and how they are printed.
//!
//! Every problem the loader finds is a [`Diagnostic`]: a severity, the file, the line and
//! column, and a typed [`Problem`]. They print as `file:line:col: error: message`, the form
//! editors and CI logs link, and as GitHub workflow annotations when `GITHUB_ACTIONS=true`.

use std::fmt;
use std::path::PathBuf;

use crate::api::registry::Kind;
use crate::util::yaml::Pos;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// What is wrong, one variant per class of problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("cannot read file: {0}")]
    Unreadable(String),
    #[error(
        "file is not valid UTF-8 (invalid byte at offset {offset}); manifests must be UTF-8 text"
    )]
    NotUtf8 { offset: usize },
    #[error("invalid YAML: {0}")]
    YamlSyntax(String),
    #[error("invalid JSON: {0}")]
    JsonSyntax(String),
    #[error("a manifest must be a mapping with `api_version`, `kind` and `spec`, found {found}")]
    NotMapping { found: &'static str },
    #[error("unknown top-level field `{field}`; a manifest has only `api_version`, `kind` and `spec`{}", if *.belongs_in_spec { " (this field belongs under `spec:`)" } else { "" })]
    UnknownEnvelopeField {
        field: String,
        belongs_in_spec: bool,
    },
    #[error("{address}: `{field}` is a secret field and holds a literal value; write a reference, `${{env:NAME}}` or `${{file:PATH}}` (`allow_literal_secrets: true` in cfgctl.yaml makes this a warning)")]
    LiteralSecret { address: String, field: String },
    #[error("missing `api_version` (expected `api_version: v1/config`)")]
    MissingApiVersion,
    #[error("unsupported api_version {0} (expected `v1/config`)")]
    UnknownApiVersion(String),
    #[error("missing `kind`: one of the {} kinds of the API description (`cfgctl schema` and docs/manifests.md list them)", kind_count())]
    MissingKind,
    #[error("unknown kind {name}{}: not a kind of this cfgctl's API description ({} kinds: `cfgctl schema` and docs/manifests.md list them); a target with a newer API may describe it, and only a plan against it can check it", hint(.suggestion), kind_count())]
    UnknownKind {
        name: String,
        suggestion: Option<Kind>,
    },
    #[error("missing `spec`: the {0} object goes under `spec:`")]
    MissingSpec(Kind),
    #[error("`spec` must be a mapping, found {0}")]
    SpecNotMapping(&'static str),
    #[error("unsupported: {0}")]
    Unaddressable(String),
    #[error("{0} has no `spec.slug`; the slug is the resource's identity and is required")]
    MissingSlug(Kind),
    #[error("{kind}: {}", crate::api::wire::unusable_segment_reason(.slug))]
    UnusableSlug { kind: Kind, slug: String },
    #[error("{address}: {message}")]
    Schema { address: String, message: String },
    #[error("{address}: {rule} must be set")]
    RequiredOneOf { address: String, rule: String },
    #[error("invalid `{field}`: {message}")]
    InvalidEmbeddedJson { field: String, message: String },
    #[error("invalid PromQL in `{field}`: {message}")]
    PromqlSyntax { field: String, message: String },
    #[error("duplicate {address}: already declared at {first}")]
    Duplicate { address: String, first: String },
    #[error("{kind} `{field}` {value:?} is already used by {other} at {first}; it must be unique")]
    DuplicateUnique {
        kind: Kind,
        field: &'static str,
        value: String,
        other: String,
        first: String,
    },
    #[error("invalid settings file: {0}")]
    Settings(String),
    #[error("not read as a manifest: {0}")]
    NotAManifest(String),
    /// A manifest file or folder the walk does not follow (a symbolic link, a FIFO): a warning
    /// of `validate`, an error of a command that plans (its resources would be planned as if
    /// they were not declared).
    #[error("not read: {0}")]
    NotFollowed(String),
    #[error("a settings file below the root of `{root}`: cfgctl reads `cfgctl.yaml` only at the root of the folder it is given, so its prune patterns, policy, max_deletes and ignore rules would not apply (run cfgctl on this file's folder, or move it there)")]
    NestedSettings { root: String },
    #[error("{from} references {target} at `{path}`, which is neither in the manifests nor on the target{}", slug_hint(.suggestion))]
    DanglingReference {
        from: String,
        path: String,
        target: String,
        /// The closest slug of the target's kind that is declared or on the target.
        suggestion: Option<String>,
    },
    #[error("{from} references {target} at `{path}`, which this plan deletes ({why}); declare {target} in a manifest, or remove the reference")]
    ReferencedDelete {
        from: String,
        path: String,
        target: String,
        /// Why the plan deletes it (the delete's reason).
        why: String,
    },
    #[error("{kind}: the target refused to list this kind ({answer}), and this plan needs it: {need}; the tenant may not have this product area (check the token's permissions and the target), or remove what needs it")]
    RefusedKind {
        kind: Kind,
        answer: String,
        need: String,
    },
    #[error("reference cycle that cannot be broken: {cycle} (no reference in it is optional on a resource the target can update)")]
    ReferenceCycle { cycle: String },
    #[error("{address}: the server rejected it (dry run): {message}")]
    ServerRejected { address: String, message: String },
    #[error("undefined variable `{name}` in environment `{environment}`{}", slug_hint(.suggestion))]
    UndefinedVariable {
        name: String,
        environment: String,
        suggestion: Option<String>,
    },
    #[error("`${{var:{name}}}` needs an environment: {why}")]
    NoEnvironment { name: String, why: &'static str },
    #[error("cannot resolve `{reference}`: {reason}")]
    UnresolvedReference { reference: String, reason: String },
    /// A secret the plan sends (a create, an update, a changed reference) whose reference
    /// cannot be resolved now: found at plan time, not on merge.
    #[error("{address} `{field}`: the plan sends this secret, but `{reference}` cannot be resolved: {reason}")]
    UnresolvedSecret {
        address: String,
        field: String,
        reference: String,
        reason: String,
    },
    #[error("overlay: {0}")]
    Overlay(String),
    /// A `deny` or `warn` message of the repository's Rego policy (docs/policy.md).
    #[error("{}{message} [{rule}]", .address.as_ref().map(|a| format!("{a}: ")).unwrap_or_default())]
    Policy {
        address: Option<String>,
        /// `main.deny`, `cfgctl.plan.warn`, ...
        rule: String,
        message: String,
    },
    #[error("policy: {0}")]
    PolicyInvalid(String),
    #[error("{from} references {target} at `{path}`, which no manifest declares (it must already exist on the server)")]
    UndeclaredReference {
        from: String,
        path: String,
        target: String,
    },
}

fn kind_count() -> usize {
    crate::api::registry::embedded_kinds().len()
}

fn hint(suggestion: &Option<Kind>) -> String {
    suggestion
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

fn slug_hint(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

impl Problem {
    /// For a problem about a reference the planner found: the manifest's address and the
    /// reference's path, so that the command edge can point it at the field (see
    /// `manifest::Loaded::locate`).
    pub fn reference(&self) -> Option<(&str, &str)> {
        match self {
            Problem::DanglingReference { from, path, .. }
            | Problem::ReferencedDelete { from, path, .. }
            | Problem::UndeclaredReference { from, path, .. } => Some((from, path)),
            _ => None,
        }
    }
}

/// A problem at a place in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: PathBuf,
    pub pos: Pos,
    pub problem: Problem,
}

impl Diagnostic {
    pub fn error(file: impl Into<PathBuf>, pos: Pos, problem: Problem) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            file: file.into(),
            pos,
            problem,
        }
    }

    pub fn warning(file: impl Into<PathBuf>, pos: Pos, problem: Problem) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, pos, problem)
        }
    }

    /// `file:line:col` (the file name inert: it may hold any character).
    pub fn location(&self) -> String {
        format!(
            "{}:{}",
            crate::util::output::Inert(self.file.display()),
            self.pos
        )
    }

    /// The GitHub Actions workflow command for this diagnostic.
    pub fn github_annotation(&self) -> String {
        format!(
            "::{} file={},line={},col={}::{}",
            self.severity.as_str(),
            escape_property(&self.file.display().to_string()),
            self.pos.line,
            self.pos.column,
            escape_data(&self.problem.to_string())
        )
    }

    /// Sort key: file, then position, errors before warnings at the same place.
    pub fn sort_key(&self) -> (PathBuf, Pos, Severity, String) {
        (
            self.file.clone(),
            self.pos,
            self.severity,
            self.problem.to_string(),
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.location(),
            self.severity.as_str(),
            crate::util::output::Inert(&self.problem)
        )
    }
}

// GitHub's workflow command escaping (actions/toolkit `command.ts`), in the output layer.
fn escape_data(s: &str) -> String {
    crate::util::output::workflow_data(s)
}

fn escape_property(s: &str) -> String {
    crate::util::output::workflow_property(s)
}

/// The byte range of the token at a 1-based line and (character) column of a text.
fn token_span(source: &str, pos: Pos) -> Option<std::ops::Range<usize>> {
    let line_start: usize = source
        .split_inclusive('\n')
        .take(pos.line.saturating_sub(1) as usize)
        .map(str::len)
        .sum();
    let line = source.get(line_start..)?.lines().next()?;
    let col_offset: usize = line
        .chars()
        .take(pos.column.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    let rest = line.get(col_offset..)?;
    let len = rest
        .find(|c: char| c.is_whitespace() || c == ':' || c == ',')
        .unwrap_or(rest.len())
        .max(1)
        .min(rest.len().max(1));
    let start = line_start + col_offset;
    Some(start..(start + len).min(source.len()))
}

/// The diagnostic with the source line under it and the token marked (for terminals); `None`
/// when the position is not in the text.
pub fn render_snippet(d: &Diagnostic, source: &str, color: bool) -> Option<String> {
    use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
    let span = token_span(source, d.pos)?;
    if span.start >= source.len() {
        return None;
    }
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let message = crate::util::output::Inert(&d.problem).to_string();
    let path = crate::util::output::Inert(d.file.display()).to_string();
    let report = &[level.primary_title(message.as_str()).element(
        Snippet::source(source)
            .line_start(1)
            .path(path.as_str())
            .annotation(AnnotationKind::Primary.span(span)),
    )];
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    Some(renderer.render(report))
}

/// Sorts diagnostics into the order they are printed.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(Diagnostic::sort_key);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_github_forms() {
        let d = Diagnostic::error(
            "teams/a,b.yaml",
            Pos::new(3, 5),
            Problem::YamlSyntax("100% wrong\nreally".into()),
        );
        assert_eq!(
            d.to_string(),
            "teams/a,b.yaml:3:5: error: invalid YAML: 100% wrong\\nreally"
        );
        assert_eq!(
            d.github_annotation(),
            "::error file=teams/a%2Cb.yaml,line=3,col=5::invalid YAML: 100%25 wrong%0Areally"
        );
    }

    #[test]
    fn a_field_name_with_a_newline_cannot_start_a_workflow_command() {
        let d = Diagnostic::warning(
            "x\n::error::f.yaml",
            Pos::new(2, 1),
            Problem::UnknownEnvelopeField {
                field: "a\n::warning file=evil.yaml,line=1::pwned\r".into(),
                belongs_in_spec: false,
            },
        );
        for text in [d.to_string(), d.github_annotation()] {
            assert_eq!(text.lines().count(), 1, "{text}");
        }
        assert!(d
            .to_string()
            .contains("`a\\n::warning file=evil.yaml,line=1::pwned\\r`"));
        assert!(d
            .github_annotation()
            .starts_with("::warning file=x%0A%3A%3Aerror%3A%3Af.yaml,line=2,col=1::"));
    }

    #[test]
    fn unknown_kind_message_suggests() {
        let p = Problem::UnknownKind {
            name: "\"bucket\"".into(),
            suggestion: Some(Kind::named("Bucket")),
        };
        assert!(p
            .to_string()
            .starts_with("unknown kind \"bucket\" (did you mean `Bucket`?): not a kind of this cfgctl's API description ("));
    }

    #[test]
    fn snippets_mark_the_token() {
        let source = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  colour: red\n";
        let d = Diagnostic::error("b.yaml", Pos::new(5, 3), Problem::YamlSyntax("x".into()));
        let text = render_snippet(&d, source, false).unwrap();
        assert!(text.contains("--> b.yaml:5:3"), "{text}");
        assert!(text.contains("  colour: red"), "{text}");
        assert!(text.contains("^^^^^^"), "{text}");
        assert_eq!(token_span("ab\ncdé f\n", Pos::new(2, 3)), Some(5..7));
        assert_eq!(token_span("a\n", Pos::new(9, 1)), None);
    }
}
