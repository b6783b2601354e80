//! What `cfgctl drift` prints: every drifted resource named, by class, in text, Markdown and
//! JSON. Pure functions from a [`Plan`] (made without `--prune`) to a `String` or a value.
//!
//! A drift report reads from the target's side: a changed resource shows its fields as
//! `manifest -> target`, a resource deleted on the target is `-`, an unmanaged resource
//! inside the prune scope (one that appeared on the target) is `+`. It never says the target
//! matches while there is drift.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use serde_json::{json, Value};

use crate::plan::normalize::FieldChange;
use crate::plan::{ActionKind, Plan, Source};
use crate::registry::{Address, Kind};

/// How a resource drifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DriftClass {
    /// Managed, and the target's object differs from the manifest.
    Changed,
    /// Managed, and gone from the target.
    Deleted,
    /// On the target, inside the prune scope, declared by no manifest.
    Unmanaged,
    /// Managed, of a kind the target can neither read nor write.
    Unreadable,
}

impl DriftClass {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftClass::Changed => "changed",
            DriftClass::Deleted => "deleted",
            DriftClass::Unmanaged => "unmanaged",
            DriftClass::Unreadable => "unreadable",
        }
    }

    fn symbol(self) -> char {
        match self {
            DriftClass::Changed => '~',
            DriftClass::Deleted => '-',
            DriftClass::Unmanaged => '+',
            DriftClass::Unreadable => '!',
        }
    }

    fn heading(self) -> &'static str {
        match self {
            DriftClass::Changed => "Changed on the target (`cfgctl pull` adopts the change, `cfgctl apply` reverts it)",
            DriftClass::Deleted => "Deleted on the target (`cfgctl apply` creates it again; remove the manifest to accept it)",
            DriftClass::Unmanaged => "Unmanaged inside the prune scope (`cfgctl pull --include-unmanaged` adopts it, `cfgctl apply --prune` deletes it)",
            DriftClass::Unreadable => "Not comparable (the target can neither read nor write the kind)",
        }
    }

    fn summary(self, n: usize) -> String {
        match self {
            DriftClass::Changed => format!("{n} changed"),
            DriftClass::Deleted => format!("{n} deleted on the target"),
            DriftClass::Unmanaged => format!("{n} unmanaged inside the prune scope"),
            DriftClass::Unreadable => format!("{n} not comparable"),
        }
    }

    const ALL: [DriftClass; 4] = [
        DriftClass::Changed,
        DriftClass::Deleted,
        DriftClass::Unmanaged,
        DriftClass::Unreadable,
    ];
}

/// One drifted resource.
#[derive(Clone, Debug, PartialEq)]
pub struct Drifted {
    pub address: Address,
    pub class: DriftClass,
    pub source: Option<Source>,
    /// Field changes from the manifest (`before`) to the target (`after`).
    pub fields: Vec<FieldChange>,
    pub reason: Option<String>,
}

/// Every drifted resource of a plan, by class, then address. `known`: the kinds whose state
/// was read.
pub fn drifted(plan: &Plan, known: &BTreeSet<Kind>) -> Vec<Drifted> {
    let mut out = Vec::new();
    for a in plan.actions.iter().filter(|a| a.is_change()) {
        let intended = match a.action {
            ActionKind::Unsupported => a.intended.unwrap_or(ActionKind::Update),
            other => other,
        };
        let class = match intended {
            ActionKind::Update => DriftClass::Changed,
            // A create of a kind the target cannot read at all says nothing about the target.
            ActionKind::Create if !known.contains(&a.address.kind) => DriftClass::Unreadable,
            ActionKind::Create | ActionKind::Upsert => DriftClass::Deleted,
            ActionKind::Delete | ActionKind::Unsupported => DriftClass::Unmanaged,
        };
        let fields = if class == DriftClass::Changed {
            a.fields
                .iter()
                .map(|f| FieldChange {
                    path: f.path.clone(),
                    before: f.after.clone(),
                    after: f.before.clone(),
                })
                .collect()
        } else {
            vec![]
        };
        out.push(Drifted {
            address: a.address.clone(),
            class,
            source: a.source.clone(),
            fields,
            reason: (a.action == ActionKind::Unsupported)
                .then(|| a.reason.clone())
                .flatten(),
        });
    }
    for u in plan.unmanaged.iter().filter(|u| u.in_prune_scope) {
        out.push(Drifted {
            address: u.address.clone(),
            class: DriftClass::Unmanaged,
            source: None,
            fields: vec![],
            reason: None,
        });
    }
    out.sort_by(|a, b| (a.class, &a.address).cmp(&(b.class, &b.address)));
    out
}

/// Control characters of text from manifests or the server, escaped for a terminal or log.
pub(crate) fn inert(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn source_text(s: &Source) -> String {
    inert(&format!("{}:{}", s.file.display(), s.line))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Fields as `manifest -> target` lines; documents as unified diffs.
fn field_lines(d: &Drifted) -> Vec<String> {
    let documents: Vec<&str> = d
        .address
        .kind
        .def()
        .embedded_json
        .iter()
        .map(|e| e.field)
        .collect();
    let mut out = Vec::new();
    for f in &d.fields {
        let path = inert(&f.path);
        if documents.contains(&f.path.as_str()) && f.before.is_some() && f.after.is_some() {
            out.push(format!("~ {path}:"));
            let pretty = |v: &Option<Value>| {
                v.as_ref()
                    .map(|v| serde_json::to_string_pretty(v).unwrap_or_default() + "\n")
                    .unwrap_or_default()
            };
            let (old, new) = (pretty(&f.before), pretty(&f.after));
            let diff = similar::TextDiff::from_lines(&old, &new)
                .unified_diff()
                .context_radius(3)
                .header("manifest", "target")
                .to_string();
            out.extend(diff.lines().map(|l| format!("    {}", inert(l))));
            continue;
        }
        let v = |v: &Value| inert(&v.to_string());
        match (&f.before, &f.after) {
            (Some(b), Some(a)) => out.push(format!("~ {path}: {} -> {}", v(b), v(a))),
            (None, Some(a)) => out.push(format!("+ {path}: {} (only on the target)", v(a))),
            (Some(b), None) => out.push(format!("- {path}: {} (only in the manifest)", v(b))),
            (None, None) => {}
        }
    }
    out
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
        .map(|(c, n)| c.summary(n))
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
        inert(&plan.target)
    );
    let _ = writeln!(out, "{}", summary(&items, plan));
    for class in DriftClass::ALL {
        let group: Vec<&Drifted> = items.iter().filter(|d| d.class == class).collect();
        if group.is_empty() {
            continue;
        }
        let st = style(match class {
            DriftClass::Changed => AnsiColor::Yellow,
            DriftClass::Deleted | DriftClass::Unreadable => AnsiColor::Red,
            DriftClass::Unmanaged => AnsiColor::Green,
        });
        let _ = writeln!(out, "\n{}:", class.heading());
        for d in group {
            let loc = d
                .source
                .as_ref()
                .map(|s| format!("  ({})", source_text(s)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {st}{} {}{st:#}{loc}",
                class.symbol(),
                inert(&d.address.to_string())
            );
            if let Some(r) = &d.reason {
                let _ = writeln!(out, "      # {}", inert(r));
            }
            if !d.fields.is_empty() {
                let _ = writeln!(out, "      (manifest -> target)");
            }
            for line in field_lines(d) {
                let _ = writeln!(out, "      {line}");
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
                let _ = writeln!(out, "  ? {}", inert(&a.to_string()));
            }
        }
    }
    for w in plan
        .warnings
        .iter()
        .cloned()
        .chain(plan.guard_violations.iter().map(|g| g.to_string()))
    {
        let _ = writeln!(out, "\nWarning: {}", inert(&w));
    }
    out
}

/// Text shown inside Markdown/HTML: every character that could mean something there is an
/// entity, so a slug or a server message cannot inject markup.
fn md_inert(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '/' | ',' | ':') {
            out.push(c);
        } else {
            let _ = write!(out, "&#x{:X};", u32::from(c));
        }
    }
    out
}

/// The Markdown report for an issue or a pull request, at most `budget` characters.
pub fn markdown(plan: &Plan, known: &BTreeSet<Kind>, budget: usize) -> String {
    let items = drifted(plan, known);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### cfgctl drift for <code>{}</code>\n",
        md_inert(&plan.target)
    );
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
    for w in plan
        .warnings
        .iter()
        .cloned()
        .chain(plan.guard_violations.iter().map(|g| g.to_string()))
    {
        let _ = writeln!(tail, "> **Warning:** {}\n", md_inert(&w));
    }
    const NOTE_RESERVE: usize = 300;
    let mut left = 0;
    for class in DriftClass::ALL {
        let group: Vec<&Drifted> = items.iter().filter(|d| d.class == class).collect();
        if group.is_empty() {
            continue;
        }
        let heading = format!("#### {}\n\n", class.heading());
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
        .map(|s| {
            format!(
                " — <code>{}</code>",
                md_inert(&format!("{}:{}", s.file.display(), s.line))
            )
        })
        .unwrap_or_default();
    let name = format!(
        "<code>{} {}</code>{loc}",
        d.class.symbol(),
        md_inert(&d.address.to_string())
    );
    let mut body = String::new();
    if let Some(r) = &d.reason {
        let _ = writeln!(body, "# {r}");
    }
    if !d.fields.is_empty() {
        let _ = writeln!(body, "# manifest -> target");
    }
    for line in field_lines(d) {
        let _ = writeln!(body, "{line}");
    }
    if body.is_empty() {
        return format!("- {name}\n");
    }
    crate::render::cap_details(&mut body, "drift");
    format!(
        "<details><summary>{name}</summary>\n\n{}\n</details>\n",
        crate::render::diff_block(&body)
    )
}

/// The JSON plan with a `drift` list: every drifted resource with its class and, for a
/// changed one, its fields as `manifest`/`target` values.
pub fn json(plan: &Plan, known: &BTreeSet<Kind>) -> Value {
    let mut v = crate::render::json_plan(plan, false);
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
            "manifest": f.before.clone().unwrap_or(Value::Null),
            "target": f.after.clone().unwrap_or(Value::Null),
        })).collect::<Vec<_>>(),
        "reason": d.reason,
    })
}

/// [`json`], pretty-printed with a final newline, written as it is made: the plan's part
/// change by change (`plan::file::PlanFileWriter`), then each drifted resource; the same
/// bytes as `json` pretty-printed, never held whole.
pub fn write_json(
    w: &mut impl std::io::Write,
    plan: &Plan,
    known: &BTreeSet<Kind>,
) -> std::io::Result<()> {
    struct Report<'a> {
        plan: &'a Plan,
        known: &'a BTreeSet<Kind>,
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
            let mut st = s.serialize_struct("Drift", 8)?;
            crate::plan::file::PlanFileWriter {
                plan: self.plan,
                saved: false,
            }
            .serialize_fields(&mut st)?;
            st.serialize_field("drift", &Items(&drifted(self.plan, self.known)))?;
            st.end()
        }
    }
    crate::render::write_json_document(w, &Report { plan, known }, true)
}

#[cfg(test)]
mod tests;
