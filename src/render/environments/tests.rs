use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::api::registry::Address;
use crate::plan::normalize::FieldChange;
use crate::plan::{Action, ActionKind, Source, Unmanaged};
use crate::render::MARKDOWN_BUDGET;

fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap()
}

fn action(kind_name: &str, slug: &str, what: ActionKind) -> Action {
    Action {
        address: Address::new(kind(kind_name), Some(slug.into())),
        action: what,
        source: Some(Source {
            file: format!("{}s/{slug}.yaml", kind_name.to_lowercase()).into(),
            line: 1,
        }),
        fields: vec![],
        depends_on: vec![],
        reason: None,
        body: None,
        intended: None,
        fingerprint: None,
        cascade: vec![],
    }
}

fn plan(target: &str, environment: &str, actions: Vec<Action>) -> Plan {
    let mut plan = Plan {
        target: target.into(),
        actions,
        unchanged: 12,
        unmanaged: vec![],
        orphaned: vec![],
        observed: vec![],
        warnings: vec![],
        guard_violations: vec![],
        guard: Default::default(),
        review: Default::default(),
    };
    plan.guard.environment = Some(environment.into());
    plan
}

/// staging: a new team (only in its overlay); prod: a monitor's threshold that its
/// variables make stricter.
fn staging() -> Plan {
    let mut create = action("Team", "payments", ActionKind::Create);
    create.body = Some(Arc::new(json!({"slug": "payments", "name": "Payments"})));
    plan("https://staging.example.com", "staging", vec![create])
}

fn prod() -> Plan {
    let mut update = action("Monitor", "checkout-errors", ActionKind::Update);
    update.fields = vec![FieldChange {
        path: "series_conditions.defaults.critical.conditions[0].value".into(),
        before: Some(json!(0.05)),
        after: Some(json!(0.01)),
    }];
    update.fingerprint = Some("f".into());
    plan("https://prod.example.com", "prod", vec![update])
}

fn unreachable() -> EnvFailure {
    EnvFailure {
        stage: Some(EnvStage::Connecting),
        message: "cannot reach https://eu.example.com: connection refused\n  (after 3 retries)"
            .into(),
        target: Some("https://eu.example.com".into()),
    }
}

fn text_of(envs: &[EnvPlan<'_>]) -> String {
    text(envs, TextOptions::default())
}

fn json_of(envs: &[EnvPlan<'_>]) -> Value {
    let mut out = Vec::new();
    write_json(&mut out, envs).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn two_environments_text() {
    let (s, p) = (staging(), prod());
    // Handed over in any order, shown by name.
    insta::assert_snapshot!(text_of(&[("staging", Ok(&s)), ("prod", Ok(&p))]));
}

#[test]
fn two_environments_markdown() {
    let (s, p) = (staging(), prod());
    insta::assert_snapshot!(markdown(
        &[("staging", Ok(&s)), ("prod", Ok(&p))],
        MARKDOWN_BUDGET
    ));
}

#[test]
fn two_environments_json() {
    let (s, p) = (staging(), prod());
    let mut out = Vec::new();
    write_json(&mut out, &[("staging", Ok(&s)), ("prod", Ok(&p))]).unwrap();
    let text = String::from_utf8(out).unwrap();
    insta::assert_snapshot!(text);
    // Each environment's entry is exactly its single-target JSON plan.
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["environments"]["prod"],
        crate::render::json_plan(&p, false)
    );
    assert_eq!(
        v["environments"]["staging"],
        crate::render::json_plan(&s, false)
    );
    let names: Vec<&String> = v["environments"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["prod", "staging"]);
}

#[test]
fn one_environment_failed() {
    let (s, p, f) = (staging(), prod(), unreachable());
    let envs: [EnvPlan<'_>; 3] = [("staging", Ok(&s)), ("eu", Err(&f)), ("prod", Ok(&p))];
    let mut json = Vec::new();
    write_json(&mut json, &envs).unwrap();
    insta::assert_snapshot!(format!(
        "{}\n---- Markdown ----\n{}\n---- JSON ----\n{}",
        text_of(&envs),
        markdown(&envs, MARKDOWN_BUDGET),
        String::from_utf8(json).unwrap()
    ));
    // The others are planned as usual; the failure is named in its row and its section.
    let t = text_of(&envs);
    assert!(t.contains("\n  eu           failed while connecting: cannot reach https://eu.example.com: connection refused…\n"), "{t}");
    assert!(
        t.contains(
            "=== eu (https://eu.example.com) ===\n\nFailed while connecting:\n  cannot reach"
        ),
        "{t}"
    );
    assert!(t.contains("  (after 3 retries)\n"), "{t}");
    assert!(t.contains("=== prod (https://prod.example.com) ==="), "{t}");
    assert!(
        t.contains("\nEnvironments: 2 planned (prod, staging), 1 failed (eu).\n"),
        "{t}"
    );
    let v = json_of(&envs);
    assert_eq!(
        v["environments"]["eu"],
        json!({"error": f.message, "stage": "connecting", "target": "https://eu.example.com"})
    );
    assert_eq!(v["environments"]["prod"]["summary"]["update"], 1);
}

#[test]
fn the_exit_code_is_the_worst_and_a_failure_is_worse_than_changes() {
    assert_eq!(worst([]), 0);
    assert_eq!(worst([0, 0]), 0);
    assert_eq!(worst([0, 2, 0]), 2);
    assert_eq!(worst([2, 1, 2]), 1);
    assert_eq!(worst([1, 0]), 1);
    // Any other code is an error too.
    assert_eq!(worst([2, 3]), 1);
    let (s, p, f) = (staging(), prod(), unreachable());
    let mut quiet = staging();
    quiet.actions.clear();
    assert_eq!(plan_exit_code(&[("a", Ok(&s)), ("b", Ok(&p))], false), 0);
    assert_eq!(plan_exit_code(&[("a", Ok(&s)), ("b", Ok(&quiet))], true), 2);
    assert_eq!(plan_exit_code(&[("a", Ok(&quiet))], true), 0);
    assert_eq!(plan_exit_code(&[("a", Ok(&s)), ("b", Err(&f))], true), 1);
    assert_eq!(plan_exit_code(&[("b", Err(&f))], false), 1);
    let known: BTreeSet<Kind> = crate::api::registry::kinds()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    let d = |plan| DriftOf {
        plan,
        known: &known,
    };
    assert_eq!(drift_exit_code(&[("a", Ok(d(&quiet)))]), 0);
    assert_eq!(
        drift_exit_code(&[("a", Ok(d(&quiet))), ("b", Ok(d(&p)))]),
        2
    );
    assert_eq!(drift_exit_code(&[("a", Ok(d(&p))), ("b", Err(&f))]), 1);
}

/// A plan of `n` creates (with long descriptions) and `n / 10` deletes.
fn huge(target: &str, environment: &str, n: usize) -> Plan {
    let mut actions: Vec<Action> = (0..n)
        .map(|i| {
            let mut a = action("Team", &format!("team-{i:05}"), ActionKind::Create);
            a.fields = vec![FieldChange {
                path: "description".into(),
                before: None,
                after: Some(json!("x".repeat(200))),
            }];
            a
        })
        .collect();
    actions.extend((0..n / 10).map(|i| {
        let mut a = action("Bucket", &format!("old-{i:05}"), ActionKind::Delete);
        a.fingerprint = Some("f".into());
        a.reason = Some("in the prune scope `Bucket/*`".into());
        a
    }));
    let mut p = plan(target, environment, actions);
    p.unmanaged = vec![Unmanaged {
        address: Address::new(kind("Dashboard"), Some("scratch".into())),
        in_prune_scope: false,
    }];
    p
}

#[test]
fn a_comment_of_two_huge_environments_stays_under_githubs_limit_with_both_summaries() {
    let (s, p) = (
        huge("https://staging.example.com", "staging", 4000),
        huge("https://prod.example.com", "prod", 3000),
    );
    let md = markdown(&[("staging", Ok(&s)), ("prod", Ok(&p))], MARKDOWN_BUDGET);
    assert!(md.chars().count() <= MARKDOWN_BUDGET, "{}", md.len());
    assert!(md.len() < 65_536);
    // The table whole, first.
    assert!(md.starts_with(
        "### cfgctl plan for 2 environments\n\n| environment | create | update | delete | upsert | unsupported | unchanged |\n|---|---:|---:|---:|---:|---:|---:|\n| <code>prod</code> | 3000 | 0 | 300 | 0 | 0 | 12 |\n| <code>staging</code> | 4000 | 0 | 400 | 0 | 0 | 12 |\n"
    ), "{}", &md[..400]);
    // Each environment's summary whole: its counts, its risk summary to its last line, then
    // details cut, saying so.
    for (env, target, creates) in [("prod", "prod", 3000), ("staging", "staging", 4000)] {
        let start = md.find(&format!("<summary><b>{env}</b>")).unwrap();
        let section = &md[start..];
        let section = &section[..section
            .find("</details>\n\n<details")
            .unwrap_or(section.len())];
        assert!(
            section.contains(&format!("| `+` create | {creates} | Team {creates} |")),
            "{section}"
        );
        assert!(section.contains("**Guards:** max_deletes 25,"), "{section}");
        assert!(
            section.contains(&format!(
                "**Environments:** <code>{env}</code> (<code>https://{target}.example.com</code>)."
            )),
            "{section}"
        );
        assert!(section.contains("more resources not shown:**"), "{section}");
        // The deletes' details first (the riskiest are the last to be cut).
        let first = section.find("<details><summary>").unwrap();
        assert!(
            section[first..].starts_with("<details><summary>⚠️ <code>- delete</code>"),
            "{section}"
        );
    }
    assert!(
        md.ends_with("**Environments:** 2 planned (<code>prod</code>, <code>staging</code>).\n")
    );
}

#[test]
fn a_small_environment_is_whole_beside_a_huge_one() {
    let (s, p) = (staging(), huge("https://prod.example.com", "prod", 3000));
    let md = markdown(&[("staging", Ok(&s)), ("prod", Ok(&p))], MARKDOWN_BUDGET);
    assert!(md.len() <= MARKDOWN_BUDGET);
    // staging's report is exactly its single-target comment.
    assert!(md.contains(&crate::render::markdown(&s, MARKDOWN_BUDGET, false)));
    // prod takes the rest: far more than half the comment.
    let prod =
        &md[md.find("<summary><b>prod</b>").unwrap()..md.find("<summary><b>staging</b>").unwrap()];
    assert!(prod.len() > 50_000, "{}", prod.len());
    assert!(prod.matches("<details><summary>").count() > 80);
}

#[test]
fn hostile_names_and_messages_are_inert() {
    let s = staging();
    let f = EnvFailure {
        stage: None,
        message: "the target said </code></summary>\n::error::pwned | `x`".into(),
        target: None,
    };
    let evil = "a\n::warning::b</b>|";
    let envs: [EnvPlan<'_>; 2] = [(evil, Ok(&s)), ("c`d", Err(&f))];
    let t = text_of(&envs);
    assert!(!t.contains("\n::"), "{t}");
    assert!(
        t.lines().any(|l| l.starts_with("  c`d ")
            && l.ends_with("  failed: the target said </code></summary>…")),
        "{t}"
    );
    let md = markdown(&envs, MARKDOWN_BUDGET);
    assert!(!md.contains("\n::"), "{md}");
    assert!(!md.contains("</b>|"), "{md}");
    // The message is in a code block, where nothing is markup.
    assert!(
        md.contains(
            "\n```text\n  the target said </code></summary>\n  ::error::pwned | `x`\n```\n"
        ),
        "{md}"
    );
    // Every row of the table has the table's cells.
    for line in md.lines().filter(|l| l.starts_with("| <code>")) {
        assert_eq!(line.matches(" |").count(), 7, "{line}");
    }
    assert_eq!(json_of(&envs)["environments"]["c`d"]["stage"], Value::Null);
}

#[test]
fn drift_of_two_environments_and_a_failure() {
    let known: BTreeSet<Kind> = crate::api::registry::kinds()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    let (s, p, f) = (staging(), prod(), unreachable());
    let mut quiet = plan("https://dev.example.com", "dev", vec![]);
    quiet.unchanged = 3;
    let d = |plan| DriftOf {
        plan,
        known: &known,
    };
    let envs: [EnvDrift<'_>; 4] = [
        ("staging", Ok(d(&s))),
        ("prod", Ok(d(&p))),
        ("dev", Ok(d(&quiet))),
        ("eu", Err(&f)),
    ];
    let mut json = Vec::new();
    write_drift_json(&mut json, &envs).unwrap();
    let json = String::from_utf8(json).unwrap();
    insta::assert_snapshot!(format!(
        "{}\n---- Markdown ----\n{}\n---- JSON ----\n{}",
        drift_text(&envs, false, false),
        drift_markdown(&envs, MARKDOWN_BUDGET),
        json
    ));
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["environments"]["prod"],
        crate::render::drift::json(&p, &known)
    );
    assert_eq!(v["environments"]["eu"]["stage"], "connecting");
    assert_eq!(drift_exit_code(&envs), 1);
}

#[test]
fn a_comment_of_very_many_environments_is_cut_after_its_table_and_says_so() {
    let names: Vec<String> = (0..80).map(|i| format!("env-{i:02}")).collect();
    let plans: Vec<Plan> = names
        .iter()
        .map(|n| huge(&format!("https://{n}.example.com"), n, 200))
        .collect();
    let envs: Vec<EnvPlan<'_>> = names
        .iter()
        .map(String::as_str)
        .zip(plans.iter().map(Ok))
        .collect();
    let md = markdown(&envs, MARKDOWN_BUDGET);
    assert!(md.len() <= MARKDOWN_BUDGET, "{}", md.len());
    // Their summaries alone pass the budget: the table is whole, the rest cut, saying so.
    for n in &names {
        assert!(
            md.contains(&format!(
                "| <code>{n}</code> | 200 | 0 | 20 | 0 | 0 | 12 |\n"
            )),
            "{n}"
        );
    }
    assert!(
        md.ends_with(
            "> **Report cut at 60000 characters:** run `cfgctl` in text or JSON for all of it.\n"
        ),
        "{}",
        &md[md.len() - 300..]
    );
}
