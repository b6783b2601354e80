//! The executor: runs a plan's actions against the target along the dependency queue, at most
//! `parallelism` at once, each starting as soon as its own dependencies are done.
//!
//! It makes no decision the plan did not make, except the conflict rules of PRODUCT.md §3:
//! 409 on create → read, equal → done, else update; 404 on update → create; 404 on delete →
//! done. Every other failure fails the action and skips what depends on it.

pub mod queue;
pub mod saved;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::{Client, ClientError};
use crate::plan::normalize::normalize;
use crate::plan::{Action, ActionKind, Current, Plan};
use crate::registry::Address;
use queue::DependencyQueue;

/// Executor options.
#[derive(Clone, Copy, Debug)]
pub struct ExecOptions {
    pub parallelism: usize,
    /// Send `force_delete=true` on bucket deletes.
    pub force_delete_buckets: bool,
}

/// How one action ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Done {
        elapsed: Duration,
        /// A conflict resolved on the way (§3), in words.
        resolved: Option<String>,
    },
    Failed {
        reason: String,
    },
    /// Not attempted: a dependency failed or was unsupported.
    Skipped {
        because: Address,
    },
    /// An unsupported action, never attempted.
    Unsupported {
        reason: String,
    },
}

impl Outcome {
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::Done { .. })
    }
}

/// The past tense of an action, for progress lines.
pub fn verb(action: ActionKind) -> &'static str {
    match action {
        ActionKind::Create => "created",
        ActionKind::Update => "updated",
        ActionKind::Delete => "deleted",
        ActionKind::Upsert => "upserted",
        ActionKind::Unsupported => "not attempted",
    }
}

fn located(action: &Action, message: String) -> String {
    match &action.source {
        Some(s) => format!("{message} ({}:{})", s.file.display(), s.line),
        None => message,
    }
}

fn server_text(e: &ClientError) -> String {
    match e {
        ClientError::Status {
            status, message, ..
        } => format!("{status} {message}"),
        other => other.to_string(),
    }
}

/// The resources of the current state that reference `address`.
pub fn referrers(current: &Current, address: &Address) -> Vec<Address> {
    current
        .resources
        .iter()
        .filter(|(a, obj)| {
            *a != address
                && a.kind
                    .def()
                    .references_in(obj)
                    .iter()
                    .any(|r| r.target == address.kind && Some(&r.slug) == address.slug.as_ref())
        })
        .map(|(a, _)| a.clone())
        .collect()
}

async fn run_action(
    client: &Client,
    action: &Action,
    referrers_now: Vec<Address>,
    opts: ExecOptions,
) -> Result<Option<String>, String> {
    let kind = action.address.kind;
    let slug = action.address.slug.as_deref();
    let null = Value::Null;
    let body = action.body.as_ref().unwrap_or(&null);
    match action.action {
        ActionKind::Create => match client.create(kind, body, false).await {
            Ok(_) => Ok(None),
            Err(e) if e.status() == Some(409) => {
                // Created by someone else since the plan (or by our own retried POST).
                let existing = client
                    .read(kind, slug)
                    .await
                    .map_err(|r| located(action, server_text(&r)))?;
                match existing {
                    None => Err(located(action, server_text(&e))),
                    Some(obj) if normalize(kind, &obj, &[]) == normalize(kind, body, &[]) => {
                        Ok(Some("already existed, identical to the manifest".into()))
                    }
                    Some(_) => client
                        .update(kind, slug, body, false, false)
                        .await
                        .map(|_| Some("already existed; updated to the manifest".into()))
                        .map_err(|u| located(action, server_text(&u))),
                }
            }
            Err(e) => Err(located(action, server_text(&e))),
        },
        ActionKind::Update => match client.update(kind, slug, body, false, false).await {
            Ok(_) => Ok(None),
            Err(e) if e.status() == Some(404) => client
                .create(kind, body, false)
                .await
                .map(|_| Some("had been deleted since the plan; created again".into()))
                .map_err(|c| located(action, server_text(&c))),
            Err(e) => Err(located(action, server_text(&e))),
        },
        ActionKind::Upsert => client
            .update(kind, slug, body, true, false)
            .await
            .map(|_| None)
            .map_err(|e| located(action, server_text(&e))),
        ActionKind::Delete => match client.delete(kind, slug, opts.force_delete_buckets).await {
            Ok(()) => Ok(None),
            Err(e) if e.status() == Some(404) => Ok(Some("was already gone".into())),
            Err(e) if e.status() == Some(400) => {
                // Name the referrers the current state shows, unless the server already did.
                let text = server_text(&e);
                let names: Vec<String> = referrers_now
                    .iter()
                    .map(|a| a.to_string())
                    .filter(|a| !text.contains(a.as_str()))
                    .collect();
                if names.is_empty() {
                    Err(text)
                } else {
                    Err(format!("{text}; still referenced by {}", names.join(", ")))
                }
            }
            Err(e) => Err(server_text(&e)),
        },
        ActionKind::Unsupported => Err(action.reason.clone().unwrap_or_default()),
    }
}

/// What [`run_action`] reads of an action: the displayed fields (a create's parsed documents)
/// and the dependencies stay behind, so starting an action copies only its body.
fn for_execution(a: &Action) -> Action {
    Action {
        address: a.address.clone(),
        action: a.action,
        source: a.source.clone(),
        fields: Vec::new(),
        depends_on: Vec::new(),
        reason: a.reason.clone(),
        body: a.body.clone(),
        intended: a.intended,
        fingerprint: None,
    }
}

/// Runs the plan; `report` is called once per action as it ends (in completion order).
pub async fn execute(
    client: Arc<Client>,
    plan: &Plan,
    current: &Current,
    opts: ExecOptions,
    mut report: impl FnMut(&Action, &Outcome),
) -> Vec<Outcome> {
    let n = plan.actions.len();
    let deps: Vec<Vec<usize>> = plan.actions.iter().map(|a| a.depends_on.clone()).collect();
    let mut queue = DependencyQueue::new(&deps);
    let mut outcomes: Vec<Option<Outcome>> = vec![None; n];
    let mut running = tokio::task::JoinSet::new();
    let limit = opts.parallelism.max(1);
    loop {
        while running.len() < limit {
            let Some(i) = queue.dequeue() else { break };
            let action = &plan.actions[i];
            if action.action == ActionKind::Unsupported {
                let outcome = Outcome::Unsupported {
                    reason: action.reason.clone().unwrap_or_default(),
                };
                report(action, &outcome);
                outcomes[i] = Some(outcome);
                for s in queue.finish(i, false) {
                    let o = Outcome::Skipped {
                        because: action.address.clone(),
                    };
                    report(&plan.actions[s], &o);
                    outcomes[s] = Some(o);
                }
                continue;
            }
            let client = Arc::clone(&client);
            let action = for_execution(action);
            let refs = if action.action == ActionKind::Delete {
                referrers(current, &action.address)
            } else {
                vec![]
            };
            running.spawn(async move {
                let started = Instant::now();
                let result = run_action(&client, &action, refs, opts).await;
                (i, started.elapsed(), result)
            });
        }
        let Some(joined) = running.join_next().await else {
            if queue.is_finished() {
                break;
            }
            continue;
        };
        let (i, elapsed, result) = match joined {
            Ok(r) => r,
            // A task cannot panic on input (no unwrap on input paths); if the runtime
            // cancelled it, the action is unknown: stop scheduling.
            Err(_) => break,
        };
        let ok = result.is_ok();
        let outcome = match result {
            Ok(resolved) => Outcome::Done { elapsed, resolved },
            Err(reason) => Outcome::Failed { reason },
        };
        report(&plan.actions[i], &outcome);
        outcomes[i] = Some(outcome);
        for s in queue.finish(i, ok) {
            let o = Outcome::Skipped {
                because: plan.actions[i].address.clone(),
            };
            report(&plan.actions[s], &o);
            outcomes[s] = Some(o);
        }
    }
    outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or(Outcome::Failed {
                reason: "not run (interrupted)".into(),
            })
        })
        .collect()
}
