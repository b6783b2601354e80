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
    /// The working tree under the manifest directory differs from `commit` (`git status
    /// --porcelain`): the plan holds uncommitted changes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncommitted_changes: bool,
    /// `--base REV`: what the secret references were compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Base>,
    /// Whether the manifests hold secret references (without a base, a changed reference
    /// is not seen: the risk summary says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holds_secrets: bool,
    /// `--base REV`: the managed resources holding secrets that REV does not declare (their
    /// references could not be compared), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_at_base: Vec<String>,
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
                not_found: self.not_at_base.clone(),
            }),
            None if self.holds_secrets => Some(SecretReferences {
                compared: false,
                base: None,
                not_found: Vec::new(),
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
    /// The resources whose references were not compared: the base does not declare them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_found: Vec<String>,
}

impl SecretReferences {
    /// What was not compared, in words (empty when everything was).
    pub fn not_found_sentence(&self, code: impl Fn(&str) -> String) -> String {
        match (&self.base, self.not_found.is_empty()) {
            (Some(b), false) => format!(
                "; not compared: {} (not found at {})",
                self.not_found
                    .iter()
                    .map(|a| code(a))
                    .collect::<Vec<_>>()
                    .join(", "),
                code(&b.rev)
            ),
            _ => String::new(),
        }
    }

    /// In words, for the text plan.
    pub fn sentence(&self) -> String {
        match &self.base {
            Some(b) => format!(
                "compared with {} ({}){}",
                b.rev,
                b.commit,
                self.not_found_sentence(str::to_string)
            ),
            None => "not compared (a changed ${env:...}/${file:...} reference is not seen; plan with --base REV to compare)".into(),
        }
    }
}

/// `apply --reviewed`: every action of the fresh plan that the reviewed plan does not hold as
/// it is (the same address, action, and changed fields with the same values, as shown), one
/// line each; empty when the fresh plan is all in the reviewed one. An action of the reviewed
/// plan that is no longer needed is no difference: less is done than was approved. Pure.
pub fn changed_since_review(reviewed: &super::Plan, fresh: &super::Plan) -> Vec<String> {
    use crate::util::output::Inert;
    let mut out = Vec::new();
    // A reviewed plan that compared secret references through git approved the changes it saw
    // there; a fresh plan without a base cannot see them and would drop them silently (red
    // team D26: an approved rotation never made).
    if let (Some(base), None) = (&reviewed.review.base, &fresh.review.base) {
        out.push(format!(
            "secret references: reviewed as compared with {} (--base), now not compared: apply with --base too",
            Inert(&base.rev)
        ));
    }
    if reviewed.target != fresh.target {
        out.push(format!(
            "the target: reviewed for {}, now {}",
            Inert(&reviewed.target),
            Inert(&fresh.target)
        ));
    }
    let value = |v: &Option<serde_json::Value>| {
        v.as_ref()
            .map(|v| Inert(v.to_string()).to_string())
            .unwrap_or_else(|| "(none)".to_string())
    };
    for a in &fresh.actions {
        let head = format!(
            "{} {} {}",
            a.action.symbol(),
            a.action.as_str(),
            Inert(&a.address)
        );
        let r = reviewed
            .actions
            .iter()
            .find(|r| r.address == a.address && r.action == a.action);
        let shown = |x: &super::Action| -> Vec<FieldShown> {
            let kind = x.address.kind;
            x.shown_fields()
                .iter()
                .map(|f| {
                    let f = super::normalize::displayed(kind, f);
                    (f.path.clone(), f.before.clone(), f.after.clone())
                })
                .collect()
        };
        let Some(r) = r else {
            let was = reviewed
                .actions
                .iter()
                .find(|r| r.address == a.address)
                .map(|r| format!("reviewed: {}", r.action.as_str()))
                .unwrap_or_else(|| "not in the reviewed plan".to_string());
            match a.action {
                // An update says what it would change.
                super::ActionKind::Update if !a.fields.is_empty() => {
                    for (path, before, after) in shown(a) {
                        out.push(format!(
                            "{head} ({was}): {}: {} -> {}",
                            Inert(&path),
                            value(&before),
                            value(&after)
                        ));
                    }
                }
                _ => out.push(format!("{head} ({was})")),
            }
            continue;
        };
        out.extend(secret_differences(&head, r, a));
        let (now, then) = (shown(a), shown(r));
        for (path, before, after) in &now {
            let change = format!("{} -> {}", value(before), value(after));
            match then.iter().find(|(p, _, _)| p == path) {
                Some((_, b, a)) if b == before && a == after => {}
                Some((_, b, a)) => out.push(format!(
                    "{head}: {}: {change} (reviewed: {} -> {})",
                    Inert(path),
                    value(b),
                    value(a)
                )),
                None => out.push(format!("{head}: {}: {change} (not reviewed)", Inert(path))),
            }
        }
    }
    out
}

/// The secret fields of `fresh`'s body whose reference is not the reviewed one (`reviewed`'s
/// body), one line each: both are shown `(sensitive)`, yet a different reference sends a
/// different secret. Compared by reference text (a `${file:}` by the path it names from its
/// manifest's folder); a literal secret is compared but never shown.
fn secret_differences(head: &str, reviewed: &super::Action, fresh: &super::Action) -> Vec<String> {
    use crate::util::output::Inert;
    use std::collections::BTreeMap;
    // Pointer -> (dotted path, what is compared, what is shown).
    let refs = |x: &super::Action| -> BTreeMap<String, (String, String, String)> {
        let Some(body) = &x.body else {
            return BTreeMap::new();
        };
        let folder = x
            .source
            .as_ref()
            .and_then(|s| s.file.parent())
            .unwrap_or(std::path::Path::new(""));
        x.address
            .kind
            .def()
            .secrets_in(body)
            .into_iter()
            .map(|f| {
                let (key, shown) = match crate::api::registry::parse_reference(&f.value) {
                    Some(crate::api::registry::SecretRef::File(path)) => (
                        format!("file:{}", folder.join(path).display()),
                        Inert(&f.value).to_string(),
                    ),
                    Some(_) => (f.value.clone(), Inert(&f.value).to_string()),
                    None => (format!("literal:{}", f.value), "(a literal)".to_string()),
                };
                (f.pointer, (f.path, key, shown))
            })
            .collect()
    };
    let (then, now) = (refs(reviewed), refs(fresh));
    let none = (String::new(), String::new(), "(none)".to_string());
    let pointers: std::collections::BTreeSet<&String> = then.keys().chain(now.keys()).collect();
    let mut out = Vec::new();
    for pointer in pointers {
        let (t, n) = (
            then.get(pointer).unwrap_or(&none),
            now.get(pointer).unwrap_or(&none),
        );
        if t.1 == n.1 {
            continue;
        }
        let path = if n.0.is_empty() { &t.0 } else { &n.0 };
        let (mut was, mut is) = (t.2.clone(), n.2.clone());
        if was == is {
            // The same text naming another file (the manifest moved to another folder).
            let file = |x: &super::Action| {
                x.source
                    .as_ref()
                    .map(|s| Inert(s.file.display().to_string()).to_string())
                    .unwrap_or_default()
            };
            was = format!("{was} (from {})", file(reviewed));
            is = format!("{is} (from {})", file(fresh));
        }
        out.push(format!("{head}: {}: reviewed {was}, now {is}", Inert(path)));
    }
    out
}

/// A field as shown: its path, before and after.
type FieldShown = (String, Option<serde_json::Value>, Option<serde_json::Value>);

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::changed_since_review;
    use crate::api::registry::{Address, Kind};
    use crate::plan::normalize::FieldChange;
    use crate::plan::{Action, ActionKind, Plan};

    fn update(slug: &str, path: &str, before: Value, after: Value) -> Action {
        Action {
            address: Address::new(Kind::named("Bucket"), Some(slug.to_string())),
            action: ActionKind::Update,
            source: None,
            fields: vec![FieldChange {
                path: path.into(),
                before: Some(before),
                after: Some(after),
            }],
            depends_on: vec![],
            reason: None,
            body: None,
            intended: None,
            fingerprint: None,
            cascade: vec![],
        }
    }

    fn plan(actions: Vec<Action>) -> Plan {
        Plan {
            target: "https://t.example.com".into(),
            actions,
            unchanged: 0,
            unmanaged: vec![],
            orphaned: vec![],
            observed: vec![],
            warnings: vec![],
            guard_violations: vec![],
            guard: Default::default(),
            review: Default::default(),
        }
    }

    #[test]
    fn a_fresh_plan_inside_the_reviewed_one_has_no_difference() {
        let a = update("a", "name", json!("A"), json!("B"));
        let b = update("b", "name", json!("C"), json!("D"));
        let reviewed = plan(vec![a.clone(), b]);
        // Less than reviewed (b done meanwhile) is no difference.
        assert!(changed_since_review(&reviewed, &plan(vec![a])).is_empty());
    }

    /// Red team D26: a reviewed plan made with --base, applied without it, would drop the
    /// reference changes it approved: a difference.
    #[test]
    fn a_base_reviewed_plan_applied_without_a_base_is_a_difference() {
        let mut reviewed = plan(vec![update("a", "name", json!("A"), json!("B"))]);
        reviewed.review.base = Some(super::Base {
            rev: "origin/main".into(),
            commit: "0123456".into(),
        });
        let fresh = plan(vec![]);
        assert_eq!(
            changed_since_review(&reviewed, &fresh),
            ["secret references: reviewed as compared with origin/main (--base), now not compared: apply with --base too"]
        );
        let mut with_base = plan(vec![]);
        with_base.review.base = reviewed.review.base.clone();
        assert!(changed_since_review(&reviewed, &with_base).is_empty());
    }

    #[test]
    fn every_difference_is_one_line() {
        let reviewed = plan(vec![update("a", "name", json!("A"), json!("B"))]);
        let mut delete = update("c", "name", json!("x"), json!("x"));
        delete.action = ActionKind::Delete;
        delete.fields.clear();
        let mut fresh = plan(vec![
            update("a", "name", json!("Z"), json!("B")),
            update("b", "name", json!("C"), json!("D")),
            delete,
        ]);
        fresh.target = "https://other.example.com".into();
        assert_eq!(
            changed_since_review(&reviewed, &fresh),
            [
                "the target: reviewed for https://t.example.com, now https://other.example.com",
                "~ update Bucket/a: name: \"Z\" -> \"B\" (reviewed: \"A\" -> \"B\")",
                "~ update Bucket/b (not in the reviewed plan): name: \"C\" -> \"D\"",
                "- delete Bucket/c (not in the reviewed plan)",
            ]
        );
    }

    /// A notifier update whose body sends `api_url`, read from `file`.
    fn secret_update(api_url: &str, file: &str, fields: &[(&str, Value)]) -> Action {
        let mut a = update("x", "name", json!("A"), json!("B"));
        a.address = Address::new(Kind::named("Notifier"), Some("x".to_string()));
        a.fields = fields
            .iter()
            .map(|(p, v)| FieldChange {
                path: (*p).into(),
                before: Some(v.clone()),
                after: Some(v.clone()),
            })
            .collect();
        a.source = Some(crate::plan::Source {
            file: file.into(),
            line: 1,
        });
        a.body = Some(std::sync::Arc::new(
            json!({"slug": "x", "name": "X", "slack": {"api_url": api_url, "channel": "#x"}}),
        ));
        a
    }

    #[test]
    fn a_secret_is_compared_by_its_reference_never_shown_by_its_value() {
        let rotation = [("slack.api_url", json!("(sensitive)"))];
        let same = |r: &str, f: &str| {
            changed_since_review(
                &plan(vec![secret_update("${env:A}", "cfg/n.yaml", &rotation)]),
                &plan(vec![secret_update(r, f, &rotation)]),
            )
        };
        assert!(same("${env:A}", "cfg/n.yaml").is_empty());
        assert_eq!(
            same("${env:EVIL}", "cfg/n.yaml"),
            ["~ update Notifier/x: slack.api_url: reviewed ${env:A}, now ${env:EVIL}"]
        );
        assert_eq!(
            same("https://hooks.example/literal-secret", "cfg/n.yaml"),
            ["~ update Notifier/x: slack.api_url: reviewed ${env:A}, now (a literal)"]
        );
        // A `${file:}` by the file it names: another path, or the same text in another folder.
        let file = |r: &str, f: &str| {
            changed_since_review(
                &plan(vec![secret_update(
                    "${file:k.txt}",
                    "cfg/n.yaml",
                    &rotation,
                )]),
                &plan(vec![secret_update(r, f, &rotation)]),
            )
        };
        assert!(file("${file:k.txt}", "cfg/n.yaml").is_empty());
        assert_eq!(
            file("${file:other.txt}", "cfg/n.yaml"),
            ["~ update Notifier/x: slack.api_url: reviewed ${file:k.txt}, now ${file:other.txt}"]
        );
        assert_eq!(
            file("${file:k.txt}", "cfg/evil/n.yaml"),
            ["~ update Notifier/x: slack.api_url: reviewed ${file:k.txt} (from cfg/n.yaml), now ${file:k.txt} (from cfg/evil/n.yaml)"]
        );
        // A reference change (`--base`) reviewed as A -> B, now A -> C.
        let change = |after: &str| [("slack.api_url", json!(after))];
        let reviewed = plan(vec![secret_update(
            "${env:B}",
            "cfg/n.yaml",
            &change("${env:B}"),
        )]);
        let fresh = plan(vec![secret_update(
            "${env:C}",
            "cfg/n.yaml",
            &change("${env:C}"),
        )]);
        let lines = changed_since_review(&reviewed, &fresh);
        assert!(
            lines.contains(
                &"~ update Notifier/x: slack.api_url: reviewed ${env:B}, now ${env:C}".to_string()
            ),
            "{lines:?}"
        );
    }
}
