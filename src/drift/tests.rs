use super::*;
use crate::plan::{Action, Unmanaged};

fn action(kind: Kind, slug: &str, action: ActionKind, fields: Vec<FieldChange>) -> Action {
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

fn known() -> BTreeSet<Kind> {
    crate::registry::KINDS.iter().map(|d| d.kind).collect()
}

fn plan(actions: Vec<Action>, unmanaged: Vec<(&str, bool)>) -> Plan {
    Plan {
        target: "t".into(),
        actions,
        unchanged: 4,
        unmanaged: unmanaged
            .into_iter()
            .map(|(s, in_prune_scope)| Unmanaged {
                address: Address::new(Kind::Dashboard, Some(s.into())),
                in_prune_scope,
            })
            .collect(),
        warnings: vec![],
        guard_violations: vec![],
        guard: Default::default(),
    }
}

#[test]
fn every_class_is_named_and_fields_read_manifest_to_target() {
    let change = FieldChange {
        path: "description".into(),
        before: Some(json!("on the target")),
        after: Some(json!("in git")),
    };
    let p = plan(
        vec![
            action(Kind::Bucket, "b", ActionKind::Update, vec![change]),
            action(Kind::Team, "t", ActionKind::Create, vec![]),
            action(Kind::Team, "u", ActionKind::Upsert, vec![]),
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
            ("Bucket/b".into(), DriftClass::Changed),
            ("Team/t".into(), DriftClass::Deleted),
            ("Dashboard/scratch".into(), DriftClass::Unmanaged),
        ]
    );
    let t = text(&p, &known(), false, false);
    assert!(
        t.contains("~ description: \"in git\" -> \"on the target\""),
        "{t}"
    );
    assert!(!t.contains("No drift"), "{t}");
    assert!(t.contains("+ Dashboard/scratch"), "{t}");
    assert!(!t.contains("Dashboard/elsewhere"), "{t}");
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
fn kinds_the_target_cannot_read_are_not_called_deleted() {
    let mut a = action(Kind::Team, "t", ActionKind::Unsupported, vec![]);
    a.intended = Some(ActionKind::Create);
    a.reason = Some("the target can neither read nor write Team".into());
    let p = plan(vec![a], vec![]);
    let known: BTreeSet<Kind> = known().into_iter().filter(|k| *k != Kind::Team).collect();
    let items = drifted(&p, &known);
    assert_eq!(items[0].class, DriftClass::Unreadable);
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
                Kind::Team,
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
    let p = plan(vec![], vec![("<img src=x>\u{1b}[31m`*", true)]);
    let md = markdown(&p, &known(), crate::render::MARKDOWN_BUDGET);
    assert!(!md.contains("<img"), "{md}");
    assert!(!md.contains('\u{1b}'), "{md}");
    let t = text(&p, &known(), false, false);
    assert!(!t.contains('\u{1b}'), "{t}");
}

#[test]
fn the_streamed_json_report_is_the_json_report() {
    let change = FieldChange {
        path: "description".into(),
        before: Some(json!("on the target")),
        after: Some(json!("in git")),
    };
    let mut actions = vec![
        action(Kind::Bucket, "b", ActionKind::Update, vec![change]),
        action(Kind::Team, "t", ActionKind::Create, vec![]),
        action(Kind::Team, "u", ActionKind::Upsert, vec![]),
    ];
    // Past one batch of the plan's writer.
    for i in 0..300 {
        actions.push(action(
            Kind::Monitor,
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
