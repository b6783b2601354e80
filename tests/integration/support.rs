//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a run of the binary printed and returned.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout, stderr and the exit code in one text, for snapshots.
    pub fn transcript(&self) -> String {
        let mut out = format!("exit code: {}\n--- stdout\n{}", self.code, self.stdout);
        if !self.stderr.is_empty() {
            out.push_str(&format!("--- stderr\n{}", self.stderr));
        }
        out
    }

    /// No panic, no backtrace, and an exit code a CI job understands.
    pub fn assert_clean_exit(&self) {
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("stack backtrace"),
            "cfgctl panicked:\n{}",
            self.stderr
        );
        assert!(
            matches!(self.code, 0..=2),
            "unexpected exit code {}",
            self.code
        );
    }
}

/// The repository root (where `fixtures/` is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cfgctl ARGS` in the repository root with a clean environment for the variables
/// cfgctl reads.
pub fn cfgctl(args: &[&str]) -> Run {
    cfgctl_in(&root(), args, &[])
}

pub fn cfgctl_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cfgctl"));
    cmd.args(args).current_dir(dir);
    for var in [
        "GITHUB_ACTIONS",
        "CFGCTL_URL",
        "CFGCTL_TOKEN",
        "CFGCTL_TOKEN_FILE",
        "NO_COLOR",
        "CLICOLOR_FORCE",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the cfgctl binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `request id 0123abcd` → `request id [ID]`: the emulator's ids are random, snapshots are not.
pub fn redact_request_ids(text: &str) -> String {
    const MARK: &str = "request id ";
    let mut parts = text.split(MARK);
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let id_len = part
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(part.len());
        out.push_str(MARK);
        out.push_str("[ID]");
        out.push_str(&part[id_len..]);
    }
    out
}
