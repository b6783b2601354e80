//! Each mapping rule of docs/import.md on a small input, bad input, and the report.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::*;

mod red_team;

/// Writes `files` into a new folder and imports it (bucket `b`, Alertmanager when given).
pub(super) fn run(
    files: &[(&str, &str)],
    alertmanager: Option<&str>,
) -> Result<Output, ImportError> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let am = alertmanager.map(|text| {
        let path = dir.path().join("am.yml");
        std::fs::write(&path, text).unwrap();
        path
    });
    let out = import(&PrometheusSettings {
        inputs: files.iter().map(|(n, _)| dir.path().join(n)).collect(),
        alertmanager: am,
        bucket: Some("b".into()),
        team: alertmanager.map(|_| "t".to_string()),
        command: "cfgctl import prometheus".into(),
        ..PrometheusSettings::default()
    });
    // Paths in messages and notes are the temporary folder's: cut it off.
    out.map_err(|e| match e {
        ImportError::Located {
            file,
            line,
            column,
            message,
        } => ImportError::Located {
            file: file
                .strip_prefix(dir.path())
                .map(Path::to_path_buf)
                .unwrap_or(file),
            line,
            column,
            message,
        },
        e => e,
    })
    .map(|mut o| {
        let prefix = format!("{}/", dir.path().display());
        for n in &mut o.report.notes {
            n.source.file = n.source.file.replace(&prefix, "");
        }
        for v in &mut o.report.variables {
            v.source.file = v.source.file.replace(&prefix, "");
        }
        o.report.inputs = o
            .report
            .inputs
            .iter()
            .map(|i| i.replace(&prefix, ""))
            .collect();
        o
    })
}

/// The specs of a written file, in order.
pub(super) fn specs(out: &Output, path: &str) -> Vec<Value> {
    let text = &out.files[&PathBuf::from(path)];
    crate::util::yaml::parse_documents(text)
        .unwrap()
        .into_iter()
        .map(|d| d.value["spec"].clone())
        .collect()
}

const TWO_SEVERITIES: &str = r#"groups:
- name: api
  interval: 30s
  rules:
  - alert: HighErrors
    expr: rate(errors_total[5m]) > 5
    for: 10m
    labels: {severity: warning, team: api}
    annotations: {summary: Errors are high}
  - alert: HighErrors
    expr: rate( errors_total[5m] )  >  20
    for: 2m
    keep_firing_for: 5m
    labels: {severity: critical, team: api}
    annotations: {summary: Errors are very high}
  - alert: Down
    expr: up{job="api"} == 0
    labels: {severity: critical}
  - alert: Down
    expr: absent(up{job="api"})
    labels: {severity: critical}
"#;

#[test]
fn one_alert_name_with_one_query_is_one_monitor_with_both_levels() {
    let out = run(&[("api.yaml", TWO_SEVERITIES)], None).unwrap();
    let monitors = specs(&out, "rules/api.yaml");
    assert_eq!(
        monitors[0],
        json!({
            "slug": "higherrors",
            "name": "HighErrors",
            "bucket_slug": "b",
            "labels": {"alertname": "HighErrors", "team": "api"},
            "annotations": {"summary": "Errors are very high"},
            "signal_grouping": {"signal_per_series": true},
            "series_conditions": {"defaults": {
                "critical": {"conditions": [{"op": "GT", "value": 20.0, "sustain_secs": 120, "resolve_sustain_secs": 300}]},
                "warn": {"conditions": [{"op": "GT", "value": 5.0, "sustain_secs": 600}]},
            }},
            "interval_secs": 30,
            "prometheus_query": "rate(errors_total[5m])",
        })
    );
    // The warning rule's other summary is reported, not lost silently.
    let notes: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}: {}", n.source, n.subject, n.message))
        .collect();
    assert!(
        notes.contains(&"api.yaml:5: alert HighErrors: annotation `summary` differs from the rule at line 10: that rule's value is kept".to_string()),
        "{notes:#?}"
    );
}

#[test]
fn one_alert_name_with_two_queries_is_two_monitors_with_unique_slugs() {
    let out = run(&[("api.yaml", TWO_SEVERITIES)], None).unwrap();
    let monitors = specs(&out, "rules/api.yaml");
    assert_eq!(monitors.len(), 3);
    assert_eq!(
        (monitors[1]["slug"].as_str(), monitors[1]["name"].as_str()),
        (Some("down"), Some("Down"))
    );
    assert_eq!(
        (monitors[2]["slug"].as_str(), monitors[2]["name"].as_str()),
        (Some("down-2"), Some("Down (2)"))
    );
    assert_eq!(monitors[1]["prometheus_query"], "up{job=\"api\"}");
    assert_eq!(
        monitors[1]["series_conditions"]["defaults"]["critical"]["conditions"],
        json!([{"op": "EQ", "value": 0.0}])
    );
    // Not a comparison with a number: the whole expression, firing when it returns series.
    assert_eq!(monitors[2]["prometheus_query"], "absent(up{job=\"api\"})");
    assert_eq!(
        monitors[2]["series_conditions"]["defaults"]["critical"]["conditions"],
        json!([{"op": "EXISTS"}])
    );
    let about_down: Vec<&str> = out
        .report
        .notes
        .iter()
        .filter(|n| n.subject == "alert Down")
        .map(|n| n.message.as_str())
        .collect();
    assert_eq!(about_down.len(), 2, "{about_down:?}");
    assert!(
        about_down[1].contains("2 different queries"),
        "{about_down:?}"
    );
    assert_eq!(out.report.counts.get("Monitor"), Some(&3));
}

#[test]
fn severities_without_a_level_of_their_own_are_reported() {
    let rules = "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    labels: {severity: info}\n  - alert: B\n    expr: up == 0\n";
    let out = run(&[("g.yaml", rules)], None).unwrap();
    let monitors = specs(&out, "rules/g.yaml");
    assert!(monitors[0]["series_conditions"]["defaults"]["warn"].is_object());
    assert!(monitors[1]["series_conditions"]["defaults"]["critical"].is_object());
    let notes: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.source, n.message))
        .collect();
    assert_eq!(
        notes,
        [
            "g.yaml:4: severity `info`: a warn condition",
            "g.yaml:7: no severity label: a critical condition"
        ]
    );
}

#[test]
fn recording_rules_keep_their_metric_expression_and_labels_with_unique_slugs() {
    let rules = r#"apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: r}
spec:
  groups:
  - name: rec
    interval: 1m
    labels: {source: mixin}
    rules:
    - record: job:up:sum
      expr: sum by (job) (up)
      labels: {tier: "1"}
    - record: job:up:sum
      expr: |
        sum by (job) (up offset 1h)
"#;
    let out = run(&[("r.yaml", rules)], None).unwrap();
    assert_eq!(
        specs(&out, "rules/rec.yaml"),
        [
            json!({"slug": "job-up-sum", "name": "job:up:sum", "bucket_slug": "b", "metric_name": "job:up:sum", "interval_secs": 60, "label_policy": {"add": {"source": "mixin", "tier": "1"}}, "prometheus_expr": "sum by (job) (up)"}),
            json!({"slug": "job-up-sum-2", "name": "job:up:sum", "bucket_slug": "b", "metric_name": "job:up:sum", "interval_secs": 60, "label_policy": {"add": {"source": "mixin"}}, "prometheus_expr": "sum by (job) (up offset 1h)"}),
        ]
    );
    assert_eq!(out.report.counts.get("RecordingRule"), Some(&2));
}

#[test]
fn lists_and_multi_document_files_are_read_and_other_objects_noted() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: monitoring.coreos.com/v1\n  kind: PrometheusRule\n  spec:\n    groups:\n    - name: one\n      rules:\n      - {record: a, expr: up}\n---\napiVersion: v1\nkind: ConfigMap\ndata: {}\n";
    let out = run(&[("l.yaml", text)], None).unwrap();
    assert_eq!(specs(&out, "rules/one.yaml").len(), 1);
    let notes: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}: {}", n.source, n.subject, n.message))
        .collect();
    assert_eq!(
        notes,
        ["l.yaml:12: object of kind ConfigMap: not a PrometheusRule: skipped"]
    );
}

#[test]
fn bad_input_is_a_located_error() {
    let cases = [
        (
            "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: rate(x[5m] > 1\n",
            "g.yaml:5:5: `expr` is not valid PromQL",
        ),
        (
            "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: soon\n",
            "g.yaml:6:5: `for`: `soon` is not a duration",
        ),
        (
            "groups:\n- name: g\n  rules:\n  - alert: A\n",
            "g.yaml:4:5: a rule needs an `expr`",
        ),
        (
            "groups:\n- rules: []\n",
            "g.yaml:2:3: a rule group needs a `name`",
        ),
        (
            "groups:\n- name: g\n  rules:\n  - expr: up\n",
            "g.yaml:4:5: a rule needs `alert` or `record`",
        ),
        ("groups: [\n", "g.yaml:1:9: unclosed bracket"),
        (
            "groups:\n- name: g\n  rules:\n  - record: 'a b'\n    expr: up\n",
            "g.yaml:4:5: `a b` is not a metric name",
        ),
        (
            "groups:\n- name: g\n  rules:\n  - alert: ''\n    expr: up\n",
            "g.yaml:4:5: an alert needs a name",
        ),
        (
            "foo: bar\n",
            "g.yaml:1:1: not a Prometheus rule file: no `groups` and no `kind`",
        ),
    ];
    for (text, want) in cases {
        let e = run(&[("g.yaml", text)], None).unwrap_err().to_string();
        assert!(e.starts_with(want), "{text:?}\n got: {e}\nwant: {want}");
    }
}

#[test]
fn durations_are_prometheus_durations() {
    assert_eq!(parse_duration("1h30m"), Some(5_400_000));
    assert_eq!(parse_duration("90s"), Some(90_000));
    assert_eq!(parse_duration("1w"), Some(604_800_000));
    assert_eq!(parse_duration("1m500ms"), Some(60_500));
    assert_eq!(parse_duration("0"), Some(0));
    for bad in ["", "5", "m5", "5m1h", "1.5h", "5 m"] {
        assert_eq!(parse_duration(bad), None, "{bad}");
    }
}

const AM: &str = r#"global:
  slack_api_url: 'https://hooks.slack.com/services/FAKE-GLOBAL'
route:
  receiver: mails
  group_by: [alertname]
  repeat_interval: 4h
  group_wait: 30s
  routes:
  - matchers: ['severity="critical"']
    receiver: pager
  - match: {team: db}
    receiver: db
    routes:
    - match_re: {severity: "warning|info"}
      receiver: mails
  - matchers: ['team!="web"']
    receiver: pager
receivers:
- name: mails
  email_configs:
  - to: ops@example.org
    auth_password: FAKE-SMTP
- name: pager
  pagerduty_configs:
  - routing_key: FAKE-ROUTING
    http_config:
      basic_auth: {username: u, password_file: /run/FAKE-FILE}
- name: db
  slack_configs:
  - channel: '#db'
    send_resolved: true
  opsgenie_configs:
  - api_key: FAKE-OPSGENIE
    responders: [{name: dba, type: team}]
"#;

#[test]
fn alertmanager_receivers_become_notifiers_with_credentials_as_references() {
    let out = run(&[("g.yaml", "groups: []\n")], Some(AM)).unwrap();
    let notifiers = specs(&out, "alertmanager/notifiers.yaml");
    assert_eq!(
        notifiers,
        [
            json!({"slug": "mails", "name": "mails", "skip_resolved": true, "email": {"to": "ops@example.org"}}),
            json!({"slug": "pager", "name": "pager", "pagerduty": {"routing_key": "${env:AM_PAGER_PAGERDUTY_ROUTING_KEY}", "http_config": {"basic_auth": {"username": "u", "password": "${env:AM_PAGER_PAGERDUTY_BASIC_AUTH_PASSWORD}"}}}}),
            json!({"slug": "db-slack", "name": "db (slack)", "slack": {"channel": "#db", "api_url": "${env:AM_GLOBAL_SLACK_API_URL}"}}),
            json!({"slug": "db-ops-genie", "name": "db (ops_genie)", "ops_genie": {"api_key": "${env:AM_DB_OPS_GENIE_API_KEY}", "responders": [{"name": "dba", "responder_type": "TEAM"}]}}),
        ]
    );
    let vars: Vec<String> = out
        .report
        .variables
        .iter()
        .map(|v| format!("{} {}", v.name, v.source))
        .collect();
    assert_eq!(
        vars,
        [
            "AM_PAGER_PAGERDUTY_ROUTING_KEY am.yml:25",
            "AM_PAGER_PAGERDUTY_BASIC_AUTH_PASSWORD am.yml:27",
            "AM_GLOBAL_SLACK_API_URL am.yml:2",
            "AM_DB_OPS_GENIE_API_KEY am.yml:33",
        ]
    );
    let everything = format!(
        "{:?}{}{}",
        out.files,
        out.report.markdown(),
        out.report.summary(Path::new("out"))
    );
    for secret in [
        "FAKE-GLOBAL",
        "FAKE-SMTP",
        "FAKE-ROUTING",
        "FAKE-FILE",
        "FAKE-OPSGENIE",
    ] {
        assert!(!everything.contains(secret), "{secret} written");
    }
}

#[test]
fn severity_routes_become_the_policy_and_other_matchers_overrides() {
    let out = run(&[("g.yaml", "groups: []\n")], Some(AM)).unwrap();
    let policy = &specs(&out, "alertmanager/notification-policy.yaml")[0];
    let list = |slugs: &[&str]| json!({"notifier_slugs": slugs, "repeat_interval_secs": 14400, "group_by": {"label_names": ["alertname"]}});
    assert_eq!(
        policy,
        &json!({
            "slug": "alertmanager",
            "name": "Alertmanager routes",
            "team_slug": "t",
            "routes": {
                "defaults": {"critical": list(&["pager"]), "warn": list(&["mails"])},
                "overrides": [{
                    "alert_label_matchers": [{"type": "EXACT", "name": "team", "value": "db"}],
                    // The critical route comes first in Alertmanager: it wins here too.
                    "notifiers": {"critical": list(&["pager"]), "warn": list(&["mails"])},
                }],
            },
        })
    );
    let notes: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.source, n.message))
        .collect();
    assert!(
        notes.contains(
            &"am.yml:7: `group_wait` has no counterpart in the policy: not imported".to_string()
        ),
        "{notes:#?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("am.yml:16: matches on `team!=\"web\"`")),
        "{notes:#?}"
    );
    assert!(
        notes.contains(
            &"am.yml:22: email `auth_password` has no counterpart in the Notifier: not imported"
                .to_string()
        ),
        "{notes:#?}"
    );
}

#[test]
fn an_alertmanager_secret_is_read_from_string_data_or_base64_data() {
    let config = "route: {receiver: x}\nreceivers:\n- name: x\n  webhook_configs:\n  - url: https://FAKE-HOOK\n";
    let string_data = format!(
        "apiVersion: v1\nkind: Secret\nstringData:\n  alertmanager.yaml: |\n{}",
        config
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let encoded = "cm91dGU6IHtyZWNlaXZlcjogeH0KcmVjZWl2ZXJzOgotIG5hbWU6IHgKICB3ZWJob29rX2NvbmZpZ3M6CiAgLSB1cmw6IGh0dHBzOi8vRkFLRS1IT09LCg==";
    let data = format!("apiVersion: v1\nkind: Secret\ndata:\n  alertmanager.yaml: {encoded}\n");
    for secret in [string_data, data] {
        let out = run(&[("g.yaml", "groups: []\n")], Some(&secret)).unwrap();
        assert_eq!(
            specs(&out, "alertmanager/notifiers.yaml"),
            [json!({"slug": "x", "name": "x", "webhook": {"url": "${env:AM_X_WEBHOOK_URL}"}})]
        );
        assert_eq!(
            out.report.variables[0].source.to_string(),
            "am.yml#alertmanager.yaml:5"
        );
    }
    let e = run(
        &[("g.yaml", "groups: []\n")],
        Some("kind: Secret\ndata: {}\n"),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("a Secret without `alertmanager.yaml`"),
        "{e}"
    );
}

#[test]
fn the_report_of_a_small_input() {
    let out = run(&[("api.yaml", TWO_SEVERITIES)], Some(AM)).unwrap();
    insta::assert_snapshot!(out.report.markdown());
}

#[test]
fn in_a_collection_recording_rules_run_in_their_groups_execution_group() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.yaml");
    let rules = "groups:\n- name: Node Rules\n  limit: 10\n  rules:\n  - record: a\n    expr: up\n  - alert: B\n    expr: up == 0\n    partial_response_strategy: warn\n";
    std::fs::write(&path, rules).unwrap();
    let out = import(&PrometheusSettings {
        inputs: vec![path],
        collection: Some("c".into()),
        ..PrometheusSettings::default()
    })
    .unwrap();
    let docs = specs(&out, "rules/node-rules.yaml");
    assert_eq!(docs[0]["execution_group"], "node-rules");
    assert_eq!(docs[0].get("bucket_slug"), None);
    assert_eq!(docs[1]["collection_slug"], "c");
    let notes: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}: {}", n.source.line, n.subject, n.message))
        .collect();
    assert_eq!(
        notes,
        [
            "3: group Node Rules: `limit` has no counterpart: not imported",
            "9: alert B: `partial_response_strategy` has no counterpart: not imported",
            "7: alert B: no severity label: a critical condition",
        ]
    );
    // A policy needs a team or a bucket.
    let e = import(&PrometheusSettings {
        inputs: vec![dir.path().join("r.yaml")],
        collection: Some("c".into()),
        alertmanager: Some(dir.path().join("am.yml")),
        ..PrometheusSettings::default()
    })
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--alertmanager with --collection needs --team SLUG"),
        "{e}"
    );
}

#[test]
fn a_route_to_an_undefined_receiver_is_a_located_error() {
    let am = "route:\n  receiver: a\n  routes:\n  - match: {team: x}\n    receiver: nobody\nreceivers:\n- name: a\n";
    let e = run(&[("g.yaml", "groups: []\n")], Some(am))
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("am.yml:5:5: receiver `nobody` is not defined in `receivers`"),
        "{e}"
    );
}

#[test]
fn a_malformed_alertmanager_configuration_is_a_located_error() {
    for (am, want) in [
        (
            "route: {receiver: a}\nreceivers: x\n",
            "am.yml:2:1: `receivers` must be a list",
        ),
        (
            "route: {receiver: a}\nreceivers: [{name: a}, {name: a}]\n",
            "am.yml:2:25: receiver `a` is defined twice",
        ),
        (
            "route: {receiver: a}\nreceivers: [{name: a, slack_configs: [1]}]\n",
            "am.yml:2:23: `slack_configs` must be a list of mappings",
        ),
        (
            "route: {receiver: a, routes: [1]}\nreceivers: [{name: a}]\n",
            "am.yml:1:31: a route must be a mapping",
        ),
        (
            "route: {receiver: a, repeat_interval: soon}\nreceivers: [{name: a}]\n",
            "am.yml:1:22: `repeat_interval` is not a duration (such as 5m or 4h)",
        ),
        (
            "route: {receiver: a, group_by: 5}\nreceivers: [{name: a}]\n",
            "am.yml:1:22: `group_by` must be a list of strings",
        ),
    ] {
        let e = run(&[("g.yaml", "groups: []\n")], Some(am))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with(want), "{am}\n got: {e}\nwant: {want}");
    }
}
