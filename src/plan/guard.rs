//! The delete guards, in one place: `max_deletes`, the empty-prune guard, and what a
//! cascading delete (`--force-delete-buckets`) would take. The planner reports what
//! [`guards`] returns; `apply` refuses on [`refusals`], for a plan made now and a saved one
//! alike.

use std::collections::{BTreeMap, BTreeSet};

use super::{matches_any, Action, ActionKind, Current, Plan};
use crate::api::registry::{Address, Kind};
use crate::config::pattern::Pattern;
use crate::config::settings::{ManageRule, Mode, Settings};
use crate::manifest::Manifest;
use crate::util::output::Inert;

/// A resource that a cascading delete would take with it, and what it is to this repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CascadeMember {
    pub address: Address,
    pub status: CascadeStatus,
}

/// What a resource taken by a cascade is to this repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CascadeStatus {
    /// A manifest declares it.
    Managed,
    /// It matches an `exclude` pattern: never touched.
    Excluded,
    /// Not declared, inside the prune scope (it could be deleted with `--prune`).
    UnmanagedInPruneScope,
    /// Not declared, outside the prune scope: not the repository's to delete.
    Unmanaged,
    /// Its management mode (`no-delete`, `observe`) says it is never deleted.
    Kept,
    /// Every resource of a kind that may reference the deleted one, which the target cannot
    /// list: what the cascade takes of it cannot be known (the member's address is the kind).
    Unread,
}

impl CascadeStatus {
    /// A cascade may only take what the repository could delete itself.
    pub fn may_be_taken(self) -> bool {
        self == CascadeStatus::UnmanagedInPruneScope
    }

    pub fn describe(self) -> &'static str {
        match self {
            CascadeStatus::Managed => "declared by a manifest",
            CascadeStatus::Excluded => "excluded in cfgctl.yaml",
            CascadeStatus::UnmanagedInPruneScope => "unmanaged, in the prune scope",
            CascadeStatus::Unmanaged => "unmanaged, outside the prune scope",
            CascadeStatus::Kept => "never deleted by its mode in cfgctl.yaml",
            CascadeStatus::Unread => {
                "any that reference it: the target cannot list this kind, so what the cascade takes is unknown"
            }
        }
    }
}

/// The settings and facts the delete guards need.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardContext {
    pub max_deletes: u32,
    pub prune: Vec<Pattern>,
    pub exclude: Vec<Pattern>,
    /// Kinds that at least one manifest declares (a kind not here must not be emptied).
    pub declared: BTreeSet<Kind>,
    /// The management modes (`manage:`), first match wins: what no action may break.
    pub manage: Vec<ManageRule>,
    /// A saved plan's seal of these guards ([`seal`]): set by the command that writes the
    /// plan, checked by `apply PLANFILE`; a file's guards count only as far as they are
    /// sealed under the applying user's key, or no looser than what apply enforces anyway.
    pub seal: Option<String>,
    /// The environment of `cfgctl.yaml` the plan was made for (`--env NAME`), `None` for a
    /// plan of a target given by `--url`/`--local`. Set by the caller after planning (the
    /// planner knows targets, not environments) and before the plan is sealed or saved: the
    /// seal covers it, a saved plan records it (`guards.environment`, written only when set)
    /// and `apply FILE` holds it to the environment asked for
    /// ([`refuse_other_environment`]).
    pub environment: Option<String>,
}

impl Default for GuardContext {
    fn default() -> Self {
        GuardContext {
            max_deletes: crate::config::settings::DEFAULT_MAX_DELETES,
            prune: Vec::new(),
            exclude: Vec::new(),
            declared: BTreeSet::new(),
            manage: Vec::new(),
            seal: None,
            environment: None,
        }
    }
}

impl GuardContext {
    pub fn new(settings: &Settings, desired: &[Manifest]) -> GuardContext {
        GuardContext {
            max_deletes: settings.max_deletes,
            prune: settings.prune.clone(),
            exclude: settings.exclude.clone(),
            declared: desired.iter().map(|m| m.kind).collect(),
            manage: settings.manage.clone(),
            seal: None,
            environment: None,
        }
    }

    /// The seal of these guards for a plan of `target` under `key` (a keyed BLAKE3 hash of
    /// every field, each with its length, so no two different guards seal alike).
    pub fn seal_with(&self, target: &str, key: &[u8; 32]) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(key);
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(b"saved plan guards");
        field(target.as_bytes());
        field(&self.max_deletes.to_le_bytes());
        for (what, patterns) in [("prune", &self.prune), ("exclude", &self.exclude)] {
            field(what.as_bytes());
            field(&(patterns.len() as u64).to_le_bytes());
            for p in patterns {
                field(p.to_string().as_bytes());
            }
        }
        field(b"declared");
        field(&(self.declared.len() as u64).to_le_bytes());
        for k in &self.declared {
            field(k.name().as_bytes());
        }
        field(b"manage");
        field(&(self.manage.len() as u64).to_le_bytes());
        for r in &self.manage {
            field(r.pattern.to_string().as_bytes());
            field(r.mode.as_str().as_bytes());
        }
        // Only when set, so a plan without environments seals as it always has (a plan saved
        // before environments existed still verifies); with one, two more fields, so no plan
        // with an environment seals like one without.
        if let Some(environment) = &self.environment {
            field(b"environment");
            field(environment.as_bytes());
        }
        h.finalize()
    }

    /// Whether the seal these guards carry is theirs for `target` under `key` (an edited
    /// environment breaks it like any edited guard).
    pub fn is_sealed(&self, target: &str, key: &[u8; 32]) -> bool {
        let Some(seal) = self.seal.as_deref() else {
            return false;
        };
        // `blake3::Hash` compares in constant time.
        blake3::Hash::from_hex(seal).is_ok_and(|s| s == self.seal_with(target, key))
    }

    /// May the repository delete this resource at all (inside `prune`, not excluded)?
    pub fn may_delete(&self, address: &Address) -> bool {
        matches_any(&self.prune, address) && !matches_any(&self.exclude, address)
    }
}

/// A safety rule on deletes that the plan breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Guard {
    #[error("the plan deletes {deletes} resources, more than max_deletes ({max}) of cfgctl.yaml")]
    MaxDeletes { deletes: usize, max: u32 },
    #[error("the prune scope deletes all {count} {kind} resource(s) while no manifest declares any {kind}: an empty directory or a wrong path? (apply needs --allow-empty-prune)")]
    EmptyPrune { kind: Kind, count: usize },
}

/// Under each delete of a kind whose delete can cascade: what the cascade would take, from
/// the current state's references, minus what the plan deletes itself (those go first); and,
/// for every kind that may reference the deleted one but whose state was not read, an
/// [`CascadeStatus::Unread`] member: the cascade cannot be known in full, so it is refused.
pub(super) fn add_cascades(
    actions: &mut [Action],
    current: &Current,
    declared: &BTreeMap<Address, &Manifest>,
    guard: &GuardContext,
) {
    set_cascades(actions, current, guard, |a| declared.contains_key(a));
}

/// The cascades of a saved plan's deletes worked out again from the state read now (a saved
/// plan's own cascade is what the file says, not what the target has): members the file marks
/// as declared by a manifest stay so (the file can only make a member more protected), every
/// other one is classed by the saved guards, and a kind not read now is unread.
pub fn recompute_cascades(actions: &mut [Action], current: &Current, guard: &GuardContext) {
    let managed: BTreeSet<Address> = actions
        .iter()
        .flat_map(|a| &a.cascade)
        .filter(|m| m.status == CascadeStatus::Managed)
        .map(|m| m.address.clone())
        .collect();
    set_cascades(actions, current, guard, |a| managed.contains(a));
}

fn set_cascades(
    actions: &mut [Action],
    current: &Current,
    guard: &GuardContext,
    declared: impl Fn(&Address) -> bool,
) {
    let deleted: BTreeSet<Address> = actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete)
        .map(|a| a.address.clone())
        .collect();
    for a in actions.iter_mut() {
        if a.action != ActionKind::Delete || !a.address.kind.def().force_delete {
            continue;
        }
        a.cascade = current
            .referrers(&a.address)
            .into_iter()
            .filter(|r| !deleted.contains(r))
            .map(|address| {
                let status = if matches_any(&guard.exclude, &address) {
                    CascadeStatus::Excluded
                } else if crate::config::settings::mode_of(&guard.manage, &address).keeps() {
                    CascadeStatus::Kept
                } else if declared(&address) {
                    CascadeStatus::Managed
                } else if matches_any(&guard.prune, &address) {
                    CascadeStatus::UnmanagedInPruneScope
                } else {
                    CascadeStatus::Unmanaged
                };
                CascadeMember { address, status }
            })
            .collect();
        a.cascade.extend(
            unread_referrer_kinds(a.address.kind, &current.known)
                .into_iter()
                .map(|kind| CascadeMember {
                    address: Address::new(kind, None),
                    status: CascadeStatus::Unread,
                }),
        );
    }
}

/// The kinds that may reference a resource of `kind` (a reference field of the registry
/// names it) and are not among the kinds `readable`, sorted.
pub fn unread_referrer_kinds(kind: Kind, readable: &BTreeSet<Kind>) -> Vec<Kind> {
    crate::api::registry::kinds()
        .into_iter()
        .filter(|d| d.references.iter().any(|r| r.target == kind))
        .map(|d| d.kind)
        .filter(|k| !readable.contains(k))
        .collect()
}

/// The addresses the actions delete.
fn deletes(actions: &[Action]) -> impl Iterator<Item = &Address> {
    actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete)
        .map(|a| &a.address)
}

/// The safety rules on deletes: `max_deletes`, and no kind emptied because it has no
/// manifests at all. The one guard function: the planner reports what it returns, and
/// `apply` (from a directory or from a saved plan) refuses on it.
pub fn guards(actions: &[Action], ctx: &GuardContext) -> Vec<Guard> {
    let mut out = Vec::new();
    let deletes: Vec<&Address> = deletes(actions).collect();
    if deletes.len() > ctx.max_deletes as usize {
        out.push(Guard::MaxDeletes {
            deletes: deletes.len(),
            max: ctx.max_deletes,
        });
    }
    let mut by_kind: BTreeMap<Kind, usize> = BTreeMap::new();
    for a in &deletes {
        *by_kind.entry(a.kind).or_default() += 1;
    }
    for (kind, n) in by_kind {
        if !ctx.declared.contains(&kind) {
            out.push(Guard::EmptyPrune { kind, count: n });
        }
    }
    out
}

/// The actions that break the management mode of their resource: any write of an `observe`
/// one, an update (or upsert) of a `create-only` one (but the follow-up update of a create
/// the plan makes itself), a delete of a `no-delete` one. The planner makes none; a saved plan
/// edited by hand may hold one, and apply refuses it. Each entry is one reason, in words.
pub fn mode_violations(actions: &[Action], manage: &[ManageRule]) -> Vec<String> {
    let mut out = Vec::new();
    for a in actions {
        let mode = crate::config::settings::mode_of(manage, &a.address);
        let after_own_create = || {
            a.depends_on.iter().any(|&d| {
                actions
                    .get(d)
                    .is_some_and(|c| c.address == a.address && c.action == ActionKind::Create)
            })
        };
        let broken = match (mode, a.action) {
            (_, ActionKind::Unsupported) | (Mode::Full, _) => false,
            (Mode::Observe, _) => true,
            (Mode::CreateOnly, ActionKind::Update) => !after_own_create(),
            (Mode::CreateOnly, ActionKind::Upsert) => true,
            (Mode::NoDelete, ActionKind::Delete) => true,
            _ => false,
        };
        if broken {
            out.push(format!(
                "the plan would {} {}, whose mode in cfgctl.yaml is {mode}",
                a.action.as_str(),
                a.address
            ));
        }
    }
    out
}

/// What `apply PLANFILE` refuses beyond [`refusals`] when the file's guards are not sealed
/// under the applying user's key (edited, or made with another token): the plan must also
/// keep the guards apply enforces without it, `applied` (`--max-deletes`, the `cfgctl.yaml`
/// of the directory apply runs in, else the defaults: 25 deletes, no prune scope, no kind
/// declared), so the file can only tighten them.
pub fn unsealed_refusals(
    plan: &Plan,
    applied: &GuardContext,
    allow_empty_prune: bool,
) -> Vec<String> {
    let why = "the saved plan's guards are not sealed for this user and token, so apply's own";
    let mut out: Vec<String> = guards(&plan.actions, applied)
        .into_iter()
        .filter(|g| !(matches!(g, Guard::EmptyPrune { .. }) && allow_empty_prune))
        .map(|g| format!("{g} ({why} settings count)"))
        .chain(
            mode_violations(&plan.actions, &applied.manage)
                .into_iter()
                .map(|m| format!("{m} ({why} management modes count)")),
        )
        .collect();
    let outside: Vec<String> = plan
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete && !applied.may_delete(&a.address))
        .map(|a| a.address.to_string())
        .collect();
    if !outside.is_empty() {
        let shown = outside
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = match outside.len() {
            n if n > 10 => format!(" and {} more", n - 10),
            _ => String::new(),
        };
        out.push(format!(
            "{} {} outside the prune scope of the cfgctl.yaml apply runs with ({shown}{more}; {why} prune scope counts)",
            outside.len(),
            if outside.len() == 1 { "delete is" } else { "deletes are" },
        ));
    }
    out
}

/// What `apply` refuses, from a directory or a saved plan alike: the delete guards (the
/// empty-prune one unless `allow_empty_prune`), an action that breaks a management mode, and with `force_delete` a cascade that would
/// take a resource the repository may not delete. Each entry is one reason, in words.
pub fn refusals(plan: &Plan, allow_empty_prune: bool, force_delete: bool) -> Vec<String> {
    let mut out: Vec<String> = guards(&plan.actions, &plan.guard)
        .into_iter()
        .filter(|g| !(matches!(g, Guard::EmptyPrune { .. }) && allow_empty_prune))
        .map(|g| g.to_string())
        .chain(mode_violations(&plan.actions, &plan.guard.manage))
        .collect();
    if force_delete {
        for a in &plan.actions {
            let refused: Vec<String> = a
                .cascade
                .iter()
                .filter(|m| !m.status.may_be_taken())
                .map(|m| format!("{} ({})", m.address, m.status.describe()))
                .collect();
            if !refused.is_empty() {
                out.push(format!(
                    "--force-delete-buckets would make the delete of {} take {} with it",
                    a.address,
                    refused.join(", ")
                ));
            }
        }
    }
    out
}

/// `apply --max-deletes N`: a plan deleting more than N is refused, whatever its own guard
/// allows (a ceiling under cfgctl.yaml's `max_deletes`, never above it: a plan past its own
/// guard is refused by that guard, named). Red team E10: the flag was read only for a saved
/// plan whose guards were not sealed.
pub fn over_ceiling(plan: &Plan, max: Option<u32>) -> Option<String> {
    let max = max? as usize;
    let deletes = deletes(&plan.actions).count();
    (deletes > max && deletes <= plan.guard.max_deletes as usize)
        .then(|| format!("the plan deletes {deletes} resources, more than --max-deletes ({max})"))
}

/// Why `apply FILE` refuses a saved plan for the environments asked for (nothing is sent).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentRefusal {
    #[error("the saved plan was made for the environment `{}`, not `{}`: nothing was changed; make a plan for `{}` with `cfgctl plan --env {} --out FILE`", Inert(.saved), Inert(.requested), Inert(.requested), Inert(.requested))]
    Other { saved: String, requested: String },
    #[error("the saved plan was made without environments (for its target, by --url or --local), not for the environment `{}`: nothing was changed; apply it without --env", Inert(.requested))]
    NoneSaved { requested: String },
    #[error("a saved plan is for one environment ({}), but {requested} were asked for: nothing was changed", recorded(.saved))]
    Several {
        saved: Option<String>,
        requested: usize,
    },
}

/// The environment a saved plan records, for a message.
fn recorded(saved: &Option<String>) -> String {
    match saved {
        Some(name) => format!("`{}`", Inert(name)),
        None => "this one records none".to_string(),
    }
}

/// What `apply FILE` refuses before it sends anything, given the environment the saved plan
/// records (`plan.guard.environment`) and the environments asked for (`--env NAME`...,
/// `--all-envs` expanded to every name). Pure.
///
/// The rule: the environments asked for must be exactly the plan's.
/// - No `--env`: allowed either way. A plan with an environment is applied to that
///   environment (its `url` and token of `cfgctl.yaml`: the caller resolves the connection
///   from the recorded name); a plan without one to the target given as usual. (The target
///   check of `apply FILE` still holds: a plan made for another URL is refused.)
/// - `--env NAME`: allowed only when the plan records `NAME`; a plan of another environment,
///   or of none (a plan of a bare target holds no environment's variables or overlay), is
///   refused.
/// - More than one environment: refused (a saved plan is one environment's).
pub fn refuse_other_environment(
    saved: Option<&str>,
    requested: &[String],
) -> Option<EnvironmentRefusal> {
    match (saved, requested) {
        (_, []) => None,
        (Some(saved), [one]) if saved == one => None,
        (Some(saved), [one]) => Some(EnvironmentRefusal::Other {
            saved: saved.to_string(),
            requested: one.clone(),
        }),
        (None, [one]) => Some(EnvironmentRefusal::NoneSaved {
            requested: one.clone(),
        }),
        (saved, several) => Some(EnvironmentRefusal::Several {
            saved: saved.map(str::to_string),
            requested: several.len(),
        }),
    }
}
