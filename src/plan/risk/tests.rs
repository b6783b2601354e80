use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::api::registry::{Address, Kind};
use crate::plan::{Action, CascadeMember, GuardContext, Plan};

fn action(kind: &str, slug: &str, action: ActionKind) -> Action {
    Action {
        address: Address::new(Kind::named(kind), Some(slug.to_string())),
        action,
        source: None,
        fields: vec![],
        depends_on: vec![],
        reason: None,
        body: None,
        intended: None,
        fingerprint: None,
        cascade: vec![],
    }
}

fn plan(actions: Vec<Action>) -> Plan {
    Plan {
        target: "https://t.example.com".into(),
        actions,
        unchanged: 0,
        unmanaged: vec![],
        orphaned: vec![],
        observed: vec![],
        warnings: vec![],
        guard_violations: vec![],
        guard: GuardContext::default(),
        review: Default::default(),
    }
}

#[test]
fn counts_are_per_action_then_kind_in_a_fixed_order() {
    let p = plan(vec![
        action("Team", "b", ActionKind::Update),
        action("Bucket", "a", ActionKind::Delete),
        action("Dashboard", "c", ActionKind::Update),
        action("Team", "a", ActionKind::Update),
        action("Team", "n", ActionKind::Create),
    ]);
    let risk = summarize(&p);
    let counts: Vec<(ActionKind, &str, usize)> = risk
        .counts
        .iter()
        .map(|c| (c.action, c.kind.as_str(), c.count))
        .collect();
    assert_eq!(
        counts,
        [
            (ActionKind::Create, "Team", 1),
            (ActionKind::Update, "Dashboard", 1),
            (ActionKind::Update, "Team", 2),
            (ActionKind::Delete, "Bucket", 1),
        ]
    );
}

#[test]
fn deletes_carry_their_cascade_and_unsupported_their_reason() {
    let mut del = action("Bucket", "old", ActionKind::Delete);
    del.reason = Some("in the prune scope (Bucket/*)".into());
    del.cascade = vec![
        CascadeMember {
            address: Address::new(Kind::named("Monitor"), Some("m".into())),
            status: CascadeStatus::Managed,
        },
        CascadeMember {
            address: Address::new(Kind::named("Dashboard"), Some("d".into())),
            status: CascadeStatus::UnmanagedInPruneScope,
        },
    ];
    let mut un = action("DropRule", "x", ActionKind::Unsupported);
    un.intended = Some(ActionKind::Update);
    un.reason = Some("the target has no update for DropRule".into());
    let mut p = plan(vec![un, del]);
    p.guard.declared.insert(Kind::named("Bucket"));
    let r = summarize(&p);
    assert_eq!(r.deletes.len(), 1);
    assert_eq!(r.deletes[0].address, "Bucket/old");
    assert_eq!(
        r.deletes[0].reason.as_deref(),
        Some("in the prune scope (Bucket/*)")
    );
    let cascade: Vec<&str> = r.deletes[0]
        .cascade
        .iter()
        .map(|c| c.address.as_str())
        .collect();
    assert_eq!(cascade, ["Monitor/m", "Dashboard/d"]);
    assert_eq!(
        r.unsupported,
        [RiskUnsupported {
            address: "DropRule/x".into(),
            intended: Some(ActionKind::Update),
            reason: Some("the target has no update for DropRule".into()),
        }]
    );
    // Apply goes ahead without --force-delete-buckets; with it, the managed monitor is refused.
    assert!(r.guards.refused.is_empty(), "{:?}", r.guards.refused);
    assert_eq!(r.guards.deletes, 1);
    assert_eq!(r.guards.refused_with_force_delete.len(), 1);
    assert!(r.guards.refused_with_force_delete[0].contains("Monitor/m (declared by a manifest)"));
}

#[test]
fn guards_name_what_apply_refuses() {
    let mut p = plan(
        (0..3)
            .map(|i| action("Team", &format!("t{i}"), ActionKind::Delete))
            .collect(),
    );
    p.guard.max_deletes = 2;
    p.guard.declared.insert(Kind::named("Team"));
    let g = summarize(&p).guards;
    assert_eq!((g.max_deletes, g.deletes), (2, 3));
    assert_eq!(
        g.refused,
        ["the plan deletes 3 resources, more than max_deletes (2) of cfgctl.yaml"]
    );
}

#[test]
fn secrets_sent_are_named_by_path_never_by_value() {
    let mut create = action("Notifier", "ops", ActionKind::Create);
    create.body = Some(Arc::new(json!({
        "slug": "ops",
        "name": "Ops",
        "pagerduty": {"routing_key": "${env:ROUTING}", "service_key": "${env:SERVICE}"},
    })));
    let mut plain = action("Team", "t", ActionKind::Update);
    plain.body = Some(Arc::new(json!({"slug": "t", "name": "T"})));
    // A delete sends no body, whatever the current object held.
    let del = action("Notifier", "gone", ActionKind::Delete);
    let r = summarize(&plan(vec![create, plain, del]));
    assert_eq!(r.secrets.len(), 1, "{:?}", r.secrets);
    assert_eq!(r.secrets[0].address, "Notifier/ops");
    let mut fields = r.secrets[0].fields.clone();
    fields.sort();
    assert_eq!(fields, ["pagerduty.routing_key", "pagerduty.service_key"]);
    assert!(!serde_json::to_string(&r).unwrap().contains("${env:"));
}

#[test]
fn modes_and_environments_and_a_quiet_plan() {
    let mut p = plan(vec![]);
    assert!(summarize(&p).is_quiet());
    assert_eq!(summarize(&p).environments, ["https://t.example.com"]);
    p.orphaned = vec![Address::new(Kind::named("Team"), Some("kept".into()))];
    p.observed = vec![action("Team", "seen", ActionKind::Update)];
    let r = summarize(&p);
    assert_eq!(
        r.modes,
        RiskModes {
            observed: 1,
            orphaned: 1
        }
    );
    assert!(!r.is_quiet());
    assert!(
        r.counts.is_empty(),
        "observed actions are never counted as sent"
    );
    // Planned for an environment of cfgctl.yaml: its name, not the URL.
    p.guard.environment = Some("staging".into());
    assert_eq!(summarize(&p).environments, ["staging"]);
}
