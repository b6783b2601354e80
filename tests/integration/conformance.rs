//! What the API fuzzer (schemathesis, docs/conformance.md) found the emulator accepting or
//! answering wrongly, each now refused or answered as the API description says.

use cfgctl::api::registry::Kind;
use cfgctl::api::wire;
use reqwest::Method;
use serde_json::json;

use crate::support::Tenant;

#[tokio::test]
async fn an_empty_name_is_a_missing_one() {
    let t = Tenant::full().await;
    let r = t
        .send(
            Method::POST,
            &wire::collection_path(Kind::named("Team")),
            &json!({"team": {"slug": "", "name": ""}}),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(r.message(), "invalid team: `name` is required");
    assert_eq!(r.body["code"], 3);
    // Nothing was stored under a generated slug.
    let list = t.list(Kind::named("Team"), "").await;
    assert_eq!(list.body["teams"], json!([]), "{list:?}");
    // An update cannot blank it either.
    assert_eq!(
        t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
            .await
            .status,
        200
    );
    let blank = t
        .update(Kind::named("Team"), Some("t"), json!({"name": ""}))
        .await;
    assert_eq!(blank.status, 400, "{blank:?}");
    assert_eq!(
        t.read(Kind::named("Team"), Some("t")).await.body["team"]["name"],
        "T"
    );
}

#[tokio::test]
async fn query_parameters_are_validated_like_bodies() {
    let t = Tenant::full().await;
    for (kind, query, message) in [
        (
            Kind::named("Team"),
            "page.max_size=9223372036854775808",
            "query parameter page.max_size: \"9223372036854775808\" is not a valid int64",
        ),
        (
            Kind::named("Dataset"),
            "type=null",
            "query parameter type: \"null\" is not one of TRACES, LOGS",
        ),
        (
            Kind::named("Dashboard"),
            "include_dashboard_json=maybe",
            "query parameter include_dashboard_json: \"maybe\" is not a valid boolean",
        ),
        (
            Kind::named("ConsumptionBudget"),
            "resources=LOGS",
            "query parameter resources: \"LOGS\" is not one of LOG_PERSISTED_BYTES",
        ),
    ] {
        let r = t.list(kind, query).await;
        assert_eq!(r.status, 400, "{kind} {query}: {r:?}");
        assert!(r.message().starts_with(message), "{query}: {}", r.message());
    }
    // The largest int64 and a known enum value are fine.
    assert_eq!(
        t.list(Kind::named("Team"), "page.max_size=9223372036854775807")
            .await
            .status,
        200
    );
    assert_eq!(
        t.list(Kind::named("Dataset"), "type=LOGS").await.status,
        200
    );
    // Deletes too: a parameter the operation does not have is refused, not ignored.
    t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    let r = t
        .delete(Kind::named("Team"), Some("t"), "force_delete=true")
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(
        r.message(),
        "unknown query parameter \"force_delete\" for DeleteTeam"
    );
    assert_eq!(t.read(Kind::named("Team"), Some("t")).await.status, 200);
}

#[tokio::test]
async fn dry_run_null_is_unset_as_in_proto3() {
    let t = Tenant::full().await;
    let r = t
        .send(
            Method::POST,
            &wire::collection_path(Kind::named("Team")),
            &json!({"team": {"slug": "t", "name": "T"}, "dry_run": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(t.read(Kind::named("Team"), Some("t")).await.status, 200);
}

#[tokio::test]
async fn a_method_the_path_lacks_is_405_with_allow() {
    let t = Tenant::full().await;
    let item = t
        .request(
            Method::from_bytes(b"TRACE").unwrap(),
            &wire::item_path(Kind::named("Bucket"), Some("b")),
            None,
        )
        .await;
    assert_eq!(item.status, 405);
    assert_eq!(item.headers["allow"], "GET, PUT, DELETE");
    let collection = t
        .request(
            Method::PATCH,
            &wire::collection_path(Kind::named("Bucket")),
            None,
        )
        .await;
    assert_eq!(collection.status, 405);
    assert_eq!(collection.headers["allow"], "GET, POST");
    let singleton = t
        .request(
            Method::PATCH,
            &wire::collection_path(Kind::named("ResourcePools")),
            None,
        )
        .await;
    assert_eq!(singleton.headers["allow"], "GET, POST, PUT, DELETE");
    // Every response, errors included, carries a request id.
    assert_eq!(item.headers["x-request-id"].len(), 16);
}
