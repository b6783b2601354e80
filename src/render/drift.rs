//! What `cfgctl drift` prints: every drifted resource ([`crate::plan::drift::drifted`]) named, by
//! class, in text, Markdown (size-bounded) and JSON (the JSON plan plus a `drift` list).
//!
//! One direction with the plan: a resource missing on the target is `+` (`apply` creates it),
//! one only on the target inside the prune scope is `-` (`apply --prune` deletes it), and a
//! field reads "target has X, manifests have Y" (a document or multi-line string as a diff from
//! the target to the manifests). Untrusted text goes through `output::Inert` (text) and
//! `output::Markdown` (Markdown), as in the plan.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use serde_json::{json, Value};

use super::fields::{drift_field_lines, Line};
use super::plural;
use crate::api::registry::{Address, Kind};
use crate::plan::drift::{drifted, DriftClass, Drifted};
use crate::plan::Plan;
use crate::util::output::{code_span, Inert, Markdown};

fn symbol(class: DriftClass) -> char {
    match class {
        DriftClass::Changed => '~',
        DriftClass::Deleted => '+',
        DriftClass::Unmanaged => '-',
        DriftClass::Unreadable => '!',
    }
}

fn heading(class: DriftClass) -> &'static str {
    match class {
        DriftClass::Changed => "Different on the target and in the manifests (`cfgctl apply` sets the target to the manifests, `cfgctl pull` writes the target's values into the manifests)",
        DriftClass::Deleted => "Missing on the target (`cfgctl apply` creates it; remove the manifest if it should not exist)",
        DriftClass::Unmanaged => "Only on the target, inside the prune scope (`cfgctl apply --prune` deletes it, `cfgctl pull --include-unmanaged` adds it to the manifests)",
        DriftClass::Unreadable => "Not comparable (the target can neither read nor write the kind)",
    }
}

fn class_summary(class: DriftClass, n: usize) -> String {
    match class {
        DriftClass::Changed => format!("{n} with different fields"),
        DriftClass::Deleted => format!("{n} missing on the target"),
        DriftClass::Unmanaged => format!("{n} only on the target, inside the prune scope"),
        DriftClass::Unreadable => format!("{n} not comparable"),
    }
}

fn field_lines(d: &Drifted) -> Vec<Line> {
    d.fields
        .iter()
        .flat_map(|f| drift_field_lines(d.address.kind, f))
        .collect()
}

fn counts(items: &[Drifted]) -> Vec<(DriftClass, usize)> {
    DriftClass::ALL
        .iter()
        .map(|&c| (c, items.iter().filter(|d| d.class == c).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn summary(items: &[Drifted], plan: &Plan) -> String {
    if items.is_empty() {
        return format!(
            "No drift: the target matches the manifests ({}).",
            plural(plan.unchanged, "resource", "resources")
        );
    }
    let parts: Vec<String> = counts(items)
        .into_iter()
        .map(|(c, n)| class_summary(c, n))
        .collect();
    format!(
        "Drift: {} {} from the manifests: {}; {} unchanged.",
        plural(items.len(), "resource", "resources"),
        if items.len() == 1 {
            "differs"
        } else {
            "differ"
        },
        parts.join(", "),
        plan.unchanged
    )
}

fn unmanaged_outside(plan: &Plan) -> Vec<&Address> {
    plan.unmanaged
        .iter()
        .filter(|u| !u.in_prune_scope)
        .map(|u| &u.address)
        .collect()
}

fn warnings(plan: &Plan) -> impl Iterator<Item = String> + '_ {
    plan.warnings
        .iter()
        .cloned()
        .chain(plan.guard_violations.iter().map(|g| g.to_string()))
}

/// The text report.
pub fn text(plan: &Plan, known: &BTreeSet<Kind>, color: bool, verbose: bool) -> String {
    let items = drifted(plan, known);
    let style = |c: AnsiColor| {
        if color {
            Style::new().fg_color(Some(c.into()))
        } else {
            Style::new()
        }
    };
    let bold = if color {
        Style::new().bold()
    } else {
        Style::new()
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{bold}cfgctl drift{bold:#} for {}\n",
        Inert(&plan.target)
    );
    let _ = writeln!(out, "{}", summary(&items, plan));
    for class in DriftClass::ALL {
        let group: Vec<&Drifted> = items.iter().filter(|d| d.class == class).collect();
        if group.is_empty() {
            continue;
        }
        let st = style(match class {
            DriftClass::Changed => AnsiColor::Yellow,
            DriftClass::Unmanaged | DriftClass::Unreadable => AnsiColor::Red,
            DriftClass::Deleted => AnsiColor::Green,
        });
        let _ = writeln!(out, "\n{}:", heading(class));
        for d in group {
            let loc = d
                .source
                .as_ref()
                .map(|s| format!("  ({}:{})", Inert(s.file.display()), s.line))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {st}{} {}{st:#}{loc}",
                symbol(class),
                Inert(&d.address)
            );
            if let Some(r) = &d.reason {
                let _ = writeln!(out, "      # {}", Inert(r));
            }
            for line in field_lines(d) {
                let _ = writeln!(out, "      {}", line.text());
            }
        }
    }
    let outside = unmanaged_outside(plan);
    if !outside.is_empty() {
        let _ = writeln!(
            out,
            "\nNot drift: {} on the target outside the prune scope{}",
            plural(outside.len(), "unmanaged resource", "unmanaged resources"),
            if verbose { ":" } else { " (-v lists them)." }
        );
        if verbose {
            for a in outside {
                let _ = writeln!(out, "  ? {}", Inert(a));
            }
        }
    }
    if !plan.orphaned.is_empty() {
        let _ =
            writeln!(
            out,
            "\nNot drift: {} on the target, in no manifest, kept by {} mode (no-delete, observe){}",
            plural(plan.orphaned.len(), "orphaned resource", "orphaned resources"),
            if plan.orphaned.len() == 1 { "its" } else { "their" },
            if verbose { ":" } else { " (-v lists them)." }
        );
        if verbose {
            for a in &plan.orphaned {
                let _ = writeln!(out, "  = {}", Inert(a));
            }
        }
    }
    for w in warnings(plan) {
        let _ = writeln!(out, "\nWarning: {}", Inert(&w));
    }
    out
}

/// The Markdown report for an issue or a pull request, at most `budget` characters.
pub fn markdown(plan: &Plan, known: &BTreeSet<Kind>, budget: usize) -> String {
    let items = drifted(plan, known);
    let mut out = String::new();
    let _ = writeln!(out, "### cfgctl drift for {}\n", code_span(&plan.target));
    let _ = writeln!(out, "**{}**\n", summary(&items, plan));
    let mut tail = String::new();
    let outside = unmanaged_outside(plan).len();
    if outside > 0 {
        let _ = writeln!(
            tail,
            "Not drift: {} on the target outside the prune scope.\n",
            plural(outside, "unmanaged resource", "unmanaged resources")
        );
    }
    if !plan.orphaned.is_empty() {
        let _ = writeln!(
            tail,
            "Not drift: {} on the target, in no manifest, kept by their mode (no-delete, observe).\n",
            plural(plan.orphaned.len(), "orphaned resource", "orphaned resources")
        );
    }
    for w in warnings(plan) {
        let _ = writeln!(tail, "> **Warning:** {}\n", Markdown(&w));
    }
    const NOTE_RESERVE: usize = 300;
    let mut left = 0;
    for class in DriftClass::ALL {
        let group: Vec<&Drifted> = items.iter().filter(|d| d.class == class).collect();
        if group.is_empty() {
            continue;
        }
        let heading = format!("#### {}\n\n", heading(class));
        let mut section = heading.clone();
        for d in group {
            let entry = markdown_entry(d);
            if out.len() + section.len() + entry.len() + tail.len() + NOTE_RESERVE > budget {
                left += 1;
                continue;
            }
            section.push_str(&entry);
        }
        if section.len() > heading.len() {
            out.push_str(&section);
            out.push('\n');
        }
    }
    if left > 0 {
        let _ = writeln!(
            out,
            "> **{} not shown:** the report is kept under {budget} characters. Run `cfgctl drift` for all of it.\n",
            plural(left, "more resource", "more resources")
        );
    }
    out.push_str(&tail);
    out
}

fn markdown_entry(d: &Drifted) -> String {
    let loc = d
        .source
        .as_ref()
        .map(|s| format!(" — <code>{}:{}</code>", Markdown(s.file.display()), s.line))
        .unwrap_or_default();
    let name = format!(
        "<code>{} {}</code>{loc}",
        symbol(d.class),
        Markdown(&d.address)
    );
    let lines = field_lines(d);
    let mut body = String::new();
    if let Some(r) = &d.reason {
        let _ = writeln!(body, "# {}", Inert(r));
    }
    if lines.iter().any(Line::is_diff) {
        // The diff's own header is left out of Markdown (GitHub would colour it).
        let _ = writeln!(body, "# diff from the target (-) to the manifests (+)");
    }
    for line in lines.iter().filter_map(Line::markdown) {
        let _ = writeln!(body, "{line}");
    }
    if body.is_empty() {
        return format!("- {name}\n");
    }
    super::cap_details(&mut body, "drift");
    format!(
        "<details><summary>{name}</summary>\n\n{}\n</details>\n",
        super::diff_block(&body)
    )
}

/// The JSON report as a `Value`, built whole: the oracle of [`write_json`], which the
/// commands use.
#[cfg(test)]
pub(crate) fn json(plan: &Plan, known: &BTreeSet<Kind>) -> Value {
    let mut v = super::json_plan(plan, false);
    let items: Vec<Value> = drifted(plan, known).iter().map(drift_item).collect();
    if let Value::Object(map) = &mut v {
        map.insert("drift".into(), Value::Array(items));
    }
    v
}

fn drift_item(d: &Drifted) -> Value {
    json!({
        "address": d.address.to_string(),
        "kind": d.address.kind.name(),
        "slug": d.address.slug,
        "class": d.class.as_str(),
        "source": d.source.as_ref().map(|s| json!({"file": s.file.display().to_string(), "line": s.line})),
        "fields": d.fields.iter().map(|f| json!({
            "path": f.path,
            "manifest": f.after.clone().unwrap_or(Value::Null),
            "target": f.before.clone().unwrap_or(Value::Null),
        })).collect::<Vec<_>>(),
        "reason": d.reason,
    })
}

/// The JSON report: the JSON plan with a `drift` list, every drifted resource with its class
/// and, for a changed one, its fields as `manifest`/`target` values. Pretty-printed with a
/// final newline, written as it is made: the plan's part change by change
/// (`plan::file::PlanFileWriter`), then each drifted resource, never held whole (the tests hold
/// it to `json`, the report built as a `Value`).
pub fn write_json(
    w: &mut impl std::io::Write,
    plan: &Plan,
    known: &BTreeSet<Kind>,
) -> std::io::Result<()> {
    super::write_json_document(w, &Report { plan, known }, true)
}

/// The JSON report of [`write_json`] as it is serialised (for [`write_json`], and for each
/// environment of a report of several).
pub(super) struct Report<'a> {
    pub plan: &'a Plan,
    pub known: &'a BTreeSet<Kind>,
}

struct Items<'a>(&'a [Drifted]);

impl serde::Serialize for Items<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(drift_item))
    }
}

impl serde::Serialize for Report<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Drift", 11)?;
        crate::plan::file::PlanFileWriter {
            plan: self.plan,
            saved: false,
        }
        .serialize_fields(&mut st)?;
        st.serialize_field("drift", &Items(&drifted(self.plan, self.known)))?;
        st.end()
    }
}

#[cfg(test)]
mod tests;
