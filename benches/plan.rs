//! The cost of a no-change plan on a large tenant, next to a refresh-based approach.
//!
//! Seeds a real `cfgctl serve` process (release build, on 127.0.0.1) with N Teams, writes the
//! same N Teams as manifests, then measures
//!   1. `cfgctl plan --detailed-exitcode` (a subprocess): wall time and requests made, from the
//!      emulator's own counter;
//!   2. a per-resource read of the same N resources at concurrency 16 (what a tool that
//!      refreshes every resource before diffing does).
//!
//! Run with `cargo bench --bench plan` (optionally `-- --resources 10000 --latency-ms 20`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cfgctl::registry::Kind;
use cfgctl::wire;
use serde_json::{json, Value};

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(latency_ms: usize) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cfgctl"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "-q"]);
    if latency_ms > 0 {
        // Every request waits this long first: a stand-in for the network's round trip.
        cmd.args(["--faults", &format!("latency:{latency_ms}ms")]);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cfgctl serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("URL printed");
    Server {
        child,
        url: line.trim().to_string(),
    }
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn team(i: usize) -> Value {
    json!({"slug": format!("team-{i:05}"), "name": format!("Team {i}"), "description": "benchmark team"})
}

async fn concurrently<F, Fut>(n: usize, concurrency: usize, f: F)
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let next = Arc::clone(&next);
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                f(i).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
}

fn main() {
    let n = arg("--resources", 10_000);
    let latency_ms = arg("--latency-ms", 0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = start(latency_ms);
    let client = reqwest::Client::new();
    let base = server.url.clone();
    {
        let client = client.clone();
        let url = format!("{base}{}", wire::collection_path(Kind::Team));
        rt.block_on(concurrently(n, 16, move |i| {
            let client = client.clone();
            let url = url.clone();
            async move {
                let body = wire::create_body(Kind::Team, &team(i), false);
                let r = client
                    .post(&url)
                    .json(&body)
                    .send()
                    .await
                    .expect("answered");
                assert!(r.status().is_success());
            }
        }));
    }
    let dir = std::env::temp_dir().join(format!("cfgctl-bench-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for chunk in 0..n.div_ceil(1000) {
        let mut f =
            std::fs::File::create(dir.join(format!("teams-{chunk:03}.yaml"))).expect("file");
        for i in chunk * 1000..((chunk + 1) * 1000).min(n) {
            let t = team(i);
            writeln!(
                f,
                "---\napi_version: v1/config\nkind: Team\nspec:\n  slug: {}\n  name: {}\n  description: {}",
                t["slug"].as_str().unwrap_or_default(),
                t["name"].as_str().unwrap_or_default(),
                t["description"].as_str().unwrap_or_default()
            )
            .expect("write");
        }
    }
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
        rt.block_on(concurrently(n, 16, move |i| {
            let client = client.clone();
            let url = format!(
                "{base}{}",
                wire::item_path(Kind::Team, Some(&format!("team-{i:05}")))
            );
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
