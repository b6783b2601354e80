//! Saved plans: the file `plan --out` writes, read back for `apply PLANFILE`, and the stale
//! check that refuses a plan whose resources changed since it was made.

use std::path::PathBuf;

use serde_json::Value;

use crate::client::{Client, ClientError};
use crate::plan::normalize::{fingerprint, FieldChange};
use crate::plan::{Action, ActionKind, Plan, Source};
use crate::registry::{Address, Kind};

#[derive(Debug, thiserror::Error)]
pub enum SavedPlanError {
    #[error("not a saved plan: {0}")]
    Invalid(String),
    #[error("saved plan format_version {0} is not supported (this cfgctl reads 1)")]
    Version(String),
}

fn invalid(what: impl Into<String>) -> SavedPlanError {
    SavedPlanError::Invalid(what.into())
}

/// `Kind/slug` (or the singleton's kind) back to an address.
pub fn parse_address(text: &str) -> Option<Address> {
    match text.split_once('/') {
        Some((k, s)) if !s.is_empty() => {
            Some(Address::new(Kind::from_name(k)?, Some(s.to_string())))
        }
        Some(_) => None,
        None => {
            let kind = Kind::from_name(text)?;
            kind.def().singleton.then(|| Address::new(kind, None))
        }
    }
}

fn action_kind(text: &str) -> Option<ActionKind> {
    Some(match text {
        "create" => ActionKind::Create,
        "update" => ActionKind::Update,
        "delete" => ActionKind::Delete,
        "upsert" => ActionKind::Upsert,
        "unsupported" => ActionKind::Unsupported,
        _ => return None,
    })
}

fn opt(v: &Value) -> Option<Value> {
    (!v.is_null()).then(|| v.clone())
}

/// Reads a saved plan (the JSON of `plan --out`).
pub fn parse(text: &str) -> Result<Plan, SavedPlanError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| invalid(format!("not JSON ({e})")))?;
    match doc.get("format_version") {
        Some(v) if v == 1 => {}
        Some(v) => return Err(SavedPlanError::Version(v.to_string())),
        None => return Err(invalid("no format_version")),
    }
    let target = doc["target"]
        .as_str()
        .ok_or_else(|| invalid("no target"))?
        .to_string();
    let changes = doc["changes"]
        .as_array()
        .ok_or_else(|| invalid("no changes list"))?;
    let n = changes.len();
    let mut actions = Vec::with_capacity(n);
    for (i, c) in changes.iter().enumerate() {
        let at = |what: &str| invalid(format!("changes[{i}]: {what}"));
        let address = c["address"]
            .as_str()
            .and_then(parse_address)
            .ok_or_else(|| at("bad address"))?;
        let action = c["action"]
            .as_str()
            .and_then(action_kind)
            .ok_or_else(|| at("bad action"))?;
        if c.get("body").is_none() {
            return Err(at("no body: was this written by `plan --out`?"));
        }
        let body = opt(&c["body"]);
        if matches!(
            action,
            ActionKind::Create | ActionKind::Update | ActionKind::Upsert
        ) && !body.as_ref().is_some_and(Value::is_object)
        {
            return Err(at("no object to send"));
        }
        let depends_on: Vec<usize> = match c["depends_on_steps"].as_array() {
            Some(steps) => steps
                .iter()
                .map(|s| {
                    s.as_u64()
                        .and_then(|s| usize::try_from(s).ok())
                        .filter(|&s| s < n)
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| at("bad depends_on_steps"))?,
            None => return Err(at("no depends_on_steps")),
        };
        let source = c["source"].as_object().and_then(|s| {
            Some(Source {
                file: PathBuf::from(s.get("file")?.as_str()?),
                line: u32::try_from(s.get("line")?.as_u64()?).ok()?,
            })
        });
        let fields = c["fields"]
            .as_array()
            .map(|fs| {
                fs.iter()
                    .map(|f| FieldChange {
                        path: f["path"].as_str().unwrap_or_default().to_string(),
                        before: opt(&f["before"]),
                        after: opt(&f["after"]),
                    })
                    .collect()
            })
            .unwrap_or_default();
        actions.push(Action {
            address,
            action,
            source,
            fields,
            depends_on,
            reason: c["reason"].as_str().map(str::to_string),
            body,
            intended: c["intended"].as_str().and_then(action_kind),
            fingerprint: c["fingerprint"].as_str().map(str::to_string),
        });
    }
    let summary_unchanged = doc["summary"]["unchanged"].as_u64().unwrap_or(0);
    Ok(Plan {
        target,
        actions,
        unchanged: usize::try_from(summary_unchanged).unwrap_or(0),
        unmanaged: vec![],
        warnings: vec![],
        guard_violations: vec![],
    })
}

/// Re-reads exactly the resources the plan touches; what changed since the plan was made.
pub async fn stale(client: &Client, plan: &Plan) -> Result<Vec<String>, ClientError> {
    let mut out = Vec::new();
    for a in &plan.actions {
        let expects_absent = a.action == ActionKind::Create;
        let Some(expected) = a.fingerprint.as_ref() else {
            if !expects_absent {
                continue;
            }
            if client
                .read(a.address.kind, a.address.slug.as_deref())
                .await?
                .is_some()
            {
                out.push(format!(
                    "{} exists now; the plan was to create it",
                    a.address
                ));
            }
            continue;
        };
        match client
            .read(a.address.kind, a.address.slug.as_deref())
            .await?
        {
            None => out.push(format!("{} has been deleted since the plan", a.address)),
            Some(obj) if &fingerprint(a.address.kind, &obj) != expected => {
                out.push(format!("{} has changed since the plan", a.address))
            }
            Some(_) => {}
        }
    }
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        assert_eq!(
            parse_address("Bucket/platform"),
            Some(Address::new(Kind::Bucket, Some("platform".into())))
        );
        assert_eq!(
            parse_address("ResourcePools"),
            Some(Address::new(Kind::ResourcePools, None))
        );
        assert_eq!(parse_address("Bucket"), None);
        assert_eq!(parse_address("Widget/x"), None);
        assert_eq!(parse_address("Bucket/"), None);
    }

    #[test]
    fn refuses_what_is_not_a_saved_plan() {
        assert!(matches!(parse("[]"), Err(SavedPlanError::Invalid(_))));
        assert!(matches!(
            parse("{\"format_version\": 2}"),
            Err(SavedPlanError::Version(_))
        ));
        let shown_not_saved = r#"{"format_version": 1, "target": "t", "changes": [
            {"address": "Team/t", "action": "create", "fields": [], "depends_on": []}]}"#;
        let err = parse(shown_not_saved).unwrap_err().to_string();
        assert!(err.contains("was this written by `plan --out`?"), "{err}");
    }

    #[test]
    fn reads_what_plan_out_writes() {
        let text = r#"{"format_version": 1, "target": "local:x", "summary": {"unchanged": 4},
          "changes": [
            {"address": "Team/t", "action": "create", "source": {"file": "t.yaml", "line": 2},
             "fields": [{"path": "name", "before": null, "after": "T"}], "depends_on": [],
             "depends_on_steps": [], "reason": null, "intended": null,
             "body": {"slug": "t", "name": "T"}, "fingerprint": null},
            {"address": "Bucket/b", "action": "delete", "source": null, "fields": [],
             "depends_on": ["Team/t"], "depends_on_steps": [0], "reason": null, "intended": null,
             "body": null, "fingerprint": "0123456789abcdef"}
          ]}"#;
        let p = parse(text).unwrap();
        assert_eq!(p.target, "local:x");
        assert_eq!(p.unchanged, 4);
        assert_eq!(p.actions[1].depends_on, vec![0]);
        assert_eq!(p.actions[0].source.as_ref().unwrap().line, 2);
        assert_eq!(p.actions[0].fields[0].before, None);
        assert_eq!(
            p.actions[1].fingerprint.as_deref(),
            Some("0123456789abcdef")
        );
    }
}
