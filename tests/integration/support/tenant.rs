//! The emulator as a test tenant: `Tenant` (an in-process `cfgctl serve` on 127.0.0.1:0 and an
//! HTTP client for it), the valid fixture as objects, and a tenant seeded with them.

use crate::support::wire::{self, ListQuery};
use cfgctl::api::registry::Kind;
use cfgctl::emulator::{Config, Emulator};
use cfgctl::remote::client::{Client, ClientConfig};
use reqwest::Method;
use serde_json::Value;

use super::root;

/// A running emulator and a client for it.
pub struct Tenant {
    pub emulator: Emulator,
    http: reqwest::Client,
    token: Option<String>,
}

/// One response: status and JSON body (Null when the body is not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Reply {
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }
}

impl Tenant {
    pub async fn start(config: Config) -> Tenant {
        let emulator = Emulator::start(&config, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("emulator starts");
        Tenant {
            emulator,
            http: reqwest::Client::new(),
            token: config.token.clone(),
        }
    }

    pub async fn full() -> Tenant {
        Tenant::start(Config::default()).await
    }

    /// The library's API client for this tenant (no token, default retries).
    pub fn client(&self) -> Client {
        Client::new(&ClientConfig::new(self.emulator.url())).expect("a client for 127.0.0.1")
    }

    pub async fn request(&self, method: Method, path: &str, body: Option<Vec<u8>>) -> Reply {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.emulator.url()));
        if let Some(t) = &self.token {
            req = req.header(wire::TOKEN_HEADER, t);
        }
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        let resp = req.send().await.expect("request is answered");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body is read");
        Reply {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            headers,
        }
    }

    pub async fn send(&self, method: Method, path: &str, body: &Value) -> Reply {
        self.request(method, path, Some(body.to_string().into_bytes()))
            .await
    }

    pub async fn create(&self, kind: Kind, object: Value) -> Reply {
        self.send(
            Method::POST,
            &wire::collection_path(kind),
            &wire::create_body(kind, &object, wire::Commit::Apply),
        )
        .await
    }

    pub async fn update(&self, kind: Kind, slug: Option<&str>, object: Value) -> Reply {
        self.send(
            Method::PUT,
            &wire::item_path(kind, slug),
            &wire::update_body(kind, &object, wire::IfMissing::Fail, wire::Commit::Apply),
        )
        .await
    }

    pub async fn read(&self, kind: Kind, slug: Option<&str>) -> Reply {
        self.request(Method::GET, &wire::item_path(kind, slug), None)
            .await
    }

    pub async fn delete(&self, kind: Kind, slug: Option<&str>, query: &str) -> Reply {
        let q = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        self.request(
            Method::DELETE,
            &format!("{}{q}", wire::item_path(kind, slug)),
            None,
        )
        .await
    }

    pub async fn list(&self, kind: Kind, query: &str) -> Reply {
        self.request(
            Method::GET,
            &format!("{}?{query}", wire::collection_path(kind)),
            None,
        )
        .await
    }

    /// Every item of a list, following pages; the number of pages.
    pub async fn list_all(&self, kind: Kind, query: &ListQuery) -> (Vec<Value>, usize) {
        let mut q = query.clone();
        let mut items = Vec::new();
        let mut pages = 0;
        loop {
            let reply = self.list(kind, &q.to_query_string()).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let (page, next) = wire::parse_list_response(kind, &reply.body).unwrap();
            items.extend(page);
            pages += 1;
            if next.is_empty() {
                return (items, pages);
            }
            q.token = Some(next);
        }
    }
}

/// The valid fixture's manifests, in an order where references come first.
pub fn fixture_objects() -> Vec<(Kind, Option<String>, Value)> {
    let loaded = cfgctl::manifest::load_dir(&root().join("fixtures/valid")).unwrap();
    let order = [
        Kind::named("ExternalConnection"),
        Kind::named("Team"),
        Kind::named("NotificationPolicy"),
        Kind::named("Bucket"),
        Kind::named("Collection"),
        Kind::named("Dataset"),
        Kind::named("DerivedLabel"),
        Kind::named("DerivedMetric"),
        Kind::named("DropRule"),
        Kind::named("ConsumptionBudget"),
        Kind::named("ResourcePools"),
        Kind::named("Monitor"),
        Kind::named("ClassicDashboard"),
        Kind::named("Dashboard"),
    ];
    let mut out: Vec<_> = loaded
        .manifests
        .into_iter()
        .map(|m| (m.kind, m.slug, Value::clone(&m.spec)))
        .collect();
    out.sort_by_key(|(k, s, _)| (order.iter().position(|o| o == k), s.clone()));
    out
}

/// A tenant holding the valid fixture (every kind), created through the API.
pub async fn seeded(config: Config) -> Tenant {
    let t = Tenant::start(config).await;
    for (kind, slug, object) in fixture_objects() {
        let r = t.create(kind, object).await;
        assert_eq!(r.status, 200, "seeding {kind}/{slug:?}: {r:?}");
    }
    t
}
