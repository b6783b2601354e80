//! Emulator throughput: creates per second and list pages per second, against a real
//! `cfgctl serve` process on 127.0.0.1.
//!
//! Run with `cargo bench --bench emulator` (optionally `-- --resources 10000 --concurrency 16`).
//! Prints a Markdown table for docs/performance.md. Not a test: nothing is asserted.

// A benchmark prints its table for docs/performance.md: not cfgctl's output.
#![allow(clippy::disallowed_macros)]

mod common;

use std::time::{Duration, Instant};

use cfgctl::api::registry::Kind;
use common::wire::{self, ListQuery};

async fn creates(url: &str, n: usize, concurrency: usize) -> Duration {
    let started = Instant::now();
    common::create_teams(url, n, concurrency).await;
    started.elapsed()
}

async fn list_walks(url: &str, walks: usize) -> (usize, Duration) {
    let client = reqwest::Client::new();
    let mut pages = 0;
    let started = Instant::now();
    for _ in 0..walks {
        let mut q = ListQuery::default();
        loop {
            let resp = client
                .get(format!(
                    "{url}{}?{}",
                    wire::collection_path(Kind::named("Team")),
                    q.to_query_string()
                ))
                .send()
                .await
                .expect("answered");
            let body: serde_json::Value = resp.json().await.expect("json");
            pages += 1;
            let (_, next) = wire::parse_list_response(Kind::named("Team"), &body).expect("list");
            if next.is_empty() {
                break;
            }
            q.token = Some(next);
        }
    }
    (pages, started.elapsed())
}

fn main() {
    let n = common::arg("--resources", 10_000);
    let concurrency = common::arg("--concurrency", 16);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("cfgctl-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let db = dir.join("bench.db");
    let db_arg = db.to_string_lossy().into_owned();
    println!("| store | resources | concurrency | creates/s | list pages/s (100 items) |");
    println!("|---|---|---|---|---|");
    for (label, extra) in [
        ("memory", vec![]),
        ("SQLite file (WAL)", vec!["--data", db_arg.as_str()]),
    ] {
        let server = common::serve(&extra);
        let created = runtime.block_on(creates(&server.url, n, concurrency));
        let (pages, listed) = runtime.block_on(list_walks(&server.url, 5));
        println!(
            "| {label} | {n} | {concurrency} | {:.0} | {:.0} |",
            n as f64 / created.as_secs_f64(),
            pages as f64 / listed.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
