//! Alertmanager's routing tree to a NotificationPolicy's routes.
//!
//! The policy has default notifiers per severity level (critical, warn) and an ordered list of
//! overrides, each a set of label matchers with its own notifiers per level; the first override
//! whose matchers all match wins. Every distinct set of (non-severity) matchers a route
//! accumulates from the root becomes one override, deepest routes first, the root's the
//! defaults. Each (matcher set, level) is then decided by running Alertmanager's own matching
//! (first matching child, `continue` goes on to the next) on an alert that carries exactly
//! those labels and that severity: the notifiers of every route it reaches, in order.
//! What the policy cannot say (negative matchers on other labels, group timings, `continue`'s
//! separate notifications) is reported with its line.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::super::{ImportError, Report, Source};
use super::config::Config;
use super::rules::{level, Level};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Eq,
    Ne,
    Re,
    NotRe,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Matcher {
    name: String,
    op: Op,
    value: String,
}

/// A route with what it inherits resolved.
#[derive(Debug)]
struct Route {
    /// Where it is in the configuration (a JSON pointer), for a located error.
    pointer: String,
    source: Source,
    matchers: Vec<Matcher>,
    receiver: String,
    group_by: Vec<String>,
    repeat_secs: Option<u64>,
    cont: bool,
    routes: Vec<Route>,
}

/// A matcher of `matchers:` (`severity = "critical"`, `team=~"a|b"`).
fn parse_matcher(text: &str) -> Option<Matcher> {
    let text = text.trim().trim_start_matches('{').trim_end_matches('}');
    let (at, op, len) = ["=~", "!~", "!=", "="]
        .iter()
        .filter_map(|o| text.find(o).map(|i| (i, *o)))
        .min_by_key(|(i, o)| (*i, std::cmp::Reverse(o.len())))
        .map(|(i, o)| (i, o, o.len()))?;
    let name = text[..at].trim();
    let raw = text[at + len..].trim();
    let value = match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => raw.to_string(),
    };
    let op = match op {
        "=" => Op::Eq,
        "!=" => Op::Ne,
        "=~" => Op::Re,
        _ => Op::NotRe,
    };
    (!name.is_empty()).then(|| Matcher {
        name: name.to_string(),
        op,
        value,
    })
}

/// The route at `at`, its children read in order, inheriting from `parent`.
fn read_route(config: &Config, at: &str, parent: Option<&Route>, report: &mut Report) -> Route {
    let get = |k: &str| config.get(&format!("{at}/{k}"));
    let mut matchers = Vec::new();
    for (key, op) in [("match", Op::Eq), ("match_re", Op::Re)] {
        if let Some(Value::Object(map)) = get(key) {
            for (name, value) in map {
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                matchers.push(Matcher {
                    name: name.clone(),
                    op: op.clone(),
                    value,
                });
            }
        }
    }
    for (i, m) in get("matchers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        match m.as_str().and_then(parse_matcher) {
            Some(m) => matchers.push(m),
            None => report.note(
                &config.source(&format!("{at}/matchers/{i}")),
                "route",
                "a matcher that cannot be read: left out",
            ),
        }
    }
    let source = config.source(at);
    for key in [
        "group_wait",
        "group_interval",
        "mute_time_intervals",
        "active_time_intervals",
    ] {
        if get(key).is_some() {
            report.note(
                &config.source(&format!("{at}/{key}")),
                "route",
                format!("`{key}` has no counterpart in the policy: not imported"),
            );
        }
    }
    let group_by: Option<Vec<String>> = get("group_by").and_then(Value::as_array).map(|l| {
        l.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    });
    if group_by
        .as_ref()
        .is_some_and(|g| g.iter().any(|l| l == "..."))
    {
        report.note(
            &source,
            "route",
            "`group_by: [...]` (every label) has no counterpart: no grouping imported",
        );
    }
    let cont = get("continue").and_then(Value::as_bool).unwrap_or(false);
    if cont && parent.is_some() {
        report.note(&source, "route", "`continue: true`: the alerts it takes also reach the routes after it; their notifiers are listed together in one route of the policy");
    }
    let repeat = get("repeat_interval")
        .and_then(Value::as_str)
        .and_then(super::parse_duration)
        .map(|ms| ms.div_ceil(1000));
    let mut route = Route {
        pointer: at.to_string(),
        source,
        matchers,
        receiver: get("receiver")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| parent.map(|p| p.receiver.clone()))
            .unwrap_or_default(),
        group_by: group_by
            .filter(|g| !g.iter().any(|l| l == "..."))
            .or_else(|| parent.map(|p| p.group_by.clone()))
            .unwrap_or_default(),
        repeat_secs: repeat.or_else(|| parent.and_then(|p| p.repeat_secs)),
        cont,
        routes: Vec::new(),
    };
    let n = get("routes").and_then(Value::as_array).map_or(0, Vec::len);
    for i in 0..n {
        let child = read_route(config, &format!("{at}/routes/{i}"), Some(&route), report);
        route.routes.push(child);
    }
    route
}

/// The alert a (matcher set, level) stands for: it has exactly those label matchers.
struct Probe<'a> {
    labels: &'a [Matcher],
    level: Level,
}

/// The alternatives of a simple regex (`^(a|b)$`, `a|b`), or `None` for any other.
fn alternatives(pattern: &str) -> Option<Vec<&str>> {
    let p = pattern.trim_start_matches('^').trim_end_matches('$');
    let p = p
        .strip_prefix('(')
        .and_then(|p| p.strip_suffix(')'))
        .unwrap_or(p);
    let alts: Vec<&str> = p.split('|').collect();
    alts.iter()
        .all(|a| {
            !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .then_some(alts)
}

fn severity_matches(m: &Matcher, lvl: Level) -> bool {
    let any = |values: &[&str]| values.iter().any(|v| level(Some(v)).0 == lvl);
    match m.op {
        Op::Eq => any(&[m.value.as_str()]),
        Op::Ne => !any(&[m.value.as_str()]),
        Op::Re => alternatives(&m.value).is_none_or(|a| any(&a)),
        Op::NotRe => alternatives(&m.value).is_none_or(|a| !any(&a)),
    }
}

impl Probe<'_> {
    fn matches(&self, route: &Route) -> bool {
        route.matchers.iter().all(|m| {
            if m.name == "severity" {
                severity_matches(m, self.level)
            } else {
                self.labels.contains(m)
            }
        })
    }

    /// Alertmanager's matching from `route` (which matched): the routes that take the alert.
    fn reach<'r>(&self, route: &'r Route) -> Vec<&'r Route> {
        let mut all = Vec::new();
        for child in &route.routes {
            if self.matches(child) {
                all.extend(self.reach(child));
                if !child.cont {
                    break;
                }
            }
        }
        if all.is_empty() {
            all.push(route);
        }
        all
    }
}

/// Every route's accumulated non-severity matchers, deepest first (children before their
/// parent, siblings in order), each set once; sets that the policy cannot express (a
/// negative matcher) are reported and left out.
fn matcher_sets(
    route: &Route,
    above: &[Matcher],
    out: &mut Vec<Vec<Matcher>>,
    report: &mut Report,
) {
    let mut mine: Vec<Matcher> = above.to_vec();
    mine.extend(
        route
            .matchers
            .iter()
            .filter(|m| m.name != "severity")
            .cloned(),
    );
    mine.sort();
    mine.dedup();
    for child in &route.routes {
        matcher_sets(child, &mine, out, report);
    }
    if let Some(neg) = mine.iter().find(|m| matches!(m.op, Op::Ne | Op::NotRe)) {
        let op = if neg.op == Op::Ne { "!=" } else { "!~" };
        report.note(&route.source, "route", format!("matches on `{}{op}\"{}\"`: a policy matches labels by value or regex only; its alerts follow the routes around it", neg.name, neg.value));
        return;
    }
    let severity_regex = route.matchers.iter().any(|m| {
        m.name == "severity"
            && matches!(m.op, Op::Re | Op::NotRe)
            && alternatives(&m.value).is_none()
    });
    if severity_regex {
        report.note(
            &route.source,
            "route",
            "a severity regex that is not a list of values: taken as matching both levels",
        );
    }
    if !out.contains(&mine) {
        out.push(mine);
    }
}

/// The policy's `routes` for the configuration's route tree.
pub fn policy_routes(
    config: &Config,
    notifiers: &BTreeMap<String, Vec<String>>,
    report: &mut Report,
) -> Result<Value, ImportError> {
    let root = read_route(config, "/route", None, report);
    check_receivers(config, &root, notifiers)?;
    let mut sets = Vec::new();
    matcher_sets(&root, &[], &mut sets, report);
    let mut overrides = Vec::new();
    let mut defaults = json!({});
    for set in &sets {
        let mut per_level = Map::new();
        for lvl in [Level::Critical, Level::Warn] {
            let probe = Probe {
                labels: set,
                level: lvl,
            };
            let reached = probe.reach(&root);
            per_level.insert(level_key(lvl).into(), notifier_list(&reached, notifiers));
        }
        if set.is_empty() {
            defaults = Value::Object(per_level);
        } else {
            let matchers: Vec<Value> = set
                .iter()
                .map(|m| json!({"type": if m.op == Op::Eq { "EXACT" } else { "REGEX" }, "name": m.name, "value": m.value}))
                .collect();
            overrides.push(json!({"alert_label_matchers": matchers, "notifiers": per_level}));
        }
    }
    let mut routes = Map::new();
    routes.insert("defaults".into(), defaults);
    if !overrides.is_empty() {
        routes.insert("overrides".into(), Value::Array(overrides));
    }
    Ok(Value::Object(routes))
}

fn level_key(lvl: Level) -> &'static str {
    match lvl {
        Level::Critical => "critical",
        Level::Warn => "warn",
    }
}

/// The notifiers of the routes reached, in order, each once; grouping and repeat from the
/// first.
fn notifier_list(reached: &[&Route], notifiers: &BTreeMap<String, Vec<String>>) -> Value {
    let mut slugs: Vec<String> = Vec::new();
    for route in reached {
        for slug in notifiers.get(&route.receiver).into_iter().flatten() {
            if !slugs.contains(slug) {
                slugs.push(slug.clone());
            }
        }
    }
    let mut list = Map::new();
    list.insert("notifier_slugs".into(), json!(slugs));
    if let Some(first) = reached.first() {
        if let Some(secs) = first.repeat_secs {
            list.insert(
                "repeat_interval_secs".into(),
                json!(secs.min(i32::MAX as u64)),
            );
        }
        if !first.group_by.is_empty() {
            list.insert("group_by".into(), json!({"label_names": first.group_by}));
        }
    }
    Value::Object(list)
}

/// A route naming a receiver the configuration does not define is an error, as Alertmanager
/// has it.
fn check_receivers(
    config: &Config,
    route: &Route,
    notifiers: &BTreeMap<String, Vec<String>>,
) -> Result<(), ImportError> {
    if !notifiers.contains_key(&route.receiver) {
        let at = format!("{}/receiver", route.pointer);
        let message = match route.receiver.as_str() {
            "" => "the root route needs a `receiver`".to_string(),
            r => format!("receiver `{r}` is not defined in `receivers`"),
        };
        return Err(config.err(&at, message));
    }
    for child in &route.routes {
        check_receivers(config, child, notifiers)?;
    }
    Ok(())
}
