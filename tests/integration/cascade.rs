//! `--force-delete-buckets` on a target that cannot list every kind a bucket's cascade takes:
//! the cascade cannot be known in full, so apply refuses it, naming the kinds, and sends
//! nothing (from a directory and from a saved plan, however the file was edited).

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{write, Cfgctl, Tenant};

fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap()
}

/// The embedded description without the operation `method` of `path`.
fn description_without(dir: &std::path::Path, path: &str, method: &str) -> std::path::PathBuf {
    let mut doc: Value = serde_json::from_str(cfgctl::api::spec::SWAGGER_JSON).unwrap();
    let ops = doc["paths"][path].as_object_mut().unwrap();
    assert!(ops.remove(method).is_some());
    let file = dir.join("swagger.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    file
}

/// A tenant that holds Bucket/old and an excluded Monitor/m in it, and whose description
/// (served from then on) cannot list monitors.
async fn tenant_blind_to_monitors(scratch: &std::path::Path) -> Tenant {
    let data = scratch.join("tenant.db");
    {
        let t = Tenant::start(Config {
            data: Some(data.clone()),
            ..Config::default()
        })
        .await;
        let r = t
            .create(kind("Bucket"), json!({"slug": "old", "name": "Old"}))
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        let monitor = json!({"slug": "m", "name": "M", "bucket_slug": "old",
            "prometheus_query": "up"});
        let r = t.create(kind("Monitor"), monitor).await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let swagger = description_without(scratch, "/api/v1/config/monitors", "get");
    Tenant::start(Config {
        data: Some(data),
        swagger: Some(swagger),
        ..Config::default()
    })
    .await
}

fn repo(dir: &std::path::Path) {
    write(
        dir,
        "cfgctl.yaml",
        "prune: [\"Bucket/*\"]\nexclude: [\"Monitor/m\"]\n",
    );
    write(
        dir,
        "bucket.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: keep, name: Keep}\n",
    );
}

fn deletes(t: &Tenant) -> Vec<String> {
    t.emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method == "DELETE")
        .map(|l| l.path.clone())
        .collect()
}

#[tokio::test]
async fn a_cascade_into_a_kind_the_target_cannot_list_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let t = tenant_blind_to_monitors(scratch.path()).await;
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let args = [
        "apply",
        ".",
        "--prune",
        "--auto-approve",
        "--force-delete-buckets",
    ];
    let r = Cfgctl::new(&t).dir(dir.path()).args(&args).run().await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "#   Monitor (any that reference it: the target cannot list this kind, so what the cascade takes is unknown; apply refuses this)"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains(
            "--force-delete-buckets would make the delete of Bucket/old take Monitor (any that reference it: the target cannot list this kind"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("nothing was changed"), "{}", r.stderr);
    assert_eq!(deletes(&t), Vec::<String>::new());
    assert_eq!(t.read(kind("Monitor"), Some("m")).await.status, 200);
    assert_eq!(t.read(kind("Bucket"), Some("old")).await.status, 200);
}

#[tokio::test]
async fn a_saved_plan_cannot_hide_an_unknowable_cascade() {
    let scratch = tempfile::tempdir().unwrap();
    let t = tenant_blind_to_monitors(scratch.path()).await;
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let plan_file = dir.path().join("plan.json");
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "plan.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let saved = std::fs::read_to_string(&plan_file).unwrap();
    assert!(
        saved.contains(r#"{"address":"Monitor","status":"unread"}"#),
        "{saved}"
    );
    // As written, and with the unread member taken out of the file: refused either way, since
    // apply reads the cascade from the target again.
    let edited = saved.replace(r#"{"address":"Monitor","status":"unread"}"#, "");
    assert_ne!(edited, saved);
    for text in [&saved, &edited] {
        std::fs::write(&plan_file, text).unwrap();
        let r = Cfgctl::new(&t)
            .dir(dir.path())
            .args(&[
                "apply",
                "plan.json",
                "--auto-approve",
                "--force-delete-buckets",
            ])
            .run()
            .await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.stderr.contains(
                "would make the delete of Bucket/old take Monitor (any that reference it"
            ),
            "{}",
            r.stderr
        );
    }
    assert_eq!(deletes(&t), Vec::<String>::new());
}

#[tokio::test]
async fn a_saved_plan_sees_a_referrer_that_appeared_since() {
    let t = Tenant::full().await;
    let r = t
        .create(kind("Bucket"), json!({"slug": "old", "name": "Old"}))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "plan.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // After the plan, someone adds an excluded monitor to the bucket.
    let monitor = json!({"slug": "m", "name": "M", "bucket_slug": "old", "prometheus_query": "up"});
    assert_eq!(t.create(kind("Monitor"), monitor).await.status, 200);
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&[
            "apply",
            "plan.json",
            "--auto-approve",
            "--force-delete-buckets",
        ])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "--force-delete-buckets would make the delete of Bucket/old take Monitor/m (excluded in cfgctl.yaml) with it"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(deletes(&t), Vec::<String>::new());
}

/// The hostile tester's first repro: a seed-profile tenant cannot list NotificationPolicy, and
/// a bucket's cascade would take an excluded one.
#[tokio::test]
async fn on_a_seed_tenant_a_cascade_into_notification_policies_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("tenant.db");
    {
        let t = Tenant::start(Config {
            data: Some(data.clone()),
            ..Config::default()
        })
        .await;
        let r = t
            .create(kind("Bucket"), json!({"slug": "old", "name": "Old"}))
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        let policy = json!({"slug": "np", "name": "NP", "bucket_slug": "old"});
        let r = t.create(kind("NotificationPolicy"), policy).await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let t = Tenant::start(Config {
        data: Some(data),
        profile: cfgctl::api::registry::Profile::Seed,
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Bucket/*\"]\nexclude: [\"NotificationPolicy/np\"]\n",
    );
    write(
        dir.path(),
        "bucket.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: keep, name: Keep}\n",
    );
    let args = [
        "apply",
        ".",
        "--prune",
        "--auto-approve",
        "--force-delete-buckets",
    ];
    let r = Cfgctl::new(&t).dir(dir.path()).args(&args).run().await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("--force-delete-buckets would make the delete of Bucket/old take ")
            && r.stderr.contains(
                "NotificationPolicy (any that reference it: the target cannot list this kind"
            ),
        "{}",
        r.stderr
    );
    assert_eq!(deletes(&t), Vec::<String>::new());
}
