//! The management modes in the planner: pure inputs, exact outputs.

use serde_json::json;

use crate::config::settings::{ManageRule, Mode};
use crate::plan::tests::{current, manifest, run, steps};
use crate::plan::*;

fn dash(slug: &str, name: &str) -> serde_json::Value {
    json!({"slug": slug, "name": name, "dashboard_json": "{}"})
}

fn modes(rules: &[(&str, Mode)]) -> Settings {
    Settings {
        prune: vec![Pattern::parse("Dashboard/*").unwrap()],
        manage: rules
            .iter()
            .map(|(p, mode)| ManageRule {
                pattern: Pattern::parse(p).unwrap(),
                mode: *mode,
            })
            .collect(),
        ..Settings::default()
    }
}

fn d() -> Kind {
    Kind::named("Dashboard")
}

#[test]
fn create_only_is_created_when_missing_and_never_updated() {
    let settings = modes(&[("Dashboard/team-*", Mode::CreateOnly)]);
    let desired = vec![
        manifest(d(), dash("team-a", "A")),
        manifest(d(), dash("team-b", "B")),
    ];
    // team-a was edited on the target; team-b is missing.
    let cur = current(&[(d(), dash("team-a", "edited in the UI"))]);
    let p = run(&desired, &cur, &settings, false);
    assert_eq!(steps(&p), vec!["create Dashboard/team-b"]);
    assert_eq!(p.unchanged, 1);
    assert!(p.observed.is_empty());
    // Once it exists, an edit on the target is no drift.
    let p = run(&desired[..1], &cur, &settings, false);
    assert!(p.actions.is_empty() && !p.has_drift());
}

#[test]
fn no_delete_is_orphaned_never_deleted_even_with_prune() {
    let settings = modes(&[("Dashboard/keep-*", Mode::NoDelete)]);
    let desired = vec![manifest(d(), dash("keep-b", "B"))];
    let cur = current(&[
        (d(), dash("keep-a", "A")),
        (d(), dash("keep-b", "old")),
        (d(), dash("scratch", "S")),
    ]);
    let p = run(&desired, &cur, &settings, true);
    // Declared, it is still updated; removed, it is kept.
    assert_eq!(
        steps(&p),
        vec!["update Dashboard/keep-b", "delete Dashboard/scratch"]
    );
    assert_eq!(p.orphaned, vec![Address::new(d(), Some("keep-a".into()))]);
    assert!(p.unmanaged.is_empty());
    assert_eq!(p.summary().delete, 1);
    // Without --prune it is orphaned too, and not drift.
    let p = run(
        &[],
        &current(&[(d(), dash("keep-a", "A"))]),
        &settings,
        false,
    );
    assert_eq!(p.orphaned.len(), 1);
    assert!(!p.has_drift());
}

#[test]
fn observe_is_never_an_action_only_observed_drift() {
    let settings = modes(&[("Dashboard/obs-*", Mode::Observe)]);
    let desired = vec![
        manifest(d(), dash("obs-changed", "manifest")),
        manifest(d(), dash("obs-missing", "M")),
        manifest(d(), dash("obs-same", "S")),
    ];
    let cur = current(&[
        (d(), dash("obs-changed", "target")),
        (d(), dash("obs-same", "S")),
        (d(), dash("obs-removed", "R")),
    ]);
    let p = run(&desired, &cur, &settings, true);
    assert!(p.actions.is_empty(), "{:?}", steps(&p));
    assert!(!p.has_changes() && p.has_drift());
    let observed: Vec<String> = p
        .observed
        .iter()
        .map(|a| format!("{} {}", a.action.as_str(), a.address))
        .collect();
    assert_eq!(
        observed,
        vec![
            "update Dashboard/obs-changed",
            "create Dashboard/obs-missing"
        ]
    );
    assert_eq!(p.observed[0].fields[0].path, "name");
    assert!(p.observed.iter().all(|a| a.fingerprint.is_none()));
    // Declared by no manifest, it is never deleted either.
    assert_eq!(
        p.orphaned,
        vec![Address::new(d(), Some("obs-removed".into()))]
    );
    assert_eq!(p.unchanged, 1);
}

#[test]
fn first_match_wins_and_a_rule_matching_nothing_warns() {
    let settings = modes(&[
        ("Dashboard/a", Mode::Observe),
        ("Dashboard/*", Mode::CreateOnly),
        ("Monitor/nothing-*", Mode::NoDelete),
    ]);
    let desired = vec![
        manifest(d(), dash("a", "new")),
        manifest(d(), dash("b", "new")),
    ];
    let cur = current(&[(d(), dash("a", "old")), (d(), dash("b", "old"))]);
    let p = run(&desired, &cur, &settings, false);
    assert!(p.actions.is_empty());
    assert_eq!(p.observed.len(), 1);
    assert_eq!(
        p.warnings,
        vec!["`manage[2]` of cfgctl.yaml (`Monitor/nothing-*`, mode no-delete) matches no resource in the manifests or on the target"]
    );
}

#[test]
fn apply_refuses_an_action_that_breaks_a_mode() {
    let settings = modes(&[
        ("Dashboard/obs", Mode::Observe),
        ("Dashboard/once", Mode::CreateOnly),
        ("Dashboard/keep", Mode::NoDelete),
    ]);
    // A plan made without the modes, judged with them (a saved plan edited by hand).
    let desired = vec![
        manifest(d(), dash("obs", "new")),
        manifest(d(), dash("once", "new")),
    ];
    let cur = current(&[
        (d(), dash("obs", "old")),
        (d(), dash("once", "old")),
        (d(), dash("keep", "K")),
    ]);
    let mut p = run(&desired, &cur, &modes(&[]), true);
    p.guard.manage = settings.manage.clone();
    assert_eq!(
        refusals(&p, false, false),
        vec![
            "the plan would update Dashboard/obs, whose mode in cfgctl.yaml is observe",
            "the plan would update Dashboard/once, whose mode in cfgctl.yaml is create-only",
            "the plan would delete Dashboard/keep, whose mode in cfgctl.yaml is no-delete",
        ]
    );
    // The modes are sealed with the guards.
    let key = [7u8; 32];
    let sealed = p.guard.seal_with("t", &key);
    p.guard.manage.pop();
    assert_ne!(sealed, p.guard.seal_with("t", &key));
}
