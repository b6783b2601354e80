//! `scripts/install.sh` against release files served from 127.0.0.1: a verified archive is
//! installed and runs, a wrong checksum is refused with nothing installed, an unknown platform
//! gets a clear message (or, with --source-fallback, the `cargo install` of the tag).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::{root, Run};

/// A tiny std-only HTTP/1.0 file server on 127.0.0.1:0 that records the paths asked for and
/// stops when dropped.
struct FileServer {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    fn start(files: BTreeMap<String, Vec<u8>>) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (Arc::clone(&requests), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    serve(stream, &files, &log);
                }
            }
        });
        FileServer {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut stream: TcpStream, files: &BTreeMap<String, Vec<u8>>, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Skip the headers.
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    if path.is_empty() {
        return;
    }
    log.lock().unwrap().push(path.clone());
    let (status, body): (&str, &[u8]) = match files.get(&path) {
        Some(b) => ("200 OK", b),
        None => ("404 Not Found", b"not found\n"),
    };
    let _ = write!(
        stream,
        "HTTP/1.0 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(body);
}

const VERSION: &str = "v9.9.9";

/// The release target this machine's archive is built for, as install.sh names it.
fn host_target() -> String {
    let os = match std::env::consts::OS {
        "linux" => "unknown-linux-musl",
        "macos" => "apple-darwin",
        other => panic!("no release target for {other}"),
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn sha256_hex(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .or_else(|_| {
            Command::new("shasum")
                .args(["-a", "256"])
                .arg(path)
                .output()
        })
        .expect("sha256sum or shasum runs");
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// A release archive in the layout of release.yml, holding a `cfgctl` that prints a version
/// line (a stand-in: packing the real debug binary would cost seconds per test).
fn archive(work: &Path, target: &str) -> (String, Vec<u8>, String) {
    let name = format!("cfgctl-{VERSION}-{target}");
    let dir = work.join("pack").join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("cfgctl");
    std::fs::write(&bin, "#!/bin/sh\necho \"cfgctl 9.9.9 (commit test)\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let file = work.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&file)
        .arg("-C")
        .arg(work.join("pack"))
        .arg(&name)
        .status()
        .expect("tar runs");
    assert!(status.success());
    let hash = sha256_hex(&file);
    (
        format!("{name}.tar.gz"),
        std::fs::read(&file).unwrap(),
        hash,
    )
}

/// The files of a release at `/releases/TAG/…`: the host's archive and a SHA256SUMS whose
/// line for it holds `hash` (the right one unless a test says otherwise).
fn release(work: &Path, tamper: bool) -> BTreeMap<String, Vec<u8>> {
    let (name, bytes, hash) = archive(work, &host_target());
    let hash = if tamper {
        // Same length, one digit off.
        let flipped = if hash.starts_with('0') { "1" } else { "0" };
        format!("{flipped}{}", &hash[1..])
    } else {
        hash
    };
    let sums = format!(
        "{}  cfgctl-{VERSION}-riscv64gc-unknown-linux-musl.tar.gz\n{hash}  {name}\n",
        "ab".repeat(32)
    );
    BTreeMap::from([
        (format!("/releases/{VERSION}/{name}"), bytes),
        (format!("/releases/{VERSION}/SHA256SUMS"), sums.into_bytes()),
    ])
}

fn install_sh(args: &[&str], env: &[(&str, &str)], home: &Path) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg(root().join("scripts/install.sh")).args(args);
    for var in [
        "CFGCTL_VERSION",
        "CFGCTL_REPO",
        "CFGCTL_BASE_URL",
        "CFGCTL_INSTALL_DIR",
        "CFGCTL_SOURCE_FALLBACK",
        "CFGCTL_OS",
        "CFGCTL_ARCH",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("sh runs"))
}

#[test]
fn a_verified_archive_is_installed_and_runs() {
    let work = tempfile::tempdir().unwrap();
    let server = FileServer::start(release(work.path(), false));
    let bin_dir = work.path().join("bin");
    let base = format!("{}/releases", server.url());
    let run = install_sh(
        &[
            "--version",
            VERSION,
            "--base-url",
            &base,
            "--dir",
            bin_dir.to_str().unwrap(),
        ],
        &[],
        work.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("installed cfgctl {VERSION} ({})", host_target())),
        "{}",
        run.stderr
    );
    // The platform was detected (uname), and only the release's two files were fetched.
    assert_eq!(
        server.requests(),
        [
            format!("/releases/{VERSION}/SHA256SUMS"),
            format!(
                "/releases/{VERSION}/cfgctl-{VERSION}-{}.tar.gz",
                host_target()
            ),
        ]
    );
    let out = Command::new(bin_dir.join("cfgctl"))
        .arg("--version")
        .output()
        .expect("the installed cfgctl runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "cfgctl 9.9.9 (commit test)\n"
    );
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&bin_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["cfgctl"]);
}

#[test]
fn a_wrong_checksum_is_refused_and_nothing_is_installed() {
    let work = tempfile::tempdir().unwrap();
    let server = FileServer::start(release(work.path(), true));
    let bin_dir = work.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::write(bin_dir.join("cfgctl"), "the previous cfgctl").unwrap();
    let run = install_sh(
        &["--version", VERSION, "--dir", bin_dir.to_str().unwrap()],
        &[("CFGCTL_BASE_URL", &format!("{}/releases/", server.url()))],
        work.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "checksum mismatch for cfgctl-{VERSION}-{}.tar.gz",
            host_target()
        )) && run.stderr.contains("nothing was installed"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(bin_dir.join("cfgctl")).unwrap(),
        "the previous cfgctl"
    );
    assert_eq!(std::fs::read_dir(&bin_dir).unwrap().count(), 1);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_unknown_platform_gets_a_clear_message() {
    let work = tempfile::tempdir().unwrap();
    let server = FileServer::start(release(work.path(), false));
    let bin_dir = work.path().join("bin");
    let run = install_sh(
        &[
            "--version",
            VERSION,
            "--repo",
            "https://github.com/OWNER/cfgctl",
            "--base-url",
            &format!("{}/releases", server.url()),
            "--dir",
            bin_dir.to_str().unwrap(),
        ],
        &[("CFGCTL_OS", "Plan9"), ("CFGCTL_ARCH", "mips")],
        work.path(),
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "install.sh: error: no prebuilt cfgctl for Plan9/mips (releases have x86_64 and aarch64 for Linux and macOS)\n\
         install.sh: build it from source instead: cargo install --locked --git https://github.com/OWNER/cfgctl --tag v9.9.9 (or pass --source-fallback)\n"
    );
    assert!(server.requests().is_empty());
    assert!(!bin_dir.exists());
}

#[test]
fn source_fallback_runs_cargo_install_of_the_tag() {
    let work = tempfile::tempdir().unwrap();
    let server = FileServer::start(release(work.path(), false));
    // A stand-in `cargo` that records its arguments and "builds" into --root.
    let fake = work.path().join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let log = work.path().join("cargo-args");
    std::fs::write(
        fake.join("cargo"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" > '{}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\" && printf '#!/bin/sh\\necho built\\n' > \"$root/bin/cfgctl\" && chmod 755 \"$root/bin/cfgctl\"\n",
            log.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(fake.join("cargo"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let bin_dir = work.path().join("bin");
    // The release has no archive for FreeBSD/x86_64: the tag is built from source.
    let run = install_sh(
        &["--source-fallback"],
        &[
            ("PATH", &path),
            ("CFGCTL_VERSION", VERSION),
            ("CFGCTL_REPO", "https://github.com/OWNER/cfgctl"),
            ("CFGCTL_BASE_URL", &format!("{}/releases", server.url())),
            ("CFGCTL_INSTALL_DIR", bin_dir.to_str().unwrap()),
            ("CFGCTL_OS", "FreeBSD"),
            ("CFGCTL_ARCH", "x86_64"),
        ],
        work.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let args = std::fs::read_to_string(&log).unwrap();
    assert!(
        args.starts_with(
            "install --locked --git https://github.com/OWNER/cfgctl --tag v9.9.9 --root "
        ) && args.ends_with(" cfgctl\n"),
        "{args}"
    );
    let out = Command::new(bin_dir.join("cfgctl")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "built\n");
}

#[test]
fn plain_http_to_another_host_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let run = install_sh(
        &[
            "--version",
            VERSION,
            "--base-url",
            "http://downloads.example.com/cfgctl",
        ],
        &[],
        work.path(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "install.sh: error: refusing to download from http://downloads.example.com/cfgctl: use an https:// URL\n"
    );
    assert!(!PathBuf::from(work.path())
        .join(".local/bin/cfgctl")
        .exists());
}

/// What install.sh says about a base URL, without any download: the platform is one no release
/// has, so a URL that passes the check ends at "no prebuilt cfgctl" (exit 3) before any request.
fn url_verdict(url: &str) -> (i32, String) {
    let work = tempfile::tempdir().unwrap();
    let run = install_sh(
        &["--version", VERSION, "--base-url", url],
        &[("CFGCTL_OS", "Plan9"), ("CFGCTL_ARCH", "mips")],
        work.path(),
    );
    assert!(
        !work.path().join(".local").exists(),
        "{url}: something was installed"
    );
    (run.code, run.stderr)
}

const PASSED: &str = "install.sh: error: no prebuilt cfgctl for Plan9/mips (releases have x86_64 and aarch64 for Linux and macOS)\n\
     install.sh: build it from source instead: cargo install --locked --git <cfgctl repository> --tag v9.9.9 (or pass --source-fallback)\n";

#[test]
fn the_url_check_takes_hostile_urls_apart() {
    const HTTPS: &str = "use an https:// URL";
    // The refusal's tail after "refusing to download from URL: ", or the whole message when it
    // does not echo the URL (credentials, odd characters).
    let credentials = "install.sh: error: refusing the download URL: it holds credentials (user:password@host); give a plain URL\n";
    let characters = "install.sh: error: refusing the download URL: only letters, digits and ._~:/%@+=,[]- may appear in it (no query, fragment, space or backslash)\n";
    let refused = [
        // The issue's case: the host is example.invalid, `localhost:x` is userinfo.
        ("http://localhost:x@example.invalid/r", credentials),
        ("http://127.0.0.1:8080@evil.example/r", credentials),
        ("http://[::1]@evil.example/r", credentials),
        ("https://user:secret@example.com/r", credentials),
        ("http://localhost.evil.example/r", HTTPS),
        ("http://127.0.0.1.nip.io/r", HTTPS),
        ("http://localhost./r", HTTPS),
        ("http://127.1/r", HTTPS),
        ("http://2130706433/r", HTTPS),
        ("http://[::ffff:127.0.0.1]/r", HTTPS),
        ("HTTP://evil.example/r", HTTPS),
        ("ftp://localhost/r", HTTPS),
        ("localhost/r", HTTPS),
        ("http:/localhost/r", HTTPS),
        (
            "http://[::1].evil.example/r",
            "'[::1].evil.example' is not a host and port",
        ),
        ("http://[::1/r", "'[::1' is not a host and port"),
        ("http://127.0.0.1:80:80/r", "'80:80' is not a port"),
        ("http://localhost:/r", "'' is not a port"),
        ("http://localhost:65536/r", "'65536' is not a port"),
        ("https://", "no host"),
        (
            "https://exa_mple.com/r",
            "'exa_mple.com' is not a host name",
        ),
        ("http://localhost#@evil.example/r", characters),
        ("http://localhost?@evil.example/r", characters),
        ("http://localhost\\@evil.example/r", characters),
        ("http://local host/r", characters),
        ("http://localhost/r\nhttp://evil.example/", characters),
    ];
    for (url, tail) in refused {
        let message = if tail.starts_with("install.sh: ") {
            tail.to_string()
        } else {
            format!("install.sh: error: refusing to download from {url}: {tail}\n")
        };
        let (code, stderr) = url_verdict(url);
        assert_eq!((code, stderr), (1, message), "{url:?}");
    }
    for url in [
        "https://downloads.example.com/cfgctl/",
        "HTTPS://downloads.example.com/cfgctl",
        "https://example.com:8443",
        "http://127.0.0.1:8080/releases",
        "HTTP://127.0.0.1/releases",
        "http://localhost/releases",
        "http://LocalHost:1/releases",
        "http://[::1]:8080/releases",
        "http://[::1]",
    ] {
        let (code, stderr) = url_verdict(url);
        assert_eq!((code, stderr.as_str()), (3, PASSED), "{url:?}");
    }
}

#[test]
fn the_version_is_v_and_semver_or_a_full_commit() {
    let work = tempfile::tempdir().unwrap();
    let verdict = |version: &str| {
        let run = install_sh(
            &["--version", version, "--base-url", "https://example.com/r"],
            &[("CFGCTL_OS", "Plan9"), ("CFGCTL_ARCH", "mips")],
            work.path(),
        );
        (run.code, run.stderr)
    };
    for bad in [
        "..",
        "v1.2.3/..",
        "v1/../../../tmp/x",
        "v1..2.3",
        "v1.2",
        "1.2.3",
        "v01.2.3",
        "v1.2.3-",
        "v1.2.3\nv1.2.3",
        "main",
        "abc1234",
        "ABCDEF0123456789ABCDEF0123456789ABCDEF01",
    ] {
        let (code, stderr) = verdict(bad);
        assert_eq!(
            (code, stderr),
            (
                1,
                format!("install.sh: error: version '{bad}' is not a release tag (v1.2.3) or a full commit hash\n")
            ),
            "{bad:?}"
        );
    }
    for good in [
        "v0.1.0",
        "v10.20.30",
        "v1.2.3-rc.1",
        "v1.2.3+build.5",
        "0123456789abcdef0123456789abcdef01234567",
    ] {
        let (code, stderr) = verdict(good);
        assert_eq!(code, 3, "{good}: {stderr}");
        assert!(stderr.contains(&format!("--tag {good} ")), "{stderr}");
    }
}

/// The setup action keeps the archive in the Actions cache; install.sh uses a kept archive only
/// when it matches the release's SHA256SUMS, downloaded on every run.
#[test]
fn a_kept_archive_is_checked_against_the_release_on_every_run() {
    let work = tempfile::tempdir().unwrap();
    let server = FileServer::start(release(work.path(), false));
    let (bin_dir, keep) = (work.path().join("bin"), work.path().join("keep"));
    let base = format!("{}/releases", server.url());
    let name = format!("cfgctl-{VERSION}-{}.tar.gz", host_target());
    let (bin, kept) = (bin_dir.to_str().unwrap(), keep.to_str().unwrap());
    let args = [
        "--version",
        VERSION,
        "--base-url",
        &base,
        "--dir",
        bin,
        "--archive-cache",
        kept,
    ];
    let sums = format!("/releases/{VERSION}/SHA256SUMS");
    let archive_path = format!("/releases/{VERSION}/{name}");
    let (sums, archive_path) = (sums.as_str(), archive_path.as_str());

    // First run: downloaded, checked, kept.
    let run = install_sh(&args, &[], work.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(server.requests(), [sums, archive_path]);
    assert_eq!(std::fs::read_dir(&keep).unwrap().count(), 1);
    let good = std::fs::read(keep.join(&name)).unwrap();

    // Second run: the kept archive matches the SUMS fetched again; no archive download.
    let run = install_sh(&args, &[], work.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let matches = format!("install.sh: the kept {name} matches SHA256SUMS\n");
    assert!(run.stderr.contains(&matches), "{}", run.stderr);
    assert_eq!(server.requests(), [sums, archive_path, sums]);

    // A poisoned cache: the kept archive is another one. It is refused and replaced.
    std::fs::write(keep.join(&name), b"another archive").unwrap();
    std::fs::write(bin_dir.join("cfgctl"), "#!/bin/sh\necho evil\n").unwrap();
    let run = install_sh(&args, &[], work.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let refused =
        format!("install.sh: the kept {name} does not match SHA256SUMS: downloading it again\n");
    assert!(run.stderr.contains(&refused), "{}", run.stderr);
    assert_eq!(
        server.requests(),
        [sums, archive_path, sums, sums, archive_path]
    );
    let out = Command::new(bin_dir.join("cfgctl")).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "cfgctl 9.9.9 (commit test)\n"
    );
    assert_eq!(std::fs::read(keep.join(&name)).unwrap(), good);
}
