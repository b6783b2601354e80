//! `plan`, `apply` and `drift` over environments (docs/environments.md): two emulators as
//! staging and prod, one repository (a base and an overlay per environment).

use serde_json::{json, Value};

use crate::support::files::write;
use crate::support::snapshot::cfgctl_snapshot;
use crate::support::{Cfgctl, Run, Tenant};

const STAGING_TOKEN: &str = "stg-token-5e1f9a77c0";
const PROD_TOKEN: &str = "prod-token-0b8c2d44e9";

/// Two tenants that want their tokens.
async fn tenants() -> (Tenant, Tenant) {
    let with = |token: &str| cfgctl::emulator::Config {
        token: Some(token.to_string()),
        ..cfgctl::emulator::Config::default()
    };
    (
        Tenant::start(with(STAGING_TOKEN)).await,
        Tenant::start(with(PROD_TOKEN)).await,
    )
}

fn settings(staging: &str, prod: &str, prod_threshold: u32) -> String {
    format!(
        "\
environments:
  staging:
    url: {staging}
    token_env: STAGING_TOKEN
    vars: {{threshold: 50000}}
    overlay: envs/staging
  prod:
    url: {prod}
    token_env: PROD_TOKEN
    vars: {{threshold: {prod_threshold}}}
    overlay: envs/prod
"
    )
}

const BASE: &str = "\
api_version: v1/config
kind: DropRule
spec:
  slug: drop-debug-series
  name: Drop debug series
  mode: ENABLED
  filters:
    - {name: __name__, value_glob: \"debug_*\"}
  conditional_rate_based_drop:
    enabled: true
    rate_limit_threshold: ${var:threshold}
    activated_drop_duration_secs: 600
---
api_version: v1/config
kind: Team
spec: {slug: platform, name: Platform}
";

/// The repository: a base, a patch per environment.
fn repo(staging: &Tenant, prod: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        &settings(&staging.emulator.url(), prod, 50000),
    );
    write(dir.path(), "base.yaml", BASE);
    let patch = |name: &str| {
        format!("api_version: v1/config\nkind: Team\nspec: {{slug: platform, name: \"Platform ({name})\"}}\n")
    };
    write(dir.path(), "envs/staging/team.yaml", &patch("staging"));
    write(dir.path(), "envs/prod/team.yaml", &patch("prod"));
    dir
}

fn run_in(dir: &std::path::Path, args: &[&str]) -> Cfgctl {
    Cfgctl::bare()
        .dir(dir)
        .args(args)
        .env("STAGING_TOKEN", STAGING_TOKEN)
        .env("PROD_TOKEN", PROD_TOKEN)
}

/// Neither token appears in anything printed.
fn assert_no_token(run: &Run) {
    for token in [STAGING_TOKEN, PROD_TOKEN] {
        assert!(
            !run.stdout.contains(token) && !run.stderr.contains(token),
            "{}",
            run.transcript()
        );
    }
}

/// `(action, address, fields)` of an environment's JSON plan.
fn changes(plan: &Value) -> Vec<Value> {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!([c["action"], c["address"], c["fields"]]))
        .collect()
}

#[tokio::test]
async fn base_and_overlays_plan_apply_and_converge_in_two_tenants() {
    let (staging, prod) = tenants().await;
    let dir = repo(&staging, &prod.emulator.url());
    let d = dir.path();
    let run = run_in(d, &["apply", ".", "--all-envs", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_no_token(&run);
    assert!(
        run.stdout
            .ends_with("\nEnvironments: succeeded: prod, staging; failed: none\n"),
        "{}",
        run.transcript()
    );
    // A create in staging only (its overlay), a different threshold in prod only (its vars).
    write(
        d,
        "envs/staging/scratch.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: scratch, name: Scratch}\n",
    );
    write(
        d,
        "cfgctl.yaml",
        &settings(&staging.emulator.url(), &prod.emulator.url(), 60000),
    );
    let run = run_in(d, &["plan", ".", "--all-envs", "--format", "json"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_no_token(&run);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["format_version"], 1);
    assert_eq!(
        changes(&report["environments"]["staging"]),
        [json!([
            "create",
            "Team/scratch",
            [{"path": "slug", "before": null, "after": "scratch"}, {"path": "name", "before": null, "after": "Scratch"}]
        ])]
    );
    assert_eq!(
        changes(&report["environments"]["prod"]),
        [json!([
            "update",
            "DropRule/drop-debug-series",
            [{"path": "conditional_rate_based_drop.rate_limit_threshold", "before": 50000, "after": 60000}]
        ])]
    );
    let run = run_in(d, &["plan", ".", "--all-envs", "--format", "markdown"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    cfgctl_snapshot!("environments_markdown_plan", run.stdout);
    let run = run_in(d, &["apply", ".", "--all-envs", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_no_token(&run);
    for (env, line) in [
        ("staging", "[staging] created Team/scratch"),
        ("prod", "[prod] updated DropRule/drop-debug-series"),
    ] {
        assert!(run.stderr.contains(line), "{env}: {}", run.transcript());
    }
    let run = run_in(d, &["plan", ".", "--all-envs", "--detailed-exitcode"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let run = run_in(d, &["drift", ".", "--all-envs"]).run().await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_no_token(&run);
}

/// A port nothing listens on.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn one_tenant_down_is_its_section_and_the_other_is_planned() {
    let (staging, _prod) = tenants().await;
    let down = closed_port();
    let dir = repo(&staging, &down);
    let run = run_in(
        dir.path(),
        &[
            "--max-retries",
            "0",
            "plan",
            ".",
            "--all-envs",
            "--format",
            "json",
        ],
    )
    .run()
    .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_no_token(&run);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let prod = &report["environments"]["prod"];
    assert_eq!(prod["stage"], "connecting", "{prod}");
    assert_eq!(prod["target"], down.as_str());
    let error = prod["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("reading the current state of {down}")),
        "{error}"
    );
    assert_eq!(report["environments"]["staging"]["summary"]["create"], 2);
    // The text report names it too, in the table and in its section.
    let run = run_in(
        dir.path(),
        &["--max-retries", "0", "plan", ".", "--all-envs"],
    )
    .run()
    .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stdout.contains("failed while connecting"),
        "{}",
        run.stdout
    );
    // A token variable that is not set: that environment's failure, named.
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["plan", ".", "--all-envs", "--format", "json"])
        .env("STAGING_TOKEN", STAGING_TOKEN)
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["environments"]["prod"]["error"],
        "the variable `PROD_TOKEN` (token_env of the environment `prod`) is not set"
    );
    assert_eq!(report["environments"]["staging"]["summary"]["create"], 2);
    // apply goes ahead where it can and says which environments succeeded.
    let run = run_in(
        dir.path(),
        &[
            "--max-retries",
            "0",
            "apply",
            ".",
            "--all-envs",
            "--auto-approve",
        ],
    )
    .run()
    .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_no_token(&run);
    assert!(
        run.stdout
            .ends_with("\nEnvironments: succeeded: staging; failed: prod (nothing applied)\n"),
        "{}",
        run.transcript()
    );
    assert!(
        run.stderr.contains("[staging] created Team/platform"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_refused_token_is_its_environments_failure() {
    let (staging, prod) = tenants().await;
    let dir = repo(&staging, &prod.emulator.url());
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&[
            "plan",
            ".",
            "--all-envs",
            "--format",
            "json",
            "--detailed-exitcode",
        ])
        .env("STAGING_TOKEN", STAGING_TOKEN)
        .env("PROD_TOKEN", "not-the-prod-token-77")
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let prod = &report["environments"]["prod"];
    assert_eq!(prod["stage"], "connecting", "{prod}");
    assert!(prod["error"].as_str().unwrap().contains("401"), "{prod}");
    assert!(
        !run.stdout.contains("not-the-prod-token-77")
            && !run.stderr.contains("not-the-prod-token-77")
    );
    assert_eq!(report["environments"]["staging"]["summary"]["create"], 2);
}

#[tokio::test]
async fn a_saved_plan_is_refused_in_another_environment_with_nothing_sent() {
    let (staging, prod) = tenants().await;
    let dir = repo(&staging, &prod.emulator.url());
    let d = dir.path();
    let run = run_in(d, &["plan", ".", "--env", "staging", "--out", "plan.json"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("staging"),
        "the plan names its environment: {}",
        run.stdout
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("plan.json")).unwrap()).unwrap();
    assert_eq!(saved["guards"]["environment"], "staging", "{saved}");
    staging.emulator.reset_stats();
    prod.emulator.reset_stats();
    let run = run_in(
        d,
        &["apply", "plan.json", "--env", "prod", "--auto-approve"],
    )
    .run()
    .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_eq!(
        run.stderr,
        "error: the saved plan was made for the environment `staging`, not `prod`: nothing was changed; make a plan for `prod` with `cfgctl plan --env prod --out FILE`\n"
    );
    assert!(staging.emulator.stats().log.is_empty());
    assert!(prod.emulator.stats().log.is_empty());
    // Without --env it goes to the environment it records, with that environment's token.
    let run = run_in(d, &["apply", "plan.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_no_token(&run);
    assert!(prod.emulator.stats().log.is_empty());
    let posts = staging.emulator.stats().log;
    assert_eq!(posts.iter().filter(|r| r.method == "POST").count(), 2);
}

#[tokio::test]
async fn environments_must_be_chosen_and_known() {
    let (staging, prod) = tenants().await;
    let dir = repo(&staging, &prod.emulator.url());
    let run = run_in(dir.path(), &["plan", "."]).run().await;
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: ./cfgctl.yaml declares environments (prod, staging): choose with --env NAME (repeatable) or --all-envs\n"
    );
    let run = run_in(dir.path(), &["drift", ".", "--env", "qa"])
        .run()
        .await;
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: unknown environment `qa`; ./cfgctl.yaml declares prod, staging\n"
    );
    let run = run_in(
        dir.path(),
        &["--url", &prod.emulator.url(), "apply", ".", "--env", "prod"],
    )
    .run()
    .await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--url (or CFGCTL_URL) names one target"),
        "{}",
        run.stderr
    );
    assert!(staging.emulator.stats().log.is_empty());
    assert!(prod.emulator.stats().log.is_empty());
}

/// `graph` draws one environment's plan against its own tenant (its token from its
/// variable), like `plan --env`; it is refused without a choice, or with several.
#[tokio::test]
async fn graph_draws_one_environments_plan() {
    let (staging, prod) = tenants().await;
    let dir = repo(&staging, &prod.emulator.url());
    let run = run_in(
        dir.path(),
        &["graph", ".", "--env", "prod", "--format", "mermaid"],
    )
    .run()
    .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("DropRule/drop-debug-series"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Team/platform"), "{}", run.stdout);
    assert_no_token(&run);
    // Only prod was read.
    assert!(staging.emulator.stats().log.is_empty());
    assert!(!prod.emulator.stats().log.is_empty());
    let run = run_in(dir.path(), &["graph", "."]).run().await;
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: ./cfgctl.yaml declares environments (prod, staging): choose with --env NAME (repeatable) or --all-envs\n"
    );
    let run = run_in(dir.path(), &["graph", ".", "--all-envs"])
        .run()
        .await;
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: graph draws one environment's plan at a time: pass one --env NAME\n"
    );
}
