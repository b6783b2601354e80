//! Reading a saved plan, change by change, from a stream: `apply PLANFILE` never holds the
//! file's text. Each change is read into its [`ChangeFile`], checked and turned into an
//! [`Action`] before the next is read, so at any time only the actions (what apply sends) and
//! one change's text are held. A plan of thousands of dashboard creates is tens of megabytes
//! of JSON; holding it whole beside the objects it describes would hold everything twice.
//!
//! The file is one JSON object whose fields may come in any order (a tool such as `jq -S`
//! sorts them): `changes` met before `format_version` are kept as their text and read once
//! the version is known, so a newer file still gets the version message; the checks that need
//! `guards` (written after `changes`) run once the whole file is read.

use std::cell::RefCell;
use std::fmt;
use std::path::PathBuf;

use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{
    op_of, parse_address, ChangeFile, FieldFile, GuardsFile, SavedPlanError, SummaryFile,
    FORMAT_VERSION,
};
use crate::api::registry::{Address, Kind};
use crate::plan::normalize::FieldChange;
use crate::plan::{Action, ActionKind, CascadeMember, CascadeStatus, Plan, Source};

/// Reads a saved plan from its text.
pub fn read_saved(text: &str) -> Result<Plan, SavedPlanError> {
    let text = text.trim_start_matches('\u{feff}');
    read_with(serde_json::Deserializer::from_str(text))
}

/// Reads a saved plan from a stream (a file), never holding its whole text.
pub fn read_saved_from(mut reader: impl std::io::BufRead) -> Result<Plan, SavedPlanError> {
    let bom = "\u{feff}".as_bytes();
    let head = reader
        .fill_buf()
        .map_err(|e| SavedPlanError::Invalid(format!("cannot read it: {e}")))?;
    if head.starts_with(bom) {
        reader.consume(bom.len());
    }
    read_with(serde_json::Deserializer::from_reader(reader))
}

fn read_with<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Plan, SavedPlanError> {
    let refused = RefCell::new(None);
    let read = (&mut de)
        .deserialize_map(FileVisitor { refused: &refused })
        .and_then(|parts| de.end().map(|()| parts));
    // A refusal found inside the stream is the error, whatever serde made of the stop.
    if let Some(e) = refused.into_inner() {
        return Err(e);
    }
    match read {
        Ok(parts) => parts.finish(),
        Err(e) if e.is_data() => Err(SavedPlanError::Invalid(e.to_string())),
        Err(e) if e.is_io() => Err(SavedPlanError::Invalid(format!("cannot read it: {e}"))),
        Err(e) => Err(SavedPlanError::Invalid(format!("not JSON ({e})"))),
    }
}

/// The fields of a saved [`super::PlanFile`], in the order it writes them.
pub(super) const FIELDS: &[&str] = &[
    "format_version",
    "target",
    "summary",
    "risk",
    "changes",
    "observed",
    "unmanaged",
    "orphaned",
    "warnings",
    "policy",
    "review",
    "guards",
];

/// The file so far.
#[derive(Default)]
struct Parts {
    version: bool,
    target: Option<String>,
    summary: Option<SummaryFile>,
    /// `changes`, once read (as actions).
    actions: Option<Vec<Action>>,
    /// `changes` read before `format_version`: their text, read once the version is known.
    early: Option<Vec<Box<RawValue>>>,
    unmanaged: bool,
    warnings: bool,
    guards: Option<GuardsFile>,
    /// `review` and `policy`: recorded, shown, never applied (absent in older files).
    review: crate::plan::review::Review,
}

impl Parts {
    fn finish(self) -> Result<Plan, SavedPlanError> {
        let guards = self.guards.as_ref().ok_or(SavedPlanError::NotSaved)?;
        let guard = super::guard_context(guards)?;
        let actions = self.actions.unwrap_or_default();
        for (index, a) in actions.iter().enumerate() {
            if a.action == ActionKind::Delete && !guard.may_delete(&a.address) {
                return Err(SavedPlanError::Change {
                    index,
                    address: a.address.to_string(),
                    problem: "a delete outside the saved prune scope (or of an excluded resource)"
                        .into(),
                });
            }
        }
        let guard_violations = crate::plan::guards(&actions, &guard);
        Ok(Plan {
            // Both are present: `FileVisitor` refuses a file without them.
            target: self.target.unwrap_or_default(),
            unchanged: self.summary.map_or(0, |s| s.unchanged),
            actions,
            unmanaged: vec![],
            orphaned: vec![],
            observed: vec![],
            warnings: vec![],
            guard_violations,
            guard,
            review: self.review,
        })
    }
}

struct FileVisitor<'r> {
    refused: &'r RefCell<Option<SavedPlanError>>,
}

impl FileVisitor<'_> {
    /// Records a refusal and stops the reading with a placeholder error (the refusal wins).
    fn refuse<E: de::Error>(&self, e: SavedPlanError) -> E {
        let message = e.to_string();
        *self.refused.borrow_mut() = Some(e);
        E::custom(message)
    }
}

impl<'de> Visitor<'de> for FileVisitor<'_> {
    type Value = Parts;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a saved plan (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
        let mut parts = Parts::default();
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let Some(&name) = FIELDS.iter().find(|f| **f == key) else {
                return Err(de::Error::unknown_field(&key, FIELDS));
            };
            if !seen.insert(name) {
                return Err(de::Error::duplicate_field(name));
            }
            match name {
                "format_version" => {
                    let v: Value = map.next_value()?;
                    if v.as_u64() != Some(u64::from(FORMAT_VERSION)) {
                        return Err(self.refuse(SavedPlanError::Version(v.to_string())));
                    }
                    parts.version = true;
                    if let Some(early) = parts.early.take() {
                        let mut actions = Vec::with_capacity(early.len());
                        for (index, text) in early.into_iter().enumerate() {
                            let change = serde_json::from_str(text.get())
                                .map_err(|e| {
                                    SavedPlanError::Invalid(format!("changes[{index}]: {e}"))
                                })
                                .and_then(|c| change_action(index, c, &actions));
                            actions.push(change.map_err(|e| self.refuse(e))?);
                        }
                        parts.actions = Some(actions);
                    }
                }
                "target" => parts.target = Some(map.next_value()?),
                "summary" => parts.summary = Some(map.next_value()?),
                "changes" if parts.version => {
                    let seed = ChangesSeed { file: &self };
                    parts.actions = Some(map.next_value_seed(seed)?);
                }
                "changes" => parts.early = Some(map.next_value()?),
                "unmanaged" => {
                    map.next_value::<Vec<String>>()?;
                    parts.unmanaged = true;
                }
                // Shown only: nothing in them is applied (their shape is still checked).
                "risk" => {
                    map.next_value::<crate::plan::risk::Risk>()?;
                }
                "orphaned" => {
                    map.next_value::<Vec<String>>()?;
                }
                "observed" => {
                    map.next_value::<Vec<ChangeFile<Box<RawValue>>>>()?;
                }
                "warnings" => {
                    map.next_value::<Vec<String>>()?;
                    parts.warnings = true;
                }
                "policy" => parts.review.policy = map.next_value()?,
                "review" => {
                    let policy = std::mem::take(&mut parts.review.policy);
                    parts.review = map.next_value()?;
                    parts.review.policy = policy;
                }
                _ => parts.guards = Some(map.next_value()?),
            }
        }
        if !parts.version {
            return Err(self.refuse(SavedPlanError::Invalid("no format_version".into())));
        }
        for (name, present) in [
            ("target", parts.target.is_some()),
            ("summary", parts.summary.is_some()),
            ("changes", parts.actions.is_some()),
            ("unmanaged", parts.unmanaged),
            ("warnings", parts.warnings),
        ] {
            if !present {
                return Err(de::Error::missing_field(name));
            }
        }
        Ok(parts)
    }
}

/// `changes`, read element by element into actions.
struct ChangesSeed<'a, 'r> {
    file: &'a FileVisitor<'r>,
}

impl<'de> DeserializeSeed<'de> for ChangesSeed<'_, '_> {
    type Value = Vec<Action>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<Action>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ChangesSeed<'_, '_> {
    type Value = Vec<Action>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of changes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Action>, A::Error> {
        let mut actions = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(change) = seq.next_element::<ChangeFile<Box<RawValue>>>()? {
            let action =
                change_action(actions.len(), change, &actions).map_err(|e| self.file.refuse(e))?;
            actions.push(action);
        }
        Ok(actions)
    }
}

/// A saved field's shape, checked without building its values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read only to be checked
struct FieldShape {
    path: String,
    #[serde(default)]
    before: serde::de::IgnoredAny,
    #[serde(default)]
    after: serde::de::IgnoredAny,
}

/// One change taken apart into its action (its fields and object moved, not copied), with
/// every rule a change must keep on its own and against the earlier ones (`done`). The delete
/// scope, which needs the file's `guards`, is checked by [`Parts::finish`].
fn change_action(
    index: usize,
    c: ChangeFile<Box<RawValue>>,
    done: &[Action],
) -> Result<Action, SavedPlanError> {
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
        if !crate::api::wire::is_usable_segment(slug) {
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
    fingerprint_fits(c.action, step, &address, done).map_err(&bad)?;
    let mut cascade = Vec::with_capacity(c.cascade.len());
    for m in &c.cascade {
        // An unread member names a whole kind.
        let address = match m.status {
            CascadeStatus::Unread => Kind::from_name(&m.address).map(|k| Address::new(k, None)),
            _ => parse_address(&m.address),
        };
        cascade.push(CascadeMember {
            address: address.ok_or_else(|| bad("a cascade member is not a resource address"))?,
            status: m.status,
        });
    }
    let fields = if matches!(c.action, ActionKind::Create | ActionKind::Upsert) {
        serde_json::from_str::<Vec<FieldShape>>(c.fields.get())
            .map_err(|e| bad(&format!("fields: {e}")))?;
        Vec::new()
    } else {
        serde_json::from_str::<Vec<FieldFile>>(c.fields.get())
            .map_err(|e| bad(&format!("fields: {e}")))?
            .into_iter()
            .map(|f| FieldChange {
                path: f.path,
                before: f.before,
                after: f.after,
            })
            .collect()
    };
    let Some(step) = c.step else {
        return Err(SavedPlanError::NotSaved);
    };
    Ok(Action {
        address,
        action: c.action,
        source: c.source.as_ref().map(|s| Source {
            file: PathBuf::from(&s.file),
            line: s.line,
        }),
        fields,
        depends_on: step.depends_on_steps,
        reason: c.reason,
        body: step.body.map(std::sync::Arc::new),
        intended: step.intended,
        fingerprint: step.fingerprint,
        cascade,
    })
}

/// An update or delete holds the fingerprint of what it changes, in the form this cfgctl
/// writes (only the follow-up update of a resource the plan creates first has none).
fn fingerprint_fits(
    action: ActionKind,
    step: &super::StepFile,
    address: &Address,
    done: &[Action],
) -> Result<(), &'static str> {
    match action {
        ActionKind::Delete if step.fingerprint.is_none() => {
            return Err("a delete without the fingerprint of what it deletes");
        }
        ActionKind::Update if step.fingerprint.is_none() => {
            // Only the follow-up update of a resource this plan creates first has none.
            let after_own_create = step
                .depends_on_steps
                .iter()
                .any(|&d| done[d].address == *address && done[d].action == ActionKind::Create);
            if !after_own_create {
                return Err("an update without the fingerprint of what it updates");
            }
        }
        _ => {}
    }
    if step
        .fingerprint
        .as_deref()
        .is_some_and(|f| !crate::plan::normalize::is_fingerprint(f))
    {
        return Err(
            "a fingerprint this cfgctl does not write (saved by another version? plan again)",
        );
    }
    Ok(())
}
