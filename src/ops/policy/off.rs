//! The policy in a build without the `policy` feature (no regorus): a policy `cfgctl.yaml`
//! names is an error at its `policy:` line saying so, never a policy silently passed.

use std::path::Path;

use super::test::{TestPolicyError, TestResult};
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::config::settings::PolicyDir;
use crate::manifest::Loaded;
use crate::plan::Plan;

/// One error: this build cannot evaluate `policy`.
pub(super) fn findings(
    _dir: &Path,
    settings_file: &Path,
    policy: &PolicyDir,
    _loaded: &Loaded,
    _plan: Option<&Plan>,
    _environment: Option<&str>,
) -> Vec<Diagnostic> {
    vec![not_built(settings_file, policy)]
}

/// Fails as [`findings`] does.
pub(super) fn tests(
    _dir: &Path,
    file: &Path,
    policy: &PolicyDir,
) -> Result<Vec<TestResult>, TestPolicyError> {
    Err(TestPolicyError::Invalid(vec![not_built(file, policy)]))
}

fn not_built(settings_file: &Path, policy: &PolicyDir) -> Diagnostic {
    Diagnostic::error(
        settings_file,
        policy.pos,
        Problem::PolicyInvalid(
            "this cfgctl is built without the policy engine (cargo feature `policy`): the policy cannot be checked".into(),
        ),
    )
}
