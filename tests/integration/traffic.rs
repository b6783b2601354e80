//! Rate limits and traceability (issue 12, items 4-6): adaptive concurrency against
//! `--rate-limit`, the User-Agent the tenant sees, request ids and error codes in failures.

use cfgctl::emulator::Config;
use cfgctl::registry::Kind;
use serde_json::json;

use crate::support::{write, Cfgctl, Tenant};

/// `n` team manifests in a scratch directory.
fn teams(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..n {
        write(
            dir.path(),
            &format!("teams/team-{i:03}.yaml"),
            &format!("api_version: v1/config\nkind: Team\nspec:\n  slug: team-{i:03}\n  name: Team {i}\n"),
        );
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_apply_converges_with_few_429s() {
    let t = Tenant::start(Config {
        rate_limit: Some(40),
        ..Config::default()
    })
    .await;
    let dir = teams(240);
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["--parallelism", "32", "apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("Apply: 240 done (0 resolved conflicts), 0 failed, 0 skipped"),
        "{}",
        r.stdout
    );
    let stats = t.emulator.stats();
    let total = stats.log.len();
    let throttled = stats.log.iter().filter(|l| l.status == 429).count();
    let created = stats
        .log
        .iter()
        .filter(|l| l.method == "POST" && l.status == 200)
        .count();
    assert_eq!(created, 240, "every team created once");
    eprintln!("requests: {total}, of which 429: {throttled}");
    assert!(
        (throttled as f64) < 0.15 * total as f64,
        "{throttled} of {total} requests met a 429"
    );
    // The tenant did rate-limit this run, and the summary says how cfgctl slowed down.
    assert!(
        throttled > 0,
        "the run never met the limit: the test proves nothing"
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("Rate limit: "))
        .unwrap_or_else(|| panic!("no rate limit line:\n{}", r.stdout));
    assert!(
        line.contains(&format!("rate-limited {throttled} requests (429)"))
            && line.contains("from 32 requests in flight to "),
        "{line}"
    );
    let again = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(again.code, 0, "{}", again.transcript());
}

#[tokio::test]
async fn every_request_carries_the_user_agent() {
    let t = Tenant::full().await;
    let r = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let log = t.emulator.stats().log;
    assert!(log.len() > 10, "{log:?}");
    let expected = format!("cfgctl/{}", env!("CARGO_PKG_VERSION"));
    for l in &log {
        assert_eq!(l.user_agent, expected, "{l:?}");
    }
}

#[tokio::test]
async fn a_failure_prints_the_request_id_and_the_code() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    // Valid offline (the schema only says `name` is a string); the server refuses it.
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: nameless\n  name: \"\"\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    let log = t.emulator.stats().log;
    let refused: Vec<_> = log
        .iter()
        .filter(|l| l.method == "POST" && l.status == 400)
        .collect();
    assert_eq!(refused.len(), 1, "{log:?}");
    let id = &refused[0].request_id;
    assert_eq!(id.len(), 16, "{id}");
    let expected = format!(
        "create Team/nameless: 400 invalid team: `name` is required (code 3, request id {id}) (team.yaml:1)"
    );
    assert!(r.stdout.contains(&expected), "{}", r.transcript());
    assert!(
        r.stderr.contains(&format!("request id {id}")),
        "{}",
        r.stderr
    );
}

#[tokio::test]
async fn client_errors_keep_the_code_and_the_request_id() {
    let t = Tenant::full().await;
    let client = t.client();
    let err = client
        .create(
            Kind::Team,
            &json!({"slug": "t", "name": ""}),
            cfgctl::wire::Commit::Apply,
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.code(), Some(3));
    assert_eq!(
        err.server_message(),
        Some("invalid team: `name` is required")
    );
    let log = t.emulator.stats().log;
    assert_eq!(err.request_id(), Some(log[0].request_id.as_str()));
    // Not found: code 5, and its own request id.
    let missing = client
        .update(
            Kind::Team,
            Some("absent"),
            &json!({"name": "A"}),
            cfgctl::wire::IfMissing::Fail,
            cfgctl::wire::Commit::Apply,
        )
        .await
        .unwrap_err();
    assert_eq!((missing.status(), missing.code()), (Some(404), Some(5)));
    let log = t.emulator.stats().log;
    assert_eq!(missing.request_id(), Some(log[1].request_id.as_str()));
    assert_ne!(log[0].request_id, log[1].request_id);
}
