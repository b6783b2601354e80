//! Running the real `cfgctl` binary: the `Cfgctl` builder (in the style of just's
//! `Test::new()`) and the `Run` it returns.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{root, Tenant};

/// The variables cfgctl reads: removed from every run unless the test sets them.
const CLEARED_ENV: [&str; 10] = [
    "GITHUB_ACTIONS",
    "CFGCTL_URL",
    "CFGCTL_TOKEN",
    "CFGCTL_TOKEN_FILE",
    "NO_COLOR",
    "CLICOLOR_FORCE",
    "CFGCTL_NO_CACHE",
    "CFGCTL_CACHE_DIR",
    "CFGCTL_LOG",
    "XDG_CACHE_HOME",
];

/// The plan cache every run of the suite shares (unless a test sets its own): under cargo's
/// scratch directory, never the user's, and shared so that a test planning what another
/// already planned is answered from it (entries name this very binary, so a rebuilt one
/// starts afresh).
pub fn suite_cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("plan-cache")
}

/// What a run of the binary printed and returned.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
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

/// One invocation of the binary, built up and then run:
/// `Cfgctl::new(&tenant).args(&["plan", "."]).dir(path).env("K", "v").run().await`.
///
/// It runs in the repository root unless `dir` says otherwise, with the variables cfgctl reads
/// cleared unless `env` sets them. Against a tenant, `--url URL` comes first and the URL is
/// `[TARGET]` in what the run printed, so output does not depend on the port.
#[must_use = "a Cfgctl does nothing until it is run"]
pub struct Cfgctl {
    target: Option<String>,
    args: Vec<OsString>,
    dir: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Cfgctl {
    /// `cfgctl --url TENANT ...`.
    pub fn new(t: &Tenant) -> Cfgctl {
        Cfgctl {
            target: Some(t.emulator.url()),
            ..Cfgctl::bare()
        }
    }

    /// `cfgctl ...` with no target added (offline commands, `--local`, or a test's own `--url`).
    pub fn bare() -> Cfgctl {
        Cfgctl {
            target: None,
            args: Vec::new(),
            dir: root(),
            env: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Cfgctl {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args(mut self, args: &[&str]) -> Cfgctl {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    /// The working directory (default: the repository root).
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Cfgctl {
        self.dir = dir.as_ref().to_path_buf();
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cfgctl {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Runs it on a blocking thread, so a tenant in the test's own runtime keeps answering.
    pub async fn run(self) -> Run {
        tokio::task::spawn_blocking(move || self.run_blocking())
            .await
            .expect("cfgctl ran")
    }

    /// Runs it on this thread: for tests with no tenant in their runtime (a tenant on a
    /// single-threaded runtime could not answer while this waits).
    pub fn run_blocking(self) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cfgctl"));
        if let Some(url) = &self.target {
            cmd.arg("--url").arg(url);
        }
        cmd.args(&self.args).current_dir(&self.dir);
        for var in CLEARED_ENV {
            cmd.env_remove(var);
        }
        cmd.env("CFGCTL_CACHE_DIR", suite_cache_dir());
        cmd.envs(self.env);
        let mut run = Run::from(cmd.output().expect("the cfgctl binary runs"));
        if let Some(url) = &self.target {
            run.stdout = run.stdout.replace(url, "[TARGET]");
            run.stderr = run.stderr.replace(url, "[TARGET]");
        }
        run
    }
}

// The free functions the tests used before the builder, as one-line wrappers: tests on other
// branches still call them.

/// `cfgctl ARGS` in the repository root.
#[allow(dead_code)]
pub fn cfgctl(args: &[&str]) -> Run {
    Cfgctl::bare().args(args).run_blocking()
}

/// `cfgctl ARGS` in `dir` with `env`.
#[allow(dead_code)]
pub fn cfgctl_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    env.iter()
        .fold(Cfgctl::bare().dir(dir).args(args), |c, (k, v)| c.env(k, v))
        .run_blocking()
}

/// `cfgctl --url TENANT ARGS` in the repository root.
#[allow(dead_code)]
pub async fn run(t: &Tenant, args: &[&str]) -> Run {
    Cfgctl::new(t).args(args).run().await
}

/// `cfgctl --url TENANT ARGS` in `dir` with `env`.
#[allow(dead_code)]
pub async fn run_in(t: &Tenant, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    env.iter()
        .fold(Cfgctl::new(t).dir(dir).args(args), |c, (k, v)| c.env(k, v))
        .run()
        .await
}
