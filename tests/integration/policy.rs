//! Policy as code (docs/policy.md): the example rules of `examples/policy` and their tests,
//! each rule firing on a repository that breaks it and not on one that keeps it, a deny that
//! stops `apply` before any write, warnings that do not fail, and a broken policy reported
//! at its place.

use std::path::Path;

use cfgctl::api::registry::Kind;
use serde_json::json;

use crate::support::{cfgctl_snapshot, copy_dir, root, write, Cfgctl, Tenant};

/// A repository that keeps every example rule: the quickstart, each resource labelled with
/// its team, the monitor routed, the dashboard in its collection.
fn clean_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/quickstart"), dir.path());
    copy_dir(
        &root().join("examples/policy/rules"),
        &dir.path().join("rules"),
    );
    write(
        dir.path(),
        "cfgctl.yaml",
        "prune: [\"Collection/*\"]\npolicy: rules\n",
    );
    let labelled = |file: &str, after: &str, add: &str| {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(text.contains(after), "{file} holds {after:?}");
        write(
            dir.path(),
            file,
            &text.replacen(after, &format!("{after}{add}"), 1),
        );
    };
    labelled(
        "dashboard.yaml",
        "  collection_slug: checkout\n",
        "  labels:\n    team: checkout\n",
    );
    labelled(
        "monitor.yaml",
        "  collection_slug: checkout\n",
        "  notification_policy_slug: checkout-oncall\n  labels:\n    team: checkout\n",
    );
    write(
        dir.path(),
        "notification-policy.yaml",
        "api_version: v1/config\nkind: NotificationPolicy\nspec:\n  slug: checkout-oncall\n  name: Checkout on-call\n  team_slug: checkout\n",
    );
    dir
}

/// The clean repository with one manifest per manifest rule that breaks it.
fn violating_repository() -> tempfile::TempDir {
    let dir = clean_repository();
    write(
        dir.path(),
        "violations.yaml",
        "api_version: v1/config\nkind: Monitor\nspec:\n  slug: unrouted\n  name: Unrouted\n  \
         collection_slug: checkout\n  labels: {team: checkout}\n  interval_secs: 60\n  \
         prometheus_query: up == 0\n  series_conditions:\n    defaults:\n      critical:\n        \
         conditions:\n          - {op: GT, value: 0}\n\
         ---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: ownerless\n  name: Ownerless\n  \
         labels: {env: prod}\n\
         ---\napi_version: v1/config\nkind: Dashboard\nspec:\n  slug: homeless\n  name: Homeless\n  \
         labels: {team: checkout}\n  dashboard_json: {kind: Dashboard, metadata: {name: homeless}, spec: {}}\n",
    );
    dir
}

fn validate(dir: &Path) -> crate::support::Run {
    Cfgctl::bare()
        .dir(dir)
        .args(&["validate", "."])
        .run_blocking()
}

#[test]
fn the_examples_own_tests_pass() {
    let r = Cfgctl::bare()
        .args(&["test-policy", "examples/policy"])
        .run_blocking();
    assert_eq!(r.code, 0, "{}", r.transcript());
    cfgctl_snapshot!(r.transcript());
}

#[test]
fn a_failing_test_fails_the_run_and_is_named() {
    let dir = clean_repository();
    write(
        dir.path(),
        "rules/broken_test.rego",
        "package main\n\ntest_a_routed_monitor_is_denied if {\n\tcount(deny) == 1 with input as \
         {\"kind\": \"Monitor\", \"spec\": {\"notification_policy_slug\": \"a\", \"labels\": {\"team\": \"a\"}}}\n}\n",
    );
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["test-policy"])
        .run_blocking();
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "FAIL data.main.test_a_routed_monitor_is_denied (rules/broken_test.rego:3)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("13 passed, 1 failed"), "{}", r.stdout);
}

#[test]
fn the_manifest_rules_pass_a_clean_repository_and_fire_at_each_violation() {
    let clean = clean_repository();
    let r = validate(clean.path());
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(!r.stdout.contains("main.deny"), "{}", r.stdout);

    let dir = violating_repository();
    let r = validate(dir.path());
    assert_eq!(r.code, 1, "{}", r.transcript());
    for expected in [
        "violations.yaml:1:1: error: Monitor/unrouted: every Monitor is routed to a notification policy",
        "violations.yaml:16:1: error: Bucket/ownerless: no `team` label",
        "violations.yaml:23:1: error: Dashboard/homeless: no collection",
    ] {
        assert!(r.stdout.contains(expected), "{expected}\n{}", r.stdout);
    }
    cfgctl_snapshot!(r.transcript());

    // In CI, each is also a GitHub annotation at its file and line.
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .env("GITHUB_ACTIONS", "true")
        .run_blocking();
    assert!(
        r.stdout.contains(
            "::error file=violations.yaml,line=16,col=1::Bucket/ownerless: no `team` label"
        ),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_stops_apply_before_anything_is_sent() {
    let t = Tenant::full().await;
    let dir = violating_repository();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("violations.yaml:16:1: error: Bucket/ownerless: no `team` label"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("error: the policy fails with 3 errors: nothing was changed"),
        "{}",
        r.stderr
    );
    let log = t.emulator.stats().log;
    assert!(!log.is_empty(), "the target was read");
    assert!(
        log.iter().all(|l| l.method == "GET"),
        "nothing sent: {log:?}"
    );

    // The clean repository applies.
    let clean = clean_repository();
    let r = Cfgctl::new(&t)
        .dir(clean.path())
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_rule_denies_the_delete_of_a_collection() {
    let t = Tenant::full().await;
    let legacy = t
        .create(
            Kind::from_name("Collection").unwrap(),
            json!({"slug": "legacy", "name": "Legacy"}),
        )
        .await;
    assert_eq!(legacy.status, 200, "{legacy:?}");
    let dir = clean_repository();
    // Without --prune, nothing is deleted: the plan passes.
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", "."])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(!r.stderr.contains("cfgctl.plan.deny"), "{}", r.stderr);

    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "plan.json"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains("- Collection/legacy"),
        "the plan is shown: {}",
        r.stdout
    );
    // No manifest declares it: the message is put at `policy:` in cfgctl.yaml.
    assert!(
        r.stderr.contains(
            "cfgctl.yaml:2:9: error: Collection/legacy: a plan never deletes a Collection"
        ),
        "{}",
        r.stderr
    );
    assert!(
        !dir.path().join("plan.json").exists(),
        "a denied plan is not saved"
    );
    cfgctl_snapshot!(r.stderr);

    t.emulator.reset_stats();
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(t.emulator.stats().log.iter().all(|l| l.method == "GET"));
    let kept = t
        .read(Kind::from_name("Collection").unwrap(), Some("legacy"))
        .await;
    assert_eq!(kept.status, 200, "{kept:?}");
}

#[test]
fn a_warning_is_shown_and_does_not_fail() {
    let dir = clean_repository();
    write(
        dir.path(),
        "rules/runbooks.rego",
        "package main\n\nwarn contains \"no runbook annotation\" if {\n\tinput.kind == \"Monitor\"\n\tnot input.spec.annotations.runbook\n}\n",
    );
    let r = validate(dir.path());
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "monitor.yaml:2:1: warning: Monitor/checkout-error-ratio: no runbook annotation [main.warn]"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("0 errors, 1 warning"), "{}", r.stdout);
}

#[test]
fn bad_rego_is_a_located_error_not_a_panic() {
    let dir = clean_repository();
    write(
        dir.path(),
        "rules/broken.rego",
        "package main\n\ndeny contains msg if {\n\tmsg := \n}\n",
    );
    for args in [&["validate", "."][..], &["test-policy", "."][..]] {
        let r = Cfgctl::bare().dir(dir.path()).args(args).run_blocking();
        r.assert_clean_exit();
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.transcript()
                .contains("rules/broken.rego:4:9: error: policy: expecting `}`"),
            "{}",
            r.transcript()
        );
    }
    let r = validate(dir.path());
    cfgctl_snapshot!(r.transcript());
}

#[test]
fn the_policy_setting_is_checked_where_it_is_written() {
    let dir = clean_repository();
    for (setting, expected) in [
        (
            "policy: missing\n",
            "cfgctl.yaml:1:9: error: policy: the policy directory `missing` does not exist",
        ),
        (
            "policy: [rules]\n",
            "cfgctl.yaml:1:9: error: invalid settings file: `policy` must name a directory of Rego files inside the repository",
        ),
        (
            "policy: ../rules\n",
            "cfgctl.yaml:1:9: error: invalid settings file: `policy` must name a directory of Rego files inside the repository",
        ),
    ] {
        write(dir.path(), "cfgctl.yaml", setting);
        let r = validate(dir.path());
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(r.stdout.contains(expected), "{expected}\n{}", r.transcript());
    }
}

#[test]
fn a_rego_v0_rule_is_read_as_conftest_wrote_it() {
    let dir = clean_repository();
    write(
        dir.path(),
        "rules/legacy.rego",
        "package main\n\ndeny[msg] {\n\tinput.kind == \"Team\"\n\tmsg := sprintf(\"%s: teams are managed elsewhere\", [input.spec.slug])\n}\n",
    );
    let r = validate(dir.path());
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "team.yaml:2:1: error: Team/checkout: checkout: teams are managed elsewhere [main.deny]"
        ),
        "{}",
        r.stdout
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_policy_directory_is_refused_where_it_is_named() {
    let outside = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/policy/rules"), outside.path());
    let dir = clean_repository();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
    write(dir.path(), "cfgctl.yaml", "policy: linked\n");
    let r = validate(dir.path());
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "cfgctl.yaml:1:9: error: policy: `linked` is a symlink, and cfgctl follows none"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn test_policy_needs_a_policy_and_a_test() {
    let dir = clean_repository();
    write(dir.path(), "cfgctl.yaml", "max_deletes: 3\n");
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["test-policy"])
        .run_blocking();
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("`cfgctl.yaml` names no policy directory (`policy: DIR`)"),
        "{}",
        r.stderr
    );
    write(dir.path(), "cfgctl.yaml", "policy: rules\n");
    for test in ["monitors", "labels", "dashboards", "collections"] {
        std::fs::remove_file(dir.path().join(format!("rules/{test}_test.rego"))).unwrap();
    }
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["test-policy"])
        .run_blocking();
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("the policy directory holds no `test_` rule"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_rule_that_fails_to_evaluate_is_located_and_a_builtin_error_is_undefined() {
    let dir = clean_repository();
    write(
        dir.path(),
        "rules/conflict.rego",
        "package main\n\nowner := input.spec.slug\n\nowner := input.kind\n\nwarn contains owner if input.kind == \"Team\"\n",
    );
    let r = validate(dir.path());
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stdout.contains(
            "rules/conflict.rego:5:1: error: policy: rule conflicts with rule at rules/conflict.rego:3:1"
        ),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(": warning:"), "{}", r.stdout);
    write(
        dir.path(),
        "rules/conflict.rego",
        "package main\n\nwarn contains \"never\" if to_number(\"abc\") == 1\n",
    );
    let r = validate(dir.path());
    assert_eq!(r.code, 0, "{}", r.transcript());
}

/// Two environments whose prod overlay declares what the policy denies there: every
/// environment's plan and apply runs the policy with its own manifests (`environment` in each
/// input), and a deny in one refuses that one only.
fn two_environments(staging: &Tenant, prod: &Tenant) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        &format!(
            "policy: rules\nenvironments:\n  staging:\n    url: {}\n    overlay: envs/staging\n  \
             prod:\n    url: {}\n    overlay: envs/prod\n",
            staging.emulator.url(),
            prod.emulator.url()
        ),
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: platform, name: Platform}\n",
    );
    write(dir.path(), "envs/staging/.keep", "");
    write(
        dir.path(),
        "envs/prod/scratch.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: scratch, name: Scratch}\n",
    );
    write(
        dir.path(),
        "rules/prod.rego",
        "package main\n\ndeny contains \"no scratch team in prod\" if {\n\tinput.environment == \"prod\"\n\
         \tinput.address == \"Team/scratch\"\n}\n",
    );
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_in_one_environment_fails_its_plan_and_stops_its_apply_only() {
    let (staging, prod) = (Tenant::full().await, Tenant::full().await);
    let dir = two_environments(&staging, &prod);
    let denied = "[prod] envs/prod/scratch.yaml:1:1: error: Team/scratch: no scratch team in prod";
    for format in ["text", "json", "markdown"] {
        let r = Cfgctl::bare()
            .dir(dir.path())
            .args(&["plan", ".", "--all-envs", "--format", format])
            .run()
            .await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(r.stderr.contains(denied), "{}", r.stderr);
        assert!(!r.stderr.contains("[staging]"), "{}", r.stderr);
        assert!(
            r.stdout.contains("Team/scratch"),
            "the report is shown: {}",
            r.stdout
        );
        assert!(
            r.stderr
                .contains("error: the policy fails in prod: 1 error"),
            "{}",
            r.stderr
        );
        // The deny is part of prod's plan in the report too.
        let shown = match format {
            "text" => "policy deny: no scratch team in prod [main.deny]",
            "json" => "\"message\": \"no scratch team in prod\"",
            _ => "⛔ **deny** <code>Team/scratch</code>: no scratch team in prod",
        };
        assert!(r.stdout.contains(shown), "{format}: {}", r.stdout);
    }
    // The same one environment asked for alone.
    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["plan", ".", "--env", "prod"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("envs/prod/scratch.yaml:1:1: error: Team/scratch: no scratch team in prod"),
        "{}",
        r.stderr
    );

    let r = Cfgctl::bare()
        .dir(dir.path())
        .args(&["apply", ".", "--all-envs", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(r.stderr.contains(denied), "{}", r.stderr);
    assert!(
        r.stdout
            .ends_with("Environments: succeeded: staging; failed: prod (nothing applied)\n"),
        "{}",
        r.transcript()
    );
    assert!(
        prod.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing sent to prod"
    );
    let team = Kind::from_name("Team").unwrap();
    assert_eq!(staging.read(team, Some("platform")).await.status, 200);
    assert_eq!(prod.read(team, Some("platform")).await.status, 404);
}

/// R4-3: a policy is bounded. A pull request may change the policy, so one that would grow
/// without end (`numbers.range` of three billion numbers) or loop for ever (a three-deep
/// `some` over 3,000 numbers: 27 billion steps) stops at its budget as a located policy
/// error; validate, plan and apply do not hang.
#[test]
fn a_policy_without_end_stops_at_its_budget_where_it_is_written() {
    let dir = clean_repository();
    for (rego, expected) in [
        (
            "package main\n\ndeny contains \"huge\" if count(numbers.range(1, 3000000000)) > 0\n",
            "rules/unbounded.rego:3:44: error: policy: `numbers.range` of 3000000000 numbers \
             passes the policy's evaluation budget",
        ),
        (
            "package main\n\ndeny contains \"never\" if {\n\tsome a in numbers.range(1, 3000)\n\
             \tsome b in numbers.range(1, 3000)\n\tsome c in numbers.range(1, 3000)\n\
             \ta + b + c < 0\n}\n",
            "rules/unbounded.rego:3:1: error: policy: `deny` passes the policy's evaluation budget",
        ),
    ] {
        write(dir.path(), "rules/unbounded.rego", rego);
        let r = validate(dir.path());
        r.assert_clean_exit();
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.stdout.contains(expected),
            "{expected}\n{}",
            r.transcript()
        );
        // plan and apply run the same rules: they stop the same way, nothing applied.
        let local = format!("--local={}", dir.path().join("local.db").display());
        for args in [&["plan", "."][..], &["apply", ".", "--auto-approve"][..]] {
            let r = Cfgctl::bare()
                .dir(dir.path())
                .args(args)
                .arg(&local)
                .run_blocking();
            r.assert_clean_exit();
            assert_eq!(r.code, 1, "{}", r.transcript());
            assert!(
                r.stderr.contains(expected),
                "{expected}\n{}",
                r.transcript()
            );
            assert!(!r.stdout.contains("Apply:"), "{}", r.transcript());
        }
    }
}
