//! The emulator against requests a careless or hostile client sends: page tokens of another
//! kind, `.`/`..` slugs, idle connections, the counters without the token.

use std::io::{Read, Write};
use std::time::Duration;

use cfgctl::emulator::{Config, Emulator, STATS_PATH};
use cfgctl::registry::Kind;
use reqwest::Method;
use serde_json::json;

use crate::emulator::Tenant;

#[tokio::test]
async fn a_page_token_of_one_kind_is_refused_by_another() {
    let t = Tenant::full().await;
    for slug in ["a", "b", "c"] {
        assert_eq!(
            t.create(Kind::Team, json!({"slug": slug, "name": slug}))
                .await
                .status,
            200
        );
    }
    let first = t.list(Kind::Team, "page.max_size=1").await;
    let token = first.body["page"]["next_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!token.is_empty());
    // The same filters, the same page size: only the kind differs.
    let other = t
        .list(
            Kind::Dataset,
            &format!("page.max_size=1&page.token={token}"),
        )
        .await;
    assert_eq!(other.status, 400, "{:?}", other.body);
    assert!(
        other.message().contains("another list"),
        "{}",
        other.message()
    );
    let same = t
        .list(Kind::Team, &format!("page.max_size=1&page.token={token}"))
        .await;
    assert_eq!(same.status, 200);
    assert_eq!(same.body["teams"][0]["slug"], "b");
}

#[tokio::test]
async fn dot_slugs_are_refused() {
    let t = Tenant::full().await;
    for slug in [".", ".."] {
        let r = t
            .create(Kind::Team, json!({"slug": slug, "name": "Dots"}))
            .await;
        assert_eq!(r.status, 400, "{slug}: {:?}", r.body);
        assert!(
            r.message().contains(&format!(
                "the slug \"{slug}\" cannot be used as a URL path segment"
            )),
            "{}",
            r.message()
        );
    }
    // Nothing was stored.
    let list = t.list(Kind::Team, "").await;
    assert_eq!(list.body["teams"], json!([]), "{:?}", list.body);
}

#[tokio::test]
async fn idle_connections_are_closed() {
    let emulator = Emulator::start_with_idle_timeout(
        &Config::default(),
        "127.0.0.1:0".parse().unwrap(),
        Duration::from_millis(100),
    )
    .await
    .unwrap();
    let addr = emulator.addr();
    let closed = tokio::task::spawn_blocking(move || {
        let mut outcomes = Vec::new();
        // Silent from the start, and stalled in the middle of a request line.
        for sent in [&b""[..], b"GET /api/v1/config/te"] {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            // A bound, not a measure: without the idle timeout this read never ends.
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            s.write_all(sent).unwrap();
            let mut buf = [0u8; 64];
            outcomes.push(match s.read(&mut buf) {
                Ok(0) => "closed".to_string(),
                Ok(n) => format!("answered {n} bytes"),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => "closed".into(),
                Err(e) => format!("still open: {e}"),
            });
        }
        outcomes
    })
    .await
    .unwrap();
    assert_eq!(closed, vec!["closed", "closed"]);
    // A request still works on a fresh connection.
    let r = reqwest::get(format!("{}/api/v1/config/teams", emulator.url()))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn the_counters_need_the_token() {
    let t = Tenant::start(Config {
        token: Some("emulator-token-1234".into()),
        ..Config::default()
    })
    .await;
    let url = format!("{}{STATS_PATH}", t.emulator.url());
    let http = reqwest::Client::new();
    for method in [Method::GET, Method::DELETE] {
        let anonymous = http.request(method.clone(), &url).send().await.unwrap();
        assert_eq!(anonymous.status(), 401, "{method}");
        let wrong = http
            .request(method.clone(), &url)
            .header("API-Token", "guess")
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401, "{method}");
    }
    let with_token = t.request(Method::GET, STATS_PATH, None).await;
    assert_eq!(with_token.status, 200);
    assert!(with_token.body["total"].is_number());
}
