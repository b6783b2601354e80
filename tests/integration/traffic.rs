//! Rate limits and traceability (issue 12, items 4-6): adaptive concurrency against
//! `--rate-limit`, the User-Agent the tenant sees, request ids and error codes in failures.

use cfgctl::emulator::Config;
use serde_json::Value;

use crate::emulator::Tenant;
use crate::plan::{run_in, write};

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
    let r = run_in(
        &t,
        dir.path(),
        &["--parallelism", "32", "apply", ".", "--auto-approve"],
        &[],
    )
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
    eprintln!("requests: {total}, 429: {throttled}\n{}", r.stdout.lines().last().unwrap_or(""));
    let marks: String = stats.log.iter().map(|l| if l.status == 429 { 'X' } else { '.' }).collect();
    eprintln!("{marks}");
    assert!(
        (throttled as f64) < 0.15 * total as f64,
        "{throttled} of {total} requests met a 429"
    );
    // The tenant did rate-limit this run, and the summary says how cfgctl slowed down.
    assert!(throttled > 0, "the run never met the limit: the test proves nothing");
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
    let again = run_in(&t, dir.path(), &["plan", ".", "--detailed-exitcode"], &[]).await;
    assert_eq!(again.code, 0, "{}", again.transcript());
}
