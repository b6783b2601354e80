//! The orchestration layer, after cargo's `ops`: the steps the commands share, written once.
//! A command (`commands::*`) resolves nothing and orchestrates nothing: it hands its settings
//! to `ops`, renders what comes back and picks the exit code. `ops` knows no clap and prints
//! nothing: a failure that comes with located problems is a [`Diagnosed`] error, whose
//! problems the command edge prints before the error line.
//!
//! - `apply`: [`apply()`], one target: the plan made now (`review`), then, as for a saved
//!   plan, the one way a plan is sent: secrets, refusals, the actions run; what is shown and
//!   answered goes through [`ApplyUi`].
//! - `base`: `--base REV`, the secret references at a git revision; the plan's commit.
//! - `connect`: a target (`--url`, or the `--local` tenant) as a [`Connection`].
//! - `load`: the manifests, loaded on blocking threads while the target is read.
//! - `plan`: [`plan()`], the one door to a plan: load + fetch + the no-change memo + plan.
//! - `review`: what a plan made now is held to, on the manifests it was made from: the
//!   policy's findings recorded in it (`plan`) or enforced after the rotations (`apply`).
//! - `reviewed`: `apply --reviewed`, the fresh plan held to the reviewed one.
//! - `saved`: [`apply_saved`], `apply PLANFILE`: the saved plan read and checked against its
//!   target, then sent as `apply` sends.
//! - `envs`: environments: which ones a command line selects, each one's target, and
//!   several planned at once ([`plan_each`]), their manifests loaded once for all.
//!
//! Everything here may run several times at once inside one runtime (one call per target or
//! environment): no `block_on`, no process-wide state but the kind registry and the output
//! layer's secrets; the runtime is made at the command edge.

mod apply;
mod base;
mod connect;
mod envs;
mod load;
pub mod memo;
mod plan;
pub mod policy;
mod review;
mod reviewed;
mod saved;

pub use apply::{apply, ApplySettings, ApplyUi};
pub use base::{head_commit, BaseError, BaseRefs};
pub use connect::{connect, fetch, resolve_token, seal_key, Connection, TargetSettings};
pub use envs::{
    plan_each, refuse_one_target, refuse_one_tenant_twice, select, stage_of, target_for, EnvError,
    EnvOutcome, TargetError,
};
pub use load::{load_valid, SharedLoad};
pub use plan::{plan, Keep, PlanRequest, Planned};
pub use review::{policy_into_plan, rotate_and_check};
pub use reviewed::{check_reviewed, ReviewedError};
pub use saved::{apply_saved, StalePlan};

use crate::config::diagnostic::Diagnostic;

/// A failure that comes with the located problems behind it (the manifests' errors, the
/// planner's, the server's rejections of a dry run): the command edge prints each problem on
/// its line, then the error.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Diagnosed {
    pub diagnostics: Vec<Diagnostic>,
    pub message: String,
}

impl From<crate::plan::PlanError> for Diagnosed {
    fn from(e: crate::plan::PlanError) -> Diagnosed {
        let message = e.to_string();
        Diagnosed {
            diagnostics: e.0,
            message,
        }
    }
}

pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Lets go of a command's large structures at its end without freeing them one by one: the
/// process exits right after the command, and the system takes the memory back at once.
/// Freeing the manifests, the target's objects and the plan one allocation at a time is
/// time on the critical path, after the last request (docs/performance.md). Only for values
/// whose drop frees memory and does nothing else, at the very end of a command.
pub fn let_go<T>(value: T) {
    std::mem::forget(value);
}

/// Frees a large value on another thread: the memory is given back while the command goes on
/// (the manifests once apply has its plan) rather than before it goes on.
pub fn free_aside<T: Send + 'static>(value: T) {
    std::thread::spawn(move || drop(value));
}
