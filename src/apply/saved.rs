//! Saved plans on the way back in: `apply PLANFILE` reads the file through the one typed
//! format of [`crate::plan::file`], and refuses a stale plan, changing nothing, when any
//! resource it touches changed since it was made.
//!
//! The staleness check reads the touched kinds through their lists, filtered by `slugs` in
//! batches: a plan of thousands of actions costs a few list pages, never one GET per resource.

use std::collections::{BTreeMap, BTreeSet};

use futures_util::StreamExt;
use serde_json::Value;

use crate::api::registry::{Address, Kind};
use crate::plan::normalize::fingerprint;
use crate::plan::{ActionKind, Plan};
use crate::remote::client::{Client, ClientError};

pub use crate::plan::file::{parse_address, SavedPlanError};

/// Reads a saved plan (the file `plan --out` writes) from a stream, change by change, never
/// holding its whole text: see [`crate::plan::file::read_saved_from`].
pub fn parse(reader: impl std::io::BufRead) -> Result<Plan, SavedPlanError> {
    crate::plan::file::read_saved_from(reader)
}

/// Whether a saved plan is refused for naming a kind this cfgctl does not know (yet): a kind
/// its target's description may add, registered once that description is read (R4-5).
pub fn names_an_unknown_kind(e: &SavedPlanError) -> bool {
    match e {
        SavedPlanError::Change { address, .. } => {
            let kind = address.split_once('/').map_or(address.as_str(), |(k, _)| k);
            Kind::from_name(kind).is_none()
        }
        SavedPlanError::Invalid(m) => m.starts_with("guards.declared_kinds: unknown kind"),
        _ => false,
    }
}

/// The target and the environment a saved plan was made for (its `target` and
/// `guards.environment`), read as a stream without the rest: which target's description to
/// read before the plan can be, once that target is the plan's (red team E13).
pub fn recorded_of(reader: impl std::io::BufRead) -> Result<Recorded, SavedPlanError> {
    #[derive(serde::Deserialize)]
    struct File {
        target: Option<String>,
        guards: Option<Guards>,
    }
    #[derive(serde::Deserialize)]
    struct Guards {
        environment: Option<String>,
    }
    let file: File = serde_json::from_reader(reader)
        .map_err(|e| SavedPlanError::Invalid(format!("not JSON ({e})")))?;
    Ok(Recorded {
        target: file.target,
        environment: file.guards.and_then(|g| g.environment),
    })
}

/// See [`recorded_of`].
pub struct Recorded {
    pub target: Option<String>,
    pub environment: Option<String>,
}

/// At most this many bytes of slugs go into one list request's `slugs` filter, so that no
/// URL grows past what servers and proxies accept.
const SLUGS_PER_REQUEST_BYTES: usize = 2000;

/// Splits slugs into batches whose total length stays under the limit (at least one each).
fn batches(slugs: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut size = 0;
    for s in slugs {
        match out.last_mut() {
            Some(batch) if size + s.len() <= SLUGS_PER_REQUEST_BYTES => {
                size += s.len();
                batch.push(s.clone());
            }
            _ => {
                size = s.len();
                out.push(vec![s.clone()]);
            }
        }
    }
    out
}

/// The current objects of one batch of resources of one kind.
async fn read_batch(
    client: &Client,
    kind: Kind,
    batch: Vec<String>,
) -> Result<Vec<(Address, Value)>, ClientError> {
    let mut query = crate::remote::state::list_filters(kind);
    query.filters.insert("slugs".into(), batch);
    let (items, _pages) = client.list_all(kind, &query).await?;
    Ok(items
        .into_iter()
        .filter_map(|item| {
            let slug = crate::api::registry::object_slug(kind, &item)?;
            Some((Address::new(kind, Some(slug)), item))
        })
        .collect())
}

/// What changed since the plan was made, among the resources it touches; empty when the plan
/// is still fresh. Up to `parallelism` batches are read at once.
pub async fn stale(
    client: &Client,
    plan: &Plan,
    parallelism: usize,
) -> Result<Vec<String>, ClientError> {
    // What each touched resource must look like now: absent (a create), or this fingerprint.
    let mut expected: BTreeMap<Address, Option<&str>> = BTreeMap::new();
    for a in &plan.actions {
        let expect = match a.action {
            ActionKind::Create => None,
            ActionKind::Update | ActionKind::Delete => match a.fingerprint.as_deref() {
                Some(fp) => Some(fp),
                // The follow-up update of a resource the plan creates: the create is checked.
                None => continue,
            },
            // Kinds the target cannot read, and actions never attempted.
            ActionKind::Upsert | ActionKind::Unsupported => continue,
        };
        expected.entry(a.address.clone()).or_insert(expect);
    }
    let mut by_kind: BTreeMap<Kind, Vec<String>> = BTreeMap::new();
    let mut singletons = Vec::new();
    for address in expected.keys() {
        match &address.slug {
            Some(slug) => by_kind.entry(address.kind).or_default().push(slug.clone()),
            None => singletons.push(address.kind),
        }
    }
    let reads = by_kind
        .iter()
        .flat_map(|(kind, slugs)| batches(slugs).into_iter().map(|b| (*kind, b)))
        .map(|(kind, batch)| read_batch(client, kind, batch));
    // In batch order: the first failure returned is the first in that order, and the reads
    // still running are dropped with it.
    let mut read = futures_util::stream::iter(reads).buffered(parallelism.max(1));
    let mut now: BTreeMap<Address, Value> = BTreeMap::new();
    while let Some(batch) = read.next().await {
        now.extend(batch?);
    }
    for kind in singletons {
        if let Some(obj) = client.read(kind, None).await? {
            now.insert(Address::new(kind, None), obj);
        }
    }
    let mut out = Vec::new();
    for (address, expect) in &expected {
        match (expect, now.get(address)) {
            (None, Some(_)) => out.push(format!("{address} exists now; the plan was to create it")),
            (Some(_), None) => out.push(format!("{address} has been deleted since the plan")),
            (Some(fp), Some(obj)) if fingerprint(address.kind, obj) != *fp => {
                out.push(format!("{address} has changed since the plan"))
            }
            _ => {}
        }
    }
    Ok(out)
}

/// With `--force-delete-buckets`: the cascades of the saved plan's deletes worked out again
/// from the target as it is now (see [`crate::plan::recompute_cascades`]), so that `apply`
/// refuses on what a cascade would really take, not on what the file says it would. Reads the
/// description and every kind that may reference a deleted kind (one request a page); a kind
/// the target cannot list stays unread, and the cascade is then refused.
pub async fn recompute_cascades(client: &Client, plan: &mut Plan) -> Result<(), ClientError> {
    let cascading: BTreeSet<Kind> = plan
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete && a.address.kind.def().force_delete)
        .map(|a| a.address.kind)
        .collect();
    if cascading.is_empty() {
        return Ok(());
    }
    let (caps, _) = crate::remote::state::capabilities(client).await?;
    let referrers: BTreeSet<Kind> = cascading
        .iter()
        .flat_map(|&k| crate::plan::unread_referrer_kinds(k, &BTreeSet::new()))
        .filter(|&k| caps.can_read_state(k) && !k.def().singleton)
        .collect();
    let mut current = crate::plan::Current::default();
    for kind in referrers {
        let (items, _pages) = client
            .list_all(kind, &crate::remote::state::list_filters(kind))
            .await?;
        for item in items {
            if let Some(slug) = crate::api::registry::object_slug(kind, &item) {
                current.insert(Address::new(kind, Some(slug)), &item);
            }
        }
        current.known.insert(kind);
    }
    let guard = plan.guard.clone();
    crate::plan::recompute_cascades(&mut plan.actions, &current, &guard);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_urls_short_and_lose_nothing() {
        let slugs: Vec<String> = (0..1000).map(|i| format!("slug-number-{i:04}")).collect();
        let b = batches(&slugs);
        assert!(b.len() > 1);
        assert!(b
            .iter()
            .all(|x| x.iter().map(String::len).sum::<usize>() <= SLUGS_PER_REQUEST_BYTES));
        assert_eq!(b.concat(), slugs);
        let huge = vec!["x".repeat(5000)];
        assert_eq!(batches(&huge), vec![huge.clone()]);
        assert!(batches(&[]).is_empty());
    }
}
