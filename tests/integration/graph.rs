//! Output people read: `cfgctl graph` in DOT and Mermaid, the Markdown plan's diagram, a
//! multi-line PromQL change in the text plan, `schema --out`, and `--version`.

use cfgctl::emulator::Config;

use crate::support::{cfgctl_snapshot, copy_dir, root, write, Cfgctl, Tenant};

#[tokio::test]
async fn graph_of_the_quickstart_in_both_formats() {
    let t = Tenant::start(Config::default()).await;
    let dot = Cfgctl::new(&t)
        .args(&["graph", "examples/quickstart"])
        .run()
        .await;
    assert_eq!(dot.code, 0, "{}", dot.transcript());
    // Five creates; the bucket and the collection wait for the team, the dashboard and the
    // monitor for the collection.
    assert_eq!(
        dot.stdout.matches("[label=\"create ").count(),
        5,
        "{}",
        dot.stdout
    );
    assert_eq!(dot.stdout.matches(" -> ").count(), 4, "{}", dot.stdout);
    cfgctl_snapshot!("graph_dot", dot.stdout);

    let mermaid = Cfgctl::new(&t)
        .args(&["graph", "examples/quickstart", "--format", "mermaid"])
        .run()
        .await;
    assert_eq!(mermaid.code, 0, "{}", mermaid.transcript());
    assert!(mermaid.stdout.starts_with("flowchart LR\n"));
    assert_eq!(mermaid.stdout.matches(" --> ").count(), 4);
    cfgctl_snapshot!("graph_mermaid", mermaid.stdout);

    // The Markdown plan carries the same diagram, before the resources.
    let md = Cfgctl::new(&t)
        .args(&["plan", "examples/quickstart", "--format", "markdown"])
        .run()
        .await;
    assert_eq!(md.code, 0, "{}", md.transcript());
    let fenced = format!("```mermaid\n{}```\n", mermaid.stdout);
    let at = md
        .stdout
        .find(&fenced)
        .expect("the Markdown plan embeds the graph");
    assert!(at < md.stdout.find("<details>").unwrap());
    cfgctl_snapshot!("quickstart_markdown_with_diagram", md.stdout);

    // No target: the same message as plan's.
    let none = Cfgctl::bare()
        .args(&["graph", "examples/quickstart"])
        .run_blocking();
    assert_eq!(none.code, 1);
    assert!(
        none.stderr.contains("no target: pass --url URL"),
        "{}",
        none.stderr
    );
}

#[tokio::test]
async fn a_multiline_promql_change_is_shown_line_by_line() {
    let t = Tenant::start(Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/quickstart"), dir.path());
    let d = dir.path().to_str().unwrap();
    let applied = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", d, "--auto-approve"])
        .run()
        .await;
    assert_eq!(applied.code, 0, "{}", applied.transcript());
    let monitor = std::fs::read_to_string(dir.path().join("monitor.yaml")).unwrap();
    let changed = monitor.replace(
        "      / sum(rate(http_requests_total{service=\"checkout\"}[5m]))\n",
        "      /\n    sum(rate(http_requests_total{service=\"checkout\"}[10m]))\n",
    );
    assert_ne!(changed, monitor);
    write(dir.path(), "monitor.yaml", &changed);
    let plan = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", d])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
    let stdout = plan.stdout;
    assert!(
        stdout.contains("    -  / sum(rate(http_requests_total{service=\"checkout\"}[5m]))\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("\\n"), "{stdout}");
    cfgctl_snapshot!("multiline_promql_text", stdout);
}

#[test]
fn schema_out_writes_the_committed_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cfgctl.schema.json");
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["schema", "--out"])
        .arg(&out)
        .run_blocking();
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(run.stdout, "");
    let written = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(root().join("schema/manifest.schema.json")).unwrap();
    assert!(
        written == committed,
        "schema/manifest.schema.json differs from `cfgctl schema --out`: run `cargo run -- schema --out schema/manifest.schema.json`"
    );
    let missing = Cfgctl::bare()
        .args(&["schema", "--out", "/nonexistent-dir/x.json"])
        .run_blocking();
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .starts_with("error: writing the schema to /nonexistent-dir/x.json: "),
        "{}",
        missing.stderr
    );
}

#[test]
fn version_names_the_commit() {
    let run = Cfgctl::bare().args(&["--version"]).run_blocking();
    assert_eq!(run.code, 0);
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = std::env::var("CFGCTL_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or(head)
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(
        run.stdout,
        format!("cfgctl {} (commit {commit})\n", env!("CARGO_PKG_VERSION"))
    );
}
