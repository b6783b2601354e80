//! The emulator against requests a careless or hostile client sends: page tokens of another
//! kind, `.`/`..` slugs, idle connections, the counters without the token.

use std::time::Duration;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::{Config, Emulator, STATS_PATH};
use reqwest::Method;
use serde_json::json;

use crate::emulator::Tenant;

#[tokio::test]
async fn a_page_token_of_one_kind_is_refused_by_another() {
    let t = Tenant::full().await;
    for slug in ["a", "b", "c"] {
        assert_eq!(
            t.create(Kind::named("Team"), json!({"slug": slug, "name": slug}))
                .await
                .status,
            200
        );
    }
    let first = t.list(Kind::named("Team"), "page.max_size=1").await;
    let token = first.body["page"]["next_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!token.is_empty());
    // The same filters, the same page size: only the kind differs.
    let other = t
        .list(
            Kind::named("Dataset"),
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
        .list(
            Kind::named("Team"),
            &format!("page.max_size=1&page.token={token}"),
        )
        .await;
    assert_eq!(same.status, 200);
    assert_eq!(same.body["teams"][0]["slug"], "b");
}

#[tokio::test]
async fn dot_slugs_are_refused() {
    let t = Tenant::full().await;
    for slug in [".", ".."] {
        let r = t
            .create(Kind::named("Team"), json!({"slug": slug, "name": "Dots"}))
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
    let list = t.list(Kind::named("Team"), "").await;
    assert_eq!(list.body["teams"], json!([]), "{:?}", list.body);
}

// On tokio's paused clock (the emulator's idle timers run on it): time moves only when every
// task waits, so the connections close at exactly the idle timeout, on any machine.
#[tokio::test(start_paused = true)]
async fn idle_connections_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let idle = Duration::from_secs(7);
    let emulator =
        Emulator::start_with_idle_timeout(&Config::default(), "127.0.0.1:0".parse().unwrap(), idle)
            .await
            .unwrap();
    let addr = emulator.addr();
    // Silent from the start, and stalled in the middle of a request line.
    for sent in [&b""[..], b"GET /api/v1/config/te"] {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let since = tokio::time::Instant::now();
        s.write_all(sent).await.unwrap();
        let mut buf = [0u8; 64];
        let outcome = match s.read(&mut buf).await {
            Ok(0) => "closed".to_string(),
            Ok(n) => format!("answered {n} bytes"),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => "closed".into(),
            Err(e) => format!("still open: {e}"),
        };
        assert_eq!(outcome, "closed", "{sent:?}");
        // The idle timeout closed it, not another of the server's timers.
        assert_eq!(since.elapsed(), idle, "{sent:?}");
    }
    // A request still works on a fresh connection.
    let r = reqwest::get(format!("{}/api/v1/config/teams", emulator.url()))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

// `--rate-limit N` on the tenant's clock (tokio's, paused here): a burst of N, then 429 with
// `Retry-After` until a token is back, whatever the machine's speed.
#[tokio::test(start_paused = true)]
async fn the_rate_limit_is_a_burst_then_n_a_second() {
    let t = Tenant::start(Config {
        rate_limit: Some(4),
        ..Config::default()
    })
    .await;
    let statuses = |replies: &[crate::emulator::Reply]| -> Vec<u16> {
        replies.iter().map(|r| r.status).collect()
    };
    let mut burst = Vec::new();
    for _ in 0..5 {
        burst.push(t.list(Kind::named("Team"), "").await);
    }
    assert_eq!(statuses(&burst), [200, 200, 200, 200, 429]);
    let refused = &burst[4];
    assert_eq!(refused.headers.get("retry-after").unwrap(), "1");
    assert_eq!(
        refused.message(),
        "rate limit exceeded: too many requests for this tenant"
    );
    // A quarter second brings one token back (a refused request took none), and only one.
    tokio::time::advance(Duration::from_millis(250)).await;
    let mut later = Vec::new();
    for _ in 0..2 {
        later.push(t.list(Kind::named("Team"), "").await);
    }
    assert_eq!(statuses(&later), [200, 429]);
    // A long silence refills the bucket to its burst, no more (ten seconds: shorter than the
    // idle timeout, so the client's kept connection is still open).
    tokio::time::advance(Duration::from_secs(10)).await;
    let mut refilled = Vec::new();
    for _ in 0..5 {
        refilled.push(t.list(Kind::named("Team"), "").await);
    }
    assert_eq!(statuses(&refilled), [200, 200, 200, 200, 429]);
    // Throttled requests are logged and counted.
    let log = t.emulator.stats().log;
    assert_eq!(log.iter().filter(|l| l.status == 429).count(), 3);
    assert_eq!(log.len(), 12);
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
