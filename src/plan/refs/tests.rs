//! The planner's reference checks and what its deletes say.

use serde_json::json;

use crate::api::registry::Kind;
use crate::config::pattern::Pattern;
use crate::config::settings::Settings;
use crate::plan::tests::{current, manifest, run, steps};
use crate::plan::{plan, ActionKind, Capabilities, PlanOptions};

fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap()
}

fn prune(patterns: &[&str]) -> Settings {
    Settings {
        prune: patterns
            .iter()
            .map(|p| Pattern::parse(p).unwrap())
            .collect(),
        ..Settings::default()
    }
}

fn options(prune: bool) -> PlanOptions {
    PlanOptions {
        target: "test".into(),
        prune,
        only: vec![],
        references_declared: false,
    }
}

#[test]
fn a_delete_of_what_a_manifest_references_is_an_error_at_the_reference() {
    let cur = current(&[
        (kind("Team"), json!({"slug": "t", "name": "T"})),
        (
            kind("Bucket"),
            json!({"slug": "b", "name": "B", "team_slug": "t"}),
        ),
    ]);
    let desired = vec![manifest(
        kind("Bucket"),
        json!({"slug": "b", "name": "B", "team_slug": "t"}),
    )];
    let settings = prune(&["Dashboard/*", "Team/*"]);
    let caps = Capabilities::assumed_full();
    let err = plan(&desired, &cur, &caps, &settings, &options(true)).unwrap_err();
    let shown: Vec<String> = err.0.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "buckets.yaml:1:1: error: Bucket/b references Team/t at `team_slug`, which this plan \
             deletes (not declared by any manifest, inside the prune scope (`Team/*`)); declare \
             Team/t in a manifest, or remove the reference"
        ]
    );
    // Without --prune nothing is deleted and nothing is wrong.
    let p = plan(&desired, &cur, &caps, &settings, &options(false)).unwrap();
    assert!(p.actions.is_empty());
    assert!(p.unmanaged[0].in_prune_scope);
}

#[test]
fn a_referrer_deleted_in_the_same_plan_is_no_error() {
    let cur = current(&[
        (kind("Team"), json!({"slug": "t", "name": "T"})),
        (
            kind("Bucket"),
            json!({"slug": "old", "name": "Old", "team_slug": "t"}),
        ),
    ]);
    let keep = vec![manifest(kind("Team"), json!({"slug": "u", "name": "U"}))];
    let p = run(&keep, &cur, &prune(&["*/*"]), true);
    assert_eq!(
        steps(&p),
        vec!["create Team/u", "delete Bucket/old", "delete Team/t"]
    );
}

#[test]
fn deletes_say_why_and_show_what_they_delete() {
    let cur = current(&[(
        kind("Dashboard"),
        json!({"slug": "scratch", "name": "Scratch", "created_at": "2024-01-01T00:00:00Z"}),
    )]);
    let p = run(&[], &cur, &prune(&["Monitor/*", "Dashboard/scr*"]), true);
    let delete = &p.actions[0];
    assert_eq!(delete.action, ActionKind::Delete);
    assert_eq!(
        delete.reason.as_deref(),
        Some("not declared by any manifest, inside the prune scope (`Dashboard/scr*`)")
    );
    let fields: Vec<(String, Option<serde_json::Value>, Option<serde_json::Value>)> = delete
        .fields
        .iter()
        .map(|f| (f.path.clone(), f.before.clone(), f.after.clone()))
        .collect();
    // The current object as a manifest holds it: no server-owned field.
    assert_eq!(
        fields,
        vec![
            ("slug".to_string(), Some(json!("scratch")), None),
            ("name".to_string(), Some(json!("Scratch")), None),
        ]
    );
}

#[test]
fn prune_without_prune_patterns_says_so() {
    let cur = current(&[(kind("Dashboard"), json!({"slug": "s", "name": "S"}))]);
    let warning = "--prune deletes nothing: cfgctl.yaml has no `prune` patterns (they say which \
                   resources the repository owns; see docs/prune.md)";
    let p = run(&[], &cur, &Settings::default(), true);
    assert!(p.actions.is_empty());
    assert_eq!(p.warnings, vec![warning.to_string()]);
    // Without --prune, or with patterns, there is nothing to say.
    assert!(run(&[], &cur, &Settings::default(), false)
        .warnings
        .is_empty());
    assert!(run(&[], &cur, &prune(&["Team/*"]), true)
        .warnings
        .is_empty());
}

#[test]
fn a_dangling_reference_suggests_the_closest_slug_of_its_kind() {
    let cur = current(&[
        (kind("Team"), json!({"slug": "platform", "name": "P"})),
        (kind("Bucket"), json!({"slug": "platfrom-b", "name": "B"})),
    ]);
    let desired = vec![
        manifest(
            kind("Bucket"),
            json!({"slug": "b", "name": "B", "team_slug": "platfrom"}),
        ),
        manifest(
            kind("Monitor"),
            json!({"slug": "m", "name": "M", "bucket_slug": "bb"}),
        ),
        manifest(
            kind("NotificationPolicy"),
            json!({"slug": "n", "name": "N", "team_slug": "zzzzzzzz"}),
        ),
    ];
    let err = plan(
        &desired,
        &cur,
        &Capabilities::assumed_full(),
        &Settings::default(),
        &options(false),
    )
    .unwrap_err();
    let shown: Vec<String> = err.0.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "buckets.yaml:1:1: error: Bucket/b references Team/platfrom at `team_slug`, which is \
             neither in the manifests nor on the target (did you mean `Team/platform`?)",
            // A declared slug counts as much as one on the target.
            "monitors.yaml:1:1: error: Monitor/m references Bucket/bb at `bucket_slug`, which is \
             neither in the manifests nor on the target (did you mean `Bucket/b`?)",
            // Nothing close: no suggestion.
            "notification-policies.yaml:1:1: error: NotificationPolicy/n references Team/zzzzzzzz \
             at `team_slug`, which is neither in the manifests nor on the target",
        ]
    );
}

/// A plan told that every reference is declared (its load found none undeclared) is the plan
/// that checks them; told so wrongly, a debug build says so.
#[test]
fn references_known_declared_are_not_checked_again() {
    let desired = vec![
        manifest(kind("Team"), json!({"slug": "t", "name": "T"})),
        manifest(
            kind("Bucket"),
            json!({"slug": "b", "name": "B", "team_slug": "t"}),
        ),
    ];
    let cur = current(&[(kind("Team"), json!({"slug": "t", "name": "Old"}))]);
    let caps = Capabilities::assumed_full();
    let settings = Settings::default();
    let told = PlanOptions {
        references_declared: true,
        ..options(false)
    };
    let checked = plan(&desired, &cur, &caps, &settings, &options(false)).unwrap();
    let skipped = plan(&desired, &cur, &caps, &settings, &told).unwrap();
    assert_eq!(steps(&skipped), steps(&checked));
    assert_eq!(steps(&skipped), vec!["create Bucket/b", "update Team/t"]);
    assert_eq!(skipped.warnings, checked.warnings);
    if cfg!(debug_assertions) {
        let dangling = vec![manifest(
            kind("Bucket"),
            json!({"slug": "b", "name": "B", "team_slug": "nowhere"}),
        )];
        let wrong = std::panic::catch_unwind(|| plan(&dangling, &cur, &caps, &settings, &told));
        assert!(wrong.is_err(), "a wrong claim goes unnoticed");
    }
}
