//! Policy as code: the repository's Rego rules (OPA's language, as conftest and Gatekeeper
//! use), evaluated in process by regorus (docs/policy.md, docs/product.md §3 "Review").
//!
//! `policy:` in `cfgctl.yaml` names a directory of `.rego` files. Manifest rules
//! (`package main`: `deny`, `warn`) get one document per manifest as `input`,
//! `{kind, address, spec, source: {file, line}, environment}`; plan rules
//! (`package cfgctl.plan`) get the JSON plan (`plan --format json`'s bytes). A message is a
//! string, or an object with `msg` and, for plan rules, an optional `address`; it becomes a
//! [`Diagnostic`] at the manifest it is about (`deny`: an error, `warn`: a warning). A plan
//! message about no declared manifest is put at `policy:` in `cfgctl.yaml`. A broken policy
//! (bad Rego, a rule that fails) is a located error, never a panic. `test` runs the files'
//! own `test_` rules (`cfgctl test-policy`).

// The engine (regorus) is the `policy` feature's, on by default; without it `policy/off.rs`
// stands in, and a policy `cfgctl.yaml` names is an error saying so.
#[cfg_attr(not(feature = "policy"), path = "policy/off.rs")]
mod rego;
pub mod test;

use std::io::Write;
use std::path::Path;

use crate::config::diagnostic::{Diagnostic, Severity};
use crate::manifest::Loaded;
use crate::plan::Plan;

/// What the policy said: its messages and its own problems, as diagnostics in a stable
/// order (manifest rules in manifest order, then plan rules; each rule's messages sorted).
#[derive(Debug, Default)]
pub struct Findings {
    pub diagnostics: Vec<Diagnostic>,
}

impl Findings {
    /// Denials and policy errors: each fails the command.
    pub fn errors(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// Prints every finding on stderr (`file:line:col: error: message`, and a GitHub
    /// annotation under `GITHUB_ACTIONS=true`, as `validate` prints its problems); fails
    /// when any is an error.
    pub fn print_and_enforce(self) -> Result<(), PolicyError> {
        self.print_and_enforce_in(None)
    }

    /// [`Findings::print_and_enforce`] for one of several environments: each line prefixed
    /// with its name (`[prod] file:line:col: error: ...`), as its other problems are.
    pub fn print_and_enforce_in(self, environment: Option<&str>) -> Result<(), PolicyError> {
        let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
        let mut err = crate::util::output::stderr();
        for d in &self.diagnostics {
            let _ = match environment {
                Some(name) => writeln!(err, "[{}] {d}", crate::util::output::Inert(name)),
                None => writeln!(err, "{d}"),
            };
            if github {
                let _ = err.command(&d.github_annotation());
            }
        }
        match self.errors() {
            0 => Ok(()),
            n => Err(PolicyError::Failed { errors: n }),
        }
    }
}

/// Why a command stops at its policy.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("the policy fails with {errors} {}", if *.errors == 1 { "error" } else { "errors" })]
    Failed { errors: usize },
    /// A plan judged without the manifests it was made from (the request did not keep them).
    #[error("the policy needs the manifests the plan was made from, and they were not kept")]
    NotKept,
}

/// The manifest rules (and, given a plan, the plan rules) of the policy that `loaded`'s
/// `cfgctl.yaml` names, `dir` being the repository. No `policy:`: no findings.
pub fn check(
    dir: &Path,
    loaded: &Loaded,
    plan: Option<&Plan>,
    environment: Option<&str>,
) -> Findings {
    let Some(policy) = &loaded.settings.policy else {
        return Findings::default();
    };
    let settings_file = settings_file(dir);
    Findings {
        diagnostics: rego::findings(dir, &settings_file, policy, loaded, plan, environment),
    }
}

/// Runs every test of the policy that `dir/cfgctl.yaml` names (`cfgctl test-policy`), sorted by
/// package, then name.
pub fn run_tests(dir: &Path) -> Result<Vec<test::TestResult>, test::TestPolicyError> {
    use test::TestPolicyError;
    let file = settings_file(dir);
    let text =
        std::fs::read_to_string(&file).map_err(|_| TestPolicyError::NoSettings(dir.into()))?;
    let settings =
        crate::config::settings::parse(&file, &text).map_err(TestPolicyError::Invalid)?;
    let policy = settings
        .policy
        .ok_or_else(|| TestPolicyError::NoPolicy(file.clone()))?;
    rego::tests(dir, &file, &policy)
}

/// Whether `DIR/cfgctl.yaml` names a policy (a file that cannot be read or parsed names none:
/// the load reports it).
pub fn named_in(dir: &Path) -> bool {
    let file = dir.join(crate::config::settings::FILE_NAME);
    std::fs::read_to_string(&file)
        .ok()
        .and_then(|text| crate::config::settings::parse(&file, &text).ok())
        .is_some_and(|s| s.policy.is_some())
}

/// `DIR/cfgctl.yaml` as the loader shows it.
fn settings_file(dir: &Path) -> std::path::PathBuf {
    let file = dir.join(crate::config::settings::FILE_NAME);
    file.strip_prefix(".")
        .map(Path::to_path_buf)
        .unwrap_or(file)
}
