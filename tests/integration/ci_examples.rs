//! The CI examples: valid YAML, and every `cfgctl` command line in them runs as written
//! (same flags, the prune setting on) against the emulator, on a copy of the quickstart as
//! `config/`, with exact exit codes: after apply, every plan line must find nothing to do. The
//! examples for several environments (`*-envs.yml`) run the same way against two emulators,
//! the quickstart's environments `staging` and `prod` (URLs in cfgctl.yaml, tokens from the
//! variables its `token_env` names), each matrix line once per environment. The folder is a git
//! repository (`--base "$BASE_REV"` runs as `--base HEAD`), and the apply lines find the plan
//! line's saved plan where the job downloads it (`reviewed/plan.json`). And the GitHub
//! workflows' shape: the plan comment also after a failure, one prune setting for plan and
//! apply, the drift issue closed when the drift clears, one environment per apply job.

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

/// The environment of a matrix job (`"$TARGET_ENV"`) as [`command_lines`] leaves it, for the
/// test to put each environment in its place.
const ENV_ARG: &str = "<ENV>";

/// An example for several environments (`cfgctl-plan-envs.yml`, `.gitlab-ci-envs.yml`).
fn is_multi_env(file: &std::path::Path) -> bool {
    file.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.ends_with("-envs"))
}

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
                    .replace("\"$TARGET_ENV\"", ENV_ARG)
                    .replace("\"$BASE_REV\"", "HEAD")
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
        let docs = cfgctl::util::yaml::parse_documents(&text)
            .unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
        assert_eq!(docs.len(), 1, "{}", f.display());
    }
}

#[tokio::test]
async fn ci_command_lines_run_against_the_emulator() {
    let mut commands: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for f in ci_files().into_iter().filter(|f| !is_multi_env(f)) {
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
    crate::review::repo_with(work.path(), &[]);
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
        if let Some(i) = args.iter().position(|a| a == "--reviewed") {
            // Where the apply job downloads the merged pull request's saved plan.
            let to = work.path().join(&args[i + 1]);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(work.path().join("plan.json"), to).unwrap();
        }
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
    let mut docs = cfgctl::util::yaml::parse_documents(&text)
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
    for file in ["cfgctl-plan.yml", "cfgctl-plan-envs.yml"] {
        plan_comment_is_posted_when_the_plan_fails(file);
    }
}

fn plan_comment_is_posted_when_the_plan_fails(file: &str) {
    let plan = github_workflow(file);
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
        "{file}: the comment step is skipped when the plan fails (if: {condition:?})"
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
        assert!(
            script.contains(says),
            "{file}: the comment never says {says:?}"
        );
    }
}

/// One setting (the repository variable CFGCTL_PRUNE; in GitLab one variable) adds `--prune` to
/// both plan and apply, so reviewers see the deletes that apply will make.
#[test]
fn prune_is_one_setting_for_plan_and_apply() {
    let setting = "${{ vars.CFGCTL_PRUNE == 'true' && '--prune' || '' }}";
    for (file, verb) in [
        ("cfgctl-plan.yml", "plan"),
        ("cfgctl-apply.yml", "apply"),
        ("cfgctl-plan-envs.yml", "plan"),
        ("cfgctl-apply-envs.yml", "apply"),
    ] {
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
    for name in [".gitlab-ci.yml", ".gitlab-ci-envs.yml"] {
        let gitlab = std::fs::read_to_string(root().join("examples/ci/gitlab").join(name)).unwrap();
        for verb in ["plan", "apply"] {
            let line = gitlab
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with(&format!("- cfgctl {verb} ")))
                .unwrap();
            assert!(line.contains(PRUNE_ARG), "{name} {verb}: {line}");
        }
        assert!(gitlab.contains("\n  PRUNE_FLAG: \"\"\n"), "{name}");
    }
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

/// The environments of the multi-environment examples: the GitHub matrices and GitLab's.
fn example_environments() -> Vec<String> {
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let apply = names(
        &github_workflow("cfgctl-apply-envs.yml")["jobs"]["apply"]["strategy"]["matrix"]["env"],
    );
    let drift = names(
        &github_workflow("cfgctl-drift-envs.yml")["jobs"]["drift"]["strategy"]["matrix"]["env"],
    );
    let path = root().join("examples/ci/gitlab/.gitlab-ci-envs.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let gitlab = cfgctl::util::yaml::parse_documents(&text)
        .unwrap()
        .remove(0)
        .value;
    let gitlab = names(&gitlab[".environments"]["parallel"]["matrix"][0]["TARGET_ENV"]);
    assert_eq!(apply, drift);
    assert_eq!(apply, gitlab);
    apply
}

/// Each environment's apply and drift is its own job, in the GitHub environment of its name
/// (its secrets and protection rules), with the token under the name cfgctl.yaml's
/// `token_env` gives; the plan job plans every environment for one comment.
#[test]
fn environment_jobs_run_in_their_github_environment() {
    assert_eq!(example_environments(), ["staging", "prod"]);
    for (file, job) in [
        ("cfgctl-apply-envs.yml", "apply"),
        ("cfgctl-drift-envs.yml", "drift"),
    ] {
        let spec = &github_workflow(file)["jobs"][job];
        assert_eq!(spec["environment"], "${{ matrix.env }}", "{file}");
        assert_eq!(spec["env"]["TARGET_ENV"], "${{ matrix.env }}", "{file}");
        for token in ["STAGING_API_TOKEN", "PROD_API_TOKEN"] {
            assert_eq!(
                spec["env"][token],
                format!("${{{{ secrets.{token} }}}}").as_str(),
                "{file}"
            );
        }
        assert!(
            spec["concurrency"]["group"]
                .as_str()
                .is_some_and(|g| g.ends_with("${{ matrix.env }}")),
            "{file}: one run at a time per environment"
        );
    }
    let apply = &github_workflow("cfgctl-apply-envs.yml")["jobs"]["apply"]["strategy"];
    assert_eq!(apply["max-parallel"], 1, "staging first, then prod");
    assert_eq!(
        github_workflow("cfgctl-drift-envs.yml")["jobs"]["drift"]["strategy"]["fail-fast"],
        false
    );
    let plan = github_workflow("cfgctl-plan-envs.yml");
    assert!(plan["jobs"]["plan"].get("environment").is_none());
    let text =
        std::fs::read_to_string(root().join("examples/ci/github/cfgctl-plan-envs.yml")).unwrap();
    let plans: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cfgctl plan "))
        .collect();
    assert_eq!(plans.len(), 1);
    assert!(plans[0].contains(" --all-envs ") && plans[0].contains("--format markdown"));
}

const STAGING_TOKEN: &str = "staging-ci-token-71d3";
const PROD_TOKEN: &str = "prod-ci-token-0b9e";

#[tokio::test]
async fn ci_environment_command_lines_run_against_two_emulators() {
    let envs = example_environments();
    let mut commands: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for f in ci_files().into_iter().filter(|f| is_multi_env(f)) {
        let text = std::fs::read_to_string(&f).unwrap();
        for c in command_lines(&text) {
            commands.push((f.clone(), c));
        }
    }
    let order = |c: &Vec<String>| {
        ["validate", "plan", "apply", "drift"]
            .iter()
            .position(|s| *s == c[0])
    };
    for verb in ["validate", "plan", "apply", "drift"] {
        assert!(
            commands.iter().any(|(_, c)| c[0] == verb),
            "no multi-environment example runs {verb}"
        );
    }
    commands.sort_by_key(|(_, c)| order(c));
    let token = |token: &str| Config {
        token: Some(token.to_string()),
        ..Config::default()
    };
    let staging = Tenant::start(token(STAGING_TOKEN)).await;
    let prod = Tenant::start(token(PROD_TOKEN)).await;
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("config");
    copy_dir(&root().join("examples/quickstart"), &config);
    std::fs::write(
        config.join("cfgctl.yaml"),
        format!(
            "environments:\n  staging:\n    url: {}\n    token_env: STAGING_API_TOKEN\n  prod:\n    url: {}\n    token_env: PROD_API_TOKEN\n",
            staging.emulator.url(),
            prod.emulator.url()
        ),
    )
    .unwrap();
    crate::review::repo_with(work.path(), &[]);
    let cfgctl = |a: Vec<String>| {
        let dir = work.path().to_path_buf();
        async move {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            Cfgctl::bare()
                .dir(&dir)
                .args(&a)
                .env("STAGING_API_TOKEN", STAGING_TOKEN)
                .env("PROD_API_TOKEN", PROD_TOKEN)
                .env("CONFIG_DIR", "config")
                .run()
                .await
        }
    };
    // A matrix line once per environment, in the matrix's order.
    let expanded: Vec<(PathBuf, Vec<String>)> = commands
        .into_iter()
        .flat_map(|(file, args)| {
            if args.iter().any(|a| a == ENV_ARG) {
                envs.iter()
                    .map(|env| {
                        let args = args
                            .iter()
                            .map(|a| if a == ENV_ARG { env.clone() } else { a.clone() })
                            .collect();
                        (file.clone(), args)
                    })
                    .collect::<Vec<_>>()
            } else {
                vec![(file, args)]
            }
        })
        .collect();
    let rows = |create: usize, unchanged: usize| -> Vec<String> {
        envs.iter()
            .map(|e| format!("| <code>{e}</code> | {create} | 0 | 0 | 0 | 0 | {unchanged} |"))
            .collect()
    };
    let mut plans = Vec::new();
    let mut applied = Vec::new();
    for (file, args) in expanded {
        let what = format!("{}: cfgctl {}", file.display(), args.join(" "));
        let detailed = args.iter().any(|a| a == "--detailed-exitcode");
        let run = cfgctl(args.clone()).await;
        let transcript = run.transcript();
        assert!(
            !transcript.contains(STAGING_TOKEN) && !transcript.contains(PROD_TOKEN),
            "{what}: a token in the output"
        );
        match args[0].as_str() {
            "validate" => assert_eq!(run.code, 0, "{what}\n{transcript}"),
            "plan" => {
                assert!(applied.is_empty());
                assert_eq!(
                    run.code,
                    if detailed { 2 } else { 0 },
                    "{what}\n{transcript}"
                );
                for row in rows(5, 0) {
                    assert!(
                        run.stdout.contains(&row),
                        "{what}: no {row}\n{}",
                        run.stdout
                    );
                }
                plans.push((what, args));
            }
            "apply" => {
                assert_eq!(run.code, 0, "{what}\n{transcript}");
                let env = args[args.iter().position(|a| a == "--env").unwrap() + 1].clone();
                applied.push((file.clone(), env));
            }
            "drift" => assert_eq!(
                run.code, 0,
                "{what}: no drift right after apply\n{transcript}"
            ),
            other => panic!("{what}: no expectation for `cfgctl {other}`"),
        }
    }
    // Each example that applies (GitHub's and GitLab's) applies every environment, in its
    // matrix's order.
    let files: std::collections::BTreeSet<&PathBuf> = applied.iter().map(|(f, _)| f).collect();
    assert!(!files.is_empty(), "no multi-environment example applies");
    for f in files {
        let order: Vec<&String> = applied
            .iter()
            .filter(|(g, _)| g == f)
            .map(|(_, e)| e)
            .collect();
        assert_eq!(
            order,
            envs.iter().collect::<Vec<_>>(),
            "{}: every environment applied, in the matrix's order",
            f.display()
        );
    }
    // Each tenant got its own environment's resources, and every plan line is clean after.
    let kind = cfgctl::api::registry::Kind::from_name("Team").unwrap();
    for t in [&staging, &prod] {
        let (teams, _) = t
            .list_all(kind, &cfgctl::api::wire::ListQuery::default())
            .await;
        assert_eq!(teams.len(), 1, "{teams:?}");
    }
    assert!(!plans.is_empty());
    for (what, args) in plans {
        let run = cfgctl(args).await;
        assert_eq!(run.code, 0, "{what} after apply\n{}", run.transcript());
        for row in rows(0, 5) {
            assert!(
                run.stdout.contains(&row),
                "{what} after apply: no {row}\n{}",
                run.stdout
            );
        }
    }
}

/// The examples compare secret references through git (`--base`, with the history it needs),
/// apply on merge only what was reviewed (`--reviewed`, stopping without a reviewed plan), plan
/// no fork's pull request with secrets, and open the pull workflow's pull requests with a token
/// that starts checks, never promising that closing one reverts anything.
#[test]
fn the_examples_compare_through_git_and_apply_what_was_reviewed() {
    let read = |rel: &str| std::fs::read_to_string(root().join("examples/ci").join(rel)).unwrap();
    for file in [
        "cfgctl-plan.yml",
        "cfgctl-apply.yml",
        "cfgctl-plan-envs.yml",
        "cfgctl-apply-envs.yml",
    ] {
        let text = read(&format!("github/{file}"));
        let lines = command_lines(&text);
        let verb = if file.contains("plan") {
            "plan"
        } else {
            "apply"
        };
        let line = lines.iter().find(|c| c[0] == verb).unwrap();
        assert!(
            line.windows(2).any(|w| w == ["--base", "HEAD"]),
            "{file}: {line:?}"
        );
        let workflow = github_workflow(file);
        let job = workflow["jobs"]
            .as_object()
            .unwrap()
            .values()
            .next_back()
            .unwrap();
        let checkout = job["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/checkout"))
            })
            .unwrap();
        assert_eq!(
            checkout["with"]["fetch-depth"], 0,
            "{file}: --base needs the history"
        );
    }
    let plan = github_workflow("cfgctl-plan.yml");
    assert_eq!(
        plan["jobs"]["plan"]["if"],
        "github.event.pull_request.head.repo.full_name == github.repository",
        "a fork's pull request has no secrets: it is not planned"
    );
    assert!(plan["jobs"]["validate-fork"]["if"].is_string());
    let upload = steps(&plan, "plan")
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        })
        .unwrap();
    assert_eq!(upload["with"]["name"], "cfgctl-plan");
    assert_eq!(upload["with"]["path"], "plan.json");

    let apply = github_workflow("cfgctl-apply.yml");
    let steps = steps(&apply, "apply");
    let find = steps
        .iter()
        .find(|s| s["id"] == "reviewed")
        .expect("a step finds the reviewed plan");
    let script = find["with"]["script"].as_str().unwrap();
    assert!(
        script.contains("listPullRequestsAssociatedWithCommit")
            && script.contains("core.setFailed(`No reviewed plan")
            && script.contains("'cfgctl-plan'"),
        "{script}"
    );
    let download = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/download-artifact"))
        })
        .unwrap();
    assert_eq!(
        download["with"]["run-id"],
        "${{ steps.reviewed.outputs.run-id }}"
    );
    assert_eq!(apply["permissions"]["actions"], "read");
    let line = command_lines(&read("github/cfgctl-apply.yml"))
        .into_iter()
        .find(|c| c[0] == "apply")
        .unwrap();
    assert!(line
        .windows(2)
        .any(|w| w == ["--reviewed", "reviewed/plan.json"]));

    let pull = read("github/cfgctl-pull.yml");
    assert!(pull.contains("GH_TOKEN: ${{ secrets.CFGCTL_PR_TOKEN || github.token }}"));
    assert!(pull.contains("token: ${{ secrets.CFGCTL_PR_TOKEN || github.token }}"));
    assert!(pull.contains("Allow GitHub Actions to create and approve pull requests"));
    assert!(
        pull.contains("-gt 65000"),
        "the description stays under 65,536"
    );
    assert!(!pull.contains("close to revert") && !pull.contains("revert them with the next apply"));

    let gitlab = read("gitlab/.gitlab-ci.yml");
    assert!(gitlab.contains("\n  GIT_DEPTH: 0\n"));
    let lines = command_lines(&gitlab);
    let apply = lines.iter().find(|c| c[0] == "apply").unwrap();
    assert!(apply
        .windows(2)
        .any(|w| w == ["--reviewed", "reviewed/plan.json"]));
    assert!(apply.windows(2).any(|w| w == ["--base", "HEAD"]));
    assert!(gitlab.contains("No reviewed plan"));
}
