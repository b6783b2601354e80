//! The open world (docs/product.md §8): a tenant that refuses a product area (a kind's list
//! answered 403, 404 or 501) plans around it when the plan does not need it, and names the kind
//! and the answer when it does.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::{faults::Faults, Config};

use crate::support::files::write;
use crate::support::run::Cfgctl;
use crate::support::tenant::Tenant;

const TEAM: &str =
    "api_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n";

async fn refusing(spec: &str) -> Tenant {
    Tenant::start(Config {
        faults: Faults::parse(spec).unwrap(),
        ..Config::default()
    })
    .await
}

#[tokio::test]
async fn a_refused_kind_the_plan_does_not_need_is_a_note_and_the_plan_goes_on() {
    for status in ["403", "404", "501"] {
        let t = refusing(&format!("{status}:log-scale-actions")).await;
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "team.yaml", TEAM);
        let run = Cfgctl::new(&t)
            .dir(dir.path())
            .args(&["plan", "."])
            .run()
            .await;
        assert_eq!(run.code, 0, "{status}: {}", run.transcript());
        let text = run.transcript();
        assert!(
            text.contains("LogScaleAction was not read: the target refused its list")
                && text.contains(&format!("its list ({status} "))
                && text.contains("nothing in this plan needs it"),
            "{status}: {text}"
        );
        assert!(text.contains("+ Team/platform"), "{text}");
        let run = Cfgctl::new(&t)
            .dir(dir.path())
            .args(&["apply", ".", "--auto-approve"])
            .run()
            .await;
        assert_eq!(run.code, 0, "{status}: {}", run.transcript());
        assert_eq!(
            t.read(Kind::named("Team"), Some("platform")).await.status,
            200
        );
        let run = Cfgctl::new(&t)
            .dir(dir.path())
            .args(&["drift", "."])
            .run()
            .await;
        assert_eq!(run.code, 0, "{status}: {}", run.transcript());
        assert!(
            run.transcript().contains("LogScaleAction"),
            "{}",
            run.transcript()
        );
    }
}

#[tokio::test]
async fn a_glob_prune_pattern_does_not_prune_a_refused_kind_and_says_so() {
    let t = refusing("403:log-scale-actions").await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "team.yaml", TEAM);
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"*/*\"]\nmax_deletes: 5\n",
    );
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.transcript().contains(
            "the prune pattern `*/*` does not prune LogScaleAction: the target refused its list"
        ),
        "{}",
        run.transcript()
    );
}

#[tokio::test]
async fn a_refused_kind_the_plan_needs_is_an_error_naming_the_kind_and_the_answer() {
    let t = refusing("403:teams").await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "team.yaml", TEAM);
    for args in [
        &["plan", "."][..],
        &["apply", ".", "--auto-approve"],
        &["drift", "."],
    ] {
        let run = Cfgctl::new(&t).dir(dir.path()).args(args).run().await;
        assert_eq!(run.code, 1, "{args:?}: {}", run.transcript());
        assert!(
            run.stderr
                .contains("team.yaml:1:1: error: Team: the target refused to list this kind")
                && run.stderr.contains("403")
                && run.stderr.contains("1 manifest declares it"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A prune pattern that names the kind needs it too.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "b.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n",
    );
    write(dir.path(), "cfgctl.yaml", "prune: [\"Team/*\"]\n");
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("Team: the target refused to list this kind")
            && run.stderr.contains("the prune pattern `Team/*` names it"),
        "{}",
        run.stderr
    );
}

/// Red team D10: a prune glob that picks the refused kind out (`LogScale*/*`) and `--only`
/// naming it need it too; only a pattern of every kind (`*/*`) does not.
#[tokio::test]
async fn a_glob_or_only_that_names_a_refused_kind_needs_it() {
    let t = refusing("403:log-scale-actions").await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "team.yaml", TEAM);
    write(dir.path(), "cfgctl.yaml", "prune: [\"LogScale*/*\"]\n");
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("LogScaleAction: the target refused to list this kind")
            && run
                .stderr
                .contains("the prune pattern `LogScale*/*` names it"),
        "{}",
        run.stderr
    );
    write(dir.path(), "cfgctl.yaml", "prune: [\"*/*\"]\n");
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--only", "LogScaleAction/*"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("`--only LogScaleAction/*` names it"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn export_names_what_it_did_not_export() {
    let t = refusing("403:log-scale-actions").await;
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("export");
    let run = Cfgctl::new(&t)
        .args(&["export", "--out"])
        .arg(&target)
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("note: LogScaleAction not exported: the target refused its list"),
        "{}",
        run.stderr
    );
}

/// Issue 38 item 2: SLO's `collection_ref` (a `CollectionReference`) is a reference: the
/// Collection is created before the SLO and deleted after it, and the emulator holds it to
/// the same rule.
#[tokio::test]
async fn an_slo_is_ordered_after_its_collection_both_ways() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "c.yaml",
        "api_version: v1/config\nkind: Collection\nspec:\n  slug: payments\n  name: Payments\n",
    );
    write(
        dir.path(),
        "slo.yaml",
        "api_version: v1/config\nkind: SLO\nspec:\n  slug: checkout\n  name: Checkout\n  collection_ref: {type: SIMPLE, slug: payments}\n",
    );
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Collection/*\", \"SLO/*\"]\n",
    );
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--format", "json"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let order: Vec<&str> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["address"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["Collection/payments", "SLO/checkout"],
        "{}",
        run.stdout
    );
    let slo = &plan["changes"][1];
    assert_eq!(
        slo["depends_on"],
        serde_json::json!(["Collection/payments"]),
        "{slo}"
    );
    // The emulator refuses an SLO whose collection does not exist.
    let reply = t
        .create(
            Kind::named("SLO"),
            serde_json::json!({"slug": "orphan", "name": "O", "collection_ref": {"type": "SIMPLE", "slug": "nowhere"}}),
        )
        .await;
    assert_eq!(reply.status, 400, "{:?}", reply.body);
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    // Both gone from the repository: the SLO is deleted first, then its Collection.
    std::fs::remove_file(dir.path().join("c.yaml")).unwrap();
    std::fs::remove_file(dir.path().join("slo.yaml")).unwrap();
    write(
        dir.path(),
        "t.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: keep\n  name: Keep\n",
    );
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--format", "json"])
        .run()
        .await;
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let deletes: Vec<&str> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "delete")
        .map(|a| a["address"].as_str().unwrap())
        .collect();
    assert_eq!(
        deletes,
        ["SLO/checkout", "Collection/payments"],
        "{}",
        run.stdout
    );
    let run = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&[
            "apply",
            ".",
            "--prune",
            "--allow-empty-prune",
            "--auto-approve",
        ])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(
        t.read(Kind::named("Collection"), Some("payments"))
            .await
            .status,
        404
    );
}

/// Issue 38 item 3: decommissioning. A folder that holds only `cfgctl.yaml` prunes its scope
/// with `apply --prune --allow-empty-prune`, within `max_deletes`; without the flag apply
/// refuses, and a folder with neither manifests nor prune patterns is still refused.
#[tokio::test]
async fn a_folder_of_only_cfgctl_yaml_decommissions_its_scope() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    for slug in ["a", "b", "c"] {
        write(
            dir.path(),
            &format!("{slug}.yaml"),
            &format!("api_version: v1/config\nkind: Team\nspec:\n  slug: {slug}\n  name: {slug}\n"),
        );
    }
    let apply = |args: &'static [&'static str]| Cfgctl::new(&t).dir(dir.path()).args(args).run();
    assert_eq!(apply(&["apply", ".", "--auto-approve"]).await.code, 0);
    for slug in ["a", "b", "c"] {
        std::fs::remove_file(dir.path().join(format!("{slug}.yaml"))).unwrap();
    }
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Team/*\"]\nmax_deletes: 2\n",
    );
    let run = apply(&[
        "apply",
        ".",
        "--prune",
        "--allow-empty-prune",
        "--auto-approve",
    ])
    .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.transcript().contains("max_deletes"),
        "{}",
        run.transcript()
    );
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Team/*\"]\nmax_deletes: 3\n",
    );
    let run = apply(&["apply", ".", "--prune", "--auto-approve"]).await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.transcript().contains("--allow-empty-prune"),
        "{}",
        run.transcript()
    );
    assert_eq!(t.read(Kind::named("Team"), Some("a")).await.status, 200);
    let run = apply(&[
        "apply",
        ".",
        "--prune",
        "--allow-empty-prune",
        "--auto-approve",
    ])
    .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    for slug in ["a", "b", "c"] {
        assert_eq!(
            t.read(Kind::named("Team"), Some(slug)).await.status,
            404,
            "{slug}"
        );
    }
    write(dir.path(), "cfgctl.yaml", "max_deletes: 3\n");
    let run = apply(&["plan", "."]).await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("no manifests in"), "{}", run.stderr);
}

/// Issue 38 item 4: a `cfgctl.yaml` below the folder is an error for plan, apply and drift
/// (its rules would silently not apply); validate warns.
#[tokio::test]
async fn a_settings_file_below_the_folder_stops_plan_apply_and_drift() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "teams/team.yaml", TEAM);
    write(dir.path(), "teams/cfgctl.yaml", "prune: [\"Team/*\"]\n");
    for args in [
        &["plan", ".", "--prune"][..],
        &["apply", ".", "--auto-approve"],
        &["drift", "."],
    ] {
        let run = Cfgctl::new(&t).dir(dir.path()).args(args).run().await;
        assert_eq!(run.code, 1, "{args:?}: {}", run.transcript());
        assert!(
            run.stderr
                .contains("teams/cfgctl.yaml:1:1: error: a settings file below the root")
                && run.stderr.contains(
                    "prune patterns, policy, max_deletes and ignore rules would not apply"
                ),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            !run.transcript().contains("has no prune patterns"),
            "{}",
            run.transcript()
        );
    }
    assert_eq!(
        t.read(Kind::named("Team"), Some("platform")).await.status,
        404
    );
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("teams/cfgctl.yaml:1:1: warning: a settings file below the root"),
        "{}",
        run.transcript()
    );
}

/// Issue 38 item 5: the formats the description declares (`date-time`) are checked by
/// `validate` (located) and by the emulator.
#[tokio::test]
async fn a_date_time_the_description_declares_is_checked_by_validate_and_the_emulator() {
    let dir = tempfile::tempdir().unwrap();
    let rule = |starts_at: &str| {
        format!("api_version: v1/config\nkind: MutingRule\nspec:\n  slug: m\n  name: M\n  starts_at: \"{starts_at}\"\n  ends_at: \"2024-01-02T00:00:00Z\"\n  label_matchers:\n    - {{name: a, value: b, type: EXACT}}\n")
    };
    write(dir.path(), "m.yaml", &rule("2024-01-01T12:99:00Z"));
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stdout.contains("m.yaml:6:14: error: MutingRule/m: `starts_at`: \"2024-01-01T12:99:00Z\" is not a valid date-time"),
        "{}",
        run.transcript()
    );
    write(dir.path(), "m.yaml", &rule("2024-01-01T12:30:00Z"));
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let t = Tenant::full().await;
    let bad = serde_json::json!({"slug": "m", "name": "M", "starts_at": "2024-01-01T12:99:00Z",
        "ends_at": "2024-01-02T00:00:00Z", "label_matchers": [{"name": "a", "value": "b", "type": "EXACT"}]});
    let reply = t.create(Kind::named("MutingRule"), bad.clone()).await;
    assert_eq!(reply.status, 400, "{:?}", reply.body);
    assert!(reply.message().contains("date-time"), "{}", reply.message());
    let mut good = bad;
    good["starts_at"] = "2024-01-01T12:30:00Z".into();
    assert_eq!(t.create(Kind::named("MutingRule"), good).await.status, 200);
}
