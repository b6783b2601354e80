//! `${file:}` on input a pull request controls (issue 38, R4-8 and R4-12): regular files only,
//! of bounded size, inside the repository; a secret field may also read under a directory
//! `cfgctl.yaml` allows (`secrets: {file_dirs: [...]}`). Each refusal is an error at the
//! reference, in validate and before apply sends anything.

use std::path::Path;

use crate::support::files::write;
use crate::support::run::Cfgctl;
use crate::support::tenant::Tenant;

fn team(slug: &str, description: &str) -> String {
    format!("api_version: v1/config\nkind: Team\nspec:\n  slug: {slug}\n  name: {slug}\n  description: {description}\n")
}

fn connection(token: &str) -> String {
    format!("api_version: v1/config\nkind: ExternalConnection\nspec:\n  slug: chat\n  name: Chat\n  slack:\n    token: {token}\n")
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// `top/repo` is the repository; `top/x` lies outside it.
fn hostile() -> tempfile::TempDir {
    let top = tempfile::tempdir().unwrap();
    let repo = top.path().join("repo");
    write(top.path(), "x", "outside the repository\n");
    write(&repo, "teams/inside.txt", "Inside\n");
    write(
        &repo,
        "teams/a-environ.yaml",
        &team("a", "${file:/proc/self/environ}"),
    );
    write(&repo, "teams/b-up.yaml", &team("b", "${file:../../x}"));
    write(&repo, "teams/c-fifo.yaml", &team("c", "${file:fifo}"));
    write(&repo, "teams/d-link.yaml", &team("d", "${file:link}"));
    write(&repo, "teams/e-fine.yaml", &team("e", "${file:inside.txt}"));
    mkfifo(&repo.join("teams/fifo"));
    std::os::unix::fs::symlink(top.path().join("x"), repo.join("teams/link")).unwrap();
    top
}

#[test]
fn hostile_file_references_are_errors_at_the_reference() {
    let top = hostile();
    let v = Cfgctl::bare()
        .dir(top.path().join("repo"))
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    let out = v.transcript();
    let expect = [
        "teams/a-environ.yaml:6:16: error: cannot resolve `${file:/proc/self/environ}`: `/proc/self/environ` is an absolute path",
        "teams/b-up.yaml:6:16: error: cannot resolve `${file:../../x}`: `../../x` leads outside the manifest directory ",
        "teams/c-fifo.yaml:6:16: error: cannot resolve `${file:fifo}`:",
        "teams/d-link.yaml:6:16: error: cannot resolve `${file:link}`: `link` leads outside the manifest directory ",
    ];
    for line in expect {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(out.contains("is not a regular file (a FIFO)"), "{out}");
    assert!(!out.contains("e-fine.yaml"), "{out}");
    assert!(
        !out.contains("outside the repository\n"),
        "never the text: {out}"
    );
    assert_eq!(out.matches(": error:").count(), 4, "{out}");
}

#[tokio::test]
async fn a_secret_field_reads_inside_the_repository_or_an_allowed_directory_only() {
    let top = tempfile::tempdir().unwrap();
    let repo = top.path().join("repo");
    write(top.path(), "mounted/token", "xoxb-mounted\n");
    write(
        &repo,
        "connections/chat.yaml",
        &connection("${file:../../mounted/token}"),
    );
    let t = Tenant::start(cfgctl::emulator::Config::default()).await;
    let apply = Cfgctl::new(&t)
        .dir(&repo)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(apply.code, 1, "{}", apply.transcript());
    let out = apply.transcript();
    assert!(
        out.contains("connections/chat.yaml:7:12: error: cannot resolve `${file:../../mounted/token}`: `../../mounted/token` leads outside the manifest directory "),
        "{out}"
    );
    assert!(
        out.contains("secrets: {file_dirs"),
        "the hint names the setting: {out}"
    );
    assert!(
        t.emulator.stats().log.iter().all(|l| l.method == "GET"),
        "nothing sent"
    );

    // Allowed for secrets: read when sent.
    write(
        &repo,
        "cfgctl.yaml",
        "secrets:\n  file_dirs: [../mounted]\n",
    );
    let apply = Cfgctl::new(&t)
        .dir(&repo)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(apply.code, 0, "{}", apply.transcript());
    assert!(!apply.transcript().contains("xoxb-mounted"));

    // A device under an allowed directory is still refused: regular files only.
    write(&repo, "cfgctl.yaml", "secrets:\n  file_dirs: [/dev]\n");
    write(
        &repo,
        "connections/chat.yaml",
        &connection("${file:/dev/zero}"),
    );
    let v = Cfgctl::bare()
        .dir(&repo)
        .args(&["validate", "."])
        .run()
        .await;
    assert_eq!(v.code, 1, "{}", v.transcript());
    assert!(
        v.transcript().contains("connections/chat.yaml:7:12: error: cannot resolve `${file:/dev/zero}`: /dev/zero is not a regular file (a character device)"),
        "{}",
        v.transcript()
    );
    // A FIFO inside the repository: refused, never waited on.
    mkfifo(&repo.join("connections/fifo"));
    write(&repo, "connections/chat.yaml", &connection("${file:fifo}"));
    let apply = Cfgctl::new(&t)
        .dir(&repo)
        .args(&["apply", ".", "--auto-approve"])
        .run()
        .await;
    assert_eq!(apply.code, 1, "{}", apply.transcript());
    assert!(
        apply
            .transcript()
            .contains("is not a regular file (a FIFO)"),
        "{}",
        apply.transcript()
    );
}

#[test]
fn a_secret_file_not_there_yet_is_checked_by_its_path_only() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    write(
        &repo,
        "connections/chat.yaml",
        &connection("${file:secrets/token.txt}"),
    );
    let v = Cfgctl::bare()
        .dir(&repo)
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(
        v.code,
        0,
        "a secret needs nothing before it is sent: {}",
        v.transcript()
    );
    write(
        &repo,
        "connections/chat.yaml",
        &connection("${file:../../elsewhere/token.txt}"),
    );
    let v = Cfgctl::bare()
        .dir(&repo)
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    assert!(
        v.transcript()
            .contains("`../../elsewhere/token.txt` leads outside the manifest directory "),
        "{}",
        v.transcript()
    );
}

#[test]
fn secrets_file_dirs_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cfgctl.yaml",
        "secrets:\n  file_dir: [/run/secrets]\n",
    );
    let v = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    assert!(
        v.transcript().contains("cfgctl.yaml:2:3: error: invalid settings file: unknown field `secrets.file_dir`; expected `file_dirs`"),
        "{}",
        v.transcript()
    );
}

/// Red team D0: a `${file:}` that reaches a secret field through a variable (`vars: {k:
/// "${file:/proc/self/environ}"}`, `api_url: ${var:k}`) is held to the same scope as one written
/// there; and D30: nothing inside `.git` is data (actions/checkout keeps its token in
/// `.git/config`), for a secret field or any other.
#[tokio::test]
async fn a_file_reference_through_a_variable_or_into_git_is_refused() {
    let t = Tenant::start(cfgctl::emulator::Config::default()).await;
    let top = tempfile::tempdir().unwrap();
    let repo = top.path().join("repo");
    write(
        &repo,
        "cfgctl.yaml",
        &format!(
            "environments:\n  staging:\n    url: {}\n    vars: {{k: \"${{file:/proc/self/environ}}\"}}\n",
            t.emulator.url()
        ),
    );
    write(
        &repo,
        "n.yaml",
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: d0\n  name: D0\n  slack:\n    api_url: ${var:k}\n    channel: '#x'\n",
    );
    let run = Cfgctl::bare()
        .dir(&repo)
        .args(&["apply", ".", "--env", "staging", "--auto-approve"])
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.transcript().contains("is an absolute path"),
        "{}",
        run.transcript()
    );
    assert_eq!(
        t.read(cfgctl::api::registry::Kind::named("Notifier"), Some("d0"))
            .await
            .status,
        404
    );

    let repo = top.path().join("git-repo");
    write(
        &repo,
        ".git/config",
        "[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n",
    );
    write(
        &repo,
        "t.yaml",
        "api_version: v1/config\nkind: Team\nspec:\n  slug: d30\n  name: D30\n  description: ${file:.git/config}\n",
    );
    write(
        &repo,
        "n.yaml",
        "api_version: v1/config\nkind: Notifier\nspec:\n  slug: d30\n  name: D30\n  slack:\n    api_url: ${file:.git/config}\n    channel: '#x'\n",
    );
    let v = Cfgctl::bare()
        .dir(&repo)
        .args(&["validate", "."])
        .run()
        .await;
    assert_eq!(v.code, 1, "{}", v.transcript());
    assert_eq!(
        v.stdout.matches("names a file inside `.git`").count(),
        2,
        "{}",
        v.transcript()
    );
    assert!(!v.transcript().contains("c2VjcmV0"), "{}", v.transcript());
}

/// A reference that cannot be resolved is one error at the reference (red team D22): the file
/// it names is still named (never "not read as a manifest ... no manifest names it"), and the
/// text left in its place is not checked as the value (no second "not valid JSON" or PromQL
/// error at the same field).
#[test]
fn a_reference_that_cannot_be_resolved_is_one_error_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = format!(
        "{{\"title\": \"big\", \"pad\": \"{}\"}}",
        "a".repeat(17 << 20)
    );
    write(dir.path(), "dashboards/big.json", &big);
    write(
        dir.path(),
        "dashboards/big.yaml",
        "api_version: v1/config\nkind: Dashboard\nspec:\n  slug: big\n  name: Big\n  collection_slug: c\n  dashboard_json: ${file:big.json}\n",
    );
    write(
        dir.path(),
        "monitors/m.yaml",
        "api_version: v1/config\nkind: Monitor\nspec:\n  slug: m\n  name: M\n  bucket_slug: b\n  prometheus_query: ${env:CFGCTL_TEST_UNSET_QUERY}\n",
    );
    let v = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run_blocking();
    assert_eq!(v.code, 1, "{}", v.transcript());
    let out = v.transcript();
    assert!(
        out.contains("dashboards/big.yaml:7:19: error: cannot resolve `${file:big.json}`:"),
        "{out}"
    );
    assert!(out.contains("larger than 16 MiB"), "{out}");
    assert!(
        out.contains(
            "monitors/m.yaml:7:21: error: cannot resolve `${env:CFGCTL_TEST_UNSET_QUERY}`"
        ),
        "{out}"
    );
    assert!(!out.contains("no manifest names it"), "{out}");
    assert!(!out.contains("not valid JSON"), "{out}");
    assert!(!out.contains("PromQL"), "{out}");
    assert_eq!(out.matches(": error:").count(), 2, "{out}");
}
