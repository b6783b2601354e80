use serde_json::json;

use super::*;

mod style;

#[test]
fn merge_keeps_what_compares_equal_as_written() {
    let written = json!({
        "slug": "c", "name": "C", "description": "",
        "thresholds": [{"volume": {"fixed_value": 1000}}],
        "notification_policy_slug": "mine"
    });
    let current = json!({
        "slug": "c", "name": "C2", "created_at": "x",
        "thresholds": [{"volume": {"fixed_value": "1000"}}],
        "notification_policy_slug": "theirs",
        "default_priority": 3
    });
    let ignore = vec![IgnoreRule {
        kind: Kind::named("ConsumptionBudget"),
        path: "notification_policy_slug".into(),
    }];
    let merged = merged_spec(
        Kind::named("ConsumptionBudget"),
        &written,
        &current,
        &ignore,
    );
    // Order: the manifest's, then the new field; the zero description and the int64 written
    // as a number stay; the ignored field keeps the manifest's value; no server-owned field.
    // (`description` is not in the budget's API description: kept as written.)
    assert_eq!(
        serde_json::to_string(&merged).unwrap(),
        r#"{"slug":"c","name":"C2","description":"","thresholds":[{"volume":{"fixed_value":1000}}],"notification_policy_slug":"mine","default_priority":3}"#
    );
}

#[test]
fn embedded_documents_keep_their_form() {
    let kind = Kind::named("ClassicDashboard");
    let current = json!({
        "slug": "d", "name": "D",
        "dashboard_json": "{\"id\":9,\"version\":4,\"title\":\"New\",\"panels\":[1]}"
    });
    // A mapping stays a mapping, with the manifest's own volatile member and order.
    let written = json!({"slug": "d", "name": "D", "dashboard_json": {"panels": [1], "id": 1, "title": "Old"}});
    let merged = merged_spec(kind, &written, &current, &[]);
    assert_eq!(
        serde_json::to_string(&merged["dashboard_json"]).unwrap(),
        r#"{"panels":[1],"id":1,"title":"New"}"#
    );
    // A pretty string stays a pretty string in the author's layout (with its final newline),
    // only the changed member rewritten; a one-line string stays on one line.
    let written = json!({"slug": "d", "name": "D", "dashboard_json": "{\n    \"title\": \"Old\",\n    \"panels\": [1]\n}\n"});
    let merged = merged_spec(kind, &written, &current, &[]);
    assert_eq!(
        merged["dashboard_json"],
        json!("{\n    \"title\": \"New\",\n    \"panels\": [1]\n}\n")
    );
    let written = json!({"slug": "d", "name": "D", "dashboard_json": "{\"title\": \"Old\"}"});
    let merged = merged_spec(kind, &written, &current, &[]);
    assert_eq!(
        merged["dashboard_json"],
        json!(r#"{"title": "New", "panels": [1]}"#)
    );
}

#[test]
fn yaml_documents_are_located_without_their_comments() {
    let text = "# header\n---\n# about a\napi_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A\n# after a\n\n---\nkind: Team\nspec: {slug: b}\n";
    let docs = locate_yaml(text).unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        &text[docs[0].range.clone()],
        "api_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A\n"
    );
    assert_eq!(docs[0].address.as_ref().unwrap().to_string(), "Team/a");
    assert_eq!(
        &text[docs[1].range.clone()],
        "kind: Team\nspec: {slug: b}\n"
    );
}

#[test]
fn json_arrays_are_split_by_bytes() {
    let text = "[\n  {\"kind\": \"Team\", \"spec\": {\"slug\": \"a]\\\"\"}},\n  {\"kind\": \"Team\", \"spec\": {\"slug\": \"b\"}}\n]\n";
    let docs = locate_json(text).unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        &text[docs[1].range.clone()],
        "{\"kind\": \"Team\", \"spec\": {\"slug\": \"b\"}}"
    );
    let out = render_json(
        text,
        docs[1].range.start,
        &json!({"kind": "Team", "spec": {"slug": "b"}}),
    );
    assert_eq!(
        out,
        "{\n    \"kind\": \"Team\",\n    \"spec\": {\n      \"slug\": \"b\"\n    }\n  }"
    );
}

#[test]
fn list_style_follows_the_document() {
    assert!(!compact_lists("spec:\n  emails:\n    - a\n"));
    assert!(compact_lists("spec:\n  emails:\n  - a\n"));
    assert!(compact_lists("spec:\n  name: x\n"));
}

/// The manifests of `files` loaded from a scratch folder, planned against `current`, pulled.
fn pull_files(files: &[(&str, &str)], current: &[(Kind, &str, Value)]) -> Pulled {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let loaded = crate::manifest::load_dir(dir.path()).unwrap();
    assert_eq!(loaded.error_count(), 0, "{:?}", loaded.diagnostics);
    let mut state = Current::default();
    for (kind, slug, object) in current {
        state.insert(Address::new(*kind, Some(slug.to_string())), object);
    }
    state.known = crate::api::registry::kinds()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    let plan = crate::plan::plan(
        &loaded.manifests,
        &state,
        &crate::plan::Capabilities::assumed_full(),
        &loaded.settings,
        &crate::plan::PlanOptions::default(),
    )
    .unwrap();
    let texts = loaded
        .manifests
        .iter()
        .map(|m| (m.file.clone(), std::fs::read_to_string(&m.file).unwrap()))
        .collect();
    pull(&PullInput {
        manifests: &loaded.manifests,
        texts: &texts,
        current: &state,
        plan: &plan,
        ignore: &loaded.settings.ignore,
        include_unmanaged: false,
        environment: None,
    })
    .unwrap()
}

#[test]
fn crlf_files_keep_their_line_breaks() {
    let text =
        "# teams\r\napi_version: v1/config\r\nkind: Team\r\nspec:\r\n  slug: a\r\n  name: A\r\n";
    let pulled = pull_files(
        &[("teams.yaml", text)],
        &[(
            Kind::named("Team"),
            "a",
            json!({"slug": "a", "name": "B", "user_emails": ["x@y"]}),
        )],
    );
    assert_eq!(
        pulled.rewritten[0].text,
        "# teams\r\napi_version: v1/config\r\nkind: Team\r\nspec:\r\n  slug: a\r\n  name: B\r\n  user_emails:\r\n  - x@y\r\n"
    );
}

#[test]
fn gone_and_unchanged_resources_are_not_rewritten() {
    let text = "api_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: b\n  name: B\n";
    let pulled = pull_files(
        &[("teams.yaml", text)],
        &[(
            Kind::named("Team"),
            "a",
            json!({"slug": "a", "name": "A", "created_at": "x"}),
        )],
    );
    assert!(pulled.rewritten.is_empty(), "{pulled:?}");
    assert_eq!(pulled.gone.len(), 1);
    assert_eq!(pulled.gone[0].address.to_string(), "Team/b");
    assert!(
        pulled.gone[0].source.ends_with("teams.yaml:7"),
        "{pulled:?}"
    );
}

#[test]
fn tricky_yaml_layouts_take_minimal_edits() {
    // A block scalar changed, a comment between list items, no final newline, a field removed
    // at the top of the spec and one added after a block scalar.
    let text = "spec:\n  description: |\n    line one\n    # not a comment\n  user_emails:\n    - a@x  # first\n    # between\n    - b@x\n  slug: t\n  name: T\napi_version: v1/config\nkind: Team";
    let pulled = pull_files(
        &[("t.yaml", text)],
        &[(
            Kind::named("Team"),
            "t",
            json!({"slug": "t", "name": "T", "description": "line one\n# not a comment\nline two\n", "user_emails": ["a@x", "b@x"]}),
        )],
    );
    assert_eq!(
        pulled.rewritten[0].text,
        text.replace(
            "    # not a comment\n",
            "    # not a comment\n    line two\n"
        )
    );
    let pulled = pull_files(
        &[("t.yaml", text)],
        &[(
            Kind::named("Team"),
            "t",
            json!({"slug": "t", "name": "U", "user_emails": ["a@x", "b@x"]}),
        )],
    );
    assert_eq!(
        pulled.rewritten[0].text,
        "spec:\n  user_emails:\n    - a@x  # first\n    # between\n    - b@x\n  slug: t\n  name: U\napi_version: v1/config\nkind: Team"
    );
}

#[test]
fn two_documents_of_one_file_and_a_field_added_after_a_block_scalar() {
    let text = "# two teams\napi_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A\n  description: |\n    about a\n\n# b next\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: b\n  name: B\n";
    let pulled = pull_files(
        &[("t.yaml", text)],
        &[
            (
                Kind::named("Team"),
                "a",
                json!({"slug": "a", "name": "A", "description": "about a\n", "user_emails": ["x@y"]}),
            ),
            (Kind::named("Team"), "b", json!({"slug": "b", "name": "B2"})),
        ],
    );
    assert_eq!(
        pulled.rewritten[0].text,
        "# two teams\napi_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A\n  description: |\n    about a\n  user_emails:\n  - x@y\n\n# b next\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: b\n  name: B2\n"
    );
    assert_eq!(pulled.rewritten[0].addresses.len(), 2);
}

mod property {
    //! Any manifests, any out-of-band edits: after a pull the files load without errors and
    //! plan to nothing but the creates of what is gone from the target.

    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    struct Team {
        name: String,
        description: Option<String>,
        emails: Vec<String>,
    }

    fn team() -> impl Strategy<Value = Team> {
        (
            "[A-Za-z][a-z ]{0,8}",
            prop::option::of("[a-z :#]{0,10}"),
            prop::collection::vec("[a-z]{1,4}@x\\.io", 0..3),
        )
            .prop_map(|(name, description, emails)| Team {
                name,
                description,
                emails,
            })
    }

    /// One document in one of several styles.
    fn render(slug: &str, t: &Team, style: u8) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap();
        let mut out = String::new();
        if style & 1 == 1 {
            out.push_str(&format!("# team {slug}\n"));
        }
        out.push_str("api_version: v1/config\nkind: Team\nspec:\n");
        out.push_str(&format!("  slug: {slug}\n  name: {}\n", q(&t.name)));
        if let Some(d) = &t.description {
            out.push_str(&format!("  description: {}  # said so\n", q(d)));
        }
        if !t.emails.is_empty() {
            if style & 2 == 2 {
                let items: Vec<String> = t.emails.iter().map(|e| q(e)).collect();
                out.push_str(&format!("  user_emails: [{}]\n", items.join(", ")));
            } else {
                out.push_str("  user_emails:\n");
                for e in &t.emails {
                    out.push_str(&format!("    - {e}\n"));
                }
            }
        }
        if style & 4 == 4 {
            out.push_str("\n# end\n");
        }
        out
    }

    fn object(slug: &str, t: &Team) -> Value {
        let mut o = json!({"slug": slug, "name": t.name, "created_at": "2026-01-01T00:00:00Z"});
        if let Some(d) = &t.description {
            o["description"] = json!(d);
        }
        if !t.emails.is_empty() {
            o["user_emails"] = json!(t.emails);
        }
        o
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn pulled_files_plan_clean(
            teams in prop::collection::vec((team(), any::<u8>(), prop::option::of(prop::option::of(team()))), 1..4)
        ) {
            let docs: Vec<String> = teams
                .iter()
                .enumerate()
                .map(|(i, (t, style, _))| render(&format!("t{i}"), t, *style))
                .collect();
            let text = docs.join("---\n");
            // None: unchanged; Some(None): gone; Some(Some(t)): edited to t.
            let current: Vec<(Kind, String, Value)> = teams
                .iter()
                .enumerate()
                .filter_map(|(i, (t, _, edit))| {
                    let slug = format!("t{i}");
                    match edit {
                        None => Some((Kind::named("Team"), slug.clone(), object(&slug, t))),
                        Some(None) => None,
                        Some(Some(e)) => Some((Kind::named("Team"), slug.clone(), object(&slug, e))),
                    }
                })
                .collect();
            let current_refs: Vec<(Kind, &str, Value)> =
                current.iter().map(|(k, s, v)| (*k, s.as_str(), v.clone())).collect();
            let pulled = pull_files(&[("teams.yaml", &text)], &current_refs);
            let new_text = pulled
                .rewritten
                .first()
                .map_or(text.clone(), |f| f.text.clone());

            // Read back: valid, and only the creates of what is gone are left.
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("teams.yaml"), &new_text).unwrap();
            let loaded = crate::manifest::load_dir(dir.path()).unwrap();
            prop_assert_eq!(loaded.error_count(), 0, "{:?}\n{}", loaded.diagnostics, new_text);
            let mut state = Current::default();
            for (kind, slug, object) in &current {
                state.insert(Address::new(*kind, Some(slug.clone())), object);
            }
            state.known = crate::api::registry::kinds().into_iter().map(|d| d.kind).collect();
            let plan = crate::plan::plan(
                &loaded.manifests,
                &state,
                &crate::plan::Capabilities::assumed_full(),
                &loaded.settings,
                &crate::plan::PlanOptions::default(),
            )
            .unwrap();
            let gone = teams.iter().filter(|(_, _, e)| matches!(e, Some(None))).count();
            prop_assert_eq!(plan.actions.len(), gone, "{:?}\n{}", plan.actions, new_text);
            prop_assert!(plan.actions.iter().all(|a| a.action == ActionKind::Create));
            prop_assert_eq!(pulled.gone.len(), gone);
            // A document that was not pulled keeps its bytes.
            for (i, (_, _, edit)) in teams.iter().enumerate() {
                let slug = format!("t{i}");
                let changed = pulled
                    .rewritten
                    .iter()
                    .any(|f| f.addresses.iter().any(|a| a.slug.as_deref() == Some(slug.as_str())));
                if !changed {
                    prop_assert!(new_text.contains(&docs[i]), "t{i} ({edit:?}) moved:\n{new_text}");
                }
            }
        }
    }
}

#[test]
fn fields_of_a_newer_api_are_not_written() {
    let text = "api_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A\n";
    let pulled = pull_files(
        &[("t.yaml", text)],
        &[(
            Kind::named("Team"),
            "a",
            json!({"slug": "a", "name": "B", "retention_tier": "gold"}),
        )],
    );
    assert_eq!(pulled.rewritten[0].text, text.replace("name: A", "name: B"));
}

/// Pulls `text` (one file) against `current` and returns the new text.
fn pulled_text(text: &str, current: &[(&str, &str, Value)]) -> String {
    let current: Vec<(Kind, &str, Value)> = current
        .iter()
        .map(|(k, s, v)| (Kind::from_name(k).unwrap(), *s, v.clone()))
        .collect();
    let pulled = pull_files(&[("m.yaml", text)], &current);
    assert_eq!(pulled.rewritten.len(), 1, "{pulled:?}");
    pulled.rewritten[0].text.clone()
}

#[test]
fn control_and_separator_characters_are_escaped_in_place() {
    let text = "# team\napi_version: v1/config\nkind: Team\nspec:\n  slug: a  # id\n  name: \"A\"  # shown\n  description: 'd' # why\n";
    let odd = "a\u{7f}b\u{85}c\u{2028}d\u{2029}e\u{9f}f";
    let new = pulled_text(
        text,
        &[(
            "Team",
            "a",
            json!({"slug": "a", "name": odd, "description": odd}),
        )],
    );
    let escaped = r#""a\u007Fb\u0085c\u2028d\u2029e\u009Ff""#;
    assert_eq!(
        new,
        text.replace("\"A\"", escaped).replace("'d'", escaped),
        "the document is edited in place, comments kept"
    );
    // Another YAML 1.2 reader reads the same strings.
    let theirs = crate::util::yaml::yaml12::ruamel(&[new]);
    let spec = &theirs[0].as_ref().unwrap()[0]["spec"];
    assert_eq!(
        (&spec["name"], &spec["description"]),
        (&json!(odd), &json!(odd))
    );
}

#[test]
fn an_embedded_json_string_changes_only_where_its_values_do() {
    let pretty = "{\n    \"title\": \"Old\",\n    \"panels\": [\n        {\"id\": 1, \"type\": \"graph\"}\n    ],\n    \"tags\": [\"a\", \"b\"]\n}\n";
    let block: String = pretty.lines().map(|l| format!("    {l}\n")).collect();
    let bucket = "api_version: v1/config\nkind: Bucket\nspec: {slug: b, name: B}\n---\n";
    let text = format!("{bucket}api_version: v1/config\nkind: ClassicDashboard\nspec:\n  slug: d\n  name: D\n  bucket_slug: b\n  dashboard_json: |  # from Grafana\n{block}");
    let state = |title: &str| {
        json!({"slug": "d", "name": "D", "bucket_slug": "b", "dashboard_json": json!({
            "id": 9, "version": 4, "title": title, "panels": [{"id": 1, "type": "graph"}], "tags": ["a", "b"]
        }).to_string()})
    };
    let b = ("Bucket", "b", json!({"slug": "b", "name": "B"}));
    let new = pulled_text(&text, &[b.clone(), ("ClassicDashboard", "d", state("New"))]);
    assert_eq!(
        new,
        text.replace("\"title\": \"Old\"", "\"title\": \"New\"")
    );
    // A one-line string stays one line, in its quotes and spacing.
    let text = format!("{bucket}{}", "api_version: v1/config\nkind: ClassicDashboard\nspec:\n  slug: d\n  name: D\n  bucket_slug: b\n  dashboard_json: '{\"title\": \"Old\", \"panels\": [{\"id\": 1, \"type\": \"graph\"}], \"tags\": [\"a\", \"b\"]}'\n");
    let new = pulled_text(&text, &[b, ("ClassicDashboard", "d", state("New"))]);
    assert_eq!(
        new,
        text.replace("\"title\": \"Old\"", "\"title\": \"New\"")
    );
}

#[test]
fn flow_collections_are_edited_in_place() {
    let text = "api_version: v1/config\nkind: Bucket\nspec: {slug: platform, name: Platform}\n---\napi_version: v1/config\nkind: Monitor\nspec:\n  slug: m\n  name: M\n  bucket_slug: platform\n  labels: {team: a}  # owners\n  prometheus_query: up == 0\n  series_conditions:\n    defaults:\n      critical:\n        conditions:\n          - {op: GT, value: 1, sustain_secs: 300}\n";
    let monitor = |team: &str, value: u32| {
        json!({"slug": "m", "name": "M", "bucket_slug": "platform", "labels": {"team": team},
        "prometheus_query": "up == 0",
        "series_conditions": {"defaults": {"critical": {"conditions": [
            {"op": "GT", "value": value, "sustain_secs": 300}
        ]}}}})
    };
    let new = pulled_text(
        text,
        &[
            (
                "Bucket",
                "platform",
                json!({"slug": "platform", "name": "Platform"}),
            ),
            ("Monitor", "m", monitor("b", 2)),
        ],
    );
    assert_eq!(
        new,
        text.replace("{team: a}", "{team: b}")
            .replace("value: 1,", "value: 2.0,")
    );
}
