use super::*;

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
