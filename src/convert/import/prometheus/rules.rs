//! Rule groups to manifests: each alerting rule's name to one Monitor (rules of one name whose
//! queries agree merge into one Monitor with a condition per severity), each recording rule to
//! a RecordingRule. docs/import.md has the table.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::super::{Report, Slugs};
use super::read::{Alert, Group, Record};
use super::Kinds;
use crate::util::promql::threshold::{self, Comparison};

/// What the monitors and recording rules belong to.
#[derive(Clone, Debug)]
pub enum Owner {
    Bucket(String),
    /// A collection: recording rules then run in an execution group named after their group.
    Collection(String),
}

pub(super) struct Context {
    pub kinds: Kinds,
    pub owner: Owner,
    /// The NotificationPolicy the monitors use (an Alertmanager configuration was imported).
    pub policy: Option<String>,
}

/// Slugs handed out so far, per kind.
#[derive(Default)]
pub struct RuleSlugs {
    monitors: Slugs,
    records: Slugs,
    /// Execution groups (`--collection`): one per rule group, however the groups are named.
    groups: Slugs,
}

impl RuleSlugs {
    /// The slugs of `groups`' alerts, records and groups, each name's own slug kept for it.
    pub fn reserving(groups: &[super::read::Group]) -> RuleSlugs {
        let alerts = groups
            .iter()
            .flat_map(|g| g.alerts.iter().map(|a| a.name.as_str()));
        let records = groups
            .iter()
            .flat_map(|g| g.records.iter().map(|r| r.record.as_str()));
        RuleSlugs {
            monitors: Slugs::reserving(alerts),
            records: Slugs::reserving(records),
            groups: Slugs::reserving(groups.iter().map(|g| g.name.as_str())),
        }
    }
}

/// The two levels of a Monitor's conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Critical,
    Warn,
}

impl Level {
    fn key(self) -> &'static str {
        match self {
            Level::Critical => "critical",
            Level::Warn => "warn",
        }
    }
}

/// The level a `severity` label value stands for, and whether that is a choice to report
/// (a value that is neither a usual critical nor a usual warning name).
pub fn level(severity: Option<&str>) -> (Level, bool) {
    let Some(value) = severity else {
        return (Level::Critical, true);
    };
    match value.to_ascii_lowercase().as_str() {
        "critical" | "page" | "error" | "high" | "fatal" | "emergency" | "p1" => {
            (Level::Critical, false)
        }
        "warning" | "warn" => (Level::Warn, false),
        _ => (Level::Warn, true),
    }
}

/// `query op value`: the query to write and the condition, or the whole expression with a
/// condition that fires when it returns series.
fn condition(alert: &Alert) -> (String, Map<String, Value>) {
    let mut cond = Map::new();
    let query = match threshold::split(&alert.expr) {
        Some(t) => {
            let op = match t.op {
                Comparison::Gt => "GT",
                Comparison::Geq => "GEQ",
                Comparison::Lt => "LT",
                Comparison::Leq => "LEQ",
                Comparison::Eq => "EQ",
                Comparison::Neq => "NEQ",
            };
            cond.insert("op".into(), op.into());
            cond.insert("value".into(), json!(t.value));
            t.query
        }
        None => {
            cond.insert("op".into(), "EXISTS".into());
            alert.expr.trim().to_string()
        }
    };
    if alert.for_secs > 0 {
        cond.insert("sustain_secs".into(), json!(clamp(alert.for_secs)));
    }
    if alert.keep_firing_secs > 0 {
        cond.insert(
            "resolve_sustain_secs".into(),
            json!(clamp(alert.keep_firing_secs)),
        );
    }
    (query, cond)
}

/// Seconds as the API's int32.
fn clamp(secs: u64) -> u64 {
    secs.min(i32::MAX as u64)
}

/// The manifests of one group: its recording rules, then its monitors, in rule order.
pub(super) fn map_group(
    group: &Group,
    ctx: &Context,
    slugs: &mut RuleSlugs,
    report: &mut Report,
) -> Vec<(crate::api::registry::Kind, Value)> {
    let mut docs = Vec::new();
    let execution_group = execution_group(group, ctx, slugs, report);
    for record in &group.records {
        docs.push((
            ctx.kinds.recording,
            recording_rule(record, group, ctx, &execution_group, slugs),
        ));
    }
    // Alerts by name in order of first appearance, each name's rules by query.
    let mut names: Vec<&str> = Vec::new();
    let mut by_query: BTreeMap<&str, Vec<(String, Vec<&Alert>)>> = BTreeMap::new();
    for alert in &group.alerts {
        if !names.contains(&alert.name.as_str()) {
            names.push(&alert.name);
        }
        let (query, _) = condition(alert);
        let clusters = by_query.entry(&alert.name).or_default();
        match clusters
            .iter_mut()
            .find(|(q, _)| threshold::same_query(q, &query))
        {
            Some((_, rules)) => rules.push(alert),
            None => clusters.push((query, vec![alert])),
        }
    }
    for name in names {
        let clusters = &by_query[name];
        for (i, (query, rules)) in clusters.iter().enumerate() {
            if clusters.len() > 1 {
                report.note(
                    &rules[0].source,
                    format!("alert {name}"),
                    format!(
                        "its rules have {} different queries: {} Monitors (this one is `{}`)",
                        clusters.len(),
                        clusters.len(),
                        display_name(name, i)
                    ),
                );
            }
            let cluster = Cluster {
                name,
                index: i,
                query,
                rules,
            };
            let spec = monitor(cluster, group, ctx, slugs, report);
            docs.push((ctx.kinds.monitor, spec));
        }
    }
    docs
}

fn display_name(name: &str, index: usize) -> String {
    if index == 0 {
        name.to_string()
    } else {
        format!("{name} ({})", index + 1)
    }
}

/// The owner's fields of a monitor.
fn owned(spec: &mut Map<String, Value>, owner: &Owner) {
    match owner {
        Owner::Bucket(b) => spec.insert("bucket_slug".into(), b.clone().into()),
        Owner::Collection(c) => spec.insert("collection_slug".into(), c.clone().into()),
    };
}

/// The rules of one alert name whose queries agree: one Monitor. `index` counts the
/// Monitors of the name (`Name`, `Name (2)`, ...).
struct Cluster<'a> {
    name: &'a str,
    index: usize,
    query: &'a str,
    rules: &'a [&'a Alert],
}

fn monitor(
    cluster: Cluster<'_>,
    group: &Group,
    ctx: &Context,
    slugs: &mut RuleSlugs,
    report: &mut Report,
) -> Value {
    let Cluster {
        name,
        index,
        query,
        rules,
    } = cluster;
    let subject = format!("alert {name}");
    let mut conditions: BTreeMap<Level, Vec<Value>> = BTreeMap::new();
    let mut labels: BTreeMap<String, (String, &Alert)> = BTreeMap::new();
    let mut annotations: BTreeMap<String, (String, &Alert)> = BTreeMap::new();
    // The critical rules first: their labels and annotations win a disagreement.
    let mut ordered: Vec<(Level, &Alert)> = rules
        .iter()
        .map(|a| (level(a.labels.get("severity").map(String::as_str)).0, *a))
        .collect();
    ordered.sort_by_key(|(l, _)| *l);
    for (lvl, alert) in &ordered {
        let severity = alert.labels.get("severity").map(String::as_str);
        if level(severity).1 {
            let said = severity.map_or("no severity label".to_string(), |s| {
                format!("severity `{s}`")
            });
            report.note(
                &alert.source,
                &subject,
                format!("{said}: a {} condition", lvl.key()),
            );
        }
        let (_, cond) = condition(alert);
        conditions
            .entry(*lvl)
            .or_default()
            .push(Value::Object(cond));
        let own = alert
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != "severity");
        merge(&mut labels, own, alert, "label", &subject, report);
        merge(
            &mut annotations,
            alert.annotations.iter(),
            alert,
            "annotation",
            &subject,
            report,
        );
    }
    // A label only some of the merged rules carry now labels every level (red team D19): the
    // warning alert of `Disk` takes the critical one's `team`, and so its routes. Said.
    for (k, (_, first)) in &labels {
        let without = ordered
            .iter()
            .filter(|(_, a)| !a.labels.contains_key(k))
            .count();
        if without > 0 {
            report.note(
                &first.source,
                &subject,
                format!(
                    "label `{k}` is on {} of its {} merged rules only: the Monitor gives it to every condition (check the routes that match it)",
                    ordered.len() - without,
                    ordered.len()
                ),
            );
        }
    }
    let mut spec = Map::new();
    spec.insert(
        "slug".into(),
        slugs.monitors.unique(&display_name(name, index)).into(),
    );
    spec.insert("name".into(), display_name(name, index).into());
    owned(&mut spec, &ctx.owner);
    let mut label_map: Map<String, Value> = Map::new();
    label_map.insert("alertname".into(), name.into());
    for (k, (v, _)) in labels {
        label_map.insert(k, v.into());
    }
    spec.insert("labels".into(), Value::Object(label_map));
    if !annotations.is_empty() {
        let a: Map<String, Value> = annotations
            .into_iter()
            .map(|(k, (v, _))| (k, v.into()))
            .collect();
        spec.insert("annotations".into(), Value::Object(a));
    }
    spec.insert("signal_grouping".into(), json!({"signal_per_series": true}));
    let mut defaults = Map::new();
    for (lvl, conds) in conditions {
        defaults.insert(lvl.key().into(), json!({ "conditions": conds }));
    }
    spec.insert("series_conditions".into(), json!({ "defaults": defaults }));
    if let Some(policy) = &ctx.policy {
        spec.insert("notification_policy_slug".into(), policy.clone().into());
    }
    if let Some(secs) = group.interval_secs {
        spec.insert("interval_secs".into(), json!(clamp(secs)));
    }
    spec.insert("prometheus_query".into(), query.into());
    Value::Object(spec)
}

/// Adds `items` to `into`; a key already there with another value keeps the first (a
/// critical rule's) and the disagreement is reported.
fn merge<'a>(
    into: &mut BTreeMap<String, (String, &'a Alert)>,
    items: impl Iterator<Item = (&'a String, &'a String)>,
    alert: &'a Alert,
    what: &str,
    subject: &str,
    report: &mut Report,
) {
    for (k, v) in items {
        match into.get(k) {
            Some((kept, first)) if kept != v => report.note(
                &alert.source,
                subject,
                format!(
                    "{what} `{k}` differs from the rule at line {}: that rule's value is kept",
                    first.source.line
                ),
            ),
            Some(_) => {}
            None => {
                into.insert(k.clone(), (v.clone(), alert));
            }
        }
    }
}

/// The execution group of a rule group's recording rules (`--collection`): named after the
/// group, unique (`api`, `api-2`): distinct Prometheus groups evaluate apart, each at its own
/// interval. A name other than the group's is reported.
fn execution_group(
    group: &Group,
    ctx: &Context,
    slugs: &mut RuleSlugs,
    report: &mut Report,
) -> String {
    if group.records.is_empty() || !matches!(ctx.owner, Owner::Collection(_)) {
        return String::new();
    }
    let name = slugs.groups.unique(&group.name);
    let base = super::super::slug(&group.name);
    if name != base {
        report.note(
            &group.source,
            format!("group {}", group.name),
            format!("another group is named `{base}` too: its rules run in the execution group `{name}`"),
        );
    }
    name
}

fn recording_rule(
    record: &Record,
    group: &Group,
    ctx: &Context,
    execution_group: &str,
    slugs: &mut RuleSlugs,
) -> Value {
    let mut spec = Map::new();
    spec.insert("slug".into(), slugs.records.unique(&record.record).into());
    spec.insert("name".into(), record.record.clone().into());
    match &ctx.owner {
        Owner::Bucket(b) => spec.insert("bucket_slug".into(), b.clone().into()),
        Owner::Collection(_) => spec.insert("execution_group".into(), execution_group.into()),
    };
    spec.insert("metric_name".into(), record.record.clone().into());
    if let Some(secs) = group.interval_secs {
        spec.insert("interval_secs".into(), json!(clamp(secs)));
    }
    if !record.labels.is_empty() {
        let add: Map<String, Value> = record
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect();
        spec.insert("label_policy".into(), json!({ "add": add }));
    }
    spec.insert("prometheus_expr".into(), record.expr.trim().into());
    Value::Object(spec)
}
