use super::*;

fn load(files: &[(&str, &str)]) -> (tempfile::TempDir, Loaded) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let loaded = load_dir(dir.path()).unwrap();
    (dir, loaded)
}

fn messages(loaded: &Loaded, dir: &Path) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .map(|d| d.to_string().replace(&format!("{}/", dir.display()), ""))
        .collect()
}

#[test]
fn multi_document_and_json_arrays() {
    let (_d, loaded) = load(&[
        (
            "a.yaml",
            "api_version: v1/config\nkind: Team\nspec: {slug: a, name: A}\n---\napi_version: v1/config\nkind: Team\nspec: {slug: b, name: B}\n",
        ),
        (
            "b.json",
            "[{\"api_version\": \"v1/config\", \"kind\": \"Team\", \"spec\": {\"slug\": \"c\", \"name\": \"C\"}}]",
        ),
        ("README.md", "# not a manifest"),
    ]);
    assert_eq!(loaded.diagnostics, vec![]);
    let got: Vec<String> = loaded
        .manifests
        .iter()
        .map(|m| format!("{} {}", m.address(), m.pos))
        .collect();
    assert_eq!(got, vec!["Team/a 1:1", "Team/b 5:1", "Team/c 1:2"]);
    assert_eq!(loaded.manifest_files, 2);
    assert_eq!(loaded.other_files, 1);
}

#[test]
fn dashboard_json_mapping_becomes_a_string() {
    let (_d, loaded) = load(&[(
        "d.yaml",
        "api_version: v1/config\nkind: Dashboard\nspec:\n  slug: d\n  name: D\n  dashboard_json:\n    kind: Dashboard\n    spec: {panels: {}}\n",
    )]);
    assert_eq!(loaded.diagnostics, vec![]);
    assert_eq!(
        loaded.manifests[0].spec["dashboard_json"],
        Value::String("{\"kind\":\"Dashboard\",\"spec\":{\"panels\":{}}}".into())
    );
}

#[test]
fn embedded_strings_are_checked_without_being_kept() {
    let (d, loaded) = load(&[(
        "d.yaml",
        "api_version: v1/config\nkind: Dashboard\nspec:\n  slug: d\n  name: D\n  dashboard_json: '[1, {\"a\": 2}]'\n---\napi_version: v1/config\nkind: Dashboard\nspec:\n  slug: e\n  name: E\n  dashboard_json:\n    panels: {a: {b: [1, 2]}}\n",
    )]);
    assert_eq!(
        messages(&loaded, d.path()),
        vec!["d.yaml:6:19: error: invalid `dashboard_json`: the document must be a JSON object, found a list"]
    );
    // Positions inside a document written as a mapping are not kept.
    let e = &loaded.manifests[0];
    assert!(e.spans.get("/dashboard_json").is_some());
    assert!(e.spans.get("/dashboard_json/panels").is_none());
    assert!(e.spans.get("/name").is_some());
}

#[test]
fn hidden_entries_are_skipped() {
    let (_d, loaded) = load(&[
        (".hidden.yaml", "not: [valid"),
        (".git/x.yaml", "not: [valid"),
        (
            "t.yaml",
            "api_version: v1/config\nkind: Team\nspec: {slug: a, name: A}\n",
        ),
    ]);
    assert_eq!(loaded.diagnostics, vec![]);
    assert_eq!(loaded.manifests.len(), 1);
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("t.yaml"),
        "api_version: v1/config\nkind: Team\nspec: {slug: a, name: A}\n",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("t.yaml"), dir.path().join("t.yaml")).unwrap();
    let loaded = load_dir(dir.path()).unwrap();
    assert_eq!(loaded.manifests.len(), 0);
    assert_eq!(loaded.manifest_files, 0);
}

#[test]
fn unique_fields_and_undeclared_references() {
    let (d, mut loaded) = load(&[(
        "x.yaml",
        "api_version: v1/config\nkind: DerivedLabel\nspec: {slug: a, name: A, label_name: env}\n---\napi_version: v1/config\nkind: DerivedLabel\nspec: {slug: b, name: B, label_name: env}\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: c\n  name: C\n  team_slug: ghost\n",
    )]);
    // The warning points at its document until located (only where warnings are shown).
    assert!(messages(&loaded, d.path())[1].starts_with("x.yaml:9:1: warning: Bucket/c"));
    loaded.locate_warnings();
    assert_eq!(
        messages(&loaded, d.path()),
        vec![
            "x.yaml:7:26: error: DerivedLabel `label_name` \"env\" is already used by DerivedLabel/a at x.yaml:3:26; it must be unique",
            "x.yaml:14:3: warning: Bucket/c references Team/ghost at `team_slug`, which no manifest declares (it must already exist on the server)",
        ]
    );
}

#[test]
fn dot_slugs_are_located_errors() {
    let (d, loaded) = load(&[(
        "x.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: '.', name: A}\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  name: B\n  slug: \"..\"\n---\napi_version: v1/config\nkind: Team\nspec: {slug: '', name: C}\n",
    )]);
    assert_eq!(
        messages(&loaded, d.path()),
        vec![
            "x.yaml:3:14: error: Team: the slug \".\" cannot be used as a URL path segment (a slug must not be empty, `.` or `..`)",
            "x.yaml:9:9: error: Bucket: the slug \"..\" cannot be used as a URL path segment (a slug must not be empty, `.` or `..`)",
            "x.yaml:13:1: error: Team has no `spec.slug`; the slug is the resource's identity and is required",
        ]
    );
    assert!(loaded.manifests.is_empty());
}

#[test]
fn missing_directory() {
    let err = load_dir(Path::new("/nonexistent/cfgctl-test")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "directory `/nonexistent/cfgctl-test` does not exist"
    );
}

/// Many fields located at once (each file read again once, files on all cores) as one at a
/// time: manifests read fast and located, in several files, nested and top-level pointers,
/// one file edited since the load (its documents' starts, never a line of the new text).
#[test]
fn fields_located_together_as_one_at_a_time() {
    let bucket = |slug: &str, pad: &str| {
        format!("api_version: v1/config\nkind: Bucket\nspec:\n{pad}  slug: {slug}\n  name: N\n  team_slug: ghost-{slug}\n")
    };
    let budget = "api_version: v1/config\nkind: ConsumptionBudget\nspec:\n  slug: cb\n  name: CB\n  priorities:\n    - priority: 1\n      filters:\n        - dataset_slug: nowhere\n";
    let files: Vec<(String, String)> = (0..6)
        .map(|i| {
            let docs = [
                bucket(&format!("b{i}a"), ""),
                bucket(&format!("b{i}b"), "  # pad\n"),
            ];
            (format!("d{i}/f.yaml"), docs.join("---\n"))
        })
        .chain([("budget.yaml".to_string(), budget.to_string())])
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let (d, loaded) = load(&refs);
    let wanted: Vec<(&Manifest, String)> = loaded
        .manifests
        .iter()
        .flat_map(|m| {
            let pointers: Vec<String> = m.references().iter().map(|r| r.pointer.clone()).collect();
            pointers.into_iter().map(move |p| (m, p))
        })
        .chain(loaded.manifests.iter().map(|m| (m, "/name".to_string())))
        .collect();
    assert_eq!(wanted.len(), 26);
    let wanted: Vec<(&Manifest, &str)> = wanted.iter().map(|(m, p)| (*m, p.as_str())).collect();
    let one_by_one = |loaded: &Loaded| {
        let mut locator = Locator::of(loaded);
        wanted
            .iter()
            .map(|(m, p)| locator.field_pos(m, p))
            .collect::<Vec<_>>()
    };
    let together = Locator::of(&loaded).field_positions(&wanted);
    assert_eq!(together, one_by_one(&loaded));
    // Found in the files, not the documents' starts.
    assert!(together
        .iter()
        .zip(&wanted)
        .all(|(pos, (m, _))| pos.line > m.pos.line));
    let edited = d.path().join("d3/f.yaml");
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, format!("# moved\n{text}")).unwrap();
    let together = Locator::of(&loaded).field_positions(&wanted);
    assert_eq!(together, one_by_one(&loaded));
    for (pos, (m, _)) in together.iter().zip(&wanted) {
        assert_eq!(*pos == m.pos, m.file == edited, "{}", m.source());
    }
}
