//! The documentation stays true: the generated manifest reference is current, and the
//! getting-started guide's commands work as written on a copy of the repository's example.

use crate::support::{copy_dir, root, Cfgctl};

#[test]
fn manifest_reference_is_current() {
    let path = root().join("docs/manifests.md");
    let generated = cfgctl::docs::reference_markdown();
    if std::env::var_os("CFGCTL_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/manifests.md is stale: run CFGCTL_UPDATE_DOCS=1 cargo test --test integration docs"
    );
}

/// Every `cargo run --release -- …` line of docs/getting-started.md, in order, as the binary's
/// arguments (an interactive `apply` gets `--auto-approve`: a test has no terminal to type
/// `yes` into).
fn guide_commands() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(root().join("docs/getting-started.md")).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("cargo run --release -- ") else {
            continue;
        };
        let rest = rest.split(" #").next().unwrap_or(rest);
        let mut args: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        if args.first().is_some_and(|a| a == "apply") && !args.iter().any(|a| a == "--auto-approve")
        {
            args.push("--auto-approve".into());
        }
        out.push(args);
    }
    out
}

#[test]
fn getting_started_reaches_a_local_apply_and_a_clean_replan() {
    let commands = guide_commands();
    assert!(commands.len() >= 4, "{commands:?}");
    let work = tempfile::tempdir().unwrap();
    copy_dir(
        &root().join("examples/quickstart"),
        &work.path().join("examples/quickstart"),
    );
    let mut applied = false;
    let mut replanned_clean = false;
    for args in &commands {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = Cfgctl::bare().dir(work.path()).args(&a).run_blocking();
        let what = format!("cfgctl {}", args.join(" "));
        assert!(matches!(run.code, 0 | 2), "{what}\n{}", run.transcript());
        if args[0] == "apply" && run.stdout.contains("Apply: 5 done") {
            applied = true;
        }
        if args[0] == "plan" && applied && run.stdout.contains("No changes") {
            replanned_clean = true;
        }
    }
    assert!(applied, "the guide never applies the quickstart");
    assert!(
        replanned_clean,
        "the guide never shows a clean plan after the apply"
    );
}
