//! The executor: runs a plan's actions against the target along the dependency queue, at most
//! `parallelism` at once, each starting as soon as its own dependencies are done.
//!
//! It makes no decision the plan did not make, except the conflict rules of docs/product.md §3:
//! 409 on create → read, equal → done, else update; 404 on update → create; 404 on delete →
//! done. Every other failure fails the action and skips what depends on it.

pub mod dry_run;
pub mod queue;
pub mod report;
pub mod saved;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;

use crate::api::registry::Address;
use crate::api::wire::{Cascade, Commit, IfMissing};
use crate::plan::normalize::normalize;
use crate::plan::{Action, ActionKind, Current, Plan, Source};
use crate::remote::client::{Client, ClientError};
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
        /// A conflict resolved on the way (§3).
        resolved: Option<Resolved>,
    },
    Failed {
        reason: Failure,
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

/// A conflict of docs/product.md §3 that the executor resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// 409 on create, and what exists is what the manifest says.
    AlreadyIdentical,
    /// 409 on create, and what exists was updated to the manifest.
    UpdatedExisting,
    /// 404 on update: created again.
    Recreated,
    /// 404 on delete.
    AlreadyGone,
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Resolved::AlreadyIdentical => "already existed, identical to the manifest",
            Resolved::UpdatedExisting => "already existed; updated to the manifest",
            Resolved::Recreated => "had been deleted since the plan; created again",
            Resolved::AlreadyGone => "was already gone",
        })
    }
}

/// Why an action failed: the target's answer (status kept), where its manifest is, and for a
/// refused delete what still references the resource.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The HTTP status, when the target answered.
    pub status: Option<u16>,
    /// The server's reply (with its code and request id) or the transport failure, in words.
    pub message: String,
    pub source: Option<Source>,
    /// For a delete refused with 400: referrers the current state shows that the server's
    /// message does not already name.
    pub still_referenced_by: Vec<Address>,
}

impl Failure {
    fn of(action: &Action, e: &ClientError) -> Failure {
        let message = match e {
            ClientError::Status { status, reply, .. } => format!("{status} {reply}"),
            other => other.to_string(),
        };
        Failure {
            status: e.status(),
            message,
            source: action.source.clone(),
            still_referenced_by: vec![],
        }
    }

    fn interrupted() -> Failure {
        Failure {
            status: None,
            message: "not run (interrupted)".into(),
            source: None,
            still_referenced_by: vec![],
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(s) = &self.source {
            write!(f, " ({}:{})", s.file.display(), s.line)?;
        }
        if !self.still_referenced_by.is_empty() {
            let names: Vec<String> = self
                .still_referenced_by
                .iter()
                .map(ToString::to_string)
                .collect();
            write!(f, "; still referenced by {}", names.join(", "))?;
        }
        Ok(())
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

async fn run_action(
    client: &Client,
    action: &Action,
    referrers_now: Vec<Address>,
    opts: ExecOptions,
) -> Result<Option<Resolved>, Failure> {
    let kind = action.address.kind;
    let slug = action.address.slug.as_deref();
    let null = Value::Null;
    let body = action.body.as_deref().unwrap_or(&null);
    let failed = |e: &ClientError| Failure::of(action, e);
    match action.action {
        // A kind whose create answers a server-owned secret (a ServiceAccount's token): the
        // answer is read for it, and the secret kept, registered at once (`secrets`).
        ActionKind::Create if crate::plan::secrets::answers_secrets(kind) => {
            match client.create(kind, body, Commit::Apply).await {
                Ok(answer) => {
                    if let Some(answer) = answer {
                        crate::plan::secrets::keep_created(kind, &action.address, &answer);
                    }
                    Ok(None)
                }
                Err(e) => Err(failed(&e)),
            }
        }
        ActionKind::Create => match client.submit_create(kind, body, Commit::Apply).await {
            Ok(()) => Ok(None),
            Err(e) if e.status() == Some(409) => {
                // Created by someone else since the plan (or by our own retried POST).
                let existing = client.read(kind, slug).await.map_err(|r| failed(&r))?;
                match existing {
                    None => Err(failed(&e)),
                    Some(obj) if normalize(kind, &obj, &[]) == normalize(kind, body, &[]) => {
                        Ok(Some(Resolved::AlreadyIdentical))
                    }
                    Some(obj) => {
                        // Fields of a newer API than this cfgctl's stay as the target has them.
                        let mut body = body.clone();
                        crate::plan::newer::carry_over(kind, &obj, &mut body);
                        client
                            .submit_update(kind, slug, &body, IfMissing::Fail, Commit::Apply)
                            .await
                            .map(|_| Some(Resolved::UpdatedExisting))
                            .map_err(|u| failed(&u))
                    }
                }
            }
            Err(e) => Err(failed(&e)),
        },
        ActionKind::Update => {
            match client
                .submit_update(kind, slug, body, IfMissing::Fail, Commit::Apply)
                .await
            {
                Ok(()) => Ok(None),
                Err(e) if e.status() == Some(404) => client
                    .submit_create(kind, body, Commit::Apply)
                    .await
                    .map(|_| Some(Resolved::Recreated))
                    .map_err(|c| failed(&c)),
                Err(e) => Err(failed(&e)),
            }
        }
        ActionKind::Upsert => client
            .submit_update(kind, slug, body, IfMissing::Create, Commit::Apply)
            .await
            .map(|_| None)
            .map_err(|e| failed(&e)),
        ActionKind::Delete => {
            let cascade = if opts.force_delete_buckets {
                Cascade::Force
            } else {
                Cascade::No
            };
            match client.delete(kind, slug, cascade).await {
                Ok(()) => Ok(None),
                Err(e) if e.status() == Some(404) => Ok(Some(Resolved::AlreadyGone)),
                Err(e) => {
                    let mut failure = failed(&e);
                    if e.status() == Some(400) {
                        // Name the referrers the current state shows, unless the server did.
                        failure.still_referenced_by = referrers_now
                            .into_iter()
                            .filter(|a| !failure.message.contains(a.to_string().as_str()))
                            .collect();
                    }
                    Err(failure)
                }
            }
        }
        ActionKind::Unsupported => Err(Failure {
            status: None,
            message: action.reason.clone().unwrap_or_default(),
            source: None,
            still_referenced_by: vec![],
        }),
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
    // The actions in flight, polled by this task: each borrows its action from the plan (no
    // copy of the body), and the requests' connections run on the runtime as usual.
    let mut running = FuturesUnordered::new();
    // `--parallelism` is the ceiling; the client's throttle cuts it on 429s (AIMD).
    client.throttle().reset(opts.parallelism.max(1));
    loop {
        let limit = client.throttle().limit();
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
            let client = &*client;
            let refs = if action.action == ActionKind::Delete {
                current.referrers(&action.address)
            } else {
                vec![]
            };
            running.push(async move {
                let started = Instant::now();
                let result = run_action(client, action, refs, opts).await;
                (i, started.elapsed(), result)
            });
        }
        let Some((i, elapsed, result)) = running.next().await else {
            if queue.is_finished() {
                break;
            }
            continue;
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
                reason: Failure::interrupted(),
            })
        })
        .collect()
}
