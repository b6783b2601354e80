//! The JSON plan (`plan --format json`) and the saved plan (`plan --out`): one typed format,
//! written and read by the same serde types, so that nothing the writer puts in a file can
//! fall through a gap on the way back.
//!
//! The saved plan is the JSON plan plus what `apply FILE` needs: per change a `step` (the
//! object to send, the fingerprint of the current object, step-level dependencies) and, for
//! the whole plan, the `guards` (max_deletes, the prune and exclude patterns, the kinds the
//! manifests declare). Reading is strict: unknown fields, a missing step, an update or delete
//! without a fingerprint, an action that does not fit its kind, a dependency that is not an
//! earlier step, or a delete outside the saved prune scope refuse the whole file.
//!
//! Pure: text in, typed values out.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::normalize::FieldChange;
use super::{
    Action, ActionKind, CascadeMember, CascadeStatus, GuardContext, Plan, Source, Summary,
};
use crate::pattern::Pattern;
use crate::registry::{Address, Kind, Op};

/// The version this cfgctl writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub format_version: u32,
    pub target: String,
    pub summary: SummaryFile,
    pub changes: Vec<ChangeFile>,
    pub unmanaged: Vec<String>,
    pub warnings: Vec<String>,
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

/// One change, as shown (and, with `step`, as applied).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeFile {
    pub address: String,
    pub kind: String,
    pub slug: Option<String>,
    pub action: ActionKind,
    pub source: Option<SourceFile>,
    pub fields: Vec<FieldFile>,
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

fn field_file(kind: crate::registry::Kind, f: &FieldChange) -> FieldFile {
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
            .fields
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
            body: a.body.clone(),
            fingerprint: a.fingerprint.clone(),
        }),
    }
}

impl PlanFile {
    /// The file form of a plan; `saved` adds what `apply FILE` needs.
    pub fn from_plan(plan: &Plan, saved: bool) -> PlanFile {
        let mut warnings = plan.warnings.clone();
        warnings.extend(plan.guard_violations.iter().map(|g| g.to_string()));
        PlanFile {
            format_version: FORMAT_VERSION,
            target: plan.target.clone(),
            summary: plan.summary().into(),
            changes: plan
                .actions
                .iter()
                .map(|a| change_file(plan, a, saved))
                .collect(),
            unmanaged: plan
                .unmanaged
                .iter()
                .map(|u| u.address.to_string())
                .collect(),
            warnings,
            guards: saved.then(|| GuardsFile {
                max_deletes: plan.guard.max_deletes,
                prune: plan.guard.prune.iter().map(|p| p.to_string()).collect(),
                exclude: plan.guard.exclude.iter().map(|p| p.to_string()).collect(),
                declared_kinds: plan
                    .guard
                    .declared
                    .iter()
                    .map(|k| k.name().to_string())
                    .collect(),
            }),
        }
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

fn guard_context(g: &GuardsFile) -> Result<GuardContext, SavedPlanError> {
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

/// Reads a saved plan: the typed file, then every rule a plan must keep, into a [`Plan`]
/// ready for the same guard check and executor as `apply DIR`.
pub fn read_saved(text: &str) -> Result<Plan, SavedPlanError> {
    // The version first, so that a newer file gets the version message, not a field error.
    let probe: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| SavedPlanError::Invalid(format!("not JSON ({e})")))?;
    match probe.get("format_version") {
        Some(v) if v.as_u64() == Some(u64::from(FORMAT_VERSION)) => {}
        Some(v) => return Err(SavedPlanError::Version(v.to_string())),
        None => return Err(SavedPlanError::Invalid("no format_version".into())),
    }
    let file: PlanFile =
        serde_json::from_value(probe).map_err(|e| SavedPlanError::Invalid(e.to_string()))?;
    let guards = file.guards.as_ref().ok_or(SavedPlanError::NotSaved)?;
    let guard = guard_context(guards)?;
    let n = file.changes.len();
    let mut actions: Vec<Action> = Vec::with_capacity(n);
    for (index, c) in file.changes.iter().enumerate() {
        let bad = |problem: &str| SavedPlanError::Change {
            index,
            address: c.address.clone(),
            problem: problem.to_string(),
        };
        let step = c.step.as_ref().ok_or(SavedPlanError::NotSaved)?;
        let address = parse_address(&c.address).ok_or_else(|| bad("not a resource address"))?;
        if c.kind != address.kind.name() || c.slug != address.slug {
            return Err(bad("`kind` and `slug` do not match the address"));
        }
        if let Some(op) = op_of(c.action) {
            if !address.kind.def().full_ops.has(op) {
                return Err(bad(&format!(
                    "{} cannot {} (the API has no such operation)",
                    address.kind,
                    c.action.as_str()
                )));
            }
        }
        if let Some(slug) = &address.slug {
            if !crate::wire::is_usable_segment(slug) {
                return Err(bad("the slug is not usable as a path segment"));
            }
        }
        for &d in &step.depends_on_steps {
            if d >= index {
                return Err(bad(&format!(
                    "depends on step {d}, which is not an earlier step of this plan"
                )));
            }
        }
        let sends = matches!(
            c.action,
            ActionKind::Create | ActionKind::Update | ActionKind::Upsert
        );
        match (&step.body, sends) {
            (Some(Value::Object(body)), true) => {
                let slug = body.get("slug").and_then(Value::as_str);
                if address.slug.is_some() && slug != address.slug.as_deref() {
                    return Err(bad("the object to send has another slug than the address"));
                }
            }
            (_, true) => return Err(bad("no object to send")),
            (None, false) => {}
            (Some(_), false) => return Err(bad("a delete carries no object")),
        }
        match c.action {
            ActionKind::Delete => {
                if step.fingerprint.is_none() {
                    return Err(bad("a delete without the fingerprint of what it deletes"));
                }
                if !guard.may_delete(&address) {
                    return Err(bad(
                        "a delete outside the saved prune scope (or of an excluded resource)",
                    ));
                }
            }
            ActionKind::Update if step.fingerprint.is_none() => {
                // Only the follow-up update of a resource this plan creates first has none.
                let after_own_create = step.depends_on_steps.iter().any(|&d| {
                    actions[d].address == address && actions[d].action == ActionKind::Create
                });
                if !after_own_create {
                    return Err(bad("an update without the fingerprint of what it updates"));
                }
            }
            _ => {}
        }
        let mut cascade = Vec::with_capacity(c.cascade.len());
        for m in &c.cascade {
            cascade.push(CascadeMember {
                address: parse_address(&m.address)
                    .ok_or_else(|| bad("a cascade member is not a resource address"))?,
                status: m.status,
            });
        }
        actions.push(Action {
            address,
            action: c.action,
            source: c.source.as_ref().map(|s| Source {
                file: PathBuf::from(&s.file),
                line: s.line,
            }),
            fields: c
                .fields
                .iter()
                .map(|f| FieldChange {
                    path: f.path.clone(),
                    before: f.before.clone(),
                    after: f.after.clone(),
                })
                .collect(),
            depends_on: step.depends_on_steps.clone(),
            reason: c.reason.clone(),
            body: step.body.clone(),
            intended: step.intended,
            fingerprint: step.fingerprint.clone(),
            cascade,
        });
    }
    let guard_violations = super::guards(&actions, &guard);
    Ok(Plan {
        target: file.target,
        actions,
        unchanged: file.summary.unchanged,
        unmanaged: vec![],
        warnings: vec![],
        guard_violations,
        guard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn saved(changes: Value, guards: Value) -> String {
        json!({
            "format_version": 1, "target": "local:x",
            "summary": {"create": 0, "update": 0, "delete": 0, "upsert": 0, "unchanged": 4, "unsupported": 0},
            "changes": changes, "unmanaged": [], "warnings": [], "guards": guards
        })
        .to_string()
    }

    fn guards() -> Value {
        json!({"max_deletes": 25, "prune": ["Bucket/*"], "exclude": [], "declared_kinds": ["Bucket", "Team"]})
    }

    fn change(address: &str, action: &str, step: Value) -> Value {
        let (kind, slug) = address.split_once('/').unwrap();
        json!({"address": address, "kind": kind, "slug": slug, "action": action,
               "source": null, "fields": [], "depends_on": [], "reason": null, "step": step})
    }

    #[test]
    fn addresses_round_trip() {
        assert_eq!(
            parse_address("Bucket/platform"),
            Some(Address::new(Kind::Bucket, Some("platform".into())))
        );
        assert_eq!(
            parse_address("ResourcePools"),
            Some(Address::new(Kind::ResourcePools, None))
        );
        assert_eq!(parse_address("ResourcePools/x"), None);
        assert_eq!(parse_address("Bucket"), None);
        assert_eq!(parse_address("Widget/x"), None);
        assert_eq!(parse_address("Bucket/"), None);
    }

    #[test]
    fn reads_what_it_writes() {
        let text = saved(
            json!([
                change(
                    "Team/t",
                    "create",
                    json!({"depends_on_steps": [], "intended": null,
                    "body": {"slug": "t", "name": "T"}, "fingerprint": null})
                ),
                change(
                    "Bucket/b",
                    "delete",
                    json!({"depends_on_steps": [0], "intended": null,
                    "body": null, "fingerprint": "0123456789abcdef"})
                ),
            ]),
            guards(),
        );
        let plan = read_saved(&text).unwrap();
        assert_eq!(plan.target, "local:x");
        assert_eq!(plan.unchanged, 4);
        assert_eq!(plan.actions[1].depends_on, vec![0]);
        assert_eq!(plan.guard.max_deletes, 25);
        // And back: the same file, byte for byte, once summary and dependencies are derived.
        let again = serde_json::to_value(PlanFile::from_plan(&plan, true)).unwrap();
        let mut original: Value = serde_json::from_str(&text).unwrap();
        original["summary"] = json!({"create": 1, "update": 0, "delete": 1, "upsert": 0, "unchanged": 4, "unsupported": 0});
        original["changes"][1]["depends_on"] = json!(["Team/t"]);
        assert_eq!(again, original);
    }

    fn refused(text: &str) -> String {
        read_saved(text).unwrap_err().to_string()
    }

    #[test]
    fn refuses_unknown_fields_everywhere() {
        let mut doc: Value = serde_json::from_str(&saved(json!([]), guards())).unwrap();
        doc["extra"] = json!(1);
        assert!(refused(&doc.to_string()).contains("unknown field `extra`"));
        let mut g = guards();
        g["max_delete"] = json!(1000);
        assert!(refused(&saved(json!([]), g)).contains("unknown field `max_delete`"));
    }

    #[test]
    fn refuses_a_display_plan_and_missing_guards() {
        let mut doc: Value = serde_json::from_str(&saved(json!([]), guards())).unwrap();
        doc.as_object_mut().unwrap().remove("guards");
        assert!(matches!(
            read_saved(&doc.to_string()),
            Err(SavedPlanError::NotSaved)
        ));
        let no_step = json!([{"address": "Team/t", "kind": "Team", "slug": "t", "action": "create",
            "source": null, "fields": [], "depends_on": [], "reason": null}]);
        assert!(matches!(
            read_saved(&saved(no_step, guards())),
            Err(SavedPlanError::NotSaved)
        ));
    }

    #[test]
    fn refuses_updates_and_deletes_without_fingerprints() {
        let del = change(
            "Bucket/b",
            "delete",
            json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": null}),
        );
        assert!(refused(&saved(json!([del]), guards())).contains("without the fingerprint"));
        let upd = change(
            "Bucket/b",
            "update",
            json!({"depends_on_steps": [], "intended": null, "body": {"slug": "b"}, "fingerprint": null}),
        );
        assert!(refused(&saved(json!([upd]), guards())).contains("without the fingerprint"));
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let step =
            json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": "f"});
        // A delete outside the prune scope.
        let del = change("Team/t", "delete", step.clone());
        assert!(refused(&saved(json!([del]), guards())).contains("outside the saved prune scope"));
        // A dependency that is not an earlier step.
        let mut later = change("Bucket/b", "delete", step.clone());
        later["step"]["depends_on_steps"] = json!([0]);
        assert!(refused(&saved(json!([later]), guards())).contains("not an earlier step"));
        // A body for another resource than the address.
        let other = change(
            "Bucket/b",
            "create",
            json!({"depends_on_steps": [], "intended": null, "body": {"slug": "c"}, "fingerprint": null}),
        );
        assert!(refused(&saved(json!([other]), guards())).contains("another slug"));
        // An operation the kind does not have; a slug that is no path segment.
        let dots = change("Bucket/..", "delete", step);
        assert!(refused(&saved(json!([dots]), guards())).contains("path segment"));
        let mut kind = change(
            "Bucket/b",
            "create",
            json!({"depends_on_steps": [], "intended": null, "body": {"slug": "b"}, "fingerprint": null}),
        );
        kind["kind"] = json!("Team");
        assert!(refused(&saved(json!([kind]), guards())).contains("do not match"));
    }

    #[test]
    fn guards_are_recomputed_not_trusted() {
        let step = |fp: &str| json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": fp});
        let mut g = guards();
        g["max_deletes"] = json!(1);
        g["declared_kinds"] = json!(["Team"]);
        let plan = read_saved(&saved(
            json!([
                change("Bucket/a", "delete", step("1")),
                change("Bucket/b", "delete", step("2"))
            ]),
            g,
        ))
        .unwrap();
        let refusals = super::super::refusals(&plan, false, false);
        assert_eq!(refusals.len(), 2, "{refusals:?}");
        assert!(refusals[0].contains("more than max_deletes (1)"));
        assert!(refusals[1].contains("no manifest declares any Bucket"));
        assert_eq!(super::super::refusals(&plan, true, false).len(), 1);
    }

    #[test]
    fn version_and_garbage() {
        assert!(matches!(
            read_saved("{\"format_version\": 2}"),
            Err(SavedPlanError::Version(_))
        ));
        assert!(matches!(read_saved("[]"), Err(SavedPlanError::Invalid(_))));
        assert!(matches!(
            read_saved("nope"),
            Err(SavedPlanError::Invalid(_))
        ));
    }
}
