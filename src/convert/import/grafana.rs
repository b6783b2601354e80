//! `cfgctl import grafana`: Grafana dashboards to one manifest each, of the kind the API keeps
//! Grafana JSON in (found by its fields: `dashboard_json` and `bucket_slug`), with the
//! dashboard's JSON in its own pretty-printed file beside the manifest, referenced as
//! `dashboard_json: ${file:SLUG.json}` (docs/import.md).
//!
//! Inputs: a dashboard's JSON, Grafana's export envelope (`{"dashboard": ..., "meta": ...}`),
//! Kubernetes ConfigMaps holding dashboards under `*.json` keys (the Grafana sidecar's
//! layout), or a `ConfigMapList`/`List` of them. Everything is read and checked before
//! anything is mapped: bad input is a located error and writes nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{located, ImportError, Output, Report, Slugs, Source};
use crate::util::jsonpath;

/// Settings of `cfgctl import grafana` (resolved from the command line by `cli`).
#[derive(Clone, Debug, Default)]
pub struct GrafanaSettings {
    pub inputs: Vec<PathBuf>,
    pub bucket: Option<String>,
    pub collection: Option<String>,
    /// The command line, for the report's heading.
    pub command: String,
}

/// One dashboard found in the input, with where it came from.
struct Found {
    source: Source,
    dashboard: Map<String, Value>,
    /// What was left around it (an envelope's `meta`).
    wrapper: Option<&'static str>,
}

/// Members Grafana's "export for sharing" adds, which are no part of a dashboard.
const SHARING: &[&str] = &["__inputs", "__requires", "__elements"];

/// Reads and maps everything; nothing is written here.
pub fn import(opts: &GrafanaSettings) -> Result<Output, ImportError> {
    let owner = match (&opts.bucket, &opts.collection) {
        (Some(b), None) => ("bucket_slug", b.clone()),
        (None, Some(c)) => ("collection_slug", c.clone()),
        _ => {
            return Err(ImportError::Options(
                "give one of --bucket SLUG or --collection SLUG: the dashboards belong to it"
                    .into(),
            ))
        }
    };
    let kind = super::kind_with(&["dashboard_json", "bucket_slug"])?;
    let files = super::input_files(&opts.inputs)?;
    let mut report = Report {
        command: opts.command.clone(),
        inputs: files.iter().map(|f| f.display().to_string()).collect(),
        ..Report::default()
    };
    let mut found = Vec::new();
    for file in &files {
        found.extend(read(file, &super::read(file)?, &mut report)?);
    }
    if found.is_empty() {
        return Err(ImportError::Options(format!(
            "no Grafana dashboard in {}",
            report.inputs.join(", ")
        )));
    }
    let mut output = Output::default();
    let mut slugs = Slugs::default();
    let mut uids = BTreeSet::new();
    // A uid that is a slug as it is keeps it, whichever files come with it (red team D24): a
    // dashboard's slug does not depend on the others imported beside it.
    let kept: BTreeSet<String> = found
        .iter()
        .filter_map(|f| f.dashboard.get("uid").and_then(Value::as_str))
        .filter(|u| super::slug(u) == *u)
        .map(str::to_string)
        .collect();
    for item in found {
        let mut names = (&mut slugs, &kept);
        let (slug, manifest, json) = dashboard(item, &owner, &mut names, &mut uids, &mut report);
        let dir = PathBuf::from(kind.def().path);
        output.files.insert(
            dir.join(format!("{slug}.yaml")),
            super::manifest_file(&[(kind, manifest)]),
        );
        output.files.insert(dir.join(format!("{slug}.json")), json);
        *report.counts.entry(kind.name()).or_default() += 1;
    }
    output.report = report;
    Ok(output)
}

/// The dashboards of one file.
fn read(path: &Path, text: &str, report: &mut Report) -> Result<Vec<Found>, ImportError> {
    let docs = if path.extension().is_some_and(|e| e == "json") {
        vec![crate::util::yaml::parse_json(text).map_err(|e| located(path, e.pos, e.message))?]
    } else {
        crate::util::yaml::parse_documents(text).map_err(|e| located(path, e.pos, e.message))?
    };
    let mut out = Vec::new();
    for doc in &docs {
        let at = |pointer: &str| {
            doc.spans
                .nearest(pointer)
                .map(|s| s.field())
                .unwrap_or(doc.start)
        };
        let source = |pointer: &str| Source {
            file: path.display().to_string(),
            line: at(pointer).line,
        };
        let mut items = vec![(String::new(), &doc.value)];
        if matches!(kind_of(&doc.value), "List" | "ConfigMapList") {
            items = doc.value["items"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .enumerate()
                        .map(|(i, v)| (format!("/items/{i}"), v))
                        .collect()
                })
                .unwrap_or_default();
        }
        for (pointer, value) in items {
            let Value::Object(map) = value else {
                return Err(located(
                    path,
                    at(&pointer),
                    "expected a dashboard, an export envelope or a ConfigMap",
                ));
            };
            if kind_of(value) == "ConfigMap" {
                for (key, json) in map
                    .get("data")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    let here = format!("{pointer}/data/{}", jsonpath::escape_pointer(key));
                    if !key.ends_with(".json") {
                        report.note(
                            &source(&here),
                            format!("ConfigMap key {key}"),
                            "not a `.json` key: skipped",
                        );
                        continue;
                    }
                    let parsed: Value = json
                        .as_str()
                        .and_then(|s| serde_json::from_str(s).ok())
                        .ok_or_else(|| {
                            located(
                                path,
                                at(&here),
                                format!("`{key}` does not hold a JSON object"),
                            )
                        })?;
                    let Value::Object(dashboard) = parsed else {
                        return Err(located(
                            path,
                            at(&here),
                            format!("`{key}` does not hold a JSON object"),
                        ));
                    };
                    out.push(Found {
                        source: source(&here),
                        dashboard,
                        wrapper: None,
                    });
                }
            } else if let Some(Value::Object(dashboard)) = map.get("dashboard") {
                out.push(Found {
                    source: source(&pointer),
                    dashboard: dashboard.clone(),
                    wrapper: Some("meta"),
                });
            } else if map.contains_key("panels")
                || map.contains_key("rows")
                || map.contains_key("schemaVersion")
            {
                for (key, ok) in [
                    ("panels", map.get("panels").is_none_or(Value::is_array)),
                    ("rows", map.get("rows").is_none_or(Value::is_array)),
                    ("title", map.get("title").is_none_or(Value::is_string)),
                ] {
                    if !ok {
                        let what = if key == "title" { "a string" } else { "a list" };
                        return Err(located(
                            path,
                            at(&format!("{pointer}/{key}")),
                            format!("a dashboard's `{key}` must be {what}"),
                        ));
                    }
                }
                out.push(Found {
                    source: source(&pointer),
                    dashboard: map.clone(),
                    wrapper: None,
                });
            } else if !kind_of(value).is_empty() {
                report.note(
                    &source(&pointer),
                    format!("object of kind {}", kind_of(value)),
                    "not a ConfigMap: skipped",
                );
            } else {
                return Err(located(path, at(&pointer), "not a Grafana dashboard: no `panels`, `rows` or `schemaVersion`, no `dashboard`, not a ConfigMap"));
            }
        }
    }
    Ok(out)
}

fn kind_of(value: &Value) -> &str {
    value.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// One dashboard's manifest and JSON file, with what was changed reported.
fn dashboard(
    item: Found,
    owner: &(&str, String),
    (slugs, kept): &mut (&mut Slugs, &BTreeSet<String>),
    uids: &mut BTreeSet<String>,
    report: &mut Report,
) -> (String, Value, String) {
    let mut d = item.dashboard;
    let title = d
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string);
    let uid = d
        .get("uid")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .map(str::to_string);
    let name = title
        .clone()
        .or_else(|| uid.clone())
        .unwrap_or_else(|| "Untitled dashboard".to_string());
    let subject = format!("dashboard {name}");
    let mut changed = Vec::new();
    if let Some(w) = item.wrapper {
        changed.push(format!("the export envelope's `{w}` left out"));
    }
    if title.is_none() {
        changed.push("no `title`: named after its uid or \"Untitled dashboard\"".to_string());
    }
    for key in ["id", "version"] {
        if d.shift_remove(key).is_some_and(|v| !v.is_null()) {
            changed.push(format!("`{key}` left out (the server sets it)"));
        }
    }
    for key in SHARING {
        if d.shift_remove(*key).is_some() {
            changed.push(format!("`{key}` (Grafana's export for sharing) left out; its `${{DS_...}}` datasource inputs stay in the panels as written"));
        }
    }
    let wanted = uid.as_deref().unwrap_or(&name);
    let slug = slugs.unique_keeping(wanted, kept);
    match &uid {
        Some(u) if !uids.insert(u.clone()) => changed.push(format!(
            "uid `{u}` already imported: a duplicate, written as `{slug}`"
        )),
        // Every rename is said (a uid not a slug as it is, or one another dashboard took).
        Some(u) if *u != slug => changed.push(format!("uid `{u}` written as the slug `{slug}`")),
        _ => {}
    }
    let value = Value::Object(d);
    let library = library_panels(&value);
    if !library.is_empty() {
        changed.push(format!(
            "library panels referenced by uid ({}): their models are not in the dashboard and are not imported",
            library.join(", ")
        ));
    }
    let sources = datasources(&value);
    if !sources.is_empty() {
        changed.push(format!("datasources named by uid or name kept as written (they must exist where the dashboard runs): {}", sources.join(", ")));
    }
    for message in changed {
        report.note(&item.source, &subject, message);
    }
    let mut spec = Map::new();
    spec.insert("slug".into(), slug.clone().into());
    spec.insert("name".into(), name.into());
    spec.insert(owner.0.into(), owner.1.clone().into());
    // Imported text is escaped before the reference cfgctl writes is put in: a Grafana
    // `${var:format}` in a title is never read as one of cfgctl's references.
    spec.values_mut().for_each(crate::manifest::escape_strings);
    spec.insert(
        "dashboard_json".into(),
        format!("${{file:{slug}.json}}").into(),
    );
    // A JSON value always serialises.
    let json = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
    (slug, Value::Object(spec), json)
}

/// The panels (at any depth: rows hold panels) of a dashboard.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = Vec::new();
    stack.extend(dashboard["panels"].as_array().into_iter().flatten());
    for row in dashboard["rows"].as_array().into_iter().flatten() {
        stack.extend(row["panels"].as_array().into_iter().flatten());
    }
    while let Some(p) = stack.pop() {
        stack.extend(p["panels"].as_array().into_iter().flatten());
        out.push(p);
    }
    out
}

/// The uids (or names) of the library panels a dashboard references, sorted.
fn library_panels(dashboard: &Value) -> Vec<String> {
    let mut found: BTreeSet<String> = BTreeSet::new();
    for p in panels(dashboard) {
        if let Some(lib) = p.get("libraryPanel") {
            let id = lib["uid"].as_str().or(lib["name"].as_str()).unwrap_or("?");
            found.insert(format!("`{id}`"));
        }
    }
    found.into_iter().collect()
}

/// The datasources the panels and targets name by a fixed uid or name (not a variable, not
/// Grafana's own), sorted.
fn datasources(dashboard: &Value) -> Vec<String> {
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut note = |ds: &Value| {
        let id = match ds {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("uid").and_then(Value::as_str),
            _ => None,
        };
        if let Some(id) = id.filter(|i| {
            !i.is_empty() && !i.contains('$') && !i.starts_with("-- ") && *i != "grafana"
        }) {
            found.insert(format!("`{id}`"));
        }
    };
    for p in panels(dashboard) {
        note(&p["datasource"]);
        for t in p["targets"].as_array().into_iter().flatten() {
            note(&t["datasource"]);
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests;
