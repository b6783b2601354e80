//! A saved plan's delete guards are sealed by the user who made it (under the token, else the
//! user's secret in the cache folder): edited by hand, or applied by someone else, they count
//! only as far as apply's own settings allow (`--max-deletes`, the `cfgctl.yaml` of the current
//! directory, the defaults). And `max_deletes` itself is a limit, not one less than it.

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::{json, Value};

use crate::support::{write, Cfgctl, Tenant};

fn team() -> Kind {
    Kind::from_name("Team").unwrap()
}

/// A tenant with `n` teams, and a repository that declares only `team-00` and prunes teams
/// with at most `max` deletes.
async fn teams(n: usize, max: u32, token: Option<&str>) -> (Tenant, tempfile::TempDir) {
    let t = Tenant::start(Config {
        token: token.map(str::to_string),
        ..Config::default()
    })
    .await;
    for i in 0..n {
        let r = t
            .create(
                team(),
                json!({"slug": format!("team-{i:02}"), "name": format!("Team {i}")}),
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        &format!("prune: [\"Team/*\"]\nmax_deletes: {max}\n"),
    );
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: team-00, name: Team 0}\n",
    );
    (t, dir)
}

fn deletes(t: &Tenant) -> usize {
    t.emulator
        .stats()
        .log
        .iter()
        .filter(|l| l.method == "DELETE")
        .count()
}

fn with_token(c: Cfgctl, token: Option<&str>) -> Cfgctl {
    match token {
        Some(token) => c.env("CFGCTL_TOKEN", token),
        None => c,
    }
}

#[tokio::test]
async fn exactly_max_deletes_is_allowed_and_one_more_is_not() {
    // 4 teams beyond the declared one, max_deletes 4: applied, from the directory.
    let (t, dir) = teams(5, 4, None).await;
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(deletes(&t), 4);
    // 5 beyond it with max_deletes 4: refused, nothing deleted; from a saved plan too.
    let (t, dir) = teams(6, 4, None).await;
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", ".", "--prune", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("the plan deletes 5 resources, more than max_deletes (4)"),
        "{}",
        r.stderr
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert_eq!(deletes(&t), 0);
    // Exactly 4 through a saved plan: applied.
    let (t, dir) = teams(5, 4, None).await;
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(deletes(&t), 4);
}

/// The hand edit of the issue: max_deletes raised in the file (and the kinds it declares),
/// nothing else. Refused, whatever directory apply runs in, with or without a token.
#[tokio::test]
async fn raising_the_saved_guards_by_hand_deletes_nothing() {
    for token in [None, Some("plan-and-apply-token")] {
        let (t, dir) = teams(10, 2, token).await;
        let r = with_token(Cfgctl::new(&t), token)
            .dir(dir.path())
            .args(&["plan", ".", "--prune", "--out", "p.json"])
            .run()
            .await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        let path = dir.path().join("p.json");
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(doc["guards"]["seal"].is_string(), "{}", doc["guards"]);
        doc["guards"]["max_deletes"] = json!(100);
        doc["guards"]["declared_kinds"] = json!(["Bucket", "Team"]);
        std::fs::write(&path, doc.to_string()).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        for (cwd, why) in [
            (dir.path(), "the plan deletes 9 resources, more than max_deletes (2)"),
            (
                elsewhere.path(),
                "9 deletes are outside the prune scope of the cfgctl.yaml apply runs with (Team/team-01, ",
            ),
        ] {
            let r = with_token(Cfgctl::new(&t), token)
                .dir(cwd)
                .args(&["apply", path.to_str().unwrap(), "--auto-approve"])
                .run()
                .await;
            assert_eq!(r.code, 1, "{}", r.transcript());
            assert!(r.stderr.contains(why), "{}", r.stderr);
            assert!(
                r.stderr.contains("the saved plan's guards are not sealed for this user and token"),
                "{}",
                r.stderr
            );
        }
        assert_eq!(deletes(&t), 0, "token {token:?}");
    }
}

#[tokio::test]
async fn sealed_guards_count_and_unsealed_ones_need_apply_s_own_settings() {
    let token = "the-plan-token";
    // The tenant checks no token, so that another one can be tried on it.
    let (t, dir) = teams(10, 100, None).await;
    let r = with_token(Cfgctl::new(&t), Some(token))
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let path = dir.path().join("p.json");
    let plan_text = std::fs::read_to_string(&path).unwrap();
    assert!(!plan_text.contains(token));
    // Applied with another token: the file's guards are not sealed for it, so apply's own
    // count (here the defaults: no prune scope at all).
    let elsewhere = tempfile::tempdir().unwrap();
    let other = |args: &[&str]| {
        with_token(Cfgctl::new(&t), Some("another-token"))
            .dir(elsewhere.path())
            .args(args)
    };
    let file = path.to_str().unwrap();
    let r = other(&["apply", file, "--auto-approve"]).run().await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("9 deletes are outside the prune scope of the cfgctl.yaml apply runs with"),
        "{}",
        r.stderr
    );
    // Given again at apply time (the repository's cfgctl.yaml, and --allow-empty-prune for
    // the kinds the file says are declared): applied.
    std::fs::copy(
        dir.path().join("cfgctl.yaml"),
        elsewhere.path().join("cfgctl.yaml"),
    )
    .unwrap();
    let r = other(&["apply", file, "--auto-approve"]).run().await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr.contains("no manifest declares any Team"),
        "{}",
        r.stderr
    );
    assert_eq!(deletes(&t), 0);
    let r = other(&["apply", file, "--auto-approve", "--allow-empty-prune"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(deletes(&t), 9);
}

#[tokio::test]
async fn a_sealed_plan_applies_as_planned() {
    let token = "the-token";
    let (t, dir) = teams(10, 100, Some(token)).await;
    let r = with_token(Cfgctl::new(&t), Some(token))
        .dir(dir.path())
        .args(&["plan", ".", "--prune", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    // From anywhere: the seal is the proof, not the directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.json");
    let r = with_token(Cfgctl::new(&t), Some(token))
        .dir(elsewhere.path())
        .args(&["apply", file.to_str().unwrap(), "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(deletes(&t), 9);
}

#[tokio::test]
async fn a_resource_deleted_since_the_plan_makes_it_stale() {
    let (t, dir) = teams(1, 25, None).await;
    write(
        dir.path(),
        "team.yaml",
        "api_version: v1/config\nkind: Team\nspec: {slug: team-00, name: Renamed}\n",
    );
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["plan", ".", "--out", "p.json"])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(t.delete(team(), Some("team-00"), "").await.status, 200);
    let r = Cfgctl::new(&t)
        .dir(dir.path())
        .args(&["apply", "p.json", "--auto-approve"])
        .run()
        .await;
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(
        r.stderr
            .contains("Team/team-00 has been deleted since the plan"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "the saved plan is stale (1 resource changed since it was made): nothing was changed"
        ),
        "{}",
        r.stderr
    );
    let writes = |t: &Tenant| {
        t.emulator
            .stats()
            .log
            .iter()
            .filter(|l| l.method != "GET")
            .count()
    };
    assert_eq!(
        writes(&t),
        2,
        "the create and the delete of the test, nothing from apply"
    );
}

/// Red team D23: a saved plan is an artifact another job wrote; a `${file:}` reference put in
/// it by hand is held to the checkout it is applied in (inside the current directory, or a
/// directory its cfgctl.yaml allows for secrets), as a load would hold it: `/etc/passwd` is
/// never read and sent. The plan's own reference still applies.
#[tokio::test]
async fn a_saved_plans_file_reference_is_held_to_the_checkout() {
    let t = Tenant::start(Config {
        redact_secrets: false,
        ..Config::default()
    })
    .await;
    let work = tempfile::tempdir().unwrap();
    write(
        work.path(),
        "pf/n.yaml",
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: pf1\n  name: PF\n  slack:\n    api_url: ${file:hook.txt}\n    channel: '#x'\n",
    );
    write(
        work.path(),
        "pf/hook.txt",
        "https://hooks.example/services/D23/own\n",
    );
    let plan_file = work.path().join("pf.plan");
    let r = Cfgctl::new(&t)
        .dir(work.path())
        .args(&["plan", "pf", "--out", plan_file.to_str().unwrap()])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let text = std::fs::read_to_string(&plan_file).unwrap();
    assert!(text.contains("${file:hook.txt}"), "{text}");
    for hostile in [
        "/etc/passwd",
        "../../../../../../etc/passwd",
        "/proc/self/environ",
    ] {
        let tampered = work.path().join("tampered.plan");
        std::fs::write(
            &tampered,
            text.replace("${file:hook.txt}", &format!("${{file:{hostile}}}")),
        )
        .unwrap();
        let r = Cfgctl::new(&t)
            .dir(work.path())
            .args(&["apply", "--auto-approve", tampered.to_str().unwrap()])
            .run()
            .await;
        assert_eq!(r.code, 1, "{hostile}: {}", r.transcript());
        assert!(
            r.stderr.contains("cannot read secret file"),
            "{hostile}: {}",
            r.stderr
        );
        assert_eq!(
            t.read(Kind::named("Notifier"), Some("pf1")).await.status,
            404,
            "{hostile}"
        );
    }
    let r = Cfgctl::new(&t)
        .dir(work.path())
        .args(&["apply", "--auto-approve", plan_file.to_str().unwrap()])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let read = t.read(Kind::named("Notifier"), Some("pf1")).await;
    assert_eq!(
        read.body["notifier"]["slack"]["api_url"],
        "https://hooks.example/services/D23/own"
    );
}
