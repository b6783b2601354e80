//! `pull --env` and `export --env` (docs/environments.md) against an emulator as the
//! environment's target: each pulled value is written where the environment's value was
//! written (base or overlay), a value from a variable is refused naming the place, and
//! afterwards the environment plans clean for what was pulled.

use std::path::Path;

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use cfgctl::ops::{self, TargetSettings};
use serde_json::{json, Value};

use crate::support::{cfgctl_snapshot, read, write, Cfgctl, Tenant};

const TOKEN: &str = "staging-token-5f0c9a";

const BASE: &str = "\
# Teams, shared by every environment.
api_version: v1/config
kind: Team
spec:
  slug: platform
  name: Platform ${var:region}   # one per region
  description: Runs the clusters.
---
api_version: v1/config
kind: Team
spec:
  slug: sre
  name: SRE
---
api_version: v1/config
kind: Team
spec:
  slug: ops-${var:region}
  name: Ops
";

const OVERLAY: &str = "\
# Staging only.
api_version: v1/config
kind: Team
spec:
  slug: platform
  user_emails:
    - alice@example.com
";

fn settings(url: &str) -> String {
    format!(
        "environments:\n  staging:\n    url: {url}\n    token_env: STAGING_TOKEN\n    vars: {{region: eu}}\n    overlay: envs/staging\n  prod:\n    url: https://prod.example.com\n    token_env: PROD_TOKEN\n    vars: {{region: us}}\n"
    )
}

/// A tenant that wants a token, holding the staging environment's manifests as loaded.
async fn staging() -> (Tenant, tempfile::TempDir) {
    let t = Tenant::start(Config {
        token: Some(TOKEN.into()),
        ..Config::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", &settings(&t.emulator.url()));
    write(dir.path(), "teams.yaml", BASE);
    write(dir.path(), "envs/staging/teams.yaml", OVERLAY);
    let loaded = cfgctl::manifest::load_dir_for(dir.path(), Some("staging")).unwrap();
    assert_eq!(loaded.diagnostics, vec![]);
    for m in &loaded.manifests {
        let r = t.create(m.kind, (*m.spec).clone()).await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    (t, dir)
}

/// An edit made in the UI.
async fn edit(t: &Tenant, slug: &str, change: impl FnOnce(&mut Value)) {
    let kind = Kind::from_name("Team").unwrap();
    let r = t.read(kind, Some(slug)).await;
    assert_eq!(r.status, 200, "{r:?}");
    let mut object = r.body[kind.def().singular].clone();
    for f in kind.def().server_owned {
        object.as_object_mut().unwrap().remove(*f);
    }
    change(&mut object);
    let r = t.update(kind, Some(slug), object).await;
    assert_eq!(r.status, 200, "{r:?}");
}

/// The staging plan through the library (the environment's manifests against its target):
/// each changing action's address and changed fields.
async fn staging_plan(t: &Tenant, dir: &Path) -> Vec<(String, Vec<String>)> {
    let loaded = cfgctl::manifest::load_dir_for(dir, Some("staging")).unwrap();
    assert_eq!(loaded.error_count(), 0, "{:?}", loaded.diagnostics);
    let target = TargetSettings {
        url: Some(t.emulator.url()),
        token: Some(TOKEN.into()),
        local: None,
        timeout: std::time::Duration::from_secs(30),
        max_retries: 0,
        insecure_http: false,
        max_pages: 1000,
        max_response_bytes: 64 << 20,
    };
    let request = ops::PlanRequest {
        target,
        dir: dir.to_path_buf(),
        environment: Some("staging".into()),
        prune: false,
        only: vec![],
        server_validate: false,
        drift: false,
        cache: None,
        base: None,
        keep: ops::Keep::default(),
    };
    let plan = ops::plan(&request).await.unwrap().plan;
    plan.actions
        .iter()
        .filter(|a| a.is_change())
        .map(|a| {
            let fields = a.fields.iter().map(|f| f.path.clone()).collect();
            (a.address.to_string(), fields)
        })
        .collect()
}

#[tokio::test]
async fn pull_env_writes_base_and_overlay_and_refuses_variables() {
    let (t, dir) = staging().await;
    let d = dir.path();
    assert_eq!(staging_plan(&t, d).await, vec![]);
    edit(&t, "platform", |o| {
        o["name"] = json!("Platform EU");
        o["description"] = json!("Runs every cluster.");
        o["user_emails"] = json!(["alice@example.com", "bob@example.com"]);
    })
    .await;
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["pull", "--env", "staging"])
        .env("STAGING_TOKEN", TOKEN)
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    // Each file marked overlay or base (shared), the refused value with its place and variable.
    cfgctl_snapshot!("pull_env_report", r.stdout);
    assert!(!r.transcript().contains(TOKEN), "{}", r.transcript());
    // Each value where it was written; the variable and every other byte kept.
    assert_eq!(
        read(d, "teams.yaml"),
        BASE.replace("Runs the clusters.", "Runs every cluster.")
    );
    assert_eq!(
        read(d, "envs/staging/teams.yaml"),
        format!("{OVERLAY}    - bob@example.com\n")
    );
    // What was pulled plans clean; the refused value is all that is left.
    assert_eq!(
        staging_plan(&t, d).await,
        vec![("Team/platform".to_string(), vec!["name".to_string()])]
    );
    edit(&t, "platform", |o| o["name"] = json!("Platform eu")).await;
    assert_eq!(staging_plan(&t, d).await, vec![]);
}

#[tokio::test]
async fn pull_env_without_a_variable_is_clean_and_exits_0() {
    let (t, dir) = staging().await;
    let d = dir.path();
    edit(&t, "sre", |o| o["description"] = json!("On call.")).await;
    edit(&t, "ops-eu", |o| {
        o["description"] = json!("Runs the pipelines.")
    })
    .await;
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["pull", "--env", "staging", "."])
        .env("STAGING_TOKEN", TOKEN)
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("  ~ teams.yaml: Team/ops-eu, Team/sre (base, shared by 2 environments)\n"),
        "{}",
        r.stdout
    );
    // The document whose slug is written with a variable is found and edited as written.
    assert_eq!(
        read(d, "teams.yaml"),
        BASE.replace("  name: SRE\n", "  name: SRE\n  description: On call.\n")
            .replace(
                "  name: Ops\n",
                "  name: Ops\n  description: Runs the pipelines.\n"
            )
    );
    assert_eq!(read(d, "envs/staging/teams.yaml"), OVERLAY);
    assert_eq!(staging_plan(&t, d).await, vec![]);
}

#[tokio::test]
async fn pull_takes_one_environment_and_its_token_variable() {
    let (t, dir) = staging().await;
    let d = dir.path();
    t.emulator.reset_stats();
    for args in [
        &["pull", "--all-envs"][..],
        &["pull", "--env", "staging", "--env", "prod"][..],
    ] {
        let r = Cfgctl::bare().dir(d).args(args).run().await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.stderr.contains("pull writes one environment at a time"),
            "{}",
            r.stderr
        );
    }
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["pull", "--env", "staging"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "the variable `STAGING_TOKEN` (token_env of the environment `staging`) is not set"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(t.emulator.stats().total, 0);
    assert_eq!(read(d, "teams.yaml"), BASE);
}

#[tokio::test]
async fn export_env_writes_a_base_its_target_plans_clean() {
    let (t, dir) = staging().await;
    let d = dir.path();
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["export", "--env", "staging", "--out", "exported"])
        .env("STAGING_TOKEN", TOKEN)
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout.starts_with("exported 3 resources (1 kind) from "),
        "{}",
        r.stdout
    );
    assert!(!r.transcript().contains(TOKEN));
    assert!(!d.join("exported/cfgctl.yaml").exists());
    let team = read(d, "exported/teams/platform.yaml");
    assert!(team.contains("name: Platform eu\n"), "{team}");
    assert!(team.contains("- alice@example.com\n"), "{team}");
    let r = Cfgctl::new(&t)
        .dir(d)
        .args(&["plan", "exported", "--detailed-exitcode", "--token", TOKEN])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("Plan: 0 to create, 0 to update, 0 to delete"),
        "{}",
        r.stdout
    );
}

#[tokio::test]
async fn export_all_envs_writes_one_folder_each() {
    let (staging, dir) = staging().await;
    let d = dir.path();
    let prod = Tenant::start(Config {
        token: Some("prod-token-2e7a".into()),
        ..Config::default()
    })
    .await;
    let settings =
        settings(&staging.emulator.url()).replace("https://prod.example.com", &prod.emulator.url());
    write(d, "cfgctl.yaml", &settings);
    let team = json!({"slug": "sre", "name": "SRE (prod)"});
    let r = prod.create(Kind::from_name("Team").unwrap(), team).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["export", "--env", "nope", "--out", "out"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains(
            "environment `nope` is not declared in cfgctl.yaml (declared: prod, staging)"
        ),
        "{}",
        r.stderr
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["export", "--all-envs", "--out", "out"])
        .env("STAGING_TOKEN", TOKEN)
        .env("PROD_TOKEN", "prod-token-2e7a")
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(r.stdout.contains(" to out/prod\n"), "{}", r.stdout);
    assert!(r.stdout.contains(" to out/staging\n"), "{}", r.stdout);
    assert!(read(d, "out/prod/teams/sre.yaml").contains("name: SRE (prod)\n"));
    assert!(!d.join("out/prod/teams/platform.yaml").exists());
    assert!(read(d, "out/staging/teams/platform.yaml").contains("name: Platform eu\n"));
}

#[tokio::test]
async fn pull_env_writes_unmanaged_resources_into_the_overlay() {
    let (t, dir) = staging().await;
    let d = dir.path();
    let settings = format!("{}prune: [\"Team/*\"]\n", settings(&t.emulator.url()));
    write(d, "cfgctl.yaml", &settings);
    let team = json!({"slug": "scratch", "name": "Scratch"});
    let r = t.create(Kind::from_name("Team").unwrap(), team).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["pull", "--env", "staging", "--include-unmanaged"])
        .env("STAGING_TOKEN", TOKEN)
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("  + envs/staging/teams/scratch.yaml: Team/scratch (new file)\n"),
        "{}",
        r.stdout
    );
    assert!(read(d, "envs/staging/teams/scratch.yaml").contains("name: Scratch\n"));
    assert!(!d.join("teams").exists());
    assert_eq!(staging_plan(&t, d).await, vec![]);
    // Only staging has it: prod's load does not.
    let prod = cfgctl::manifest::load_dir_for(d, Some("prod")).unwrap();
    assert!(prod
        .manifests
        .iter()
        .all(|m| m.slug.as_deref() != Some("scratch")));
}

/// A resource the environment's overlay omits is not the environment's: `--include-unmanaged`
/// does not write it into that overlay (red team E11: the next validate failed, "already in
/// this overlay"), and says where it is omitted.
#[tokio::test]
async fn pull_env_does_not_adopt_what_the_overlay_omits() {
    let (t, dir) = staging().await;
    let d = dir.path();
    let settings = format!("{}prune: [\"Team/*\"]\n", settings(&t.emulator.url()));
    write(d, "cfgctl.yaml", &settings);
    write(
        d,
        "envs/staging/omit.yaml",
        "api_version: v1/config\nkind: Team\ncfgctl: {omit: true}\nspec: {slug: sre}\n",
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&["pull", "--env", "staging", "--include-unmanaged"])
        .env("STAGING_TOKEN", TOKEN)
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert!(
        r.stdout
            .contains("Not adopted (the environment's overlay omits them"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  - Team/sre (envs/staging/omit.yaml)\n"),
        "{}",
        r.stdout
    );
    assert!(!d.join("envs/staging/teams/sre.yaml").exists());
    let v = Cfgctl::bare()
        .dir(d)
        .args(&["validate", "--env", "staging", "."])
        .run()
        .await;
    assert_eq!(v.code, 0, "{}", v.transcript());
}
