//! The risk summary a reviewer reads first (docs/product.md §3 "Review"): counts per action and
//! kind, every delete with its cascade, the unsupported actions, the guards apply will enforce,
//! the secrets sent, the modes' held-back resources and the environments touched.
//!
//! One pure function, [`summarize`], used by all three plan forms: the text and Markdown plans
//! render it first, the JSON plan carries it as its `risk` object (the same serde types, so the
//! saved plan's reader checks its shape). Everything is in a fixed order: actions in
//! [`ActionKind`] order, kinds by name, resources in plan order (execution order), secret paths
//! in the registry's order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{refusals, ActionKind, CascadeStatus, Plan};

/// The whole summary (the JSON plan's `risk`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Risk {
    /// How many actions of each action and kind.
    pub counts: Vec<RiskCount>,
    /// Every delete, by address, with what its cascade would take.
    pub deletes: Vec<RiskDelete>,
    /// Every action the target cannot perform (never attempted).
    pub unsupported: Vec<RiskUnsupported>,
    pub guards: RiskGuards,
    /// Every create, update or upsert whose body holds a secret field.
    pub secrets: Vec<RiskSecret>,
    pub modes: RiskModes,
    /// The environments the plan touches: the environment's name of `cfgctl.yaml` when it was
    /// planned with `--env` (`GuardContext::environment`), else its target's name. One entry:
    /// a plan is one environment's (a report of several has one plan, so one risk summary,
    /// per environment).
    pub environments: Vec<String>,
    /// Whether secret references were compared with a base (`--base REV`), in words; absent
    /// when the manifests hold no secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_references: Option<super::review::SecretReferences>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskCount {
    pub action: ActionKind,
    pub kind: String,
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskDelete {
    pub address: String,
    /// Why it is deleted (the prune pattern that put it in scope).
    pub reason: Option<String>,
    /// What `--force-delete-buckets` would take with it.
    #[serde(default)]
    pub cascade: Vec<RiskCascade>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskCascade {
    pub address: String,
    pub status: CascadeStatus,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskUnsupported {
    pub address: String,
    /// What would have been done.
    pub intended: Option<ActionKind>,
    pub reason: Option<String>,
}

/// The guards `apply` enforces on this plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskGuards {
    pub max_deletes: u32,
    /// Deletes in this plan (what `max_deletes` is checked against).
    pub deletes: usize,
    /// What apply refuses: each reason in words (empty: apply goes ahead).
    pub refused: Vec<String>,
    /// What apply refuses only with `--force-delete-buckets`: cascades that would take a
    /// resource the repository may not delete.
    pub refused_with_force_delete: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskSecret {
    pub address: String,
    /// The secret fields sent, as dotted paths (`webhook.basic_auth.password`); never values.
    pub fields: Vec<String>,
    /// The fields whose reference changed since the base (`--base`):
    /// `path: ${env:A} -> ${env:B}`, references only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references_changed: Vec<String>,
}

/// What the management modes hold back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskModes {
    /// Differences of `observe` resources: shown, never sent.
    pub observed: usize,
    /// In no manifest, kept by `no-delete` or `observe`.
    pub orphaned: usize,
}

impl Risk {
    /// Nothing to review: no action, nothing held back by a mode, no guard broken.
    pub fn is_quiet(&self) -> bool {
        self.counts.is_empty()
            && self.modes == RiskModes::default()
            && self.guards.refused.is_empty()
    }
}

/// The risk summary of a plan. Pure.
pub fn summarize(plan: &Plan) -> Risk {
    let mut counts: BTreeMap<(ActionKind, &str), usize> = BTreeMap::new();
    let mut deletes = Vec::new();
    let mut unsupported = Vec::new();
    let mut secrets = Vec::new();
    for a in &plan.actions {
        *counts.entry((a.action, a.address.kind.name())).or_default() += 1;
        match a.action {
            ActionKind::Delete => deletes.push(RiskDelete {
                address: a.address.to_string(),
                reason: a.reason.clone(),
                cascade: a
                    .cascade
                    .iter()
                    .map(|m| RiskCascade {
                        address: m.address.to_string(),
                        status: m.status,
                    })
                    .collect(),
            }),
            ActionKind::Unsupported => unsupported.push(RiskUnsupported {
                address: a.address.to_string(),
                intended: a.intended,
                reason: a.reason.clone(),
            }),
            ActionKind::Create | ActionKind::Update | ActionKind::Upsert => {
                let Some(body) = &a.body else { continue };
                let mut fields: Vec<String> = Vec::new();
                for f in a.address.kind.def().secrets_in(body) {
                    if !fields.contains(&f.path) {
                        fields.push(f.path);
                    }
                }
                if !fields.is_empty() {
                    secrets.push(RiskSecret {
                        address: a.address.to_string(),
                        fields,
                        references_changed: a
                            .fields
                            .iter()
                            .filter_map(|f| {
                                let (b, after) = super::normalize::secret::reference_change(f)?;
                                Some(format!("{}: {b} -> {after}", f.path))
                            })
                            .collect(),
                    });
                }
            }
        }
    }
    let refused = refusals(plan, false, false);
    let refused_with_force_delete = refusals(plan, false, true)
        .into_iter()
        .filter(|r| !refused.contains(r))
        .collect();
    Risk {
        counts: counts
            .into_iter()
            .map(|((action, kind), count)| RiskCount {
                action,
                kind: kind.to_string(),
                count,
            })
            .collect(),
        guards: RiskGuards {
            max_deletes: plan.guard.max_deletes,
            deletes: deletes.len(),
            refused,
            refused_with_force_delete,
        },
        deletes,
        unsupported,
        secrets,
        modes: RiskModes {
            observed: plan.observed.len(),
            orphaned: plan.orphaned.len(),
        },
        environments: vec![plan
            .guard
            .environment
            .clone()
            .unwrap_or_else(|| plan.target.clone())],
        secret_references: plan.review.secret_references(),
    }
}

#[cfg(test)]
mod tests;
