//! The CI examples: valid YAML, and every `cfgctl` command line in them runs as written
//! (same flags, the prune setting on) against the emulator, on a copy of the quickstart as
//! `config/`, with exact exit codes: after apply, every plan line must find nothing to do. And
//! the GitHub workflows' shape: the plan comment also after a failure, one prune setting for
//! plan and apply, the drift issue closed when the drift clears.

use std::path::PathBuf;

use cfgctl::emulator::Config;

use crate::support::{copy_dir, root, Cfgctl, Tenant};

fn ci_files() -> Vec<PathBuf> {
    walkdir::WalkDir::new(root().join("examples/ci"))
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_path_buf())
        .collect()
}

/// How the examples spell the prune setting on a command line: nothing, or `--prune`.
const PRUNE_ARG: &str = "${PRUNE_FLAG:+\"$PRUNE_FLAG\"}";

/// The `cfgctl …` command lines of a file, without redirections and `||` tails, with
/// `"$CONFIG_DIR"` as the shell would expand it and the prune setting on (`--prune`).
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut l = line.trim();
        for prefix in ["- ", "entry: ", "run: "] {
            l = l.strip_prefix(prefix).unwrap_or(l).trim();
        }
        if !l.starts_with("cfgctl ") {
            continue;
        }
        let cut = [" > ", " ||", " | ", " #"]
            .iter()
            .filter_map(|m| l.find(m))
            .min()
            .unwrap_or(l.len());
        let args: Vec<String> = l[..cut]
            .split_whitespace()
            .skip(1)
            .map(|a| {
                a.replace(PRUNE_ARG, "--prune")
                    .replace("\"$CONFIG_DIR\"", "config")
                    .replace("$CONFIG_DIR", "config")
            })
            .collect();
        assert!(
            args.iter().all(|a| !a.contains('$')),
            "a shell expansion the test does not know: {l}"
        );
        out.push(args);
    }
    out
}

#[test]
fn ci_examples_are_valid_yaml() {
    let files = ci_files();
    assert!(files.len() >= 5, "{files:?}");
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "yml" || e == "yaml"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let docs = cfgctl::yaml::parse_documents(&text)
            .unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
        assert_eq!(docs.len(), 1, "{}", f.display());
    }
}

#[tokio::test]
async fn ci_command_lines_run_against_the_emulator() {
    let mut commands: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for f in ci_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for c in command_lines(&text) {
            commands.push((f.clone(), c));
        }
    }
    let order = |c: &Vec<String>| {
        ["validate", "plan", "apply", "drift", "pull"]
            .iter()
            .position(|s| *s == c[0])
    };
    for verb in ["validate", "plan", "apply", "drift"] {
        assert!(
            commands.iter().any(|(_, c)| c[0] == verb),
            "no example runs {verb}"
        );
    }
    commands.sort_by_key(|(_, c)| order(c));
    let t = Tenant::start(Config::default()).await;
    let work = tempfile::tempdir().unwrap();
    copy_dir(
        &root().join("examples/quickstart"),
        &work.path().join("config"),
    );
    let url = t.emulator.url();
    let cfgctl = |a: Vec<String>| {
        let dir = work.path().to_path_buf();
        let url = url.clone();
        async move {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            Cfgctl::bare()
                .dir(&dir)
                .args(&a)
                .env("CFGCTL_URL", &url)
                .env("CONFIG_DIR", "config")
                .run()
                .await
        }
    };
    let mut applied = false;
    let mut plans = Vec::new();
    for (file, args) in commands {
        let what = format!("{}: cfgctl {}", file.display(), args.join(" "));
        let detailed = args.iter().any(|a| a == "--detailed-exitcode");
        let run = cfgctl(args.clone()).await;
        match args[0].as_str() {
            "validate" => assert_eq!(run.code, 0, "{what}\n{}", run.transcript()),
            "plan" => {
                assert!(!applied);
                // Changes to make: exit 2 exactly when asked for, 0 otherwise.
                let code = if detailed { 2 } else { 0 };
                assert_eq!(run.code, code, "{what}\n{}", run.transcript());
                assert!(run.stdout.contains("5 to create"), "{what}\n{}", run.stdout);
                plans.push((what, args));
            }
            "apply" => {
                assert_eq!(run.code, 0, "{what}\n{}", run.transcript());
                applied = true;
            }
            "drift" => {
                assert_eq!(
                    run.code,
                    0,
                    "{what}: no drift right after apply\n{}",
                    run.transcript()
                );
            }
            "pull" => {
                // Nothing differs after apply: pull succeeds and writes nothing.
                let before = snapshot_dir(&work.path().join("config"));
                assert_eq!(run.code, 0, "{what}\n{}", run.transcript());
                assert_eq!(snapshot_dir(&work.path().join("config")), before, "{what}");
            }
            other => panic!("{what}: no expectation for `cfgctl {other}`"),
        }
    }
    assert!(applied);
    assert!(
        work.path().join("plan.json").exists(),
        "the plan job saves its plan"
    );
    // After apply, every plan line of the examples finds nothing to do (a perpetual diff fails).
    assert!(!plans.is_empty());
    for (what, args) in plans {
        let run = cfgctl(args).await;
        assert_eq!(run.code, 0, "{what} after apply\n{}", run.transcript());
        assert!(
            run.stdout
                .contains("**0 to create, 0 to update, 0 to delete, 0 to upsert, 0 unsupported, 5 unchanged.**"),
            "{what} after apply\n{}",
            run.stdout
        );
    }
}

/// Every file under `dir` with its contents, sorted by path.
fn snapshot_dir(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

fn github_workflow(name: &str) -> serde_json::Value {
    let path = root().join("examples/ci/github").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut docs = cfgctl::yaml::parse_documents(&text)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    docs.remove(0).value
}

fn steps(workflow: &serde_json::Value, job: &str) -> Vec<serde_json::Value> {
    workflow["jobs"][job]["steps"].as_array().unwrap().clone()
}

/// A failed validate or plan still updates the PR comment (saying so), so the comment of an
/// earlier push never stands for a commit whose plan failed.
#[test]
fn the_plan_comment_is_posted_when_the_plan_fails() {
    let plan = github_workflow("cfgctl-plan.yml");
    let steps = steps(&plan, "plan");
    let comment = steps
        .iter()
        .find(|s| {
            s["with"]["script"]
                .as_str()
                .is_some_and(|j| j.contains("createComment"))
        })
        .unwrap();
    let condition = comment["if"].as_str().unwrap_or("");
    assert!(
        [
            "always()",
            "${{ always() }}",
            "!cancelled()",
            "${{ !cancelled() }}"
        ]
        .contains(&condition),
        "the comment step is skipped when the plan fails (if: {condition:?})"
    );
    // It knows what failed: the outcome of validate and the plan's exit code.
    assert_eq!(comment["env"]["VALIDATE"], "${{ steps.validate.outcome }}");
    assert_eq!(
        comment["env"]["PLAN_EXIT"],
        "${{ steps.plan.outputs.exitcode }}"
    );
    assert!(steps.iter().any(|s| s["id"] == "validate"));
    let script = comment["with"]["script"].as_str().unwrap();
    for says in [
        "cfgctl validate failed",
        "cfgctl did not run",
        "cfgctl plan failed",
    ] {
        assert!(script.contains(says), "the comment never says {says:?}");
    }
}

/// One setting (the repository variable CFGCTL_PRUNE; in GitLab one variable) adds `--prune` to
/// both plan and apply, so reviewers see the deletes that apply will make.
#[test]
fn prune_is_one_setting_for_plan_and_apply() {
    let setting = "${{ vars.CFGCTL_PRUNE == 'true' && '--prune' || '' }}";
    for (file, verb) in [("cfgctl-plan.yml", "plan"), ("cfgctl-apply.yml", "apply")] {
        let workflow = github_workflow(file);
        assert_eq!(workflow["env"]["PRUNE_FLAG"], setting, "{file}");
        let text = std::fs::read_to_string(root().join("examples/ci/github").join(file)).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with(&format!("cfgctl {verb} ")))
            .collect();
        assert_eq!(lines.len(), 1, "{file}: {lines:?}");
        assert!(lines[0].contains(PRUNE_ARG), "{file}: {}", lines[0]);
    }
    let gitlab = std::fs::read_to_string(root().join("examples/ci/gitlab/.gitlab-ci.yml")).unwrap();
    for verb in ["plan", "apply"] {
        let line = gitlab
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(&format!("- cfgctl {verb} ")))
            .unwrap();
        assert!(line.contains(PRUNE_ARG), "GitLab {verb}: {line}");
    }
    assert!(gitlab.contains("\n  PRUNE_FLAG: \"\"\n"));
}

/// The drift workflow opens its issue on exit 2 and closes it once a run exits 0.
#[test]
fn the_drift_issue_is_closed_when_the_drift_clears() {
    let drift = github_workflow("cfgctl-drift.yml");
    let steps = steps(&drift, "drift");
    let on = |code: &str| -> Vec<&serde_json::Value> {
        steps
            .iter()
            .filter(|s| s["if"] == format!("steps.drift.outputs.exitcode == '{code}'").as_str())
            .collect()
    };
    let open = on("2");
    assert!(open.iter().any(|s| s["with"]["script"]
        .as_str()
        .is_some_and(|j| j.contains("issues.create") && j.contains("'cfgctl-drift'"))));
    let close = on("0");
    assert_eq!(close.len(), 1, "no step runs when the drift has cleared");
    let script = close[0]["with"]["script"].as_str().unwrap();
    assert!(
        script.contains("labels: 'cfgctl-drift'")
            && script.contains("state: 'open'")
            && script.contains("state: 'closed'"),
        "{script}"
    );
}
