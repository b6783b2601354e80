//! What the planner decides for one manifest, and for one resource no manifest declares,
//! under its management mode (`manage:` in `cfgctl.yaml`): each outcome built by a small
//! [`Action`] constructor, so that [`super::plan`] only gathers them.
//!
//! The modes (docs/prune.md, "Management modes"): `create-only` is created when missing and
//! never compared afterwards; `no-delete` is never deleted (declared by no manifest, it is
//! `orphaned`); `observe` is never written: a difference, or the resource missing, is an
//! observed action ([`super::Plan::observed`]), shown and counted by `drift`, never sent.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::normalize::{self, FieldChange};
use super::{compare, newer, source, Action, ActionKind, Capabilities, Compared, Current, Object};
use crate::api::registry::{Address, Op};
use crate::config::pattern::Pattern;
use crate::config::settings::{Mode, Settings};
use crate::manifest::Manifest;

/// What becomes of one manifest.
pub(super) enum Decision {
    /// Nothing to do (equal, or a create-only resource that exists).
    Unchanged,
    /// An action of the plan.
    Act(Action),
    /// An observed difference: shown, never sent.
    Observed(Action),
    /// Nothing to do, and a warning why.
    Warn(String),
}

fn action(address: &Address, kind: ActionKind, m: Option<&Manifest>) -> Action {
    Action {
        address: address.clone(),
        action: kind,
        source: m.map(source),
        fields: vec![],
        depends_on: vec![],
        reason: None,
        body: None,
        intended: None,
        fingerprint: None,
        cascade: vec![],
    }
}

pub(super) fn unsupported(
    address: Address,
    intended: ActionKind,
    reason: String,
    source: Option<super::Source>,
    fingerprint: Option<String>,
) -> Action {
    Action {
        source,
        reason: Some(reason),
        intended: Some(intended),
        fingerprint,
        ..action(&address, ActionKind::Unsupported, None)
    }
}

fn not_offered(caps: &Capabilities, address: &Address, op: Op) -> Option<String> {
    (!caps.has(address.kind, op)).then(|| {
        format!(
            "the target does not offer {}",
            crate::api::wire::operation_id(address.kind, op)
        )
    })
}

/// The create of a manifest missing on the target (unsupported when the target cannot).
fn create(address: &Address, m: &Manifest, caps: &Capabilities) -> Action {
    match not_offered(caps, address, Op::Create) {
        Some(why) => unsupported(
            address.clone(),
            ActionKind::Create,
            why,
            Some(source(m)),
            None,
        ),
        None => Action {
            body: Some(Arc::clone(&m.spec)),
            ..action(address, ActionKind::Create, Some(m))
        },
    }
}

/// The update of a resource that differs from its manifest.
fn update(
    address: &Address,
    m: &Manifest,
    cur: &Value,
    fields: Vec<FieldChange>,
    caps: &Capabilities,
) -> Action {
    let kind = address.kind;
    let fingerprint = Some(normalize::fingerprint(kind, cur));
    if let Some(why) = not_offered(caps, address, Op::Update) {
        let mut a = unsupported(
            address.clone(),
            ActionKind::Update,
            why,
            Some(source(m)),
            fingerprint,
        );
        a.fields = fields;
        return a;
    }
    // What the target has and this cfgctl does not manage is kept.
    let mut body = Value::clone(&m.spec);
    newer::carry_over(kind, cur, &mut body);
    Action {
        fields,
        body: Some(Arc::new(body)),
        fingerprint,
        ..action(address, ActionKind::Update, Some(m))
    }
}

/// A write an `observe` resource would need, shown and never sent.
fn observed(address: &Address, m: &Manifest, kind: ActionKind, fields: Vec<FieldChange>) -> Action {
    Action {
        fields,
        // A create shows its manifest's fields (shared, not copied).
        body: (kind == ActionKind::Create).then(|| Arc::clone(&m.spec)),
        reason: Some("observed (mode observe in cfgctl.yaml): never sent".into()),
        ..action(address, kind, Some(m))
    }
}

/// A manifest of a kind the target cannot read: sent with `create_if_missing` on every apply,
/// unless its mode forbids what that may do (overwrite, or write at all).
fn unreadable(address: &Address, m: &Manifest, mode: Mode, caps: &Capabilities) -> Decision {
    let kind = address.kind;
    if mode == Mode::Observe {
        return Decision::Warn(format!(
            "{address} ({}) has mode observe, but the target cannot read {kind}: it is not compared",
            m.source()
        ));
    }
    if !caps.has(kind, Op::Update) {
        let why = match kind.def().unaddressable {
            Some(why) => why.to_string(),
            None => format!("the target can neither read nor write {kind}"),
        };
        let a = unsupported(
            address.clone(),
            ActionKind::Create,
            why,
            Some(source(m)),
            None,
        );
        return Decision::Act(a);
    }
    if mode == Mode::CreateOnly {
        let why = format!(
            "mode create-only: the target cannot read {kind}, so whether it exists is unknown, and a create_if_missing update would overwrite it"
        );
        let a = unsupported(
            address.clone(),
            ActionKind::Create,
            why,
            Some(source(m)),
            None,
        );
        return Decision::Act(a);
    }
    Decision::Act(Action {
        reason: Some(format!(
            "the target cannot read {kind}: sent with create_if_missing on every apply"
        )),
        body: Some(Arc::clone(&m.spec)),
        ..action(address, ActionKind::Upsert, Some(m))
    })
}

/// What the planner decides from, beside the manifest.
pub(super) struct Ctx<'a> {
    pub current: &'a Current,
    pub caps: &'a Capabilities,
    pub settings: &'a Settings,
}

/// What becomes of manifest `m` under `mode`. `compared`: the comparison worked out ahead,
/// if it was; the target's fields this cfgctl does not know go into `newer_fields`.
pub(super) fn manifest(
    ctx: &Ctx<'_>,
    address: &Address,
    m: &Manifest,
    compared: Option<Compared>,
    newer_fields: &mut BTreeSet<String>,
) -> Decision {
    let Ctx {
        current,
        caps,
        settings,
    } = *ctx;
    let mode = settings.mode(address);
    let kind = address.kind;
    if !current.known.contains(&kind) {
        return unreadable(address, m, mode, caps);
    }
    let Some(cur) = current.resources.get(address) else {
        return match mode {
            Mode::Observe => Decision::Observed(observed(address, m, ActionKind::Create, vec![])),
            _ => Decision::Act(create(address, m, caps)),
        };
    };
    if mode == Mode::CreateOnly {
        // It exists: what the target has is what counts, an edit there is no diff.
        return Decision::Unchanged;
    }
    newer_fields.extend(cur.newer_fields().iter().map(|p| format!("{kind}.{p}")));
    let compared = compared.unwrap_or_else(|| compare(kind, cur, m, settings));
    let Compared::Differ(fields) = compared else {
        return Decision::Unchanged;
    };
    if mode == Mode::Observe {
        return Decision::Observed(observed(address, m, ActionKind::Update, fields));
    }
    Decision::Act(update(address, m, &cur.value(), fields, caps))
}

/// The delete of a resource no manifest declares, inside the prune scope (`pattern` is the
/// first prune pattern it matches): it says why, and shows what it deletes (the fields of the
/// current object, as a manifest would hold them).
pub(super) fn delete(
    address: &Address,
    cur: &Object,
    pattern: &Pattern,
    caps: &Capabilities,
) -> Action {
    let kind = address.kind;
    let value = cur.value();
    let fingerprint = Some(normalize::fingerprint(kind, &value));
    let fields = normalize::all_fields(&crate::api::spec::manifest_form(kind, &value), false);
    if let Some(why) = not_offered(caps, address, Op::Delete) {
        let mut a = unsupported(address.clone(), ActionKind::Delete, why, None, fingerprint);
        a.fields = fields;
        return a;
    }
    Action {
        fields,
        reason: Some(format!(
            "not declared by any manifest, inside the prune scope (`{pattern}`)"
        )),
        fingerprint,
        ..action(address, ActionKind::Delete, None)
    }
}

/// A warning for each `manage` rule that matches no resource, declared or on the target (a
/// typo, or a rule left behind).
pub(super) fn unmatched_rules<'a>(
    settings: &Settings,
    addresses: impl Iterator<Item = &'a Address> + Clone,
) -> Vec<String> {
    settings
        .manage
        .iter()
        .enumerate()
        .filter(|(_, r)| !addresses.clone().any(|a| r.pattern.matches(a)))
        .map(|(i, r)| {
            format!(
                "`manage[{i}]` of cfgctl.yaml (`{}`, mode {}) matches no resource in the manifests or on the target",
                r.pattern, r.mode
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
