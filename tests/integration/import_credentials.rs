//! `import prometheus`: a credential inside a URL (REDTEAM D6a, D7) is never written in clear,
//! and a reference in a field the API keeps in clear (so plans would print its value) is
//! reported as such in IMPORT.md.

use crate::support::{read, write, Cfgctl};

#[tokio::test]
async fn url_credentials_are_never_written_and_a_shown_reference_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "empty.yaml", "groups: []\n");
    write(
        d,
        "am.yaml",
        "route: {receiver: team-api, routes: [{receiver: r1, matchers: [x=\"1\"]}]}\nreceivers:\n- name: team-api\n  webhook_configs:\n  - url: https://user:webhookpass@hooks.example.com/x?token=querysecret\n- name: r1\n  slack_configs:\n  - api_url_file: /etc/secrets/slack\n    http_config:\n      proxy_url: http://puser:proxypass2-secret@proxy:3128\n",
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "prometheus",
            "empty.yaml",
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
    let notifiers = read(d, "out/alertmanager/notifiers.yaml");
    for secret in ["webhookpass", "querysecret", "proxypass2-secret"] {
        assert!(!notifiers.contains(secret), "{notifiers}");
        assert!(
            !r.stderr.contains(secret) && !r.stdout.contains(secret),
            "{}",
            r.transcript()
        );
    }
    assert!(
        notifiers.contains("url: ${env:AM_TEAM_API_WEBHOOK_URL}\n"),
        "{notifiers}"
    );
    assert!(
        notifiers.contains("proxy_url: http://puser@proxy:3128\n"),
        "{notifiers}"
    );
    let report = read(d, "out/IMPORT.md");
    assert!(
        report.contains("| am.yaml:5 | receiver team-api | webhook `url` is a credential written as `${env:AM_TEAM_API_WEBHOOK_URL}`, but the API keeps `webhook.url` in clear: every plan (and pull-request comment) shows the variable's value; carry the credential in `http_config` (`bearer_token`, `basic_auth`) instead |"),
        "{report}"
    );
    assert!(
        report.contains("| am.yaml:10 | receiver r1 | http_config `proxy_url`: its password was left out (the API keeps `proxy_url` in clear, so every plan would show it); give the proxy its credential another way |"),
        "{report}"
    );
}

/// REDTEAM D17: distinct rule groups with one name (they evaluate apart, at their own
/// intervals) get distinct execution groups with `--collection`, reported.
#[tokio::test]
async fn rule_groups_with_one_name_get_distinct_execution_groups() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "eg/1.yaml",
        "groups: [{name: api, interval: 30s, rules: [{record: a:x, expr: sum(up)}]}]\n",
    );
    write(
        d,
        "eg/2.yaml",
        "groups: [{name: api, interval: 5m, rules: [{record: b:x, expr: sum(up)}]}, {name: API, rules: [{record: c:x, expr: sum(up)}]}]\n",
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "prometheus",
            "eg",
            "--collection",
            "platform",
            "--team",
            "platform",
            "--out",
            "outeg",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let groups: Vec<String> = ["api", "api-2", "api-3"]
        .iter()
        .map(|f| read(d, &format!("outeg/rules/{f}.yaml")))
        .map(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("  execution_group: "))
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(groups, ["api", "api-2", "api-3"]);
    assert!(
        r.stderr.contains("eg/2.yaml:1: note: group api: another group is named `api` too: its rules run in the execution group `api-2`\n"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("eg/2.yaml:1: note: group API: another group is named `api` too: its rules run in the execution group `api-3`\n"),
        "{}",
        r.stderr
    );
}
