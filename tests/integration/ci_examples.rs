//! The CI examples: valid YAML, and every `cfgctl` command line in them runs as written
//! (same flags) against the emulator, on a copy of the quickstart as `config/`.

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

/// The `cfgctl …` command lines of a file, without redirections and `||` tails, with
/// `"$CONFIG_DIR"` as the shell would expand it.
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
                a.replace("\"$CONFIG_DIR\"", "config")
                    .replace("$CONFIG_DIR", "config")
            })
            .collect();
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
    let mut applied = false;
    for (file, args) in commands {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = Cfgctl::bare()
            .dir(work.path())
            .args(&a)
            .env("CFGCTL_URL", &url)
            .env("CONFIG_DIR", "config")
            .run()
            .await;
        let what = format!("{}: cfgctl {}", file.display(), args.join(" "));
        match args[0].as_str() {
            "validate" => assert_eq!(run.code, 0, "{what}\n{}", run.transcript()),
            "plan" if !applied => {
                assert!(matches!(run.code, 0 | 2), "{what}\n{}", run.transcript());
                assert!(run.stdout.contains("5 to create"), "{what}\n{}", run.stdout);
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
            _ => assert!(matches!(run.code, 0 | 2), "{what}\n{}", run.transcript()),
        }
    }
    assert!(applied);
    assert!(
        work.path().join("plan.json").exists(),
        "the plan job saves its plan"
    );
}
