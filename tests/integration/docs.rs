//! The documentation stays true: the generated manifest reference is current, and the
//! getting-started guide's commands work as written on a copy of the repository's example.

use cfgctl::emulator::Config;

use crate::support::{copy_dir, root, Cfgctl, Tenant};

#[test]
fn manifest_reference_is_current() {
    let path = root().join("docs/manifests.md");
    let generated = cfgctl::api::docs::reference_markdown();
    if std::env::var_os("CFGCTL_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/manifests.md is stale: run CFGCTL_UPDATE_DOCS=1 cargo test --test integration docs"
    );
}

/// Every line of the fenced `sh` blocks of docs/getting-started.md, in order, with its comment
/// (continued lines joined).
fn guide_lines() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("docs/getting-started.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh => {
                if let Some(head) = l.strip_suffix('\\') {
                    pending.push_str(head);
                    continue;
                }
                let full = std::mem::take(&mut pending) + l;
                let (command, comment) = full.split_once(" #").unwrap_or((&full, ""));
                out.push((command.trim().to_string(), comment.trim().to_string()));
            }
            _ => {}
        }
    }
    out
}

/// The guide's placeholders, as the test runs them: `https://<tenant>` is an in-process
/// emulator, the token `...` its token.
fn substitute(word: &str, t: &Tenant) -> String {
    word.replace("https://<tenant>", &t.emulator.url())
        .replace("CFGCTL_TOKEN=...", "CFGCTL_TOKEN=guide-token")
}

/// Issue 9: docs/getting-started.md runs as written: every line of its `sh` blocks, in order,
/// from a copy of the clone's example to a repository of one's own applied to a tenant (an
/// in-process emulator for `https://<tenant>`) and exported back with no change. Only the
/// installers are not run (the test runs the binary cargo built); a line the test does not know
/// fails it, so the guide cannot rot.
#[tokio::test]
async fn getting_started_runs_as_written() {
    let t = Tenant::start(Config {
        token: Some("guide-token".into()),
        ..Config::default()
    })
    .await;
    let work = tempfile::tempdir().unwrap();
    let clone = work.path().join("cfgctl");
    copy_dir(
        &root().join("examples/quickstart"),
        &clone.join("examples/quickstart"),
    );
    let mut cwd = clone.clone();
    let mut env: Vec<(String, String)> = Vec::new();
    let mut applied = 0;
    let mut clean_plans = 0;
    for (line, comment) in guide_lines() {
        let words: Vec<String> = line.split_whitespace().map(|w| substitute(w, &t)).collect();
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        let mut args: Vec<&str> = match w.as_slice() {
            ["cargo", "run", "--release", "--", rest @ ..] | ["cfgctl", rest @ ..] => rest.to_vec(),
            ["cargo", "install", ..] | ["curl", ..] => continue,
            ["mkdir", dir] => {
                std::fs::create_dir(cwd.join(dir)).unwrap();
                continue;
            }
            ["cp", "-r", from, to] => {
                assert!(!cwd.join(to).exists(), "{line}");
                copy_dir(&cwd.join(from), &cwd.join(to));
                continue;
            }
            ["cd", dir] => {
                cwd = cwd.join(dir).canonicalize().unwrap();
                continue;
            }
            ["printf", text, ">>", file] => {
                let text = text.trim_matches('\'').replace("\\n", "\n");
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(cwd.join(file))
                    .unwrap();
                std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
                continue;
            }
            ["export", assignment] => {
                let (k, v) = assignment.split_once('=').unwrap();
                env.push((k.to_string(), v.to_string()));
                continue;
            }
            _ => panic!("the guide has a line this test cannot run: {line}"),
        };
        if args.first() == Some(&"apply") && !args.contains(&"--auto-approve") {
            args.push("--auto-approve");
        }
        let run = env
            .iter()
            .fold(Cfgctl::bare().dir(&cwd).args(&args), |c, (k, v)| {
                c.env(k, v)
            })
            .run()
            .await;
        assert_eq!(run.code, 0, "{line}\n{}", run.transcript());
        assert!(
            !run.stderr.contains("error:"),
            "{line}\n{}",
            run.transcript()
        );
        // A graph of nothing to do draws nothing: the guide draws it before the apply.
        if args[0] == "graph" {
            assert!(
                run.stdout.contains("Team/checkout"),
                "{line}\n{}",
                run.transcript()
            );
        }
        // The schema is kept where validate does not meet it (no warning on every run).
        if args[0] == "validate" {
            assert!(
                !run.stdout.contains(": warning:"),
                "{line}\n{}",
                run.transcript()
            );
        }
        if args[0] == "apply" && run.stdout.contains("Apply: 5 done") {
            applied += 1;
        }
        if comment.starts_with("No changes") {
            assert!(run.stdout.contains("No changes"), "{line}\n{}", run.stdout);
            clean_plans += 1;
        }
        if args == ["--version"] {
            assert!(
                run.stdout.starts_with("cfgctl 0.1.0 (commit "),
                "{}",
                run.stdout
            );
        }
    }
    assert_eq!(
        applied, 2,
        "the guide applies the quickstart locally, then to the tenant"
    );
    assert_eq!(
        clean_plans, 3,
        "a clean plan after each apply and after the export"
    );
    let repo = work.path().join("my-config");
    assert_eq!(
        std::fs::read_to_string(repo.join(".gitignore")).unwrap(),
        ".cfgctl/\n"
    );
    assert!(
        repo.join("tenant/teams").is_dir(),
        "the export wrote its layout"
    );
    let (teams, _) = t
        .list_all(
            cfgctl::api::registry::Kind::from_name("Team").unwrap(),
            &Default::default(),
        )
        .await;
    assert_eq!(teams.len(), 1, "the quickstart's team is on the tenant");
}

/// The README's counts are true: the kinds of the embedded description, and those of
/// `fixtures/valid/` it names.
#[test]
fn the_readme_counts_the_kinds_truly() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let embedded = cfgctl::api::registry::embedded_kinds().len();
    assert!(
        readme.contains(&format!("({embedded} in the description cfgctl embeds")),
        "README.md: the embedded description yields {embedded} kinds"
    );
    let mut used = std::collections::BTreeSet::new();
    for entry in walkdir::WalkDir::new(root().join("fixtures/valid")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            for line in text.lines() {
                if let Some(kind) = line.strip_prefix("kind: ") {
                    used.insert(kind.trim().to_string());
                }
            }
        }
    }
    let listed = used.iter().cloned().collect::<Vec<_>>().join(", ");
    let sentence = format!(
        "`fixtures/valid/` is a realistic repository of {} of them: {listed}.",
        used.len()
    );
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&sentence), "README.md should say: {sentence}");
    assert!(!flat.contains("The 13 kinds"), "README.md");
}

/// Issue 41 item 6: the reference shows an example of every kind that can be created, and the
/// examples apply to the emulator as written, all together (each names the examples of the
/// kinds it references), then plan clean.
#[tokio::test]
async fn every_kinds_example_is_in_the_reference_and_applies() {
    let examples = cfgctl::api::docs::examples();
    let creatable = cfgctl::api::registry::embedded_kinds()
        .into_iter()
        .filter(|d| d.full_ops.create)
        .count();
    assert_eq!(examples.len(), creatable);
    let reference = cfgctl::api::docs::reference_markdown();
    let dir = tempfile::tempdir().unwrap();
    for (kind, text) in &examples {
        assert!(
            reference.contains(&format!("```yaml\n{text}```\n")),
            "{kind}'s example is not in the reference"
        );
        crate::support::write(dir.path(), &format!("{kind}.yaml"), text);
    }
    let t = Tenant::full().await;
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains(&format!(
            "Apply: {} done (0 resolved conflicts), 0 failed",
            examples.len()
        )),
        "{}",
        r.stdout
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}
