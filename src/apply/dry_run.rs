//! `plan --server-validate`: every create and update sent with `dry_run`, so the server's own
//! validation runs before merge. Rejections come back located at their manifests; an action
//! waiting for a create cannot be validated and is noted as such.

use std::path::PathBuf;

use crate::api::wire::{Commit, IfMissing};
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::manifest::Manifest;
use crate::plan::{ActionKind, Plan};
use crate::remote::client::{Client, ClientError};

/// Sends the plan's creates and updates as dry runs; the server's rejections (400, 404, 409),
/// each at its manifest. Notes for what could not be validated go into the plan's warnings.
pub async fn server_validate(
    client: &Client,
    plan: &mut Plan,
    manifests: &[Manifest],
) -> Result<Vec<Diagnostic>, ClientError> {
    let mut rejected = Vec::new();
    let mut notes = Vec::new();
    for a in &plan.actions {
        if !matches!(
            a.action,
            ActionKind::Create | ActionKind::Update | ActionKind::Upsert
        ) {
            continue;
        }
        let pending: Vec<String> = a
            .depends_on
            .iter()
            .map(|&d| &plan.actions[d])
            .filter(|d| matches!(d.action, ActionKind::Create | ActionKind::Upsert))
            .map(|d| d.address.to_string())
            .collect();
        if !pending.is_empty() {
            notes.push(format!(
                "{} not validated by the server: it waits for {} to be created",
                a.address,
                pending.join(", ")
            ));
            continue;
        }
        let Some(body) = &a.body else { continue };
        let kind = a.address.kind;
        let result = match a.action {
            ActionKind::Create => client.create(kind, body, Commit::DryRun).await.map(|_| ()),
            _ => {
                let if_missing = if a.action == ActionKind::Upsert {
                    IfMissing::Create
                } else {
                    IfMissing::Fail
                };
                client
                    .update(
                        kind,
                        a.address.slug.as_deref(),
                        body,
                        if_missing,
                        Commit::DryRun,
                    )
                    .await
                    .map(|_| ())
            }
        };
        match result {
            Ok(()) => {}
            Err(e) if matches!(e.status(), Some(400 | 404 | 409)) => {
                let m = manifests.iter().find(|m| m.address() == a.address);
                let (file, pos) = m.map(|m| (m.file.clone(), m.pos)).unwrap_or_else(|| {
                    (PathBuf::from("<plan>"), crate::util::yaml::Pos::new(1, 1))
                });
                rejected.push(Diagnostic::error(
                    file,
                    pos,
                    Problem::ServerRejected {
                        address: a.address.to_string(),
                        message: e.server_reply().map(|r| r.to_string()).unwrap_or_default(),
                    },
                ));
            }
            Err(e) => return Err(e),
        }
    }
    plan.warnings.extend(notes);
    Ok(rejected)
}
