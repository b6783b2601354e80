//! The lean load against the full one: the same facts, diagnostics and digests; specs read
//! back equal; a no-change plan reads nothing back; a file changed in between is refused.

use std::path::{Path, PathBuf};

use super::*;
use crate::manifest::{Loaded, Manifest};
use crate::plan::{Capabilities, Current, PlanOptions};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn lean(dir: &Path, env: Option<&str>) -> Loaded {
    manifest::load_dir_lean(dir, env, &crate::plan::LEAN).unwrap()
}

/// Every directory under `fixtures/` and `examples/`, each loaded as a root.
fn repository_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for top in ["fixtures", "examples"] {
        for entry in walkdir::WalkDir::new(root().join(top)) {
            let entry = entry.unwrap();
            if entry.file_type().is_dir() {
                dirs.push(entry.into_path());
            }
        }
    }
    dirs
}

/// The harness's generated mix of 300 (`crate::util::test_support::harness_mix`), when `../shared`
/// is beside the repository.
fn harness_mix(into: &Path) -> Option<PathBuf> {
    crate::util::test_support::harness_mix(300, into)
}

fn read_back_now(loaded: &mut Loaded, current: &Current) -> Result<usize, manifest::ReadBackError> {
    let needed = needed(loaded, current);
    read_back_of(loaded, &needed)
}

fn unique_values(m: &Manifest) -> Vec<Option<String>> {
    m.kind
        .def()
        .unique_fields
        .iter()
        .map(|f| m.unique_value(f).map(str::to_string))
        .collect()
}

/// A lean load of `dir` (for `env`) against the full one; the number of specs let go.
fn same_as_full(dir: &Path, env: Option<&str>) -> usize {
    let Ok(full) = manifest::load_dir_for(dir, env) else {
        assert!(manifest::load_dir_lean(dir, env, &crate::plan::LEAN).is_err());
        return 0;
    };
    same_loads(lean(dir, env), &full, &dir.display().to_string(), true)
}

/// A lean load against the full one (`at` names it in failures): the same diagnostics,
/// sources, facts and digests (set on every manifest when the lean hook ran: `hooked`; none
/// when an overlay kept it from running), and every spec read back equal. The number of specs
/// let go.
fn same_loads(mut lean: Loaded, full: &Loaded, at: &str, hooked: bool) -> usize {
    assert_eq!(lean.diagnostics, full.diagnostics, "{at}");
    assert_eq!(lean.sources, full.sources, "{at}");
    assert_eq!(lean.manifests.len(), full.manifests.len(), "{at}");
    let mut let_go = 0;
    for (l, f) in lean.manifests.iter().zip(&full.manifests) {
        let here = format!("{at}: {}", f.address());
        assert_eq!(
            (l.address(), &l.file, l.pos),
            (f.address(), &f.file, f.pos),
            "{here}"
        );
        assert_eq!(
            l.references(),
            f.kind.def().references_in(&f.spec),
            "{here}"
        );
        assert_eq!(unique_values(l), unique_values(f), "{here}");
        let digest = crate::plan::normalize::digest(f.kind, &f.spec).0;
        let wanted = hooked.then_some(&digest);
        assert_eq!(l.digest.get(), wanted, "{here}");
        if l.is_lean() {
            assert_eq!(*l.spec, serde_json::Value::Null, "{here}");
            let_go += 1;
        } else {
            assert_eq!(l.spec, f.spec, "{here}");
        }
    }
    // Every spec read back is the full load's.
    lean.read_back(|_| true).unwrap();
    for (l, f) in lean.manifests.iter().zip(&full.manifests) {
        assert!(!l.is_lean());
        assert_eq!(l.spec, f.spec, "{at}: {}", f.address());
    }
    let_go
}

/// Several environments loaded lean together (a file read alike is loaded once for all) read
/// as each environment's full load; with an overlay nothing is let go.
#[test]
fn environments_loaded_lean_together_read_as_their_full_loads() {
    let teams = (
        "teams.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: t-${var:owner}\n  name: ${var:owner}\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: plain\n  name: Plain\n",
    );
    let plain = write(&[
        (
            "cfgctl.yaml",
            "environments:\n  staging: {vars: {owner: alpha}}\n  prod: {vars: {owner: beta}}\n  eu: {vars: {owner: gamma}}\n",
        ),
        teams,
        REPO[0],
        REPO[2],
    ]);
    let overlaid = write(&[
        (
            "cfgctl.yaml",
            "environments:\n  staging: {vars: {owner: alpha}, overlay: envs/staging}\n  prod: {vars: {owner: beta}}\n",
        ),
        teams,
        REPO[2],
        (
            "envs/staging/b1.yaml",
            "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b1\n  name: Staging B1\n",
        ),
    ]);
    let mut let_go = Vec::new();
    for (dir, hooked) in [(plain.path(), true), (overlaid.path(), false)] {
        let settings = manifest::load_dir_for(dir, None).unwrap().settings;
        let names: Vec<Option<&str>> = settings
            .environments
            .keys()
            .map(|n| Some(n.as_str()))
            .collect();
        let leans = manifest::load_dir_envs_lean(dir, &names, &crate::plan::LEAN).unwrap();
        let fulls = manifest::load_dir_envs(dir, &names).unwrap();
        assert_eq!(leans.len(), names.len());
        for ((lean, full), name) in leans.into_iter().zip(&fulls).zip(&names) {
            let at = format!("{} ({})", dir.display(), name.unwrap_or_default());
            assert_eq!(lean.environment.as_deref(), *name, "{at}");
            let_go.push(same_loads(lean, full, &at, hooked));
        }
    }
    // 6 manifests in each of 3 environments; then, with an overlay, none let go.
    assert_eq!(let_go, [6, 6, 6, 0, 0]);
}

#[test]
fn a_lean_load_reads_as_the_full_load_over_fixtures_examples_and_the_harness_mix() {
    let generated = tempfile::tempdir().unwrap();
    let mut dirs = repository_dirs();
    dirs.extend(harness_mix(generated.path()));
    let mut let_go = 0;
    for dir in &dirs {
        let_go += same_as_full(dir, None);
        if let Ok(full) = manifest::load_dir_for(dir, None) {
            for env in full.settings.environments.keys() {
                let_go += same_as_full(dir, Some(env));
            }
        }
    }
    assert!(let_go > 20, "only {let_go} specs let go");
}

const REPO: &[(&str, &str)] = &[
    (
        "metrics.yaml",
        "api_version: v1/config\nkind: DerivedMetric\nspec:\n  slug: a\n  name: A\n  metric_name: shared\n  queries:\n    - query:\n        prometheus_expr: up\n---\napi_version: v1/config\nkind: DerivedMetric\nspec:\n  slug: b\n  name: B\n  metric_name: shared\n  queries:\n    - query:\n        prometheus_expr: up\n",
    ),
    (
        "monitors.yaml",
        "api_version: v1/config\nkind: Monitor\nspec:\n  slug: m\n  name: M\n  bucket_slug: nowhere\n  prometheus_query: up\n---\napi_version: v1/config\nkind: Monitor\nspec:\n  slug: m\n  name: Again\n  bucket_slug: nowhere\n  prometheus_query: up\n",
    ),
    (
        "buckets.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b1\n  name: B1\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: b2\n  name: B2\n",
    ),
    (
        "teams.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: t\n  name: T\n",
    ),
];

fn write(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A lean load reads each embedded document given as a string with the digest's reader
/// (`manifest::Lean::read_document`) instead of parsing it to check it: for documents it
/// takes on and documents it does not (not JSON, not an object, a key twice, an escaped key,
/// nothing left once stripped), the same diagnostics and digests as the full load, and the
/// hook sees the bytes read exactly for the documents taken on.
#[test]
fn a_lean_load_reads_each_document_once_and_checks_it_as_the_full_load() {
    let docs = [
        (r#"'{"b":1,"a":{"x":[1,2.0]}}'"#, true),
        (
            "|\n    {\n      \"kind\": \"Dashboard\",\n      \"spec\": {\"a\": 1}\n    }",
            true,
        ),
        (r#"' {"a":"q{x=\"y\"}"}'"#, true),
        (r#"'{}'"#, true),
        (r#"'[1]'"#, false),
        (r#"'"text"'"#, false),
        (r#"'{"a":}'"#, false),
        (r#"'{"a":1,"a":2}'"#, false),
        (r#"'{"a\u0062":1}'"#, false),
        (r#"'{"a":"\ud800"}'"#, false),
        (r#"'{"a":1} x'"#, false),
    ];
    let mut files = vec![(
        "c.yaml".to_string(),
        "api_version: v1/config\nkind: Collection\nspec:\n  slug: c\n  name: C\n".to_string(),
    )];
    for (i, (doc, _)) in docs.iter().enumerate() {
        files.push((
            format!("d{i}.yaml"),
            format!("api_version: v1/config\nkind: Dashboard\nspec:\n  slug: d{i}\n  name: D\n  collection_slug: c\n  dashboard_json: {doc}\n"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let dir = write(&files);
    let full = manifest::load_dir_for(dir.path(), None).unwrap();
    // Each invalid document is an error at its manifest, as without the reader.
    assert_eq!(full.error_count(), 4, "{:#?}", full.diagnostics);
    // Every dashboard's collection is declared: a plan of them checks no reference again.
    assert!(full.references_declared);
    let read = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let let_go = |m: &Manifest, settings: &crate::config::settings::Settings| {
        if !m.prepared.is_empty() {
            read.lock()
                .unwrap()
                .insert(m.slug.clone().unwrap_or_default());
        }
        crate::plan::may_let_go(m, settings)
    };
    let hooked = manifest::Lean {
        let_go: &let_go,
        ..crate::plan::LEAN
    };
    let lean = manifest::load_dir_lean(dir.path(), None, &hooked).unwrap();
    assert!(lean.manifests.iter().all(|m| m.prepared.is_empty()));
    same_loads(lean, &full, "documents", true);
    let wanted: std::collections::BTreeSet<String> = docs
        .iter()
        .enumerate()
        .filter(|(_, (_, taken))| *taken)
        .map(|(i, _)| format!("d{i}"))
        .collect();
    assert_eq!(*read.lock().unwrap(), wanted);
}

#[test]
fn a_lean_load_finds_the_same_duplicates_and_undeclared_references() {
    let dir = write(REPO);
    assert!(same_as_full(dir.path(), None) >= 6);
    let loaded = lean(dir.path(), None);
    let problems: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| d.problem.to_string())
        .collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("Monitor/m") && p.contains("declared")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("metric_name")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("Bucket/nowhere")),
        "{problems:?}"
    );
    // A plan of it checks its references against the target.
    assert!(!loaded.references_declared);
}

/// The target as the manifests describe it: every kind read, every object its manifest's.
fn as_declared(full: &Loaded) -> Current {
    let mut current = Current::default();
    for m in &full.manifests {
        current.known.insert(m.kind);
        current.insert(m.address(), &m.spec);
    }
    current
}

fn plan_of(loaded: &Loaded, current: &Current) -> crate::plan::Plan {
    let caps = Capabilities::assumed_full();
    let opts = PlanOptions {
        target: "t".into(),
        prune: false,
        only: vec![],
        references_declared: false,
    };
    crate::plan::plan(&loaded.manifests, current, &caps, &loaded.settings, &opts).unwrap()
}

#[test]
fn a_no_change_plan_reads_nothing_back_and_a_change_reads_only_its_file() {
    let generated = tempfile::tempdir().unwrap();
    let small = write(&REPO[2..]);
    let dir = harness_mix(generated.path()).unwrap_or_else(|| small.path().to_path_buf());
    let full = manifest::load_dir_for(&dir, None).unwrap();
    let mut current = as_declared(&full);
    let mut loaded = lean(&dir, None);
    assert_eq!(read_back_now(&mut loaded, &current).unwrap(), 0);
    assert!(
        loaded.manifests.iter().all(Manifest::is_lean),
        "no spec held"
    );
    assert_eq!(plan_of(&loaded, &current), plan_of(&full, &current));

    // One object changed on the target, one missing there.
    let (changed, missing) = (&full.manifests[0], full.manifests.last().unwrap());
    let mut spec = (*changed.spec).clone();
    spec["name"] = "changed on the target".into();
    current.insert(changed.address(), &spec);
    current.resources.remove(&missing.address());
    let files: std::collections::BTreeSet<&PathBuf> = [&changed.file, &missing.file].into();
    assert_eq!(read_back_now(&mut loaded, &current).unwrap(), files.len());
    let held: Vec<_> = loaded
        .manifests
        .iter()
        .filter(|m| !m.is_lean())
        .map(Manifest::address)
        .collect();
    assert_eq!(held, vec![changed.address(), missing.address()]);
    let plan = plan_of(&loaded, &current);
    assert_eq!(plan, plan_of(&full, &current));
    assert_eq!(plan.summary().create + plan.summary().update, 2);
}

#[test]
fn a_file_changed_between_the_load_and_the_read_back_is_refused_by_name() {
    let dir = write(REPO);
    let mut loaded = lean(dir.path(), None);
    let teams = dir.path().join("teams.yaml");
    std::fs::write(&teams, format!("{}# edited\n", REPO[3].1)).unwrap();
    // Files not read back are not read at all.
    loaded
        .read_back(|m| m.file.ends_with("buckets.yaml"))
        .unwrap();
    let err = loaded.read_back(|_| true).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` changed while the plan was being made (its bytes are not those loaded at the start): run the plan again",
            teams.display()
        )
    );
    assert!(loaded
        .manifests
        .iter()
        .any(|m| m.is_lean() && m.file == teams));
}

#[test]
fn a_lean_plan_finds_the_same_dangling_references() {
    let dir = write(&[REPO[1], REPO[3]]);
    let full = manifest::load_dir_for(dir.path(), None).unwrap();
    let mut current = as_declared(&full);
    current
        .known
        .insert(crate::api::registry::Kind::from_name("Bucket").unwrap());
    let mut loaded = lean(dir.path(), None);
    assert_eq!(read_back_now(&mut loaded, &current).unwrap(), 0);
    let planned = |loaded: &Loaded| {
        let caps = Capabilities::assumed_full();
        let opts = PlanOptions::default();
        crate::plan::plan(&loaded.manifests, &current, &caps, &loaded.settings, &opts)
            .unwrap_err()
            .0
    };
    let mut problems = planned(&loaded);
    assert_eq!(problems, planned(&full));
    assert_eq!(problems.len(), 1);
    let mut later = problems.clone();
    // Located at the referencing field, as with the full load.
    loaded.locate(&mut problems);
    assert_eq!(problems[0].pos, crate::util::yaml::Pos::new(6, 3));
    assert!(
        problems[0].problem.to_string().contains("Bucket/nowhere"),
        "{problems:?}"
    );
    // The file edited since the load: no field of the new text is pointed at, only the
    // document's start as loaded.
    let monitors = dir.path().join("monitors.yaml");
    let text = std::fs::read_to_string(&monitors).unwrap();
    std::fs::write(&monitors, text.replacen("spec:\n", "spec:\n  # moved\n", 1)).unwrap();
    let start = loaded
        .manifests
        .iter()
        .find(|m| m.file == monitors)
        .unwrap()
        .pos;
    loaded.locate(&mut later);
    assert_eq!(later[0].pos, start);
    assert_ne!(later[0].pos, crate::util::yaml::Pos::new(7, 3));
}

/// Through `ops::plan` against the emulator, on each way the manifests load (no memo, a memo
/// that remembers nothing, a memo that misses): a no-change plan reads no file back, a change
/// reads its file only, and its update sends the spec read back.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_through_ops_reads_back_only_the_files_of_its_changes() {
    let config = crate::emulator::Config::default();
    let emulator = crate::emulator::Emulator::start(&config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = crate::remote::client::Client::new(&crate::remote::client::ClientConfig::new(
        emulator.url(),
    ))
    .unwrap();
    let dir = write(&REPO[2..]);
    let full = manifest::load_dir_for(dir.path(), None).unwrap();
    for m in &full.manifests {
        client
            .create(m.kind, &m.spec, crate::api::wire::Commit::Apply)
            .await
            .unwrap();
    }
    let cache = tempfile::tempdir().unwrap();
    let mut req = crate::ops::PlanRequest {
        target: crate::ops::TargetSettings {
            url: Some(emulator.url()),
            token: None,
            local: None,
            timeout: std::time::Duration::from_secs(30),
            max_retries: 0,
            insecure_http: false,
            max_pages: 100,
            max_response_bytes: 64 << 20,
        },
        dir: dir.path().to_path_buf(),
        environment: None,
        prune: false,
        only: vec![],
        server_validate: false,
        drift: false,
        cache: None,
        base: None,
        keep: crate::ops::Keep::default(),
    };
    for cache in [None, Some(cache.path().to_path_buf())] {
        req.cache = cache;
        let planned = crate::ops::plan(&req).await.unwrap();
        assert_eq!(planned.plan.summary().unchanged, 3);
        assert!(planned.plan.actions.is_empty());
        assert_eq!(planned.files_read_back, 0);
    }
    let teams = dir.path().join("teams.yaml");
    std::fs::write(&teams, REPO[3].1.replace("name: T", "name: Renamed")).unwrap();
    let planned = crate::ops::plan(&req).await.unwrap();
    assert_eq!(planned.files_read_back, 1);
    let [update] = &planned.plan.actions[..] else {
        panic!("{:?}", planned.plan.actions)
    };
    assert_eq!(
        update.body.as_deref(),
        Some(&serde_json::json!({"slug": "t", "name": "Renamed"}))
    );
    // A request that keeps the manifests loads them whole.
    req.keep.manifests = true;
    let planned = crate::ops::plan(&req).await.unwrap();
    let loaded = planned.manifests.unwrap();
    assert!(loaded.manifests.iter().all(|m| !m.is_lean()));
    assert_eq!(planned.files_read_back, 0);
}

/// An environment's load is read back for that environment (its variables), and a file a
/// `${file:…}` read that changed in between is refused by its name.
#[test]
fn an_environments_specs_read_back_with_its_variables_and_the_files_they_read() {
    let dir = write(&[
        (
            "cfgctl.yaml",
            "environments:\n  staging: {vars: {owner: alpha}}\n  prod: {vars: {owner: beta}}\n",
        ),
        (
            "teams.yaml",
            "api_version: v1/config\nkind: Team\nspec:\n  slug: t-${var:owner}\n  name: ${var:owner}\n  description: ${file:about.txt}\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: plain\n  name: Plain\n",
        ),
        ("about.txt", "what the team does\n"),
    ]);
    for env in ["staging", "prod"] {
        assert_eq!(same_as_full(dir.path(), Some(env)), 2, "{env}");
    }
    let mut loaded = lean(dir.path(), Some("prod"));
    let about = dir.path().join("about.txt");
    std::fs::write(&about, "something else\n").unwrap();
    let err = loaded.read_back(|_| true).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`${{file:about.txt}}` in `{}` reads another value than when the plan started: run the plan again",
            dir.path().join("teams.yaml").display()
        )
    );
}

/// Once the target's lists are read, a lean load keeps the spec of every manifest the plan
/// will send (its object missing, or its kind not read) and lets go of the others; before, it
/// lets go of every spec it may. Either way the plan is the full load's.
#[test]
fn a_lean_load_that_knows_the_target_keeps_what_it_will_send() {
    let generated = tempfile::tempdir().unwrap();
    let small = write(&REPO[2..]);
    let dir = harness_mix(generated.path()).unwrap_or_else(|| small.path().to_path_buf());
    let full = manifest::load_dir_for(&dir, None).unwrap();
    let mut current = as_declared(&full);
    let (missing, unread) = (&full.manifests[0], full.manifests.last().unwrap());
    assert_ne!(missing.kind, unread.kind, "two kinds");
    current.resources.remove(&missing.address());
    current.known.remove(&unread.kind);
    let listed = OnceLock::new();
    let unknown = load(&dir, None, true, &listed).unwrap();
    assert!(unknown.manifests.iter().all(Manifest::is_lean));
    let _ = listed.set(crate::plan::Listed::of(&current));
    let mut known = load(&dir, None, true, &listed).unwrap();
    let held: BTreeSet<Address> = known
        .manifests
        .iter()
        .filter(|m| !m.is_lean())
        .map(Manifest::address)
        .collect();
    let expected: BTreeSet<Address> = full
        .manifests
        .iter()
        .filter(|m| m.address() == missing.address() || m.kind == unread.kind)
        .map(Manifest::address)
        .collect();
    assert_eq!(held, expected);
    assert_eq!(read_back_now(&mut known, &current).unwrap(), 0);
    assert_eq!(plan_of(&known, &current), plan_of(&full, &current));
}
