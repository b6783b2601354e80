//! Text that did not come from cfgctl (the tenant's, an imported file's) is written into
//! manifests with every `${` as `$${` (REDTEAM D5, D6b, D8): a `${env:X}`, `${file:P}` or
//! `${var:V}` in it is never substituted, so whoever can edit the tenant cannot make CI send
//! its environment or files into it, and the value plans back unchanged.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::json;

use crate::support::{read, write, Cfgctl, Tenant};

/// The red team's dashboard title: every reference form, and an escaped one.
const TITLE: &str = "T ${env:HOME} ${var:x} $${y} ${file:../../etc/passwd}";
const TITLE_ESCAPED: &str = "T $${env:HOME} $${var:x} $$${y} $${file:../../etc/passwd}";

async fn tenant_with_hostile_text() -> Tenant {
    let t = Tenant::start(Config::default()).await;
    let r = t
        .create(
            Kind::named("Bucket"),
            json!({"slug": "payments", "name": "Payments", "description": "owned ${env:AWS_SECRET_ACCESS_KEY}"}),
        )
        .await;
    assert!(r.status < 300, "{r:?}");
    let doc = json!({"title": TITLE, "panels": []}).to_string();
    let r = t
        .create(
            Kind::named("ClassicDashboard"),
            json!({"slug": "nodes", "name": "Nodes", "bucket_slug": "payments", "dashboard_json": doc}),
        )
        .await;
    assert!(r.status < 300, "{r:?}");
    t
}

#[tokio::test]
async fn export_escapes_tenant_text_and_plans_clean_with_the_variables_set() {
    let t = tenant_with_hostile_text().await;
    for files in [false, true] {
        let out = tempfile::tempdir().unwrap();
        let o = out.path().to_str().unwrap();
        let mut args = vec!["export", "--out", o];
        if files {
            args.push("--dashboards-as-files");
        }
        let r = Cfgctl::new(&t).args(&args).run().await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        let bucket = read(out.path(), "buckets/payments.yaml");
        assert!(
            bucket.contains("description: owned $${env:AWS_SECRET_ACCESS_KEY}\n"),
            "{bucket}"
        );
        let dash = read(out.path(), "classic-dashboards/nodes.yaml");
        if files {
            // The document's own file is data, never substituted: written as it is.
            assert!(
                dash.contains("dashboard_json: ${file:nodes.json}"),
                "{dash}"
            );
            let json = read(out.path(), "classic-dashboards/nodes.json");
            assert!(json.contains(&format!("\"title\": \"{TITLE}\"")), "{json}");
        } else {
            assert!(
                dash.contains(&format!("title: {TITLE_ESCAPED}\n")),
                "{dash}"
            );
        }
        let r = Cfgctl::new(&t)
            .args(&["plan", o])
            .env("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-K7MDENG")
            .env("HOME", "/root")
            .run()
            .await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        assert!(
            r.stdout
                .contains("\nNo changes: the target matches the manifests"),
            "files: {files}\n{}",
            r.transcript()
        );
        assert!(!r.stdout.contains("wJalrXUtnFEMI"), "{}", r.stdout);
    }
}

#[tokio::test]
async fn pull_escapes_tenant_text_keeps_references_and_names_only_its_own_variables() {
    let t = Tenant::start(Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "teams.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: payments\n  name: Payments\n  description: ${env:DESC}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["apply", ".", "--auto-approve"])
        .env("DESC", "Checkout")
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = t
        .update(
            Kind::named("Team"),
            Some("payments"),
            json!({"slug": "payments", "name": "Payments ${env:GITHUB_TOKEN} $${y}", "description": "Checkout"}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["pull", "."])
        .env("DESC", "Checkout")
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(
        read(d, "teams.yaml"),
        "api_version: v1/config\nkind: Team\nspec:\n  slug: payments\n  name: Payments $${env:GITHUB_TOKEN} $$${y}\n  description: ${env:DESC}\n"
    );
    assert!(
        !r.stdout.contains("GITHUB_TOKEN") && !r.stderr.contains("set this variable"),
        "{}",
        r.transcript()
    );
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["plan", "."])
        .env("DESC", "Checkout")
        .env("GITHUB_TOKEN", "ghp_secret")
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("\nNo changes: the target matches the manifests"),
        "{}",
        r.transcript()
    );
}

#[tokio::test]
async fn import_grafana_escapes_a_title_and_keeps_the_json_file_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "in/d1.json",
        r#"{"uid":"nodes","title":"Nodes ${env:regex}","panels":[]}"#,
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "grafana",
            "in/d1.json",
            "--collection",
            "platform",
            "--out",
            "out",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let dir_of = Kind::named("GrafanaDashboard").def().path;
    let manifest = read(d, &format!("out/{dir_of}/nodes.yaml"));
    assert!(
        manifest.contains("name: Nodes $${env:regex}\n"),
        "{manifest}"
    );
    assert!(
        manifest.contains("dashboard_json: ${file:nodes.json}\n"),
        "{manifest}"
    );
    let json = read(d, &format!("out/{dir_of}/nodes.json"));
    assert!(json.contains("\"title\": \"Nodes ${env:regex}\""), "{json}");
    let r = Cfgctl::bare().dir(d).args(&["validate", "out"]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}

#[tokio::test]
async fn import_prometheus_escapes_rule_text_and_keeps_its_credential_references() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "rules.yaml",
        "groups:\n- name: g\n  rules:\n  - alert: Down\n    expr: up == 0\n    labels: {severity: critical}\n    annotations: {runbook: \"https://x/${env:HOME}\"}\n",
    );
    write(
        d,
        "am.yaml",
        "route: {receiver: r1}\nreceivers:\n- name: r1\n  slack_configs:\n  - api_url: https://hooks.slack.com/services/T/B/SECRET\n    channel: \"#x ${var:y}\"\n",
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "prometheus",
            "rules.yaml",
            "--bucket",
            "platform",
            "--team",
            "platform",
            "--alertmanager",
            "am.yaml",
            "--out",
            "out",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let rules = read(d, "out/rules/g.yaml");
    assert!(rules.contains("https://x/$${env:HOME}"), "{rules}");
    let notifiers = read(d, "out/alertmanager/notifiers.yaml");
    assert!(
        notifiers.contains("api_url: ${env:AM_R1_SLACK_API_URL}\n"),
        "{notifiers}"
    );
    assert!(
        notifiers.contains("channel: \"#x $${var:y}\"\n"),
        "{notifiers}"
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["validate", "out"])
        .env(
            "AM_R1_SLACK_API_URL",
            "https://hooks.slack.com/services/T/B/X",
        )
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(!r.stdout.contains("/root"), "{}", r.transcript());
}

/// REDTEAM D9: a line break in a dashboard title or an alert name cannot start a line of its
/// own in the summary (a forged `imported ...` line, a GitHub workflow command), nor HTML in
/// IMPORT.md.
#[tokio::test]
async fn import_notes_print_titles_and_alert_names_inert() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "g3/e.json",
        r#"{"uid":"esc","id":3,"title":"T\u001b[31mRED\r\nimported 0 manifests: all clean <b>x</b>","panels":[]}"#,
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "grafana",
            "g3",
            "--collection",
            "platform",
            "--out",
            "g3out",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "g3/e.json:1: note: dashboard T\\u001b[31mRED\\r\\nimported 0 manifests: all clean <b>x</b>: `id` left out (the server sets it)\n"
        ),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr
            .lines()
            .any(|l| l.starts_with("imported 0 manifests")),
        "{}",
        r.stderr
    );
    let report = read(d, "g3out/IMPORT.md");
    assert!(
        !report.contains("<b>") && !report.contains("\nimported 0"),
        "{report}"
    );
    assert!(report.contains("&lt;b&gt;x&lt;/b&gt;"), "{report}");

    write(
        d,
        "rules.yaml",
        "groups:\n- name: \"A\\e[2J\\n::error::FAKE: line\"\n  rules: []\n- name: ok\n  rules:\n  - {alert: Down, expr: up == 0}\n",
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "prometheus",
            "rules.yaml",
            "--bucket",
            "platform",
            "--out",
            "pout",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stderr.contains("A\\u001b[2J\\n::error::FAKE: line"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.lines().any(|l| l.starts_with("::error::")),
        "{}",
        r.transcript()
    );
    let report = read(d, "pout/IMPORT.md");
    assert!(!report.contains("\n::error::"), "{report}");
}

/// A dashboard kept in its own `${file:}` file is data: a title pulled into it is written as
/// the tenant has it (not escaped), and plans back unchanged.
#[tokio::test]
async fn pull_writes_a_dashboard_file_unescaped() {
    let t = Tenant::start(Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "d.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n---\napi_version: v1/config\nkind: ClassicDashboard\nspec:\n  slug: d\n  name: D\n  bucket_slug: b\n  dashboard_json: ${file:d.json}\n",
    );
    write(
        d,
        "d.json",
        "{\n  \"title\": \"old\",\n  \"panels\": []\n}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let doc = json!({"title": "X ${env:HOME}", "panels": []}).to_string();
    let r = t
        .update(
            Kind::named("ClassicDashboard"),
            Some("d"),
            json!({"slug": "d", "name": "D", "bucket_slug": "b", "dashboard_json": doc}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = Cfgctl::new(&t).dir(d).args(&["pull", "."]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(
        read(d, "d.json"),
        "{\n  \"title\": \"X ${env:HOME}\",\n  \"panels\": []\n}\n"
    );
    assert!(
        !r.stderr.contains("set this variable"),
        "{}",
        r.transcript()
    );
    let r = Cfgctl::new(&t).dir(d).args(&["plan", "."]).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("\nNo changes: the target matches the manifests"),
        "{}",
        r.transcript()
    );
}
