use serde_json::json;

use super::*;
use crate::manifest::vars::tests::{load_env, messages};

const SETTINGS: &str = "environments:\n  staging:\n    vars: {region: eu}\n    overlay: envs/staging\n  prod:\n    vars: {region: us}\n";

const BASE: &str = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: platform\n  name: Platform\n  description: Everything\n  labels:\n    team: platform\n    cost: \"41\"\n    region: ${var:region}\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: legacy\n  name: Legacy\n";

const OVERLAY: &str = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: platform\n  description: null\n  labels:\n    cost: null\n    tier: ${var:region}-gold\n---\napi_version: v1/config\nkind: Bucket\ncfgctl: {omit: true}\nspec: {slug: legacy}\n---\napi_version: v1/config\nkind: Team\nspec: {slug: staging-only, name: Staging}\n";

fn repo(overlay: &str) -> Vec<(&'static str, String)> {
    vec![
        ("cfgctl.yaml", SETTINGS.to_string()),
        ("buckets.yaml", BASE.to_string()),
        ("envs/staging/patch.yaml", overlay.to_string()),
    ]
}

fn load(files: &[(&'static str, String)], env: Option<&str>) -> (tempfile::TempDir, Loaded) {
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    load_env(&files, env)
}

fn addresses(loaded: &Loaded) -> Vec<String> {
    loaded
        .manifests
        .iter()
        .map(|m| m.address().to_string())
        .collect()
}

#[test]
fn merge_patch_removes_merges_and_replaces() {
    let mut target = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2], "f": "x"});
    merge_patch(
        &mut target,
        &json!({"a": null, "b": {"c": null, "g": {"h": 4}}, "e": [3], "f": {"i": null, "j": 5}}),
    );
    assert_eq!(
        target,
        json!({"b": {"d": 3, "g": {"h": 4}}, "e": [3], "f": {"j": 5}})
    );
}

#[test]
fn overlay_patches_adds_and_omits_with_provenance() {
    let (d, loaded) = load(&repo(OVERLAY), Some("staging"));
    assert_eq!(messages(&loaded, &d), Vec::<String>::new());
    assert_eq!(addresses(&loaded), ["Bucket/platform", "Team/staging-only"]);
    let platform = &loaded.manifests[0];
    assert_eq!(
        *platform.spec,
        json!({"slug": "platform", "name": "Platform", "labels": {"team": "platform", "region": "eu", "tier": "eu-gold"}})
    );
    let address = platform.address();
    let base = d.path().join("buckets.yaml");
    let overlay = d.path().join("envs/staging/patch.yaml");
    let origin = |pointer: &str| loaded.provenance(&address, pointer).unwrap();
    assert_eq!(
        origin("/name"),
        FieldOrigin {
            file: base.clone(),
            line: 5,
            from_var: None
        }
    );
    assert_eq!(
        origin("/labels/region"),
        FieldOrigin {
            file: base,
            line: 10,
            from_var: Some("region".into())
        }
    );
    assert_eq!(
        origin("/labels/tier"),
        FieldOrigin {
            file: overlay.clone(),
            line: 8,
            from_var: Some("region".into())
        }
    );
    assert_eq!(
        origin("/description"),
        FieldOrigin {
            file: overlay,
            line: 5,
            from_var: None
        },
        "a field the overlay removed was written there"
    );
}

#[test]
fn overlay_files_are_not_base_manifests() {
    for env in [None, Some("prod")] {
        let (d, loaded) = load(&repo(OVERLAY), env);
        assert_eq!(
            addresses(&loaded),
            ["Bucket/platform", "Bucket/legacy"],
            "{env:?}"
        );
        assert_eq!(loaded.manifest_files, 1);
        if env.is_none() {
            // The base alone uses a variable: no environment selected.
            assert_eq!(messages(&loaded, &d).len(), 1);
        } else {
            assert_eq!(messages(&loaded, &d), Vec::<String>::new());
            assert_eq!(loaded.manifests[0].spec["labels"]["region"], json!("us"));
        }
    }
}

#[test]
fn omitting_an_address_the_base_lacks_is_located() {
    let overlay = "api_version: v1/config\nkind: Bucket\ncfgctl: {omit: true}\nspec: {slug: legcy}\n---\napi_version: v1/config\nkind: Bucket\ncfgctl: {omit: yes}\nspec: {slug: legacy, name: X}\n";
    let (d, loaded) = load(&repo(overlay), Some("staging"));
    assert_eq!(
        messages(&loaded, &d),
        [
            "envs/staging/patch.yaml:3:1: error: overlay: omits Bucket/legcy, which no base manifest declares",
            "envs/staging/patch.yaml:8:9: error: overlay: `cfgctl` holds `omit: true` and nothing else",
        ]
    );
}

#[test]
fn a_patch_is_checked_with_the_base_and_located_in_the_overlay() {
    let overlay = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: platform\n  labels: [x]\n";
    let (d, loaded) = load(&repo(overlay), Some("staging"));
    let shown = messages(&loaded, &d);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with("envs/staging/patch.yaml:5:11: error: Bucket/platform:"),
        "{shown:?}"
    );
}

#[test]
fn a_missing_overlay_directory_is_an_error_at_its_setting() {
    let files = vec![
        ("cfgctl.yaml", SETTINGS.to_string()),
        ("buckets.yaml", BASE.to_string()),
    ];
    let (d, loaded) = load(&files, Some("staging"));
    assert_eq!(
        messages(&loaded, &d),
        ["cfgctl.yaml:4:14: error: overlay: environment `staging`: overlay directory `envs/staging` does not exist"]
    );
    // A file where the directory belongs is said to be one (red team E15: "does not exist").
    let files = vec![
        ("cfgctl.yaml", SETTINGS.to_string()),
        ("buckets.yaml", BASE.to_string()),
        ("envs/staging", BASE.to_string()),
    ];
    let (d, loaded) = load(&files, Some("staging"));
    assert_eq!(
        messages(&loaded, &d),
        ["cfgctl.yaml:4:14: error: overlay: environment `staging`: `envs/staging` is a file; an overlay is a directory of manifests"]
    );
}

#[test]
fn a_file_edited_since_the_load_gives_no_line_of_its_new_text() {
    let plain = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: plain\n  name: Plain\n";
    let files = [
        ("cfgctl.yaml", SETTINGS.to_string()),
        ("plain.yaml", plain.to_string()),
    ];
    let (d, loaded) = load(&files, Some("prod"));
    assert_eq!(messages(&loaded, &d), Vec::<String>::new());
    let m = &loaded.manifests[0];
    // Read without positions: the line of a field is found by reading the file again.
    assert!(m.spans.is_empty());
    assert_eq!(loaded.provenance(&m.address(), "/name").unwrap().line, 5);
    let file = d.path().join("plain.yaml");
    std::fs::write(&file, plain.replacen("spec:\n", "spec:\n  # moved\n", 1)).unwrap();
    // Edited since: not line 6 of the new text, the document's start as loaded.
    let moved = loaded.provenance(&m.address(), "/name").unwrap();
    assert_eq!((moved.file, moved.line), (file, m.pos.line));
}
