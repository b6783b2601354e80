//! `cfgctl test-policy [DIR]`: the Rego policy's own `test_` rules (`crate::ops::policy::run_tests`).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::ops::policy::test::{Outcome, TestPolicyError};

/// Runs the tests of the policy `DIR/cfgctl.yaml` names; exit 1 when one fails.
pub fn test_policy(dir: &Path) -> anyhow::Result<ExitCode> {
    let results = match crate::ops::policy::run_tests(dir) {
        Ok(results) => results,
        Err(e @ TestPolicyError::Invalid(_)) => {
            // Located, printed at the edge (`cli::main`) before the error line.
            let message = e.to_string();
            let TestPolicyError::Invalid(diagnostics) = e else {
                unreachable!("matched above")
            };
            return Err(crate::ops::Diagnosed {
                diagnostics,
                message,
            }
            .into());
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = crate::util::output::stdout();
    let mut failed = 0;
    for r in &results {
        let at = format!(
            "{}:{}",
            crate::util::output::Inert(r.file.display()),
            r.line
        );
        let line = match &r.outcome {
            Outcome::Pass => format!("PASS {} ({at})", r.name),
            Outcome::Fail => format!("FAIL {} ({at})", r.name),
            Outcome::Error(e) => {
                format!("ERROR {} ({at}): {}", r.name, crate::util::output::Inert(e))
            }
        };
        failed += usize::from(r.outcome != Outcome::Pass);
        writeln!(out, "{line}").context("writing to stdout")?;
    }
    writeln!(
        out,
        "policy tests: {} passed, {failed} failed",
        results.len() - failed
    )
    .context("writing to stdout")?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
