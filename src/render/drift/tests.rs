use serde_json::json;

use super::*;
use crate::plan::drift::tests::{action, interval, kind, known, plan};
use crate::plan::normalize::FieldChange;
use crate::plan::ActionKind;

#[test]
fn drift_and_plan_read_a_change_the_same_way() {
    let p = plan(
        vec![
            action(kind("Monitor"), "m", ActionKind::Update, vec![interval()]),
            action(kind("Team"), "t", ActionKind::Create, vec![]),
        ],
        vec![("scratch", true), ("elsewhere", false)],
    );
    let t = text(&p, &known(), false, false);
    assert!(
        t.contains("~ interval_secs: target has 60, manifests have 120"),
        "{t}"
    );
    // The plan of the same change: from the target's 60 to the manifests' 120.
    let planned = crate::render::text(&p, crate::render::TextOptions::default());
    assert!(planned.contains("~ interval_secs: 60 -> 120"), "{planned}");
    // `apply` creates what is missing (+) and `apply --prune` deletes what is only there (-).
    assert!(t.contains("  + Team/t  (m.yaml:3)"), "{t}");
    assert!(t.contains("  - Dashboard/scratch"), "{t}");
    assert!(!t.contains("No drift"), "{t}");
    assert!(!t.contains("Dashboard/elsewhere"), "{t}");
    let md = markdown(&p, &known(), crate::render::MARKDOWN_BUDGET);
    assert!(
        md.contains("\n- interval_secs: 60 (target)\n+ interval_secs: 120 (manifests)\n"),
        "{md}"
    );
    let j = json(&p, &known());
    assert_eq!(
        j["drift"][0]["fields"][0],
        json!({"path": "interval_secs", "manifest": 120, "target": 60})
    );
    assert_eq!(j["changes"][0]["fields"][0]["before"], 60);
}

#[test]
fn members_and_documents_say_which_side_has_them() {
    // (Not `user_emails`: the output tests register `user` as a secret for this process.)
    let fields = vec![
        FieldChange {
            path: "label_names[]".into(),
            before: Some(json!("eve@example.com")),
            after: None,
        },
        FieldChange {
            path: "label_names[]".into(),
            before: None,
            after: Some(json!("bob@example.com")),
        },
    ];
    let p = plan(
        vec![action(kind("Team"), "t", ActionKind::Update, fields)],
        vec![],
    );
    let t = text(&p, &known(), false, false);
    assert!(
        t.contains("- label_names[]: \"eve@example.com\" (only on the target)"),
        "{t}"
    );
    assert!(
        t.contains("+ label_names[]: \"bob@example.com\" (only in the manifests)"),
        "{t}"
    );
    let doc = FieldChange {
        path: "dashboard_json".into(),
        before: Some(json!({"refresh": "1m"})),
        after: Some(json!({"refresh": "5m"})),
    };
    let p = plan(
        vec![action(
            kind("Dashboard"),
            "d",
            ActionKind::Update,
            vec![doc],
        )],
        vec![],
    );
    let t = text(&p, &known(), false, false);
    assert!(
        t.contains("    --- target\n          +++ manifests\n"),
        "{t}"
    );
    assert!(t.contains("    -  \"refresh\": \"1m\"\n"), "{t}");
    let md = markdown(&p, &known(), crate::render::MARKDOWN_BUDGET);
    assert!(
        md.contains("\n-  \"refresh\": \"1m\"\n+  \"refresh\": \"5m\"\n"),
        "{md}"
    );
    assert!(!md.contains("+++"), "{md}");
}

#[test]
fn only_unmanaged_in_the_prune_scope_is_still_drift() {
    let p = plan(vec![], vec![("scratch", true)]);
    let t = text(&p, &known(), false, false);
    assert!(t.contains("Drift: 1 resource differs"), "{t}");
    assert!(!t.contains("No drift"), "{t}");
    let md = markdown(&p, &known(), crate::render::MARKDOWN_BUDGET);
    assert!(md.contains("Dashboard/scratch"), "{md}");
    assert_eq!(json(&p, &known())["drift"][0]["class"], "unmanaged");
}

#[test]
fn kinds_the_target_cannot_read_are_not_comparable() {
    let mut a = action(kind("Team"), "t", ActionKind::Unsupported, vec![]);
    a.intended = Some(ActionKind::Create);
    a.reason = Some("the target can neither read nor write Team".into());
    let p = plan(vec![a], vec![]);
    let known: BTreeSet<Kind> = known().into_iter().filter(|k| *k != kind("Team")).collect();
    let t = text(&p, &known, false, false);
    assert!(t.contains("Not comparable"), "{t}");
    assert!(
        t.contains("# the target can neither read nor write Team"),
        "{t}"
    );
}

#[test]
fn markdown_stays_within_its_budget() {
    let change = |i: usize| FieldChange {
        path: "description".into(),
        before: Some(json!("x".repeat(200 + i))),
        after: Some(json!("y")),
    };
    let actions = (0..1000)
        .map(|i| {
            action(
                kind("Team"),
                &format!("t{i:04}"),
                ActionKind::Update,
                vec![change(i)],
            )
        })
        .collect();
    let md = markdown(
        &plan(actions, vec![]),
        &known(),
        crate::render::MARKDOWN_BUDGET,
    );
    assert!(md.len() <= crate::render::MARKDOWN_BUDGET, "{}", md.len());
    let shown = md.matches("<details>").count();
    assert!(shown > 10 && shown < 1000, "{shown}");
    assert!(
        md.contains(&format!("**{} more resources not shown:**", 1000 - shown)),
        "{}",
        &md[md.len() - 300..]
    );
}

#[test]
fn markup_and_control_characters_are_inert() {
    let mut p = plan(vec![], vec![("<img src=x>\u{1b}[31m`*", true)]);
    p.target = "<b>t</b>`".into();
    p.warnings = vec!["<script>\u{1b}[2J".into()];
    let md = markdown(&p, &known(), crate::render::MARKDOWN_BUDGET);
    assert!(!md.contains("<img"), "{md}");
    // The target is a code span, as in the plan: shown as it is, never as markup.
    assert!(
        md.starts_with("### cfgctl drift for `` <b>t</b>` ``\n"),
        "{md}"
    );
    assert!(!md.contains("<script>"), "{md}");
    assert!(!md.contains('\u{1b}'), "{md}");
    let t = text(&p, &known(), false, false);
    assert!(!t.contains('\u{1b}'), "{t}");
}

#[test]
fn the_streamed_json_report_is_the_json_report() {
    let mut actions = vec![
        action(kind("Monitor"), "m", ActionKind::Update, vec![interval()]),
        action(kind("Team"), "t", ActionKind::Create, vec![]),
        action(kind("Team"), "u", ActionKind::Upsert, vec![]),
    ];
    // Past one batch of the plan's writer.
    for i in 0..300 {
        actions.push(action(
            kind("Monitor"),
            &format!("m{i}"),
            ActionKind::Update,
            vec![],
        ));
    }
    for p in [
        plan(actions, vec![("scratch", true), ("elsewhere", false)]),
        plan(vec![], vec![]),
    ] {
        let mut streamed = Vec::new();
        write_json(&mut streamed, &p, &known()).unwrap();
        let whole = serde_json::to_string_pretty(&json(&p, &known())).unwrap() + "\n";
        assert_eq!(String::from_utf8(streamed).unwrap(), whole);
    }
}
