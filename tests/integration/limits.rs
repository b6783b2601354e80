//! The client's bound on an answer's size: a server that sends a list page far larger than any
//! tenant's (streamed without a length, or announcing a huge `Content-Length`) ends the run
//! with an error naming the kind, the path and the limit, and cfgctl hangs up instead of
//! reading (and holding) the body. The server here counts the bytes it managed to send before
//! the client went away: far fewer than the body it meant to send.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;

use cfgctl::api::registry::{Kind, Profile};

use crate::support::{cfgctl_in, Run};

/// The body the server means to send: 1 GiB.
const HUGE: u64 = 1 << 30;

/// How the Team list's page is sent.
#[derive(Clone, Copy)]
enum Huge {
    /// `Transfer-Encoding: chunked`, no length: only reading tells how big it is.
    Streamed,
    /// `Content-Length: HUGE`, then the bytes.
    Announced,
}

/// A server on 127.0.0.1:0 whose Team list is a page of `HUGE` bytes; everything else is an
/// empty tenant. The bytes it sent of that page arrive on the channel when the client is gone.
struct Server {
    addr: SocketAddr,
    sent: mpsc::Receiver<u64>,
}

impl Server {
    fn start(huge: Huge) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, sent) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let tx = tx.clone();
                std::thread::spawn(move || answer(stream, huge, &tx));
            }
        });
        Server { addr, sent }
    }
}

/// Reads one request and answers it (the connection is closed after each answer).
fn answer(stream: TcpStream, huge: Huge, sent: &mpsc::Sender<u64>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or_default();
    let path = target.split('?').next().unwrap_or_default();
    let mut stream = stream;
    if path == cfgctl::api::wire::collection_path(Kind::from_name("Team").unwrap()) {
        let _ = sent.send(send_huge(&mut stream, huge));
        return;
    }
    let body = if path == cfgctl::api::wire::SWAGGER_PATH {
        cfgctl::api::spec::swagger_for(Profile::Full).to_string()
    } else {
        "{}".to_string()
    };
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Sends a page of `HUGE` bytes until the client hangs up; the bytes of body written.
fn send_huge(stream: &mut TcpStream, huge: Huge) -> u64 {
    let head = match huge {
        Huge::Streamed => "transfer-encoding: chunked".to_string(),
        Huge::Announced => format!("content-length: {HUGE}"),
    };
    let start = "{\"teams\":[";
    if write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{head}\r\nconnection: close\r\n\r\n"
    )
    .is_err()
    {
        return 0;
    }
    // 64 KiB of items at a time, the first with the page's start.
    let item = "{\"slug\":\"team\",\"name\":\"Team\"},";
    let piece: String = item.repeat((64 << 10) / item.len());
    let mut sent = 0u64;
    while sent < HUGE {
        let data = if sent == 0 {
            format!("{start}{piece}")
        } else {
            piece.clone()
        };
        let framed = match huge {
            Huge::Streamed => format!("{:x}\r\n{data}\r\n", data.len()),
            Huge::Announced => data.clone(),
        };
        if stream.write_all(framed.as_bytes()).is_err() {
            break;
        }
        sent += data.len() as u64;
    }
    sent
}

fn plan(server: &Server, limit_mb: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("teams.yaml"),
        "api_version: v1/config\nkind: Team\nspec:\n  slug: platform\n  name: Platform\n",
    )
    .unwrap();
    let url = format!("http://{}", server.addr);
    cfgctl_in(
        dir.path(),
        &[
            "--url",
            &url,
            "--color",
            "never",
            "plan",
            ".",
            "--max-response-mb",
            limit_mb,
        ],
        &[],
    )
}

#[test]
fn a_streamed_list_page_past_the_limit_is_refused_while_it_arrives() {
    let server = Server::start(Huge::Streamed);
    let run = plan(&server, "1");
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "GET /api/v1/config/teams: the Team list page is larger than the limit of 1 MiB \
             (--max-response-mb); reading stopped there"
        ),
        "{}",
        run.stderr
    );
    let sent = server.sent.recv().unwrap();
    // The limit, plus what the sockets' buffers held when cfgctl hung up.
    assert!(sent < 64 << 20, "{sent} bytes sent of {HUGE}");
}

#[test]
fn a_list_page_announcing_more_than_the_limit_is_refused_before_it_is_read() {
    let server = Server::start(Huge::Announced);
    let run = plan(&server, "1");
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(&format!(
            "GET /api/v1/config/teams: the Team list page announces {HUGE} bytes, more than the \
             limit of 1 MiB (--max-response-mb); none of it was read"
        )),
        "{}",
        run.stderr
    );
    let sent = server.sent.recv().unwrap();
    assert!(sent < 64 << 20, "{sent} bytes sent of {HUGE}");
}

#[test]
fn the_default_limit_leaves_room_for_real_pages() {
    // 1,000 dashboards of 20 KB each are 20 MB: well inside the default.
    assert_eq!(cfgctl::remote::client::DEFAULT_MAX_RESPONSE_MB, 64);
    let help = crate::support::cfgctl(&["plan", "--help"]);
    assert!(
        help.stdout.contains("--max-response-mb <MIB>"),
        "{}",
        help.stdout
    );
    assert!(help.stdout.contains("[default: 64]"), "{}", help.stdout);
}
