use super::*;
use clap::CommandFactory;
use std::path::PathBuf;

#[test]
fn cli_is_well_formed() {
    Cli::command().debug_assert();
}

/// An error whose message already holds its source's (thiserror's `{source}` next to
/// `#[source]`, walkdir's own errors) is printed with that message once.
#[test]
fn an_error_line_says_each_cause_once() {
    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}; nothing was written")]
    struct Repeats {
        path: String,
        #[source]
        source: std::io::Error,
    }
    let denied = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    let err = anyhow::Error::new(Repeats {
        path: "out/x.yaml".into(),
        source: denied(),
    })
    .context("exporting");
    assert_eq!(
        error_line(&err),
        format!("exporting: out/x.yaml: {}; nothing was written", denied())
    );
    assert_eq!(format!("{err:#}").matches(&denied().to_string()).count(), 2);
    // Causes that add something are all kept, in order.
    let err = anyhow::Error::new(denied()).context("reading the token file t");
    assert_eq!(
        error_line(&err),
        format!("reading the token file t: {}", denied())
    );
}

#[test]
fn local_defaults_to_the_project_store() {
    let cli = parse_from(["cfgctl", "--local", "plan"]).unwrap();
    let target = cli.command.target().unwrap();
    assert_eq!(target.local, Some(PathBuf::from(".cfgctl/local.db")));
    let cli = parse_from(["cfgctl", "plan", "--local=x.db"]).unwrap();
    let target = cli.command.target().unwrap();
    assert_eq!(target.local, Some(PathBuf::from("x.db")));
}

/// `cfgctl --url U plan` (the grammar of docs/product.md §4, the perf harness) and `cfgctl plan --url U`
/// are the same command line, for every target and cache option.
#[test]
fn target_options_go_before_or_after_the_command() {
    let flags = [
        "--url=https://t.example.com",
        "--token=t",
        "--token-file=f",
        "--parallelism=3",
        "--max-retries=2",
        "--timeout=9",
        "--insecure-http",
        "--max-pages=7",
        "--max-response-mb=5",
        "--cache-dir=c",
        "--no-cache",
    ];
    let before = parse_from(["cfgctl"].into_iter().chain(flags).chain(["plan", "d"])).unwrap();
    let after = parse_from(["cfgctl", "plan", "d"].into_iter().chain(flags)).unwrap();
    for cli in [&before, &after] {
        let Command::Plan(PlanArgs { target, cache, .. }) = &cli.command else {
            panic!("not plan");
        };
        assert_eq!(target.url.as_deref(), Some("https://t.example.com"));
        assert_eq!(target.token.as_deref(), Some("t"));
        assert_eq!(target.token_file, Some(PathBuf::from("f")));
        assert_eq!(
            (target.parallelism, target.max_retries, target.timeout),
            (3, 2, 9)
        );
        assert!(target.insecure_http);
        assert_eq!((target.max_pages, target.max_response_mb), (7, 5));
        assert_eq!(cache.dir(), None);
        assert!(cache.no_cache);
    }
    // Written after the name wins over written before it.
    let cli = parse_from(["cfgctl", "--timeout=1", "drift", "--timeout=2"]).unwrap();
    assert_eq!(cli.command.target().unwrap().timeout, 2);
    let cli = parse_from(["cfgctl", "--parallelism=4", "apply"]).unwrap();
    assert_eq!(cli.command.target().unwrap().parallelism, 4);
}

#[test]
fn offline_commands_neither_show_nor_take_target_options() {
    for (name, args) in [
        ("validate", &["validate", "."][..]),
        ("schema", &["schema"]),
        ("completions", &["completions", "bash"]),
    ] {
        let mut cmd = Cli::command();
        cmd.build();
        let sub = cmd.find_subcommand_mut(name).unwrap();
        let help = sub.render_long_help().to_string();
        for flag in ["--url", "--token", "--local", "--timeout", "--no-cache"] {
            assert!(!help.contains(flag), "{name} --help lists {flag}:\n{help}");
        }
        assert!(!help.contains("Target options"), "{help}");
        let mut line = vec!["cfgctl"];
        line.extend_from_slice(args);
        line.push("--url=https://t.example.com");
        let err = parse_from(&line).unwrap_err().to_string();
        assert!(err.contains("unexpected argument '--url"), "{err}");
        // Before the name, as docs/product.md §4's grammar has it: accepted, and not used.
        let mut line = vec!["cfgctl", "--url=https://t.example.com"];
        line.extend_from_slice(args);
        assert!(parse_from(&line).is_ok());
    }
}

#[test]
fn serve_refuses_target_options_and_takes_its_token() {
    for line in [
        &["cfgctl", "serve", "--url=http://x"][..],
        &["cfgctl", "--url=http://x", "serve"],
        &["cfgctl", "--local", "serve"],
        &["cfgctl", "--timeout=3", "serve"],
    ] {
        let err = parse_from(line).unwrap_err();
        assert_eq!(err.exit_code(), 2, "a usage error: {err}");
        let text = err.to_string();
        assert!(text.contains("Usage: cfgctl serve"), "{text}");
    }
    let text = parse_from(["cfgctl", "--url=http://x", "serve"])
        .unwrap_err()
        .to_string();
    assert!(text.contains("--url is not an option of `serve`"), "{text}");
    for line in [
        &["cfgctl", "--token=s", "serve"][..],
        &["cfgctl", "serve", "--token=s"],
    ] {
        let Command::Serve(ServeArgs { token, .. }) = parse_from(line).unwrap().command else {
            panic!("not serve");
        };
        assert_eq!(token.as_deref(), Some("s"));
    }
}
