use serde_json::json;

use super::*;
use crate::plan::{Action, Unmanaged};

pub(crate) fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap()
}

pub(crate) fn action(
    kind: Kind,
    slug: &str,
    action: ActionKind,
    fields: Vec<FieldChange>,
) -> Action {
    Action {
        address: Address::new(kind, Some(slug.into())),
        action,
        source: Some(Source {
            file: "m.yaml".into(),
            line: 3,
        }),
        fields,
        depends_on: vec![],
        reason: None,
        body: None,
        intended: None,
        fingerprint: None,
        cascade: vec![],
    }
}

pub(crate) fn known() -> BTreeSet<Kind> {
    crate::api::registry::kinds()
        .into_iter()
        .map(|d| d.kind)
        .collect()
}

pub(crate) fn plan(actions: Vec<Action>, unmanaged: Vec<(&str, bool)>) -> Plan {
    Plan {
        target: "t".into(),
        actions,
        unchanged: 4,
        unmanaged: unmanaged
            .into_iter()
            .map(|(s, in_prune_scope)| Unmanaged {
                address: Address::new(kind("Dashboard"), Some(s.into())),
                in_prune_scope,
            })
            .collect(),
        orphaned: vec![],
        observed: vec![],
        warnings: vec![],
        guard_violations: vec![],
        guard: Default::default(),
        review: Default::default(),
    }
}

/// A field the target has as 60 and the manifests as 120, as the plan has it.
pub(crate) fn interval() -> FieldChange {
    FieldChange {
        path: "interval_secs".into(),
        before: Some(json!(60)),
        after: Some(json!(120)),
    }
}

#[test]
fn every_class_is_named_and_fields_keep_the_plans_direction() {
    let p = plan(
        vec![
            action(kind("Monitor"), "m", ActionKind::Update, vec![interval()]),
            action(kind("Team"), "t", ActionKind::Create, vec![]),
            action(kind("Team"), "u", ActionKind::Upsert, vec![]),
        ],
        vec![("scratch", true), ("elsewhere", false)],
    );
    let items = drifted(&p, &known());
    let got: Vec<(String, DriftClass)> = items
        .iter()
        .map(|d| (d.address.to_string(), d.class))
        .collect();
    assert_eq!(
        got,
        vec![
            ("Monitor/m".into(), DriftClass::Changed),
            ("Team/t".into(), DriftClass::Deleted),
            ("Dashboard/scratch".into(), DriftClass::Unmanaged),
        ]
    );
    // The target's value is `before`, the manifests' `after`: the plan's direction.
    assert_eq!(items[0].fields, vec![interval()]);
}

#[test]
fn kinds_the_target_cannot_read_are_not_called_deleted() {
    let mut a = action(kind("Team"), "t", ActionKind::Unsupported, vec![]);
    a.intended = Some(ActionKind::Create);
    a.reason = Some("the target can neither read nor write Team".into());
    let p = plan(vec![a], vec![]);
    let known: BTreeSet<Kind> = known().into_iter().filter(|k| *k != kind("Team")).collect();
    let items = drifted(&p, &known);
    assert_eq!(items[0].class, DriftClass::Unreadable);
    assert_eq!(
        items[0].reason.as_deref(),
        Some("the target can neither read nor write Team")
    );
}
