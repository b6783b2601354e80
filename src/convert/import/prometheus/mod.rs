//! `cfgctl import prometheus`: Prometheus rule files and PrometheusRule objects to Monitors and
//! RecordingRules (`rules`), an Alertmanager configuration to Notifiers and a
//! NotificationPolicy (`alertmanager`). The mapping table is docs/import.md's.
//!
//! Reading comes first and is complete: every input is read and checked (located errors:
//! file, line and column) before anything is mapped, so bad input writes nothing.

mod alertmanager;
mod config;
mod credentials;
mod read;
mod routes;
mod rules;

use std::path::PathBuf;

use super::{ImportError, Output, Report, Slugs};
use crate::api::registry::Kind;

pub use read::{parse_duration, Alert, Group, Record};

/// Settings of `cfgctl import prometheus` (resolved from the command line by `cli`).
#[derive(Clone, Debug, Default)]
pub struct PrometheusSettings {
    /// Rule files and folders of them.
    pub inputs: Vec<PathBuf>,
    /// An Alertmanager configuration, or a Kubernetes Secret holding one.
    pub alertmanager: Option<PathBuf>,
    pub bucket: Option<String>,
    pub collection: Option<String>,
    /// The team of the NotificationPolicy.
    pub team: Option<String>,
    /// The command line, for the report's heading.
    pub command: String,
}

/// The kinds the import writes, found by the fields it writes (`super::kind_with`).
#[derive(Clone, Copy, Debug)]
struct Kinds {
    monitor: Kind,
    recording: Kind,
    notifier: Kind,
    policy: Kind,
}

impl Kinds {
    fn find() -> Result<Kinds, ImportError> {
        Ok(Kinds {
            monitor: super::kind_with(&["prometheus_query", "series_conditions"])?,
            recording: super::kind_with(&["prometheus_expr", "metric_name"])?,
            notifier: super::kind_with(&["slack", "pagerduty", "email", "webhook"])?,
            policy: super::kind_with(&["routes", "team_slug"])?,
        })
    }
}

/// The slug of the NotificationPolicy an Alertmanager configuration becomes.
const POLICY_SLUG: &str = "alertmanager";

/// Reads and maps everything; nothing is written here.
pub fn import(opts: &PrometheusSettings) -> Result<Output, ImportError> {
    if !crate::util::CHECKS_PROMQL {
        return Err(ImportError::WithoutPromql);
    }
    let owner = match (&opts.bucket, &opts.collection) {
        (Some(b), None) => rules::Owner::Bucket(b.clone()),
        (None, Some(c)) => rules::Owner::Collection(c.clone()),
        _ => {
            return Err(ImportError::Options(
                "give one of --bucket SLUG or --collection SLUG: the monitors belong to it".into(),
            ))
        }
    };
    let policy_owner = match (&opts.alertmanager, &opts.team, &opts.bucket) {
        (None, _, _) => None,
        (Some(_), Some(team), _) => Some(alertmanager::PolicyOwner::Team(team.clone())),
        (Some(_), None, Some(bucket)) => Some(alertmanager::PolicyOwner::Bucket(bucket.clone())),
        (Some(_), None, None) => {
            return Err(ImportError::Options(
                "--alertmanager with --collection needs --team SLUG: a NotificationPolicy belongs to a bucket or a team".into(),
            ))
        }
    };
    let kinds = Kinds::find()?;
    let files = super::input_files(&opts.inputs)?;
    let mut report = Report {
        command: opts.command.clone(),
        inputs: files.iter().map(|f| f.display().to_string()).collect(),
        ..Report::default()
    };
    let mut groups = Vec::new();
    for file in &files {
        groups.extend(read::rule_file(file, &super::read(file)?, &mut report)?);
    }
    let routing = match &opts.alertmanager {
        Some(path) => {
            report.inputs.push(path.display().to_string());
            let mut config = config::read(path, &super::read(path)?)?;
            // Imported text, escaped before the credentials' references are put in.
            crate::manifest::escape_strings(&mut config.doc.value);
            Some(config)
        }
        None => None,
    };
    let mut output = Output::default();
    let ctx = rules::Context {
        kinds,
        owner,
        policy: routing.as_ref().map(|_| POLICY_SLUG.to_string()),
    };
    let mut file_slugs = Slugs::reserving(groups.iter().map(|g| g.name.as_str()));
    let mut slugs = rules::RuleSlugs::reserving(&groups);
    for group in &groups {
        let mut docs = rules::map_group(group, &ctx, &mut slugs, &mut report);
        // Imported text (cfgctl writes no reference into a rule's manifest).
        for (_, spec) in &mut docs {
            crate::manifest::escape_strings(spec);
        }
        if docs.is_empty() {
            report.note(
                &group.source,
                format!("group {}", group.name),
                "has no rules: no file",
            );
            continue;
        }
        let name = file_slugs.unique(&group.name);
        add(
            &mut output,
            PathBuf::from("rules").join(format!("{name}.yaml")),
            &docs,
            &mut report,
        );
    }
    if let (Some(config), Some(owner)) = (routing, policy_owner) {
        let mapped = alertmanager::map(&config, kinds, &owner, POLICY_SLUG, &mut report)?;
        add(
            &mut output,
            PathBuf::from("alertmanager/notifiers.yaml"),
            &mapped.notifiers,
            &mut report,
        );
        add(
            &mut output,
            PathBuf::from("alertmanager/notification-policy.yaml"),
            &[mapped.policy],
            &mut report,
        );
    }
    output.report = report;
    Ok(output)
}

/// One file of manifests, counted by kind.
fn add(
    output: &mut Output,
    path: PathBuf,
    docs: &[(Kind, serde_json::Value)],
    report: &mut Report,
) {
    for (kind, _) in docs {
        *report.counts.entry(kind.name()).or_default() += 1;
    }
    output.files.insert(path, super::manifest_file(docs));
}

#[cfg(test)]
mod tests;
