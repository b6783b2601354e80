//! `cfgctl apply` against the emulator: order, conflicts, safety, saved plans, a flaky target.

use std::collections::BTreeMap;
use std::sync::Arc;

use cfgctl::api::registry::{embedded_kinds, Address, Kind};
use cfgctl::api::wire;
use cfgctl::emulator::faults::Faults;
use cfgctl::emulator::Config;
use cfgctl::remote::client::Client;
use serde_json::{json, Value};

use crate::support::{
    cfgctl_snapshot, fixture_objects, scratch_copy, seeded, write, Cfgctl, Tenant,
};

/// The address a request path names (`None` slug for a collection path).
fn address_of(path: &str) -> Option<Address> {
    let rest = path.strip_prefix("/api/v1/config/")?;
    let mut parts = rest.split('/');
    let kind = wire::kind_for_path(parts.next()?)?;
    Some(Address::new(kind, parts.next().map(str::to_string)))
}

/// Every resource of the tenant, by address, read through the lists.
async fn everything(t: &Tenant) -> BTreeMap<Address, Value> {
    let mut out = BTreeMap::new();
    for def in embedded_kinds().into_iter().filter(|d| d.full_ops.list) {
        let (items, _) = t.list_all(def.kind, &wire::ListQuery::default()).await;
        for item in items {
            let slug = item["slug"].as_str().unwrap().to_string();
            assert!(
                out.insert(Address::new(def.kind, Some(slug.clone())), item)
                    .is_none(),
                "duplicate {}/{slug}",
                def.name
            );
        }
    }
    out
}

#[tokio::test]
async fn full_fixture_applied_in_order_then_plans_no_change() {
    let t = Tenant::full().await;
    let r = Cfgctl::new(&t)
        .args(&["apply", "fixtures/valid", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains("Apply: 26 done (0 resolved conflicts), 0 failed, 0 skipped, 0 unsupported, 0 unchanged."),
        "{}",
        r.stdout
    );
    // One progress line per action without a terminal.
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.starts_with("created "))
            .count(),
        26,
        "{}",
        r.stderr
    );
    // Each create came after the creates of what it references: the server's created_at
    // (RFC 3339 with microseconds, so ordered as text) says when each POST ran.
    let data = everything(&t).await;
    for (address, object) in &data {
        for r in address.kind.def().references_in(object) {
            let target = Address::new(r.target, Some(r.slug));
            let (mine, theirs) = (
                object["created_at"].as_str().unwrap(),
                data[&target]["created_at"].as_str().unwrap(),
            );
            assert!(
                theirs < mine,
                "{address} ({mine}) was created before {target} ({theirs})"
            );
        }
    }
    assert!(
        t.emulator
            .stats()
            .log
            .iter()
            .filter(|l| l.method == "POST")
            .count()
            == 26
    );
    let again = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(again.code, 0, "{}", again.transcript());
    let twice = Cfgctl::new(&t)
        .args(&["apply", "fixtures/valid", "--auto-approve"])
        .run()
        .await;
    assert_eq!(twice.code, 0);
    assert!(twice.stdout.contains("Nothing to apply."));
}

#[tokio::test]
async fn deletes_run_referrers_first() {
    let t = seeded(Config::default()).await;
    // Everything in the prune scope but one team (`*/*` every slug-addressed resource, `*`
    // every singleton): the rest of the tenant is deleted.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"*/*\", \"*\"]\nmax_deletes: 100\n",
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: payments\n  name: Payments\n  description: Checkout, billing and the payment gateway.\n  user_emails: [carol@example.com, dan@example.com, erin@example.com]\n",
    );
    t.emulator.reset_stats();
    let refused = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(refused.code, 1, "{}", refused.transcript());
    assert!(
        refused.stderr.contains("--allow-empty-prune"),
        "{}",
        refused.stderr
    );
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing changed"
    );

    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&[
            "apply",
            ".",
            "--prune",
            "--allow-empty-prune",
            "--auto-approve",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let deleted: Vec<Address> = t
        .emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method == "DELETE")
        .filter_map(|l| address_of(&l.path))
        .collect();
    assert_eq!(deleted.len(), 25, "{deleted:?}");
    let position: BTreeMap<&Address, usize> =
        deleted.iter().enumerate().map(|(i, a)| (a, i)).collect();
    for (kind, slug, object) in fixture_objects() {
        let me = Address::new(kind, slug);
        if !position.contains_key(&me) {
            continue;
        }
        for r in kind.def().references_in(&object) {
            let target = Address::new(r.target, Some(r.slug));
            if let Some(&p) = position.get(&target) {
                assert!(
                    position[&me] < p,
                    "{target} deleted before its referrer {me}"
                );
            }
        }
    }
    let left: Vec<Address> = everything(&t).await.into_keys().collect();
    assert_eq!(
        left,
        vec![Address::new(Kind::named("Team"), Some("payments".into()))]
    );
}

#[tokio::test]
async fn max_deletes_is_enforced() {
    let t = seeded(Config::default()).await;
    for i in 0..4 {
        t.create(
            Kind::named("Dashboard"),
            json!({"slug": format!("scratch-{i}"), "name": "S"}),
        )
        .await;
    }
    let dir = scratch_copy();
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Dashboard/*\"]\nmax_deletes: 3\n",
    );
    let d = dir.path().to_str().unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", d, "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("refusing to apply: the plan deletes 4 resources, more than max_deletes (3) of cfgctl.yaml; nothing was changed"),
        "{}",
        r.stderr
    );
    assert_eq!(
        t.list(Kind::named("Dashboard"), "").await.body["dashboards"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    // Without --prune nothing is deleted at all.
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", d, "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains("Nothing to apply."));
}

async fn dashboard_count(t: &Tenant) -> usize {
    t.list(Kind::named("Dashboard"), "").await.body["dashboards"]
        .as_array()
        .unwrap()
        .len()
}

/// `--max-deletes N` lowers the limit of every apply, from a directory too (red team E10: it
/// was read only for a saved plan whose guards were not sealed, so `--max-deletes 0` deleted);
/// it never raises the limit of cfgctl.yaml.
#[tokio::test]
async fn max_deletes_on_the_command_line_lowers_the_limit_of_every_apply() {
    let t = seeded(Config::default()).await;
    for i in 0..2 {
        t.create(
            Kind::named("Dashboard"),
            json!({"slug": format!("scratch-{i}"), "name": "S"}),
        )
        .await;
    }
    let dir = scratch_copy();
    let d = dir.path().to_str().unwrap();
    for (limit, flag, refusal) in [
        (5, "0", "the plan deletes 2 resources, more than --max-deletes (0); nothing was changed"),
        (1, "10", "the plan deletes 2 resources, more than max_deletes (1) of cfgctl.yaml; nothing was changed"),
    ] {
        let settings = format!("prune: [\"Dashboard/scratch-*\"]\nmax_deletes: {limit}\n");
        write(dir.path(), "cfgctl.yaml", &settings);
        let r = Cfgctl::new(&t)
            .dir(dir.path())
            .args(&["apply", d, "--prune", "--auto-approve", "--max-deletes", flag])
            .run()
            .await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(r.stderr.contains(refusal), "{flag}: {}", r.stderr);
        assert_eq!(dashboard_count(&t).await, 4, "{flag}: nothing deleted");
    }
    // A saved plan (sealed for this user and token) keeps to the flag too.
    let plan = dir.path().join("deletes.plan");
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Dashboard/scratch-*\"]\nmax_deletes: 5\n",
    );
    let p = plan.to_str().unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", d, "--prune", "--out", p])
        .run()
        .await;
    assert!(matches!(r.code, 0 | 2), "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", p, "--auto-approve", "--max-deletes", "1"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("the plan deletes 2 resources, more than --max-deletes (1)"),
        "{}",
        r.stderr
    );
    assert_eq!(dashboard_count(&t).await, 4);
}

#[tokio::test]
async fn no_terminal_needs_auto_approve() {
    let t = Tenant::full().await;
    let r = Cfgctl::new(&t)
        .args(&["apply", "examples/quickstart"])
        .run()
        .await;
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(
            "apply needs --auto-approve when standard input is not a terminal: nothing was changed"
        ),
        "{}",
        r.stderr
    );
    assert!(t.emulator.stats().log.iter().all(|l| l.method == "GET"));
}

/// Plans against the tenant as it is, as `cfgctl plan --prune` does, for library-level
/// conflict tests.
async fn plan_now(
    t: &Tenant,
    dir: &std::path::Path,
) -> (Arc<Client>, cfgctl::plan::Plan, cfgctl::plan::Current) {
    let loaded = cfgctl::manifest::load_dir(dir).unwrap();
    assert_eq!(loaded.error_count(), 0);
    let request = cfgctl::ops::PlanRequest {
        target: cfgctl::ops::TargetSettings {
            url: Some(t.emulator.url()),
            token: None,
            local: None,
            timeout: std::time::Duration::from_secs(30),
            max_retries: 5,
            insecure_http: false,
            max_pages: cfgctl::remote::client::DEFAULT_MAX_PAGES,
            max_response_bytes: cfgctl::remote::client::DEFAULT_MAX_RESPONSE_MB << 20,
        },
        dir: dir.to_path_buf(),
        environment: None,
        prune: true,
        only: vec![],
        server_validate: false,
        drift: false,
        cache: None,
        base: None,
        keep: cfgctl::ops::Keep {
            manifests: false,
            current: true,
            connection: true,
        },
    };
    let cfgctl::ops::Planned {
        plan,
        current: Some(current),
        connection: Some(conn),
        ..
    } = cfgctl::ops::plan(&request).await.unwrap()
    else {
        panic!("the plan came back without the target's objects and the connection");
    };
    (Arc::new(conn.client), plan, current)
}

async fn execute(
    client: Arc<Client>,
    plan: &cfgctl::plan::Plan,
    current: &cfgctl::plan::Current,
) -> Vec<(String, cfgctl::apply::Outcome)> {
    let outcomes = cfgctl::apply::execute(
        client,
        plan,
        current,
        cfgctl::apply::ExecOptions {
            parallelism: 4,
            force_delete_buckets: false,
        },
        |_, _| {},
    )
    .await;
    plan.actions
        .iter()
        .map(|a| a.address.to_string())
        .zip(outcomes)
        .collect()
}

#[tokio::test]
async fn conflict_rules_of_section_3() {
    use cfgctl::apply::Outcome;
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "teams.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: same, name: Same}\n---\napi_version: v1/config\nkind: Team\nspec: {slug: differs, name: Mine}\n---\napi_version: v1/config\nkind: Team\nspec: {slug: vanishes, name: Renamed}\n",
    );
    write(
        dir.path(),
        "labels.yaml",
        "api_version: v1/config\nkind: DerivedLabel\nspec: {slug: mine, name: Mine, label_name: env}\n",
    );
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Bucket/*\"]\nexclude: [\"Monitor/*\", \"DerivedLabel/theirs\"]\n",
    );
    t.create(
        Kind::named("Team"),
        json!({"slug": "vanishes", "name": "Vanishes"}),
    )
    .await;
    t.create(
        Kind::named("DerivedLabel"),
        json!({"slug": "mine", "name": "Mine", "label_name": "old"}),
    )
    .await;
    t.create(
        Kind::named("Bucket"),
        json!({"slug": "in-use", "name": "In use"}),
    )
    .await;
    t.create(
        Kind::named("Bucket"),
        json!({"slug": "gone", "name": "Gone"}),
    )
    .await;
    t.create(
        Kind::named("Monitor"),
        json!({"slug": "watcher", "name": "W", "bucket_slug": "in-use"}),
    )
    .await;
    let (client, plan, current) = plan_now(&t, dir.path()).await;

    // Between plan and apply, someone else acts.
    t.create(Kind::named("Team"), json!({"slug": "same", "name": "Same"}))
        .await;
    t.create(
        Kind::named("Team"),
        json!({"slug": "differs", "name": "Theirs"}),
    )
    .await;
    t.delete(Kind::named("Team"), Some("vanishes"), "").await;
    t.create(
        Kind::named("DerivedLabel"),
        json!({"slug": "theirs", "name": "Theirs", "label_name": "env"}),
    )
    .await;
    t.delete(Kind::named("Bucket"), Some("gone"), "").await;

    let outcomes = execute(client, &plan, &current).await;
    let got: BTreeMap<String, String> = outcomes
        .into_iter()
        .map(|(a, o)| {
            let text = match o {
                Outcome::Done { resolved, .. } => format!(
                    "done{}",
                    resolved.map(|r| format!(": {r}")).unwrap_or_default()
                ),
                Outcome::Failed { reason } => format!("failed: {reason}"),
                other => format!("{other:?}"),
            };
            (a, text)
        })
        .collect();
    cfgctl_snapshot!(format!("{got:#?}"));
    // The state after: matches the manifests where it could.
    assert_eq!(
        t.read(Kind::named("Team"), Some("differs")).await.body["team"]["name"],
        "Mine"
    );
    assert_eq!(
        t.read(Kind::named("Team"), Some("vanishes")).await.body["team"]["name"],
        "Renamed"
    );
    assert_eq!(
        t.read(Kind::named("Bucket"), Some("in-use")).await.status,
        200
    );
}

#[tokio::test]
async fn failures_skip_dependents_and_set_the_exit_code() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    // The label name is taken by an excluded resource: that create fails with 409 and the
    // team beside it, which does not depend on it, is still created.
    t.create(
        Kind::named("DerivedLabel"),
        json!({"slug": "theirs", "name": "Theirs", "label_name": "env"}),
    )
    .await;
    write(
        dir.path(),
        "cfgctl.yaml",
        "exclude: [\"DerivedLabel/theirs\"]\n",
    );
    write(
        dir.path(),
        "all.yaml",
        "api_version: v1/config\nkind: DerivedLabel\nspec: {slug: mine, name: Mine, label_name: env}\n---\napi_version: v1/config\nkind: Team\nspec: {slug: t, name: T}\n",
    );
    // A bucket too big for the server (413) and a monitor in it: the monitor is skipped.
    write(
        dir.path(),
        "big.yaml",
        &format!(
            "api_version: v1/config\nkind: Bucket\nspec:\n  slug: big\n  name: Big\n  description: {}\n---\napi_version: v1/config\nkind: Monitor\nspec: {{slug: m, name: M, bucket_slug: big}}\n",
            "x".repeat(5 * 1024 * 1024)
        ),
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    let summary = &r.stdout[r.stdout.find("\nApply:").unwrap()..];
    cfgctl_snapshot!(summary);
    assert_eq!(
        t.read(Kind::named("Team"), Some("t")).await.status,
        200,
        "independent actions still run"
    );
    assert_eq!(t.read(Kind::named("Monitor"), Some("m")).await.status, 404);
    assert!(
        r.stderr
            .contains("skipped create Monitor/m: Bucket/big failed"),
        "{}",
        r.stderr
    );
}

/// How many requests of a method the emulator has seen.
fn requests(t: &Tenant, method: &str) -> usize {
    t.emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method == method)
        .count()
}

#[tokio::test]
async fn force_delete_only_with_the_flag() {
    let t = Tenant::full().await;
    t.create(Kind::named("Bucket"), json!({"slug": "old", "name": "Old"}))
        .await;
    t.create(
        Kind::named("Monitor"),
        json!({"slug": "m", "name": "M", "bucket_slug": "old"}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", "prune: [\"Bucket/*\"]\n");
    write(
        dir.path(),
        "bucket.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: keep, name: Keep}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("delete Bucket/old: 400 Bucket \"old\" is in use: referenced by Monitor/m (code 3, request id "),
        "{}",
        r.stdout
    );
    let deletes: Vec<String> = t
        .emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method == "DELETE")
        .map(|l| format!("{}?{}", l.path, l.query))
        .collect();
    assert_eq!(deletes, vec!["/api/v1/config/buckets/old?"]);
    // The cascade would take an unmanaged monitor outside the prune scope: refused, and the
    // plan shows what the cascade takes.
    let args = [
        "apply",
        ".",
        "--prune",
        "--auto-approve",
        "--force-delete-buckets",
    ];
    let r = Cfgctl::new(&t).dir(dir.path()).args(&args).run().await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "# with --force-delete-buckets the delete also takes 1 resource:\n      #   Monitor/m (unmanaged, outside the prune scope; apply refuses this)"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("--force-delete-buckets would make the delete of Bucket/old take Monitor/m (unmanaged, outside the prune scope) with it; nothing was changed"),
        "{}",
        r.stderr
    );
    assert_eq!(requests(&t, "DELETE"), 1, "nothing more was deleted");
    // Excluded: refused as well.
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Bucket/*\", \"Monitor/*\"]\nexclude: [\"Monitor/m\"]\n",
    );
    let r = Cfgctl::new(&t).dir(dir.path()).args(&args).run().await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("take Monitor/m (excluded in cfgctl.yaml) with it"),
        "{}",
        r.stderr
    );
    assert_eq!(requests(&t, "DELETE"), 1, "nothing more was deleted");
    // Inside the prune scope, the cascade may take it.
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Bucket/*\", \"Monitor/*\"]\n",
    );
    let mut only = args.to_vec();
    only.extend(["--only", "Bucket/*"]);
    let r = Cfgctl::new(&t).dir(dir.path()).args(&only).run().await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let last = t
        .emulator
        .stats()
        .log
        .into_iter()
        .rev()
        .find(|l| l.method == "DELETE")
        .unwrap();
    assert_eq!(last.query, "force_delete=true");
    assert_eq!(
        t.read(Kind::named("Monitor"), Some("m")).await.status,
        404,
        "cascaded"
    );
}

#[tokio::test]
async fn saved_plans_apply_exactly_or_refuse_when_stale() {
    let t = Tenant::full().await;
    t.create(
        Kind::named("Team"),
        json!({"slug": "platform", "name": "Old name"}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let planfile = dir.path().join("plan.json");
    let pf = planfile.to_str().unwrap();
    let r = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--out", pf])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());

    // Stale: the team changed after the plan.
    t.update(
        Kind::named("Team"),
        Some("platform"),
        json!({"name": "Changed by hand"}),
    )
    .await;
    t.emulator.reset_stats();
    let stale = Cfgctl::new(&t)
        .args(&["apply", pf, "--auto-approve"])
        .run()
        .await;
    assert_eq!(stale.code, 1, "{}", stale.transcript());
    assert!(
        stale
            .stderr
            .contains("Team/platform has changed since the plan"),
        "{}",
        stale.stderr
    );
    assert!(
        stale.stderr.contains(
            "the saved plan is stale (1 resource changed since it was made): nothing was changed"
        ),
        "{}",
        stale.stderr
    );
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing changed"
    );

    // Fresh plan, applied from the file with no manifests at hand.
    let r = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--out", pf])
        .run()
        .await;
    assert_eq!(r.code, 0);
    // Written compact; read the same pretty-printed with every key sorted (as `jq -S .`
    // leaves it): `changes` then come before `format_version` and `guards` before `summary`.
    let written = std::fs::read_to_string(&planfile).unwrap();
    assert_eq!(written.lines().count(), 1, "{written}");
    let sorted = sort_keys(serde_json::from_str(&written).unwrap());
    std::fs::write(&planfile, serde_json::to_string_pretty(&sorted).unwrap()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let applied = Cfgctl::new(&t)
        .dir(elsewhere.path())
        .args(&["apply", pf, "--auto-approve"])
        .run()
        .await;
    assert_eq!(applied.code, 0, "{}", applied.transcript());
    assert!(
        applied.stdout.contains("Apply: 26 done"),
        "{}",
        applied.stdout
    );
    let after = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(after.code, 0, "{}", after.transcript());
    // A plan for another target is refused.
    let other = Tenant::full().await;
    let wrong = Cfgctl::new(&other)
        .args(&["apply", pf, "--auto-approve"])
        .run()
        .await;
    assert_eq!(wrong.code, 1);
    assert!(
        wrong.stderr.contains("was made for [TARGET]")
            || wrong.stderr.contains("was made for http://"),
        "{}",
        wrong.stderr
    );
}

#[tokio::test]
async fn a_flaky_target_converges_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tenant.db");
    let flaky = Tenant::start(Config {
        data: Some(data.clone()),
        // `lost` runs the operation and drops its response: a retried POST meets a 409.
        faults: Faults::parse("500:0.2,429:0.1,reset:0.05,lost:0.05,seed:11").unwrap(),
        ..Config::default()
    })
    .await;
    let mut runs = Vec::new();
    for _ in 0..3 {
        let r = Cfgctl::new(&flaky)
            .args(&[
                "apply",
                "fixtures/valid",
                "--auto-approve",
                "--max-retries",
                "8",
            ])
            .run()
            .await;
        let code = r.code;
        runs.push(r);
        if code == 0 {
            break;
        }
    }
    let last = runs.last().unwrap();
    assert_eq!(
        last.code,
        0,
        "no convergence in {} applies: {}",
        runs.len(),
        last.transcript()
    );
    flaky.emulator.stop().await;
    // Read back without faults: the store equals the manifests, nothing twice.
    let clean = Tenant::start(Config {
        data: Some(data),
        ..Config::default()
    })
    .await;
    let everything = everything(&clean).await;
    assert_eq!(
        everything.len(),
        25,
        "{:?}",
        everything.keys().collect::<Vec<_>>()
    );
    let plan = Cfgctl::new(&clean)
        .args(&["plan", "fixtures/valid", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(plan.code, 0, "{}", plan.transcript());
}

#[test]
fn quickstart_apply_twice_on_the_local_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("local.db");
    let local = format!("--local={}", db.display());
    let first = Cfgctl::bare()
        .args(&["apply", &local, "examples/quickstart", "--auto-approve"])
        .run_blocking();
    assert_eq!(first.code, 0, "{}", first.transcript());
    assert!(first.stdout.contains("Apply: 5 done"), "{}", first.stdout);
    let second = Cfgctl::bare()
        .args(&["apply", &local, "examples/quickstart", "--auto-approve"])
        .run_blocking();
    assert_eq!(second.code, 0);
    assert!(
        second
            .stdout
            .contains("No changes: the target matches the manifests (5 resources)."),
        "{}",
        second.stdout
    );
    assert!(second.stdout.contains("Nothing to apply."));
}

#[tokio::test]
async fn unsupported_actions_are_never_attempted_and_fail_the_run() {
    let t = Tenant::start(Config {
        profile: cfgctl::api::registry::Profile::Seed,
        ..Config::default()
    })
    .await;
    let r = Cfgctl::new(&t)
        .args(&["apply", "fixtures/valid", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    let summary = &r.stdout[r.stdout.find("\nApply:").unwrap()..];
    cfgctl_snapshot!(summary);
    let log = t.emulator.stats().log;
    for l in log.iter().filter(|l| l.method != "GET") {
        assert_ne!(
            l.status, 404,
            "an operation outside the profile was attempted: {l:?}"
        );
    }
    // The budget was upserted; the rest that the seed tenant offers was created.
    assert!(log
        .iter()
        .any(|l| l.method == "PUT" && l.path.ends_with("/consumption-budgets/payments-logs")));
}

/// Issue 9.1: a saved plan goes through the very same delete guards as `apply DIR`.
#[tokio::test]
async fn a_saved_plan_cannot_skip_the_delete_guards() {
    let t = Tenant::full().await;
    for i in 0..30 {
        t.create(
            Kind::named("Team"),
            json!({"slug": format!("team-{i:02}"), "name": format!("Team {i}")}),
        )
        .await;
    }
    t.create(Kind::named("Bucket"), json!({"slug": "b", "name": "B"}))
        .await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Team/*\", \"Bucket/*\"]\nmax_deletes: 5\n",
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: team-00, name: Team 0}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains("more than max_deletes (5)"),
        "{}",
        r.stdout
    );
    t.emulator.reset_stats();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    // One reason a line, not one long line.
    assert!(
        r.stderr.contains(
            "  - the plan deletes 30 resources, more than max_deletes (5) of cfgctl.yaml\n  \
             - the prune scope deletes all 1 Bucket resource(s) while no manifest declares any \
             Bucket: an empty directory or a wrong path? (apply needs --allow-empty-prune)\n\
             error: refusing to apply (2 reasons above); nothing was changed\n"
        ),
        "{}",
        r.stderr
    );
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing changed"
    );
    // The staleness check read the touched kinds through their lists, not one GET each.
    let mut reads: Vec<String> = t
        .emulator
        .stats()
        .log
        .iter()
        .map(|l| l.path.clone())
        .filter(|p| !p.ends_with("swagger.json"))
        .collect();
    // The kinds are read side by side: in any order.
    reads.sort();
    assert_eq!(
        reads,
        vec!["/api/v1/config/buckets", "/api/v1/config/teams"],
        "one list request per touched kind"
    );

    // Raising max_deletes in the file by hand is no way past the empty-prune guard, and
    // `--allow-empty-prune` does not lift max_deletes.
    let text = std::fs::read_to_string(dir.path().join("p.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["guards"]["max_deletes"] = json!(100);
    std::fs::write(dir.path().join("p.json"), doc.to_string()).unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains("no manifest declares any Bucket"),
        "{}",
        r.stderr
    );
    assert_eq!(requests(&t, "DELETE"), 0);

    // A delete whose fingerprint was removed is refused as a whole file.
    doc["changes"][0]["step"]["fingerprint"] = Value::Null;
    std::fs::write(dir.path().join("p.json"), doc.to_string()).unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("without the fingerprint of what it deletes"),
        "{}",
        r.stderr
    );
    assert_eq!(requests(&t, "DELETE"), 0);
    assert_eq!(t.read(Kind::named("Bucket"), Some("b")).await.status, 200);
    assert_eq!(
        t.read(Kind::named("Team"), Some("team-29")).await.status,
        200
    );
}

/// Issue 9.6: a saved-plan delete of something outside the plan's prune scope, or with a
/// null fingerprint, is refused: an unmanaged bucket cannot be deleted that way.
#[tokio::test]
async fn a_hand_made_delete_in_a_saved_plan_is_refused() {
    let t = Tenant::full().await;
    t.create(Kind::named("Team"), json!({"slug": "t", "name": "T"}))
        .await;
    t.create(
        Kind::named("Bucket"),
        json!({"slug": "unmanaged", "name": "U"}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: t, name: Renamed}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let text = std::fs::read_to_string(dir.path().join("p.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let mut delete = doc["changes"][0].clone();
    delete["address"] = json!("Bucket/unmanaged");
    delete["kind"] = json!("Bucket");
    delete["slug"] = json!("unmanaged");
    delete["action"] = json!("delete");
    delete["fields"] = json!([]);
    delete["step"]["body"] = Value::Null;
    delete["step"]["fingerprint"] = Value::Null;
    doc["changes"].as_array_mut().unwrap().push(delete.clone());
    std::fs::write(dir.path().join("p.json"), doc.to_string()).unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("changes[1] (Bucket/unmanaged): a delete without the fingerprint"),
        "{}",
        r.stderr
    );
    // With a made-up fingerprint: outside the saved prune scope.
    let last = doc["changes"].as_array().unwrap().len() - 1;
    doc["changes"][last]["step"]["fingerprint"] = json!("0".repeat(32));
    std::fs::write(dir.path().join("p.json"), doc.to_string()).unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains("outside the saved prune scope"),
        "{}",
        r.stderr
    );
    // An unknown field anywhere refuses the whole file.
    doc["changes"].as_array_mut().unwrap().pop();
    doc["changes"][0]["step"]["force"] = json!(true);
    std::fs::write(dir.path().join("p.json"), doc.to_string()).unwrap();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(r.stderr.contains("unknown field `force`"), "{}", r.stderr);
    assert_eq!(requests(&t, "DELETE") + requests(&t, "PUT"), 0);
    assert_eq!(
        t.read(Kind::named("Bucket"), Some("unmanaged"))
            .await
            .status,
        200
    );
}

/// With `--auto-approve` the plan's text is written while the first creates run; in a log
/// that merges stdout and stderr (a CI job's) it still comes first, every progress line after
/// it, and the summary last.
#[tokio::test]
async fn the_plan_comes_before_the_progress_in_a_merged_log() {
    let t = Tenant::full().await;
    let dir = tempfile::tempdir().unwrap();
    // Enough text that it is still being written when the first creates end.
    let description: String = (0..60)
        .map(|l| format!("    line {l} of the description\n"))
        .collect();
    let teams: String = (0..300)
        .map(|i| {
            format!(
                "---\napi_version: v1/config\nkind: Team\nspec:\n  slug: team-{i:03}\n  name: Team {i}\n  description: |\n{description}"
            )
        })
        .collect();
    std::fs::write(dir.path().join("teams.yaml"), teams).unwrap();
    let log = dir.path().join("merged.log");
    let url = t.emulator.url();
    let status = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::create(&log).unwrap();
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_cfgctl"))
            .args([
                "--url",
                &url,
                "--parallelism",
                "16",
                "--no-cache",
                "apply",
                ".",
            ])
            .arg("--auto-approve")
            .current_dir(log.parent().unwrap())
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .status()
            .unwrap();
        (status, std::fs::read_to_string(&log).unwrap())
    })
    .await
    .unwrap();
    let (status, text) = status;
    assert!(status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let plan_line = lines
        .iter()
        .position(|l| l.starts_with("Plan: 300 to create"))
        .expect("the plan's summary line");
    let progress: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("created Team/"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(progress.len(), 300, "{text}");
    assert!(progress.iter().all(|&i| i > plan_line), "{text}");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("Apply: 300 done")),
        "{text}"
    );
}

/// Every object's keys in sorted order, at every depth.
fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// `--rotate-secrets` takes an optional pattern: a path after it is refused as no pattern, never
/// taken for one while the current directory is applied (red team E8).
#[test]
fn a_path_after_rotate_secrets_is_refused_not_taken_for_its_pattern() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: checkout\n  name: Checkout\n",
    );
    let db = dir.path().join("local.db");
    let local = format!("--local={}", db.display());
    for path in ["/tmp/rt-e8/abs.plan", "./a"] {
        let r = Cfgctl::bare()
            .dir(dir.path())
            .args(&["apply", "--auto-approve", &local, "--rotate-secrets", path])
            .run_blocking();
        assert_eq!(r.code, 1, "{path}: {}", r.transcript());
        assert!(
            r.stderr
                .contains(&format!("`{path}` is not a KIND/SLUG-GLOB pattern")),
            "{path}: {}",
            r.stderr
        );
        assert!(!r.stdout.contains("Apply:"), "{path}: {}", r.stdout);
    }
}

/// A saved plan is applied whole: `--only` and `--prune`, which decide what a plan of a
/// directory holds, are refused with it (red team E9: accepted, and the whole plan applied).
#[tokio::test]
async fn options_that_make_a_plan_are_refused_with_a_saved_plan() {
    let t = seeded(Config::default()).await;
    let dir = scratch_copy();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--out", "p.json"])
        .run()
        .await;
    assert!(matches!(r.code, 0 | 2), "{}", r.transcript());
    for (flag, said) in [
        (
            &["--only", "Team/*"][..],
            "--only chooses what a plan of a directory holds",
        ),
        (
            &["--prune"][..],
            "--prune decides a plan's deletes when it is made",
        ),
    ] {
        let mut args = vec!["apply", "p.json", "--auto-approve"];
        args.extend_from_slice(flag);
        let r = Cfgctl::new(&t).dir(dir.path()).args(&args).run().await;
        assert_eq!(r.code, 1, "{flag:?}: {}", r.transcript());
        assert!(r.stderr.contains(said), "{flag:?}: {}", r.stderr);
        assert!(r.stderr.contains("nothing was changed"), "{}", r.stderr);
    }
}

/// `apply` of a path that does not exist says it is neither plan nor directory (red team E18:
/// "directory `../x.plan` does not exist").
#[test]
fn apply_of_a_missing_path_names_both_things_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["apply", "--auto-approve", "--local", "missing.plan"])
        .run_blocking();
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains("missing.plan does not exist: apply takes a saved plan (plan --out FILE) or a directory of manifests; nothing was changed"),
        "{}",
        r.stderr
    );
}
