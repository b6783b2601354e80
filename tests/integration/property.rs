//! Property: any set of manifests with references, applied to any starting state, ends with a
//! plan of 0 changes.

use std::sync::Arc;

use cfgctl::api::registry::Kind;
use cfgctl::config::settings::Settings;
use cfgctl::emulator::Config;
use cfgctl::manifest::Manifest;
use cfgctl::plan::{plan, Capabilities, PlanOptions};
use cfgctl::util::yaml::{Pos, Spans};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::Tenant;

#[derive(Clone, Debug)]
struct Universe {
    teams: usize,
    /// Per bucket: a team (index) or none, a notification policy (index) or none.
    buckets: Vec<(Option<usize>, Option<usize>)>,
    /// Per policy: owned by a team (true) or a bucket, and which.
    policies: Vec<(bool, usize)>,
    /// Per monitor: which bucket.
    monitors: Vec<usize>,
    /// Per collection: a team or none, a policy or none.
    collections: Vec<(Option<usize>, Option<usize>)>,
    /// Per manifest index (mod len): exists beforehand with other values.
    pre_existing: Vec<bool>,
    /// Unmanaged teams already on the tenant.
    strangers: usize,
    descriptions: Vec<String>,
}

fn universe() -> impl Strategy<Value = Universe> {
    (
        1usize..4,
        prop::collection::vec(
            (prop::option::of(0usize..4), prop::option::of(0usize..3)),
            0..4,
        ),
        prop::collection::vec((any::<bool>(), 0usize..4), 0..3),
        prop::collection::vec(0usize..4, 0..4),
        prop::collection::vec(
            (prop::option::of(0usize..4), prop::option::of(0usize..3)),
            0..3,
        ),
        prop::collection::vec(any::<bool>(), 1..20),
        0usize..3,
        prop::collection::vec("[a-z ]{0,12}", 1..6),
    )
        .prop_map(
            |(
                teams,
                buckets,
                policies,
                monitors,
                collections,
                pre_existing,
                strangers,
                descriptions,
            )| Universe {
                teams,
                buckets,
                policies,
                monitors,
                collections,
                pre_existing,
                strangers,
                descriptions,
            },
        )
}

fn manifest(kind: Kind, spec: Value) -> Manifest {
    Manifest {
        kind,
        slug: spec["slug"].as_str().map(str::to_string),
        spec: spec.into(),
        file: format!("{}.yaml", kind.def().path).into(),
        pos: Pos::new(1, 1),
        spans: Spans::default(),
        digest: Default::default(),
        lean: None,
        prepared: Vec::new(),
    }
}

fn manifests(u: &Universe) -> Vec<Manifest> {
    let desc = |i: usize| u.descriptions[i % u.descriptions.len()].clone();
    let mut out = Vec::new();
    for i in 0..u.teams {
        out.push(manifest(
            Kind::named("Team"),
            json!({"slug": format!("t{i}"), "name": format!("Team {i}"), "description": desc(i)}),
        ));
    }
    let nb = u.buckets.len();
    let np = u.policies.len();
    for (i, (by_team, which)) in u.policies.iter().enumerate() {
        let owner = if *by_team || nb == 0 {
            json!({"team_slug": format!("t{}", which % u.teams)})
        } else {
            json!({"bucket_slug": format!("b{}", which % nb)})
        };
        let mut spec = json!({"slug": format!("n{i}"), "name": format!("Policy {i}")});
        spec.as_object_mut()
            .unwrap()
            .extend(owner.as_object().unwrap().clone());
        out.push(manifest(Kind::named("NotificationPolicy"), spec));
    }
    for (i, (team, policy)) in u.buckets.iter().enumerate() {
        let mut spec = json!({"slug": format!("b{i}"), "name": format!("Bucket {i}"), "description": desc(i + 1)});
        if let Some(t) = team {
            spec["team_slug"] = json!(format!("t{}", t % u.teams));
        }
        if let (Some(p), true) = (policy, np > 0) {
            spec["notification_policy_slug"] = json!(format!("n{}", p % np));
        }
        out.push(manifest(Kind::named("Bucket"), spec));
    }
    for (i, (team, policy)) in u.collections.iter().enumerate() {
        let mut spec = json!({"slug": format!("c{i}"), "name": format!("Collection {i}")});
        if let Some(t) = team {
            spec["team_slug"] = json!(format!("t{}", t % u.teams));
        }
        if let (Some(p), true) = (policy, np > 0) {
            spec["notification_policy_slug"] = json!(format!("n{}", p % np));
        }
        out.push(manifest(Kind::named("Collection"), spec));
    }
    if nb > 0 {
        for (i, b) in u.monitors.iter().enumerate() {
            out.push(manifest(
                Kind::named("Monitor"),
                json!({"slug": format!("m{i}"), "name": format!("Monitor {i}"), "bucket_slug": format!("b{}", b % nb), "interval_secs": 60}),
            ));
        }
    }
    out
}

/// The part of a manifest that can exist before its references do: slug and a stale name,
/// plus what the kind's "required if" rules need.
fn stale_version(m: &Manifest) -> Value {
    let mut v = json!({"slug": m.slug, "name": "stale"});
    for field in ["team_slug", "bucket_slug"] {
        if let Some(x) = m.spec.get(field) {
            if [Kind::named("NotificationPolicy"), Kind::named("Monitor")].contains(&m.kind) {
                v[field] = x.clone();
            }
        }
    }
    v
}

async fn run_case(u: Universe) -> Result<(), TestCaseError> {
    let t = Tenant::start(Config::default()).await;
    let desired = manifests(&u);
    // Starting state: some managed resources exist with other values (in an order that
    // respects the references they keep), and some strangers.
    for (i, m) in desired.iter().enumerate() {
        if u.pre_existing[i % u.pre_existing.len()] {
            let r = t.create(m.kind, stale_version(m)).await;
            // A policy or monitor whose owner does not exist yet cannot pre-exist.
            prop_assert!(r.status == 200 || r.status == 400, "{r:?}");
        }
    }
    for i in 0..u.strangers {
        t.create(
            Kind::named("Team"),
            json!({"slug": format!("stranger-{i}"), "name": "S"}),
        )
        .await;
    }
    let client = Arc::new(t.client());
    let settings = Settings::default();
    let opts = PlanOptions {
        target: "p".into(),
        ..PlanOptions::default()
    };
    let fetched = cfgctl::remote::state::fetch(&client).await.unwrap();
    prop_assert_eq!(
        &fetched.caps,
        &Capabilities::from_swagger(&cfgctl::api::spec::swagger_for(
            cfgctl::api::registry::Profile::Full
        ))
    );
    let first = plan(&desired, &fetched.current, &fetched.caps, &settings, &opts)
        .map_err(|e| TestCaseError::fail(format!("{:?}", e.0)))?;
    let outcomes = cfgctl::apply::execute(
        Arc::clone(&client),
        &first,
        &fetched.current,
        cfgctl::apply::ExecOptions {
            parallelism: 4,
            force_delete_buckets: false,
        },
        |_, _| {},
    )
    .await;
    for (a, o) in first.actions.iter().zip(&outcomes) {
        prop_assert!(
            o.is_success(),
            "{} {}: {:?}",
            a.action.as_str(),
            a.address,
            o
        );
    }
    let after = cfgctl::remote::state::fetch(&client).await.unwrap();
    let second = plan(&desired, &after.current, &after.caps, &settings, &opts)
        .map_err(|e| TestCaseError::fail(format!("{:?}", e.0)))?;
    let left: Vec<String> = second
        .actions
        .iter()
        .map(|a| format!("{} {} {:?}", a.action.as_str(), a.address, a.fields))
        .collect();
    prop_assert!(left.is_empty(), "changes after apply: {:?}", left);
    prop_assert_eq!(second.unchanged, desired.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn any_manifests_on_any_state_converge(u in universe()) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(run_case(u))?;
    }
}
