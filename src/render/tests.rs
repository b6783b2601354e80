use super::*;
use crate::api::registry::{Address, Kind};
use crate::plan::normalize::FieldChange;
use crate::plan::{Source, Unmanaged};
use serde_json::json;

fn action(i: usize, desc_len: usize) -> Action {
    Action {
        address: Address::new(Kind::named("Team"), Some(format!("team-{i:04}"))),
        action: ActionKind::Create,
        source: Some(Source {
            file: "teams.yaml".into(),
            line: 1,
        }),
        fields: vec![FieldChange {
            path: "description".into(),
            before: None,
            after: Some(json!("x".repeat(desc_len))),
        }],
        depends_on: vec![],
        reason: None,
        body: None,
        intended: None,
        fingerprint: None,
        cascade: vec![],
    }
}

fn plan_of(n: usize, desc_len: usize) -> Plan {
    Plan {
        target: "https://t.example.com".into(),
        actions: (0..n).map(|i| action(i, desc_len)).collect(),
        unchanged: 3,
        unmanaged: vec![Unmanaged {
            address: Address::new(Kind::named("Dashboard"), Some("scratch".into())),
            in_prune_scope: false,
        }],
        orphaned: vec![],
        observed: vec![],
        warnings: vec![],
        guard_violations: vec![],
        guard: Default::default(),
        review: Default::default(),
    }
}

#[test]
fn markdown_stays_within_budget_and_says_what_it_left_out() {
    let p = plan_of(2000, 80);
    let md = markdown(&p, MARKDOWN_BUDGET, false);
    assert!(md.chars().count() <= MARKDOWN_BUDGET, "{}", md.len());
    let shown = md.matches("<details>").count();
    assert!(shown > 10 && shown < 2000);
    assert!(
        md.contains(&format!("**{} more resources not shown:**", 2000 - shown)),
        "{}",
        &md[md.len() - 400..]
    );
    assert!(md.contains("Unmanaged on the target"));
}

#[test]
fn documents_kept_as_text_show_as_documents() {
    let doc = json!({"kind": "Dashboard", "spec": {"panels": {"a": 1}}});
    let mut a = action(0, 1);
    a.address = Address::new(Kind::named("Dashboard"), Some("d".into()));
    a.fields = vec![FieldChange {
        path: "dashboard_json".into(),
        before: None,
        after: Some(json!(doc.to_string())),
    }];
    let mut p = plan_of(0, 0);
    p.actions = vec![a];
    let text = text(&p, TextOptions::default());
    assert!(
        text.contains("+ dashboard_json: (JSON document, 8 lines)"),
        "{text}"
    );
    let j = json_plan(&p, false);
    assert_eq!(j["changes"][0]["fields"][0]["after"], doc);
}

#[test]
fn small_plans_are_whole() {
    let md = markdown(&plan_of(3, 10), MARKDOWN_BUDGET, false);
    assert_eq!(md.matches("<details>").count(), 3);
    assert!(!md.contains("not shown"));
    assert!(md.contains("| `+` create | 3 |"));
}

#[test]
fn a_huge_resource_is_truncated_not_dropped() {
    let md = markdown(&plan_of(1, 100_000), MARKDOWN_BUDGET, false);
    assert!(md.len() <= MARKDOWN_BUDGET);
    assert!(md.contains("diff truncated"));
}

/// A plan whose every untrusted string is hostile: slugs, field paths, reasons, warnings.
fn hostile_plan() -> Plan {
    let mut p = plan_of(1, 3);
    let slug =
        "a\n::warning file=x::pwn\r\u{1b}]0;t\u{7}</b></summary>\n# [x](https://e.example) | `";
    p.target = "local:dir`\n::error::t".into();
    p.actions[0].address = Address::new(Kind::named("Team"), Some(slug.into()));
    p.actions[0].reason = Some("server said:\n::error::x".into());
    p.actions[0].fields[0].path = "descr\n::warning::iption".into();
    p.actions[0].source = Some(Source {
        file: "t\n::x.yaml".into(),
        line: 1,
    });
    p.unmanaged[0].address = Address::new(Kind::named("Dashboard"), Some("u\n::error::u".into()));
    p.warnings = vec!["the target said <script>\n::warning::w".into()];
    p
}

#[test]
fn hostile_strings_are_inert_in_text() {
    let text = text(
        &hostile_plan(),
        TextOptions {
            color: false,
            verbose: true,
            drift: false,
        },
    );
    for line in text.lines() {
        assert!(!line.trim_start().starts_with("::"), "{line}\n{text}");
    }
    assert!(!text.contains('\r') && !text.contains('\u{1b}') && !text.contains('\u{7}'));
    assert!(
        text.contains("+ Team/a\\n::warning file=x::pwn\\r\\u001b]0;t\\u0007"),
        "{text}"
    );
    assert!(
        text.contains("+ descr\\n::warning::iption: \"xxx\""),
        "{text}"
    );
}

#[test]
fn hostile_strings_are_inert_in_markdown() {
    let md = markdown(&hostile_plan(), MARKDOWN_BUDGET, false);
    for line in md.lines() {
        assert!(!line.trim_start().starts_with("::"), "{line}\n{md}");
        assert!(!line.starts_with("# [x]"), "a fake heading: {line}");
    }
    assert!(!md.contains("</b></summary>\n"), "{md}");
    assert!(!md.contains("<script>"), "{md}");
    assert!(!md.contains("[x](https"), "{md}");
    assert!(md.contains("&lt;/b&gt;&lt;/summary&gt;"), "{md}");
    // The reason stays a comment line inside the diff fence.
    assert!(
        md.contains("```diff\n# server said:\\n::error::x\n"),
        "{md}"
    );
    assert_eq!(md.matches("<details>").count(), 1);
    assert_eq!(md.matches("</details>").count(), 1);
    assert_eq!(md.matches("<summary>").count(), 1);
    assert!(
        md.starts_with("### cfgctl plan for `` local:dir`\\n::error::t ``\n"),
        "{md}"
    );
}

#[test]
fn document_diffs_are_unified() {
    let d = document_diff(
        Some(&json!({"a": 1, "b": 2})),
        Some(&json!({"a": 1, "b": 3})),
        fields::PLAN,
    );
    assert!(d.contains("--- current\n+++ desired\n"), "{d}");
    assert!(d.contains("-  \"b\": 2\n+  \"b\": 3\n"), "{d}");
}

#[test]
fn json_plan_shape() {
    let v = json_plan(&plan_of(1, 3), false);
    assert_eq!(v["format_version"], 1);
    assert_eq!(v["summary"]["create"], 1);
    assert_eq!(
        v["changes"][0]["fields"][0],
        json!({"path": "description", "before": null, "after": "xxx"})
    );
    assert_eq!(v["unmanaged"], json!(["Dashboard/scratch"]));
    assert!(v["changes"][0].get("step").is_none());
    assert!(v.get("guards").is_none());
    let saved = json_plan(&plan_of(1, 3), true);
    assert!(saved["changes"][0]["step"].get("body").is_some());
    assert_eq!(saved["guards"]["max_deletes"], 25);
}

#[test]
fn the_streamed_json_plan_is_the_json_plan() {
    let mut p = plan_of(300, 700);
    p.warnings = vec!["a warning".into()];
    p.actions[3].address = Address::new(Kind::named("Dashboard"), Some("d".into()));
    p.actions[3].fields.push(FieldChange {
        path: "dashboard_json".into(),
        before: None,
        after: Some(json!(r#"{"panels":[{"a":1}],"title":"t"}"#)),
    });
    for plan in [p, plan_of(0, 0), plan_of(1, 3)] {
        for saved in [false, true] {
            let mut streamed = Vec::new();
            write_json_plan(&mut streamed, &plan, saved).unwrap();
            let whole = serde_json::to_string_pretty(&json_plan(&plan, saved)).unwrap() + "\n";
            assert_eq!(String::from_utf8(streamed).unwrap(), whole);
        }
    }
}

#[test]
fn the_streamed_text_plan_is_the_text_plan() {
    let mut p = plan_of(30, 150);
    p.actions[3].address = Address::new(Kind::named("Dashboard"), Some("d".into()));
    p.actions[3].fields.push(FieldChange {
        path: "dashboard_json".into(),
        before: None,
        after: Some(json!(r#"{"panels":[{"a":1},{"b":[]}],"title":"t"}"#)),
    });
    p.actions[4].action = ActionKind::Unsupported;
    p.actions[4].reason = Some("no create".into());
    p.warnings = vec!["a warning".into()];
    for color in [false, true] {
        for verbose in [false, true] {
            let opts = TextOptions {
                color,
                verbose,
                drift: false,
            };
            let mut streamed = Vec::new();
            write_text(&mut streamed, &p, opts).unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), text(&p, opts));
        }
    }
    assert!(
        text(&p, TextOptions::default()).contains("+ dashboard_json: (JSON document, 11 lines)")
    );
    let mut empty = plan_of(0, 0);
    empty.unmanaged.clear();
    let mut streamed = Vec::new();
    write_text(&mut streamed, &empty, TextOptions::default()).unwrap();
    assert_eq!(
        String::from_utf8(streamed).unwrap(),
        text(&empty, TextOptions::default())
    );
}

/// An update of a document and of a multi-line string, and an added multi-line string.
fn diffs_plan() -> Plan {
    let mut p = plan_of(0, 0);
    let mut doc = action(0, 1);
    doc.action = ActionKind::Update;
    doc.address = Address::new(Kind::from_name("Dashboard").unwrap(), Some("d".into()));
    doc.fields = vec![FieldChange {
        path: "dashboard_json".into(),
        before: Some(json!({"refresh": "1m", "title": "t"})),
        after: Some(json!({"refresh": "5m", "title": "t"})),
    }];
    let mut query = action(1, 1);
    query.action = ActionKind::Update;
    query.address = Address::new(Kind::from_name("Monitor").unwrap(), Some("m".into()));
    query.fields = vec![
        FieldChange {
            path: "prometheus_query".into(),
            before: Some(json!("sum(a)\n/ sum(b)")),
            after: Some(json!("sum(a)\n/ sum(c)")),
        },
        FieldChange {
            path: "description".into(),
            before: None,
            after: Some(json!("first\nsecond\n")),
        },
    ];
    p.actions = vec![doc, query];
    p
}

#[test]
fn markdown_diff_lines_start_at_column_0() {
    let md = markdown(&diffs_plan(), MARKDOWN_BUDGET, false);
    let fenced: Vec<&str> = md
        .split("```diff\n")
        .skip(1)
        .flat_map(|block| block.split("```").next().unwrap_or("").lines())
        .collect();
    for line in [
        "-  \"refresh\": \"1m\",",
        "+  \"refresh\": \"5m\",",
        "-/ sum(b)",
        "+/ sum(c)",
        "+ description: |",
        "+   first",
        "+   second",
    ] {
        assert!(fenced.contains(&line), "{line:?} not in {fenced:#?}");
    }
    // No diff header (GitHub would colour `---`/`+++` as a change) and nothing indented
    // that a `+`/`-` should start.
    assert!(!fenced
        .iter()
        .any(|l| l.starts_with("---") || l.starts_with("+++")));
    assert!(!fenced
        .iter()
        .any(|l| l.trim_start().starts_with(['+', '-']) && l.starts_with(' ')));
    // The text plan keeps them indented under their field, header and all.
    let t = text(&diffs_plan(), TextOptions::default());
    assert!(
        t.contains("\n          --- current\n          +++ desired\n"),
        "{t}"
    );
    assert!(t.contains("\n          -  \"refresh\": \"1m\",\n"), "{t}");
}

#[test]
fn a_one_change_plan_has_no_diagram() {
    assert!(!markdown(&plan_of(1, 3), MARKDOWN_BUDGET, false).contains("```mermaid"));
    assert!(markdown(&plan_of(2, 3), MARKDOWN_BUDGET, false).contains("```mermaid"));
}

#[test]
fn a_delete_says_why_and_shows_what_it_deletes() {
    let mut p = plan_of(0, 0);
    let mut a = action(0, 1);
    a.action = ActionKind::Delete;
    a.source = None;
    a.reason = Some("not declared by any manifest, inside the prune scope (`Team/*`)".into());
    a.fields = vec![
        FieldChange {
            path: "slug".into(),
            before: Some(json!("team-0000")),
            after: None,
        },
        FieldChange {
            path: "name".into(),
            before: Some(json!("Old")),
            after: None,
        },
    ];
    p.actions = vec![a];
    let t = text(&p, TextOptions::default());
    assert!(
        t.contains(
            "  - Team/team-0000\n      # not declared by any manifest, inside the prune scope \
             (`Team/*`)\n      - slug: \"team-0000\"\n      - name: \"Old\"\n"
        ),
        "{t}"
    );
    let md = markdown(&p, MARKDOWN_BUDGET, false);
    assert!(
        md.contains(
            "```diff\n# not declared by any manifest, inside the prune scope (`Team/*`)\n\
             - slug: \"team-0000\"\n- name: \"Old\"\n```\n"
        ),
        "{md}"
    );
}

#[test]
fn the_risk_summary_opens_the_plans_and_fits_the_markdown_budget() {
    // 3,000 deletes: far more than the summary may list in a comment.
    let mut p = plan_of(3000, 10);
    for a in &mut p.actions {
        a.action = ActionKind::Delete;
    }
    let t = text(&p, TextOptions::default());
    let summary = t.find("\nRisk summary:\n").unwrap();
    assert!(summary < t.find("\n  - Team/team-0000").unwrap());
    assert_eq!(
        t.matches("    - Team/team-").count(),
        3000,
        "text lists every delete"
    );
    assert!(
        t.contains("apply refuses: the plan deletes 3000 resources, more than max_deletes (25)")
    );
    let md = markdown(&p, MARKDOWN_BUDGET, false);
    assert!(md.len() <= MARKDOWN_BUDGET, "{}", md.len());
    let head = &md[..md.find("<details>").unwrap_or(md.len())];
    assert!(head.contains("#### Risk summary"), "{head}");
    assert!(head.contains("more deletes (the text and JSON plans list every one)"));
    // What follows the cut lists is still there: the summary is never cut.
    assert!(head.contains(
        "**Guards:** max_deletes 25, 3000 deletes in this plan: apply refuses this plan."
    ));
    assert!(head.contains("**Environments:** <code>https://t.example.com</code>."));
    assert!(
        t.contains("\n  Environments: https://t.example.com\n"),
        "{t}"
    );
    // Planned for an environment of cfgctl.yaml: named, with the target it is.
    p.guard.environment = Some("staging".into());
    let t = text(&p, TextOptions::default());
    assert!(
        t.contains("\n  Environments: staging (https://t.example.com)\n"),
        "{t}"
    );
    let md = markdown(&p, MARKDOWN_BUDGET, false);
    assert!(
        md.contains("**Environments:** <code>staging</code> (<code>https://t.example.com</code>)."),
        "{md}"
    );
    // A plan with nothing to review says so without a summary.
    let quiet = plan_of(0, 1);
    assert!(!text(&quiet, TextOptions::default()).contains("Risk summary"));
    assert!(!markdown(&quiet, MARKDOWN_BUDGET, false).contains("Risk summary"));
}
