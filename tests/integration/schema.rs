//! `cfgctl schema`: the editor schema accepts every valid manifest and rejects invalid ones.

use serde_json::Value;

use crate::support::{root, Cfgctl};

fn editor_schema() -> Value {
    let run = Cfgctl::bare().args(&["schema"]).run_blocking();
    assert_eq!(run.code, 0, "{}", run.transcript());
    serde_json::from_str(&run.stdout).expect("cfgctl schema prints JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&editor_schema())
        .expect("the schema compiles")
}

/// Every document of every manifest file under a directory, as JSON.
fn documents(dir: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root().join(dir)).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !entry.file_type().is_file() || name == "cfgctl.yaml" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let docs = match path.extension().and_then(|e| e.to_str()) {
            Some("yaml" | "yml") => cfgctl::util::yaml::parse_documents(&text)
                .map(|d| d.into_iter().map(|d| d.value).collect::<Vec<_>>()),
            Some("json") => cfgctl::util::yaml::parse_json(&text).map(|d| match d.value {
                Value::Array(items) => items,
                other => vec![other],
            }),
            _ => continue,
        };
        if let Ok(docs) = docs {
            out.extend(docs.into_iter().map(|d| (path.display().to_string(), d)));
        }
    }
    out
}

#[test]
fn schema_accepts_every_valid_manifest() {
    let v = validator();
    let docs = documents("fixtures/valid");
    assert_eq!(docs.len(), 26);
    for (file, doc) in docs.iter().chain(documents("examples/quickstart").iter()) {
        let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{file}: {errors:?}");
    }
}

#[test]
fn schema_rejects_invalid_manifests() {
    let v = validator();
    for dir in [
        "fixtures/invalid/schema",
        "fixtures/invalid/unknown-kind",
        "fixtures/invalid/missing-spec",
        "fixtures/invalid/missing-api-version",
        "fixtures/invalid/missing-slug",
    ] {
        let docs = documents(dir);
        assert!(
            docs.iter().any(|(_, d)| !v.is_valid(d)),
            "{dir}: the schema accepted every document"
        );
    }
    // The schema fixture: the monitor is rejected for the read-only, typed, enum and unknown
    // fields, the bucket beside it accepted.
    let docs = documents("fixtures/invalid/schema");
    let monitor_errors: Vec<String> = v
        .iter_errors(&docs[0].1)
        .map(|e| e.instance_path().to_string())
        .collect();
    for path in [
        "/spec/created_at",
        "/spec/interval_secs",
        "/spec/labels/tier",
        "/spec/series_conditions/defaults/critical/conditions/0/op",
    ] {
        assert!(
            monitor_errors.iter().any(|p| p == path),
            "{path} not rejected: {monitor_errors:?}"
        );
    }
    assert!(v.is_valid(&docs[1].1));
}

#[test]
fn committed_schema_file_is_current() {
    let committed = std::fs::read_to_string(root().join("schema/manifest.schema.json"))
        .expect("schema/manifest.schema.json is committed");
    let current = Cfgctl::bare().args(&["schema"]).run_blocking().stdout;
    assert!(
        committed == current,
        "schema/manifest.schema.json is stale: run `cargo run -- schema > schema/manifest.schema.json`"
    );
}

/// `cfgctl schema --settings` prints the schema `cfgctl.yaml` is checked by, the committed
/// file; an editor using it (draft 7, cfgctl's own formats left to cfgctl) accepts every
/// settings file of the fixtures and examples and flags the invalid one's mistakes.
#[test]
fn settings_schema_is_printed_and_fits_the_settings_files() {
    let run = Cfgctl::bare()
        .args(&["schema", "--settings"])
        .run_blocking();
    assert_eq!(run.code, 0, "{}", run.transcript());
    let committed = std::fs::read_to_string(root().join("schema/settings.schema.json")).unwrap();
    assert_eq!(run.stdout, committed);
    let schema: Value = serde_json::from_str(&run.stdout).unwrap();
    let editor = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .expect("the settings schema compiles");
    let read = |file: &str| {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        cfgctl::util::yaml::parse_documents(&text).unwrap()[0]
            .value
            .clone()
    };
    for file in ["fixtures/valid/cfgctl.yaml", "examples/policy/cfgctl.yaml"] {
        let errors: Vec<String> = editor
            .iter_errors(&read(file))
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{file}: {errors:?}");
    }
    let invalid = read("fixtures/invalid/invalid-settings/cfgctl.yaml");
    let mut at: Vec<String> = editor
        .iter_errors(&invalid)
        .map(|e| e.instance_path().to_string())
        .collect();
    at.sort();
    assert_eq!(
        at,
        ["", "/exclude", "/ignore/0", "/ignore/1", "/max_deletes"]
    );
}

#[test]
fn embedded_swagger_copy_matches_shared_spec() {
    // CI and developers have shared/ beside the repository; a fresh clone elsewhere may not.
    // The whole API: every kind (the 13-kind subset beside it is where cfgctl started).
    let shared = root().join("../shared/spec/config-api-v1-full.swagger.json");
    let Ok(upstream) = std::fs::read_to_string(&shared) else {
        return;
    };
    assert!(
        upstream == cfgctl::api::spec::SWAGGER_JSON,
        "spec/config-api-v1.swagger.json differs from {}: copy it again",
        shared.display()
    );
}
