//! `cfgctl import grafana` over the public corpus of fixtures/import/grafana (see its
//! LICENSES.md): one GrafanaDashboard manifest per dashboard with its JSON in a file beside it,
//! the same bytes twice; the dashboards the API receives apply to the emulator and plan clean.

use std::collections::BTreeMap;
use std::path::Path;

use cfgctl::emulator::Config;

use crate::support::{Cfgctl, Tenant};

const CORPUS: &str = "fixtures/import/grafana";

fn import(out: &Path) -> crate::support::Run {
    Cfgctl::bare()
        .args(&[
            "import",
            "grafana",
            CORPUS,
            "--collection",
            "dashboards",
            "--out",
            out.to_str().unwrap(),
        ])
        .run_blocking()
}

fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// The collection the dashboards belong to, on the target.
async fn tenant_with_collection(dir: &Path) -> Tenant {
    let t = Tenant::start(Config::default()).await;
    let base = dir.join("base");
    std::fs::create_dir(&base).unwrap();
    std::fs::write(
        base.join("owners.yaml"),
        "api_version: v1/config\nkind: Collection\nspec: {slug: dashboards, name: Dashboards}\n",
    )
    .unwrap();
    let r = Cfgctl::new(&t)
        .args(&["apply", base.to_str().unwrap(), "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    t
}

#[test]
fn the_corpus_imports_one_manifest_and_one_json_file_per_dashboard() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let r = import(&first);
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(
        r.stdout,
        format!("wrote 42 files and IMPORT.md to {}\n", first.display())
    );
    assert!(
        r.stderr.contains(&format!(
            "imported 21 manifests (GrafanaDashboard 21) into {} (15 not mapped or changed",
            first.display()
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!(
            "{CORPUS}/grafana-panel-library-export.json:1: note: dashboard Panel - Panel Library: library panels referenced by uid (`MAnX2ifMk`, `g1sNpCaMz`)"
        )),
        "{}",
        r.stderr
    );
    let files = tree(&first);
    assert_eq!(files.len(), 43);
    let manifest = String::from_utf8(files["grafana-dashboards/imqx6j-gz.yaml"].clone()).unwrap();
    assert_eq!(
        manifest,
        "api_version: v1/config\nkind: GrafanaDashboard\nspec:\n  slug: imqx6j-gz\n  name: Panel - Panel Library\n  collection_slug: dashboards\n  dashboard_json: ${file:imqx6j-gz.json}\n"
    );
    // A collapsed row keeps the panels it holds.
    let apache: serde_json::Value =
        serde_json::from_slice(&files["grafana-dashboards/apache-http.json"]).unwrap();
    let collapsed: Vec<usize> = apache["panels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["collapsed"] == true)
        .map(|p| p["panels"].as_array().unwrap().len())
        .collect();
    assert_eq!(collapsed, [4, 4]);
    // Every manifest has its JSON file beside it, which holds an object without `id`.
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".json")) {
        let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        assert!(
            value.get("id").is_none() && value.get("version").is_none(),
            "{path}"
        );
        assert!(
            files.contains_key(&path.replace(".json", ".yaml")),
            "{path}"
        );
    }
    let r = import(&second);
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(tree(&second) == files, "two imports differ");
}

/// What today's loader takes: each manifest with its JSON file's document in place of the
/// `${file:}` reference (the reference itself needs the dashboards branch, below).
fn inlined(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (path, bytes) in tree(from).iter().filter(|(p, _)| p.ends_with(".yaml")) {
        let text = String::from_utf8(bytes.clone()).unwrap();
        let docs = cfgctl::util::yaml::parse_documents(&text).unwrap();
        let mut doc = docs[0].value.clone();
        let reference = doc["spec"]["dashboard_json"].as_str().unwrap().to_string();
        let name = reference
            .trim_start_matches("${file:")
            .trim_end_matches('}');
        let json = std::fs::read_to_string(from.join(path).parent().unwrap().join(name)).unwrap();
        doc["spec"]["dashboard_json"] = serde_json::from_str(&json).unwrap();
        let file = to.join(Path::new(path).file_name().unwrap());
        std::fs::write(file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
}

#[tokio::test]
async fn the_imported_dashboards_validate_apply_and_plan_clean() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = import(&out);
    assert_eq!(r.code, 0, "{}", r.transcript());
    let manifests = dir.path().join("inlined");
    inlined(&out, &manifests);
    let t = tenant_with_collection(dir.path()).await;
    let m = manifests.to_str().unwrap();
    let r = Cfgctl::bare().args(&["validate", m]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .args(&["apply", m, "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("Apply: 21 done"), "{}", r.stdout);
    let r = Cfgctl::new(&t)
        .args(&["plan", m, "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("21 unchanged"), "{}", r.stdout);
}

/// The import's folder as written: its `.json` files are data (`${file:}` JSON files under
/// DIR are first-class: issue 41 item 1), so it validates, applies and plans clean as it is.
#[tokio::test]
async fn the_import_as_written_validates_applies_and_plans_clean() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = import(&out);
    assert_eq!(r.code, 0, "{}", r.transcript());
    let t = tenant_with_collection(dir.path()).await;
    let o = out.to_str().unwrap();
    let r = Cfgctl::bare().args(&["validate", o]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .args(&["apply", o, "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .args(&["plan", o, "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("21 unchanged"), "{}", r.stdout);
}
