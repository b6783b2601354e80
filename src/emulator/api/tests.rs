use super::*;
use crate::api::registry::{Op, Profile};

fn api() -> Api {
    Api::new(
        Store::open(None).unwrap(),
        100,
        Arc::clone(Description::shared_embedded()),
        true,
    )
}

fn create(api: &mut Api, kind: Kind, object: Value) -> Result<Value, ApiError> {
    api.create(
        kind,
        &wire::create_body(kind, &object, wire::Commit::Apply),
        "2026-01-01T00:00:00Z",
    )
}

#[test]
fn slugs_from_names() {
    assert_eq!(slugify("Payments on-call (EU)"), "payments-on-call-eu");
    assert_eq!(slugify("!!!"), "resource");
    let mut api = api();
    let a = create(&mut api, Kind::named("Team"), json!({"name": "Core Team"})).unwrap();
    let b = create(&mut api, Kind::named("Team"), json!({"name": "Core Team"})).unwrap();
    assert_eq!(a["team"]["slug"], "core-team");
    assert_eq!(b["team"]["slug"], "core-team-2");
}

#[test]
fn documented_defaults_filled_and_sets_sorted_like_a_tenant() {
    let mut api = api();
    create(
        &mut api,
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B"}),
    )
    .unwrap();
    let m = create(
        &mut api,
        Kind::named("Monitor"),
        json!({"slug": "m", "name": "M", "bucket_slug": "b",
            "signal_grouping": {"label_names": ["zone", "app"]}}),
    )
    .unwrap();
    assert_eq!(m["monitor"]["interval_secs"], 60);
    assert_eq!(
        m["monitor"]["signal_grouping"]["label_names"],
        json!(["app", "zone"])
    );
    let explicit = create(
        &mut api,
        Kind::named("Monitor"),
        json!({"slug": "n", "name": "N", "bucket_slug": "b", "interval_secs": 15}),
    )
    .unwrap();
    assert_eq!(explicit["monitor"]["interval_secs"], 15);
    let t = create(
        &mut api,
        Kind::named("Team"),
        json!({"slug": "t", "name": "T", "user_emails": ["b@x", "a@x"]}),
    )
    .unwrap();
    assert_eq!(t["team"]["user_emails"], json!(["a@x", "b@x"]));
    // Off: answered without the defaults.
    let mut bare = self::api();
    bare.server_defaults = false;
    create(
        &mut bare,
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B"}),
    )
    .unwrap();
    let m = create(
        &mut bare,
        Kind::named("Monitor"),
        json!({"slug": "m", "name": "M", "bucket_slug": "b"}),
    )
    .unwrap();
    assert!(m["monitor"].get("interval_secs").is_none(), "{m}");
}

#[test]
fn tokens_round_trip() {
    let t = encode_token("a-b", "slugs=x");
    assert_eq!(decode_token(&t), Some(("a-b".into(), "slugs=x".into())));
    assert_eq!(decode_token("zz"), None);
    assert_eq!(decode_token("abc"), None);
}

#[test]
fn classic_dashboard_rewrites() {
    let mut api = api();
    create(
        &mut api,
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B"}),
    )
    .unwrap();
    let created = create(
        &mut api,
        Kind::named("ClassicDashboard"),
        json!({"slug": "d", "name": "D", "bucket_slug": "b", "dashboard_json": "{\"title\":\"T\",\"a\":1}"}),
    )
    .unwrap();
    let doc: Value = serde_json::from_str(
        created["classic_dashboard"]["dashboard_json"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(doc["version"], 1);
    assert!(doc["id"].as_i64().unwrap() > 0);
    let body = wire::update_body(
        Kind::named("ClassicDashboard"),
        &json!({"name": "D", "bucket_slug": "b", "dashboard_json": "{\"title\":\"T2\"}"}),
        wire::IfMissing::Fail,
        wire::Commit::Apply,
    );
    let updated = api
        .update(
            Kind::named("ClassicDashboard"),
            Some("d"),
            &body,
            "2026-01-02T00:00:00Z",
        )
        .unwrap();
    let text = updated["classic_dashboard"]["dashboard_json"]
        .as_str()
        .unwrap();
    let doc2: Value = serde_json::from_str(text).unwrap();
    assert_eq!(doc2["version"], 2);
    assert_eq!(doc2["id"], doc["id"]);
    assert!(text.starts_with("{\"id\":"), "keys re-ordered: {text}");
    assert_eq!(
        updated["classic_dashboard"]["created_at"],
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(
        updated["classic_dashboard"]["updated_at"],
        "2026-01-02T00:00:00Z"
    );
}

/// A list answering stored texts as they are (the fast way) against every object parsed and
/// written again (the slow way): every page of every kind that the harness's mix (when beside
/// the repository), the valid fixtures and the examples create, with the embedded documents and
/// without, filtered, and with a secret, reads the same bytes.
#[test]
fn a_list_answers_stored_texts_as_the_parsed_way_writes_them() {
    let mut api = api();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated = tempfile::tempdir().unwrap();
    let mut dirs = crate::util::test_support::harness_mix(300, generated.path())
        .into_iter()
        .collect::<Vec<_>>();
    dirs.extend([root.join("fixtures/valid"), root.join("examples")]);
    let mut created = 0;
    for dir in dirs {
        let Ok(loaded) = crate::manifest::load_dir(&dir) else {
            continue;
        };
        for m in &loaded.manifests {
            created += usize::from(create(&mut api, m.kind, (*m.spec).clone()).is_ok());
        }
    }
    // Without the harness beside the repository (a fresh clone), these still give an omitted
    // field (a dashboard's document) and a secret.
    for (kind, object) in [
        ("Team", json!({"slug": "oracle-t", "name": "Oracle T"})),
        (
            "Collection",
            json!({"slug": "oracle-c", "name": "Oracle C", "team_slug": "oracle-t"}),
        ),
        (
            "Dashboard",
            json!({"slug": "oracle-d", "name": "Oracle D", "collection_slug": "oracle-c",
            "dashboard_json": "{\"kind\":\"Dashboard\",\"spec\":{\"panels\":{},\"duration\":\"1h\"}}"}),
        ),
        (
            "ExternalConnection",
            json!({"slug": "chat", "name": "Chat", "slack": {"token": "s3cr3t-token"}}),
        ),
    ] {
        create(&mut api, Kind::named(kind), object).unwrap();
        created += 1;
    }
    assert!(created > 10, "only {created} objects created");
    let mut pages = 0;
    for kind in Kind::all().filter(|k| k.def().ops(Profile::Full).has(Op::List)) {
        for filter in [
            "",
            "include_dashboard_json=true&",
            "include_dashboard_json=false&",
            "names=Chat&",
        ] {
            let mut token = String::new();
            loop {
                let query = format!("{filter}page.max_size=7&page.token={token}");
                let page = |how| {
                    let page = api.list_as(kind, &query, how);
                    page.map(|p| serde_json::to_string(&p).unwrap())
                        .map_err(|e| e.client_message())
                };
                let (fast, slow) = (page(AsStored::WhereAnswered), page(AsStored::Never));
                assert_eq!(fast, slow, "{} {query}", kind.name());
                // A filter a kind does not know: refused both ways.
                let Ok(fast) = fast else { break };
                assert!(!fast.contains("s3cr3t"), "{fast}");
                pages += 1;
                let body: Value = serde_json::from_str(&fast).unwrap();
                match body["page"]["next_token"].as_str() {
                    Some(next) => token = next.to_string(),
                    None => break,
                }
            }
        }
    }
    // At least a page of every listable kind, each filter refused or followed to its end.
    let kinds = Kind::all()
        .filter(|k| k.def().ops(Profile::Full).has(Op::List))
        .count();
    assert!(pages > kinds, "only {pages} pages of {kinds} kinds");
}
