//! The realistic mix of the performance harness (`shared/perf/manifests.py`), ported: N
//! resources, half of them Perses dashboards of about 4 KB, 10% classic dashboards, 20%
//! monitors, the rest of every other kind, with cross-kind references, written 50 documents a
//! file in one folder per kind (sorted order puts parents first). Dashboards are written the
//! three ways people write them: a YAML mapping, a literal block of pretty JSON, a one-line
//! JSON string. Deterministic for a given N and seed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cfgctl::api::registry::Kind;
use serde_json::{json, Value};

/// Share of N per kind, in file (= dependency) order; the rounding remainder goes to
/// dashboards.
const MIX: [(&str, &str, f64); 11] = [
    ("Team", "teams", 0.02),
    ("NotificationPolicy", "notification-policies", 0.02),
    ("Bucket", "buckets", 0.03),
    ("Collection", "collections", 0.05),
    ("Dashboard", "dashboards", 0.50),
    ("ClassicDashboard", "classic-dashboards", 0.10),
    ("Monitor", "monitors", 0.20),
    ("DerivedMetric", "derived-metrics", 0.02),
    ("DerivedLabel", "derived-labels", 0.02),
    ("Dataset", "datasets", 0.02),
    ("DropRule", "drop-rules", 0.02),
];

const SERVICES: [&str; 20] = [
    "payments",
    "checkout",
    "search",
    "identity",
    "billing",
    "inventory",
    "shipping",
    "catalog",
    "notifications",
    "gateway",
    "ledger",
    "fraud",
    "ads",
    "media",
    "storage",
    "network",
    "orders",
    "pricing",
    "reviews",
    "auth",
];
const ENVS: [&str; 4] = ["prod", "staging", "dev", "canary"];
const TOPICS: [(&str, &str, &str); 8] = [
    ("Request rate", "requests/sec", "sum by (code) (rate(http_requests_total{service=\"SVC\",cluster=~\"$cluster\"}[5m]))"),
    ("Error ratio", "percent-decimal", "sum(rate(http_requests_total{service=\"SVC\",code=~\"5..\"}[5m])) / sum(rate(http_requests_total{service=\"SVC\"}[5m]))"),
    ("p99 latency", "seconds", "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"SVC\"}[5m])))"),
    ("p50 latency", "seconds", "histogram_quantile(0.5, sum by (le) (rate(http_request_duration_seconds_bucket{service=\"SVC\"}[5m])))"),
    ("CPU usage", "percent-decimal", "sum by (pod) (rate(container_cpu_usage_seconds_total{namespace=\"SVC\"}[5m]))"),
    ("Memory working set", "bytes", "sum by (pod) (container_memory_working_set_bytes{namespace=\"SVC\"})"),
    ("Pod restarts", "decimal", "sum by (pod) (increase(kube_pod_container_status_restarts_total{namespace=\"SVC\"}[1h]))"),
    ("Queue depth", "decimal", "sum by (queue) (rabbitmq_queue_messages_ready{service=\"SVC\"})"),
];

/// How a dashboard's document is written in its manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Not a dashboard, or a YAML mapping.
    Mapping,
    /// A literal block (`|-`) of pretty-printed JSON.
    Block,
    /// A one-line JSON string.
    Line,
}

/// One generated resource.
pub struct Resource {
    pub kind: Kind,
    /// The API object as sent (a document as its compact JSON string).
    pub spec: Value,
    /// The document as a value, for dashboards.
    pub document: Option<Value>,
    pub form: Form,
}

fn words(slug: &str) -> String {
    slug.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn topics(rng: &mut fastrand::Rng, n: usize) -> Vec<(&'static str, &'static str, &'static str)> {
    let mut all = TOPICS.to_vec();
    rng.shuffle(&mut all);
    all.truncate(n);
    all
}

fn perses(rng: &mut fastrand::Rng, slug: &str, project: &str, svc: &str) -> Value {
    let mut panels = serde_json::Map::new();
    let mut items = Vec::new();
    let n = rng.usize(3..=7);
    for (i, (title, unit, query)) in topics(rng, n).into_iter().enumerate() {
        let key = format!("panel_{i}");
        panels.insert(
            key.clone(),
            json!({
                "kind": "Panel",
                "spec": {
                    "display": {"name": title, "description": format!("{title} of {svc}")},
                    "plugin": {"kind": "TimeSeriesChart", "spec": {
                        "legend": {"position": "bottom", "mode": "list"},
                        "yAxis": {"format": {"unit": unit}, "show": true},
                        "visual": {"display": "line", "lineWidth": 1.25, "areaOpacity": 0.1}
                    }},
                    "queries": [{"kind": "TimeSeriesQuery", "spec": {"plugin": {
                        "kind": "PrometheusTimeSeriesQuery",
                        "spec": {"query": query.replace("SVC", svc), "seriesNameFormat": "{{pod}}"}
                    }}}]
                }
            }),
        );
        items.push(
            json!({"x": (i % 2) * 12, "y": (i / 2) * 8, "width": 12, "height": 8,
            "content": {"$ref": format!("#/spec/panels/{key}")}}),
        );
    }
    json!({
        "kind": "Dashboard",
        "metadata": {"name": slug, "project": project},
        "spec": {
            "display": {"name": words(slug), "description": format!("Service overview for {svc}")},
            "duration": (["1h", "6h", "12h", "24h"][rng.usize(0..4)]),
            "refreshInterval": (["30s", "1m", "5m"][rng.usize(0..3)]),
            "variables": [
                {"kind": "ListVariable", "spec": {"name": "cluster", "display": {"name": "Cluster"},
                    "allowAllValue": true, "allowMultiple": true, "plugin": {
                        "kind": "PrometheusLabelValuesVariable",
                        "spec": {"labelName": "cluster", "matchers": [format!("up{{service=\"{svc}\"}}")]}}}},
                {"kind": "ListVariable", "spec": {"name": "env", "display": {"name": "Environment"},
                    "allowAllValue": false, "allowMultiple": false, "plugin": {
                        "kind": "StaticListVariable", "spec": {"values": ENVS}}}}
            ],
            "panels": panels,
            "layouts": [{"kind": "Grid", "spec": {"display": {"title": "Overview",
                "collapse": {"open": true}}, "items": items}}]
        }
    })
}

fn grafana(rng: &mut fastrand::Rng, slug: &str, svc: &str) -> Value {
    let n = rng.usize(4..=8);
    let panels: Vec<Value> = topics(rng, n)
        .into_iter()
        .enumerate()
        .map(|(i, (title, _, query))| {
            json!({
                "id": i + 1,
                "type": if rng.bool() { "timeseries" } else { "graph" },
                "title": title,
                "datasource": {"type": "prometheus", "uid": "chronosphere"},
                "gridPos": {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
                "targets": [{"refId": "A", "expr": query.replace("SVC", svc), "legendFormat": "{{pod}}"}],
                "fieldConfig": {"defaults": {"unit": "short", "decimals": 2}},
                "options": {"legend": {"displayMode": "list", "placement": "bottom"},
                    "tooltip": {"mode": "multi", "sort": "desc"}}
            })
        })
        .collect();
    json!({
        "title": words(slug), "uid": slug.chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<String>(),
        "tags": [svc, "generated"], "timezone": "browser", "schemaVersion": 36, "editable": true,
        "refresh": "1m", "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [{"name": "cluster", "type": "query", "label": "Cluster",
            "datasource": {"type": "prometheus", "uid": "chronosphere"},
            "query": format!("label_values(up{{service=\"{svc}\"}}, cluster)"), "refresh": 1,
            "includeAll": true, "multi": true}]},
        "panels": panels
    })
}

fn counts(n: usize) -> Vec<usize> {
    let mut c: Vec<usize> = MIX
        .iter()
        .map(|(_, _, share)| ((n as f64 * share).round() as usize).max(1))
        .collect();
    let total: usize = c.iter().sum();
    c[4] = (c[4] + n).saturating_sub(total).max(1);
    c
}

/// The resources, parents first.
pub fn generate(n: usize, seed: u64) -> Vec<Resource> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let c = counts(n);
    let mut out = Vec::new();
    let plain = |kind: Kind, spec: Value| Resource {
        kind,
        spec,
        document: None,
        form: Form::Mapping,
    };
    let svc = |i: usize| SERVICES[i % SERVICES.len()];
    let teams: Vec<String> = (0..c[0])
        .map(|i| format!("team-{}-{i:04}", svc(i)))
        .collect();
    for (i, slug) in teams.iter().enumerate() {
        out.push(plain(
            Kind::named("Team"),
            json!({"slug": slug, "name": words(slug),
            "description": format!("Owners of the {} services", svc(i)),
            "user_emails": [format!("{}.oncall{i}@example.com", svc(i))]}),
        ));
    }
    let policies: Vec<String> = (0..c[1]).map(|i| format!("np-{}-{i:04}", svc(i))).collect();
    for (i, slug) in policies.iter().enumerate() {
        let s = svc(i);
        out.push(plain(Kind::named("NotificationPolicy"), json!({"slug": slug, "name": words(slug),
            "team_slug": teams[i % teams.len()],
            "routes": {"defaults": {
                "warn": {"destinations": [{"email": {"addresses": [format!("{s}-alerts@example.com")]}}],
                    "repeat_interval_secs": 3600, "group_by": {"label_names": ["service", "cluster"]}},
                "critical": {"destinations": [{"email": {"addresses": [format!("{s}-oncall@example.com")]}}],
                    "repeat_interval_secs": 300}},
                "overrides": [{"alert_label_matchers": [{"type": "REGEX", "name": "env", "value": "staging|dev"}],
                    "notifiers": {"critical": {"destinations": [{"email": {"addresses": [format!("{s}-nonprod@example.com")]}}]}}}]}})));
    }
    let buckets: Vec<String> = (0..c[2])
        .map(|i| format!("{}-{}-{i:04}", svc(i), ENVS[i % 4]))
        .collect();
    for (i, slug) in buckets.iter().enumerate() {
        out.push(plain(Kind::named("Bucket"), json!({"slug": slug, "name": words(slug),
            "description": format!("{} in {}", svc(i), ENVS[i % 4]),
            "labels": {"team": svc(i), "env": ENVS[i % 4], "cost_center": format!("cc-{}", 1000 + i % 97)},
            "team_slug": teams[i % teams.len()], "notification_policy_slug": policies[i % policies.len()]})));
    }
    let collections: Vec<String> = (0..c[3])
        .map(|i| format!("{}-api-{i:04}", svc(i)))
        .collect();
    for (i, slug) in collections.iter().enumerate() {
        out.push(plain(
            Kind::named("Collection"),
            json!({"slug": slug, "name": words(slug),
            "team_slug": teams[i % teams.len()], "description": format!("views of {}", svc(i)),
            "notification_policy_slug": policies[i % policies.len()]}),
        ));
    }
    for i in 0..c[4] {
        let coll = &collections[i % collections.len()];
        let s = svc(i % collections.len());
        let slug = format!("{coll}-dash-{i:05}");
        let doc = perses(&mut rng, &slug, coll, s);
        out.push(Resource {
            kind: Kind::named("Dashboard"),
            spec: json!({"slug": slug, "name": words(&slug), "collection_slug": coll,
                "labels": {"service": s, "tier": (["gold", "silver", "bronze"][rng.usize(0..3)])},
                "dashboard_json": doc.to_string()}),
            document: Some(doc),
            form: [Form::Mapping, Form::Block, Form::Line][i % 3],
        });
    }
    for i in 0..c[5] {
        let bucket = &buckets[i % buckets.len()];
        let slug = format!("{bucket}-grafana-{i:05}");
        let doc = grafana(&mut rng, &slug, svc(i % buckets.len()));
        out.push(Resource {
            kind: Kind::named("ClassicDashboard"),
            spec: json!({"slug": slug, "name": words(&slug), "bucket_slug": bucket,
                "dashboard_json": doc.to_string()}),
            document: Some(doc),
            form: if i % 2 == 1 { Form::Block } else { Form::Line },
        });
    }
    for i in 0..c[6] {
        let b = i % buckets.len();
        let s = svc(b);
        let slug = format!("{}-high-error-rate-{i:05}", buckets[b]);
        let mut spec = json!({"slug": slug, "name": words(&slug), "bucket_slug": buckets[b],
            "labels": {"service": s, "severity_class": if rng.bool() { "page" } else { "ticket" }},
            "annotations": {"runbook": format!("https://runbooks.example.com/{s}/high-error-rate"),
                "summary": "high error rate on {{ $labels.cluster }}"},
            "interval_secs": ([30, 60, 120][rng.usize(0..3)]),
            "prometheus_query": TOPICS[1].2.replace("SVC", s),
            "signal_grouping": {"label_names": ["cluster"]},
            "series_conditions": {
                "defaults": {
                    "warn": {"conditions": [{"op": "GT", "value": 0.05, "sustain_secs": 300}]},
                    "critical": {"conditions": [{"op": "GT", "value": 0.1, "sustain_secs": 120,
                        "resolve_sustain_secs": 300}]}},
                "overrides": [{"label_matchers": [{"type": "REGEX", "name": "cluster", "value": "canary-.*"}],
                    "severity_conditions": {"warn": {"conditions": [{"op": "GT", "value": 0.1, "sustain_secs": 600}]}}}]},
            "notification_template": {"title": format!("[{{{{ .Severity }}}}] high error rate in {s}"),
                "description": "{{ .Annotations.summary }}"}});
        if i % 2 == 1 {
            spec["notification_policy_slug"] = json!(policies[b % policies.len()]);
        }
        out.push(plain(Kind::named("Monitor"), spec));
    }
    for i in 0..c[7] {
        let slug = format!("dm-{}-error-ratio-{i:04}", svc(i));
        out.push(plain(Kind::named("DerivedMetric"), json!({"slug": slug, "name": words(&slug),
            "metric_name": format!("{}_error_ratio_{i:04}", svc(i)),
            "description": format!("Error ratio of {}", svc(i)),
            "queries": [{"selector": {"labels": [{"type": "EXACT", "name": "env", "value": "prod"}]},
                "query": {"prometheus_expr": "sum(rate(http_requests_total{code=~\"5..\",$service}[5m])) / sum(rate(http_requests_total{$service}[5m]))",
                    "variables": [{"name": "service", "default_prometheus_selector": format!("service=\"{}\"", svc(i))}]}}]})));
    }
    for i in 0..c[8] {
        let slug = format!("dl-{}-owner-{i:04}", svc(i));
        out.push(plain(Kind::named("DerivedLabel"), json!({"slug": slug, "name": words(&slug),
            "label_name": format!("owner_{}_{i:04}", svc(i)),
            "description": format!("Owning team of the {} series", svc(i)),
            "existing_label_policy": "OVERRIDE",
            "metric_label": {"mapping_label": {"name_mappings": [{"source_label": "service",
                "filters": [{"name": "env", "value_glob": "prod*"}],
                "value_mappings": [{"source_value_globs": [format!("{}*", svc(i))], "target_value": svc(i)}]}]}}})));
    }
    for i in 0..c[9] {
        let slug = format!("ds-{}-{i:04}", svc(i));
        let config = if i % 2 == 1 {
            json!({"type": "LOGS", "log_dataset": {"match_criteria": {"query": format!("service = \"{}\" AND severity = \"ERROR\"", svc(i))}}})
        } else {
            json!({"type": "TRACES", "trace_dataset": {"match_criteria": {"span": [{"match_type": "INCLUDE",
                "service": {"match": "REGEX", "value": format!("{}.*", svc(i))},
                "operation": {"match": "IN", "in_values": ["GET /api", "POST /api"]}}]}}})
        };
        out.push(plain(
            Kind::named("Dataset"),
            json!({"slug": slug, "name": words(&slug),
            "description": format!("Telemetry of {}", svc(i)), "configuration": config}),
        ));
    }
    for i in 0..c[10] {
        let slug = format!("dr-{}-debug-{i:04}", svc(i));
        out.push(plain(Kind::named("DropRule"), json!({"slug": slug, "name": words(&slug),
            "mode": if i % 3 == 0 { "PREVIEW" } else { "ENABLED" },
            "filters": [{"name": "__name__", "value_glob": "debug_*"}, {"name": "service", "value_glob": svc(i)}],
            "conditional_rate_based_drop": {"enabled": true, "rate_limit_threshold": 90,
                "activated_drop_duration_secs": 600},
            "drop_nan_value": true})));
    }
    out
}

/// A YAML scalar: strings JSON-quoted (valid YAML double-quoted), the rest as JSON writes it.
fn scalar(v: &Value) -> String {
    v.to_string()
}

fn write_value(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, item) in map {
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let _ = writeln!(out, "{pad}{}:", scalar(&json!(k)));
                        write_value(out, item, indent + 2);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}{}:", scalar(&json!(k)));
                        write_value(out, item, indent);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{}: {}", scalar(&json!(k)), scalar(item));
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                let mut inner = String::new();
                write_value(&mut inner, item, indent + 2);
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first line of the mapping goes after the dash.
                        let _ = write!(out, "{pad}- {}", &inner[indent + 2..]);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}-");
                        out.push_str(&inner);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", scalar(item));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other));
        }
    }
}

fn document_yaml(r: &Resource) -> String {
    let mut spec = r.spec.clone();
    let mut tail = String::new();
    if let (Some(doc), Some(map)) = (&r.document, spec.as_object_mut()) {
        match r.form {
            Form::Mapping => {
                map.insert("dashboard_json".into(), doc.clone());
            }
            Form::Block => {
                map.remove("dashboard_json");
                tail.push_str("  dashboard_json: |-\n");
                let pretty = serde_json::to_string_pretty(doc).unwrap_or_default();
                for line in pretty.lines() {
                    let _ = writeln!(tail, "    {line}");
                }
            }
            Form::Line => {}
        }
    }
    let mut out = format!(
        "---\napi_version: v1/config\nkind: {}\nspec:\n",
        r.kind.name()
    );
    write_value(&mut out, &spec, 2);
    out.push_str(&tail);
    out
}

/// Writes the resources as manifests under a new folder `cfgctl-bench-{tag}-{pid}` of the
/// temporary directory, 50 documents a file, one folder per kind.
pub fn write_repo(resources: &[Resource], tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cfgctl-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (k, (kind, folder, _)) in MIX.iter().enumerate() {
        let kind = Kind::named(kind);
        let of_kind: Vec<&Resource> = resources.iter().filter(|r| r.kind == kind).collect();
        let sub = dir.join(format!("{k:02}-{folder}"));
        std::fs::create_dir_all(&sub).expect("bench folder");
        for (f, chunk) in of_kind.chunks(50).enumerate() {
            let text: String = chunk.iter().map(|r| document_yaml(r)).collect();
            write(&sub.join(format!("{folder}-{f:03}.yaml")), &text);
        }
    }
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("bench manifest written");
}
