//! Rate limits and traceability (issue 12, items 4-6): adaptive concurrency against
//! `--rate-limit`, the User-Agent the tenant sees, request ids and error codes in failures.

use std::sync::Arc;
use std::time::Duration;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use cfgctl::remote::client::Client;
use serde_json::json;
use tokio::time::Instant;

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

/// Plans `dir` against the tenant through the library, as `cfgctl apply` does.
async fn plan_now(
    t: &Tenant,
    dir: &std::path::Path,
) -> (Arc<Client>, cfgctl::plan::Plan, cfgctl::plan::Current) {
    let loaded = cfgctl::manifest::load_dir(dir).unwrap();
    assert_eq!(loaded.error_count(), 0);
    let request = cfgctl::ops::PlanRequest {
        target: cfgctl::ops::TargetSettings {
            url: Some(t.emulator.url()),
            token: None,
            local: None,
            timeout: Duration::from_secs(30),
            max_retries: 5,
            insecure_http: false,
            max_pages: cfgctl::remote::client::DEFAULT_MAX_PAGES,
            max_response_bytes: cfgctl::remote::client::DEFAULT_MAX_RESPONSE_MB << 20,
        },
        dir: dir.to_path_buf(),
        environment: None,
        prune: false,
        only: vec![],
        server_validate: false,
        drift: false,
        cache: None,
        base: None,
        keep: cfgctl::ops::Keep {
            manifests: false,
            current: true,
            connection: true,
        },
    };
    let cfgctl::ops::Planned {
        plan,
        current: Some(current),
        connection: Some(conn),
        ..
    } = cfgctl::ops::plan(&request).await.unwrap()
    else {
        panic!("the plan came back without the target's objects and the connection");
    };
    (Arc::new(conn.client), plan, current)
}

// The tenant's bucket and the client's `Retry-After` pauses both run on tokio's clock, paused
// here: it moves only when every task waits, so the run is the same on a loaded 2-core machine
// as on a fast one (the apply runs in-process, on the test's runtime, for that reason).
#[tokio::test(start_paused = true)]
async fn a_rate_limited_apply_converges_with_few_429s() {
    let t = Tenant::start(Config {
        rate_limit: Some(40),
        ..Config::default()
    })
    .await;
    let dir = teams(240);
    let (client, plan, current) = plan_now(&t, dir.path()).await;
    assert_eq!(plan.actions.len(), 240);
    let started = Instant::now();
    let outcomes = cfgctl::apply::execute(
        Arc::clone(&client),
        &plan,
        &current,
        cfgctl::apply::ExecOptions {
            parallelism: 32,
            force_delete_buckets: false,
        },
        |_, _| {},
    )
    .await;
    let took = started.elapsed();
    let slowed = client.throttle().slow_down();
    let summary = cfgctl::apply::report::summary(&plan, &outcomes, slowed);
    assert!(
        summary.contains("Apply: 240 done (0 resolved conflicts), 0 failed, 0 skipped"),
        "{summary}"
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
    assert!(
        (throttled as f64) < 0.15 * total as f64,
        "{throttled} of {total} requests met a 429"
    );
    // The tenant did rate-limit this run, and the summary says how cfgctl slowed down.
    assert!(
        throttled > 0,
        "the run never met the limit: the test proves nothing"
    );
    let slowed = slowed.expect("a slow-down after 429s");
    assert_eq!(slowed.throttled, throttled as u64);
    assert_eq!(slowed.ceiling, 32);
    assert!(slowed.lowest < 32, "{slowed:?}");
    let line = summary
        .lines()
        .find(|l| l.starts_with("Rate limit: "))
        .unwrap_or_else(|| panic!("no rate limit line:\n{summary}"));
    assert!(
        line.contains(&format!("rate-limited {throttled} requests (429)"))
            && line.contains("from 32 requests in flight to "),
        "{line}"
    );
    // The limit held on the tenant's clock: 240 creates at 40 a second after a burst of 40
    // take at least 5 s, and the waits were no longer than the 429s asked for (a client that
    // waited out each 429 alone, one request at a time, would take over 10 s).
    assert!(took >= Duration::from_secs(5), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Planned again in-process too (the tenant's bucket refills on the paused clock only): a
    // plan reads one page of each of the API's kinds, more than the burst.
    let (_, again, _) = plan_now(&t, dir.path()).await;
    assert!(again.actions.is_empty(), "{:?}", again.actions.first());
    assert_eq!(again.unchanged, 240);
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
            Kind::named("Team"),
            &json!({"slug": "t", "name": ""}),
            cfgctl::api::wire::Commit::Apply,
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
            Kind::named("Team"),
            Some("absent"),
            &json!({"name": "A"}),
            cfgctl::api::wire::IfMissing::Fail,
            cfgctl::api::wire::Commit::Apply,
        )
        .await
        .unwrap_err();
    assert_eq!((missing.status(), missing.code()), (Some(404), Some(5)));
    let log = t.emulator.stats().log;
    assert_eq!(missing.request_id(), Some(log[1].request_id.as_str()));
    assert_ne!(log[0].request_id, log[1].request_id);
}
