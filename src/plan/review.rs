//! What a plan says about how it was made, for the reviewer (docs/product.md §6): the commit it
//! was made from, the base its secret references were compared with, and what the policy said.
//! Pure data: the ops layer works it out (git, the policy) and hands it to the plan; the
//! renderers show it and a saved plan records it.

use serde::{Deserialize, Serialize};

/// The plan's review facts. Empty (the default) for a plan made without a repository.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The commit of the repository holding the manifests (`git rev-parse HEAD`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `--base REV`: what the secret references were compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Base>,
    /// Whether the manifests hold secret references (without a base, a changed reference
    /// is not seen: the risk summary says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holds_secrets: bool,
    /// Every deny and warn of the repository's policy, in the policy's order (the JSON plan
    /// writes them as its own top-level `policy`).
    #[serde(skip)]
    pub policy: Vec<PolicyFinding>,
}

/// The base of a plan made with `--base REV`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// REV as given (`origin/main`).
    pub rev: String,
    /// The commit it names.
    pub commit: String,
}

/// One message of the policy (or one problem of the policy itself).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFinding {
    /// `main.deny`, `cfgctl.plan.warn`, ...; `policy` for a problem of the policy itself.
    pub rule: String,
    /// `deny` or `warn`.
    pub severity: PolicySeverity,
    pub message: String,
    pub address: Option<String>,
    /// Where it points: `file:line:col`.
    pub source: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicySeverity {
    Deny,
    Warn,
}

impl PolicySeverity {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicySeverity::Deny => "deny",
            PolicySeverity::Warn => "warn",
        }
    }
}

impl Review {
    /// How many findings deny the plan.
    pub fn denials(&self) -> usize {
        self.policy
            .iter()
            .filter(|f| f.severity == PolicySeverity::Deny)
            .count()
    }

    /// What the risk summary says about secret references: compared with a base, or not
    /// compared (said only when the manifests hold secrets).
    pub fn secret_references(&self) -> Option<SecretReferences> {
        match &self.base {
            Some(b) => Some(SecretReferences {
                compared: true,
                base: Some(b.clone()),
            }),
            None if self.holds_secrets => Some(SecretReferences {
                compared: false,
                base: None,
            }),
            None => None,
        }
    }
}

/// Whether the plan compared secret references with a base (the JSON plan's
/// `risk.secret_references`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretReferences {
    pub compared: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Base>,
}

impl SecretReferences {
    /// In words, for the text plan.
    pub fn sentence(&self) -> String {
        match &self.base {
            Some(b) => format!("compared with {} ({})", b.rev, b.commit),
            None => "not compared (a changed ${env:...}/${file:...} reference is not seen; plan with --base REV to compare)".into(),
        }
    }
}
