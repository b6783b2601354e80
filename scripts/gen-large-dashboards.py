#!/usr/bin/env python3
"""Writes the two large dashboards of fixtures/valid, deterministically (no randomness):

- classic-dashboards/fleet-overview.yaml: a Grafana dashboard (ClassicDashboard) of 150 panels in
  10 rows of 15; the last two rows collapsed, their panels nested in them, as Grafana saves them;
- dashboards/payments-slos.yaml: a Perses dashboard (Dashboard) of 50 panels placed by 5 grid
  sections of 10.

The panel-level diff tests (tests/integration/panels.rs) edit these files. Run from the repository
root: python3 scripts/gen-large-dashboards.py (Python 3 standard library only).
"""

import json
from pathlib import Path

SERVICES = ["api", "checkout", "payments", "search", "auth", "cart", "catalog", "inventory",
            "shipping", "billing"]
TOPICS = [
    # (title, Grafana unit, query, legend)
    ("Request rate", "reqps", 'sum by (code) (rate(http_requests_total{{service="{svc}",cluster=~"$cluster"}}[5m]))', "{{code}}"),
    ("Error rate", "percentunit", 'sum(rate(http_requests_total{{service="{svc}",code=~"5.."}}[5m])) / sum(rate(http_requests_total{{service="{svc}"}}[5m]))', "errors"),
    ("p99 latency", "s", 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{{service="{svc}"}}[5m])))', "p99"),
    ("p50 latency", "s", 'histogram_quantile(0.5, sum by (le) (rate(http_request_duration_seconds_bucket{{service="{svc}"}}[5m])))', "p50"),
    ("CPU usage", "percentunit", 'sum by (pod) (rate(container_cpu_usage_seconds_total{{namespace="{svc}"}}[5m]))', "{{pod}}"),
    ("Memory working set", "bytes", 'sum by (pod) (container_memory_working_set_bytes{{namespace="{svc}"}})', "{{pod}}"),
    ("Pod restarts", "short", 'sum by (pod) (increase(kube_pod_container_status_restarts_total{{namespace="{svc}"}}[1h]))', "{{pod}}"),
    ("Saturation", "percentunit", 'max by (instance) (node_load5{{job="{svc}"}}) / count by (instance) (node_cpu_seconds_total{{mode="idle",job="{svc}"}})', "{{instance}}"),
    ("Queue depth", "short", 'sum by (queue) (rabbitmq_queue_messages_ready{{service="{svc}"}})', "{{queue}}"),
    ("GC pause", "s", 'rate(go_gc_duration_seconds_sum{{service="{svc}"}}[5m]) / rate(go_gc_duration_seconds_count{{service="{svc}"}}[5m])', "gc"),
    ("Open connections", "short", 'sum by (instance) (http_server_open_connections{{service="{svc}"}})', "{{instance}}"),
    ("Goroutines", "short", 'sum by (pod) (go_goroutines{{service="{svc}"}})', "{{pod}}"),
    ("Cache hit ratio", "percentunit", 'sum(rate(cache_hits_total{{service="{svc}"}}[5m])) / sum(rate(cache_requests_total{{service="{svc}"}}[5m]))', "hits"),
    ("DB query time", "s", 'histogram_quantile(0.95, sum by (le) (rate(db_query_duration_seconds_bucket{{service="{svc}"}}[5m])))', "p95"),
    ("Network out", "Bps", 'sum by (pod) (rate(container_network_transmit_bytes_total{{namespace="{svc}"}}[5m]))', "{{pod}}"),
]
PERSES_UNITS = {"reqps": "requests/sec", "percentunit": "percent-decimal", "s": "seconds",
                "bytes": "bytes", "Bps": "bytes/sec", "short": "decimal"}


def grafana_panel(pid, row, i, svc):
    title, unit, query, legend = TOPICS[i]
    return {
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "description": f"{title} of {svc}.",
        "fieldConfig": {"defaults": {"custom": {"fillOpacity": 10}, "unit": unit}, "overrides": []},
        "gridPos": {"h": 8, "w": 8, "x": (i % 3) * 8, "y": row * 41 + 1 + (i // 3) * 8},
        "id": pid,
        "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
        "targets": [{"datasource": {"type": "prometheus", "uid": "${datasource}"},
                     "expr": query.format(svc=svc), "legendFormat": legend, "refId": "A"}],
        "title": f"{svc}: {title}",
        "type": "timeseries",
    }


def grafana():
    panels, pid = [], 1
    for r, svc in enumerate(SERVICES):
        collapsed = r >= 8
        row = {"collapsed": collapsed, "gridPos": {"h": 1, "w": 24, "x": 0, "y": r * 41},
               "id": pid, "panels": [], "title": svc.capitalize(), "type": "row"}
        pid += 1
        members = []
        for i in range(len(TOPICS)):
            members.append(grafana_panel(pid, r, i, svc))
            pid += 1
        if collapsed:
            row["panels"] = members
            panels.append(row)
        else:
            panels.append(row)
            panels.extend(members)
    return {
        "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                                  "enable": True, "hide": True, "name": "Annotations & Alerts",
                                  "type": "dashboard"}]},
        "editable": True,
        "graphTooltip": 1,
        "panels": panels,
        "refresh": "1m",
        "schemaVersion": 39,
        "tags": ["platform", "fleet"],
        "templating": {"list": [
            {"hide": 0, "includeAll": False, "label": "Data source", "name": "datasource",
             "query": "prometheus", "refresh": 1, "type": "datasource"},
            {"datasource": {"type": "prometheus", "uid": "${datasource}"},
             "definition": "label_values(up, cluster)", "includeAll": True, "label": "Cluster",
             "multi": True, "name": "cluster", "query": {"query": "label_values(up, cluster)", "refId": "A"},
             "refresh": 2, "sort": 1, "type": "query"}]},
        "time": {"from": "now-6h", "to": "now"},
        "timezone": "utc",
        "title": "Fleet overview",
        "uid": "fleet-overview",
    }


def perses():
    panels, layouts = {}, []
    sections = ["Checkout", "Payments", "Auth", "Billing", "Shipping"]
    for s, section in enumerate(sections):
        svc = section.lower()
        items = []
        for i in range(10):
            title, unit, query, legend = TOPICS[i]
            key = f"{svc}_{title.lower().replace(' ', '_')}"
            panels[key] = {
                "kind": "Panel",
                "spec": {
                    "display": {"name": f"{section} {title.lower()}"},
                    "plugin": {"kind": "TimeSeriesChart", "spec": {
                        "legend": {"mode": "list", "position": "bottom"},
                        "yAxis": {"format": {"unit": PERSES_UNITS[unit]}}}},
                    "queries": [{"kind": "TimeSeriesQuery", "spec": {"plugin": {
                        "kind": "PrometheusTimeSeriesQuery",
                        "spec": {"query": query.format(svc=svc), "seriesNameFormat": legend}}}}],
                },
            }
            items.append({"x": (i % 2) * 12, "y": (i // 2) * 8, "width": 12, "height": 8,
                          "content": {"$ref": f"#/spec/panels/{key}"}})
        layouts.append({"kind": "Grid", "spec": {
            "display": {"title": section, "collapse": {"open": s == 0}}, "items": items}})
    return {
        "kind": "Dashboard",
        "metadata": {"name": "payments-slos", "project": "payments"},
        "spec": {
            "display": {"name": "Payments SLOs", "description": "Service levels of the payment path."},
            "duration": "6h",
            "refreshInterval": "1m",
            "variables": [{"kind": "ListVariable", "spec": {
                "name": "cluster", "display": {"name": "Cluster"}, "allowAllValue": True,
                "allowMultiple": True, "plugin": {"kind": "PrometheusLabelValuesVariable",
                                                  "spec": {"labelName": "cluster"}}}}],
            "panels": panels,
            "layouts": layouts,
        },
    }


def yaml_block(value, indent):
    """Block YAML for JSON data: mappings and sequences as blocks, scalars as JSON (which YAML
    reads the same: double-quoted strings, numbers, true/false, null)."""
    pad = " " * indent
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            key = json.dumps(k) if k.startswith("$") else k
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key}:")
                out.extend(yaml_block(v, indent + 2))
            else:
                out.append(f"{pad}{key}: {json.dumps(v)}")
    else:
        for v in value:
            if isinstance(v, (dict, list)) and v:
                inner = yaml_block(v, indent + 2)
                out.append(f"{pad}- {inner[0].lstrip()}")
                out.extend(inner[1:])
            else:
                out.append(f"{pad}- {json.dumps(v)}")
    return out


def main():
    root = Path("fixtures/valid")
    pretty = json.dumps(grafana(), indent=2)
    text = ("# Generated by scripts/gen-large-dashboards.py: a Grafana dashboard of 150 panels in 10 rows\n"
            "# (the last two collapsed), kept as the JSON string Grafana exports.\n"
            "api_version: v1/config\nkind: ClassicDashboard\nspec:\n  slug: fleet-overview\n"
            "  name: Fleet overview\n  bucket_slug: platform\n  dashboard_json: |\n"
            + "".join(f"    {line}\n" for line in pretty.splitlines()))
    (root / "classic-dashboards/fleet-overview.yaml").write_text(text)
    body = "\n".join(yaml_block(perses(), 4))
    text = ("# Generated by scripts/gen-large-dashboards.py: a Perses dashboard of 50 panels in 5 sections,\n"
            "# its JSON written as YAML.\n"
            "api_version: v1/config\nkind: Dashboard\nspec:\n  slug: payments-slos\n"
            "  name: Payments SLOs\n  collection_slug: payments\n  dashboard_json:\n" + body + "\n")
    (root / "dashboards/payments-slos.yaml").write_text(text)


if __name__ == "__main__":
    main()
