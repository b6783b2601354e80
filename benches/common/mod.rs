//! What the benchmarks share: a `cfgctl serve` subprocess, flags, a concurrent loop.

#![allow(dead_code)]

pub mod mix;
/// The wire format with the plain body builders and list reader the tests use.
#[path = "../../tests/integration/support/wire.rs"]
pub mod wire;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A `cfgctl serve` process on 127.0.0.1, killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cfgctl serve --listen 127.0.0.1:0 ARGS` and reads the URL it prints.
pub fn serve(args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cfgctl"))
        .args(["serve", "--listen", "127.0.0.1:0", "-q"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cfgctl serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout is piped"))
        .read_line(&mut line)
        .expect("the URL is printed");
    Server {
        child,
        url: line.trim().to_string(),
    }
}

/// `--name N` from the bench's arguments.
pub fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `f(0..n)` with `concurrency` workers.
pub async fn concurrently<F, Fut>(n: usize, concurrency: usize, f: F)
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
        t.await.expect("worker");
    }
}

/// Writes `n` Team manifests (1,000 per file) into a new temporary folder.
pub fn team_manifests(n: usize, tag: &str) -> std::path::PathBuf {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("cfgctl-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for chunk in 0..n.div_ceil(1000) {
        let mut f =
            std::fs::File::create(dir.join(format!("teams-{chunk:03}.yaml"))).expect("file");
        for i in chunk * 1000..((chunk + 1) * 1000).min(n) {
            writeln!(
                f,
                "---\napi_version: v1/config\nkind: Team\nspec:\n  slug: team-{i:05}\n  name: Team {i}\n  description: benchmark team"
            )
            .expect("write");
        }
    }
    dir
}

/// The object of Team `i`, as the manifests above declare it.
pub fn team(i: usize) -> serde_json::Value {
    serde_json::json!({"slug": format!("team-{i:05}"), "name": format!("Team {i}"), "description": "benchmark team"})
}

/// POSTs Teams `0..n` to the server with `concurrency` clients; panics on a failed create.
pub async fn create_teams(base_url: &str, n: usize, concurrency: usize) {
    use cfgctl::api::registry::Kind;
    let client = reqwest::Client::new();
    let url = format!("{base_url}{}", wire::collection_path(Kind::named("Team")));
    concurrently(n, concurrency, move |i| {
        let client = client.clone();
        let url = url.clone();
        async move {
            let body = wire::create_body(Kind::named("Team"), &team(i), wire::Commit::Apply);
            let r = client
                .post(&url)
                .json(&body)
                .send()
                .await
                .expect("answered");
            assert!(r.status().is_success(), "create failed: {}", r.status());
        }
    })
    .await;
}

/// POSTs the resources kind after kind (parents first, as generated), each kind with
/// `concurrency` clients; panics on a failed create.
pub async fn create_all(base_url: &str, resources: &[mix::Resource], concurrency: usize) {
    let client = reqwest::Client::new();
    let mut start = 0;
    while start < resources.len() {
        let kind = resources[start].kind;
        let end = resources[start..]
            .iter()
            .position(|r| r.kind != kind)
            .map_or(resources.len(), |p| start + p);
        let url = format!("{base_url}{}", wire::collection_path(kind));
        let bodies: Arc<Vec<String>> = Arc::new(
            resources[start..end]
                .iter()
                .map(|r| wire::create_body(kind, &r.spec, wire::Commit::Apply).to_string())
                .collect(),
        );
        let client = client.clone();
        concurrently(end - start, concurrency, move |i| {
            let client = client.clone();
            let url = url.clone();
            let bodies = Arc::clone(&bodies);
            async move {
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(bodies[i].clone())
                    .send()
                    .await
                    .expect("answered");
                assert!(r.status().is_success(), "create failed: {}", r.status());
            }
        })
        .await;
        start = end;
    }
}
