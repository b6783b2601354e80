//! The emulator's request handling on arbitrary requests, in process (no socket): the input's
//! first line is `METHOD PATH[?QUERY]`, the rest the body. Routing goes through the same
//! registry and `wire` functions as the router (`kind_for_path`, `route_op`), then the API's
//! rules over an in-memory store: query parsing (`ListQuery`), body parsing
//! (`wire::parse_write_body`), validation, references, pagination.
//!
//! Checks: no panic, no hang; bad input is a 400/404/409 with a message, never a store
//! failure (500); a created object has a slug usable as a path segment; a list answer parses
//! back with `parse_list_response` (the tests' plain reader,
//! `tests/integration/support/wire.rs`).
//!
//! With `CFGCTL_FUZZ_WRITE_CORPUS=DIR`, it writes seed inputs instead (a create of every
//! manifest of fixtures/valid, and list/read/update/delete requests).

use cfgctl::emulator::api::{Api, ApiError};
use cfgctl::emulator::store::Store;
use cfgctl::api::registry::{Kind, Op};
use serde_json::Value;
use wire::{ListQuery, Write};

/// The wire format with the plain body builders and list reader the tests use.
#[path = "../../../tests/integration/support/wire.rs"]
mod wire;

fn run(api: &mut Api, method: &str, target: &str, body: &[u8]) -> Result<Value, ApiError> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let Some(rest) = path
        .strip_prefix(wire::API_PREFIX)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return Err(ApiError::NotFound("no route".into()));
    };
    let (collection, slug) = match rest.split_once('/') {
        Some((c, s)) => (c, Some(s)),
        None => (rest, None),
    };
    let kind = wire::kind_for_path(collection)
        .ok_or_else(|| ApiError::NotFound("no collection".into()))?;
    let op = wire::route_op(kind.def(), method, slug.is_some())
        .ok_or_else(|| ApiError::BadRequest("method not allowed".into()))?;
    let now = "2026-01-01T00:00:00Z";
    let json = || -> Result<Value, ApiError> {
        serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(e.to_string()))
    };
    match op {
        // A page is written, not built: read back as the client reads it.
        Op::List => api.list(kind, query).map(|page| {
            let text = serde_json::to_vec(&page).expect("a page serialises");
            serde_json::from_slice(&text).expect("a page is JSON")
        }),
        Op::Read => api.read(kind, slug),
        Op::Create => {
            let body = json()?;
            // The shared body reader must agree with the API on what it refuses.
            let parsed = wire::parse_write_body(kind, Write::Create, &body);
            let result = api.create(kind, &body, now);
            if parsed.is_err() {
                assert!(
                    result.is_err(),
                    "a body the wire reader refuses was accepted"
                );
            }
            result
        }
        Op::Update => api.update(kind, slug, &json()?, now),
        Op::Delete => {
            let q = ListQuery::parse(query).map_err(ApiError::BadRequest)?;
            api.delete(kind, slug, &q)
        }
    }
}

fn write_corpus(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("corpus directory");
    let loaded = cfgctl::manifest::load_dir(std::path::Path::new("../fixtures/valid"))
        .expect("run from fuzz/: ../fixtures/valid");
    let mut n = 0;
    let mut put = |text: String| {
        n += 1;
        std::fs::write(dir.join(format!("seed-{n:03}")), text).expect("write a seed");
    };
    for m in &loaded.manifests {
        let body = wire::create_body(m.kind, &m.spec, wire::Commit::Apply);
        let path = wire::collection_path(m.kind);
        put(format!("POST {path}\n{body}"));
        let item = wire::item_path(m.kind, m.slug.as_deref());
        let update = wire::update_body(m.kind, &m.spec, wire::IfMissing::Create, wire::Commit::Apply);
        put(format!("PUT {item}\n{update}"));
    }
    put(format!(
        "GET {}?page.max_size=1&slugs=a&slugs=b\n",
        wire::collection_path(Kind::named("Team"))
    ));
    put(format!(
        "GET {}?include_dashboard_json=true&page.token=00\n",
        wire::collection_path(Kind::named("Dashboard"))
    ));
    put(format!(
        "DELETE {}?force_delete=true\n",
        wire::item_path(Kind::named("Bucket"), Some("b"))
    ));
    put(format!(
        "GET {}\n",
        wire::item_path(Kind::named("ResourcePools"), None)
    ));
}

fn main() {
    if let Some(dir) = std::env::var_os("CFGCTL_FUZZ_WRITE_CORPUS") {
        write_corpus(std::path::Path::new(&dir));
        return;
    }
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let (line, body) = text.split_once('\n').unwrap_or((text, ""));
        let Some((method, target)) = line.split_once(' ') else {
            return;
        };
        let mut api = Api::new(
            Store::open(None).expect("in-memory store"),
            2,
            std::sync::Arc::clone(cfgctl::api::spec::Description::shared_embedded()),
            true,
        );
        // Twice: the second request meets what the first one stored (409s, updates, pages).
        for round in 0..2 {
            match run(&mut api, method, target, body.as_bytes()) {
                Ok(value) => {
                    if let Some(kind) = created_kind(method, target) {
                        if let Some(obj) = wire::parse_one_response(kind, &value) {
                            if let Some(slug) = obj.get("slug").and_then(Value::as_str) {
                                assert!(
                                    wire::is_usable_segment(slug),
                                    "round {round}: stored an unusable slug {slug:?}"
                                );
                            }
                        }
                    }
                    if method == "GET" && !target.split('?').next().unwrap_or("").ends_with(".json")
                    {
                        if let Some(kind) = listed_kind(target) {
                            wire::parse_list_response(kind, &value)
                                .expect("a list answer parses back");
                        }
                    }
                }
                Err(ApiError::Store(e)) => panic!("bad input reached the store as a failure: {e}"),
                Err(e) => {
                    assert!(
                        matches!(e.status(), 400 | 404 | 409),
                        "status {}",
                        e.status()
                    );
                    assert!(!e.client_message().is_empty(), "an error without a message");
                }
            }
        }
    });
}

fn collection_kind(target: &str) -> Option<(Kind, bool)> {
    let path = target.split('?').next()?;
    let rest = path.strip_prefix(wire::API_PREFIX)?.strip_prefix('/')?;
    let (collection, has_slug) = match rest.split_once('/') {
        Some((c, _)) => (c, true),
        None => (rest, false),
    };
    Some((wire::kind_for_path(collection)?, has_slug))
}

fn created_kind(method: &str, target: &str) -> Option<Kind> {
    let (kind, _) = collection_kind(target)?;
    matches!(method, "POST" | "PUT").then_some(kind)
}

fn listed_kind(target: &str) -> Option<Kind> {
    match collection_kind(target)? {
        (kind, false) if !kind.def().singleton => Some(kind),
        _ => None,
    }
}
