//! `cfgctl test-policy`: the policy directory's own tests, as `opa test` and `conftest
//! verify` run them. A test is a rule whose name starts with `test_` (not a function); it
//! passes when it is true, and fails when it is false, undefined or fails to evaluate.

use std::path::{Path, PathBuf};

use regorus::unstable::{Rule, RuleHead};

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

/// Runs every test of the policy that `dir/cfgctl.yaml` names, sorted by package, then name.
pub fn run(dir: &Path) -> Result<Vec<TestResult>, TestPolicyError> {
    let file = super::settings_file(dir);
    let text =
        std::fs::read_to_string(&file).map_err(|_| TestPolicyError::NoSettings(dir.into()))?;
    let settings =
        crate::config::settings::parse(&file, &text).map_err(TestPolicyError::Invalid)?;
    let policy = settings
        .policy
        .ok_or_else(|| TestPolicyError::NoPolicy(file.clone()))?;
    let mut rules = super::load::load(dir, &file, &policy).map_err(TestPolicyError::Invalid)?;
    let mut tests = Vec::new();
    let packages: Vec<String> = rules.files.iter().map(|(_, p)| p.clone()).collect();
    for (module, package) in rules.engine.get_modules().iter().zip(&packages) {
        let file = PathBuf::from(module.package.span.source.file());
        for rule in &module.policy {
            let Rule::Spec { head, .. } = &**rule else {
                continue;
            };
            let refr = match head {
                RuleHead::Compr { refr, .. } | RuleHead::Set { refr, .. } => refr,
                RuleHead::Func { .. } => continue,
            };
            let name = refr.span().text();
            let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if name.starts_with("test_") && plain {
                tests.push((format!("{package}.{name}"), file.clone(), refr.span().line));
            }
        }
    }
    // A test written in several parts (incremental definitions) runs once, at its first line.
    tests.sort();
    tests.dedup_by(|a, b| a.0 == b.0);
    if tests.is_empty() {
        return Err(TestPolicyError::NoTests);
    }
    let mut results = Vec::new();
    for (name, file, line) in tests {
        let outcome = match rules.engine.eval_query(name.clone(), false) {
            Ok(r) => {
                let value = r.result.first().and_then(|r| r.expressions.first());
                if value.is_some_and(|e| e.value == regorus::Value::Bool(true)) {
                    Outcome::Pass
                } else {
                    Outcome::Fail
                }
            }
            Err(e) if super::budget::is_exhausted(&e) => Outcome::Error(
                Diagnostic::error(
                    &file,
                    crate::util::yaml::Pos::new(line, 1),
                    crate::config::diagnostic::Problem::PolicyInvalid(format!(
                        "`{name}` {} of {} steps",
                        super::budget::PASSED,
                        super::budget::STEPS
                    )),
                )
                .to_string(),
            ),
            Err(e) => Outcome::Error(super::load::located(&file, &e.to_string()).to_string()),
        };
        results.push(TestResult {
            name,
            file,
            line,
            outcome,
        });
    }
    Ok(results)
}
