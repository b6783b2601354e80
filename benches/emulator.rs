//! Emulator throughput: creates per second and list pages per second, against a real
//! `cfgctl serve` process on 127.0.0.1.
//!
//! Run with `cargo bench --bench emulator` (optionally `-- --resources 10000 --concurrency 16`).
//! Prints a Markdown table for docs/performance.md. Not a test: nothing is asserted.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cfgctl::registry::Kind;
use cfgctl::wire::{self, ListQuery};
use serde_json::json;

struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cfgctl"))
            .args(["serve", "--listen", "127.0.0.1:0", "-q"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cfgctl serve starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the URL is printed");
        Server {
            child,
            url: line.trim().to_string(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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

async fn creates(url: &str, n: usize, concurrency: usize) -> Duration {
    let client = reqwest::Client::new();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let client = client.clone();
        let next = Arc::clone(&next);
        let url = format!("{url}{}", wire::collection_path(Kind::Team));
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let body = wire::create_body(
                    Kind::Team,
                    &json!({"slug": format!("team-{i:05}"), "name": format!("Team {i}"), "description": "benchmark"}),
                    false,
                );
                let resp = client.post(&url).json(&body).send().await.expect("answered");
                assert!(resp.status().is_success(), "create failed: {}", resp.status());
                let _ = resp.bytes().await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
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
                    wire::collection_path(Kind::Team),
                    q.to_query_string()
                ))
                .send()
                .await
                .expect("answered");
            let body: serde_json::Value = resp.json().await.expect("json");
            pages += 1;
            let (_, next) = wire::parse_list_response(Kind::Team, &body).expect("list");
            if next.is_empty() {
                break;
            }
            q.token = Some(next);
        }
    }
    (pages, started.elapsed())
}

fn main() {
    let n = arg("--resources", 10_000);
    let concurrency = arg("--concurrency", 16);
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
        let server = Server::start(&extra);
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
