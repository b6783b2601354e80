//! The command line's first-hour edges: what a new user meets before anything works. A
//! missing token told apart from a wrong one, a URL without a scheme, a flag that wins over
//! its environment variable, `--help` that shows a command's own flags first, flags a command
//! does not take refused, and an error printed once however many layers it went through.

use cfgctl::emulator::Config;

use crate::support::{cfgctl_snapshot, Cfgctl, Tenant};

const SECRET: &str = "first-hour-secret-7c1e";

async fn guarded() -> Tenant {
    Tenant::start(Config {
        token: Some(SECRET.into()),
        ..Config::default()
    })
    .await
}

#[tokio::test]
async fn a_missing_token_and_a_wrong_token_are_told_apart() {
    let t = guarded().await;
    let missing = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid"])
        .run()
        .await;
    assert_eq!(missing.code, 1, "{}", missing.transcript());
    assert!(missing.stderr.contains(": 401 "), "{}", missing.stderr);
    assert!(
        missing.stderr.ends_with(
            "; the target requires a token: none was given (--token, CFGCTL_TOKEN or --token-file)\n"
        ),
        "{}",
        missing.stderr
    );
    let wrong = Cfgctl::new(&t)
        .args(&["plan", "fixtures/valid", "--token", "not-the-token"])
        .run()
        .await;
    assert_eq!(wrong.code, 1, "{}", wrong.transcript());
    assert!(
        wrong.stderr.ends_with("; the target refused the token\n"),
        "{}",
        wrong.stderr
    );
    assert!(!wrong.stderr.contains("none was given"), "{}", wrong.stderr);
    for run in [&missing, &wrong] {
        assert!(!run.stderr.contains(SECRET) && !run.stderr.contains("not-the-token"));
    }
}

#[test]
fn a_url_without_a_scheme_says_what_it_lacks() {
    let run = Cfgctl::bare()
        .args(&["--url", "tenant.example.com", "plan", "fixtures/valid"])
        .run_blocking();
    cfgctl_snapshot!(run.transcript(), @r"
    exit code: 1
    --- stdout
    --- stderr
    error: the target URL has no scheme: did you mean https://tenant.example.com?
    ");
}
