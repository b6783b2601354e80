//! The setup action, the release workflow and the GitHub examples parse as YAML and name only
//! actions pinned to a version (a tag such as `v4` or `v1.2.3`, or a commit), never a branch;
//! the examples install the cfgctl of this package's version.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::root;

/// `uses:` values that cannot move under the workflow: a local action, or `owner/repo[/path]@REF`
/// with REF a version tag or a full commit hash.
fn pinned(uses: &str) -> bool {
    if uses.starts_with("./") {
        return true;
    }
    let Some((action, reference)) = uses.rsplit_once('@') else {
        return false;
    };
    let mut parts = action.split('/');
    let (Some(owner), Some(repo)) = (parts.next(), parts.next()) else {
        return false;
    };
    if owner.is_empty() || repo.is_empty() {
        return false;
    }
    let commit = reference.len() == 40 && reference.chars().all(|c| c.is_ascii_hexdigit());
    let tag = reference.strip_prefix('v').is_some_and(|numbers| {
        !numbers.is_empty()
            && numbers
                .split('.')
                .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    });
    commit || tag
}

#[test]
fn the_pinning_rule_refuses_branches() {
    for ok in [
        "actions/checkout@v4",
        "actions/cache@v4.2.3",
        "OWNER/cfgctl@v0.1.0",
        "github/codeql-action/init@v3",
        "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
        "./.github/actions/local",
    ] {
        assert!(pinned(ok), "{ok}");
    }
    for bad in [
        "actions/checkout@main",
        "actions/checkout@master",
        "dtolnay/rust-toolchain@stable",
        "actions/checkout",
        "actions/checkout@v4-beta",
        "actions/checkout@11bd719",
        "checkout@v4",
        "actions/checkout@",
    ] {
        assert!(!pinned(bad), "{bad}");
    }
}

fn collect_uses(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "uses" {
                    out.push(v.as_str().unwrap_or("<not a string>").to_string());
                } else {
                    collect_uses(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_uses(i, out)),
        _ => {}
    }
}

fn yaml_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("action.yml")];
    for dir in [".github/workflows", "examples/ci/github"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
            .collect();
        found.sort();
        assert!(!found.is_empty(), "no workflow in {dir}");
        files.extend(found);
    }
    files
}

fn parse(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let mut docs = cfgctl::yaml::parse_documents(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e:?}", path.display()));
    assert_eq!(docs.len(), 1, "{}", path.display());
    docs.remove(0).value
}

#[test]
fn actions_and_workflows_parse_and_pin_every_action() {
    let mut seen = 0;
    for path in yaml_files() {
        let doc = parse(&path);
        let mut uses = Vec::new();
        collect_uses(&doc, &mut uses);
        for u in &uses {
            assert!(
                pinned(u),
                "{}: `uses: {u}` is not pinned to a version tag or a commit",
                path.display()
            );
        }
        seen += uses.len();
    }
    assert!(seen >= 10, "only {seen} `uses:` found");
}

#[test]
fn the_action_is_composite_and_runs_the_install_script() {
    let doc = parse(&root().join("action.yml"));
    assert_eq!(doc["runs"]["using"], "composite");
    assert_eq!(doc["inputs"]["version"]["default"], "");
    let steps = doc["runs"]["steps"].as_array().unwrap();
    // A composite step that runs a command must name its shell.
    for s in steps.iter().filter(|s| s.get("run").is_some()) {
        assert!(s["shell"].is_string(), "{s}");
    }
    let resolve = steps[0]["env"]["ACTION_REF"].as_str().unwrap();
    assert_eq!(resolve, "${{ github.action_ref }}");
    assert!(steps.iter().any(|s| s["uses"]
        .as_str()
        .is_some_and(|u| u.starts_with("actions/cache@"))));
    assert!(steps.iter().any(|s| s["run"]
        .as_str()
        .is_some_and(|r| r.contains("$GITHUB_ACTION_PATH/scripts/install.sh"))));
}

#[test]
fn the_release_builds_every_target_install_sh_knows() {
    let doc = parse(&root().join(".github/workflows/release.yml"));
    let targets: Vec<&str> = doc["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    let script = std::fs::read_to_string(root().join("scripts/install.sh")).unwrap();
    for t in &targets {
        assert!(
            script.contains(&format!("target={t} ")),
            "install.sh never picks {t}"
        );
    }
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin"
        ]
    );
    assert_eq!(doc["on"]["push"]["tags"][0], "v[0-9]+.[0-9]+.[0-9]+*");
}

/// The CI examples install the version of this package, from one placeholder owner named at
/// the top of the file.
#[test]
fn examples_install_this_version() {
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    for name in [
        "examples/ci/github/cfgctl-plan.yml",
        "examples/ci/github/cfgctl-apply.yml",
        "examples/ci/github/cfgctl-drift.yml",
        "examples/ci/gitlab/.gitlab-ci.yml",
        "docs/ci.md",
        "docs/getting-started.md",
    ] {
        let text = std::fs::read_to_string(root().join(name)).unwrap();
        assert!(
            !text.contains("cargo install --locked cfgctl"),
            "{name} installs an unpublished crate"
        );
        let head: String = text.lines().take(6).collect::<Vec<_>>().join("\n");
        assert!(
            head.contains("OWNER"),
            "{name}: the placeholder owner is not named at the top"
        );
        assert!(
            text.contains(&format!("OWNER/cfgctl@{tag}"))
                || text.contains(&format!("CFGCTL_VERSION: {tag}")),
            "{name} does not pin {tag}"
        );
    }
}
