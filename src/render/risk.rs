//! The risk summary ([`crate::plan::risk`]) as the text and Markdown plans open with it.
//! The Markdown form is never cut by the details' budget: it is written first and the
//! per-resource details get what room is left. Only a summary that alone would pass half the
//! budget (hundreds of deletes or secrets) lists fewer entries, saying how many more the text
//! and JSON plans list.

use std::fmt::Write as _;

use crate::plan::risk::{Risk, RiskCount, RiskDelete, RiskGuards};
use crate::plan::ActionKind;
use crate::util::output::{Inert, Markdown};

fn action_phrase(a: ActionKind) -> &'static str {
    match a {
        ActionKind::Create => "to create",
        ActionKind::Update => "to update",
        ActionKind::Delete => "to delete",
        ActionKind::Upsert => "to upsert",
        ActionKind::Unsupported => "unsupported",
    }
}

/// Per action (in plan-summary order): its total and `Kind n, Kind n` by kind.
pub(super) fn by_action(counts: &[RiskCount]) -> Vec<(ActionKind, usize, String)> {
    let mut out: Vec<(ActionKind, usize, String)> = Vec::new();
    for c in counts {
        let part = format!("{} {}", c.kind, c.count);
        match out.last_mut() {
            Some((a, n, kinds)) if *a == c.action => {
                *n += c.count;
                kinds.push_str(", ");
                kinds.push_str(&part);
            }
            _ => out.push((c.action, c.count, part)),
        }
    }
    out
}

/// Each cascade member: its address and what it is to the repository.
fn cascade_members(d: &RiskDelete) -> impl Iterator<Item = (&str, String)> {
    d.cascade.iter().map(|m| {
        let refused = if m.status.may_be_taken() {
            ""
        } else {
            "; apply refuses this"
        };
        (
            m.address.as_str(),
            format!("({}{refused})", m.status.describe()),
        )
    })
}

fn guards_line(g: &RiskGuards) -> String {
    let verdict = if g.refused.is_empty() {
        "apply goes ahead"
    } else {
        "apply refuses this plan"
    };
    format!(
        "max_deletes {}, {} in this plan: {verdict}",
        g.max_deletes,
        super::plural(g.deletes, "delete", "deletes")
    )
}

fn modes_line(r: &Risk) -> String {
    format!(
        "{} observed (never sent), {} orphaned (kept)",
        r.modes.observed, r.modes.orphaned
    )
}

/// An environment is named with the target it is (`staging (https://staging.example.com)`);
/// a bare target (a plan without environments) is its own name: `None`.
fn target_of<'a>(environment: &str, target: &'a str) -> Option<&'a str> {
    (environment != target).then_some(target)
}

/// The text plan's opening section, for a plan of `target`.
pub(super) fn text(r: &Risk, target: &str) -> String {
    let mut out = String::from("\nRisk summary:\n");
    let changes: Vec<String> = by_action(&r.counts)
        .into_iter()
        .map(|(a, n, kinds)| format!("{n} {} ({kinds})", action_phrase(a)))
        .collect();
    let changes = if changes.is_empty() {
        "none".to_string()
    } else {
        changes.join(", ")
    };
    let _ = writeln!(out, "  Changes: {changes}");
    if !r.deletes.is_empty() {
        let _ = writeln!(out, "  Deletes:");
        for d in &r.deletes {
            let why = d
                .reason
                .as_ref()
                .map(|r| format!("  # {}", Inert(r)))
                .unwrap_or_default();
            let _ = writeln!(out, "    - {}{why}", Inert(&d.address));
            for (address, what) in cascade_members(d) {
                let _ = writeln!(
                    out,
                    "        with --force-delete-buckets also takes {} {what}",
                    Inert(address)
                );
            }
        }
    }
    if !r.unsupported.is_empty() {
        let _ = writeln!(out, "  Unsupported (never attempted):");
        for u in &r.unsupported {
            let _ = writeln!(
                out,
                "    ! {}: {}: {}",
                Inert(&u.address),
                u.intended.map(ActionKind::as_str).unwrap_or("change"),
                Inert(u.reason.as_deref().unwrap_or(""))
            );
        }
    }
    let _ = writeln!(out, "  Guards: {}", guards_line(&r.guards));
    for g in &r.guards.refused {
        let _ = writeln!(out, "    apply refuses: {}", Inert(g));
    }
    for g in &r.guards.refused_with_force_delete {
        let _ = writeln!(out, "    apply would refuse: {}", Inert(g));
    }
    if r.secrets.is_empty() {
        let _ = writeln!(out, "  Secrets sent: none");
    } else {
        let _ = writeln!(out, "  Secrets sent:");
        for s in &r.secrets {
            let _ = writeln!(
                out,
                "    {}: {}",
                Inert(&s.address),
                Inert(s.fields.join(", "))
            );
            for c in &s.references_changed {
                let _ = writeln!(out, "      reference changed: {}", Inert(c));
            }
        }
    }
    if let Some(refs) = &r.secret_references {
        let _ = writeln!(out, "  Secret references: {}", Inert(refs.sentence()));
    }
    let _ = writeln!(out, "  Modes: {}", modes_line(r));
    let envs: Vec<String> = r
        .environments
        .iter()
        .map(|e| match target_of(e, target) {
            None => Inert(e).to_string(),
            Some(target) => format!("{} ({})", Inert(e), Inert(target)),
        })
        .collect();
    let _ = writeln!(out, "  Environments: {}", envs.join(", "));
    out
}

/// A Markdown list written while it fits in `room` characters of `out`; the rest counted.
fn bounded_list(out: &mut String, room: usize, items: Vec<String>, what: &str) {
    let total = items.len();
    for (i, item) in items.into_iter().enumerate() {
        if out.len() + item.len() + 200 > room {
            let _ = writeln!(
                out,
                "- … and {} (the text and JSON plans list every one)",
                super::plural(total - i, &format!("more {what}"), &format!("more {what}s"))
            );
            break;
        }
        out.push_str(&item);
    }
    out.push('\n');
}

fn code(text: &str) -> String {
    format!("<code>{}</code>", Markdown(text))
}

/// The Markdown plan's lists after the counts table, for a plan of `target`: at most `room`
/// characters in all.
pub(super) fn markdown_lists(r: &Risk, room: usize, target: &str) -> String {
    let mut out = String::new();
    if !r.deletes.is_empty() {
        let _ = writeln!(out, "**Deletes ({}):**\n", r.deletes.len());
        let items = r
            .deletes
            .iter()
            .map(|d| {
                let why = d
                    .reason
                    .as_ref()
                    .map(|r| format!(" — {}", Markdown(r)))
                    .unwrap_or_default();
                let mut item = format!("- ⚠️ {}{why}\n", code(&d.address));
                for (address, what) in cascade_members(d) {
                    let _ = writeln!(
                        item,
                        "  - with `--force-delete-buckets` also takes {} {what}",
                        code(address)
                    );
                }
                item
            })
            .collect();
        bounded_list(&mut out, room, items, "delete");
    }
    if !r.unsupported.is_empty() {
        let _ = writeln!(
            out,
            "**Unsupported, never attempted ({}):**\n",
            r.unsupported.len()
        );
        let items = r
            .unsupported
            .iter()
            .map(|u| {
                format!(
                    "- {}: {} — {}\n",
                    code(&u.address),
                    u.intended.map(ActionKind::as_str).unwrap_or("change"),
                    Markdown(u.reason.as_deref().unwrap_or(""))
                )
            })
            .collect();
        bounded_list(&mut out, room, items, "unsupported action");
    }
    let _ = writeln!(out, "**Guards:** {}.\n", guards_line(&r.guards));
    let guards: Vec<String> = r
        .guards
        .refused
        .iter()
        .map(|g| format!("- apply refuses: {}\n", Markdown(g)))
        .chain(
            r.guards
                .refused_with_force_delete
                .iter()
                .map(|g| format!("- apply would refuse: {}\n", Markdown(g))),
        )
        .collect();
    if !guards.is_empty() {
        bounded_list(&mut out, room, guards, "refusal");
    }
    if r.secrets.is_empty() {
        let _ = writeln!(out, "**Secrets sent:** none.\n");
    } else {
        let _ = writeln!(out, "**Secrets sent ({}):**\n", r.secrets.len());
        let items = r
            .secrets
            .iter()
            .map(|s| {
                let mut item = format!("- {}: {}\n", code(&s.address), code(&s.fields.join(", ")));
                for c in &s.references_changed {
                    let _ = writeln!(item, "  - reference changed: {}", code(c));
                }
                item
            })
            .collect();
        bounded_list(&mut out, room, items, "resource with secrets");
    }
    if let Some(refs) = &r.secret_references {
        let _ = writeln!(
            out,
            "**Secret references:** {}.\n",
            markdown_references(refs)
        );
    }
    let _ = writeln!(out, "**Modes:** {}.\n", modes_line(r));
    let envs: Vec<String> = r
        .environments
        .iter()
        .map(|e| match target_of(e, target) {
            None => code(e),
            Some(target) => format!("{} ({})", code(e), code(target)),
        })
        .collect();
    let _ = writeln!(out, "**Environments:** {}.\n", envs.join(", "));
    out
}

/// The risk summary's word on secret references, in Markdown.
pub(super) fn markdown_references(r: &crate::plan::review::SecretReferences) -> String {
    match &r.base {
        Some(b) => format!(
            "compared with {} ({}){}",
            code(&b.rev),
            code(&b.commit),
            r.not_found_sentence(code)
        ),
        None => "not compared: a changed `${env:…}`/`${file:…}` reference is not seen (plan with `--base REV` to compare)".into(),
    }
}
