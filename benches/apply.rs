//! 10,000 creates of the harness's realistic mix (half of them ~4 KB dashboards; see
//! `common/mix.rs`): `cfgctl apply --parallelism 16`, next to a one-request-at-a-time upsert
//! loop over the same resources, and next to the emulator's raw create capacity at the same
//! concurrency (kind after kind, parents first). Each runs against a fresh `cfgctl serve` process (in-memory store) on
//! 127.0.0.1. Run with `cargo bench --bench apply` (`-- --resources N --parallelism P
//! --latency-ms L`, where L makes the emulator wait before each answer, a stand-in for a
//! network round trip).

// A benchmark prints its table for docs/performance.md: not cfgctl's output.
#![allow(clippy::disallowed_macros)]

mod common;

use std::process::Command;
use std::time::Instant;

use common::wire;

fn main() {
    let n = common::arg("--resources", 10_000);
    let p = common::arg("--parallelism", 16);
    let latency = common::arg("--latency-ms", 0);
    let faults = format!("latency:{latency}ms");
    let serve_args: Vec<&str> = if latency > 0 {
        vec!["--faults", &faults]
    } else {
        vec![]
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let resources = common::mix::generate(n, 1);
    let dir = common::mix::write_repo(&resources, "apply");

    let server = common::serve(&serve_args);
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cfgctl"))
        .args([
            "apply",
            "--auto-approve",
            "--url",
            &server.url,
            "--parallelism",
            &p.to_string(),
        ])
        .arg(&dir)
        .output()
        .expect("apply runs");
    let apply_time = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(server);

    let server = common::serve(&serve_args);
    let client = reqwest::Client::new();
    let started = Instant::now();
    rt.block_on(async {
        for r in &resources {
            let slug = r.spec["slug"].as_str().unwrap_or_default();
            let url = format!("{}{}", server.url, wire::item_path(r.kind, Some(slug)));
            let body = wire::update_body(
                r.kind,
                &r.spec,
                wire::IfMissing::Create,
                wire::Commit::Apply,
            );
            let resp = client.put(&url).json(&body).send().await.expect("answered");
            assert!(
                resp.status().is_success(),
                "upsert failed: {}",
                resp.status()
            );
        }
    });
    let loop_time = started.elapsed();
    drop(server);

    let server = common::serve(&serve_args);
    let started = Instant::now();
    rt.block_on(common::create_all(&server.url, &resources, p));
    let raw_time = started.elapsed();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);

    let rate = |d: std::time::Duration| n as f64 / d.as_secs_f64();
    println!("| {n} creates, {latency} ms added per request | wall time | creates/s |");
    println!("|---|---|---|");
    println!(
        "| `cfgctl apply --parallelism {p}` (whole command: load, plan, apply) | {:.2} s | {:.0} |",
        apply_time.as_secs_f64(),
        rate(apply_time)
    );
    println!(
        "| upsert loop, one request at a time | {:.2} s | {:.0} |",
        loop_time.as_secs_f64(),
        rate(loop_time)
    );
    println!(
        "| raw POSTs, {p} concurrent (the emulator's capacity) | {:.2} s | {:.0} |",
        raw_time.as_secs_f64(),
        rate(raw_time)
    );
}
