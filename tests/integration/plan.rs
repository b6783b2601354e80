//! `cfgctl plan` and `cfgctl drift` against the emulator (in-process, port 0), driving the
//! real binary.

use cfgctl::api::registry::{Kind, Profile};
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, fixture_objects, Cfgctl, Tenant};
// These lived here before `support`; the old paths stay for tests that still use them.
#[allow(unused_imports)]
pub use crate::support::{run, run_in, scratch_copy, seeded, write};

#[tokio::test]
async fn full_fixture_planned_from_empty() {
    let t = Tenant::full().await;
    let text = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid"])
        .run()
        .await;
    assert_eq!(text.code, 0, "{}", text.transcript());
    assert!(
        text.stdout.contains("Plan: 26 to create, 0 to update"),
        "{}",
        text.stdout
    );
    cfgctl_snapshot!("from_empty_text", text.stdout);

    let md = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--format", "markdown"])
        .run()
        .await;
    assert_eq!(md.code, 0);
    assert!(md.stdout.len() < 60_000);
    cfgctl_snapshot!("from_empty_markdown", md.stdout);

    let json = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--format", "json"])
        .run()
        .await;
    assert_eq!(json.code, 0);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["summary"]["create"], 26);
    cfgctl_snapshot!("from_empty_json", json.stdout);

    let detailed = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(detailed.code, 2);
}

#[tokio::test]
async fn seeded_tenant_plans_no_change_with_list_requests_only() {
    // The client asks for large pages; a target that serves at most 2 a page still gets
    // every page followed.
    let t = seeded(Config {
        page_size: 2,
        max_page_size: 2,
        ..Config::default()
    })
    .await;
    t.emulator.reset_stats();
    let r = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(
        r.stdout,
        "cfgctl plan for [TARGET]\n\nNo changes: the target matches the manifests (26 resources).\n\nPlan: 0 to create, 0 to update, 0 to delete, 0 to upsert, 0 unsupported, 26 unchanged.\n"
    );
    let stats = t.emulator.stats();
    // Only GETs of collections (the singleton's read is its collection path) and the
    // description: never a per-resource request.
    for record in &stats.log {
        assert_eq!(record.method, "GET", "{record:?}");
        assert!(
            !stats.by_route.keys().any(|k| k.contains("{slug}")),
            "{:?}",
            stats.by_route
        );
    }
    // One request per page: at page size 2, ceil(n / 2) pages per kind (1 for an empty one).
    let mut expected = 1; // swagger.json
    let mut per_kind = std::collections::BTreeMap::new();
    for (kind, _, _) in fixture_objects() {
        *per_kind.entry(kind).or_insert(0usize) += 1;
    }
    for def in cfgctl::api::registry::embedded_kinds() {
        if !def.full_ops.list && !def.singleton {
            continue;
        }
        let n = per_kind.get(&def.kind).copied().unwrap_or(0);
        expected += if def.singleton {
            1
        } else {
            n.div_ceil(2).max(1)
        };
    }
    assert_eq!(stats.total as usize, expected, "{:?}", stats.by_route);
    assert_eq!(stats.count("GET", "/api/v1/config/monitors"), 2);

    let drift = Cfgctl::new(&t)
        .args(&["drift", "fixtures/valid"])
        .run()
        .await;
    assert_eq!(drift.code, 0, "{}", drift.transcript());
}

#[tokio::test]
async fn every_kind_of_change() {
    let t = seeded(Config::default()).await;
    // Out-of-band resources: one in the prune scope, one outside it.
    t.create(
        Kind::named("Dashboard"),
        json!({"slug": "scratch", "name": "Scratch"}),
    )
    .await;
    t.create(
        Kind::named("Team"),
        json!({"slug": "contractors", "name": "Contractors"}),
    )
    .await;
    let dir = scratch_copy();
    // A field changed, a field removed (labels.cost_center), a label added.
    write(
        dir.path(),
        "buckets/platform.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: platform\n  name: Platform\n  description: Everything the platform team runs\n  team_slug: platform\n  notification_policy_slug: platform-oncall\n  labels:\n    team: platform\n    tier: gold\n",
    );
    // A change inside an embedded document.
    let path = dir.path().join("classic-dashboards/platform-nodes.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"refresh\": \"1m\"", "\"refresh\": \"5m\"");
    std::fs::write(&path, text).unwrap();
    let d = dir.path().to_str().unwrap();
    let plan = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", d, "-v"])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
    cfgctl_snapshot!("changes_text", plan.stdout);
    let pruned = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", d, "--prune", "--format", "json"])
        .run()
        .await;
    let v: Value = serde_json::from_str(&pruned.stdout).unwrap();
    let actions: Vec<String> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["action"].as_str().unwrap(),
                c["address"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        actions,
        vec![
            "update Bucket/platform",
            "update ClassicDashboard/platform-nodes",
            "delete Dashboard/scratch"
        ]
    );
    assert_eq!(v["unmanaged"], json!(["Team/contractors"]));
    let fields = &v["changes"][0]["fields"];
    assert_eq!(
        fields,
        &json!([
            {"path": "description", "before": "Everything the platform team owns", "after": "Everything the platform team runs"},
            {"path": "labels.cost_center", "before": "4100", "after": null},
            {"path": "labels.tier", "before": null, "after": "gold"}
        ])
    );
    let md = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", d, "--prune", "--format", "markdown"])
        .run()
        .await;
    cfgctl_snapshot!("changes_markdown", md.stdout);
    // drift: managed changes → 2.
    let drift = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["drift", d])
        .run()
        .await;
    assert_eq!(drift.code, 2);
}

#[tokio::test]
async fn unmanaged_in_prune_scope_is_drift() {
    let t = seeded(Config::default()).await;
    let clean = Cfgctl::new(&t)
        .args(&["drift", "fixtures/valid"])
        .run()
        .await;
    assert_eq!(clean.code, 0);
    t.create(
        Kind::named("Team"),
        json!({"slug": "outside", "name": "Outside the prune scope"}),
    )
    .await;
    let still = Cfgctl::new(&t)
        .args(&["drift", "fixtures/valid"])
        .run()
        .await;
    assert_eq!(
        still.code, 0,
        "unmanaged outside the prune scope is not drift"
    );
    t.create(
        Kind::named("Dashboard"),
        json!({"slug": "scratch", "name": "Scratch"}),
    )
    .await;
    let drift = Cfgctl::new(&t)
        .args(&["drift", "fixtures/valid", "--format", "json"])
        .run()
        .await;
    assert_eq!(drift.code, 2);
    let v: Value = serde_json::from_str(&drift.stdout).unwrap();
    assert_eq!(v["unmanaged"], json!(["Dashboard/scratch", "Team/outside"]));
}

#[tokio::test]
async fn unsupported_under_the_seed_profile() {
    let t = Tenant::start(Config {
        profile: Profile::Seed,
        ..Config::default()
    })
    .await;
    let r = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    let summary = r.stdout.lines().last().unwrap().to_string();
    assert_eq!(
        summary,
        "Plan: 11 to create, 0 to update, 0 to delete, 1 to upsert, 14 unsupported, 0 unchanged."
    );
    let unsupported: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| {
            l.starts_with("  ! ")
                || l.starts_with("  ^ ")
                || l.contains("unsupported ")
                || l.contains("# the target")
        })
        .collect();
    cfgctl_snapshot!("seed_unsupported", unsupported.join("\n"));
}

#[tokio::test]
async fn dangling_reference_is_an_error() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bucket.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n  team_slug: ghost\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    cfgctl_snapshot!("dangling_reference", r.stderr);
}

#[tokio::test]
async fn cycles_broken_and_unbreakable() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cycle.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n  notification_policy_slug: n\n---\napi_version: v1/config\nkind: NotificationPolicy\nspec:\n  slug: n\n  name: N\n  bucket_slug: b\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    cfgctl_snapshot!("broken_cycle", r.stdout);

    // Both exist without the references: two updates, no ordering needed, no cycle. (An
    // unbreakable cycle needs a target that cannot update either side: see the planner's
    // unit test and its snapshot.)
    t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    t.create(Kind::named("Bucket"), json!({"slug": "b", "name": "B"}))
        .await;
    t.create(
        Kind::named("NotificationPolicy"),
        json!({"slug": "n", "name": "N", "team_slug": "t"}),
    )
    .await;
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--format", "json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["summary"]["update"], 2);
    assert_eq!(v["changes"][0]["depends_on"], json!([]));
}

#[tokio::test]
async fn server_validate_rejection_points_at_the_manifest() {
    let t = Tenant::full().await;
    // The label name is taken by a resource the manifests do not know.
    t.create(
        Kind::named("DerivedLabel"),
        json!({"slug": "old-env", "name": "Old", "label_name": "environment"}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "labels/environment.yaml",
        "# the new label\napi_version: v1/config\nkind: DerivedLabel\nspec:\n  slug: environment\n  name: Environment\n  label_name: environment\n",
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: t\n  name: T\n",
    );
    let plain = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(plain.code, 0, "offline and list checks cannot see it");
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--server-validate"])
        .run()
        .await;
    assert_eq!(r.code, 1);
    cfgctl_snapshot!("server_validate_rejection", r.stderr);
    // Nothing was created by the dry runs.
    assert_eq!(t.read(Kind::named("Team"), Some("t")).await.status, 404);
}

#[tokio::test]
async fn server_validate_notes_what_waits_for_a_create() {
    let t = Tenant::full().await;
    let r = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--server-validate"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains("Warning: Bucket/platform not validated by the server: it waits for NotificationPolicy/platform-oncall, Team/platform to be created"),
        "{}",
        r.stdout
    );
}

#[tokio::test]
async fn the_token_appears_nowhere() {
    let secret = "tok-3f9c2e7a-never-print-me";
    let t = Tenant::start(Config {
        token: Some(secret.into()),
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plan.json");
    let out_arg = out.to_str().unwrap().to_string();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{secret}\n")).unwrap();
    let runs = vec![
        Cfgctl::new(&t)
            .args(&[
                "plan",
                "fixtures/valid",
                "-vv",
                "--token",
                secret,
                "--out",
                &out_arg,
            ])
            .run()
            .await,
        Cfgctl::new(&t)
            .args(&["plan", "fixtures/valid", "-vv", "--log-format", "json"])
            .env("CFGCTL_TOKEN", secret)
            .run()
            .await,
        Cfgctl::new(&t)
            .args(&[
                "plan",
                "fixtures/valid",
                "--token-file",
                token_file.to_str().unwrap(),
            ])
            .run()
            .await,
        Cfgctl::new(&t)
            .args(&[
                "drift",
                "fixtures/valid",
                "--token",
                "wrong-token-value",
                "-vv",
            ])
            .run()
            .await,
        Cfgctl::new(&t).args(&["plan", "--help"]).run().await,
    ];
    assert_eq!(runs[0].code, 0, "{}", runs[0].transcript());
    assert_eq!(runs[1].code, 0, "{}", runs[1].transcript());
    assert_eq!(runs[2].code, 0, "{}", runs[2].transcript());
    assert_eq!(runs[3].code, 1);
    assert!(runs[3].stderr.contains("401"), "{}", runs[3].stderr);
    assert!(!runs[3].stderr.contains("wrong-token-value"));
    assert!(!runs[0].stderr.is_empty(), "-vv logs something");
    for r in &runs {
        assert!(
            !r.stdout.contains(secret) && !r.stderr.contains(secret),
            "{}",
            r.transcript()
        );
    }
    let saved = std::fs::read_to_string(&out).unwrap();
    assert!(saved.contains("\"fingerprint\""));
    assert!(!saved.contains(secret));
}

#[tokio::test]
async fn saved_plan_has_objects_and_fingerprints() {
    let t = seeded(Config::default()).await;
    let dir = scratch_copy();
    write(
        dir.path(),
        "teams/extra.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: extra\n  name: Extra\n",
    );
    let path = dir.path().join("buckets/platform.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("owns", "runs");
    std::fs::write(&path, text).unwrap();
    let out = dir.path().join("plan.json");
    let d = dir.path().to_str().unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&[
            "plan",
            d,
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let changes = saved["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2);
    let update = changes.iter().find(|c| c["action"] == "update").unwrap();
    let create = changes.iter().find(|c| c["action"] == "create").unwrap();
    assert_eq!(update["step"]["fingerprint"].as_str().unwrap().len(), 32);
    assert_eq!(
        update["step"]["body"]["description"],
        "Everything the platform team runs"
    );
    assert!(create["step"]["fingerprint"].is_null());
    assert_eq!(
        create["step"]["body"],
        json!({"slug": "extra", "name": "Extra"})
    );
    assert_eq!(saved["guards"]["max_deletes"], 10);
    // The stdout JSON is the §4 shape, without the saved-plan extras.
    let shown: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(shown["changes"][0].get("step").is_none());
    assert!(shown.get("guards").is_none());
}

#[test]
fn no_target_names_both_options() {
    let r = Cfgctl::bare()
        .args(&["plan", "fixtures/valid"])
        .run_blocking();
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "error: no target: pass --url URL (or set CFGCTL_URL) for a tenant, or --local for the embedded local tenant\n"
    );
    let r = Cfgctl::bare()
        .args(&[
            "plan",
            "fixtures/valid",
            "--url",
            "http://tenant.example.com",
        ])
        .run_blocking();
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "error: refusing plain http to tenant.example.com, which is not this machine: the API token and the tenant's configuration would cross the network unencrypted; use https, or pass --insecure-http\n"
    );
}

#[test]
fn local_tenant_plans_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("local.db");
    let r = Cfgctl::bare()
        .args(&[
            "plan",
            "examples/quickstart",
            &format!("--local={}", db.display()),
        ])
        .run_blocking();
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r
        .stdout
        .starts_with(&format!("cfgctl plan for local:{}", db.display())));
    assert!(r.stdout.contains("Plan: 5 to create"), "{}", r.stdout);
    assert!(db.exists(), "the local store is created");
}

#[tokio::test]
async fn colour_follows_the_flag() {
    let t = Tenant::full().await;
    let plain = Cfgctl::new(&t)
        .args(&["plan", "examples/quickstart"])
        .run()
        .await;
    assert!(!plain.stdout.contains('\u{1b}'), "no colour off a terminal");
    let always = Cfgctl::new(&t)
        .args(&["plan", "examples/quickstart", "--color", "always"])
        .run()
        .await;
    assert!(
        always.stdout.contains("\u{1b}[32m+ Team/checkout"),
        "{}",
        always.stdout
    );
    let never = Cfgctl::new(&t)
        .args(&["plan", "examples/quickstart", "--color", "auto"])
        .env("NO_COLOR", "1")
        .run()
        .await;
    assert!(!never.stdout.contains('\u{1b}'));
}

#[tokio::test]
async fn a_flaky_target_still_plans() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tenant.db");
    let clean = seeded(Config {
        data: Some(data.clone()),
        ..Config::default()
    })
    .await;
    clean.emulator.stop().await;
    let flaky = Tenant::start(Config {
        data: Some(data),
        faults: cfgctl::emulator::faults::Faults::parse("500:0.2,503:0.1,reset:0.05,seed:12")
            .unwrap(),
        ..Config::default()
    })
    .await;
    let r = Cfgctl::new(&flaky)
        .args(&[
            "plan",
            "fixtures/valid",
            "--detailed-exitcode",
            "--max-retries",
            "12",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("No changes"), "{}", r.stdout);
    let stats = flaky.emulator.stats();
    assert!(
        stats.log.iter().all(|l| l.method == "GET"),
        "retries are reads too"
    );
}

/// A target that redirects everything to another origin: cfgctl must not follow, so the
/// other origin never sees the token.
#[tokio::test]
async fn redirects_to_another_host_never_carry_the_token() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&hits);
    let other = axum::Router::new().fallback(move || {
        let seen = Arc::clone(&seen);
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            "{}"
        }
    });
    let other_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other_addr = other_listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(other_listener, other).await });
    let redirect = axum::Router::new().fallback(move |uri: axum::http::Uri| async move {
        axum::response::Redirect::temporary(&format!("http://{other_addr}{uri}"))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, redirect).await });

    let url = format!("http://{addr}");
    let r = Cfgctl::bare()
        .args(&[
            "plan",
            "fixtures/valid",
            "--url",
            &url,
            "--token",
            "redirect-secret",
            "--max-retries",
            "0",
        ])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(r.stderr.contains("redirect"), "{}", r.stderr);
    assert!(!r.stderr.contains("redirect-secret"));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the other host was contacted"
    );
}

/// A target without a swagger.json: the full API is assumed, and the plan says so.
#[tokio::test]
async fn no_description_means_the_full_registry_with_a_warning() {
    let app = axum::Router::new()
        .route(
            cfgctl::api::wire::SWAGGER_PATH,
            axum::routing::get(|| async {
                (
                    axum::http::StatusCode::NOT_FOUND,
                    "{\"message\": \"no such page\"}",
                )
            }),
        )
        .fallback(|| async { axum::Json(json!({})) });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}");
    let r = Cfgctl::bare()
        .args(&[
            "plan",
            "examples/quickstart",
            "--url",
            &url,
            "--max-retries",
            "0",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("Plan: 5 to create"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Warning: cannot read the target's swagger.json (GET /api/v1/config/swagger.json: 404 no such page): assuming the full API"),
        "{}",
        r.stdout
    );
}

const BUCKET_ON_TEAM_T: &str =
    "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n  team_slug: t\n";

#[tokio::test]
async fn a_delete_of_what_a_manifest_references_is_refused_at_plan_time() {
    let t = Tenant::full().await;
    let team = Kind::from_name("Team").unwrap();
    let bucket = Kind::from_name("Bucket").unwrap();
    assert_eq!(
        t.create(team, json!({"slug": "t", "name": "T"}))
            .await
            .status,
        200
    );
    let b = json!({"slug": "b", "name": "B", "team_slug": "t"});
    assert_eq!(t.create(bucket, b).await.status, 200);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", "prune: [\"Team/*\"]\n");
    write(dir.path(), "bucket.yaml", BUCKET_ON_TEAM_T);
    t.emulator.reset_stats();
    // Before, the plan deleted Team/t and apply met the server's 400 (in use).
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert_eq!(r.stdout, "");
    cfgctl_snapshot!("referenced_delete", r.stderr);
    let log = t.emulator.stats().log;
    assert!(
        log.iter().all(|l| l.method == "GET"),
        "nothing sent: {log:?}"
    );
    assert_eq!(t.read(team, Some("t")).await.status, 200);
    // Without --prune nothing is deleted, so nothing is wrong.
    let plan = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
}

#[tokio::test]
async fn deletes_say_why_and_what_they_delete() {
    let t = Tenant::full().await;
    let team = Kind::from_name("Team").unwrap();
    let old = json!({"slug": "old", "name": "Old", "description": "Gone from git"});
    assert_eq!(t.create(team, old).await.status, 200);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Monitor/*\", \"Team/o*\"]\n",
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: kept\n  name: Kept\n",
    );
    let text = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune"])
        .run()
        .await;
    assert_eq!(text.code, 0, "{}", text.transcript());
    let md = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--format", "markdown"])
        .run()
        .await;
    let json = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--format", "json"])
        .run()
        .await;
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    let delete = &v["changes"][1];
    assert_eq!(delete["action"], "delete");
    assert_eq!(
        delete["reason"],
        "not declared by any manifest, inside the prune scope (`Team/o*`)"
    );
    assert_eq!(
        delete["fields"][2],
        json!({"path": "description", "before": "Gone from git", "after": null})
    );
    cfgctl_snapshot!(
        "delete_reason_and_fields",
        format!("=== text\n{}=== markdown\n{}", text.stdout, md.stdout)
    );
}

#[tokio::test]
async fn prune_without_prune_patterns_says_so() {
    let t = Tenant::full().await;
    let team = Kind::from_name("Team").unwrap();
    assert_eq!(
        t.create(team, json!({"slug": "x", "name": "X"}))
            .await
            .status,
        200
    );
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: x\n  name: X\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "\nWarning: --prune deletes nothing: cfgctl.yaml has no `prune` patterns (they say \
             which resources the repository owns; see docs/prune.md)\n"
        ),
        "{}",
        r.stdout
    );
    let plain = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert!(!plain.stdout.contains("Warning"), "{}", plain.stdout);
}

#[tokio::test]
async fn a_dangling_reference_suggests_the_closest_slug() {
    let t = Tenant::full().await;
    let team = Kind::from_name("Team").unwrap();
    let platform = json!({"slug": "platform", "name": "Platform"});
    assert_eq!(t.create(team, platform).await.status, 200);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bucket.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n  team_slug: platfrom\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "bucket.yaml:6:3: error: Bucket/b references Team/platfrom at `team_slug`, which is \
             neither in the manifests nor on the target (did you mean `Team/platform`?)\n"
        ),
        "{}",
        r.stderr
    );
}

#[tokio::test]
async fn drift_and_plan_read_a_local_edit_the_same_way() {
    let t = seeded(Config::default()).await;
    let dir = scratch_copy();
    let path = dir.path().join("monitors/platform.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("interval_secs: 60", "interval_secs: 120");
    std::fs::write(&path, text).unwrap();
    let run = |args: &'static [&'static str]| Cfgctl::new(&t).dir(dir.path()).args(args).run();
    let plan = run(&["plan", "."]).await;
    let drift = run(&["drift", "."]).await;
    let drift_md = run(&["drift", ".", "--format", "markdown"]).await;
    let drift_json = run(&["drift", ".", "--format", "json"]).await;
    assert_eq!(drift.code, 2, "{}", drift.transcript());
    let v: Value = serde_json::from_str(&drift_json.stdout).unwrap();
    assert_eq!(
        v["drift"][0]["fields"][0],
        json!({"path": "interval_secs", "manifest": 120, "target": 60})
    );
    assert_eq!(
        v["changes"][0]["fields"][0],
        json!({"path": "interval_secs", "before": 60, "after": 120})
    );
    cfgctl_snapshot!(
        "local_edit_plan_and_drift",
        format!(
            "=== plan\n{}=== drift\n{}=== drift markdown\n{}",
            plan.stdout, drift.stdout, drift_md.stdout
        )
    );
}
