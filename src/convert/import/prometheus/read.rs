//! Prometheus rule files read and checked: plain rule files (`groups:`), PrometheusRule
//! objects of the Prometheus Operator (`monitoring.coreos.com/v1`, several per file, or in a
//! `List`), JSON or YAML. Every problem is a located error; other Kubernetes objects in a
//! folder are noted and skipped.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::super::{located, ImportError, Report, Source};
use crate::util::yaml::{Document, Pos};

/// A rule group: its rules in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub source: Source,
    /// `interval`, in seconds.
    pub interval_secs: Option<u64>,
    pub alerts: Vec<Alert>,
    pub records: Vec<Record>,
}

/// An alerting rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    pub name: String,
    pub expr: String,
    pub source: Source,
    /// `for`, in seconds.
    pub for_secs: u64,
    /// `keep_firing_for`, in seconds.
    pub keep_firing_secs: u64,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

/// A recording rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub record: String,
    pub expr: String,
    pub source: Source,
    pub labels: BTreeMap<String, String>,
}

/// One document of a file, with what is needed to point into it.
struct Doc<'a> {
    path: &'a Path,
    doc: &'a Document,
}

impl Doc<'_> {
    fn pos(&self, pointer: &str) -> Pos {
        self.doc
            .spans
            .nearest(pointer)
            .map(|s| s.field())
            .unwrap_or(self.doc.start)
    }

    fn source(&self, pointer: &str) -> Source {
        Source {
            file: self.path.display().to_string(),
            line: self.pos(pointer).line,
        }
    }

    fn err(&self, pointer: &str, message: impl Into<String>) -> ImportError {
        located(self.path, self.pos(pointer), message)
    }

    fn get(&self, pointer: &str) -> Option<&Value> {
        self.doc.value.pointer(pointer)
    }

    /// A string member; a number or boolean is taken as its text (Prometheus reads label
    /// values as strings).
    fn text(&self, pointer: &str) -> Result<Option<String>, ImportError> {
        match self.get(pointer) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Ok(Some(v.to_string())),
            Some(_) => Err(self.err(pointer, format!("`{}` must be a string", last(pointer)))),
        }
    }

    fn duration(&self, pointer: &str) -> Result<u64, ImportError> {
        match self.text(pointer)? {
            None => Ok(0),
            Some(text) => parse_duration(&text)
                .map(|ms| ms.div_ceil(1000))
                .ok_or_else(|| {
                    self.err(
                        pointer,
                        format!(
                            "`{}`: `{text}` is not a duration (such as 5m or 1h30m)",
                            last(pointer)
                        ),
                    )
                }),
        }
    }

    fn string_map(&self, pointer: &str) -> Result<BTreeMap<String, String>, ImportError> {
        let mut out = BTreeMap::new();
        match self.get(pointer) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for key in map.keys() {
                    let p = format!("{pointer}/{}", crate::util::jsonpath::escape_pointer(key));
                    if let Some(v) = self.text(&p)? {
                        out.insert(key.clone(), v);
                    }
                }
            }
            Some(_) => {
                return Err(self.err(pointer, format!("`{}` must be a mapping", last(pointer))))
            }
        }
        Ok(out)
    }
}

fn last(pointer: &str) -> &str {
    pointer.rsplit('/').next().unwrap_or(pointer)
}

/// A Prometheus duration (`1h30m`, `90s`, `500ms`, `0`) in milliseconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    if text == "0" {
        return Some(0);
    }
    const UNITS: [(&str, u64); 7] = [
        ("y", 365 * 86_400_000),
        ("w", 7 * 86_400_000),
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
        ("ms", 1),
    ];
    let mut rest = text;
    let mut total: u64 = 0;
    let mut next_unit = 0;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        if digits == 0 {
            return None;
        }
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        // `ms` before `m`: the longest unit name that matches, in order.
        let (i, (unit, scale)) = UNITS
            .iter()
            .enumerate()
            .skip(next_unit)
            .filter(|(_, (u, _))| rest.starts_with(u) && !(*u == "m" && rest.starts_with("ms")))
            .max_by_key(|(_, (u, _))| u.len())?;
        rest = &rest[unit.len()..];
        total = total.checked_add(n.checked_mul(*scale)?)?;
        next_unit = i + 1;
    }
    (!text.is_empty()).then_some(total)
}

/// The groups of one input file, checked. Objects that are not rule files are noted and
/// skipped; a file that holds none at all is an error at its start.
pub fn rule_file(path: &Path, text: &str, report: &mut Report) -> Result<Vec<Group>, ImportError> {
    let docs = if path.extension().is_some_and(|e| e == "json") {
        vec![crate::util::yaml::parse_json(text).map_err(|e| located(path, e.pos, e.message))?]
    } else {
        crate::util::yaml::parse_documents(text).map_err(|e| located(path, e.pos, e.message))?
    };
    let mut groups = Vec::new();
    let mut found = false;
    for doc in &docs {
        let d = Doc { path, doc };
        for prefix in rule_sets(&d, "", report)? {
            found = true;
            groups.extend(read_groups(&d, &prefix, report)?);
        }
    }
    if !found {
        return Err(located(
            path,
            docs.first().map(|d| d.start).unwrap_or(Pos::new(1, 1)),
            "not a Prometheus rule file: no `groups` and no PrometheusRule object",
        ));
    }
    Ok(groups)
}

/// The pointers of the `groups` lists a document holds: its own, a PrometheusRule's
/// `spec.groups`, those of a `List`'s items. Another Kubernetes object is noted.
fn rule_sets(d: &Doc, at: &str, report: &mut Report) -> Result<Vec<String>, ImportError> {
    let Some(Value::Object(map)) = d.get(at) else {
        return Err(d.err(
            at,
            "expected a mapping: a rule file or a PrometheusRule object",
        ));
    };
    if map.contains_key("groups") {
        return Ok(vec![format!("{at}/groups")]);
    }
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    match kind {
        "PrometheusRule" => Ok(vec![format!("{at}/spec/groups")]),
        "List" | "PrometheusRuleList" => {
            let mut out = Vec::new();
            let n = map
                .get("items")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            for i in 0..n {
                out.extend(rule_sets(d, &format!("{at}/items/{i}"), report)?);
            }
            Ok(out)
        }
        "" => Err(d.err(at, "not a Prometheus rule file: no `groups` and no `kind`")),
        other => {
            report.note(
                &d.source(at),
                format!("object of kind {other}"),
                "not a PrometheusRule: skipped",
            );
            Ok(Vec::new())
        }
    }
}

/// Keys of a group and of a rule that the mapping takes.
const GROUP_KEYS: &[&str] = &["name", "interval", "labels", "rules"];
const RULE_KEYS: &[&str] = &[
    "alert",
    "record",
    "expr",
    "for",
    "keep_firing_for",
    "labels",
    "annotations",
];

/// Reports the members of the mapping at `at` that are not in `keys` (`limit`,
/// `query_offset`, `partial_response_strategy`, ...).
fn note_others(d: &Doc, at: &str, keys: &[&str], subject: &str, report: &mut Report) {
    if let Some(Value::Object(map)) = d.get(at) {
        for key in map.keys().filter(|k| !keys.contains(&k.as_str())) {
            let p = format!("{at}/{}", crate::util::jsonpath::escape_pointer(key));
            report.note(
                &d.source(&p),
                subject,
                format!("`{key}` has no counterpart: not imported"),
            );
        }
    }
}

fn read_groups(d: &Doc, at: &str, report: &mut Report) -> Result<Vec<Group>, ImportError> {
    let Some(Value::Array(list)) = d.get(at) else {
        return Err(d.err(at, "`groups` must be a list of rule groups"));
    };
    let mut groups = Vec::new();
    for i in 0..list.len() {
        let g = format!("{at}/{i}");
        let name = d
            .text(&format!("{g}/name"))?
            .filter(|n| !n.is_empty())
            .ok_or_else(|| d.err(&g, "a rule group needs a `name`"))?;
        let mut group = Group {
            name,
            source: d.source(&g),
            interval_secs: match d.text(&format!("{g}/interval"))? {
                Some(_) => Some(d.duration(&format!("{g}/interval"))?),
                None => None,
            },
            alerts: Vec::new(),
            records: Vec::new(),
        };
        note_others(d, &g, GROUP_KEYS, &format!("group {}", group.name), report);
        let shared = d.string_map(&format!("{g}/labels"))?;
        let n = match d.get(&format!("{g}/rules")) {
            Some(Value::Array(rules)) => rules.len(),
            None | Some(Value::Null) => 0,
            Some(_) => return Err(d.err(&format!("{g}/rules"), "`rules` must be a list")),
        };
        for r in 0..n {
            let at = format!("{g}/rules/{r}");
            read_rule(d, &at, &shared, &mut group)?;
            let subject = match (group.alerts.last(), group.records.last()) {
                (Some(a), _) if a.source == d.source(&at) => format!("alert {}", a.name),
                (_, Some(r)) => format!("recording rule {}", r.record),
                _ => "rule".to_string(),
            };
            note_others(d, &at, RULE_KEYS, &subject, report);
        }
        groups.push(group);
    }
    Ok(groups)
}

fn read_rule(
    d: &Doc,
    at: &str,
    shared: &BTreeMap<String, String>,
    group: &mut Group,
) -> Result<(), ImportError> {
    if !matches!(d.get(at), Some(Value::Object(_))) {
        return Err(d.err(at, "a rule must be a mapping"));
    }
    let expr_at = format!("{at}/expr");
    let expr = d
        .text(&expr_at)?
        .filter(|e| !e.trim().is_empty())
        .ok_or_else(|| d.err(at, "a rule needs an `expr`"))?;
    if let Err(e) = crate::util::promql::check(&expr, crate::util::promql::Form::default()) {
        return Err(d.err(
            &expr_at,
            format!("`expr` is not valid PromQL: {}", e.message),
        ));
    }
    let mut labels = shared.clone();
    labels.extend(d.string_map(&format!("{at}/labels"))?);
    let alert = d.text(&format!("{at}/alert"))?;
    let record = d.text(&format!("{at}/record"))?;
    match (alert, record) {
        (Some(name), None) if name.trim().is_empty() => {
            return Err(d.err(&format!("{at}/alert"), "an alert needs a name"))
        }
        (None, Some(record)) if !is_metric_name(&record) => {
            return Err(d.err(
                &format!("{at}/record"),
                format!("`{record}` is not a metric name (letters, digits, `_` and `:`, not starting with a digit)"),
            ))
        }
        (Some(name), None) => group.alerts.push(Alert {
            name,
            expr,
            source: d.source(at),
            for_secs: d.duration(&format!("{at}/for"))?,
            keep_firing_secs: d.duration(&format!("{at}/keep_firing_for"))?,
            labels,
            annotations: d.string_map(&format!("{at}/annotations"))?,
        }),
        (None, Some(record)) => group.records.push(Record {
            record,
            expr,
            source: d.source(at),
            labels,
        }),
        (Some(_), Some(_)) => return Err(d.err(at, "a rule has `alert` or `record`, not both")),
        (None, None) => return Err(d.err(at, "a rule needs `alert` or `record`")),
    }
    Ok(())
}

/// A Prometheus metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn is_metric_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}
