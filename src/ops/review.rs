//! What a plan made now is held to before it is shown or sent (docs/product.md §6), on the
//! manifests it was made from (kept by `ops::plan`, never read again): for `plan`, the
//! policy's findings recorded in it (`plan::review::Review::policy`) so every form shows them,
//! and returned for the command to enforce once the plan is printed whole; for `apply`, the
//! rotations asked for added, the policy enforced, then the reviewed plan.

use std::path::Path;

use crate::config::diagnostic::{Diagnostic, Problem, Severity};
use crate::config::pattern::Pattern;
use crate::manifest::Loaded;
use crate::ops::policy::{Findings, PolicyError};
use crate::plan::review::{PolicyFinding, PolicySeverity};
use crate::plan::{Current, Plan};

use super::{Connection, PlanRequest, Planned};

/// Runs the policy on `plan`, with the manifests it was made from (`manifests`: kept by
/// `ops::plan` when `cfgctl.yaml` names a policy), and records every deny and warn in it.
pub fn policy_into_plan(
    dir: &Path,
    plan: &mut Plan,
    manifests: Option<&Loaded>,
    environment: Option<&str>,
) -> Result<Findings, PolicyError> {
    let findings = judged(dir, manifests, plan, environment)?;
    plan.review.policy = findings.diagnostics.iter().map(finding).collect();
    Ok(findings)
}

/// The policy's findings on `plan` and the manifests it was made from. Without them, none, and
/// an error when `cfgctl.yaml` names a policy (the request did not keep them: a policy is never
/// run on manifests read again, which may not be the ones planned).
fn judged(
    dir: &Path,
    manifests: Option<&Loaded>,
    plan: &Plan,
    environment: Option<&str>,
) -> Result<Findings, PolicyError> {
    match manifests {
        Some(loaded) => Ok(crate::ops::policy::check(
            dir,
            loaded,
            Some(plan),
            environment,
        )),
        None if crate::ops::policy::named_in(dir) => Err(PolicyError::NotKept),
        None => Ok(Findings::default()),
    }
}

/// `cfgctl apply DIR`'s plan, made now: planned keeping the target's objects and the
/// connection (and the manifests, for the rotations or a policy), the rotations added and the
/// policy enforced ([`rotate_and_check`]), then held to the reviewed plan (`--reviewed`).
pub async fn plan_for_apply(
    request: &PlanRequest,
    rotate_secrets: Option<&[Pattern]>,
    reviewed: Option<&Path>,
) -> anyhow::Result<(Connection, Plan, Current)> {
    let Planned {
        mut plan,
        current: Some(current),
        manifests,
        connection: Some(conn),
        ..
    } = super::plan(request).await?
    else {
        anyhow::bail!("the plan came back without what apply keeps");
    };
    plan.guard.environment = request.environment.clone();
    let environment = request.environment.as_deref();
    let dir = &request.dir;
    rotate_and_check(
        dir,
        rotate_secrets,
        &mut plan,
        manifests,
        &current,
        environment,
        false,
    )?;
    if let Some(reviewed) = reviewed {
        super::check_reviewed(reviewed, &plan)?;
    }
    Ok((conn, plan, current))
}

/// What apply does to a plan made now before anything is sent: the rotations asked for added
/// (`--rotate-secrets`: the manifests are kept for it), then the policy run on the plan, with
/// its own environment's manifests (its findings prefixed with its name when it is
/// `one_of_several`); a deny stops this target. The manifests, when kept, are freed (on
/// another thread, not before the first request): the plan holds what is sent.
pub fn rotate_and_check(
    dir: &Path,
    rotate_secrets: Option<&[Pattern]>,
    plan: &mut Plan,
    manifests: Option<Loaded>,
    current: &Current,
    environment: Option<&str>,
    one_of_several: bool,
) -> anyhow::Result<()> {
    if let (Some(patterns), Some(loaded)) = (rotate_secrets, &manifests) {
        crate::plan::secrets::add_rotations(plan, &loaded.manifests, current, patterns);
    }
    judged(dir, manifests.as_ref(), plan, environment)?
        .print_and_enforce_in(environment.filter(|_| one_of_several))
        .map_err(|e| anyhow::anyhow!("{e}: nothing was changed"))?;
    if let Some(loaded) = manifests {
        super::free_aside(loaded);
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: &str =
        "package main\n\ndeny contains msg if {\n\tmsg := sprintf(\"judged %s\", [input.address])\n}\n";

    fn team(slug: &str) -> String {
        format!("api_version: v1/config\nkind: Team\nspec:\n  slug: {slug}\n  name: {slug}\n")
    }

    fn write(dir: &Path, file: &str, text: &str) {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn plan_of(loaded: &Loaded) -> Plan {
        let opts = crate::plan::PlanOptions {
            target: "t".into(),
            prune: false,
            only: vec![],
            references_declared: false,
        };
        let caps = crate::plan::Capabilities::assumed_full();
        let current = Current::default();
        crate::plan::plan(&loaded.manifests, &current, &caps, &loaded.settings, &opts).unwrap()
    }

    #[test]
    fn the_policy_judges_the_manifests_planned_never_the_files_read_again() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "cfgctl.yaml", "policy: rules\n");
        write(dir.path(), "rules/judge.rego", RULE);
        write(dir.path(), "team.yaml", &team("planned"));
        let loaded = crate::manifest::load_dir(dir.path()).unwrap();
        let mut plan = plan_of(&loaded);
        // The file changes after the load: the policy still judges what was planned.
        write(dir.path(), "team.yaml", &team("changed"));
        let findings = policy_into_plan(dir.path(), &mut plan, Some(&loaded), None).unwrap();
        assert_eq!(findings.errors(), 1);
        let messages: Vec<&str> = plan
            .review
            .policy
            .iter()
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].starts_with("judged ") && messages[0].ends_with("/planned"),
            "{messages:?}"
        );
        // Without the manifests planned, a named policy is an error, not a second load.
        let err = policy_into_plan(dir.path(), &mut plan, None, None).unwrap_err();
        assert!(matches!(err, PolicyError::NotKept), "{err}");
        // No policy named: nothing to judge, nothing needed.
        write(dir.path(), "cfgctl.yaml", "prune: []\n");
        let mut plan = plan_of(&loaded);
        let findings = policy_into_plan(dir.path(), &mut plan, None, None).unwrap();
        assert_eq!((findings.errors(), plan.review.policy.len()), (0, 0));
    }
}
