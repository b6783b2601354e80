//! The planner's reference checks. A reference must name a resource that a manifest declares
//! or the target has (a dangling one is an error that suggests the closest slug of its kind),
//! and no delete of the plan may take a resource that a manifest still references: the server
//! would refuse the delete (400, in use) or the reference, so it is an error at plan time,
//! located at the referencing field.

use std::collections::{BTreeMap, HashSet};

use crate::api::registry::{Address, FoundReference, Kind};
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::manifest::Manifest;

use super::{Action, ActionKind, Current};

/// A reference of a manifest to a resource no manifest declares but the target has: the only
/// references a delete of this plan can break (deletes are of undeclared resources).
pub(super) struct OnTarget<'a> {
    from: &'a Manifest,
    reference: FoundReference,
    target: Address,
}

/// What checking one manifest's references found.
#[derive(Default)]
pub(super) struct Checked<'a> {
    pub problems: Vec<Diagnostic>,
    pub on_target: Vec<OnTarget<'a>>,
}

/// The addresses the manifests declare, as kind and slug, hashed: most references name a
/// declared resource, found without a copy of the slug or a walk of the sorted map.
type Declared<'a> = HashSet<(Kind, &'a str)>;

/// [`Declared`] of the manifests by address.
fn declared<'a>(by_address: &'a BTreeMap<Address, &Manifest>) -> Declared<'a> {
    by_address
        .keys()
        .filter_map(|a| Some((a.kind, a.slug.as_deref()?)))
        .collect()
}

/// Checks the references of `m` (at `address`) against the manifests (`declared`, the keys
/// of `by_address`) and the target; a reference to a kind the target cannot list is a
/// warning.
fn check<'a>(
    address: &Address,
    m: &'a Manifest,
    (by_address, declared): (&BTreeMap<Address, &Manifest>, &Declared<'_>),
    current: &Current,
    out: &mut Checked<'a>,
    warnings: &mut Vec<String>,
) {
    for r in m.references().iter() {
        if declared.contains(&(r.target, r.slug.as_str())) {
            continue;
        }
        let target = Address::new(r.target, Some(r.slug.clone()));
        if current.resources.contains_key(&target) {
            out.on_target.push(OnTarget {
                from: m,
                reference: r.clone(),
                target,
            });
            continue;
        }
        if current.known.contains(&r.target) {
            let suggestion = closest_slug(&target, by_address, current);
            out.problems.push(Diagnostic::error(
                &m.file,
                m.field_pos(&r.pointer),
                Problem::DanglingReference {
                    from: address.to_string(),
                    path: r.path.clone(),
                    target: target.to_string(),
                    suggestion,
                },
            ));
        } else {
            warnings.push(format!(
                "{address} references {target}, which cannot be checked: the target cannot list {} ({})",
                r.target,
                m.source()
            ));
        }
    }
}

/// What [`check`] finds for each manifest of `by_address`, in its order (`None`: excluded,
/// not checked): each manifest's references on its own, on all cores. Nothing when every
/// reference is known to name a manifest of `by_address` (`all_declared`: the load found none
/// undeclared), without looking (a debug build looks, and holds the claim to what it finds).
pub(super) fn check_all<'a>(
    by_address: &BTreeMap<Address, &'a Manifest>,
    current: &Current,
    excluded: &(dyn Fn(&Address) -> bool + Sync),
    all_declared: bool,
) -> Vec<Option<(Checked<'a>, Vec<String>)>> {
    use rayon::prelude::*;
    if all_declared {
        debug_assert!(
            check_all(by_address, current, excluded, false)
                .iter()
                .flatten()
                .all(|(c, w)| c.problems.is_empty() && c.on_target.is_empty() && w.is_empty()),
            "a reference the load called declared is not"
        );
        return by_address
            .keys()
            .map(|a| (!excluded(a)).then(Default::default))
            .collect();
    }
    let declared = declared(by_address);
    by_address
        .par_iter()
        .map(|(address, m)| {
            (!excluded(address)).then(|| {
                let (mut checked, mut warnings) = Default::default();
                let manifests = (by_address, &declared);
                check(address, m, manifests, current, &mut checked, &mut warnings);
                (checked, warnings)
            })
        })
        .collect()
}

/// The declared or existing address of the same kind whose slug is closest to the missing
/// one's, as `Kind/slug` (only worked out for an error).
fn closest_slug(
    missing: &Address,
    by_address: &BTreeMap<Address, &Manifest>,
    current: &Current,
) -> Option<String> {
    let slug = missing.slug.as_deref()?;
    let mut slugs: Vec<String> = by_address
        .keys()
        .chain(current.resources.keys())
        .filter(|a| a.kind == missing.kind)
        .filter_map(|a| a.slug.clone())
        .collect();
    slugs.sort();
    slugs.dedup();
    crate::util::jsonpath::closest(slug, &slugs)
        .map(|s| Address::new(missing.kind, Some(s)).to_string())
}

/// An error for every reference a manifest keeps to a resource this plan deletes, at the
/// referencing field, naming the delete's reason.
pub(super) fn deleted_but_referenced(
    on_target: &[OnTarget<'_>],
    actions: &[Action],
) -> Vec<Diagnostic> {
    let deleted: BTreeMap<&Address, &Action> = actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete)
        .map(|a| (&a.address, a))
        .collect();
    if deleted.is_empty() {
        return vec![];
    }
    on_target
        .iter()
        .filter_map(|held| {
            let delete = deleted.get(&held.target)?;
            Some(Diagnostic::error(
                &held.from.file,
                held.from.field_pos(&held.reference.pointer),
                Problem::ReferencedDelete {
                    from: held.from.address().to_string(),
                    path: held.reference.path.clone(),
                    target: held.target.to_string(),
                    why: delete.reason.clone().unwrap_or_default(),
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests;
