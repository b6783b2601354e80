//! A hostile server: a tiny HTTP/1.1 server on 127.0.0.1:0 (std only, one thread per
//! connection) that speaks just enough of the API for cfgctl to plan against it, and lies in
//! every way a server can: it echoes the token in its error messages, asks for a huge
//! `Retry-After`, returns endless page tokens, puts control characters and Markdown in slugs
//! and messages, and lists `.` and `..` slugs. cfgctl (the real binary) must end with a clear
//! error or inert output, never hang, and never print the token.
//!
//! The double has a request budget: past it every answer is a 500, so a cfgctl that loops
//! forever makes the test fail instead of hanging it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cfgctl::api::registry::{Kind, Profile};
use serde_json::{json, Value};

use crate::support::{cfgctl_in, Run};

const TOKEN: &str = "tok-9f8e7d6c5b4a-SECRET";
/// Requests the double answers before it gives up (a loop in cfgctl fails the test).
const BUDGET: usize = 5_000;

/// One request as the double read it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    pub token: Option<String>,
    pub body: Value,
}

/// One answer.
pub struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    pub fn json(status: u16, body: Value) -> Answer {
        Answer {
            status,
            headers: vec![],
            body: body.to_string(),
        }
    }

    pub fn message(status: u16, message: &str) -> Answer {
        Answer::json(status, json!({ "message": message }))
    }

    pub fn header(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Option<Answer> + Send + Sync;

pub struct Hostile {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl Hostile {
    /// Starts the double; `special` answers first, the rest is an empty, well-formed tenant
    /// (the full swagger, empty lists, 404 for reads, writes echoed back).
    pub fn start(special: impl Fn(&Request) -> Option<Answer> + Send + Sync + 'static) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(special);
        {
            let (log, stop) = (Arc::clone(&log), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (log, handler) = (Arc::clone(&log), Arc::clone(&handler));
                    std::thread::spawn(move || serve(stream, &log, &*handler));
                }
            });
        }
        Hostile { addr, log, stop }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// `METHOD path` of every request, in order.
    pub fn lines(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(stream: TcpStream, log: &Mutex<Vec<Request>>, handler: &Handler) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target.clone(), String::new()),
    };
    let mut length = 0usize;
    let mut token = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() {
            return;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "api-token" => token = Some(value.trim().to_string()),
                _ => {}
            }
        }
    }
    let mut body = vec![0u8; length.min(8 << 20)];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Request {
        method,
        path,
        query,
        token,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let count = {
        let mut log = log.lock().unwrap();
        log.push(request.clone());
        log.len()
    };
    let answer = if count > BUDGET {
        Answer::message(500, "the test double's request budget is exhausted")
    } else {
        handler(&request).unwrap_or_else(|| tenant(&request))
    };
    // An answer's own content type replaces the default.
    let typed = answer
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"));
    let mut out = format!(
        "HTTP/1.1 {} X\r\n{}content-length: {}\r\nconnection: close\r\n",
        answer.status,
        if typed {
            ""
        } else {
            "content-type: application/json\r\n"
        },
        answer.body.len()
    );
    for (name, value) in &answer.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&answer.body);
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
}

/// The well-behaved part: an empty tenant of the full profile.
fn tenant(r: &Request) -> Answer {
    if r.path == cfgctl::api::wire::SWAGGER_PATH {
        return Answer::json(200, cfgctl::api::spec::swagger_for(Profile::Full));
    }
    let rest = r
        .path
        .strip_prefix("/api/v1/config/")
        .unwrap_or_default()
        .to_string();
    let (collection, slug) = match rest.split_once('/') {
        Some((c, s)) => (c.to_string(), Some(s.to_string())),
        None => (rest, None),
    };
    let Some(kind) = cfgctl::api::wire::kind_for_path(&collection) else {
        return Answer::message(404, "no such path");
    };
    let def = kind.def();
    match (r.method.as_str(), slug) {
        ("GET", None) if !def.singleton => Answer::json(200, json!({})),
        ("GET", _) => Answer::message(404, "not found"),
        ("POST", _) | ("PUT", _) => {
            let object = r.body.get(def.singular).cloned().unwrap_or(json!({}));
            Answer::json(200, json!({ def.singular: object }))
        }
        ("DELETE", _) => Answer::json(200, json!({})),
        _ => Answer::message(405, "method not allowed"),
    }
}

fn teams_page(slugs: &[&str], next: &str) -> Answer {
    let teams: Vec<Value> = slugs
        .iter()
        .map(|s| json!({"slug": s, "name": format!("Team {}", s.len())}))
        .collect();
    Answer::json(200, json!({"teams": teams, "page": {"next_token": next}}))
}

fn is_list(r: &Request, kind: Kind) -> bool {
    r.method == "GET" && r.path == cfgctl::api::wire::collection_path(kind)
}

/// A manifest folder: one Team, and `prune: ["Team/*"]`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("teams.yaml"),
        "api_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cfgctl.yaml"),
        "prune: [\"Team/*\"]\nmax_deletes: 100\n",
    )
    .unwrap();
    dir
}

fn run(server: &Hostile, dir: &Path, args: &[&str]) -> Run {
    let url = server.url();
    let mut full = vec!["--url", url.as_str(), "--token", TOKEN, "--color", "never"];
    full.extend_from_slice(args);
    cfgctl_in(dir, &full, &[])
}

/// Output a CI log or a terminal can show safely: no token, no control character but
/// newline and tab, no line that starts a workflow command.
fn assert_inert(run: &Run) {
    run.assert_clean_exit();
    for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(!text.contains(TOKEN), "the token in {name}:\n{text}");
        for line in text.lines() {
            assert!(
                !line.trim_start().starts_with("::") && !line.trim_start().starts_with("##["),
                "a workflow command in {name}: {line:?}\n{text}"
            );
            assert!(
                !line.chars().any(|c| c.is_control() && c != '\t'),
                "a control character in {name}: {line:?}"
            );
        }
    }
}

#[test]
fn a_token_echoed_by_the_server_is_redacted_everywhere() {
    let server = Hostile::start(|r| {
        let echo = format!(
            "token {} is not valid here\n::error::pwned \u{1b}[2J",
            r.token.clone().unwrap_or_default()
        );
        if r.path == cfgctl::api::wire::SWAGGER_PATH {
            return Some(Answer::message(401, &echo));
        }
        None
    });
    let dir = project();
    for args in [&["plan", "."][..], &["-vv", "plan", "."], &["drift", "."]] {
        let run = run(&server, dir.path(), args);
        assert_eq!(run.code, 1, "{}", run.transcript());
        assert_inert(&run);
        assert!(
            run.stderr
                .contains("token [REDACTED] is not valid here\\n::error::pwned \\u001b[2J"),
            "{}",
            run.stderr
        );
    }
    // The server saw the token (it is sent), and only the swagger requests were made.
    assert!(server
        .requests()
        .iter()
        .all(|r| r.token.as_deref() == Some(TOKEN) && r.path == cfgctl::api::wire::SWAGGER_PATH));
}

#[test]
fn a_token_echoed_in_a_failed_write_is_redacted() {
    let server = Hostile::start(|r| {
        (r.method == "POST").then(|| {
            Answer::message(
                400,
                &format!(
                    "invalid team for API-Token {}\r\n::warning::x",
                    r.token.clone().unwrap_or_default()
                ),
            )
        })
    });
    let dir = project();
    let run = run(
        &server,
        dir.path(),
        &["-vv", "apply", ".", "--auto-approve"],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_inert(&run);
    assert!(
        run.stdout
            .contains("create Team/platform: 400 invalid team for API-Token [REDACTED]\\r\\n::warning::x (teams.yaml:1)"),
        "{}",
        run.transcript()
    );
}

#[test]
fn a_token_in_the_url_is_never_printed() {
    let server = Hostile::start(|_| None);
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let dir = project();
    for url in [
        format!("http://user:{TOKEN}@127.0.0.1:{port}"),
        format!("http://{TOKEN}@127.0.0.1:{port}"),
        format!("http://127.0.0.1:{port}/?token={TOKEN}"),
        format!("http://127.0.0.1:{port}/?a=1&api_token={TOKEN}#x"),
    ] {
        let run = cfgctl_in(
            dir.path(),
            &["-vv", "--url", &url, "plan", "."],
            &[("CFGCTL_LOG", "trace")],
        );
        assert_eq!(run.code, 1, "{url}: {}", run.transcript());
        assert_inert(&run);
        assert!(
            run.stderr.contains("invalid target URL")
                && run.stderr.contains(&format!("127.0.0.1:{port}")),
            "{}",
            run.stderr
        );
    }
    assert!(server.requests().is_empty(), "{:?}", server.lines());
}

#[test]
fn a_huge_retry_after_ends_the_run_instead_of_hanging_it() {
    let server = Hostile::start(|r| {
        is_list(r, Kind::named("Team"))
            .then(|| Answer::message(429, "slow down").header("Retry-After", "999999999"))
    });
    let dir = project();
    let run = run(&server, dir.path(), &["--max-retries", "0", "plan", "."]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_inert(&run);
    assert!(
        run.stderr
            .contains("GET /api/v1/config/teams: 429 slow down"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_huge_retry_after_is_capped_and_counts_as_a_retry() {
    let server = Hostile::start(|r| {
        is_list(r, Kind::named("Team"))
            .then(|| Answer::message(429, "slow down").header("Retry-After", "999999999"))
    });
    // The cap is injectable: 60 s in the product, 10 ms here, so the test proves the cap
    // (and that each wait counts against max_retries) without waiting a minute.
    let mut config = cfgctl::remote::client::ClientConfig::new(server.url());
    config.max_retries = 3;
    config.max_retry_after = Duration::from_millis(10);
    let client = cfgctl::remote::client::Client::new(&config).unwrap();
    let err = client
        .list_all(
            Kind::named("Team"),
            &cfgctl::api::wire::ListQuery::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(429), "{err}");
    assert_eq!(server.lines().len(), 4, "one try and three retries");
    // And the product's cap is the contract's 60 s.
    assert_eq!(
        cfgctl::remote::client::MAX_RETRY_AFTER,
        Duration::from_secs(60)
    );
}

#[test]
fn endless_distinct_page_tokens_end_with_an_error_naming_the_kind() {
    let server = Hostile::start(|r| {
        is_list(r, Kind::named("Team")).then(|| {
            // Always a new token: the page number after the one asked for.
            let n: u64 = r
                .query
                .split('&')
                .find_map(|p| p.strip_prefix("page.token=p"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            teams_page(&[], &format!("p{}", n + 1))
        })
    });
    let dir = project();
    let run = run(&server, dir.path(), &["--max-pages", "25", "plan", "."]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_inert(&run);
    assert!(
        run.stderr
            .contains("the Team list never ends: more than 25 pages (--max-pages)"),
        "{}",
        run.stderr
    );
    let team_lists = server
        .lines()
        .iter()
        .filter(|l| *l == "GET /api/v1/config/teams")
        .count();
    assert_eq!(team_lists, 25);
}

#[test]
fn a_page_token_cycle_ends_with_an_error_naming_the_kind() {
    let server = Hostile::start(|r| {
        is_list(r, Kind::named("Team")).then(|| {
            // a → b → a → …: never the same token twice in a row.
            let next = if r.query.contains("page.token=a") {
                "b"
            } else {
                "a"
            };
            teams_page(&["t"], next)
        })
    });
    let dir = project();
    let run = run(&server, dir.path(), &["plan", "."]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_inert(&run);
    assert!(
        run.stderr
            .contains("the Team list never ends: the server returned the same page token twice"),
        "{}",
        run.stderr
    );
    assert_eq!(
        server
            .lines()
            .iter()
            .filter(|l| l.contains("/teams"))
            .count(),
        3
    );
}

#[test]
fn a_page_whose_end_misleads_the_early_request_is_still_read_right() {
    // The next page is asked for early when a page ends with `"next_token": "…"}}`; here the
    // end lies (the real token is at the start), and the lie's page is an error.
    let server = Hostile::start(|r| {
        is_list(r, Kind::named("Team")).then(|| {
            if r.query.contains("page.token=bogus") {
                Answer::message(400, "invalid page.token")
            } else if r.query.contains("page.token=real") {
                teams_page(&["other"], "")
            } else {
                Answer::json(
                    200,
                    json!({"page": {"next_token": "real"}, "teams": [{"slug": "platform", "name": "Platform"}], "x": {"next_token": "bogus"}}),
                )
            }
        })
    });
    let dir = project();
    let run = run(&server, dir.path(), &["plan", ".", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_inert(&run);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["summary"]["unchanged"], 1, "{plan}");
    assert_eq!(plan["unmanaged"], json!(["Team/other"]), "{plan}");
    let lists: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| is_list(r, Kind::named("Team")))
        .map(|r| r.query)
        .collect();
    // The first page, the real second one, and at most the one wasted guess.
    assert!(
        lists.iter().any(|l| l.contains("page.token=real")),
        "{lists:?}"
    );
    assert!(lists.len() <= 3, "{lists:?}");
}

const HOSTILE_SLUGS: [&str; 6] = [
    "evil\n::warning file=teams.yaml,line=1::pwned",
    "c1\u{9b}31mred\u{85}next",
    "bell\u{7}\u{1b}]0;title\u{7}\u{1b}[2J",
    "<img src=x onerror=alert(1)></summary>",
    "md](https://e.example) | # heading @someone",
    "cr\rfake line\u{202e}",
];

#[test]
fn control_characters_and_markdown_from_the_server_are_inert() {
    let server = Hostile::start(|r| {
        if is_list(r, Kind::named("Team")) {
            return Some(teams_page(&HOSTILE_SLUGS, ""));
        }
        (r.method == "DELETE")
            .then(|| Answer::message(400, "still used by \u{1b}[31mBucket/x\n::error::no\u{7}"))
    });
    let dir = project();
    for args in [
        &["-v", "plan", ".", "--prune"][..],
        &["plan", ".", "--prune", "--format", "markdown"],
        &["plan", ".", "--prune", "--format", "json"],
        &["-v", "drift", "."],
        &["drift", ".", "--format", "markdown"],
    ] {
        let run = run(&server, dir.path(), args);
        assert_inert(&run);
        assert!(matches!(run.code, 0 | 2), "{args:?}: {}", run.transcript());
        if args.contains(&"markdown") {
            // Inside a fenced code block (a delete's fields) text is shown as it is: the fence
            // is longer than any backtick run in it, so only the text outside is markup.
            let mut fenced = false;
            let markup: Vec<&str> = run
                .stdout
                .lines()
                .filter(|l| {
                    fenced ^= l.starts_with("```");
                    !fenced && !l.starts_with("```")
                })
                .collect();
            let markup = markup.join("\n");
            assert!(!markup.contains("<img"), "{}", run.stdout);
            assert!(!markup.contains("](https"), "{}", run.stdout);
            assert!(!markup.contains("@someone"), "{}", run.stdout);
        }
    }
    let text = run(&server, dir.path(), &["plan", ".", "--prune"]);
    assert!(
        text.stdout
            .contains("- Team/evil\\n::warning file=teams.yaml,line=1::pwned\n"),
        "{}",
        text.stdout
    );
    let markdown = run(
        &server,
        dir.path(),
        &["plan", ".", "--prune", "--format", "markdown"],
    );
    assert!(
        markdown
            .stdout
            .contains("<b>Team/&lt;img src=x onerror=alert&#40;1&#41;&gt;&lt;/summary&gt;</b>"),
        "{}",
        markdown.stdout
    );
    // The JSON plan keeps the slugs exact (JSON escapes them itself).
    let json_run = run(
        &server,
        dir.path(),
        &["plan", ".", "--prune", "--format", "json"],
    );
    let plan: Value = serde_json::from_str(&json_run.stdout).unwrap();
    let deleted: Vec<&str> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "delete")
        .filter_map(|c| c["slug"].as_str())
        .collect();
    assert_eq!(deleted.len(), HOSTILE_SLUGS.len());
    for slug in HOSTILE_SLUGS {
        assert!(deleted.contains(&slug), "{slug:?} in {deleted:?}");
    }

    let apply = run(
        &server,
        dir.path(),
        &["apply", ".", "--prune", "--auto-approve"],
    );
    assert_eq!(apply.code, 1, "{}", apply.transcript());
    assert_inert(&apply);
    assert!(
        apply
            .stdout
            .contains("still used by \\u001b[31mBucket/x\\n::error::no\\u0007"),
        "{}",
        apply.stdout
    );
    // Each hostile slug was deleted at its own, percent-encoded path.
    let deletes: Vec<String> = server
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("DELETE "))
        .collect();
    assert_eq!(deletes.len() % HOSTILE_SLUGS.len(), 0, "{deletes:?}");
    for slug in HOSTILE_SLUGS {
        let path = cfgctl::api::wire::item_path(Kind::named("Team"), Some(slug));
        assert!(
            deletes.contains(&format!("DELETE {path}")),
            "{path} in {deletes:?}"
        );
    }
}

#[test]
fn dot_slugs_on_the_server_are_never_acted_on() {
    let server = Hostile::start(|r| {
        is_list(r, Kind::named("Team")).then(|| teams_page(&[".", "..", "old"], ""))
    });
    let dir = project();
    let plan = run(&server, dir.path(), &["plan", ".", "--prune"]);
    assert_eq!(plan.code, 0, "{}", plan.transcript());
    assert_inert(&plan);
    for slug in [".", ".."] {
        assert!(
            plan.stdout.contains(&format!(
                "Warning: the target lists a Team that cfgctl cannot address: the slug \"{slug}\" cannot be used as a URL path segment"
            )),
            "{}",
            plan.stdout
        );
    }
    assert!(plan.stdout.contains("- Team/old"), "{}", plan.stdout);
    assert!(!plan.stdout.contains("- Team/.\n"), "{}", plan.stdout);

    let apply = run(
        &server,
        dir.path(),
        &["apply", ".", "--prune", "--auto-approve"],
    );
    assert_eq!(apply.code, 0, "{}", apply.transcript());
    assert_inert(&apply);
    let mut writes: Vec<String> = server
        .lines()
        .into_iter()
        .filter(|l| !l.starts_with("GET "))
        .collect();
    writes.sort();
    assert_eq!(
        writes,
        vec![
            "DELETE /api/v1/config/teams/old".to_string(),
            "POST /api/v1/config/teams".to_string(),
        ]
    );
}

#[test]
fn validate_never_prints_a_workflow_command_it_did_not_mean() {
    let dir = tempfile::tempdir().unwrap();
    // A field name with a newline, and a slug with one: both reach the messages.
    std::fs::write(
        dir.path().join("t.yaml"),
        "api_version: v1/config\nkind: Team\n\"x\\n::warning file=evil.yaml,line=1::pwned\": 1\nspec:\n  slug: \"a\\n::error::b\"\n  name: A\n  \"nam\\r\\n::notice::e\": 1\n",
    )
    .unwrap();
    let run = cfgctl_in(
        dir.path(),
        &["validate", "."],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    let annotations: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("::"))
        .collect();
    assert!(!annotations.is_empty(), "{}", run.stdout);
    for a in &annotations {
        assert!(
            a.starts_with("::error file=t.yaml,line="),
            "{a}\n{}",
            run.stdout
        );
    }
    let text_lines = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("t.yaml:"))
        .count();
    assert_eq!(annotations.len(), text_lines, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("unknown top-level field `x\\n::warning file=evil.yaml,line=1::pwned`"),
        "{}",
        run.stdout
    );
}

/// The class, not the instance: every byte cfgctl prints goes through `output`'s guarded
/// writers. Two locks hold it. `clippy.toml` forbids every way to the process's streams
/// (`std::io::stdout`/`stderr`, anstream's, raw descriptors, clap's and indicatif's own
/// printing, the print macros), so CI's `clippy -D warnings` refuses a bypass however it is
/// spelled; the only ways past it are `allow(clippy::disallowed_*)` attributes, and this test
/// pins where those are (and that clippy.toml still lists every path). On top, a scan of the
/// source for the spellings of a bypass, for a build without clippy.
#[test]
fn no_output_path_bypasses_the_output_layer() {
    let root = crate::support::root();
    // Every path clippy must keep refusing.
    let clippy = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    for path in [
        "std::io::stdout",
        "std::io::stderr",
        "anstream::stdout",
        "anstream::stderr",
        "std::os::fd::FromRawFd::from_raw_fd",
        "std::os::fd::BorrowedFd::borrow_raw",
        "clap::error::Error::print",
        "clap::Command::print_help",
        "clap::Command::print_long_help",
        "indicatif::ProgressBar::new",
        "indicatif::ProgressDrawTarget::stderr",
        "indicatif::ProgressDrawTarget::stdout",
        "std::print",
        "std::println",
        "std::eprint",
        "std::eprintln",
        "std::dbg",
    ] {
        assert!(
            clippy.contains(&format!("path = \"{path}\"")),
            "clippy.toml no longer forbids {path}"
        );
    }
    // The places allowed past clippy's list, each with the line it lets through.
    let allowed: [(&str, &str); 4] = [
        // The layer itself opens the streams, once, in its private `raw` module.
        ("src/util/output.rs", "mod raw {"),
        // clap prints its own help and usage errors, and the completion script.
        ("src/cli/mod.rs", "let _ = e.print();"),
        (
            "src/cli/mod.rs",
            "clap_complete::generate(shell, &mut cmd, \"cfgctl\", &mut std::io::stdout().lock());",
        ),
        // indicatif's bar draws on stderr itself, only on a terminal.
        (
            "src/apply/report.rs",
            "let bar = indicatif::ProgressBar::new(self.actions as u64);",
        ),
    ];
    // Spellings of a write around the layer (any receiver, `.write_all` or `writeln!` on it).
    let forbidden = [
        "io::stdout",
        "io::stderr",
        ", stdout}",
        ", stderr}",
        ", stdout,",
        ", stderr,",
        "anstream::stdout(",
        "anstream::stderr(",
        "from_raw_fd(",
        "borrow_raw(",
        "libc::write",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/proc/self/fd",
        "print!",
        "println!",
        "eprint!",
        "eprintln!",
        "dbg!",
        ".print()",
        "print_help(",
        "print_long_help(",
        "ProgressBar::new",
        "ProgressDrawTarget::",
        "MultiProgress::",
    ];
    let mut found = Vec::new();
    let mut allows_seen = Vec::new();
    for entry in walkdir::WalkDir::new(root.join("src")) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // The layer's own tests exercise it, and its `raw` module is the one way out.
        let in_layer = rel == "src/util/output.rs";
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("").trim();
            if code.contains("clippy::disallowed_") {
                // The item the attribute lets through is on the next line.
                let next = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
                allows_seen.push((rel.clone(), next.to_string()));
                continue;
            }
            if in_layer {
                continue;
            }
            let is_allowed = allowed.iter().any(|(f, l)| *f == rel && *l == code);
            if !is_allowed && (forbidden.iter().any(|f| code.contains(f)) || bare_stream_call(code))
            {
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "write through crate::util::output::stdout()/stderr() instead:\n{}",
        found.join("\n")
    );
    let mut expected: Vec<(String, String)> = allowed
        .iter()
        .map(|(f, l)| (f.to_string(), l.to_string()))
        .collect();
    expected.sort();
    allows_seen.sort();
    assert_eq!(
        allows_seen, expected,
        "an allow(clippy::disallowed_*) outside the places that may write around the layer"
    );
}

/// A call of `stdout()`/`stderr()` that is not `output`'s (`use std::io::stderr;` then
/// `writeln!(stderr(), ..)`). A child process's pipes (`Command::new(..).stdout(Stdio::piped())`)
/// are not the process's streams.
fn bare_stream_call(code: &str) -> bool {
    ["stdout(", "stderr("].iter().any(|call| {
        code.match_indices(call).any(|(at, _)| {
            let before = &code[..at];
            let name_goes_on = before
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let child_pipe =
                before.ends_with('.') && code[at..].starts_with(&format!("{call}Stdio::"));
            !name_goes_on && !before.ends_with("output::") && !child_pipe
        })
    })
}

/// R4-1: a server that echoes the request body in another JSON dialect (`\/`, Go's `\u0026`,
/// every character escaped, a JSON document escaped again) or cuts the echo short: the
/// resolved secret is printed in none of them.
#[test]
fn a_secret_echoed_in_any_json_dialect_or_cut_short_is_redacted() {
    const URL: &str = "https://hooks.slack.com/services/T0R4/B0R4/dialect&secret<9>";
    let dialects: [fn(&str) -> String; 6] = [
        |body| body.replace('/', "\\/"),
        |body| {
            body.replace('&', "\\u0026")
                .replace('<', "\\u003c")
                .replace('>', "\\u003e")
        },
        |body| {
            body.chars()
                .map(|c| format!("\\u{:04x}", u32::from(c)))
                .collect()
        },
        |body| serde_json::to_string(&serde_json::to_string(body).unwrap()).unwrap(),
        |body| {
            body.chars()
                .take(body.find("dialect").unwrap() + 4)
                .collect()
        },
        |body| format!("{}...", &body[..body.find("secret").unwrap()]),
    ];
    for (i, dialect) in dialects.into_iter().enumerate() {
        let server = Hostile::start(move |r| {
            (r.method == "POST").then(|| {
                let echoed = serde_json::to_string(&r.body).unwrap_or_default();
                Answer::message(400, &format!("bad body: {}", dialect(&echoed)))
            })
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("n.yaml"),
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: n\n  name: N\n  slack:\n    channel: '#x'\n    api_url: ${env:R4_SLACK_URL}\n",
        )
        .unwrap();
        let url = server.url();
        let run = cfgctl_in(
            dir.path(),
            &[
                "--url",
                &url,
                "--token",
                TOKEN,
                "--color",
                "never",
                "-vv",
                "apply",
                ".",
                "--auto-approve",
            ],
            &[("R4_SLACK_URL", URL)],
        );
        assert_eq!(run.code, 1, "dialect {i}: {}", run.transcript());
        assert_inert(&run);
        let posted = server.requests().into_iter().find(|r| r.method == "POST");
        assert!(posted.is_some(), "dialect {i}: nothing was sent");
        let text = run.transcript();
        assert!(text.contains("bad body"), "dialect {i}: {text}");
        for leak in [
            "T0R4/B0R4",
            "T0R4\\/B0R4",
            "dialect",
            "\\u0054\\u0030\\u0052\\u0034",
        ] {
            assert!(!text.contains(leak), "dialect {i} leaks {leak}: {text}");
        }
        assert!(text.contains("[REDACTED]"), "dialect {i}: {text}");
    }
}

/// A target's description with Team's definition reaching `extra` definitions through `deep`.
fn description_with(extra: serde_json::Map<String, Value>) -> Value {
    let mut doc = cfgctl::api::spec::swagger_for(Profile::Full);
    let defs = doc["definitions"].as_object_mut().unwrap();
    defs.extend(extra);
    defs["configv1Team"]["properties"]["deep"] = json!({"$ref": "#/definitions/L0"});
    doc
}

/// R4-6 and R4-7: a target whose description is a 30-level `$ref` DAG (each level's two fields
/// naming the next: about 4 KB, 2^30 paths) or a 10,000-long `$ref` chain. The plan is made
/// (the walk is bounded and works each definition out once), with no stack overflow.
#[test]
fn a_hostile_description_walk_is_bounded() {
    let mut dag = serde_json::Map::new();
    for i in 0..30 {
        let next = format!("#/definitions/L{}", i + 1);
        dag.insert(
            format!("L{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    dag.insert(
        "L30".into(),
        json!({"type": "object", "properties": {"team_slug": {"type": "string"}}}),
    );
    let mut chain = serde_json::Map::new();
    for i in 0..10_000 {
        let next = format!("#/definitions/L{}", i + 1);
        chain.insert(format!("L{i}"), json!({"type": "object", "properties": {"next": {"$ref": next}, "team_slug": {"type": "string"}}}));
    }
    for (name, extra) in [("dag", dag), ("chain", chain)] {
        let doc = description_with(extra);
        let server = Hostile::start(move |r| {
            (r.path == cfgctl::api::wire::SWAGGER_PATH).then(|| Answer::json(200, doc.clone()))
        });
        let dir = project();
        let run = run(&server, dir.path(), &["plan", "."]);
        assert_eq!(run.code, 0, "{name}: {}", run.transcript());
        assert_inert(&run);
        assert!(
            run.stdout.contains("+ Team/platform"),
            "{name}: {}",
            run.transcript()
        );
    }
}

/// D3 of the red team: a server whose error body is JSON of another shape (a string `code`)
/// echoes the sent secret past 200 bytes of padding: the message is redacted whole before it
/// is cut, so no prefix of the secret is printed.
#[test]
fn a_secret_echoed_where_a_long_message_is_cut_is_redacted_before_the_cut() {
    const SLK: &str = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6";
    for pad in [120, 140, 170, 190] {
        let server = Hostile::start(move |r| {
            (r.method == "POST").then(|| {
                let sent = r.body.to_string();
                let at = sent.find("a1b2").unwrap_or(0);
                let body = json!({"code": "invalid_argument",
                    "message": format!("{}secret raw={}", "x".repeat(pad), &sent[at..])});
                Answer {
                    status: 400,
                    headers: vec![],
                    body: format!("{} ", body),
                }
            })
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("n.yaml"),
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: n\n  name: N\n  slack:\n    channel: '#x'\n    api_url: ${env:D3_SLK}\n",
        )
        .unwrap();
        let url = server.url();
        let run = cfgctl_in(
            dir.path(),
            &[
                "--url",
                &url,
                "--token",
                TOKEN,
                "--color",
                "never",
                "apply",
                ".",
                "--auto-approve",
            ],
            &[("D3_SLK", SLK)],
        );
        assert_eq!(run.code, 1, "{}", run.transcript());
        let text = run.transcript();
        assert!(text.contains("secret raw="), "{pad}: {text}");
        assert!(!text.contains("a1b2c3"), "{pad}: {text}");
    }
}

/// A server that echoes the request body percent-encoded, HTML-escaped, upper-cased or in
/// base64 (where the secret starts at any offset of a three-byte group): the resolved secret
/// is printed in none of them.
#[test]
fn a_secret_echoed_encoded_or_in_a_base64_body_is_redacted() {
    const URL: &str = "https://hooks.slack.com/services/T0R5/B0R5/probe&secret<9>";
    fn pct(s: &str) -> String {
        s.bytes()
            .map(|b| match b.is_ascii_alphanumeric() {
                true => char::from(b).to_string(),
                false => format!("%{b:02X}"),
            })
            .collect()
    }
    type Dialect = (&'static str, fn(&str) -> String);
    /// Base64 wrapped in lines of `width`, as MIME (76, CRLF) and PEM (64, LF) write it.
    fn wrapped(b: &str, width: usize, eol: &str) -> String {
        let text = crate::support::base64(b.as_bytes());
        let lines: Vec<&str> = text
            .as_bytes()
            .chunks(width)
            .map(|c| std::str::from_utf8(c).unwrap_or_default())
            .collect();
        lines.join(eol)
    }
    let dialects: [Dialect; 8] = [
        ("percent", |b| pct(b)),
        ("html", |b| {
            b.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('"', "&quot;")
        }),
        ("upper", |b| b.to_uppercase()),
        ("base64", |b| crate::support::base64(b.as_bytes())),
        ("base64+1", |b| {
            crate::support::base64(format!(" {b}").as_bytes())
        }),
        ("base64+2", |b| {
            crate::support::base64(format!("  {b}").as_bytes())
        }),
        // Both wrapped so that the secret spans a line break.
        ("base64 mime", |b| {
            wrapped(&format!("{:30}{b}", ""), 76, "\r\n")
        }),
        ("base64 pem", |b| wrapped(&format!(" {b}"), 64, "\n")),
    ];
    // The secret's middle as base64 at each offset, and upper-cased.
    let middle = b"services/T0R5/B0R5/probe";
    let mut leaks: Vec<String> = (0..3)
        .map(|k| crate::support::base64(&[&b"  "[..k], middle].concat())[4..20].to_string())
        .collect();
    leaks.extend(["T0R5".into(), "t0r5".into(), "probe".into(), "PROBE".into()]);
    for (name, dialect) in dialects {
        let server = Hostile::start(move |r| {
            (r.method == "POST").then(|| {
                let body = serde_json::to_string(&r.body).unwrap_or_default();
                Answer::message(400, &format!("bad body: {}", dialect(&body)))
            })
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("n.yaml"),
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: n\n  name: N\n  slack:\n    channel: '#x'\n    api_url: ${env:R5_SLACK_URL}\n",
        )
        .unwrap();
        let url = server.url();
        let args = ["--url", &url, "--token", TOKEN, "--color", "never", "-vv"];
        let run = cfgctl_in(
            dir.path(),
            &[&args[..], &["apply", ".", "--auto-approve"]].concat(),
            &[("R5_SLACK_URL", URL)],
        );
        assert_eq!(run.code, 1, "{name}: {}", run.transcript());
        let text = run.transcript();
        assert!(text.contains("bad body: "), "{name}: {text}");
        assert!(text.contains("[REDACTED]"), "{name}: {text}");
        // A wrapped echo is read with its line breaks (as printed, or escaped) taken out.
        let joined = ["\\r\\n", "\\n", "\r\n", "\n"]
            .iter()
            .fold(text.clone(), |t, eol| t.replace(eol, ""));
        for leak in &leaks {
            assert!(!text.contains(leak.as_str()), "{name} leaks {leak}: {text}");
            assert!(
                !joined.contains(leak.as_str()),
                "{name} leaks {leak} across lines: {text}"
            );
        }
    }
}

/// A target that takes the connection and never answers: each request times out after
/// `--timeout` and is retried `--max-retries` times, which at the defaults is minutes of
/// silence in a CI log. The first retry after a timeout says so, once, and the run then fails
/// with the request that timed out.
#[test]
fn a_target_that_never_answers_is_said_at_the_first_retry_and_then_fails() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    std::thread::spawn(move || {
        // Connections held open, never read from nor answered.
        let held: Vec<TcpStream> = listener.incoming().map_while(Result::ok).collect();
        drop(held);
    });
    let dir = one_team();
    let args = [
        "--url",
        &url,
        "--timeout",
        "1",
        "--max-retries",
        "2",
        "plan",
        ".",
    ];
    let run = cfgctl_in(dir.path(), &args, &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    let said = run
        .stderr
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("retrying"))
        .collect::<Vec<_>>();
    assert_eq!(said.len(), 1, "{}", run.transcript());
    assert!(said[0].contains("timed out"), "{}", run.transcript());
    assert!(said[0].contains("--timeout 1 s"), "{}", run.transcript());
    assert!(run.stderr.contains("timed out"), "{}", run.transcript());
}

/// A proxy or a sign-in page in front of the API answers lists with a 200 HTML page: the
/// error says so, rather than that the body is not a JSON list page.
#[test]
fn an_html_page_in_place_of_the_api_is_said_to_be_one() {
    let server = Hostile::start(|r| {
        (r.method == "GET").then(|| {
            Answer {
                status: 200,
                headers: vec![],
                body: "<html><body>Please sign in</body></html>".into(),
            }
            .header("Content-Type", "text/html; charset=utf-8")
        })
    });
    let dir = one_team();
    let url = server.url();
    let run = cfgctl_in(dir.path(), &["--url", &url, "plan", "."], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "the answer is an HTML page (Content-Type: text/html), not the API's JSON: a proxy \
             or a sign-in page in front of the API? Check --url"
        ),
        "{}",
        run.transcript()
    );
}

/// A repository of one Team.
fn one_team() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("team.yaml"),
        "api_version: v1/config\nkind: Team\nspec:\n  slug: t\n  name: T\n",
    )
    .unwrap();
    dir
}
