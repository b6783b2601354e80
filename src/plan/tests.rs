//! Unit tests of the planner: pure inputs, exact outputs.

use serde_json::{json, Value};

use super::*;
use crate::util::yaml::{Pos, Spans};

pub(super) fn manifest(kind: Kind, spec: Value) -> Manifest {
    let slug = spec.get("slug").and_then(Value::as_str).map(str::to_string);
    Manifest {
        kind,
        slug,
        spec: spec.into(),
        file: PathBuf::from(format!("{}.yaml", kind.def().path)),
        pos: Pos::new(1, 1),
        spans: Spans::default(),
        digest: Default::default(),
        lean: None,
        prepared: Vec::new(),
    }
}

pub(super) fn current(items: &[(Kind, Value)]) -> Current {
    let mut c = Current {
        known: crate::api::registry::kinds()
            .into_iter()
            .map(|d| d.kind)
            .collect(),
        ..Current::default()
    };
    for (kind, v) in items {
        let slug = v.get("slug").and_then(Value::as_str).map(str::to_string);
        c.insert(Address::new(*kind, slug), v);
    }
    c
}

pub(super) fn run(desired: &[Manifest], cur: &Current, settings: &Settings, prune: bool) -> Plan {
    plan(
        desired,
        cur,
        &Capabilities::assumed_full(),
        settings,
        &PlanOptions {
            target: "test".into(),
            prune,
            only: vec![],
            references_declared: false,
        },
    )
    .unwrap()
}

pub(super) fn steps(p: &Plan) -> Vec<String> {
    p.actions
        .iter()
        .map(|a| format!("{} {}", a.action.as_str(), a.address))
        .collect()
}

#[test]
fn creates_run_after_what_they_reference() {
    let desired = vec![
        manifest(
            Kind::named("Monitor"),
            json!({"slug": "m", "name": "M", "bucket_slug": "b", "notification_policy_slug": "n"}),
        ),
        manifest(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "team_slug": "t"}),
        ),
        manifest(
            Kind::named("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "team_slug": "t"}),
        ),
        manifest(Kind::named("Team"), json!({"slug": "t", "name": "T"})),
    ];
    let p = run(&desired, &current(&[]), &Settings::default(), false);
    assert_eq!(
        steps(&p),
        vec![
            "create Team/t",
            "create Bucket/b",
            "create NotificationPolicy/n",
            "create Monitor/m"
        ]
    );
    assert_eq!(p.actions[3].depends_on, vec![1, 2]);
    assert_eq!(p.actions[1].depends_on, vec![0]);
}

#[test]
fn deletes_run_before_what_they_referenced() {
    let cur = current(&[
        (Kind::named("Team"), json!({"slug": "t", "name": "T"})),
        (
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "team_slug": "t"}),
        ),
        (
            Kind::named("Monitor"),
            json!({"slug": "m", "name": "M", "bucket_slug": "b"}),
        ),
    ]);
    let settings = Settings {
        prune: vec![crate::config::pattern::Pattern::parse("*/*").unwrap()],
        ..Settings::default()
    };
    let keep = vec![manifest(
        Kind::named("DropRule"),
        json!({"slug": "d", "name": "D"}),
    )];
    let p = run(&keep, &cur, &settings, true);
    assert_eq!(
        steps(&p),
        vec![
            "create DropRule/d",
            "delete Monitor/m",
            "delete Bucket/b",
            "delete Team/t"
        ]
    );
    assert_eq!(p.actions[2].depends_on, vec![1]);
    // Three kinds emptied with no manifest of their kind: the guard speaks.
    assert_eq!(p.guard_violations.len(), 3);
}

#[test]
fn unchanged_updates_and_unmanaged() {
    let cur = current(&[
        (
            Kind::named("Team"),
            json!({"slug": "t", "name": "T", "created_at": "x", "updated_at": "y"}),
        ),
        (
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "description": "old"}),
        ),
        (
            Kind::named("Bucket"),
            json!({"slug": "legacy-1", "name": "L"}),
        ),
        (
            Kind::named("Dashboard"),
            json!({"slug": "scratch", "name": "S"}),
        ),
    ]);
    let settings = Settings {
        prune: vec![crate::config::pattern::Pattern::parse("Dashboard/*").unwrap()],
        exclude: vec![crate::config::pattern::Pattern::parse("Bucket/legacy-*").unwrap()],
        ..Settings::default()
    };
    let desired = vec![
        manifest(Kind::named("Team"), json!({"slug": "t", "name": "T"})),
        manifest(Kind::named("Bucket"), json!({"slug": "b", "name": "B"})),
    ];
    let p = run(&desired, &cur, &settings, false);
    assert_eq!(steps(&p), vec!["update Bucket/b"]);
    assert_eq!(p.actions[0].fields[0].path, "description");
    assert_eq!(
        p.actions[0].fields[0].after, None,
        "a removed field is a change"
    );
    assert_eq!(p.unchanged, 1);
    assert_eq!(
        p.unmanaged,
        vec![Unmanaged {
            address: Address::new(Kind::named("Dashboard"), Some("scratch".into())),
            in_prune_scope: true
        }]
    );
    assert!(p.has_drift());
    let pruned = run(&desired, &cur, &settings, true);
    assert_eq!(
        steps(&pruned),
        vec!["update Bucket/b", "delete Dashboard/scratch"]
    );
    assert!(pruned.unmanaged.is_empty());
}

#[test]
fn dangling_reference_is_an_error_at_the_field() {
    let desired = vec![manifest(
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B", "team_slug": "ghost"}),
    )];
    let err = plan(
        &desired,
        &current(&[]),
        &Capabilities::assumed_full(),
        &Settings::default(),
        &PlanOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.0[0].to_string(),
        "buckets.yaml:1:1: error: Bucket/b references Team/ghost at `team_slug`, which is neither in the manifests nor on the target"
    );
}

#[test]
fn create_cycle_is_broken_with_a_follow_up_update() {
    let desired = vec![
        manifest(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "notification_policy_slug": "n"}),
        ),
        manifest(
            Kind::named("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "bucket_slug": "b"}),
        ),
    ];
    let p = run(&desired, &current(&[]), &Settings::default(), false);
    assert_eq!(
        steps(&p),
        vec![
            "create Bucket/b",
            "create NotificationPolicy/n",
            "update Bucket/b"
        ]
    );
    assert!(p.actions[0]
        .body
        .as_ref()
        .unwrap()
        .get("notification_policy_slug")
        .is_none());
    assert_eq!(
        p.actions[2].body.as_ref().unwrap()["notification_policy_slug"],
        "n"
    );
    assert_eq!(p.actions[2].depends_on, vec![0, 1]);
    assert_eq!(
        p.actions[2].reason.as_deref(),
        Some("sets `notification_policy_slug` once NotificationPolicy/n exists (breaks the reference cycle Bucket/b -> NotificationPolicy/n -> Bucket/b)")
    );
}

#[test]
fn delete_cycle_is_broken_by_dropping_a_reference() {
    let cur = current(&[
        (
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "notification_policy_slug": "n"}),
        ),
        (
            Kind::named("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "bucket_slug": "b"}),
        ),
    ]);
    let settings = Settings {
        prune: vec![crate::config::pattern::Pattern::parse("*/*").unwrap()],
        ..Settings::default()
    };
    let keep = vec![manifest(
        Kind::named("Team"),
        json!({"slug": "t", "name": "T"}),
    )];
    let p = run(&keep, &cur, &settings, true);
    assert_eq!(
        steps(&p),
        vec![
            "update Bucket/b",
            "create Team/t",
            "delete NotificationPolicy/n",
            "delete Bucket/b"
        ]
    );
    assert!(p.actions[0]
        .body
        .as_ref()
        .unwrap()
        .get("notification_policy_slug")
        .is_none());
}

#[test]
fn updates_of_existing_resources_need_no_order() {
    // Both exist; adding references both ways needs no ordering, so it is no cycle.
    let cur = current(&[
        (Kind::named("Bucket"), json!({"slug": "b", "name": "B"})),
        (
            Kind::named("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "team_slug": "t"}),
        ),
        (Kind::named("Team"), json!({"slug": "t", "name": "T"})),
    ]);
    let desired = vec![
        manifest(Kind::named("Team"), json!({"slug": "t", "name": "T"})),
        manifest(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "notification_policy_slug": "n"}),
        ),
        manifest(
            Kind::named("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "bucket_slug": "b"}),
        ),
    ];
    let p = run(&desired, &cur, &Settings::default(), false);
    assert_eq!(
        steps(&p),
        vec!["update Bucket/b", "update NotificationPolicy/n"]
    );
    assert!(p.actions.iter().all(|a| a.depends_on.is_empty()));
}

/// A target that can create buckets and policies but update neither: the create cycle has
/// no way out.
pub(super) fn unbreakable() -> PlanError {
    let mut caps = Capabilities::assumed_full();
    for kind in [Kind::named("Bucket"), Kind::named("NotificationPolicy")] {
        caps.ops.insert(
            kind,
            crate::api::registry::Ops {
                update: false,
                ..crate::api::registry::Ops::CRUDL
            },
        );
    }
    let desired = vec![
        manifest(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B", "notification_policy_slug": "n"}),
        ),
        manifest(
            Kind::named("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "bucket_slug": "b"}),
        ),
    ];
    plan(
        &desired,
        &current(&[]),
        &caps,
        &Settings::default(),
        &PlanOptions::default(),
    )
    .unwrap_err()
}

#[test]
fn unbreakable_cycle_is_an_error_naming_it() {
    let err = unbreakable();
    assert_eq!(
        err.0[0].to_string(),
        "buckets.yaml:1:1: error: reference cycle that cannot be broken: Bucket/b -> NotificationPolicy/n -> Bucket/b (no reference in it is optional on a resource the target can update)"
    );
    insta::assert_snapshot!(format!("{}\nerror: {err}", err.0[0]));
}

#[test]
fn unsupported_and_upsert_follow_capabilities() {
    let caps = Capabilities::from_swagger(&crate::api::spec::swagger_for(
        crate::api::registry::Profile::Seed,
    ));
    let mut cur = current(&[]);
    cur.known = crate::api::registry::kinds()
        .into_iter()
        .filter(|d| caps.can_read_state(d.kind))
        .map(|d| d.kind)
        .collect();
    let desired = vec![
        manifest(Kind::named("Team"), json!({"slug": "t", "name": "T"})),
        manifest(
            Kind::named("ConsumptionBudget"),
            json!({"slug": "c", "name": "C"}),
        ),
    ];
    let p = plan(
        &desired,
        &cur,
        &caps,
        &Settings::default(),
        &PlanOptions::default(),
    )
    .unwrap();
    assert_eq!(
        steps(&p),
        vec!["upsert ConsumptionBudget/c", "unsupported Team/t"]
    );
    assert_eq!(
        p.actions[1].reason.as_deref(),
        Some("the target can neither read nor write Team")
    );
    assert!(p.has_changes(), "unsupported counts");
    let only_upsert = plan(
        &desired[1..],
        &cur,
        &caps,
        &Settings::default(),
        &PlanOptions::default(),
    )
    .unwrap();
    assert!(
        !only_upsert.has_changes(),
        "an upsert alone is not a change"
    );
}

#[test]
fn only_filters_actions() {
    let desired = vec![
        manifest(Kind::named("Team"), json!({"slug": "a", "name": "A"})),
        manifest(Kind::named("Team"), json!({"slug": "b", "name": "B"})),
    ];
    let p = plan(
        &desired,
        &current(&[]),
        &Capabilities::assumed_full(),
        &Settings::default(),
        &PlanOptions {
            only: vec![crate::config::pattern::Pattern::parse("Team/b").unwrap()],
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(steps(&p), vec!["create Team/b"]);
}

#[test]
fn planning_is_deterministic() {
    let desired: Vec<Manifest> = (0..30)
        .rev()
        .map(|i| {
            manifest(
                Kind::named("Team"),
                json!({"slug": format!("t{i:02}"), "name": "T"}),
            )
        })
        .collect();
    let a = run(&desired, &current(&[]), &Settings::default(), false);
    let mut shuffled = desired.clone();
    shuffled.reverse();
    let b = run(&shuffled, &current(&[]), &Settings::default(), false);
    assert_eq!(a, b);
}

#[test]
fn documented_defaults_left_out_are_no_change_and_a_different_value_is() {
    let m = |spec: Value| vec![manifest(Kind::named("Monitor"), spec)];
    let base = json!({"slug": "m", "name": "M", "bucket_slug": "b"});
    let bucket = (Kind::named("Bucket"), json!({"slug": "b", "name": "B"}));
    // The server filled the default in; the manifest leaves it out.
    let filled = json!({"slug": "m", "name": "M", "bucket_slug": "b", "interval_secs": 60});
    let p = run(
        &m(base.clone()),
        &current(&[bucket.clone(), (Kind::named("Monitor"), filled.clone())]),
        &Settings::default(),
        false,
    );
    assert!(p.actions.is_empty(), "{:?}", p.actions);
    // The server omits it; the manifest states the default.
    let mut explicit = base.clone();
    explicit["interval_secs"] = json!(60);
    let p = run(
        &m(explicit),
        &current(&[bucket.clone(), (Kind::named("Monitor"), base.clone())]),
        &Settings::default(),
        false,
    );
    assert!(p.actions.is_empty(), "{:?}", p.actions);
    // A different value is an update, shown from the default.
    let mut other = base.clone();
    other["interval_secs"] = json!(120);
    let p = run(
        &m(other),
        &current(&[bucket.clone(), (Kind::named("Monitor"), filled)]),
        &Settings::default(),
        false,
    );
    assert_eq!(steps(&p), vec!["update Monitor/m"]);
    assert_eq!(
        p.actions[0].fields,
        vec![FieldChange {
            path: "interval_secs".into(),
            before: Some(json!(60)),
            after: Some(json!(120)),
        }]
    );
}

#[test]
fn sets_compare_without_order_and_show_members() {
    let team = |emails: Value| json!({"slug": "t", "name": "T", "user_emails": emails});
    let p = run(
        &[manifest(Kind::named("Team"), team(json!(["b@x", "a@x"])))],
        &current(&[(Kind::named("Team"), team(json!(["a@x", "b@x"])))]),
        &Settings::default(),
        false,
    );
    assert!(p.actions.is_empty(), "{:?}", p.actions);
    let p = run(
        &[manifest(Kind::named("Team"), team(json!(["c@x", "a@x"])))],
        &current(&[(Kind::named("Team"), team(json!(["a@x", "b@x"])))]),
        &Settings::default(),
        false,
    );
    assert_eq!(
        p.actions[0].fields,
        vec![
            FieldChange {
                path: "user_emails[]".into(),
                before: Some(json!("b@x")),
                after: None,
            },
            FieldChange {
                path: "user_emails[]".into(),
                before: None,
                after: Some(json!("c@x")),
            },
        ]
    );
}

#[test]
fn fields_of_a_newer_api_are_no_change_and_carried_into_updates() {
    let on_server = json!({"slug": "b", "name": "B", "retention_tier": "COLD"});
    let same = run(
        &[manifest(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "B"}),
        )],
        &current(&[(Kind::named("Bucket"), on_server.clone())]),
        &Settings::default(),
        false,
    );
    assert!(same.actions.is_empty(), "{:?}", same.actions);
    assert_eq!(
        same.warnings,
        vec!["Bucket.retention_tier: kept as the target has it; this cfgctl does not manage it"]
    );
    let renamed = run(
        &[manifest(
            Kind::named("Bucket"),
            json!({"slug": "b", "name": "New"}),
        )],
        &current(&[(Kind::named("Bucket"), on_server)]),
        &Settings::default(),
        false,
    );
    assert_eq!(renamed.actions[0].fields.len(), 1);
    assert_eq!(renamed.actions[0].fields[0].path, "name");
    assert_eq!(
        renamed.actions[0].body.as_deref().cloned(),
        Some(json!({"slug": "b", "name": "New", "retention_tier": "COLD"}))
    );
}

#[test]
fn an_unknown_enum_value_is_shown_and_replaced() {
    let p = run(
        &[manifest(
            Kind::named("DropRule"),
            json!({"slug": "d", "name": "D", "mode": "PREVIEW"}),
        )],
        &current(&[(
            Kind::named("DropRule"),
            json!({"slug": "d", "name": "D", "mode": "SHADOW"}),
        )]),
        &Settings::default(),
        false,
    );
    assert_eq!(
        p.actions[0].fields,
        vec![FieldChange {
            path: "mode".into(),
            before: Some(json!("SHADOW")),
            after: Some(json!("PREVIEW")),
        }]
    );
    assert_eq!(p.actions[0].body.as_ref().unwrap()["mode"], "PREVIEW");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

/// A lean load's hook: a manifest the target does not hold (its object missing, or its kind not
/// read) is sent, never compared, so it keeps its spec and is not digested; one the target
/// holds is digested and may let its spec go; before the lists are read, every one is.
#[test]
fn a_manifest_the_target_does_not_hold_is_kept_and_not_digested() {
    let bucket = |slug: &str| manifest(Kind::named("Bucket"), json!({"slug": slug, "name": slug}));
    let listed = Listed {
        known: [Kind::named("Bucket")].into_iter().collect(),
        addresses: [Address::new(Kind::named("Bucket"), Some("held".into()))]
            .into_iter()
            .collect(),
    };
    let settings = Settings::default();
    let (held, missing, unread) = (bucket("held"), bucket("missing"), bucket("early"));
    assert!(may_let_go_given(&held, &settings, Some(&listed)));
    assert!(held.digest.get().is_some());
    assert!(!may_let_go_given(&missing, &settings, Some(&listed)));
    assert!(missing.digest.get().is_none());
    let team = manifest(Kind::named("Team"), json!({"slug": "t", "name": "T"}));
    assert!(!may_let_go_given(&team, &settings, Some(&listed)));
    assert!(team.digest.get().is_none());
    assert!(may_let_go_given(&unread, &settings, None));
    assert!(unread.digest.get().is_some());
    // Digested later when a comparison ever asks: the same digest.
    let slow = normalize::digest(missing.kind, &missing.spec);
    assert_eq!(digest(&missing), slow);
}
