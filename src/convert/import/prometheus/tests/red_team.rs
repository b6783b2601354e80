//! The red team's defects of the import (D19, D25, D29), each on its exact input.

use serde_json::json;

use super::{run, specs};

/// Red team D19: a label that only the critical rule of a merged alert carries labels the
/// warning condition too (its routing changes): said, at the rule that carries it.
#[test]
fn a_label_only_some_merged_rules_carry_is_reported() {
    let rules = "groups:\n- name: g\n  rules:\n  - {alert: Disk, expr: disk_used > 90, labels: {severity: critical, team: storage}}\n  - {alert: Disk, expr: disk_used > 80, labels: {severity: warning}}\n";
    let out = run(&[("lbl.yaml", rules)], None).unwrap();
    let notes: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}: {}", n.source, n.subject, n.message))
        .collect();
    assert!(
        notes.contains(&"lbl.yaml:4: alert Disk: label `team` is on 1 of its 2 merged rules only: the Monitor gives it to every condition (check the routes that match it)".to_string()),
        "{notes:#?}"
    );
}

/// Red team D29: a second document is never dropped silently, and a `List` holding the
/// Secret (what `kubectl get secret A B -o yaml` gives) is read for the one that holds it.
#[test]
fn a_multi_document_alertmanager_file_is_refused_and_a_list_read() {
    let two = "---\nroute: {receiver: x}\nreceivers: [{name: x}]\n---\nroute: {receiver: y}\nreceivers: [{name: y, webhook_configs: [{url: \"https://h/S\"}]}]\n";
    let e = run(&[("g.yaml", "groups: []\n")], Some(two)).unwrap_err();
    assert!(
        e.to_string().contains("am.yml:5:1") && e.to_string().contains("2 documents"),
        "{e}"
    );
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: other}\n  stringData: {token: x}\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: am}\n  stringData:\n    alertmanager.yaml: |\n      route: {receiver: x}\n      receivers:\n      - name: x\n        webhook_configs:\n        - url: https://FAKE-HOOK\n";
    let out = run(&[("g.yaml", "groups: []\n")], Some(list)).unwrap();
    assert_eq!(
        specs(&out, "alertmanager/notifiers.yaml"),
        [json!({"slug": "x", "name": "x", "webhook": {"url": "${env:AM_X_WEBHOOK_URL}"}})]
    );
}

/// Red team D25: a credential's value copied into another field (a title quoting the webhook,
/// an e-mail text with the token) is never written in clear: replaced and reported.
#[test]
fn a_credential_copied_into_another_field_is_never_written() {
    let am = "route: {receiver: r}\nreceivers:\n  - name: r\n    slack_configs:\n      - api_url: https://hooks.slack.com/services/T1/B1/REUSEDSECRET\n        title: \"posted via https://hooks.slack.com/services/T1/B1/REUSEDSECRET\"\n    webhook_configs:\n      - {url: https://hook.example.com/x, http_config: {bearer_token: sk-live-REUSED2}}\n    email_configs:\n      - {to: ops@example.com, text: \"token sk-live-REUSED2\"}\n";
    let out = run(&[("g.yaml", "groups: []\n")], Some(am)).unwrap();
    for (path, text) in &out.files {
        assert!(
            !text.contains("REUSEDSECRET") && !text.contains("REUSED2"),
            "{}: {text}",
            path.display()
        );
    }
    let notes: Vec<String> = out.report.notes.iter().map(|n| n.message.clone()).collect();
    assert!(
        notes
            .iter()
            .filter(|n| n.contains("in clear: written as `[credential removed]`"))
            .count()
            >= 2,
        "{notes:#?}"
    );
    assert!(!out.report.markdown().contains("REUSED"));
}

/// Red team E17: a name's own slug is kept for it, whatever comes first ("cafe uberblick 2"
/// was `cafe-uberblick-2-2`, its slug given to the second "Cafe Uberblick").
#[test]
fn an_alerts_own_slug_is_never_another_alerts_suffixed_slug() {
    let rules = "groups:\n- name: g\n  rules:\n  - {alert: \"Café Überblick\", expr: up == 0}\n  - {alert: \"Cafe Uberblick\", expr: up == 1}\n  - {alert: \"cafe uberblick 2\", expr: up == 2}\n";
    let out = run(&[("r.yaml", rules)], None).unwrap();
    let slugs: Vec<(String, String)> = specs(&out, "rules/g.yaml")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["slug"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let slug_of = |name: &str| {
        slugs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(slug_of("Café Überblick"), "cafe-uberblick", "{slugs:?}");
    assert_eq!(slug_of("cafe uberblick 2"), "cafe-uberblick-2", "{slugs:?}");
    assert_eq!(slug_of("Cafe Uberblick"), "cafe-uberblick-3", "{slugs:?}");
}
