//! Ordering: a petgraph graph over the actions, one edge per reference, cycles broken where
//! a reference is optional, then a deterministic topological order.
//!
//! Creates, updates and upserts run after the actions on what they reference; a delete runs
//! after the deletes and updates of the resources that (currently) reference it. A cycle among
//! creates is broken by creating one resource without an optional reference and setting it
//! with an update afterwards; a cycle among deletes by first updating one resource to drop
//! its optional reference.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use serde_json::Value;

use super::normalize::FieldChange;
use super::{Action, ActionKind, Capabilities, Current};
use crate::api::registry::{Address, Op};
use crate::config::diagnostic::{Diagnostic, Problem};
use crate::manifest::Manifest;
use crate::util::jsonpath::remove_path;
use crate::util::yaml::Pos;

/// A dependency: `from` must finish before `to`.
#[derive(Clone, Debug)]
struct Edge {
    from: usize,
    to: usize,
    /// The reference field (pointer) of the action that can drop it to break a cycle.
    breakable: Option<String>,
    /// Dotted path of the reference, for messages.
    path: String,
}

fn removes_pointer(body: &mut Value, pointer: &str) {
    // Pointers here are plain object paths (`/collection/slug`, `/team_slug`).
    let dotted = pointer.trim_start_matches('/').replace('/', ".");
    remove_path(body, &dotted);
}

fn edges(actions: &[Action], current: &Current, caps: &Capabilities) -> Vec<Edge> {
    let can_update = |a: &Action| caps.has(a.address.kind, Op::Update);
    let mut index: BTreeMap<&Address, Vec<usize>> = BTreeMap::new();
    for (i, a) in actions.iter().enumerate() {
        index.entry(&a.address).or_default().push(i);
    }
    let mut out = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        match a.action {
            ActionKind::Create | ActionKind::Update | ActionKind::Upsert => {
                let Some(body) = &a.body else { continue };
                for r in a.address.kind.def().references_in(body) {
                    let target = Address::new(r.target, Some(r.slug.clone()));
                    for &j in index.get(&target).into_iter().flatten() {
                        // Only the creation of what is referenced matters: a resource that
                        // exists can be referenced whatever else changes about it.
                        let creates = match actions[j].action {
                            ActionKind::Create | ActionKind::Upsert => true,
                            // A create the target cannot do blocks what needs it, but only
                            // when the target's lists show the resource is absent; of a kind
                            // it cannot read, the resource may well exist.
                            ActionKind::Unsupported => {
                                actions[j].intended == Some(ActionKind::Create)
                                    && current.known.contains(&actions[j].address.kind)
                            }
                            _ => false,
                        };
                        if j == i || !creates {
                            continue;
                        }
                        out.push(Edge {
                            from: j,
                            to: i,
                            breakable: (r.optional
                                && a.action == ActionKind::Create
                                && can_update(a))
                            .then(|| r.pointer.clone()),
                            path: r.path.clone(),
                        });
                    }
                }
            }
            ActionKind::Delete => {
                for (j, x) in actions.iter().enumerate() {
                    if j == i || !matches!(x.action, ActionKind::Delete | ActionKind::Update) {
                        continue;
                    }
                    let Some(cur) = current.resources.get(&x.address) else {
                        continue;
                    };
                    for r in cur.references() {
                        if Address::new(r.target, Some(r.slug.clone())) == a.address {
                            out.push(Edge {
                                from: j,
                                to: i,
                                breakable: (r.optional
                                    && x.action == ActionKind::Delete
                                    && can_update(x))
                                .then(|| r.pointer.clone()),
                                path: r.path.clone(),
                            });
                        }
                    }
                }
            }
            ActionKind::Unsupported => {}
        }
    }
    out
}

fn graph(n: usize, edges: &[Edge]) -> DiGraph<usize, usize> {
    let mut g = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..n).map(|i| g.add_node(i)).collect();
    for (k, e) in edges.iter().enumerate() {
        g.add_edge(nodes[e.from], nodes[e.to], k);
    }
    g
}

/// The first cycle, as action indices in a deterministic order, with its edges.
fn find_cycle(n: usize, edges: &[Edge], actions: &[Action]) -> Option<(Vec<usize>, Vec<usize>)> {
    let g = graph(n, edges);
    // A lone action is a cycle only through an edge to itself (looked up once: scanning the
    // edges for each lone action is quadratic in a plan of many creates).
    let self_loops: BTreeSet<usize> = edges
        .iter()
        .filter(|e| e.from == e.to)
        .map(|e| e.from)
        .collect();
    let mut cycles: Vec<Vec<usize>> = tarjan_scc(&g)
        .into_iter()
        .filter(|scc| scc.len() > 1 || scc.first().is_some_and(|ix| self_loops.contains(&g[*ix])))
        .map(|scc| {
            let mut members: Vec<usize> = scc.iter().map(|ix| g[*ix]).collect();
            members.sort_by(|a, b| actions[*a].address.cmp(&actions[*b].address).then(a.cmp(b)));
            members
        })
        .collect();
    cycles.sort_by(|a, b| actions[a[0]].address.cmp(&actions[b[0]].address));
    let members = cycles.into_iter().next()?;
    let set: BTreeSet<usize> = members.iter().copied().collect();
    let inner: Vec<usize> = edges
        .iter()
        .enumerate()
        .filter(|(_, e)| set.contains(&e.from) && set.contains(&e.to))
        .map(|(k, _)| k)
        .collect();
    Some((members, inner))
}

/// Orders the actions; breaks the cycles that can be broken.
pub fn order(
    mut actions: Vec<Action>,
    desired: &[Manifest],
    current: &Current,
    caps: &Capabilities,
) -> Result<Vec<Action>, Vec<Diagnostic>> {
    let mut all_edges = edges(&actions, current, caps);
    // Each round breaks one edge; a plan has far fewer cycles than actions.
    for _ in 0..=actions.len() {
        let Some((members, inner)) = find_cycle(actions.len(), &all_edges, &actions) else {
            break;
        };
        let candidate = inner
            .iter()
            .copied()
            .filter(|&k| all_edges[k].breakable.is_some())
            .min_by(|&x, &y| {
                let (ex, ey) = (&all_edges[x], &all_edges[y]);
                actions[ex.to]
                    .address
                    .cmp(&actions[ey.to].address)
                    .then(ex.path.cmp(&ey.path))
            });
        let Some(k) = candidate else {
            return Err(vec![cycle_error(&members, &actions, desired)]);
        };
        let edge = all_edges.remove(k);
        let cycle_text = describe_cycle(&members, &actions);
        let added = match actions[edge.to].action {
            ActionKind::Create => Some(set_later(&mut actions, &edge, &cycle_text)),
            _ => drop_first(&mut actions, &edge, &cycle_text, current),
        };
        let Some(added) = added else {
            return Err(vec![cycle_error(&members, &actions, desired)]);
        };
        all_edges.extend(added);
    }
    if let Some((members, _)) = find_cycle(actions.len(), &all_edges, &actions) {
        return Err(vec![cycle_error(&members, &actions, desired)]);
    }
    Ok(topological(actions, &all_edges))
}

/// Breaks a create cycle at `edge`: its holder is created without the reference now, and an
/// update sets it once the target exists; the new update's edges.
fn set_later(actions: &mut Vec<Action>, edge: &Edge, cycle_text: &str) -> Vec<Edge> {
    let pointer = edge.breakable.clone().unwrap_or_default();
    let full = actions[edge.to].body.clone();
    let held = &mut actions[edge.to];
    if let Some(body) = held.body.as_mut().map(std::sync::Arc::make_mut) {
        removes_pointer(body, &pointer);
        held.fields = super::normalize::written_fields(held.address.kind, body);
    }
    let target = actions[edge.from].address.clone();
    let after = full.as_ref().and_then(|b| b.pointer(&pointer)).cloned();
    let follow_up = Action {
        address: actions[edge.to].address.clone(),
        action: ActionKind::Update,
        source: actions[edge.to].source.clone(),
        fields: vec![FieldChange {
            path: edge.path.clone(),
            before: None,
            after,
        }],
        depends_on: vec![],
        reason: Some(format!(
            "sets `{}` once {target} exists (breaks the reference cycle {cycle_text})",
            edge.path
        )),
        body: full,
        intended: None,
        fingerprint: None,
        cascade: vec![],
    };
    let u = actions.len();
    actions.push(follow_up);
    [edge.to, edge.from]
        .into_iter()
        .map(|from| Edge {
            from,
            to: u,
            breakable: None,
            path: edge.path.clone(),
        })
        .collect()
}

/// Breaks a delete cycle at `edge`: the referrer (`edge.from`) first drops its reference by
/// an update, before either delete; the new update's edges. `None` when the referrer is not
/// on the target (the cycle cannot be broken).
fn drop_first(
    actions: &mut Vec<Action>,
    edge: &Edge,
    cycle_text: &str,
    current: &Current,
) -> Option<Vec<Edge>> {
    let pointer = edge.breakable.clone().unwrap_or_default();
    let referrer = edge.from;
    let address = actions[referrer].address.clone();
    let cur = current.resources.get(&address)?;
    let mut body = crate::api::spec::canonical(address.kind, &cur.value());
    crate::api::spec::strip_server_owned(address.kind, &mut body);
    let before = body.pointer(&pointer).cloned();
    removes_pointer(&mut body, &pointer);
    let target = actions[edge.to].address.clone();
    let drop = Action {
        address: address.clone(),
        action: ActionKind::Update,
        source: None,
        fields: vec![FieldChange {
            path: edge.path.clone(),
            before,
            after: None,
        }],
        depends_on: vec![],
        reason: Some(format!(
            "drops `{}` so that {target} can be deleted (breaks the reference cycle {cycle_text})",
            edge.path
        )),
        body: Some(std::sync::Arc::new(body)),
        intended: None,
        fingerprint: actions[referrer].fingerprint.clone(),
        cascade: vec![],
    };
    let u = actions.len();
    actions.push(drop);
    Some(
        [edge.to, referrer]
            .into_iter()
            .map(|to| Edge {
                from: u,
                to,
                breakable: None,
                path: edge.path.clone(),
            })
            .collect(),
    )
}

fn describe_cycle(members: &[usize], actions: &[Action]) -> String {
    let mut names: Vec<String> = members
        .iter()
        .map(|&i| actions[i].address.to_string())
        .collect();
    names.dedup();
    if let Some(first) = names.first().cloned() {
        names.push(first);
    }
    names.join(" -> ")
}

fn cycle_error(members: &[usize], actions: &[Action], desired: &[Manifest]) -> Diagnostic {
    let cycle = describe_cycle(members, actions);
    let first = &actions[members[0]].address;
    let (file, pos) = desired
        .iter()
        .find(|m| &m.address() == first)
        .map(|m| (m.file.clone(), m.pos))
        .unwrap_or_else(|| (std::path::PathBuf::from("<target>"), Pos::new(1, 1)));
    Diagnostic::error(file, pos, Problem::ReferenceCycle { cycle })
}

/// Kahn's algorithm; among ready actions, non-deletes first, then by address.
fn topological(actions: Vec<Action>, edges: &[Edge]) -> Vec<Action> {
    let n = actions.len();
    let mut preds: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut succs: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for e in edges {
        preds[e.to].insert(e.from);
        succs[e.from].insert(e.to);
    }
    let key = |i: usize| {
        (
            actions[i].action == ActionKind::Delete,
            actions[i].address.clone(),
            i,
        )
    };
    let mut remaining: Vec<usize> = preds.iter().map(BTreeSet::len).collect();
    let mut ready: BTreeSet<(bool, Address, usize)> =
        (0..n).filter(|&i| remaining[i] == 0).map(key).collect();
    let mut sequence = Vec::with_capacity(n);
    while let Some(next) = ready.pop_first() {
        let i = next.2;
        sequence.push(i);
        for &s in &succs[i] {
            remaining[s] -= 1;
            if remaining[s] == 0 {
                ready.insert(key(s));
            }
        }
    }
    let mut position = vec![0; n];
    for (pos, &i) in sequence.iter().enumerate() {
        position[i] = pos;
    }
    // The caller has removed every cycle, so `sequence` holds each index once.
    let mut placed: Vec<(usize, Action)> = actions
        .into_iter()
        .enumerate()
        .map(|(i, mut a)| {
            a.depends_on = preds[i].iter().map(|&p| position[p]).collect();
            (position[i], a)
        })
        .collect();
    placed.sort_by_key(|(pos, _)| *pos);
    placed.into_iter().map(|(_, a)| a).collect()
}
