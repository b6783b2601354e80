//! The cost of a no-change plan on a large tenant, next to a refresh-based approach.
//!
//! Writes N manifests of the harness's realistic mix (half of them ~4 KB dashboards; see
//! `common/mix.rs`), seeds a real `cfgctl serve` process (release build, on 127.0.0.1) with the
//! same N resources, then measures
//!   1. `cfgctl plan --detailed-exitcode` (a subprocess): wall time and requests made, from the
//!      emulator's own counter;
//!   2. a per-resource read of the same N resources at concurrency 16 (what a tool that
//!      refreshes every resource before diffing does).
//!
//! Run with `cargo bench --bench plan` (optionally `-- --resources 10000 --latency-ms 20`).

// A benchmark prints its table for docs/performance.md: not cfgctl's output.
#![allow(clippy::disallowed_macros)]

mod common;

use std::process::Command;
use std::time::Instant;

use cfgctl::api::wire;
use serde_json::Value;

fn main() {
    let n = common::arg("--resources", 10_000);
    let latency_ms = common::arg("--latency-ms", 0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let faults = format!("latency:{latency_ms}ms");
    let server = if latency_ms > 0 {
        // Every request waits this long first: a stand-in for the network's round trip.
        common::serve(&["--faults", &faults])
    } else {
        common::serve(&[])
    };
    let client = reqwest::Client::new();
    let base = server.url.clone();
    let resources = common::mix::generate(n, 1);
    rt.block_on(common::create_all(&base, &resources, 16));
    let dir = common::mix::write_repo(&resources, "plan");
    let stats_url = format!("{base}/__emulator/stats");
    rt.block_on(client.delete(&stats_url).send())
        .expect("reset stats");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cfgctl"))
        .args(["plan", "--detailed-exitcode", "--url", &base])
        .arg(&dir)
        .output()
        .expect("plan runs");
    let plan_time = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value = rt
        .block_on(async { client.get(&stats_url).send().await?.json().await })
        .expect("stats");
    let plan_requests = stats["total"].as_u64().unwrap_or(0);

    rt.block_on(client.delete(&stats_url).send())
        .expect("reset stats");
    let started = Instant::now();
    {
        let client = client.clone();
        let base = base.clone();
        let urls: std::sync::Arc<Vec<String>> = std::sync::Arc::new(
            resources
                .iter()
                .map(|r| {
                    let slug = r.spec["slug"].as_str().unwrap_or_default();
                    format!("{base}{}", wire::item_path(r.kind, Some(slug)))
                })
                .collect(),
        );
        rt.block_on(common::concurrently(n, 16, move |i| {
            let client = client.clone();
            let url = urls[i].clone();
            async move {
                let r = client.get(&url).send().await.expect("answered");
                assert!(r.status().is_success());
                let _ = r.bytes().await;
            }
        }));
    }
    let read_time = started.elapsed();
    let stats: Value = rt
        .block_on(async { client.get(&stats_url).send().await?.json().await })
        .expect("stats");
    let read_requests = stats["total"].as_u64().unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);

    println!("| approach ({n} resources, no change, {latency_ms} ms added per request) | wall time | requests |");
    println!("|---|---|---|");
    println!(
        "| `cfgctl plan` (whole command: load {n} manifests, list, diff) | {:.2} s | {plan_requests} |",
        plan_time.as_secs_f64()
    );
    println!(
        "| per-resource read, 16 concurrent (reads only, no diff) | {:.2} s | {read_requests} |",
        read_time.as_secs_f64()
    );
}
