use super::body::{Unread, WriteBody};
use super::*;
use crate::api::wire::ListQuery;

#[test]
fn base_urls() {
    assert!(parse_base_url("https://tenant.example.com", false).is_ok());
    assert!(parse_base_url("http://127.0.0.1:8080", false).is_ok());
    assert!(parse_base_url("http://localhost:1", false).is_ok());
    assert!(parse_base_url("http://[::1]:8080", false).is_ok());
    assert!(matches!(
        parse_base_url("http://tenant.example.com", false),
        Err(ClientError::InsecureHttp { .. })
    ));
    assert!(parse_base_url("http://tenant.example.com", true).is_ok());
    assert!(parse_base_url("ftp://x", false).is_err());
    assert!(parse_base_url("https://user:pw@x.example.com", false).is_err());
    assert!(parse_base_url("not a url", false).is_err());
}

#[test]
fn a_url_without_a_scheme_is_told_what_it_lacks() {
    for (raw, meant) in [
        ("tenant.example.com", "https://tenant.example.com"),
        (
            " tenant.example.com/prefix/ ",
            "https://tenant.example.com/prefix",
        ),
        ("localhost:8080", "http://localhost:8080"),
        ("127.0.0.1:4000", "http://127.0.0.1:4000"),
        (
            "user:s3cr3t-in-url@x.example.com",
            "https://[REDACTED]@x.example.com",
        ),
    ] {
        let err = parse_base_url(raw, false).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("the target URL has no scheme: did you mean {meant}?")
        );
    }
    assert!(parse_base_url("https://localhost:8080", false).is_ok());
}

#[test]
fn url_errors_never_show_credentials_or_query() {
    for raw in [
        "https://user:s3cr3t-in-url@x.example.com",
        "https://x.example.com/?token=s3cr3t-in-url",
        "https://s3cr3t-in-url@x.example.com",
    ] {
        let err = parse_base_url(raw, false).unwrap_err().to_string();
        assert!(!err.contains("s3cr3t-in-url"), "{err}");
        assert!(err.contains("x.example.com"), "{err}");
    }
}

#[test]
fn urls_are_exact() {
    let base = parse_base_url("https://t.example.com/", false).unwrap();
    let mut q = ListQuery::default();
    q.filters
        .insert("include_dashboard_json".into(), vec!["true".into()]);
    q.token = Some("abc".into());
    assert_eq!(
        request_url(
            &base,
            &wire::collection_path(Kind::named("Dashboard")),
            &q.to_query_string()
        )
        .as_str(),
        "https://t.example.com/api/v1/config/dashboards?page.token=abc&include_dashboard_json=true"
    );
    assert_eq!(
        request_url(
            &base,
            &wire::item_path(Kind::named("Bucket"), Some("a/b")),
            ""
        )
        .as_str(),
        "https://t.example.com/api/v1/config/buckets/a%2Fb"
    );
}

#[test]
fn a_request_url_is_the_same_parsed_or_built() {
    let mut q = ListQuery::default();
    q.filters
        .insert("include_dashboard_json".into(), vec!["true".into()]);
    q.filters
        .insert("slugs".into(), vec!["a b".into(), "c&d".into(), "é".into()]);
    q.token = Some("abc/=+".into());
    for base in [
        "https://t.example.com/",
        "https://t.example.com",
        "https://t.example.com/prefix/",
        "https://t.example.com:8443/a/b",
        "http://127.0.0.1:4000",
        "http://[::1]:4000/",
    ] {
        let base = parse_base_url(base, false).unwrap();
        for path in [
            wire::collection_path(Kind::named("Dashboard")),
            wire::item_path(Kind::named("Bucket"), Some("a/b")),
            wire::item_path(Kind::named("Bucket"), Some("x%y é")),
            wire::item_path(Kind::named("ResourcePools"), None),
            "/api/v1/config/swagger.json".to_string(),
        ] {
            for query in [String::new(), q.to_query_string(), "a=1&a=2".into()] {
                // The base, the path and the query joined as text, then parsed.
                let joined = base.as_str().trim_end_matches('/');
                let text = if query.is_empty() {
                    format!("{joined}{path}")
                } else {
                    format!("{joined}{path}?{query}")
                };
                assert_eq!(
                    request_url(&base, &path, &query),
                    reqwest::Url::parse(&text).unwrap(),
                    "{text}"
                );
            }
        }
    }
}

#[test]
fn retry_delays() {
    let d = Duration::from_millis(800);
    assert_eq!(retry_delay(d, None, 0.0, MAX_RETRY_AFTER), Duration::ZERO);
    assert_eq!(
        retry_delay(d, None, 0.5, MAX_RETRY_AFTER),
        Duration::from_millis(400)
    );
    assert_eq!(
        retry_delay(d, Some(Duration::from_secs(3)), 0.5, MAX_RETRY_AFTER),
        Duration::from_secs(3)
    );
    // A server asking for 31 years gets the cap.
    assert_eq!(
        retry_delay(
            d,
            Some(Duration::from_secs(999_999_999)),
            0.5,
            MAX_RETRY_AFTER
        ),
        Duration::from_secs(60)
    );
}

#[tokio::test]
async fn dot_slugs_never_become_a_path() {
    // Port 9 on loopback: nothing is sent, so nothing needs to listen.
    let client = Client::new(&ClientConfig::new("http://127.0.0.1:9")).unwrap();
    for slug in [".", "..", ""] {
        let err = client
            .delete(Kind::named("Team"), Some(slug), wire::Cascade::No)
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::UnusableSlug { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!("DELETE Team: the slug \"{slug}\" cannot be used as a URL path segment (a slug must not be empty, `.` or `..`); no request was sent")
        );
        let err = client
            .read(Kind::named("Bucket"), Some(slug))
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::UnusableSlug { .. }), "{err}");
        let err = client
            .update(
                Kind::named("Bucket"),
                Some(slug),
                &serde_json::json!({}),
                wire::IfMissing::Create,
                wire::Commit::Apply,
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::UnusableSlug { .. }), "{err}");
    }
}

#[test]
fn debug_redacts_the_token() {
    let mut c = ClientConfig::new("https://x.example.com");
    c.token = Some("very-secret".into());
    assert!(!format!("{c:?}").contains("very-secret"));
}

#[test]
fn errors_name_the_resource_and_status() {
    let e = ClientError::Status {
        method: Method::POST,
        path: "/api/v1/config/buckets".into(),
        resource: Some(Address::new(Kind::named("Bucket"), Some("b".into()))),
        status: 409,
        reply: Box::new(ServerReply {
            message: "Bucket \"b\" already exists".into(),
            ..ServerReply::default()
        }),
        retry_after: None,
        credentials: None,
    };
    assert_eq!(
        e.to_string(),
        "POST /api/v1/config/buckets (Bucket/b): 409 Bucket \"b\" already exists"
    );
    let traced = ClientError::Status {
        method: Method::PUT,
        path: "/api/v1/config/teams/t".into(),
        resource: None,
        status: 400,
        reply: Box::new(ServerReply {
            message: "invalid team".into(),
            code: Some(3),
            request_id: Some("req-1".into()),
        }),
        retry_after: None,
        credentials: None,
    };
    assert_eq!(
        traced.to_string(),
        "PUT /api/v1/config/teams/t: 400 invalid team (code 3, request id req-1)"
    );
    assert_eq!(traced.code(), Some(3));
    assert_eq!(traced.request_id(), Some("req-1"));
}

#[test]
fn request_ids_from_either_header() {
    use reqwest::header::{HeaderMap, HeaderValue};
    let mut h = HeaderMap::new();
    assert_eq!(request_id(&h), None);
    h.insert("chrono-request-id", HeaderValue::from_static("vendor-7"));
    assert_eq!(request_id(&h).as_deref(), Some("vendor-7"));
    h.insert("x-request-id", HeaderValue::from_static("x-1"));
    assert_eq!(request_id(&h).as_deref(), Some("x-1"), "X-Request-Id first");
    h.insert("x-request-id", HeaderValue::from_static("two words"));
    assert_eq!(
        request_id(&h).as_deref(),
        Some("vendor-7"),
        "an id that is not one printable token is not shown"
    );
}

#[test]
fn write_bodies_are_the_bytes_of_the_wire_builders() {
    use wire::{Commit, IfMissing};
    let object = serde_json::json!({
        "slug": "d-1", "name": "Ünïcode \"quoted\"", "labels": {"z": "1", "a": "2"},
        "dashboard_json": "{\"panels\":[1,2]}", "n": 1.5, "list": [true, null]
    });
    for def in crate::api::registry::kinds().into_iter() {
        for commit in [Commit::Apply, Commit::DryRun] {
            assert_eq!(
                serde_json::to_vec(&WriteBody::create(def.kind, &object, commit)).unwrap(),
                serde_json::to_vec(&wire::create_body(def.kind, &object, commit)).unwrap(),
                "create {} {commit:?}",
                def.kind
            );
            for if_missing in [IfMissing::Fail, IfMissing::Create] {
                assert_eq!(
                    serde_json::to_vec(&WriteBody::update(def.kind, &object, if_missing, commit))
                        .unwrap(),
                    serde_json::to_vec(&wire::update_body(def.kind, &object, if_missing, commit))
                        .unwrap(),
                    "update {} {if_missing:?} {commit:?}",
                    def.kind
                );
            }
        }
    }
}

#[test]
fn an_unread_answer_is_checked_like_a_parsed_one() {
    for text in [
        "{}",
        r#"{"bucket":{"slug":"b","n":[1,2,{"x":null}]}}"#,
        "[1,2]",
        "  7 ",
        "{\"a\":",
        "{} trailing",
        "not json",
        "{\"big\":1e400}",
        "{\"s\":\"\\ud800\"}",
    ] {
        let parsed = <Value as Answer>::from_body(bytes::Bytes::from(text)).is_ok();
        let unread = <Unread as Answer>::from_body(bytes::Bytes::from(text)).is_ok();
        assert_eq!(parsed, unread, "{text}");
    }
}

#[test]
fn a_page_end_is_read_from_its_chunks_as_from_the_joined_page() {
    use super::body::{Answer, Chunks};
    let text = br#"{"monitors":[{"slug":"a"},{"slug":"b"}],"page":{"next_token":"t\u0001"}}"#;
    // Every way of cutting the text into three chunks (empty ones included).
    for i in 0..=text.len() {
        for j in i..=text.len() {
            let parts = vec![
                bytes::Bytes::copy_from_slice(&text[..i]),
                bytes::Bytes::copy_from_slice(&text[i..j]),
                bytes::Bytes::copy_from_slice(&text[j..]),
            ];
            let chunks = Chunks::from_chunks(parts).unwrap();
            for n in [0, 1, 5, 20, text.len(), text.len() + 7] {
                let want = &text[text.len().saturating_sub(n)..];
                assert_eq!(&*chunks.tail(n), want, "cut at {i}/{j}, tail {n}");
            }
            assert_eq!(
                crate::api::wire::trailing_next_token(&chunks.tail(8192)).as_deref(),
                Some("t\u{1}")
            );
            assert_eq!(&chunks.join()[..], &text[..]);
        }
    }
    assert!(Chunks::empty().join().is_empty());
    assert!(Chunks::empty().tail(10).is_empty());
}

/// A target that has never answered and refuses the connection is not retried: the URL is
/// most likely wrong, and the user hears so at once (were the refusal retried, the hour-long
/// backoff below would hold the test).
#[tokio::test]
async fn a_refused_first_connection_fails_at_once_naming_the_url() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let client = Client::new(&ClientConfig {
        min_backoff: Duration::from_secs(3600),
        max_retries: 3,
        ..ClientConfig::new(url.clone())
    })
    .unwrap();
    let err = client.swagger().await.unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "cannot connect to {url}: nothing answers there; is the tenant's URL right (--url)?"
        )),
        "{err}"
    );
}

#[test]
fn a_base_url_holding_the_api_path_names_the_base_to_give() {
    for (raw, base) in [
        ("http://127.0.0.1:8080/api/v1", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:8080/api/v1/", "http://127.0.0.1:8080"),
        (
            "https://x.example.com/proxy/api/v1/config",
            "https://x.example.com/proxy",
        ),
    ] {
        match parse_base_url(raw, false) {
            Err(ClientError::ApiPath { base: b }) => assert_eq!(b, base, "{raw}"),
            other => panic!("{raw}: {other:?}"),
        }
    }
    // A prefix that only looks like it is a prefix.
    assert!(parse_base_url("https://x.example.com/api/v10", false).is_ok());
    assert!(parse_base_url("https://x.example.com/apis/v1", false).is_ok());
}
