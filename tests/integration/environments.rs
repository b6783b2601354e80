//! Environments of `cfgctl.yaml` (docs/environments.md): `validate` across environments, each
//! problem naming its environment; located undefined variables; a base with staging and prod
//! overlays loaded through the library.

use serde_json::json;

use crate::support::files::write;
use crate::support::run::cfgctl_in;
use crate::support::Cfgctl;

const SETTINGS: &str = "\
environments:
  staging:
    url: https://staging.example.com
    token_env: STAGING_API_TOKEN
    vars: {region: eu, retention: 7}
    overlay: envs/staging
  prod:
    url: https://prod.example.com
    token_env: PROD_API_TOKEN
    vars: {region: us, retention: 30}
    overlay: envs/prod
";

const BASE: &str = "\
api_version: v1/config
kind: Bucket
spec:
  slug: platform-${var:region}
  name: Platform
  description: Everything the platform team owns
  labels:
    team: platform
    region: ${var:region}
---
api_version: v1/config
kind: Team
spec: {slug: platform, name: Platform}
";

const STAGING: &str = "\
api_version: v1/config
kind: Bucket
spec:
  slug: platform-eu
  description: null
  labels: {tier: scratch}
---
api_version: v1/config
kind: Team
cfgctl: {omit: true}
spec: {slug: platform}
";

const PROD: &str = "\
api_version: v1/config
kind: Team
spec: {slug: sre, name: SRE}
";

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cfgctl.yaml", SETTINGS);
    write(dir.path(), "platform.yaml", BASE);
    write(dir.path(), "envs/staging/platform.yaml", STAGING);
    write(dir.path(), "envs/prod/sre.yaml", PROD);
    dir
}

#[test]
fn base_and_overlays_load_per_environment() {
    let dir = repo();
    let addresses = |env: &str| {
        let loaded = cfgctl::manifest::load_dir_for(dir.path(), Some(env)).unwrap();
        assert_eq!(loaded.diagnostics, vec![], "{env}");
        let mut found: Vec<String> = loaded
            .manifests
            .iter()
            .map(|m| m.address().to_string())
            .collect();
        found.sort();
        (found, loaded)
    };
    let (staging, loaded) = addresses("staging");
    assert_eq!(staging, ["Bucket/platform-eu"]);
    assert_eq!(
        *loaded.manifests[0].spec,
        json!({"slug": "platform-eu", "name": "Platform", "labels": {"team": "platform", "region": "eu", "tier": "scratch"}})
    );
    let (prod, _) = addresses("prod");
    assert_eq!(prod, ["Bucket/platform-us", "Team/platform", "Team/sre"]);
    let err = cfgctl::manifest::load_dir_for(dir.path(), Some("qa")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown environment `qa`; cfgctl.yaml declares prod, staging"
    );
}

#[test]
fn validate_checks_every_environment_and_names_it() {
    let dir = repo();
    let run = cfgctl_in(dir.path(), &["validate", "."], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(
        run.stdout,
        "valid: 3 manifests in 1 file, 0 errors, 0 warnings\n"
    );
    // A variable prod lacks, a patch staging gets wrong, a mistake in the base.
    write(
        dir.path(),
        "cfgctl.yaml",
        &SETTINGS.replace("{region: us, retention: 30}", "{regon: us}"),
    );
    write(
        dir.path(),
        "envs/staging/platform.yaml",
        &STAGING.replace("{tier: scratch}", "[scratch]"),
    );
    write(
        dir.path(),
        "platform.yaml",
        &BASE.replace("name: Platform}", "nme: Platform}"),
    );
    let run = cfgctl_in(dir.path(), &["validate", "."], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "[staging] envs/staging/platform.yaml:6:11: error: Bucket/platform-eu: `labels`: expected a mapping, found a list",
            "[staging] envs/staging/platform.yaml:10:1: error: overlay: omits Team/platform, which no base manifest declares (or the one that does has errors)",
            "[prod] platform.yaml:4:18: error: undefined variable `region` in environment `prod` (did you mean `regon`?)",
            "[prod] platform.yaml:9:13: error: undefined variable `region` in environment `prod` (did you mean `regon`?)",
            "[prod, staging] platform.yaml:13:1: error: Team/platform: missing required field `name`",
            "[prod, staging] platform.yaml:13:24: error: Team/platform: unknown field `nme` in the Team definition (did you mean `name`?)",
            "invalid: 2 manifests in 1 file, 6 errors, 0 warnings",
        ],
        "{}",
        run.transcript()
    );
    // One environment only; the annotations name it too.
    let run = cfgctl_in(
        dir.path(),
        &["validate", ".", "--env", "staging"],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert!(
        run.stdout.contains(
            "::error file=envs/staging/platform.yaml,line=6,col=11::[staging] Bucket/platform-eu:"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .lines()
            .all(|l| ["[staging] ", "::error ", "invalid:"]
                .iter()
                .any(|p| l.starts_with(p))),
        "{}",
        run.stdout
    );
}

#[test]
fn undefined_variable_is_located_exactly() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "environments:\n  staging:\n    vars: {region: eu}\n",
    );
    write(
        dir.path(),
        "teams/t.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: t\n  name: \"Team of ${var:region} and ${var:zone}\"\n",
    );
    let run = cfgctl_in(dir.path(), &["validate", ".", "--env", "staging"], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "[staging] teams/t.yaml:5:36: error: undefined variable `zone` in environment `staging`\n\
         invalid: 1 manifest in 1 file, 1 error, 0 warnings\n"
    );
}

#[test]
fn a_repository_without_environments_validates_as_before() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: t, name: \"${var:x}\"}\n",
    );
    let run = cfgctl_in(dir.path(), &["validate", "."], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "t.yaml:3:24: error: `${var:x}` needs an environment: cfgctl.yaml declares none (docs/environments.md)\n\
         invalid: 1 manifest in 1 file, 1 error, 0 warnings\n"
    );
}

/// A value an overlay wrote is the overlay's line to fix: a problem found after the load (a
/// reference nothing declares, a unique field taken twice, a reference the target lacks)
/// points at the overlay file, not at the base manifest the value replaced.
#[tokio::test]
async fn a_problem_in_a_value_an_overlay_wrote_points_at_the_overlay() {
    let tenant = crate::support::Tenant::start(cfgctl::emulator::Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let settings = format!(
        "environments:\n  staging:\n    url: {}\n    overlay: envs/staging\n",
        tenant.emulator.url()
    );
    write(dir.path(), "cfgctl.yaml", &settings);
    let label = |slug: &str, name: &str| {
        format!(
            "api_version: v1/config\nkind: DerivedLabel\nspec:\n  slug: {slug}\n  name: {slug}\n  label_name: {name}\n  metric_label:\n    constructed_label:\n      value_definitions:\n        - value: x\n          filters: [{{name: env, value_glob: \"prod*\"}}]\n"
        )
    };
    let base = format!(
        "api_version: v1/config\nkind: Team\nspec: {{slug: platform, name: Platform}}\n---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: logs\n  name: Logs\n  team_slug: platform\n---\n{}---\n{}",
        label("first", "owner"),
        label("second", "team")
    );
    write(dir.path(), "base.yaml", &base);
    let overlay = "\
api_version: v1/config
kind: Bucket
spec:
  slug: logs
  team_slug: nobody
---
api_version: v1/config
kind: DerivedLabel
spec:
  slug: second
  label_name: owner
";
    write(dir.path(), "envs/staging/patch.yaml", overlay);
    let run = cfgctl_in(dir.path(), &["validate", ".", "--env", "staging"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "[staging] envs/staging/patch.yaml:5:3: warning: Bucket/logs references Team/nobody at `team_slug`, which no manifest declares (it must already exist on the server)",
            "[staging] envs/staging/patch.yaml:11:3: error: DerivedLabel `label_name` \"owner\" is already used by DerivedLabel/first at base.yaml:17:3; it must be unique",
            "invalid: 4 manifests in 1 file, 1 error, 1 warning",
        ],
        "{}",
        run.transcript()
    );
    // The same manifests with the unique field fixed, planned against a tenant that lacks
    // the team: the plan's error is at the overlay's line too.
    write(
        dir.path(),
        "envs/staging/patch.yaml",
        &overlay.replace("label_name: owner", "label_name: tier"),
    );
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["plan", ".", "--env", "staging"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "envs/staging/patch.yaml:5:3: error: Bucket/logs references Team/nobody at `team_slug`"
        ),
        "{}",
        run.transcript()
    );
    assert!(!run.stderr.contains("base.yaml:"), "{}", run.transcript());
}

/// R4-2: every `token_env` of cfgctl.yaml that is set is a secret, whichever environments
/// run: a manifest that writes another environment's token into a printed field shows it
/// redacted.
#[tokio::test]
async fn another_environments_token_is_never_printed() {
    const PROD_TOKEN: &str = "prod-tenant-token-r4-2-5f1e";
    let tenant = crate::support::Tenant::start(cfgctl::emulator::Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let settings = format!(
        "environments:\n  staging:\n    url: {}\n  prod:\n    url: https://prod.example.com\n    token_env: R4_PROD_TOKEN\n",
        tenant.emulator.url()
    );
    write(dir.path(), "cfgctl.yaml", &settings);
    write(
        dir.path(),
        "t.yaml",
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n  description: ${env:R4_PROD_TOKEN}\n",
    );
    for args in [
        &["plan", ".", "--env", "staging"][..],
        &["plan", ".", "--env", "staging", "--format", "json"],
        &["plan", ".", "--env", "staging", "--format", "markdown"],
        &["validate", ".", "--env", "staging"],
    ] {
        let run = Cfgctl::bare()
            .dir(dir.path())
            .args(args)
            .env("R4_PROD_TOKEN", PROD_TOKEN)
            .run()
            .await;
        let text = run.transcript();
        assert!(!text.contains(PROD_TOKEN), "{args:?}: {text}");
        assert!(!text.contains("r4-2-5f1e"), "{args:?}: {text}");
        // Since red team E19 the reference itself is refused (it was planned, the value
        // redacted, and sent to the staging tenant).
        assert_eq!(run.code, 1, "{args:?}: {text}");
        assert!(
            text.contains("`R4_PROD_TOKEN` holds the API token of environment `prod`"),
            "{args:?}: {text}"
        );
    }
}

/// Red team E3: an environment whose token starts with its name (`staging`, a token
/// `STAGINGTOK…`) is still named in every report: the name is public (cfgctl.yaml declares it),
/// while the token, whole or cut longer, stays redacted.
#[tokio::test]
async fn an_environment_named_like_the_start_of_its_token_is_named() {
    // Ten bytes: a cut of six (half the token, at least 6) counted as the token cut short.
    const TOKEN: &str = "STAGINGTOK";
    let tenant = crate::support::Tenant::start(cfgctl::emulator::Config {
        token: Some(TOKEN.into()),
        ..cfgctl::emulator::Config::default()
    })
    .await;
    let prod = crate::support::Tenant::start(cfgctl::emulator::Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let settings = format!(
        "environments:\n  staging:\n    url: {}\n    token_env: E3_STG_TOKEN\n  prod:\n    url: {}\n",
        tenant.emulator.url(),
        prod.emulator.url()
    );
    write(dir.path(), "cfgctl.yaml", &settings);
    write(
        dir.path(),
        "t.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: b, name: B}\n",
    );
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["plan", ".", "--all-envs", "--format", "json"])
        .env("E3_STG_TOKEN", TOKEN)
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.transcript());
    let text = run.transcript();
    assert!(!text.contains("STAGINGTOK"), "{text}");
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&String> = plan["environments"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["prod", "staging"], "{text}");
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["plan", ".", "--all-envs"])
        .env("E3_STG_TOKEN", TOKEN)
        .run()
        .await;
    assert!(run.stdout.contains("  staging "), "{}", run.transcript());
    assert!(!run.stdout.contains("[REDACTED]"), "{}", run.transcript());
}

/// R4-4: an overlay folder that is a symlink (`envs/st -> ../../../outside`) would read files
/// from outside the repository into an environment's manifests: refused at its setting, as a
/// symlinked `policy:` directory is, and nothing of what it points to is read.
#[cfg(unix)]
#[test]
fn a_symlinked_overlay_folder_is_refused_where_it_is_named() {
    let top = tempfile::tempdir().unwrap();
    let repo = top.path().join("a/repo");
    write(&top.path().join("outside"), "stolen.yaml", STAGING);
    write(
        &repo,
        "cfgctl.yaml",
        "environments:\n  st:\n    vars: {region: eu}\n    overlay: envs/st\n",
    );
    write(
        &repo,
        "platform.yaml",
        "api_version: v1/config\nkind: Bucket\nspec: {slug: platform-eu, name: Platform}\n",
    );
    std::fs::create_dir_all(repo.join("envs")).unwrap();
    std::os::unix::fs::symlink("../../../outside", repo.join("envs/st")).unwrap();
    assert!(
        repo.join("envs/st/stolen.yaml").is_file(),
        "the link leads out"
    );
    let run = cfgctl_in(&repo, &["validate", ".", "--env", "st"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_eq!(
        run.stdout.lines().next(),
        Some(
            "[st] cfgctl.yaml:4:14: error: overlay: environment `st`: `envs/st` is a symlink, and \
             cfgctl follows none: put the overlay directory itself there"
        ),
        "{}",
        run.transcript()
    );
    assert!(!run.stdout.contains("stolen"), "{}", run.stdout);
}

/// `plan --env` and `pull --env` plan the environment's manifests through the same door
/// (`ops::plan`): an invalid manifest stops both before anything is planned, with the same
/// error naming the environment and the `validate` that shows the problems.
#[tokio::test]
async fn an_invalid_manifest_stops_plan_and_pull_of_an_environment_naming_it() {
    let tenant = crate::support::Tenant::start(cfgctl::emulator::Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let settings = format!(
        "environments:\n  staging:\n    url: {}\n",
        tenant.emulator.url()
    );
    write(dir.path(), "cfgctl.yaml", &settings);
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: platform, name: Platform, colour: blue}\n",
    );
    for command in ["plan", "pull"] {
        let r = Cfgctl::bare()
            .dir(dir.path())
            .args(&[command, "--env", "staging"])
            .run()
            .await;
        assert_eq!(r.code, 1, "{}", r.transcript());
        assert!(
            r.stderr.contains(
                "1 error in the manifests under `.` for environment `staging`: run `cfgctl validate --env staging` for details"
            ),
            "{command}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("team.yaml:3:"), "{command}: {}", r.stderr);
    }
}

/// A manifest never reads cfgctl's own API tokens (red team E19): `${env:X}` where X is an
/// environment's `token_env` (or CFGCTL_TOKEN), in a plain field or a secret one, is an error at
/// the reference, so `--env staging` can never send prod's token to the staging tenant.
#[test]
fn a_manifest_never_reads_an_environments_api_token() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "environments:\n  staging:\n    url: http://127.0.0.1:9\n    token_env: E19_STG_TOK\n  prod:\n    url: http://127.0.0.1:9\n    token_env: E19_PRD_TOK\n",
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: checkout\n  name: Checkout\n  description: \"p=${env:E19_PRD_TOK}\"\n",
    );
    write(
        dir.path(),
        "chat.yaml",
        "api_version: v1/config\nkind: ExternalConnection\nspec:\n  slug: chat\n  name: Chat\n  slack:\n    token: ${env:CFGCTL_TOKEN}\n",
    );
    let v = Cfgctl::bare()
        .dir(dir.path())
        .env("E19_STG_TOK", "stg-token-e19-aaaa")
        .env("E19_PRD_TOK", "prd-token-e19-bbbb")
        .env("CFGCTL_TOKEN", "cli-token-e19-cccc")
        .args(&["validate", "--env", "staging", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    let out = v.transcript();
    assert!(
        out.contains("team.yaml:6:19: error: cannot resolve `${env:E19_PRD_TOK}`: `E19_PRD_TOK` holds the API token of environment `prod`"),
        "{out}"
    );
    assert!(
        out.contains("chat.yaml:7:12: error: cannot resolve `${env:CFGCTL_TOKEN}`: `CFGCTL_TOKEN` holds the API token of `--token`"),
        "{out}"
    );
    for token in [
        "stg-token-e19-aaaa",
        "prd-token-e19-bbbb",
        "cli-token-e19-cccc",
    ] {
        assert!(!out.contains(token), "{out}");
    }
}

/// An invalid cfgctl.yaml met while choosing environments is reported located, as without
/// `--env` (red team E5: only "./cfgctl.yaml is not valid: run `cfgctl validate`").
#[test]
fn an_invalid_settings_file_is_located_when_environments_are_chosen() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "environments:\n  prod:\n    url: https://prod.example.com\nmax_deletes: -1\n",
    );
    for args in [
        &["plan", "--env", "prod", "."][..],
        &["drift", "--all-envs", "."],
    ] {
        let r = Cfgctl::bare().dir(dir.path()).args(args).run_blocking();
        assert_eq!(r.code, 1, "{args:?}: {}", r.transcript());
        assert!(
            r.stderr.contains("cfgctl.yaml:4:14: error: invalid settings file: `max_deletes` must be a whole number of 0 or more, found -1"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// Two environments with one url (`/` aside) are never run together (red team E12: with
/// `--prune` each deleted what only the other declared); one at a time they still run.
#[test]
fn two_environments_of_one_tenant_are_not_run_together() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "environments:\n  a: {url: \"http://127.0.0.1:9\"}\n  b: {url: \"http://127.0.0.1:9/\"}\n",
    );
    for args in [
        &["plan", "--all-envs", "."][..],
        &[
            "apply",
            "--env",
            "a",
            "--env",
            "b",
            "--auto-approve",
            "--prune",
            ".",
        ],
    ] {
        let r = Cfgctl::bare().dir(dir.path()).args(args).run_blocking();
        assert_eq!(r.code, 1, "{args:?}: {}", r.transcript());
        assert!(
            r.stderr
                .contains("the environments `a` and `b` have one url, so one tenant"),
            "{args:?}: {}",
            r.stderr
        );
    }
}
