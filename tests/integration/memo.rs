//! The no-change memo (`cfgctl::ops::memo`) from the outside: a remembered plan prints exactly what
//! planning prints, and nothing that changed (on the target, in the files, in the options) is
//! ever answered from it.

use std::path::Path;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::json;

use crate::support::{scratch_copy, seeded, write, Cfgctl, Run, Tenant};

/// The log line of a plan answered from the memo.
const RECALLED: &str = "the manifests and the target are as at a no-change plan";

/// `cfgctl --url T ARGS` in `dir` with the cache in `cache` and the info log on.
async fn run(t: &Tenant, dir: &Path, cache: &Path, args: &[&str]) -> Run {
    Cfgctl::new(t)
        .dir(dir)
        .args(args)
        .env("CFGCTL_CACHE_DIR", cache)
        .env("CFGCTL_LOG", "cfgctl=info")
        .run()
        .await
}

fn recalled(r: &Run) -> bool {
    r.stderr.contains(RECALLED)
}

fn entries(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("plans")).map_or(0, |d| d.count())
}

#[tokio::test]
async fn a_remembered_plan_prints_what_planning_prints() {
    let t = seeded(Config::default()).await;
    let dir = scratch_copy();
    let cache = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 5] = [
        &["plan", ".", "--detailed-exitcode"],
        &["plan", ".", "--format", "json"],
        &["plan", ".", "--format", "markdown"],
        &["drift", "."],
        &["drift", ".", "--format", "json"],
    ];
    for args in runs {
        let first = run(&t, dir.path(), cache.path(), args).await;
        let second = run(&t, dir.path(), cache.path(), args).await;
        assert_eq!(first.code, 0, "{args:?}: {}", first.transcript());
        assert!(
            recalled(&second),
            "{args:?} not recalled: {}",
            second.stderr
        );
        assert_eq!(first.code, second.code, "{args:?}");
        assert_eq!(first.stdout, second.stdout, "{args:?}");
        assert!(
            second.stdout.contains("unchanged")
                || second.stdout.contains("No changes")
                || second.stdout.contains("No drift"),
            "{args:?}: {}",
            second.stdout
        );
    }
    // One entry: the format is not part of what a plan is made from.
    assert_eq!(entries(cache.path()), 1);
    // A saved plan from the memo is the saved plan planning writes.
    let out = tempfile::tempdir().unwrap();
    let planned = out.path().join("planned.json");
    let remembered = out.path().join("remembered.json");
    let off = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--out"])
        .arg(&planned)
        .env("CFGCTL_NO_CACHE", "1")
        // The same folder, so the same user's secret seals the plan's guards.
        .env("CFGCTL_CACHE_DIR", cache.path())
        .run()
        .await;
    assert_eq!(off.code, 0, "{}", off.transcript());
    let on = run(
        &t,
        dir.path(),
        cache.path(),
        &["plan", ".", "--out", remembered.to_str().unwrap()],
    )
    .await;
    assert!(recalled(&on));
    assert_eq!(
        std::fs::read(&planned).unwrap(),
        std::fs::read(&remembered).unwrap()
    );
}

#[tokio::test]
async fn a_change_on_the_target_is_never_answered_from_the_memo() {
    let t = seeded(Config::default()).await;
    let dir = scratch_copy();
    let cache = tempfile::tempdir().unwrap();
    let args = ["plan", ".", "--detailed-exitcode"];
    assert_eq!(run(&t, dir.path(), cache.path(), &args).await.code, 0);
    assert!(recalled(&run(&t, dir.path(), cache.path(), &args).await));

    // Changed by hand.
    let team = t.read(Kind::named("Team"), Some("platform")).await;
    let mut object = team.body["team"].clone();
    object["name"] = json!("Platform (renamed by hand)");
    for read_only in ["created_at", "updated_at"] {
        object.as_object_mut().unwrap().remove(read_only);
    }
    assert_eq!(
        t.update(Kind::named("Team"), Some("platform"), object)
            .await
            .status,
        200
    );
    let changed = run(&t, dir.path(), cache.path(), &args).await;
    assert!(!recalled(&changed));
    assert_eq!(changed.code, 2, "{}", changed.transcript());
    assert!(
        changed.stdout.contains("Platform (renamed by hand)"),
        "{}",
        changed.stdout
    );

    // Deleted by hand.
    let dashboard = Kind::named("Dashboard");
    let listed = t
        .client()
        .list_all(dashboard, &Default::default())
        .await
        .unwrap()
        .0;
    let slug = listed[0]["slug"].as_str().unwrap().to_string();
    assert_eq!(t.delete(dashboard, Some(&slug), "").await.status, 200);
    let deleted = run(&t, dir.path(), cache.path(), &args).await;
    assert!(!recalled(&deleted));
    assert_eq!(deleted.code, 2);
    assert!(
        deleted.stdout.contains(&format!("Dashboard/{slug}")),
        "{}",
        deleted.stdout
    );

    // Added by hand, in the prune scope: drift, remembered or not.
    let apply = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(apply.code, 0, "{}", apply.transcript());
    let clean = run(&t, dir.path(), cache.path(), &["drift", "."]).await;
    assert_eq!(clean.code, 0, "{}", clean.transcript());
    let collection = listed[0]["collection_slug"].clone();
    let stray = t
        .create(
            dashboard,
            json!({"slug": "stray-by-hand", "name": "Stray", "collection_slug": collection}),
        )
        .await;
    assert_eq!(stray.status, 200, "{stray:?}");
    for _ in 0..2 {
        let drift = run(&t, dir.path(), cache.path(), &["drift", "."]).await;
        assert_eq!(drift.code, 2, "{}", drift.transcript());
        assert!(
            drift.stdout.contains("Dashboard/stray-by-hand"),
            "{}",
            drift.stdout
        );
    }
    // The second drift run was the remembered one (no action, an unmanaged resource in scope).
    assert!(recalled(
        &run(&t, dir.path(), cache.path(), &["drift", "."]).await
    ));
}

#[tokio::test]
async fn a_change_in_the_files_or_the_options_is_never_answered_from_the_memo() {
    let t = seeded(Config::default()).await;
    let dir = scratch_copy();
    let cache = tempfile::tempdir().unwrap();
    let args = ["plan", ".", "--detailed-exitcode"];
    assert_eq!(run(&t, dir.path(), cache.path(), &args).await.code, 0);

    // One byte of one file.
    let teams = std::fs::read_dir(dir.path().join("teams"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&teams).unwrap();
    std::fs::write(&teams, text.replacen("name: Platform", "name: Platforn", 1)).unwrap();
    let edited = run(&t, dir.path(), cache.path(), &args).await;
    assert!(!recalled(&edited));
    assert_eq!(edited.code, 2, "{}", edited.transcript());
    assert!(edited.stdout.contains("Platforn"));
    std::fs::write(&teams, &text).unwrap();
    assert!(recalled(&run(&t, dir.path(), cache.path(), &args).await));

    // A new file, and the settings file.
    write(
        dir.path(),
        "teams/extra.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: extra\n  name: Extra\n",
    );
    let added = run(&t, dir.path(), cache.path(), &args).await;
    assert!(!recalled(&added));
    assert!(added.stdout.contains("Team/extra"), "{}", added.stdout);
    std::fs::remove_file(dir.path().join("teams/extra.yaml")).unwrap();
    let settings = std::fs::read_to_string(dir.path().join("cfgctl.yaml")).unwrap();
    std::fs::write(
        dir.path().join("cfgctl.yaml"),
        settings.replace("max_deletes: 10", "max_deletes: 0"),
    )
    .unwrap();
    let guarded = run(
        &t,
        dir.path(),
        cache.path(),
        &["plan", ".", "--detailed-exitcode"],
    )
    .await;
    assert!(!recalled(&guarded));
    assert_eq!(guarded.code, 0, "{}", guarded.transcript());
    std::fs::write(dir.path().join("cfgctl.yaml"), &settings).unwrap();

    // The options that reach the planner.
    for extra in [&["--prune"][..], &["--only", "Team/*"][..]] {
        let mut with: Vec<&str> = args.to_vec();
        with.extend_from_slice(extra);
        let first = run(&t, dir.path(), cache.path(), &with).await;
        assert!(!recalled(&first), "{extra:?}");
        assert!(
            recalled(&run(&t, dir.path(), cache.path(), &with).await),
            "{extra:?}"
        );
    }
    // Off: nothing read, nothing written.
    let off_cache = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let off = Cfgctl::new(&t)
            .dir(dir.path())
            .args(&args)
            .env("CFGCTL_CACHE_DIR", off_cache.path())
            .env("CFGCTL_LOG", "cfgctl=info")
            .arg("--no-cache")
            .run()
            .await;
        assert_eq!(off.code, 0);
        assert!(!recalled(&off));
    }
    assert_eq!(entries(off_cache.path()), 0);
}

#[cfg(unix)]
#[tokio::test]
async fn a_cache_others_may_write_is_not_used_and_the_token_is_never_in_it() {
    use std::os::unix::fs::PermissionsExt;
    let token = "memo-test-token-5f1c9e";
    let t = seeded(Config {
        token: Some(token.into()),
        ..Config::default()
    })
    .await;
    let dir = scratch_copy();
    let cache = tempfile::tempdir().unwrap();
    let with_token = |c: Cfgctl| c.env("CFGCTL_TOKEN", token);
    for _ in 0..2 {
        let r = with_token(Cfgctl::new(&t))
            .dir(dir.path())
            .args(&["plan", "."])
            .env("CFGCTL_CACHE_DIR", cache.path())
            .run()
            .await;
        assert_eq!(r.code, 0, "{}", r.transcript());
    }
    assert_eq!(entries(cache.path()), 1);
    for entry in walkdir::WalkDir::new(cache.path()) {
        let entry = entry.unwrap();
        assert!(!entry.file_name().to_string_lossy().contains(token));
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(!String::from_utf8_lossy(&bytes).contains(token));
        }
    }
    // Without the token (another key), the entry is not this target's.
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = with_token(Cfgctl::new(&t))
        .dir(dir.path())
        .args(&["plan", "."])
        .env("CFGCTL_CACHE_DIR", shared.path())
        .env("CFGCTL_LOG", "cfgctl=info")
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stderr.contains("others may write it"), "{}", r.stderr);
    assert!(!r.stderr.contains(token));
    assert_eq!(entries(shared.path()), 0);
}

/// A repository whose manifests read a variable or a data file outside secret fields (a
/// dashboard kept in its own file, `description: ${env:DESC}`) is remembered too, and a change
/// of the variable's value or of the data file is never answered from the memo.
#[tokio::test]
async fn a_variable_or_data_file_the_manifests_read_is_checked_again() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n  description: ${env:MEMO_DESC}\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n  description: ${file:desc.txt}\n",
    );
    write(dir.path(), "desc.txt", "first\n");
    let plan = |desc: &'static str| {
        Cfgctl::new(&t)
            .dir(dir.path())
            .args(&["plan", ".", "--detailed-exitcode"])
            .env("CFGCTL_CACHE_DIR", cache.path())
            .env("CFGCTL_LOG", "cfgctl=info")
            .env("MEMO_DESC", desc)
            .run()
    };
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .env("MEMO_DESC", "one")
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = plan("one").await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(!recalled(&r), "{}", r.transcript());
    let r = plan("one").await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        recalled(&r),
        "the second no-change plan is remembered: {}",
        r.transcript()
    );
    // Another value of the variable: planned again, and the change shown.
    let r = plan("two").await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    assert!(!recalled(&r), "{}", r.transcript());
    assert!(r.stdout.contains("\"two\""), "{}", r.stdout);
    // The data file changed (no manifest file did): planned again.
    write(dir.path(), "desc.txt", "second\n");
    let r = plan("one").await;
    assert_eq!(r.code, 2, "{}", r.transcript());
    assert!(!recalled(&r), "{}", r.transcript());
    assert!(r.stdout.contains("second"), "{}", r.stdout);
}
