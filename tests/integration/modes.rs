//! Management modes (`manage:` in cfgctl.yaml): `create-only` ignores an edit on the target,
//! `no-delete` keeps a resource removed from the manifests as `orphaned` even with `--prune`,
//! `observe` never writes and `drift` reports it; each through `apply DIR` and through a saved
//! plan, and a saved plan edited to break a mode is refused with nothing sent.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, write, Cfgctl, Run, Tenant};

fn team() -> Kind {
    Kind::named("Team")
}

/// The requests that write (anything but a read).
fn writes(t: &Tenant) -> Vec<String> {
    t.emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method != "GET")
        .map(|l| format!("{} {}", l.method, l.path))
        .collect()
}

fn manifest(dir: &std::path::Path, slug: &str, name: &str) {
    write(
        dir,
        &format!("{slug}.yaml"),
        &format!("api_version: v1/config\nkind: Team\nspec: {{slug: {slug}, name: {name}}}\n"),
    );
}

/// A tenant holding `teams` (slug, name) and a repository with `settings` as its cfgctl.yaml.
async fn setup(teams: &[(&str, &str)], settings: &str) -> (Tenant, tempfile::TempDir) {
    let t = Tenant::start(Config::default()).await;
    for (slug, name) in teams {
        let r = t.create(team(), json!({"slug": slug, "name": name})).await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", settings);
    t.emulator.reset_stats();
    (t, dir)
}

async fn run(t: &Tenant, dir: &tempfile::TempDir, args: &[&str]) -> Run {
    Cfgctl::new(t).dir(dir.path()).args(args).run().await
}

/// `apply .` (with `extra`), or `plan . --out FILE` (with `extra`) then `apply FILE`.
async fn apply(t: &Tenant, dir: &tempfile::TempDir, saved: bool, extra: &[&str]) -> Run {
    if !saved {
        let mut args = vec!["apply", ".", "--auto-approve"];
        args.extend(extra);
        return run(t, dir, &args).await;
    }
    // Beside the repository, not in it (where it would be read as a manifest).
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("p.json");
    let file = file.to_str().unwrap();
    let mut args = vec!["plan", ".", "--out", file];
    args.extend(extra);
    let r = run(t, dir, &args).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    run(t, dir, &["apply", file, "--auto-approve"]).await
}

const CREATE_ONLY: &str = "manage:\n  - {match: \"Team/team-*\", mode: create-only}\n";

#[tokio::test]
async fn create_only_is_created_once_and_ignores_an_edit_on_the_target() {
    for saved in [false, true] {
        let (t, dir) = setup(&[("team-a", "Edited in the UI")], CREATE_ONLY).await;
        manifest(dir.path(), "team-a", "Team A");
        manifest(dir.path(), "team-b", "Team B");
        let r = apply(&t, &dir, saved, &[]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        // Missing: created; edited on the target: left alone.
        assert_eq!(
            writes(&t),
            vec!["POST /api/v1/config/teams"],
            "saved {saved}"
        );
        let a = t.read(team(), Some("team-a")).await;
        assert!(a.body.to_string().contains("Edited in the UI"), "{a:?}");
        // No diff and no drift for the edit.
        let r = run(&t, &dir, &["drift", "."]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        let r = run(&t, &dir, &["plan", ".", "--detailed-exitcode"]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        assert!(r.stdout.contains("No changes"), "{}", r.stdout);
    }
}

const NO_DELETE: &str =
    "prune: [\"Team/*\"]\nmanage:\n  - {match: \"Team/slo-*\", mode: no-delete}\n";

#[tokio::test]
async fn no_delete_keeps_a_removed_resource_as_orphaned_even_with_prune() {
    for saved in [false, true] {
        let teams = [("slo-a", "A"), ("slo-b", "B"), ("scratch", "S")];
        let (t, dir) = setup(&teams, NO_DELETE).await;
        manifest(dir.path(), "slo-b", "B");
        let r = run(&t, &dir, &["plan", ".", "--prune", "--format", "json"]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(doc["orphaned"], json!(["Team/slo-a"]));
        assert_eq!(doc["unmanaged"], json!([]));
        assert_eq!(doc["summary"]["delete"], json!(1));
        t.emulator.reset_stats();
        let r = apply(&t, &dir, saved, &["--prune"]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        assert_eq!(
            writes(&t),
            vec!["DELETE /api/v1/config/teams/scratch"],
            "saved {saved}"
        );
        assert_eq!(t.read(team(), Some("slo-a")).await.status, 200);
        // Kept on purpose: not drift.
        let r = run(&t, &dir, &["drift", "."]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        assert!(r.stdout.contains("1 orphaned resource"), "{}", r.stdout);
    }
}

const OBSERVE: &str = "prune: [\"Team/*\"]\nmanage:\n  - {match: \"Team/obs-*\", mode: observe}\n";

#[tokio::test]
async fn observe_never_writes_and_drift_reports_it() {
    for saved in [false, true] {
        let teams = [("obs-changed", "On the target"), ("obs-removed", "R")];
        let (t, dir) = setup(&teams, OBSERVE).await;
        manifest(dir.path(), "obs-changed", "In the manifest");
        manifest(dir.path(), "obs-missing", "M");
        let r = apply(&t, &dir, saved, &["--prune"]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        assert_eq!(writes(&t), Vec::<String>::new(), "saved {saved}");
        assert!(r.stdout.contains("Nothing to apply."), "{}", r.stdout);
        let r = run(&t, &dir, &["drift", ".", "--format", "json"]).await;
        assert_eq!(r.code, 2, "{}", r.transcript());
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        let drift: Vec<String> = doc["drift"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d["class"].as_str().unwrap(),
                    d["address"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            drift,
            vec!["changed Team/obs-changed", "deleted Team/obs-missing"]
        );
        assert_eq!(doc["orphaned"], json!(["Team/obs-removed"]));
        assert_eq!(doc["changes"], json!([]));
    }
    // Matching the target, observe is no drift.
    let (t, dir) = setup(&[("obs-same", "S")], OBSERVE).await;
    manifest(dir.path(), "obs-same", "S");
    let r = run(&t, &dir, &["drift", "."]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}

/// A saved plan edited by hand to update an observed resource (its change taken from a plan
/// made without the mode): refused with nothing sent, whether the file's modes are sealed
/// (they count) or stripped (apply's own cfgctl.yaml counts).
#[tokio::test]
async fn a_saved_plan_edited_to_write_an_observed_resource_is_refused() {
    for strip in [false, true] {
        let (t, dir) = setup(&[("obs-a", "On the target")], OBSERVE).await;
        manifest(dir.path(), "obs-a", "In the manifest");
        let r = run(&t, &dir, &["plan", ".", "--out", "p.json"]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        let full = tempfile::tempdir().unwrap();
        manifest(full.path(), "obs-a", "In the manifest");
        let r = run(&t, &full, &["plan", ".", "--out", "p.json"]).await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        let read = |d: &tempfile::TempDir| -> Value {
            serde_json::from_str(&std::fs::read_to_string(d.path().join("p.json")).unwrap())
                .unwrap()
        };
        let (mut doc, other) = (read(&dir), read(&full));
        assert_eq!(doc["changes"], json!([]));
        assert_eq!(
            doc["guards"]["manage"],
            json!([{"match": "Team/obs-*", "mode": "observe"}])
        );
        doc["changes"] = other["changes"].clone();
        doc["summary"] = other["summary"].clone();
        if strip {
            doc["guards"].as_object_mut().unwrap().remove("manage");
        }
        std::fs::write(dir.path().join("p.json"), doc.to_string()).unwrap();
        t.emulator.reset_stats();
        let r = run(&t, &dir, &["apply", "p.json", "--auto-approve"]).await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.stderr.contains(
                "refusing to apply: the plan would update Team/obs-a, whose mode in cfgctl.yaml is observe"
            ),
            "{}",
            r.stderr
        );
        assert_eq!(writes(&t), Vec::<String>::new(), "strip {strip}");
    }
}

#[tokio::test]
async fn the_text_plan_shows_observed_and_orphaned() {
    let settings = "prune: [\"Team/*\"]\nmanage:\n  - {match: \"Team/obs-*\", mode: observe}\n  - {match: \"Team/keep-*\", mode: no-delete}\n  - {match: \"Team/new-*\", mode: create-only}\n  - {match: \"Monitor/*\", mode: observe}\n";
    let teams = [("obs-changed", "On the target"), ("keep-old", "K")];
    let (t, dir) = setup(&teams, settings).await;
    manifest(dir.path(), "obs-changed", "In the manifest");
    manifest(dir.path(), "obs-missing", "M");
    manifest(dir.path(), "new-team", "N");
    let r = run(&t, &dir, &["plan", ".", "--prune"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    cfgctl_snapshot!(r.stdout);
    let r = run(&t, &dir, &["plan", ".", "--prune", "--format", "markdown"]).await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    cfgctl_snapshot!("markdown", r.stdout);
}
