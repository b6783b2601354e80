//! The plan's action graph as a picture: Graphviz DOT and Mermaid (`cfgctl graph`, and the
//! diagram of the Markdown plan). Pure functions of a [`Plan`].
//!
//! One node per action, labelled `<action> <address>`; an edge from an action to each action
//! that waits for it (the plan's `depends_on`), so arrows follow the order of execution.
//! Node identifiers are the step numbers (`n0`, `n1`, ...), never slugs: a slug (server data)
//! only ever appears inside a quoted label, escaped so it cannot end the label, the line or
//! a Markdown code fence.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::plan::{ActionKind, Plan};

/// The Markdown plan embeds a diagram up to this many changes.
pub const MARKDOWN_MAX_CHANGES: usize = 50;

/// Nor when the diagram's text is longer than this (GitHub's Mermaid refuses texts over
/// 50,000 characters; a diagram this big is no longer a picture anyway).
pub const MARKDOWN_MAX_DIAGRAM: usize = 10_000;

/// Which picture language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Mermaid,
}

/// The graph in `format`.
pub fn render(plan: &Plan, format: GraphFormat) -> String {
    match format {
        GraphFormat::Dot => dot(plan),
        GraphFormat::Mermaid => mermaid(plan),
    }
}

fn label(plan: &Plan, i: usize) -> String {
    let a = &plan.actions[i];
    format!("{} {}", a.action.as_str(), a.address)
}

/// Edges `(before, after)`, in step order.
fn edges(plan: &Plan) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, a) in plan.actions.iter().enumerate() {
        let mut deps: Vec<usize> = a
            .depends_on
            .iter()
            .copied()
            .filter(|&d| d < plan.actions.len())
            .collect();
        deps.sort_unstable();
        deps.dedup();
        out.extend(deps.into_iter().map(|d| (d, i)));
    }
    out
}

fn class_name(kind: ActionKind) -> &'static str {
    kind.as_str()
}

/// Fill and border colours per action (GitHub's diff palette).
fn colours(kind: ActionKind) -> (&'static str, &'static str) {
    match kind {
        ActionKind::Create => ("#dafbe1", "#1a7f37"),
        ActionKind::Update => ("#fff8c5", "#9a6700"),
        ActionKind::Delete => ("#ffebe9", "#cf222e"),
        ActionKind::Upsert => ("#ddf4ff", "#0969da"),
        ActionKind::Unsupported => ("#eaeef2", "#57606a"),
    }
}

/// Text for a Mermaid quoted label: letters, digits and `/ _ - . : ,` and space as they are,
/// every other character as a Mermaid entity code (`#34;`), so `"`, `]`, backticks, `<`,
/// line breaks and the `#` of entities themselves cannot change the diagram or the Markdown
/// around it.
pub fn mermaid_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, ' ' | '/' | '_' | '-' | '.' | ':' | ',') {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", c as u32);
        }
    }
    out
}

/// Text for a DOT double-quoted string: `\` and `"` escaped, control and bidirectional
/// characters shown as `\u{..}` text (DOT's own escapes such as `\n` or `\N` are never
/// produced from the input).
pub fn dot_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() || bidi => {
                let _ = write!(out, "\\\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The graph in Graphviz DOT (`dot -Tsvg`).
pub fn dot(plan: &Plan) -> String {
    let mut out = String::new();
    out.push_str("digraph cfgctl {\n");
    out.push_str("  rankdir=LR;\n");
    out.push_str(
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n",
    );
    for (i, a) in plan.actions.iter().enumerate() {
        let (fill, border) = colours(a.action);
        let _ = writeln!(
            out,
            "  n{i} [label=\"{}\", fillcolor=\"{fill}\", color=\"{border}\"];",
            dot_label(&label(plan, i))
        );
    }
    for (from, to) in edges(plan) {
        let _ = writeln!(out, "  n{from} -> n{to};");
    }
    out.push_str("}\n");
    out
}

/// The graph as a Mermaid flowchart (GitHub renders it in Markdown).
pub fn mermaid(plan: &Plan) -> String {
    let mut out = String::new();
    out.push_str("flowchart LR\n");
    if plan.actions.is_empty() {
        out.push_str("  %% no changes\n");
        return out;
    }
    for i in 0..plan.actions.len() {
        let _ = writeln!(out, "  n{i}[\"{}\"]", mermaid_label(&label(plan, i)));
    }
    for (from, to) in edges(plan) {
        let _ = writeln!(out, "  n{from} --> n{to}");
    }
    let mut by_kind: BTreeMap<ActionKind, Vec<String>> = BTreeMap::new();
    for (i, a) in plan.actions.iter().enumerate() {
        by_kind.entry(a.action).or_default().push(format!("n{i}"));
    }
    for (kind, nodes) in &by_kind {
        let (fill, border) = colours(*kind);
        let _ = writeln!(
            out,
            "  classDef {} fill:{fill},stroke:{border},color:#1f2328",
            class_name(*kind)
        );
        let _ = writeln!(out, "  class {} {}", nodes.join(","), class_name(*kind));
    }
    out
}

/// The diagram section of the Markdown plan: `None` with fewer than two changes (one box says
/// nothing about order), with more than [`MARKDOWN_MAX_CHANGES`], or when it would not fit in
/// `room` characters.
pub fn markdown_section(plan: &Plan, room: usize) -> Option<String> {
    if plan.actions.len() < 2 || plan.actions.len() > MARKDOWN_MAX_CHANGES {
        return None;
    }
    let diagram = mermaid(plan);
    if diagram.len() > MARKDOWN_MAX_DIAGRAM {
        return None;
    }
    let section = format!(
        "**Order of the changes** (an arrow goes from a change to one that waits for it):\n\n```mermaid\n{diagram}```\n\n"
    );
    (section.len() <= room).then_some(section)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::registry::{Address, Kind};
    use crate::plan::{Action, Plan};

    fn action(kind: Kind, slug: &str, what: ActionKind, deps: &[usize]) -> Action {
        Action {
            address: Address::new(kind, Some(slug.to_string())),
            action: what,
            source: None,
            fields: vec![],
            depends_on: deps.to_vec(),
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

    const HOSTILE: &str = "x\"]\n  evil[\"pwn`<img src=x onerror=alert(1)>```#35;\\N\u{1b}[2J";

    fn hostile_plan() -> Plan {
        plan(vec![
            action(Kind::named("Team"), HOSTILE, ActionKind::Create, &[]),
            action(Kind::named("Bucket"), "b", ActionKind::Update, &[0]),
        ])
    }

    #[test]
    fn mermaid_labels_keep_a_hostile_slug_inside() {
        let m = mermaid(&hostile_plan());
        // Every line is one of the shapes this module writes.
        for line in m.lines() {
            let ok = line == "flowchart LR"
                || (line.starts_with("  n")
                    && line.ends_with("\"]")
                    && line.matches('"').count() == 2
                    && line.matches('[').count() == 1)
                || line.starts_with("  n0 --> n1")
                || line.starts_with("  classDef ")
                || line.starts_with("  class ");
            assert!(ok, "unexpected line {line:?} in\n{m}");
        }
        assert_eq!(m.lines().count(), 8, "{m}");
        let n0 = m.lines().nth(1).unwrap();
        for bad in ['`', '<', '>', '\u{1b}', '\\'] {
            assert!(!n0.contains(bad), "{bad:?} in\n{m}");
        }
        assert!(!m.contains('`') && !m.contains('\u{1b}'), "{m}");
        assert!(m.contains("n0[\"create Team/x#34;#93;#10;  evil#91;#34;pwn#96;#60;img"));
        // The entity of a literal `#35;` in the slug is itself escaped.
        assert!(m.contains("#35;35#59;"), "{m}");
    }

    #[test]
    fn dot_labels_keep_a_hostile_slug_inside() {
        let d = dot(&hostile_plan());
        let node = d.lines().find(|l| l.starts_with("  n0 ")).unwrap();
        // The label ends where this module ends it: the only unescaped quotes are its own.
        let unescaped = node
            .char_indices()
            .filter(|&(i, c)| {
                c == '"' && {
                    let backslashes = node[..i].chars().rev().take_while(|&b| b == '\\').count();
                    backslashes % 2 == 0
                }
            })
            .count();
        assert_eq!(unescaped, 6, "{node}");
        assert!(node.contains(r#"x\"]\\u{a}  evil[\"pwn`"#), "{node}");
        assert!(node.contains(r"\\N\\u{1b}[2J"), "{node}");
        assert!(!d.contains('\n') || d.lines().count() == 7, "{d}");
        assert!(d.contains("  n0 -> n1;\n"));
    }

    #[test]
    fn edges_follow_the_order_of_execution() {
        let p = plan(vec![
            action(Kind::named("Team"), "t", ActionKind::Create, &[]),
            action(Kind::named("Collection"), "c", ActionKind::Create, &[0]),
            action(Kind::named("Dashboard"), "d", ActionKind::Create, &[1, 0]),
        ]);
        assert_eq!(edges(&p), vec![(0, 1), (0, 2), (1, 2)]);
        let m = mermaid(&p);
        assert!(m.contains("  n0 --> n2\n  n1 --> n2\n"), "{m}");
        assert!(m.contains("  class n0,n1,n2 create\n"), "{m}");
    }

    #[test]
    fn markdown_section_only_for_small_plans_that_fit() {
        let team = Kind::from_name("Team").unwrap();
        let one = plan(vec![action(team, "t", ActionKind::Create, &[])]);
        assert!(
            markdown_section(&one, 10_000).is_none(),
            "one change has no order to show"
        );
        let small = plan(vec![
            action(team, "t", ActionKind::Create, &[]),
            action(team, "u", ActionKind::Create, &[]),
        ]);
        let s = markdown_section(&small, 10_000).unwrap();
        assert!(s.contains("```mermaid\nflowchart LR\n"), "{s}");
        assert!(markdown_section(&small, 50).is_none());
        assert!(markdown_section(&plan(vec![]), 10_000).is_none());
        let big = plan(
            (0..=MARKDOWN_MAX_CHANGES)
                .map(|i| {
                    action(
                        Kind::named("Team"),
                        &format!("t{i}"),
                        ActionKind::Create,
                        &[],
                    )
                })
                .collect(),
        );
        assert!(markdown_section(&big, 60_000).is_none());
        let long_slugs = plan(
            (0..3)
                .map(|i| {
                    action(
                        Kind::named("Team"),
                        &format!("{i}{}", "x".repeat(5000)),
                        ActionKind::Create,
                        &[],
                    )
                })
                .collect(),
        );
        assert!(markdown_section(&long_slugs, 60_000).is_none());
    }
}
