//! The policy's findings as part of the plan (docs/product.md §6): worked out before the plan is
//! rendered, recorded in it (`plan::review::Review::policy`) so every form shows them, and
//! returned for the command to enforce after the plan is printed whole.

use std::path::Path;

use crate::config::diagnostic::{Diagnostic, Problem, Severity};
use crate::ops::policy::{Findings, PolicyError};
use crate::plan::review::{PolicyFinding, PolicySeverity};
use crate::plan::Plan;

/// Runs the policy on `plan` (its manifests loaded again only when `cfgctl.yaml` names a
/// policy) and records every deny and warn in it.
pub fn policy_into_plan(
    dir: &Path,
    plan: &mut Plan,
    environment: Option<&str>,
) -> Result<Findings, PolicyError> {
    let findings = crate::ops::policy::check_plan(dir, plan, environment)?;
    plan.review.policy = findings.diagnostics.iter().map(finding).collect();
    Ok(findings)
}

/// One diagnostic of the policy as the plan shows it: a rule's message, or a problem of the
/// policy itself (rule `policy`).
fn finding(d: &Diagnostic) -> PolicyFinding {
    let severity = match d.severity {
        Severity::Error => PolicySeverity::Deny,
        Severity::Warning => PolicySeverity::Warn,
    };
    let (rule, message, address) = match &d.problem {
        Problem::Policy {
            address,
            rule,
            message,
        } => (rule.clone(), message.clone(), address.clone()),
        other => ("policy".to_string(), other.to_string(), None),
    };
    PolicyFinding {
        rule,
        severity,
        message,
        address,
        source: Some(d.location()),
    }
}
