//! The setup action, the release workflow and the GitHub examples parse as YAML and name only
//! actions pinned to a version (a tag such as `v4` or `v1.2.3`, or a commit), never a branch,
//! and never a major of `actions/*` whose runtime GitHub removed (node20 and older); the setup
//! action takes only a release tag or commit and checks the release on every run; the examples
//! install the cfgctl of this package's version through the action.

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

/// The first major of each `actions/*` action whose runtime is node24, read from each action's
/// action.yml at its major tags: every earlier major runs on node20 or older, which GitHub
/// removed from its runners on 2026-09-23 (docs/ci.md). An `actions/*` action missing here is
/// refused too, so using a new one means looking its runtime up.
const FIRST_NODE24_MAJOR: &[(&str, u32)] = &[
    ("actions/cache", 5),
    ("actions/checkout", 5),
    ("actions/download-artifact", 7),
    ("actions/github-script", 8),
    ("actions/upload-artifact", 6),
];

/// Why a `uses:` would not run on today's runners, if it would not.
fn removed_runtime(uses: &str) -> Option<String> {
    let (action, reference) = uses.rsplit_once('@')?;
    if !action.starts_with("actions/") {
        return None;
    }
    let name = action.splitn(3, '/').take(2).collect::<Vec<_>>().join("/");
    let Some(&(_, first)) = FIRST_NODE24_MAJOR.iter().find(|(a, _)| *a == name) else {
        return Some(format!(
            "{name}: its runtime is not known here (add it to FIRST_NODE24_MAJOR)"
        ));
    };
    let major = reference
        .strip_prefix('v')
        .and_then(|r| r.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        None => Some(format!("{uses}: pin {name} by a version tag, so its runtime can be checked")),
        Some(m) if m < first => Some(format!(
            "{uses}: v{m} runs on node20 or older, removed from GitHub's runners; use v{first} or later"
        )),
        Some(_) => None,
    }
}

#[test]
fn the_runtime_rule_refuses_node20_majors() {
    for old in [
        "actions/checkout@v4",
        "actions/checkout@v4.2.2",
        "actions/checkout@v3",
        "actions/github-script@v7",
        "actions/upload-artifact@v4",
        "actions/upload-artifact@v5",
        "actions/download-artifact@v4",
        "actions/download-artifact@v6",
        "actions/cache@v4",
        "actions/cache/restore@v4",
        "actions/setup-node@v6",
        "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
    ] {
        assert!(removed_runtime(old).is_some(), "{old}");
    }
    for current in [
        "actions/checkout@v5",
        "actions/checkout@v7",
        "actions/checkout@v7.0.1",
        "actions/github-script@v8",
        "actions/upload-artifact@v7",
        "actions/download-artifact@v8",
        "actions/cache@v5",
        "actions/cache/restore@v5",
        "OWNER/cfgctl@v0.1.0",
        "./.github/actions/local",
    ] {
        assert_eq!(removed_runtime(current), None, "{current}");
    }
}

#[test]
fn no_action_runs_on_a_removed_node_runtime() {
    let mut problems = Vec::new();
    for path in yaml_files() {
        let mut uses = Vec::new();
        collect_uses(&parse(&path), &mut uses);
        for u in uses {
            if let Some(p) = removed_runtime(&u) {
                problems.push(format!("{}: {p}", path.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
    let mut docs = cfgctl::util::yaml::parse_documents(&text)
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

/// A cache hit must not skip the checksum: the install step runs every time, the cache holds
/// the release archive (never the binary), and install.sh is told where it is, so it checks it
/// against the SHA256SUMS it downloads that run (`install::a_kept_archive_is_checked_…`).
#[test]
fn the_action_checks_the_release_on_every_run() {
    let doc = parse(&root().join("action.yml"));
    let steps = doc["runs"]["steps"].as_array().unwrap();
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .unwrap();
    let install = steps
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("scripts/install.sh"))
        })
        .unwrap();
    assert_eq!(
        install.get("if"),
        None,
        "the install step is skipped on some runs: {install}"
    );
    assert_eq!(
        install["env"]["CFGCTL_ARCHIVE_CACHE"], cache["with"]["path"],
        "install.sh is not pointed at what the cache restores"
    );
    assert_ne!(
        install["env"]["CFGCTL_INSTALL_DIR"], cache["with"]["path"],
        "the binary itself is cached"
    );
    for s in steps {
        let text = s.to_string();
        assert!(
            !text.contains("cache-hit"),
            "a step depends on the cache hit: {text}"
        );
    }
}

/// The action's first step run by bash as the runner would, for one version input; returns the
/// exit code, what it printed and what it wrote to GITHUB_OUTPUT.
fn resolve_step(version: &str, action_ref: &str) -> (i32, String, String) {
    let doc = parse(&root().join("action.yml"));
    let script = doc["runs"]["steps"][0]["run"].as_str().unwrap().to_string();
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("output");
    std::fs::write(&output, "").unwrap();
    let action_path = work.path().join("_actions/OWNER/cfgctl/v0.1.0");
    let out = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-e", "-c", &script])
        .env("INPUT_VERSION", version)
        .env("ACTION_REF", action_ref)
        .env("ACTION_REPOSITORY", "OWNER/cfgctl")
        .env("SERVER_URL", "https://github.com")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_ACTION_PATH", &action_path)
        .env("RUNNER_TOOL_CACHE", "/opt/hostedtoolcache")
        .env("RUNNER_ARCH", "X64")
        .output()
        .expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        std::fs::read_to_string(&output).unwrap(),
    )
}

#[test]
fn the_action_takes_only_a_release_tag_or_a_full_commit() {
    let refusal = "::error::cfgctl: the version is not a release tag (v1.2.3) or a full commit hash: use the action at a tag (uses: OWNER/cfgctl@v0.1.0) or set its version input\n";
    for bad in [
        "v1/../../../../tmp/x",
        "v1.2.3/../../x",
        "v1..2",
        "v1",
        "v1.2",
        "v1.2.3\nv1.2.3",
        "v1.2.3 ",
        "v01.2.3",
        "1.2.3",
        "abc1234",
        "main",
    ] {
        assert_eq!(
            resolve_step(bad, "v0.1.0"),
            (1, refusal.to_string(), String::new()),
            "{bad:?}"
        );
        // The same through the ref the action is used at.
        assert_eq!(
            resolve_step("", bad),
            (1, refusal.to_string(), String::new()),
            "{bad:?}"
        );
    }
    for (input, action_ref, version) in [
        ("", "v0.1.0", "v0.1.0"),
        ("v1.2.3", "v0.1.0", "v1.2.3"),
        ("v1.2.3-rc.1+build.7", "v0.1.0", "v1.2.3-rc.1+build.7"),
        (
            "",
            "0123456789abcdef0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef01234567",
        ),
    ] {
        let dir = format!("/opt/hostedtoolcache/cfgctl/{version}/X64");
        assert_eq!(
            resolve_step(input, action_ref),
            (
                0,
                String::new(),
                format!(
                    "version={version}\nrepo=https://github.com/OWNER/cfgctl\ndir={dir}/bin\narchive={dir}/archive\n"
                )
            ),
            "{input:?} {action_ref:?}"
        );
    }
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
/// the top of the file; every GitHub workflow through the setup action, before any cfgctl runs.
#[test]
fn examples_install_this_version() {
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let github: Vec<String> = yaml_files()
        .iter()
        .filter(|p| p.starts_with(root().join("examples/ci/github")))
        .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(github.len() >= 4, "{github:?}");
    let others = [
        "examples/ci/gitlab/.gitlab-ci.yml",
        "docs/ci.md",
        "docs/getting-started.md",
    ];
    for name in github.iter().map(String::as_str).chain(others) {
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
    let action = format!("OWNER/cfgctl@{tag}");
    for name in &github {
        let doc = parse(&root().join(name));
        for (job, spec) in doc["jobs"].as_object().unwrap() {
            let steps = spec["steps"].as_array().unwrap();
            let install = steps.iter().position(|s| s["uses"] == action.as_str());
            let first_run = steps.iter().position(|s| {
                s["run"]
                    .as_str()
                    .is_some_and(|r| r.lines().any(|l| l.trim_start().starts_with("cfgctl ")))
            });
            let Some(first_run) = first_run else { continue };
            assert!(
                install.is_some_and(|i| i < first_run),
                "{name}: job {job} runs cfgctl without installing it through `uses: {action}` first"
            );
            assert!(
                !steps.iter().any(|s| s["run"]
                    .as_str()
                    .is_some_and(|r| r.contains("cargo install"))),
                "{name}: job {job} installs with cargo"
            );
        }
    }
}
