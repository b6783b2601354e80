//! What `cfgctl drift` reports: every drifted resource, by class, worked out from a [`Plan`]
//! (made without `--prune`). Pure. `render::drift` shows it in text, Markdown and JSON.
//!
//! A drift reads in the plan's one direction: a field's `before` is the target's value and its
//! `after` the manifests' (the report words them neutrally, "target has 60, manifests have
//! 120"), since nothing says which side moved: an edit on the target and an edit of a manifest
//! look the same. A report never says the target matches while there is drift.

use std::collections::BTreeSet;

use crate::api::registry::{Address, Kind};
use crate::plan::normalize::FieldChange;
use crate::plan::{ActionKind, Plan, Source};

/// How a resource drifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DriftClass {
    /// Managed, and the target's object differs from the manifest.
    Changed,
    /// Managed, and missing on the target (gone from it, or never applied).
    Deleted,
    /// On the target, inside the prune scope, declared by no manifest.
    Unmanaged,
    /// Managed, of a kind the target can neither read nor write.
    Unreadable,
}

impl DriftClass {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftClass::Changed => "changed",
            DriftClass::Deleted => "deleted",
            DriftClass::Unmanaged => "unmanaged",
            DriftClass::Unreadable => "unreadable",
        }
    }

    pub const ALL: [DriftClass; 4] = [
        DriftClass::Changed,
        DriftClass::Deleted,
        DriftClass::Unmanaged,
        DriftClass::Unreadable,
    ];
}

/// One drifted resource.
#[derive(Clone, Debug, PartialEq)]
pub struct Drifted {
    pub address: Address,
    pub class: DriftClass,
    pub source: Option<Source>,
    /// The fields that differ, as the plan has them: the target's value (`before`), the
    /// manifests' (`after`).
    pub fields: Vec<FieldChange>,
    pub reason: Option<String>,
}

/// Every drifted resource of a plan, by class, then address. `known`: the kinds whose state
/// was read.
pub fn drifted(plan: &Plan, known: &BTreeSet<Kind>) -> Vec<Drifted> {
    let mut out = Vec::new();
    // Observed differences drift like any other (they are never applied).
    let actions = plan.actions.iter().filter(|a| a.is_change());
    let observed = plan.observed.iter();
    for (a, is_observed) in actions
        .map(|a| (a, false))
        .chain(observed.map(|a| (a, true)))
    {
        let intended = match a.action {
            ActionKind::Unsupported => a.intended.unwrap_or(ActionKind::Update),
            other => other,
        };
        let class = match intended {
            ActionKind::Update => DriftClass::Changed,
            // A create of a kind the target cannot read at all says nothing about the target.
            ActionKind::Create if !known.contains(&a.address.kind) => DriftClass::Unreadable,
            ActionKind::Create | ActionKind::Upsert => DriftClass::Deleted,
            ActionKind::Delete | ActionKind::Unsupported => DriftClass::Unmanaged,
        };
        let fields = if class == DriftClass::Changed {
            a.fields.clone()
        } else {
            vec![]
        };
        out.push(Drifted {
            address: a.address.clone(),
            class,
            source: a.source.clone(),
            fields,
            reason: (a.action == ActionKind::Unsupported || is_observed)
                .then(|| a.reason.clone())
                .flatten(),
        });
    }
    for u in plan.unmanaged.iter().filter(|u| u.in_prune_scope) {
        out.push(Drifted {
            address: u.address.clone(),
            class: DriftClass::Unmanaged,
            source: None,
            fields: vec![],
            reason: None,
        });
    }
    out.sort_by(|a, b| (a.class, &a.address).cmp(&(b.class, &b.address)));
    out
}

#[cfg(test)]
pub(crate) mod tests;
