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

/// A command's own options come first, then the target's, then the global ones; `validate`
/// (offline) and `serve` (a target itself) list no target option.
#[test]
fn help_shows_a_commands_own_options_first() {
    for command in ["plan", "validate", "serve"] {
        let run = Cfgctl::bare()
            .args(&[command, "--help"])
            .env("COLUMNS", "100")
            .run_blocking();
        assert_eq!(run.code, 0, "{}", run.transcript());
        cfgctl_snapshot!(format!("help_{command}"), run.stdout);
    }
}

#[test]
fn serve_refuses_a_url_wherever_it_is_written() {
    // An unreadable --swagger ends a serve that took the URL (rather than serve for ever).
    let swagger = "--swagger=/nonexistent/swagger.json";
    for args in [
        &["serve", "--url", "https://t.example.com", swagger][..],
        &["--url", "https://t.example.com", "serve", swagger],
    ] {
        let run = Cfgctl::bare().args(args).run_blocking();
        assert_eq!(run.code, 1, "{}", run.transcript());
        assert!(run.stdout.is_empty(), "{}", run.transcript());
        assert!(
            run.stderr.starts_with("error: ") && run.stderr.contains("--url"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("Usage: cfgctl serve"), "{}", run.stderr);
    }
}

/// `--local` on the command line wins over a `CFGCTL_URL` in the environment (a flag beats
/// its variable), before or after the command's name; `--url` and `--local` both written
/// still name two targets.
#[test]
fn a_local_flag_wins_over_the_url_variable() {
    let store = tempfile::tempdir().unwrap();
    let local = format!("--local={}", store.path().join("local.db").display());
    for args in [
        vec!["plan", local.as_str(), "fixtures/valid"],
        vec![local.as_str(), "plan", "fixtures/valid"],
    ] {
        let run = Cfgctl::bare()
            .args(&args)
            .env("CFGCTL_URL", "https://unreachable.example.invalid")
            .run_blocking();
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert!(
            run.stdout.contains("cfgctl plan for local:"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("26 to create"), "{}", run.stdout);
    }
    let both = Cfgctl::bare()
        .args(&[
            "--url",
            "https://t.example.com",
            "plan",
            local.as_str(),
            "fixtures/valid",
        ])
        .run_blocking();
    assert_eq!(both.code, 1, "{}", both.transcript());
    assert_eq!(
        both.stderr,
        "error: --url and --local name two targets: choose one\n"
    );
}

/// An error whose message already holds its cause's (the export's `{path}: {source}`) says
/// the cause once.
#[test]
fn an_error_says_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let run = Cfgctl::bare()
        .args(&[
            &format!("--local={}", dir.path().join("local.db").display()),
            "export",
            "--out",
            &file.join("out").display().to_string(),
        ])
        .run_blocking();
    assert_eq!(run.code, 1, "{}", run.transcript());
    let cause = std::io::Error::from_raw_os_error(20).to_string();
    assert_eq!(run.stderr.matches(&cause).count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.ends_with("; nothing was written\n"),
        "{}",
        run.stderr
    );
}

/// A tab in a manifest's indentation says so, at the tab, not the parser's own words
/// ("while scanning a plain scalar, found a tab") at the end of the line before.
#[test]
fn a_tab_in_yaml_indentation_says_to_indent_with_spaces_at_the_tab() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expected) in [
        (
            "api_version: v1/config\nkind: Team\nspec:\n  slug: a\n\tname: A\n",
            "team.yaml:5:1: error: invalid YAML: YAML indents with spaces, not tabs",
        ),
        (
            "api_version: v1/config\nkind: Team\nspec:\n\tslug: a\n",
            "team.yaml:4:1: error: invalid YAML: YAML indents with spaces, not tabs",
        ),
        (
            "api_version: v1/config\nkind: Team\nspec:\n  slug: a\n  \tname: A\n",
            "team.yaml:5:3: error: invalid YAML: YAML indents with spaces, not tabs",
        ),
    ] {
        crate::support::write(dir.path(), "team.yaml", text);
        let run = Cfgctl::bare()
            .dir(dir.path())
            .args(&["validate", "."])
            .run_blocking();
        assert_eq!(run.code, 1, "{}", run.transcript());
        assert_eq!(
            run.stdout.lines().next(),
            Some(expected),
            "{}",
            run.transcript()
        );
    }
}

/// A URL with the API's path (`/api/v1`, as the API's own docs write it) is refused with what
/// to give instead, not sent to a doubled path that answers 404.
#[test]
fn a_url_with_the_api_path_says_to_drop_the_path() {
    for url in [
        "http://127.0.0.1:8080/api/v1",
        "http://127.0.0.1:8080/api/v1/",
        "https://tenant.example.com/api/v1/config",
    ] {
        let run = Cfgctl::bare()
            .args(&["--url", url, "plan", "fixtures/valid"])
            .run_blocking();
        assert_eq!(run.code, 1, "{}", run.transcript());
        let base = url.split("/api/").next().unwrap();
        assert_eq!(
            run.stderr,
            format!(
                "error: the target URL holds the API's path (`/api/...`): give the tenant's \
                 address alone, --url {base}\n"
            ),
            "{}",
            run.transcript()
        );
    }
}

/// Nothing listening at the URL: said at once (no retries before the target has ever
/// answered), with the URL tried and where it came from to check.
#[test]
fn connection_refused_says_what_was_tried_and_to_check_the_url() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let run = Cfgctl::bare()
        .args(&["--url", &url, "plan", "fixtures/valid"])
        .run_blocking();
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "cannot connect to {url}: nothing answers there; is the tenant's URL right (--url)?"
        )),
        "{}",
        run.transcript()
    );
}
