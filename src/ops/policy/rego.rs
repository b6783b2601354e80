//! The policy's engine, regorus (the `policy` feature): the directory read (`load`), the rules
//! evaluated (`eval`) within a step budget (`budget`), and the policy's own tests run; `off.rs`
//! stands in for it without the feature.

mod budget;
mod eval;
mod load;
mod located;

use std::path::{Path, PathBuf};

use regorus::unstable::{Rule, RuleHead};

use super::test::{Outcome, TestPolicyError, TestResult};
use crate::config::diagnostic::Diagnostic;
use crate::config::settings::PolicyDir;
use crate::manifest::Loaded;
use crate::plan::Plan;

/// The findings of the manifest rules (and, given a plan, the plan rules) of `policy`, the
/// directory `settings_file` names in the repository `dir`.
pub(super) fn findings(
    dir: &Path,
    settings_file: &Path,
    policy: &PolicyDir,
    loaded: &Loaded,
    plan: Option<&Plan>,
    environment: Option<&str>,
) -> Vec<Diagnostic> {
    let mut rules = match load::load(dir, settings_file, policy) {
        Ok(rules) => rules,
        Err(diagnostics) => return diagnostics,
    };
    // A rule that failed to evaluate ends its evaluation: reported after what was found, at
    // its place in the Rego file (else the first file's).
    let (mut diagnostics, failed) = eval::manifests(&mut rules, &loaded.manifests, environment);
    diagnostics.extend(failed.map(|e| e.located(rules.first_file())));
    if let Some(plan) = plan {
        let at = (settings_file, policy.pos);
        let (found, failed) = eval::plan(&mut rules, plan, environment, &loaded.manifests, at);
        diagnostics.extend(found);
        diagnostics.extend(failed.map(|e| e.located(rules.first_file())));
    }
    diagnostics
}

/// Runs every `test_` rule of `policy` (`run_tests`), sorted by package, then name.
pub(super) fn tests(
    dir: &Path,
    file: &Path,
    policy: &PolicyDir,
) -> Result<Vec<TestResult>, TestPolicyError> {
    let mut rules = load::load(dir, file, policy).map_err(TestPolicyError::Invalid)?;
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
            Err(e) if budget::is_exhausted(&e) => Outcome::Error(
                Diagnostic::error(
                    &file,
                    crate::util::yaml::Pos::new(line, 1),
                    crate::config::diagnostic::Problem::PolicyInvalid(format!(
                        "`{name}` {} of {} steps",
                        budget::PASSED,
                        budget::STEPS
                    )),
                )
                .to_string(),
            ),
            Err(e) => Outcome::Error(located::located(&file, &e.to_string()).to_string()),
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
