//! The planner: desired manifests + current state + what the target can do + settings →
//! an ordered [`Plan`].
//!
//! Architecture invariant: [`plan`] is pure and synchronous. It does no I/O, reads no clock
//! and no randomness; the same inputs give the same plan, byte for byte.

mod capabilities;
mod current;
mod decide;
pub mod drift;
pub mod file;
mod guard;
pub mod newer;
pub mod normalize;
mod order;
mod refs;
mod refused;
pub mod review;
pub mod risk;
pub mod secrets;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::api::registry::{Address, Kind};
use crate::config::diagnostic::Diagnostic;
use crate::config::pattern::Pattern;
use crate::config::settings::{Mode, Settings};
use crate::manifest::Manifest;
use decide::Decision;
use normalize::FieldChange;

pub use capabilities::Capabilities;
pub use current::{Current, Expected, Listed, Object};
pub use guard::{
    guards, over_ceiling, recompute_cascades, refusals, refuse_other_environment,
    unread_referrer_kinds, unsealed_refusals, CascadeMember, CascadeStatus, EnvironmentRefusal,
    Guard, GuardContext,
};

/// What an action does.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    Create,
    Update,
    Delete,
    Upsert,
    Unsupported,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Create => "create",
            ActionKind::Update => "update",
            ActionKind::Delete => "delete",
            ActionKind::Upsert => "upsert",
            ActionKind::Unsupported => "unsupported",
        }
    }

    pub fn symbol(self) -> char {
        match self {
            ActionKind::Create => '+',
            ActionKind::Update => '~',
            ActionKind::Delete => '-',
            ActionKind::Upsert => '^',
            ActionKind::Unsupported => '!',
        }
    }
}

/// Where a manifest is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub file: PathBuf,
    pub line: u32,
}

/// One step of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub address: Address,
    pub action: ActionKind,
    pub source: Option<Source>,
    pub fields: Vec<FieldChange>,
    /// Indices (into `Plan::actions`) of the actions that must finish first.
    pub depends_on: Vec<usize>,
    /// Why an action is unsupported, or what a follow-up update is for.
    pub reason: Option<String>,
    /// The full object to send (create, update, upsert); a create's or upsert's is its
    /// manifest's spec, shared, not copied.
    pub body: Option<std::sync::Arc<Value>>,
    /// For unsupported actions: what would have been done.
    pub intended: Option<ActionKind>,
    /// Fingerprint of the current object (absent for creates and upserts).
    pub fingerprint: Option<String>,
    /// For a delete of a kind whose delete can cascade (`force_delete`): the resources the
    /// cascade would take with it, as the current state shows them, minus those this plan
    /// deletes itself first.
    pub cascade: Vec<CascadeMember>,
}

impl Action {
    /// Counts as a change for `--detailed-exitcode` and `drift` (upserts cannot be compared).
    pub fn is_change(&self) -> bool {
        self.action != ActionKind::Upsert
    }

    /// The fields shown for the action. A create or upsert keeps none: they are its body's
    /// top-level fields, listed when shown (kept, they would be a second copy of every spec for
    /// the whole run); embedded documents stay JSON text, parsed for display by
    /// `normalize::displayed`.
    pub fn shown_fields(&self) -> std::borrow::Cow<'_, [FieldChange]> {
        match (&self.body, self.action) {
            (Some(body), ActionKind::Create | ActionKind::Upsert) if self.fields.is_empty() => {
                std::borrow::Cow::Owned(normalize::all_fields(body, true))
            }
            _ => std::borrow::Cow::Borrowed(&self.fields),
        }
    }
}

/// A resource on the target that no manifest declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmanaged {
    pub address: Address,
    /// Inside a `prune` pattern: deleted with `--prune`, drift for `drift`.
    pub in_prune_scope: bool,
}

/// The result of planning.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub target: String,
    /// In execution order: every action after the ones it depends on.
    pub actions: Vec<Action>,
    pub unchanged: usize,
    pub unmanaged: Vec<Unmanaged>,
    /// On the target, declared by no manifest, and never deleted by its management mode
    /// (`no-delete`, `observe`): kept, with or without `--prune`. Sorted.
    pub orphaned: Vec<Address>,
    /// What `observe` resources would need (a create or an update), shown and counted by
    /// `drift`, never sent: apply walks `actions` only. By address.
    pub observed: Vec<Action>,
    pub warnings: Vec<String>,
    /// Deletes would break `max_deletes` or the empty-prune guard (apply refuses).
    pub guard_violations: Vec<Guard>,
    /// What the delete guards are checked against (saved with the plan, so that `apply FILE`
    /// runs the very same check as `apply DIR`).
    pub guard: GuardContext,
    /// How the plan was made, for the reviewer: set by the ops layer, never by the planner.
    pub review: review::Review,
}

/// Counts by action, as the summary shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub create: usize,
    pub update: usize,
    pub delete: usize,
    pub upsert: usize,
    pub unchanged: usize,
    pub unsupported: usize,
}

impl Plan {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            unchanged: self.unchanged,
            ..Summary::default()
        };
        for a in &self.actions {
            match a.action {
                ActionKind::Create => s.create += 1,
                ActionKind::Update => s.update += 1,
                ActionKind::Delete => s.delete += 1,
                ActionKind::Upsert => s.upsert += 1,
                ActionKind::Unsupported => s.unsupported += 1,
            }
        }
        s
    }

    /// Changes that `--detailed-exitcode` counts.
    pub fn has_changes(&self) -> bool {
        self.actions.iter().any(Action::is_change)
    }

    /// What `drift` reports: managed changes, observed differences, or unmanaged resources
    /// in the prune scope. (Orphaned resources are kept on purpose: not drift.)
    pub fn has_drift(&self) -> bool {
        self.has_changes()
            || !self.observed.is_empty()
            || self.unmanaged.iter().any(|u| u.in_prune_scope)
    }
}

/// Options of one planning run.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    pub target: String,
    /// Delete resources in the prune scope that no manifest declares.
    pub prune: bool,
    /// Only addresses matching one of these (all when empty).
    pub only: Vec<Pattern>,
    /// Every reference of the manifests planned names one of them (their load found none
    /// undeclared: `manifest::Loaded::references_declared`), so the reference checks find
    /// nothing and are skipped (`refs::check_all`; a debug build checks the claim).
    pub references_declared: bool,
}

/// Why no plan could be made: located problems in the manifests.
#[derive(Debug, thiserror::Error)]
#[error("the plan cannot be made: {}", problems(.0.len()))]
pub struct PlanError(pub Vec<Diagnostic>);

fn problems(n: usize) -> String {
    if n == 1 {
        "1 problem in the manifests".to_string()
    } else {
        format!("{n} problems in the manifests")
    }
}

fn matches_any(patterns: &[Pattern], address: &Address) -> bool {
    patterns.iter().any(|p| p.matches(address))
}

fn source(m: &Manifest) -> Source {
    Source {
        file: m.file.clone(),
        line: m.pos.line,
    }
}

/// Makes the plan. Pure.
pub fn plan(
    desired: &[Manifest],
    current: &Current,
    caps: &Capabilities,
    settings: &Settings,
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    debug_assert!(
        desired
            .iter()
            .all(|m| !m.is_lean() || !needs_spec(m, current)),
        "a spec the plan needs was not read back"
    );
    let by_address: BTreeMap<Address, &Manifest> =
        desired.iter().map(|m| (m.address(), m)).collect();
    let ctx = decide::Ctx {
        current,
        caps,
        settings,
    };
    let mut gathered = Gathered {
        warnings: refused::check(&current.refused, desired, &by_address, settings, opts)?,
        ..Gathered::default()
    };
    let on_target = gather_declared(&mut gathered, &ctx, &by_address, opts)?;
    if opts.prune && settings.prune.is_empty() {
        gathered.warnings.push(
            "--prune deletes nothing: cfgctl.yaml has no `prune` patterns (they say which resources \
             the repository owns; see docs/prune.md)"
                .to_string(),
        );
    }
    gathered.warnings.extend(decide::unmatched_rules(
        settings,
        by_address.keys().chain(current.resources.keys()),
    ));
    gather_undeclared(&mut gathered, &ctx, &by_address, opts);
    let Gathered {
        mut actions,
        unchanged,
        observed,
        warnings,
        unmanaged,
        orphaned,
    } = gathered;
    let mut problems = refs::deleted_but_referenced(&on_target, &actions);
    if !problems.is_empty() {
        crate::config::diagnostic::sort(&mut problems);
        return Err(PlanError(problems));
    }

    let guard = GuardContext::new(settings, desired);
    guard::add_cascades(&mut actions, current, &by_address, &guard);
    refused::check_cascades(&current.refused, &actions)?;
    let guard_violations = guards(&actions, &guard);
    let actions = order::order(actions, desired, current, caps).map_err(PlanError)?;
    Ok(Plan {
        target: opts.target.clone(),
        actions,
        unchanged,
        unmanaged,
        orphaned,
        observed,
        warnings,
        guard_violations,
        guard,
        review: review::Review::default(),
    })
}

/// What the per-resource decisions add up to, before the plan is checked and ordered.
#[derive(Default)]
struct Gathered {
    actions: Vec<Action>,
    unchanged: usize,
    observed: Vec<Action>,
    warnings: Vec<String>,
    unmanaged: Vec<Unmanaged>,
    orphaned: Vec<Address>,
}

/// Whether `--only` takes the address in (all when it is empty).
fn in_scope(opts: &PlanOptions, a: &Address) -> bool {
    opts.only.is_empty() || matches_any(&opts.only, a)
}

/// The decision for each manifest (`decide::manifest`), its references checked (every
/// manifest's, even out of `--only`); the references on the target that the deletes must
/// keep, or the located problems of references to nothing.
fn gather_declared<'a>(
    gathered: &mut Gathered,
    ctx: &decide::Ctx<'_>,
    by_address: &BTreeMap<Address, &'a Manifest>,
    opts: &PlanOptions,
) -> Result<Vec<refs::OnTarget<'a>>, PlanError> {
    let (current, settings) = (ctx.current, ctx.settings);
    let excluded = |a: &Address| matches_any(&settings.exclude, a);
    let mut checked = refs::Checked::default();
    let mut newer_fields = ctx.caps.newer_fields.clone();
    // A create-only resource that exists is never compared.
    let mut compared = compare_all(by_address, current, settings, |a| {
        in_scope(opts, a) && !excluded(a) && settings.mode(a) != Mode::CreateOnly
    });
    // References must exist somewhere; checked for every manifest, even out of --only.
    let refs_of = refs::check_all(by_address, current, &excluded, opts.references_declared);
    for ((address, m), refs) in by_address.iter().zip(refs_of) {
        let Some((found, warnings)) = refs else {
            gathered.warnings.push(format!(
                "{address} ({}) matches an `exclude` pattern of cfgctl.yaml: it is never applied",
                m.source()
            ));
            continue;
        };
        checked.problems.extend(found.problems);
        checked.on_target.extend(found.on_target);
        gathered.warnings.extend(warnings);
        if !in_scope(opts, address) {
            continue;
        }
        let ahead = compared.remove(address);
        match decide::manifest(ctx, address, m, ahead, &mut newer_fields) {
            Decision::Unchanged => gathered.unchanged += 1,
            Decision::Act(a) => gathered.actions.push(a),
            Decision::Observed(a) => gathered.observed.push(a),
            Decision::Warn(w) => gathered.warnings.push(w),
        }
    }
    let refs::Checked {
        mut problems,
        on_target,
    } = checked;
    if !problems.is_empty() {
        crate::config::diagnostic::sort(&mut problems);
        return Err(PlanError(problems));
    }
    gathered.warnings.extend(newer::warning(&newer_fields));
    Ok(on_target)
}

/// What becomes of each resource on the target that no manifest declares: kept by its mode
/// (`orphaned`), deleted inside the prune scope with `--prune`, else reported unmanaged.
fn gather_undeclared(
    gathered: &mut Gathered,
    ctx: &decide::Ctx<'_>,
    by_address: &BTreeMap<Address, &Manifest>,
    opts: &PlanOptions,
) {
    let settings = ctx.settings;
    for (address, cur) in &ctx.current.resources {
        if by_address.contains_key(address)
            || matches_any(&settings.exclude, address)
            || !in_scope(opts, address)
        {
            continue;
        }
        // Never deleted, even with --prune: kept, and reported as such.
        if settings.mode(address).keeps() {
            gathered.orphaned.push(address.clone());
            continue;
        }
        let prune_pattern = settings.prune.iter().find(|p| p.matches(address));
        match prune_pattern {
            Some(pattern) if opts.prune => gathered
                .actions
                .push(decide::delete(address, cur, pattern, ctx.caps)),
            _ => gathered.unmanaged.push(Unmanaged {
                address: address.clone(),
                in_prune_scope: prune_pattern.is_some(),
            }),
        }
    }
}

/// The digest of a manifest's comparable form, worked out once.
pub(crate) fn digest(m: &Manifest) -> normalize::Digest {
    normalize::Digest(
        *m.digest
            .get_or_init(|| normalize::digest_prepared(m.kind, &m.spec, &m.prepared).0),
    )
}

/// The hook of a lean load (`manifest::load_dir_lean`): digests the manifest and says whether
/// the planner can do without its spec wherever the target has its object with that digest
/// (see [`needs_spec`]). A kind with `ignore` rules is compared in full, and one with secret
/// fields has them read by `secrets::stand_in`: those keep their specs.
pub fn may_let_go(m: &Manifest, settings: &Settings) -> bool {
    digest(m);
    !settings.ignore.iter().any(|r| r.kind == m.kind) && m.kind.def().secrets.is_empty()
}

/// A lean load's part for a plan (`manifest::load_dir_lean`): [`may_let_go`], its documents
/// read as the digest reads them.
pub const LEAN: crate::manifest::Lean<'static> = crate::manifest::Lean {
    let_go: &may_let_go,
    read_document: normalize::read_document,
};

/// [`may_let_go`], knowing what the target holds once its lists are read (`listed`): a
/// manifest the plan will send (its kind not read, its object missing) keeps its spec, which
/// would otherwise be read back from its file at once, and is not digested (nothing is
/// compared with it: a first apply of the 10,000 spent a tenth of its CPU on digests). Before,
/// every spec that may go goes.
pub fn may_let_go_given(m: &Manifest, settings: &Settings, listed: Option<&Listed>) -> bool {
    if listed.is_some_and(|l| !l.holds(m)) {
        return false;
    }
    may_let_go(m, settings)
}

/// Whether planning against `current` reads the spec of `m` (one [`may_let_go`] let go):
/// its kind not read (an upsert sends it), its object missing (a create sends it) or with
/// another digest (compared in full, and an update sends it). An unchanged manifest is
/// counted by its digest, its references read from what the load recorded.
pub fn needs_spec(m: &Manifest, current: &Current) -> bool {
    if !current.known.contains(&m.kind) {
        return true;
    }
    current
        .resources
        .get(&m.address())
        .is_none_or(|cur| cur.digest() != digest(m))
}

/// Works out what the planner will ask of every manifest (the digests of their comparable
/// forms), on all cores: called by the commands while the target is still being read, so the
/// plan itself only compares digests.
pub fn prepare(desired: &[&Manifest]) {
    use rayon::prelude::*;
    // Only what is left to work out goes to the pool: a lean load's hook worked out every
    // digest already, and work handed to the pool while it reads the target's pages waits
    // for them (the digests expected, set next, would come only at the plan's end).
    let left: Vec<&&Manifest> = desired
        .iter()
        .filter(|m| m.digest.get().is_none())
        .collect();
    if left.is_empty() {
        return;
    }
    left.par_iter().for_each(|m| {
        digest(m);
    });
}

/// The per-resource work of a plan, done ahead on all cores.
enum Compared {
    /// The manifest and its current object are the same once normalised.
    Same,
    /// What differs, field by field (the normalised forms are let go at once: a bulk change
    /// would otherwise hold both forms of every changed resource until the plan is made).
    Differ(Vec<FieldChange>),
}

/// Compares every wanted manifest with its current object, on all cores (digests first: see
/// [`compare`]). Only what differs keeps
/// its normalised forms, so memory stays with the changes. Pure and deterministic: the result
/// is keyed by address.
fn compare_all(
    by_address: &BTreeMap<Address, &Manifest>,
    current: &Current,
    settings: &Settings,
    wanted: impl Fn(&Address) -> bool + Sync,
) -> BTreeMap<Address, Compared> {
    use rayon::prelude::*;
    let work: Vec<(&Address, &Manifest)> = by_address
        .iter()
        .filter(|(a, _)| wanted(a))
        .map(|(a, m)| (a, *m))
        .collect();
    work.into_par_iter()
        .filter_map(|(address, m)| {
            let cur = current.resources.get(address)?;
            // The same digest is all `decide::manifest` needs: no copy of the address each.
            let same = !ignored(address.kind, settings) && cur.digest() == digest(m);
            (current.known.contains(&address.kind) && !same)
                .then(|| (address.clone(), compare(address.kind, cur, m, settings)))
        })
        .collect()
}

/// Whether the kind has `ignore` rules (which the digests leave out).
fn ignored(kind: Kind, s: &Settings) -> bool {
    s.ignore.iter().any(|r| r.kind == kind)
}

/// Digests first: an object whose comparable form has the manifest's digest is unchanged and
/// is never parsed again. `ignore` rules of the kind (which the digests leave out) and a
/// difference compare the normalised forms in full.
fn compare(kind: Kind, current: &Object, desired: &Manifest, settings: &Settings) -> Compared {
    if !ignored(kind, settings) && current.digest() == digest(desired) {
        return Compared::Same;
    }
    let before = normalize::normalize(kind, &current.value(), &settings.ignore);
    let after = normalize::normalize(kind, &desired.spec, &settings.ignore);
    if before == after {
        Compared::Same
    } else {
        Compared::Differ(normalize::diff(kind, &before, &after))
    }
}

#[cfg(test)]
mod tests;
