//! `apply` of many resources: a saved plan's staleness check reads its kinds in batches of
//! `slugs`, side by side, and names exactly what changed.

use cfgctl::api::registry::Kind;
use serde_json::json;

use crate::support::{write, Cfgctl, Tenant};

/// A slug long enough that a `slugs` batch holds a few dozen of them.
fn long_slug(prefix: &str, i: usize) -> String {
    format!("{prefix}-{i:04}-{}", "x".repeat(30))
}

#[tokio::test]
async fn a_large_saved_plan_is_checked_in_batches_and_names_what_changed() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    let mut teams = String::new();
    for i in 0..300 {
        teams.push_str(&format!(
            "---\napi_version: v1/config\nkind: Team\nspec: {{slug: {}, name: Team {i}}}\n",
            long_slug("team", i)
        ));
    }
    write(dir.path(), "teams.yaml", &teams);
    let mut buckets = String::new();
    for i in 0..60 {
        buckets.push_str(&format!(
            "---\napi_version: v1/config\nkind: Bucket\nspec: {{slug: {}, name: Bucket {i}}}\n",
            long_slug("bucket", i)
        ));
    }
    write(dir.path(), "buckets.yaml", &buckets);
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());

    // Created by someone else since the plan: the last team of one batch, one in the middle
    // of another, and a bucket.
    for (kind, slug) in [
        (Kind::named("Team"), long_slug("team", 7)),
        (Kind::named("Team"), long_slug("team", 250)),
        (Kind::named("Bucket"), long_slug("bucket", 59)),
    ] {
        let reply = t
            .create(kind, json!({"slug": slug, "name": "By hand"}))
            .await;
        assert_eq!(reply.status, 200);
    }
    t.emulator.reset_stats();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["--parallelism", "4", "apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    let named: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("exists now"))
        .map(str::trim)
        .collect();
    assert_eq!(
        named,
        vec![
            format!(
                "Bucket/{} exists now; the plan was to create it",
                long_slug("bucket", 59)
            ),
            format!(
                "Team/{} exists now; the plan was to create it",
                long_slug("team", 7)
            ),
            format!(
                "Team/{} exists now; the plan was to create it",
                long_slug("team", 250)
            ),
        ],
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("the saved plan is stale (3 resources changed since it was made)"),
        "{}",
        r.stderr
    );
    // Only list reads, each filtered by a batch of slugs; every touched slug asked for once.
    let log = t.emulator.stats().log;
    let lists: Vec<_> = log
        .iter()
        .filter(|l| !l.path.ends_with("swagger.json"))
        .collect();
    assert!(lists.iter().all(|l| l.method == "GET"), "nothing changed");
    let mut asked = Vec::new();
    for l in &lists {
        assert!(
            l.path == "/api/v1/config/teams" || l.path == "/api/v1/config/buckets",
            "a list, never one resource: {}",
            l.path
        );
        let slugs: Vec<String> = form_urlencoded::parse(l.query.as_bytes())
            .filter(|(k, _)| k == "slugs")
            .map(|(_, v)| v.into_owned())
            .collect();
        assert!(!slugs.is_empty(), "{}", l.query);
        asked.extend(slugs);
    }
    assert!(
        lists.len() >= 8,
        "batches, not one request: {}",
        lists.len()
    );
    asked.sort();
    let mut expected: Vec<String> = (0..300)
        .map(|i| long_slug("team", i))
        .chain((0..60).map(|i| long_slug("bucket", i)))
        .collect();
    expected.sort();
    assert_eq!(asked, expected);
}
