//! `cfgctl serve`: the emulator over real HTTP on 127.0.0.1:0.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::wire::{self, ListQuery};
use cfgctl::api::registry::{embedded_kinds, Kind, Profile};
use cfgctl::emulator::faults::Faults;
use cfgctl::emulator::{Config, STATS_PATH};
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, Cfgctl};
// The tenant lives in `support` now; the old paths stay for tests that still use them.
pub use crate::support::{fixture_objects, Reply, Tenant};

fn slugs(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| i["slug"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn every_kind_and_operation_of_the_full_profile() {
    let t = Tenant::full().await;
    let objects = fixture_objects();
    assert_eq!(
        objects.iter().map(|o| o.0).collect::<BTreeSet<_>>().len(),
        14
    );
    // Create.
    for (kind, slug, object) in &objects {
        let r = t.create(*kind, object.clone()).await;
        assert_eq!(r.status, 200, "create {kind}/{slug:?}: {r:?}");
        let got = wire::parse_one_response(*kind, &r.body).expect("wrapped object");
        assert_eq!(got["slug"].as_str(), slug.as_deref());
        assert!(got["created_at"].as_str().unwrap().ends_with('Z'));
        assert_eq!(got["created_at"], got["updated_at"]);
    }
    // Read and list.
    for (kind, slug, object) in &objects {
        let r = t.read(*kind, slug.as_deref()).await;
        assert_eq!(r.status, 200, "read {kind}: {r:?}");
        let got = wire::parse_one_response(*kind, &r.body).unwrap();
        if let Some(name) = object.get("name") {
            assert_eq!(&got["name"], name);
        }
    }
    for def in embedded_kinds().into_iter().filter(|d| d.full_ops.list) {
        let r = t.list(def.kind, "").await;
        assert_eq!(r.status, 200);
        let (items, _) = wire::parse_list_response(def.kind, &r.body).unwrap();
        let expected: Vec<String> = {
            let mut s: Vec<String> = objects
                .iter()
                .filter(|o| o.0 == def.kind)
                .filter_map(|o| o.1.clone())
                .collect();
            s.sort();
            s
        };
        assert_eq!(slugs(&items), expected, "{}", def.name);
    }
    // Update: a new description or name, read back.
    for (kind, slug, object) in &objects {
        let mut changed = object.clone();
        let field = if kind.def().singleton {
            "pools"
        } else {
            "name"
        };
        if field == "name" {
            changed["name"] = json!(format!("{} (renamed)", object["name"].as_str().unwrap()));
        } else {
            changed["pools"] = json!([]);
        }
        let r = t.update(*kind, slug.as_deref(), changed).await;
        assert_eq!(r.status, 200, "update {kind}: {r:?}");
        let got = wire::parse_one_response(*kind, &r.body).unwrap();
        if field == "name" {
            assert!(got["name"].as_str().unwrap().ends_with("(renamed)"));
        } else {
            assert!(got.get("pools").is_none(), "empty list omitted: {got}");
        }
    }
    // Delete in reverse order, then 404.
    for (kind, slug, _) in objects.iter().rev() {
        let r = t.delete(*kind, slug.as_deref(), "").await;
        assert_eq!(r.status, 200, "delete {kind}/{slug:?}: {r:?}");
        assert_eq!(t.read(*kind, slug.as_deref()).await.status, 404);
    }
}

#[tokio::test]
async fn seed_profile_serves_exactly_the_seed_column() {
    let t = Tenant::start(Config {
        profile: Profile::Seed,
        ..Config::default()
    })
    .await;
    let swagger = t.request(Method::GET, wire::SWAGGER_PATH, None).await;
    assert_eq!(swagger.status, 200);
    let described = cfgctl::api::spec::described_operations(&swagger.body);
    for def in embedded_kinds() {
        let ops = described.get(&def.kind).copied().unwrap_or_default();
        assert_eq!(ops, def.seed_ops, "{}", def.name);
    }
    // Operations outside the profile: 404 with a message.
    let r = t
        .create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), "CreateTeam is not available on this tenant");
    let r = t.list(Kind::named("NotificationPolicy"), "").await;
    assert_eq!(
        r.message(),
        "ListNotificationPolicies is not available on this tenant"
    );
    let r = t
        .update(Kind::named("DropRule"), Some("d"), json!({"name": "D"}))
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.message(),
        "UpdateDropRule is not available on this tenant"
    );
    // Inside the profile: drop rules can be created and read, budgets upserted.
    let r = t
        .create(Kind::named("DropRule"), json!({"slug": "d", "name": "D"}))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(t.read(Kind::named("DropRule"), Some("d")).await.status, 200);
    let r = t
        .send(
            Method::PUT,
            &wire::item_path(Kind::named("ConsumptionBudget"), Some("b")),
            &wire::update_body(
                Kind::named("ConsumptionBudget"),
                &json!({"name": "B", "resource": "LOG_PERSISTED_BYTES"}),
                wire::IfMissing::Create,
                wire::Commit::Apply,
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body["consumption_budget"]["slug"], "b");
    assert_eq!(
        t.read(Kind::named("ConsumptionBudget"), Some("b"))
            .await
            .status,
        404
    );
    assert_eq!(t.list(Kind::named("Monitor"), "").await.status, 200);
}

#[tokio::test]
async fn invalid_requests_are_400_with_a_message() {
    let t = Tenant::full().await;
    assert_eq!(
        t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
            .await
            .status,
        200
    );
    let bucket_path = wire::collection_path(Kind::named("Bucket"));
    let malformed = t
        .request(Method::POST, &bucket_path, Some(b"{\"bucket\": {".to_vec()))
        .await;
    let cases: Vec<(&str, Reply)> = vec![
        ("malformed JSON", malformed),
        (
            "unknown wrapper field",
            t.send(
                Method::POST,
                &bucket_path,
                &json!({"bucket": {"name": "B"}, "force": true}),
            )
            .await,
        ),
        (
            "unknown field",
            t.create(Kind::named("Bucket"), json!({"name": "B", "colour": "red"}))
                .await,
        ),
        (
            "wrong type",
            t.create(
                Kind::named("Bucket"),
                json!({"name": "B", "labels": {"a": 1}}),
            )
            .await,
        ),
        (
            "wrong enum value",
            t.create(
                Kind::named("DropRule"),
                json!({"name": "D", "mode": "SOMETIMES"}),
            )
            .await,
        ),
        (
            "read-only field",
            t.create(
                Kind::named("Team"),
                json!({"name": "X", "updated_at": "2020-01-01T00:00:00Z"}),
            )
            .await,
        ),
        (
            "missing reference",
            t.create(
                Kind::named("Bucket"),
                json!({"name": "B", "team_slug": "ghost"}),
            )
            .await,
        ),
        (
            "missing name",
            t.create(Kind::named("Bucket"), json!({"slug": "b"})).await,
        ),
        (
            "classic dashboard without bucket or collection",
            t.create(
                Kind::named("ClassicDashboard"),
                json!({"name": "C", "dashboard_json": "{}"}),
            )
            .await,
        ),
        (
            "monitor without bucket or collection",
            t.create(Kind::named("Monitor"), json!({"name": "M"})).await,
        ),
        (
            "notification policy without bucket or team",
            t.create(Kind::named("NotificationPolicy"), json!({"name": "N"}))
                .await,
        ),
        (
            "dataset without description",
            t.create(Kind::named("Dataset"), json!({"name": "D"})).await,
        ),
        (
            "dashboard_json that is not an object",
            t.create(
                Kind::named("Dashboard"),
                json!({"name": "D", "dashboard_json": "[1]"}),
            )
            .await,
        ),
        (
            "slug changed by an update",
            t.update(
                Kind::named("Team"),
                Some("t"),
                json!({"slug": "u", "name": "T"}),
            )
            .await,
        ),
        (
            "unknown list parameter",
            t.list(Kind::named("Bucket"), "colour=red").await,
        ),
        (
            "bad page size",
            t.list(Kind::named("Bucket"), "page.max_size=many").await,
        ),
        (
            "invalid page token",
            t.list(Kind::named("Bucket"), "page.token=zz").await,
        ),
    ];
    let mut transcript = String::new();
    for (what, reply) in &cases {
        assert_eq!(reply.status, 400, "{what}: {reply:?}");
        assert!(!reply.message().is_empty(), "{what}: no message");
        assert_eq!(reply.body["code"], 3, "{what}");
        transcript.push_str(&format!("{what}: {}\n", reply.message()));
    }
    cfgctl_snapshot!(transcript);
}

#[tokio::test]
async fn not_found_conflict_in_use_and_other_statuses() {
    let t = Tenant::full().await;
    let mut transcript = String::new();
    let mut note = |what: &str, r: &Reply| {
        transcript.push_str(&format!("{what}: {} {}\n", r.status, r.body));
    };
    note(
        "read unknown",
        &t.read(Kind::named("Bucket"), Some("nope")).await,
    );
    note(
        "update unknown",
        &t.update(Kind::named("Bucket"), Some("nope"), json!({"name": "N"}))
            .await,
    );
    note(
        "delete unknown",
        &t.delete(Kind::named("Bucket"), Some("nope"), "").await,
    );
    note(
        "read absent singleton",
        &t.read(Kind::named("ResourcePools"), None).await,
    );
    t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    note(
        "slug taken",
        &t.create(Kind::named("Team"), json!({"slug": "t", "name": "Other"}))
            .await,
    );
    t.create(
        Kind::named("DerivedLabel"),
        json!({"slug": "a", "name": "A", "label_name": "env"}),
    )
    .await;
    note(
        "label_name taken",
        &t.create(
            Kind::named("DerivedLabel"),
            json!({"slug": "b", "name": "B", "label_name": "env"}),
        )
        .await,
    );
    t.create(
        Kind::named("DerivedMetric"),
        json!({"slug": "a", "name": "A", "metric_name": "m"}),
    )
    .await;
    t.create(
        Kind::named("DerivedMetric"),
        json!({"slug": "b", "name": "B", "metric_name": "n"}),
    )
    .await;
    note(
        "metric_name taken by an update",
        &t.update(
            Kind::named("DerivedMetric"),
            Some("b"),
            json!({"name": "B", "metric_name": "m"}),
        )
        .await,
    );
    t.create(
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B", "team_slug": "t"}),
    )
    .await;
    t.create(
        Kind::named("Collection"),
        json!({"slug": "c", "name": "C", "team_slug": "t"}),
    )
    .await;
    note(
        "delete referenced",
        &t.delete(Kind::named("Team"), Some("t"), "").await,
    );
    note(
        "method not allowed",
        &t.request(
            Method::PATCH,
            &wire::item_path(Kind::named("Team"), Some("t")),
            None,
        )
        .await,
    );
    note(
        "unknown collection",
        &t.request(Method::GET, "/api/v1/config/widgets", None).await,
    );
    note(
        "unknown path",
        &t.request(Method::GET, "/healthz", None).await,
    );
    let big = vec![b' '; 5 * 1024 * 1024];
    note(
        "body over 4 MiB",
        &t.request(
            Method::POST,
            &wire::collection_path(Kind::named("Team")),
            Some(big),
        )
        .await,
    );
    cfgctl_snapshot!(transcript);
}

#[tokio::test]
async fn token_is_checked_and_never_echoed() {
    let secret = "s3cr3t-token-value";
    let t = Tenant::start(Config {
        token: Some(secret.into()),
        ..Config::default()
    })
    .await;
    assert_eq!(t.list(Kind::named("Team"), "").await.status, 200);
    let anonymous = reqwest::Client::new();
    for token in [None, Some("wrong"), Some("s3cr3t-token-valu")] {
        let mut req = anonymous.get(format!(
            "{}{}",
            t.emulator.url(),
            wire::collection_path(Kind::named("Team"))
        ));
        if let Some(tok) = token {
            req = req.header(wire::TOKEN_HEADER, tok);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 401);
        let text = resp.text().await.unwrap();
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            body["message"],
            "missing or invalid API token (header API-Token)"
        );
        assert!(!text.contains(secret) && !text.contains("wrong"), "{text}");
    }
    // The description stays readable without a token.
    let swagger = anonymous
        .get(format!("{}{}", t.emulator.url(), wire::SWAGGER_PATH))
        .send()
        .await
        .unwrap();
    assert_eq!(swagger.status().as_u16(), 200);
}

#[tokio::test]
async fn pagination_walks_every_item_once() {
    let t = Tenant::start(Config {
        page_size: 5,
        ..Config::default()
    })
    .await;
    for i in 0..23 {
        let r = t
            .create(
                Kind::named("Team"),
                json!({"slug": format!("team-{i:02}"), "name": format!("Team {i}")}),
            )
            .await;
        assert_eq!(r.status, 200);
    }
    // The server's default page size.
    let (items, pages) = t.list_all(Kind::named("Team"), &ListQuery::default()).await;
    assert_eq!(pages, 5);
    let expected: Vec<String> = (0..23).map(|i| format!("team-{i:02}")).collect();
    assert_eq!(slugs(&items), expected);
    // A stated preference, and one above the cap.
    let q = ListQuery {
        max_size: Some(10),
        ..ListQuery::default()
    };
    let (items, pages) = t.list_all(Kind::named("Team"), &q).await;
    assert_eq!((slugs(&items), pages), (expected.clone(), 3));
    let q = ListQuery {
        max_size: Some(100_000),
        ..ListQuery::default()
    };
    assert_eq!(t.list_all(Kind::named("Team"), &q).await.1, 1);
    // A page token reused with other filters.
    let first = t.list(Kind::named("Team"), "").await;
    let token = first.body["page"]["next_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!token.is_empty());
    let q = format!("page.token={token}&names=Team%201");
    let r = t.list(Kind::named("Team"), &q).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("filters must be identical"),
        "{}",
        r.message()
    );
    // Resources created during a walk never make it return an item twice.
    let mut q = ListQuery::default();
    let mut seen = Vec::new();
    loop {
        let r = t.list(Kind::named("Team"), &q.to_query_string()).await;
        let (page, next) = wire::parse_list_response(Kind::named("Team"), &r.body).unwrap();
        seen.extend(slugs(&page));
        if seen.len() == 5 {
            t.create(
                Kind::named("Team"),
                json!({"slug": "team-00a", "name": "Inserted"}),
            )
            .await;
        }
        if next.is_empty() {
            break;
        }
        q.token = Some(next);
    }
    let unique: BTreeSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len());
}

#[tokio::test]
async fn list_filters_and_and_or() {
    let t = Tenant::full().await;
    for (kind, slug, object) in fixture_objects() {
        let r = t.create(kind, object).await;
        assert_eq!(r.status, 200, "{kind}/{slug:?}");
    }
    t.create(
        Kind::named("Team"),
        json!({"slug": "infra", "name": "Infra"}),
    )
    .await;
    t.create(
        Kind::named("Collection"),
        json!({"slug": "infra", "name": "Infra", "team_slug": "infra"}),
    )
    .await;
    let cases: Vec<(Kind, &str, Vec<&str>)> = vec![
        (
            Kind::named("Team"),
            "slugs=platform&slugs=infra&slugs=nope",
            vec!["infra", "platform"],
        ),
        (Kind::named("Team"), "names=Payments", vec!["payments"]),
        (Kind::named("Team"), "slugs=platform&names=Payments", vec![]),
        (
            Kind::named("ClassicDashboard"),
            "bucket_slugs=platform",
            vec!["fleet-overview", "platform-nodes"],
        ),
        (
            Kind::named("ClassicDashboard"),
            "collection_slugs=payments",
            vec![],
        ),
        (
            Kind::named("Dashboard"),
            "collection_slugs=payments&collection_slugs=infra",
            vec!["payments-overview", "payments-slos"],
        ),
        (Kind::named("Collection"), "team_slugs=infra", vec!["infra"]),
        (
            Kind::named("Collection"),
            "notification_policy_slugs=payments-oncall",
            vec!["payments"],
        ),
        (
            Kind::named("NotificationPolicy"),
            "team_slugs=platform",
            vec!["platform-oncall"],
        ),
        (
            Kind::named("NotificationPolicy"),
            "bucket_slugs=platform",
            vec![],
        ),
        (
            Kind::named("Monitor"),
            "bucket_slugs=platform",
            vec!["platform-node-memory"],
        ),
        (
            Kind::named("Monitor"),
            "collection_slugs=payments",
            vec!["payments-checkout-errors"],
        ),
        (
            Kind::named("Monitor"),
            "team_slugs=payments",
            vec!["payments-checkout-errors"],
        ),
        (Kind::named("Dataset"), "type=LOGS", vec!["payments-logs"]),
        (
            Kind::named("Dataset"),
            "type=TRACES",
            vec!["checkout-traces"],
        ),
        (
            Kind::named("ConsumptionBudget"),
            "resources=LOG_PERSISTED_BYTES",
            vec!["payments-logs"],
        ),
    ];
    for (kind, query, expected) in cases {
        let r = t.list(kind, query).await;
        assert_eq!(r.status, 200, "{kind} {query}: {r:?}");
        let (items, _) = wire::parse_list_response(kind, &r.body).unwrap();
        assert_eq!(slugs(&items), expected, "{kind} {query}");
    }
}

#[tokio::test]
async fn dashboard_rewrites_and_list_omission() {
    let t = Tenant::full().await;
    t.create(Kind::named("Bucket"), json!({"slug": "b", "name": "B"}))
        .await;
    let classic_json =
        json!({"title": "Nodes", "panels": [{"title": "CPU", "type": "timeseries"}], "uid": "abc"});
    let r = t
        .create(
            Kind::named("ClassicDashboard"),
            json!({"slug": "c", "name": "C", "bucket_slug": "b", "dashboard_json": classic_json.to_string()}),
        )
        .await;
    let text = r.body["classic_dashboard"]["dashboard_json"]
        .as_str()
        .unwrap()
        .to_string();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["version"], 1);
    assert!(doc["id"].is_i64());
    assert_ne!(
        text,
        classic_json.to_string(),
        "re-serialised in the server's key order"
    );
    assert!(text.starts_with("{\"id\":"), "{text}");
    let r = t
        .update(
            Kind::named("ClassicDashboard"),
            Some("c"),
            json!({"name": "C", "bucket_slug": "b", "dashboard_json": classic_json.to_string()}),
        )
        .await;
    let doc2: Value = serde_json::from_str(
        r.body["classic_dashboard"]["dashboard_json"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(doc2["version"], 2);
    assert_eq!(doc2["id"], doc["id"]);

    let dash_json = json!({"kind": "Dashboard", "metadata": {"name": "d"}, "spec": {"panels": {}}});
    let r = t
        .create(
            Kind::named("Dashboard"),
            json!({"slug": "d", "name": "D", "dashboard_json": dash_json.to_string()}),
        )
        .await;
    let created = r.body["dashboard"].clone();
    let doc: Value = serde_json::from_str(created["dashboard_json"].as_str().unwrap()).unwrap();
    assert_eq!(doc["metadata"]["version"], 1);
    assert_eq!(doc["metadata"]["created_at"], created["created_at"]);
    assert_eq!(doc["metadata"]["updated_at"], created["updated_at"]);
    assert_eq!(doc["metadata"]["name"], "d");
    let r = t
        .update(
            Kind::named("Dashboard"),
            Some("d"),
            json!({"name": "D", "dashboard_json": dash_json.to_string()}),
        )
        .await;
    let doc2: Value =
        serde_json::from_str(r.body["dashboard"]["dashboard_json"].as_str().unwrap()).unwrap();
    assert_eq!(doc2["metadata"]["version"], 2);
    assert_eq!(
        doc2["metadata"]["created_at"],
        doc["metadata"]["created_at"]
    );

    for kind in [Kind::named("Dashboard"), Kind::named("ClassicDashboard")] {
        let plain = t.list(kind, "").await;
        let (items, _) = wire::parse_list_response(kind, &plain.body).unwrap();
        assert!(
            items[0].get("dashboard_json").is_none(),
            "{kind}: {}",
            items[0]
        );
        let full = t.list(kind, "include_dashboard_json=true").await;
        let (items, _) = wire::parse_list_response(kind, &full.body).unwrap();
        assert!(items[0]["dashboard_json"]
            .as_str()
            .unwrap()
            .contains("version"));
    }
}

#[tokio::test]
async fn zero_values_slugs_and_timestamps() {
    let t = Tenant::full().await;
    let r = t
        .create(
            Kind::named("DropRule"),
            json!({"name": "Drop Debug Series!", "mode": "ENABLED", "drop_nan_value": false,
                   "filters": [], "value_based_drop": {"enabled": false, "target_drop_value": 0}}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let got = &r.body["drop_rule"];
    let keys: Vec<&String> = got.as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["slug", "name", "created_at", "updated_at"]);
    assert_eq!(got["slug"], "drop-debug-series");
    let created = got["created_at"].as_str().unwrap();
    assert!(humantime::parse_rfc3339(created).is_ok(), "{created}");
    // int64 comes back as a string, whatever was sent.
    let r = t
        .create(
            Kind::named("ConsumptionBudget"),
            json!({"slug": "b", "name": "B", "thresholds": [{"volume": {"fixed_value": 1000}}]}),
        )
        .await;
    assert_eq!(
        r.body["consumption_budget"]["thresholds"][0]["volume"]["fixed_value"],
        "1000"
    );
    // An update keeps created_at and moves updated_at.
    let r2 = t
        .update(
            Kind::named("DropRule"),
            Some("drop-debug-series"),
            json!({"name": "Renamed"}),
        )
        .await;
    assert_eq!(r2.body["drop_rule"]["created_at"], created);
    assert_ne!(r2.body["drop_rule"]["updated_at"], created);
}

#[tokio::test]
async fn dry_run_and_create_if_missing() {
    let t = Tenant::full().await;
    let path = wire::collection_path(Kind::named("Team"));
    let r = t
        .send(
            Method::POST,
            &path,
            &wire::create_body(
                Kind::named("Team"),
                &json!({"slug": "t", "name": "T"}),
                wire::Commit::DryRun,
            ),
        )
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!({})));
    assert_eq!(t.read(Kind::named("Team"), Some("t")).await.status, 404);
    // A dry run still validates.
    let r = t
        .send(
            Method::POST,
            &path,
            &wire::create_body(
                Kind::named("Team"),
                &json!({"slug": "t"}),
                wire::Commit::DryRun,
            ),
        )
        .await;
    assert_eq!(r.status, 400);
    // create_if_missing: false → 404; true → created.
    let item = wire::item_path(Kind::named("Team"), Some("t"));
    let r = t
        .send(
            Method::PUT,
            &item,
            &wire::update_body(
                Kind::named("Team"),
                &json!({"name": "T"}),
                wire::IfMissing::Fail,
                wire::Commit::Apply,
            ),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = t
        .send(
            Method::PUT,
            &item,
            &wire::update_body(
                Kind::named("Team"),
                &json!({"name": "T"}),
                wire::IfMissing::Create,
                wire::Commit::DryRun,
            ),
        )
        .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (200, json!({})),
        "dry run upsert"
    );
    assert_eq!(t.read(Kind::named("Team"), Some("t")).await.status, 404);
    let r = t
        .send(
            Method::PUT,
            &item,
            &wire::update_body(
                Kind::named("Team"),
                &json!({"name": "T"}),
                wire::IfMissing::Create,
                wire::Commit::Apply,
            ),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["team"]["slug"], "t");
    // Update dry run changes nothing.
    let r = t
        .send(
            Method::PUT,
            &item,
            &wire::update_body(
                Kind::named("Team"),
                &json!({"name": "New"}),
                wire::IfMissing::Fail,
                wire::Commit::DryRun,
            ),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        t.read(Kind::named("Team"), Some("t")).await.body["team"]["name"],
        "T"
    );
}

#[tokio::test]
async fn force_delete_cascades_from_buckets() {
    let t = Tenant::full().await;
    t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    t.create(Kind::named("Bucket"), json!({"slug": "b", "name": "B"}))
        .await;
    t.create(
        Kind::named("Bucket"),
        json!({"slug": "keep", "name": "Keep"}),
    )
    .await;
    t.create(
        Kind::named("Monitor"),
        json!({"slug": "m", "name": "M", "bucket_slug": "b"}),
    )
    .await;
    t.create(
        Kind::named("ClassicDashboard"),
        json!({"slug": "c", "name": "C", "bucket_slug": "b", "dashboard_json": "{}"}),
    )
    .await;
    t.create(
        Kind::named("NotificationPolicy"),
        json!({"slug": "n", "name": "N", "bucket_slug": "b"}),
    )
    .await;
    t.create(
        Kind::named("Monitor"),
        json!({"slug": "other", "name": "O", "bucket_slug": "keep"}),
    )
    .await;
    let r = t.delete(Kind::named("Bucket"), Some("b"), "").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "Bucket \"b\" is in use: referenced by ClassicDashboard/c, Monitor/m, NotificationPolicy/n"
    );
    let r = t
        .delete(Kind::named("Bucket"), Some("b"), "force_delete=true")
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.body,
        json!({"changes": [
            {"slug": "b", "action": "DELETED"},
            {"resource": "GRAFANA_DASHBOARD", "slug": "c", "action": "DELETED"},
            {"resource": "MONITOR", "slug": "m", "action": "DELETED"},
            {"resource": "NOTIFICATION_POLICY", "slug": "n", "action": "DELETED"}
        ]})
    );
    for (kind, slug) in [
        (Kind::named("Bucket"), "b"),
        (Kind::named("Monitor"), "m"),
        (Kind::named("ClassicDashboard"), "c"),
        (Kind::named("NotificationPolicy"), "n"),
    ] {
        assert_eq!(t.read(kind, Some(slug)).await.status, 404, "{kind}/{slug}");
    }
    for (kind, slug) in [
        (Kind::named("Bucket"), "keep"),
        (Kind::named("Monitor"), "other"),
        (Kind::named("Team"), "t"),
    ] {
        assert_eq!(t.read(kind, Some(slug)).await.status, 200, "{kind}/{slug}");
    }
    // force_delete means nothing to other kinds.
    t.create(
        Kind::named("Collection"),
        json!({"slug": "col", "name": "Col", "team_slug": "t"}),
    )
    .await;
    let r = t
        .delete(Kind::named("Team"), Some("t"), "force_delete=true")
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn a_restart_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        data: Some(dir.path().join("tenant.db")),
        ..Config::default()
    };
    let t = Tenant::start(config.clone()).await;
    let created = t
        .create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await
        .body;
    t.create(
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B", "team_slug": "t"}),
    )
    .await;
    t.emulator.stop().await;

    let again = Tenant::start(config).await;
    let read = again.read(Kind::named("Team"), Some("t")).await;
    assert_eq!(read.body, created, "same object, same timestamps");
    let r = again.delete(Kind::named("Team"), Some("t"), "").await;
    assert_eq!(r.status, 400, "references survive the restart too");
}

#[tokio::test]
async fn racing_creates_succeed_exactly_once_per_slug() {
    let t = std::sync::Arc::new(Tenant::full().await);
    let mut tasks = Vec::new();
    for worker in 0..8 {
        let t = std::sync::Arc::clone(&t);
        tasks.push(tokio::spawn(async move {
            let mut statuses = Vec::new();
            for i in 0..10 {
                let slug = format!("race-{i}");
                let r = t
                    .create(
                        Kind::named("Team"),
                        json!({"slug": slug, "name": format!("Worker {worker}")}),
                    )
                    .await;
                statuses.push((slug, r.status));
            }
            statuses
        }));
    }
    let mut by_slug: BTreeMap<String, Vec<u16>> = BTreeMap::new();
    for task in tasks {
        for (slug, status) in task.await.unwrap() {
            by_slug.entry(slug).or_default().push(status);
        }
    }
    assert_eq!(by_slug.len(), 10);
    for (slug, statuses) in by_slug {
        assert_eq!(
            statuses.iter().filter(|&&s| s == 200).count(),
            1,
            "{slug}: {statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|&&s| s == 409).count(),
            7,
            "{slug}: {statuses:?}"
        );
    }
    let (items, _) = t.list_all(Kind::named("Team"), &ListQuery::default()).await;
    assert_eq!(items.len(), 10);
}

#[tokio::test]
async fn injected_faults() {
    let t = Tenant::start(Config {
        faults: Faults::parse("429:1").unwrap(),
        ..Config::default()
    })
    .await;
    let r = t.list(Kind::named("Team"), "").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.headers.get("retry-after").unwrap(), "1");
    assert_eq!(r.message(), "rate limit exceeded (injected)");

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tenant.db");
    let t = Tenant::start(Config {
        data: Some(data.clone()),
        faults: Faults::parse("503:1").unwrap(),
        ..Config::default()
    })
    .await;
    let r = t
        .create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    assert_eq!(r.status, 503);
    assert_eq!(r.message(), "injected failure 503");
    let log = t.emulator.stats().log;
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!((log[0].method.as_str(), log[0].status), ("POST", 503));
    t.emulator.stop().await;
    // Injected before the operation: the store holds nothing (read back without faults).
    let clean = Tenant::start(Config {
        data: Some(data),
        ..Config::default()
    })
    .await;
    let list = clean.list(Kind::named("Team"), "").await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    assert_eq!(list.body["teams"], json!([]), "{:?}", list.body);

    let t = Tenant::start(Config {
        faults: Faults::parse("reset:1").unwrap(),
        ..Config::default()
    })
    .await;
    let resp = reqwest::Client::new()
        .get(format!(
            "{}{}",
            t.emulator.url(),
            wire::collection_path(Kind::named("Team"))
        ))
        .send()
        .await;
    let failed = match resp {
        Err(_) => true,
        Ok(r) => r.bytes().await.is_err(),
    };
    assert!(failed, "a reset must cut the exchange");
    assert_eq!(t.emulator.stats().log[0].status, 0);
}

/// `seed:N` in `--faults`: the same requests in the same order meet the same faults, the ones
/// the seeded generator draws.
#[tokio::test]
async fn seeded_faults_are_reproducible() {
    let spec = "500:0.3,reset:0.2,seed:7";
    let faults = Faults::parse(spec).unwrap();
    let mut rng = faults.rng();
    let expected: Vec<u16> = (0..24)
        .map(|_| match faults.draw(&mut rng) {
            None => 200,
            Some(cfgctl::emulator::faults::Fault::Status(s)) => s,
            Some(_) => 0,
        })
        .collect();
    // The seed gives a mix, so the comparison below says something.
    for status in [200, 500, 0] {
        assert!(expected.contains(&status), "{expected:?}");
    }
    for _ in 0..2 {
        let t = Tenant::start(Config {
            faults: Faults::parse(spec).unwrap(),
            ..Config::default()
        })
        .await;
        let http = reqwest::Client::new();
        let url = format!(
            "{}{}",
            t.emulator.url(),
            wire::collection_path(Kind::named("Team"))
        );
        // One request at a time: the draws follow the requests' order.
        for _ in 0..expected.len() {
            if let Ok(r) = http.get(&url).send().await {
                let _ = r.bytes().await;
            }
        }
        let got: Vec<u16> = t.emulator.stats().log.iter().map(|l| l.status).collect();
        assert_eq!(got, expected);
    }
}

#[tokio::test]
async fn request_counters_by_route() {
    let t = Tenant::full().await;
    t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    t.read(Kind::named("Team"), Some("t")).await;
    t.read(Kind::named("Team"), Some("u")).await;
    t.list(Kind::named("Team"), "slugs=t").await;
    let stats = t.emulator.stats();
    assert_eq!(stats.count("POST", "/api/v1/config/teams"), 1);
    assert_eq!(stats.count("GET", "/api/v1/config/teams/{slug}"), 2);
    assert_eq!(stats.count("GET", "/api/v1/config/teams"), 1);
    assert_eq!(stats.total, 4);
    assert_eq!(stats.log[3].query, "slugs=t");
    // The same counters over HTTP.
    let over_http = t.request(Method::GET, STATS_PATH, None).await;
    assert_eq!(over_http.body["total"], 4);
    assert_eq!(
        over_http.body["by_route"]["GET /api/v1/config/teams/{slug}"],
        2
    );
}

#[test]
fn serve_help_documents_every_flag() {
    let run = Cfgctl::bare().args(&["serve", "--help"]).run_blocking();
    assert_eq!(run.code, 0);
    for flag in [
        "--listen",
        "--data",
        "--token",
        "--profile",
        "--page-size",
        "--faults",
        "--server-defaults",
        "--swagger",
    ] {
        assert!(
            run.stdout.contains(flag),
            "{flag} missing from serve --help"
        );
    }
    let run = Cfgctl::bare()
        .args(&["serve", "--faults", "404:0.5"])
        .run_blocking();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("the status must be 429 or a 5xx status"),
        "{}",
        run.stderr
    );
}

/// Issue 9.8: numbers are checked against their swagger format, by the emulator too.
#[tokio::test]
async fn numbers_outside_their_format_are_refused() {
    let t = Tenant::full().await;
    t.create(Kind::named("Bucket"), json!({"slug": "b", "name": "B"}))
        .await;
    let monitor = |interval: Value| json!({"name": "M", "bucket_slug": "b", "prometheus_query": "up", "interval_secs": interval});
    let over = t
        .create(Kind::named("Monitor"), monitor(json!(2_147_483_648_u64)))
        .await;
    assert_eq!(over.status, 400, "{}", over.message());
    assert!(
        over.message().contains(
            "`interval_secs`: 2147483648 is out of range for an int32 (at most 2147483647)"
        ),
        "{}",
        over.message()
    );
    let float = t.create(Kind::named("Monitor"), monitor(json!(1e38))).await;
    assert_eq!(float.status, 400, "{}", float.message());
    let max = t
        .create(Kind::named("Monitor"), monitor(json!(2_147_483_647)))
        .await;
    assert_eq!(max.status, 200, "{}", max.message());
}
