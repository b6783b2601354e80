//! Kinds whose list the target refused (403, 404, 501: a tenant without that product area).
//! A plan that does not need such a kind goes on with a note naming it and the answer; a plan
//! that needs it (a manifest of it, a prune pattern naming it, a delete whose cascade may reach
//! it) is an error naming the kind and the answer. A glob prune pattern (`*/*`) never prunes a
//! refused kind, and the note says so.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Action, ActionKind, PlanError, PlanOptions};
use crate::api::registry::{Address, Kind};
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::config::settings::Settings;
use crate::manifest::Manifest;
use crate::util::yaml::Pos;

/// The notes of the refused kinds the plan does not need, or the located errors of those it
/// needs through a manifest or a prune pattern (`desired` in load order: the first manifest of
/// a kind is where its error points).
pub(super) fn check(
    refused: &BTreeMap<Kind, String>,
    desired: &[Manifest],
    by_address: &BTreeMap<Address, &Manifest>,
    settings: &Settings,
    opts: &PlanOptions,
) -> Result<Vec<String>, PlanError> {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    for (&kind, answer) in refused {
        let declared = desired
            .iter()
            .filter(|m| m.kind == kind && super::in_scope(opts, &m.address()))
            .min_by(|a, b| (&a.file, a.pos.line).cmp(&(&b.file, b.pos.line)));
        if let Some(m) = declared {
            let count = by_address.keys().filter(|a| a.kind == kind).count();
            problems.push(Diagnostic::error(
                m.file.clone(),
                m.pos,
                Problem::RefusedKind {
                    kind,
                    answer: answer.clone(),
                    need: format!(
                        "{count} manifest{} declare{} it",
                        if count == 1 { "" } else { "s" },
                        if count == 1 { "s" } else { "" }
                    ),
                },
            ));
            continue;
        }
        if let Some(p) = settings.prune.iter().find(|p| p.names_kind(kind)) {
            problems.push(Diagnostic::error(
                PathBuf::from(crate::config::settings::FILE_NAME),
                Pos::new(1, 1),
                Problem::RefusedKind {
                    kind,
                    answer: answer.clone(),
                    need: format!("the prune pattern `{p}` names it"),
                },
            ));
            continue;
        }
        if let Some(p) = opts.only.iter().find(|p| p.names_kind(kind)) {
            problems.push(Diagnostic::error(
                PathBuf::from("(command line)"),
                Pos::new(1, 1),
                Problem::RefusedKind {
                    kind,
                    answer: answer.clone(),
                    need: format!("`--only {p}` names it"),
                },
            ));
            continue;
        }
        notes.push(format!(
            "{kind} was not read: the target refused its list ({answer}); nothing in this plan needs it"
        ));
        if let Some(p) = settings.prune.iter().find(|p| p.matches_kind(kind)) {
            notes.push(format!(
                "the prune pattern `{p}` does not prune {kind}: the target refused its list, so what it holds is unknown"
            ));
        }
    }
    if problems.is_empty() {
        Ok(notes)
    } else {
        crate::config::diagnostic::sort(&mut problems);
        Err(PlanError(problems))
    }
}

/// The deletes whose cascade may reach a refused kind (a kind that may reference the deleted
/// resource): an error naming the kind and the answer, at the delete's source.
pub(super) fn check_cascades(
    refused: &BTreeMap<Kind, String>,
    actions: &[Action],
) -> Result<(), PlanError> {
    let mut problems = Vec::new();
    for a in actions.iter().filter(|a| a.action == ActionKind::Delete) {
        for member in &a.cascade {
            let Some(answer) = refused.get(&member.address.kind) else {
                continue;
            };
            if member.status != super::guard::CascadeStatus::Unread {
                continue;
            }
            let (file, line) = a
                .source
                .as_ref()
                .map(|s| (s.file.clone(), s.line))
                .unwrap_or_else(|| (PathBuf::from(crate::config::settings::FILE_NAME), 0));
            problems.push(Diagnostic::error(
                file,
                Pos::new(line.max(1), 1),
                Problem::RefusedKind {
                    kind: member.address.kind,
                    answer: answer.clone(),
                    need: format!(
                        "the delete of {} may cascade into it, and what it would take is unknown",
                        a.address
                    ),
                },
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        crate::config::diagnostic::sort(&mut problems);
        Err(PlanError(problems))
    }
}
