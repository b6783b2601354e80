//! `cfgctl export`: a zero-diff round trip, byte-identical twice, safe with existing folders;
//! and `cfgctl completions`.

use std::collections::BTreeMap;
use std::path::Path;

use cfgctl::emulator::Config;
use cfgctl::registry::Kind;

use crate::support::{cfgctl_snapshot, scratch_copy, seeded, Cfgctl};

fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        // The export's own index is not one of the manifests.
        .filter(|e| e.file_type().is_file() && e.file_name() != ".cfgctl-export.json")
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn export_then_plan_shows_no_change_and_twice_is_identical() {
    // Every kind, dashboards rewritten by the server (ids, versions, metadata), one updated
    // so its version moved on.
    let t = seeded(Config::default()).await;
    let r = Cfgctl::new(&t)
        .args(&["apply", "fixtures/valid", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let changed = scratch_copy();
    let path = changed.path().join("dashboards/payments-overview.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("duration: \"6h\"", "duration: \"12h\"");
    std::fs::write(&path, text).unwrap();
    let d = changed.path().to_str().unwrap().to_string();
    let r = Cfgctl::new(&t)
        .args(&["apply", &d, "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("1 done"), "{}", r.stdout);

    let out = tempfile::tempdir().unwrap();
    let first = out.path().join("first");
    let second = out.path().join("second");
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", first.to_str().unwrap()])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(
        r.stdout,
        format!(
            "exported 19 resources (13 kinds) from [TARGET] to {}\n",
            first.display()
        )
    );
    let files = tree(&first);
    assert_eq!(files.len(), 19);
    assert!(files.contains_key("resource-pools.yaml"));
    assert!(files.contains_key("classic-dashboards/platform-nodes.yaml"));
    let dash = String::from_utf8(files["dashboards/payments-overview.yaml"].clone()).unwrap();
    assert!(
        dash.contains("dashboard_json:\n    kind: Dashboard"),
        "documents are YAML: {dash}"
    );
    assert!(
        !dash.contains("created_at") && !dash.contains(" version:"),
        "no server-owned members: {dash}"
    );

    let plan = Cfgctl::new(&t)
        .dir(&first)
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
    assert!(plan
        .stdout
        .contains("No changes: the target matches the manifests (19 resources)."));

    let r = Cfgctl::new(&t)
        .args(&["export", "--out", second.to_str().unwrap()])
        .run()
        .await;
    assert_eq!(r.code, 0);
    assert_eq!(
        tree(&first),
        tree(&second),
        "two exports of one state differ"
    );
    cfgctl_snapshot!(
        "exported_bucket",
        String::from_utf8(files["buckets/platform.yaml"].clone()).unwrap()
    );
}

#[tokio::test]
async fn export_refuses_a_non_empty_folder_and_force_replaces_only_its_own_files() {
    let t = seeded(Config::default()).await;
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("README.md"), "# our config\n").unwrap();
    let o = out.path().to_str().unwrap();
    let r = Cfgctl::new(&t).args(&["export", "--out", o]).run().await;
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        format!("error: `{o}` is not empty: pass --force to replace the manifests of an earlier export there\n")
    );
    assert_eq!(tree(out.path()).len(), 1, "nothing written");
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", o, "--force"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // A team deleted on the target disappears from the next export; README stays.
    t.delete(Kind::Monitor, Some("payments-gateway-latency"), "")
        .await;
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", o, "--force", "--only", "Monitor/*"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let files = tree(out.path());
    assert!(files.contains_key("README.md"));
    let monitors: Vec<&String> = files
        .keys()
        .filter(|k| k.starts_with("monitors/"))
        .collect();
    assert_eq!(monitors.len(), 3, "{monitors:?}");
    assert!(
        !files.contains_key("teams/platform.yaml"),
        "--only exports only the matches"
    );
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let r = Cfgctl::bare().args(&["completions", shell]).run_blocking();
        assert_eq!(r.code, 0, "{shell}");
        assert!(r.stdout.contains("cfgctl"), "{shell}");
        assert!(
            r.stdout.contains("export") && r.stdout.contains("auto-approve"),
            "{shell}"
        );
    }
    let r = Cfgctl::bare().args(&["completions", "tcsh"]).run_blocking();
    assert_eq!(r.code, 1);
}

/// Issue 9.2 and 9.11: `--force` never deletes or overwrites a file no export wrote, never
/// writes through a symlink, and a slug too long for a file name still exports.
#[tokio::test]
async fn export_force_keeps_other_files_and_refuses_symlinks() {
    let t = seeded(Config::default()).await;
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let r = Cfgctl::new(&t).args(&["export", "--out", o]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let notes = "# hand-written notes, not a manifest\n";
    std::fs::write(out.path().join("teams/notes.yaml"), notes).unwrap();
    let extra = "api_version: v1/config\nkind: Team\nspec: {slug: extra, name: Extra}\n";
    std::fs::write(out.path().join("teams/extra.yaml"), extra).unwrap();
    // A resource deleted on the target: its exported file goes, the others stay.
    t.delete(Kind::Monitor, Some("payments-gateway-latency"), "")
        .await;
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", o, "--force"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let files = tree(out.path());
    assert_eq!(files["teams/notes.yaml"], notes.as_bytes());
    assert_eq!(files["teams/extra.yaml"], extra.as_bytes());
    assert!(!files.contains_key("monitors/payments-gateway-latency.yaml"));

    // A hand-written file where the export wants to write: refused, nothing changed.
    t.create(
        Kind::Team,
        serde_json::json!({"slug": "notes", "name": "Notes"}),
    )
    .await;
    let before = tree(out.path());
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", o, "--force"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("notes.yaml exists and no earlier export wrote it"),
        "{}",
        r.stderr
    );
    assert_eq!(tree(out.path()), before, "nothing changed");
    t.delete(Kind::Team, Some("notes"), "").await;

    // A folder symlink inside the output folder is never written through.
    #[cfg(unix)]
    {
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::rename(out.path().join("buckets"), elsewhere.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), out.path().join("buckets")).unwrap();
        let r = Cfgctl::new(&t)
            .args(&["export", "--out", o, "--force"])
            .run()
            .await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.stderr
                .contains("is a symlink: export never writes through one"),
            "{}",
            r.stderr
        );
        let leaked: Vec<_> = std::fs::read_dir(elsewhere.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leaked, vec!["moved"], "nothing written through the symlink");
    }

    // A slug longer than any file name: exported under a shortened name, read back equal.
    let long_slug = "s".repeat(400);
    t.create(
        Kind::Team,
        serde_json::json!({"slug": long_slug, "name": "Long"}),
    )
    .await;
    let fresh = tempfile::tempdir().unwrap();
    let f = fresh.path().to_str().unwrap();
    let r = Cfgctl::new(&t)
        .args(&["export", "--out", f, "--only", "Team/*"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .dir(fresh.path())
        .args(&["plan", ".", "--only", "Team/*", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}
