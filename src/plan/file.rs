//! The JSON plan (`plan --format json`) and the saved plan (`plan --out`): one typed format,
//! written and read by the same serde types, so that nothing the writer puts in a file can
//! fall through a gap on the way back. (The saved plan's reader, `read`, walks the top-level
//! fields itself to read `changes` as a stream; every value in them is still read by these
//! types, and a test holds its list of fields to `PlanFile`'s.)
//!
//! The saved plan is the JSON plan plus what `apply FILE` needs: per change a `step` (the
//! object to send, the fingerprint of the current object, step-level dependencies) and, for
//! the whole plan, the `guards` (max_deletes, the prune and exclude patterns, the kinds the
//! manifests declare). Reading is strict: unknown fields, a missing step, an update or delete
//! without a fingerprint, an action that does not fit its kind, a dependency that is not an
//! earlier step, or a delete outside the saved prune scope refuse the whole file.
//!
//! Pure: text (or a stream of it) in, typed values out.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::normalize::FieldChange;
use super::{Action, ActionKind, CascadeStatus, GuardContext, Plan, Summary};
use crate::api::registry::{Address, Kind, Op};
use crate::config::pattern::Pattern;

/// The version this cfgctl writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile<F = Vec<FieldFile>> {
    pub format_version: u32,
    pub target: String,
    pub summary: SummaryFile,
    /// The risk summary a reviewer reads first (`plan::risk`); shown only, never applied.
    #[serde(default)]
    pub risk: super::risk::Risk,
    pub changes: Vec<ChangeFile<F>>,
    /// What `observe` resources would need: shown, never applied (no `step`, even saved).
    #[serde(default)]
    pub observed: Vec<ChangeFile<F>>,
    pub unmanaged: Vec<String>,
    /// Declared by no manifest and kept by their mode (`no-delete`, `observe`).
    #[serde(default)]
    pub orphaned: Vec<String>,
    pub warnings: Vec<String>,
    /// Every deny and warn of the repository's policy (`plan::review::PolicyFinding`).
    #[serde(default)]
    pub policy: Vec<super::review::PolicyFinding>,
    /// The commit the plan was made from and the base its secret references were compared
    /// with (`plan::review::Review`).
    #[serde(default)]
    pub review: super::review::Review,
    /// Saved plans only: what the delete guards are checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guards: Option<GuardsFile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryFile {
    pub create: usize,
    pub update: usize,
    pub delete: usize,
    pub upsert: usize,
    pub unchanged: usize,
    pub unsupported: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub file: String,
    pub line: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldFile {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CascadeFile {
    pub address: String,
    pub status: CascadeStatus,
}

/// One change, as shown (and, with `step`, as applied). `F` is how its fields are held: typed
/// (written, and read by tools), or their text (read by `apply FILE`, which parses only the
/// fields it shows: see [`read_saved`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeFile<F = Vec<FieldFile>> {
    pub address: String,
    pub kind: String,
    pub slug: Option<String>,
    pub action: ActionKind,
    pub source: Option<SourceFile>,
    pub fields: F,
    pub depends_on: Vec<String>,
    pub reason: Option<String>,
    /// Under a delete that can cascade: what `--force-delete-buckets` would take with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cascade: Vec<CascadeFile>,
    /// Saved plans only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepFile>,
}

/// What `apply FILE` needs of one change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepFile {
    /// Indices of the earlier changes that must finish first.
    pub depends_on_steps: Vec<usize>,
    /// For an unsupported change: what would have been done.
    pub intended: Option<ActionKind>,
    /// The full object to send (create, update, upsert).
    pub body: Option<Value>,
    /// Fingerprint of the current object when the plan was made (absent for creates).
    pub fingerprint: Option<String>,
}

/// The delete guards' context, saved with the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardsFile {
    pub max_deletes: u32,
    pub prune: Vec<String>,
    pub exclude: Vec<String>,
    pub declared_kinds: Vec<String>,
    /// The management modes (`manage:` of cfgctl.yaml), first match wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manage: Vec<ManageFile>,
    /// The guards' seal (see `GuardContext::seal_with`); absent when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
    /// The environment of `cfgctl.yaml` the plan was made for (`GuardContext::environment`);
    /// absent for a plan of a bare target, so such a file is as it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

/// One `manage:` rule, saved with the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManageFile {
    #[serde(rename = "match")]
    pub pattern: String,
    pub mode: String,
}

impl From<Summary> for SummaryFile {
    fn from(s: Summary) -> Self {
        SummaryFile {
            create: s.create,
            update: s.update,
            delete: s.delete,
            upsert: s.upsert,
            unchanged: s.unchanged,
            unsupported: s.unsupported,
        }
    }
}

fn field_file(kind: crate::api::registry::Kind, f: &FieldChange) -> FieldFile {
    let f = &*super::normalize::displayed(kind, f);
    FieldFile {
        path: f.path.clone(),
        before: f.before.clone(),
        after: f.after.clone(),
    }
}

fn change_file(plan: &Plan, a: &Action, saved: bool) -> ChangeFile {
    ChangeFile {
        address: a.address.to_string(),
        kind: a.address.kind.name().to_string(),
        slug: a.address.slug.clone(),
        action: a.action,
        source: a.source.as_ref().map(|s| SourceFile {
            file: s.file.display().to_string(),
            line: s.line,
        }),
        fields: a
            .shown_fields()
            .iter()
            .map(|f| field_file(a.address.kind, f))
            .collect(),
        depends_on: a
            .depends_on
            .iter()
            .map(|&i| plan.actions[i].address.to_string())
            .collect(),
        reason: a.reason.clone(),
        cascade: a
            .cascade
            .iter()
            .map(|m| CascadeFile {
                address: m.address.to_string(),
                status: m.status,
            })
            .collect(),
        step: saved.then(|| StepFile {
            depends_on_steps: a.depends_on.clone(),
            intended: a.intended,
            body: a.body.as_deref().cloned(),
            fingerprint: a.fingerprint.clone(),
        }),
    }
}

impl PlanFile<Vec<FieldFile>> {
    /// The file form of a plan, built whole; `saved` adds what `apply FILE` needs. For tests:
    /// the commands write it change by change ([`PlanFileWriter`]).
    #[cfg(test)]
    pub(crate) fn from_plan(plan: &Plan, saved: bool) -> PlanFile {
        PlanFile {
            format_version: FORMAT_VERSION,
            target: plan.target.clone(),
            summary: plan.summary().into(),
            risk: super::risk::summarize(plan),
            changes: plan
                .actions
                .iter()
                .map(|a| change_file(plan, a, saved))
                .collect(),
            observed: observed_file(plan),
            unmanaged: unmanaged_file(plan),
            orphaned: orphaned_file(plan),
            warnings: warnings_file(plan),
            policy: plan.review.policy.clone(),
            review: plan.review.clone(),
            guards: saved.then(|| guards_file(plan)),
        }
    }
}

fn unmanaged_file(plan: &Plan) -> Vec<String> {
    plan.unmanaged
        .iter()
        .map(|u| u.address.to_string())
        .collect()
}

fn orphaned_file(plan: &Plan) -> Vec<String> {
    plan.orphaned.iter().map(Address::to_string).collect()
}

fn observed_file(plan: &Plan) -> Vec<ChangeFile> {
    // Never applied, so never a step.
    plan.observed
        .iter()
        .map(|a| change_file(plan, a, false))
        .collect()
}

fn warnings_file(plan: &Plan) -> Vec<String> {
    let mut warnings = plan.warnings.clone();
    warnings.extend(plan.guard_violations.iter().map(|g| g.to_string()));
    warnings
}

pub(crate) fn guards_file(plan: &Plan) -> GuardsFile {
    GuardsFile {
        max_deletes: plan.guard.max_deletes,
        prune: plan.guard.prune.iter().map(|p| p.to_string()).collect(),
        exclude: plan.guard.exclude.iter().map(|p| p.to_string()).collect(),
        declared_kinds: plan
            .guard
            .declared
            .iter()
            .map(|k| k.name().to_string())
            .collect(),
        manage: plan
            .guard
            .manage
            .iter()
            .map(|r| ManageFile {
                pattern: r.pattern.to_string(),
                mode: r.mode.as_str().to_string(),
            })
            .collect(),
        seal: plan.guard.seal.clone(),
        environment: plan.guard.environment.clone(),
    }
}

/// A plan serialised as its [`PlanFile`] without the whole file ever being held: the same
/// fields in the same order (so the same bytes), each change made just before it is written
/// (on all cores, a batch at a time). A plan of thousands of dashboard creates is many times
/// larger as a `PlanFile` (every document parsed for display) than as this.
pub struct PlanFileWriter<'a> {
    pub plan: &'a Plan,
    pub saved: bool,
}

impl Serialize for PlanFileWriter<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("PlanFile", 12)?;
        self.serialize_fields(&mut st)?;
        st.end()
    }
}

impl PlanFileWriter<'_> {
    /// The plan file's fields, into a struct being serialised: for a document that adds its
    /// own after them (`drift`'s JSON report).
    pub fn serialize_fields<M: serde::ser::SerializeStruct>(
        &self,
        st: &mut M,
    ) -> Result<(), M::Error> {
        let plan = self.plan;
        st.serialize_field("format_version", &FORMAT_VERSION)?;
        st.serialize_field("target", &plan.target)?;
        st.serialize_field("summary", &SummaryFile::from(plan.summary()))?;
        st.serialize_field("risk", &super::risk::summarize(plan))?;
        st.serialize_field("changes", &ChangesWriter(self))?;
        st.serialize_field("observed", &observed_file(plan))?;
        st.serialize_field("unmanaged", &unmanaged_file(plan))?;
        st.serialize_field("orphaned", &orphaned_file(plan))?;
        st.serialize_field("warnings", &warnings_file(plan))?;
        st.serialize_field("policy", &plan.review.policy)?;
        st.serialize_field("review", &plan.review)?;
        if self.saved {
            st.serialize_field("guards", &guards_file(plan))?;
        } else {
            st.skip_field("guards")?;
        }
        Ok(())
    }
}

struct ChangesWriter<'a, 'b>(&'b PlanFileWriter<'a>);

impl Serialize for ChangesWriter<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use rayon::prelude::*;
        use serde::ser::SerializeSeq;
        let PlanFileWriter { plan, saved } = *self.0;
        let mut seq = s.serialize_seq(Some(plan.actions.len()))?;
        for batch in plan.actions.chunks(256) {
            let files: Vec<ChangeFile> = batch
                .par_iter()
                .map(|a| change_file(plan, a, saved))
                .collect();
            for f in &files {
                seq.serialize_element(f)?;
            }
        }
        seq.end()
    }
}

/// Why a saved plan was refused. Every variant names the change (`changes[i]`) it is about.
#[derive(Debug, thiserror::Error)]
pub enum SavedPlanError {
    #[error("not a saved plan: {0}")]
    Invalid(String),
    #[error("saved plan format_version {0} is not supported (this cfgctl reads {FORMAT_VERSION})")]
    Version(String),
    #[error("not a saved plan: this is the JSON plan of `plan --format json`, which holds no objects to send; write one with `plan --out FILE`")]
    NotSaved,
    #[error("saved plan: changes[{index}] ({address}): {problem}")]
    Change {
        index: usize,
        address: String,
        problem: String,
    },
}

/// `Kind/slug` (or the singleton's kind) back to an address.
pub fn parse_address(text: &str) -> Option<Address> {
    match text.split_once('/') {
        Some((k, s)) if !s.is_empty() => {
            let kind = Kind::from_name(k)?;
            (!kind.def().singleton).then(|| Address::new(kind, Some(s.to_string())))
        }
        Some(_) => None,
        None => {
            let kind = Kind::from_name(text)?;
            kind.def().singleton.then(|| Address::new(kind, None))
        }
    }
}

fn pattern(text: &str, what: &str) -> Result<Pattern, SavedPlanError> {
    Pattern::parse(text).map_err(|e| SavedPlanError::Invalid(format!("guards.{what}: {e}")))
}

pub(crate) fn guard_context(g: &GuardsFile) -> Result<GuardContext, SavedPlanError> {
    let mut declared = BTreeSet::new();
    for name in &g.declared_kinds {
        declared.insert(Kind::from_name(name).ok_or_else(|| {
            SavedPlanError::Invalid(format!("guards.declared_kinds: unknown kind `{name}`"))
        })?);
    }
    Ok(GuardContext {
        max_deletes: g.max_deletes,
        prune: g
            .prune
            .iter()
            .map(|p| pattern(p, "prune"))
            .collect::<Result<_, _>>()?,
        exclude: g
            .exclude
            .iter()
            .map(|p| pattern(p, "exclude"))
            .collect::<Result<_, _>>()?,
        declared,
        manage: g
            .manage
            .iter()
            .map(|r| {
                let mode = crate::config::settings::Mode::from_name(&r.mode).ok_or_else(|| {
                    SavedPlanError::Invalid(format!("guards.manage: unknown mode `{}`", r.mode))
                })?;
                Ok(crate::config::settings::ManageRule {
                    pattern: pattern(&r.pattern, "manage")?,
                    mode,
                })
            })
            .collect::<Result<_, SavedPlanError>>()?,
        seal: g.seal.clone(),
        environment: match &g.environment {
            Some(name) if name.trim().is_empty() => {
                return Err(SavedPlanError::Invalid(
                    "guards.environment: an empty name".into(),
                ))
            }
            other => other.clone(),
        },
    })
}

/// The operation an action performs on the target.
fn op_of(action: ActionKind) -> Option<Op> {
    match action {
        ActionKind::Create => Some(Op::Create),
        ActionKind::Update | ActionKind::Upsert => Some(Op::Update),
        ActionKind::Delete => Some(Op::Delete),
        ActionKind::Unsupported => None,
    }
}

mod read;
pub use read::{read_saved, read_saved_from};

#[cfg(test)]
mod tests;
