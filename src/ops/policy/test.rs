//! `cfgctl test-policy`: the policy directory's own tests, as `opa test` and `conftest
//! verify` run them. A test is a rule whose name starts with `test_` (not a function); it
//! passes when it is true, and fails when it is false, undefined or fails to evaluate.

use std::path::PathBuf;

use crate::config::diagnostic::Diagnostic;

/// One test and how it went.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestResult {
    /// `data.main.test_monitor_without_a_policy_is_denied`.
    pub name: String,
    pub file: PathBuf,
    pub line: u32,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Pass,
    Fail,
    /// It failed to evaluate: regorus's message.
    Error(String),
}

/// Why the tests could not run.
#[derive(Debug, thiserror::Error)]
pub enum TestPolicyError {
    #[error("no {} in `{}`: test-policy reads the policy directory it names", crate::config::settings::FILE_NAME, .0.display())]
    NoSettings(PathBuf),
    #[error("`{}` names no policy directory (`policy: DIR`)", .0.display())]
    NoPolicy(PathBuf),
    #[error("the policy cannot be read ({} {})", .0.len(), if .0.len() == 1 { "problem" } else { "problems" })]
    Invalid(Vec<Diagnostic>),
    #[error("the policy directory holds no `test_` rule")]
    NoTests,
}
