//! A changed dashboard shown panel by panel (docs/product.md §3, "Review"): each part of
//! the diff is headed by the panel it is in, a panel that only moved is one line, and what
//! lies outside the panels is a part of its own.
//!
//! Dashboards are recognised by their shape, never by kind: a Perses document (`spec.panels`
//! an object, its placement in `spec.layouts`) or a Grafana one (`panels` an array, rows as
//! `type: row` panels, a collapsed row's panels nested in it). Panels are matched by identity
//! first (Perses: the key in `spec.panels`; Grafana: `id`, when it is unique on its side),
//! then, among those left, by title and occurrence (the second "Latency" with the second), so
//! a panel whose key or `id` changed is still one panel. Where a panel sits (its path, its row
//! or section, its `gridPos` or layout item) is its position, not its content: a panel whose
//! position alone changed is one `moved` line, never a delete and an add.
//!
//! Only the text and Markdown forms change; the JSON plan keeps `dashboard_json` as one field.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::diff::{hunk_lines, pretty, Line, Sides};
use crate::util::output::Inert;

/// The two dashboard shapes this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Perses,
    Grafana,
}

/// One panel of a dashboard (a Grafana row is one too), with where it sits.
#[derive(Debug)]
struct Panel<'a> {
    /// Its dotted path in the document: `panels[3]`, `panels[2].panels[0]`, `spec.panels.cpu`.
    path: String,
    /// Its title (Grafana `title`, Perses `spec.display.name`).
    name: Option<&'a str>,
    /// The row (Grafana) or layout section (Perses) it is in: `row "API"`, `in "Checkout"`.
    group: Option<String>,
    /// Where it is on the grid: `x=0 y=8 w=12 h=8`.
    place: Option<String>,
    /// Its identity: the Perses key, the Grafana `id`.
    id: Option<String>,
    value: &'a Value,
    /// Members that are position, not content (`gridPos`; a row's nested `panels`, which are
    /// panels of their own).
    skip: &'static [&'static str],
}

impl Panel<'_> {
    /// `panels[12] "Error rate" (row "API")`.
    fn label(&self) -> String {
        let mut s = self.path.clone();
        if let Some(name) = self.name {
            s.push(' ');
            s.push_str(&Value::from(name).to_string());
        }
        if let Some(group) = &self.group {
            s.push_str(&format!(" ({group})"));
        }
        s
    }

    /// The panel without its position members, as its content diff shows it.
    fn content(&self) -> Value {
        match self.value {
            Value::Object(map) if !self.skip.is_empty() => Value::Object(
                map.iter()
                    .filter(|(k, _)| !self.skip.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            v => v.clone(),
        }
    }
}

/// A dashboard split into its panels and the rest of the document.
#[derive(Debug)]
struct Dashboard<'a> {
    /// In the document's order (Grafana: a row, then its nested panels).
    panels: Vec<Panel<'a>>,
    /// Whether the panels' order is where they sit (Grafana's array; not Perses' keys).
    ordered: bool,
    /// The document without its panels (Perses: and without the layout items that place them).
    rest: Value,
}

/// The parts of a changed dashboard, after the field's head: `None` when either side is not a
/// dashboard of a shape this module reads (the caller then diffs the whole document).
pub(crate) fn document_lines(before: &Value, after: &Value, sides: Sides) -> Option<Vec<Line>> {
    let family = family(before).or_else(|| family(after))?;
    let (old, new) = (split(family, before)?, split(family, after)?);
    let mut parts = Vec::new();
    if old.rest != new.rest {
        parts.push(Line::Part("~ outside the panels:".into()));
        parts.extend(hunk_lines(
            &pretty(Some(&old.rest)),
            &pretty(Some(&new.rest)),
            "outside the panels",
        ));
    }
    let pairs = pair(&old.panels, &new.panels);
    // Those that changed rows moved anyway: the order kept is the others'.
    let candidates: Vec<(usize, usize)> = pairs
        .iter()
        .enumerate()
        .filter_map(|(n, (b, a))| match (b, a) {
            (Some(b), Some(a)) if old.panels[*b].group == new.panels[*a].group => Some((n, *b)),
            _ => None,
        })
        .collect();
    let kept = in_order(&candidates);
    for (n, (b, a)) in pairs.iter().enumerate() {
        let (b, a) = (b.map(|i| &old.panels[i]), a.map(|i| &new.panels[i]));
        // In an ordered list a panel that the others' moves only shifted (`panels[4]` now
        // `panels[3]`) did not move itself; a Perses panel's path is its key.
        let elsewhere = match (b, a) {
            (Some(b), Some(a)) if new.ordered => !kept.contains(&n) || b.group != a.group,
            (Some(b), Some(a)) => b.path != a.path,
            _ => false,
        };
        part_lines(&mut parts, b, a, elsewhere);
    }
    if parts.is_empty() {
        return None;
    }
    let mut out = vec![
        Line::DiffHeader(format!("--- {}", sides.before)),
        Line::DiffHeader(format!("+++ {}", sides.after)),
    ];
    out.extend(parts);
    Some(out)
}

/// The lines of one panel's change: nothing when it did not change, a `moved` head when it
/// sits elsewhere (`elsewhere`: its path says it moved), its content's hunks (each naming the
/// panel) when that changed.
fn part_lines(out: &mut Vec<Line>, before: Option<&Panel>, after: Option<&Panel>, elsewhere: bool) {
    match (before, after) {
        (Some(b), Some(a)) => {
            let same = eq_except(b.value, a.value, a.skip) && b.skip == a.skip;
            let moves = moves(b, a, elsewhere);
            if same && moves.is_empty() {
                return;
            }
            let head = if moves.is_empty() {
                format!("~ {}:", a.label())
            } else {
                format!("~ {}: moved: {}", a.label(), moves.join(", "))
            };
            out.push(Line::Part(Inert(head).to_string()));
            if !same {
                out.extend(hunk_lines(
                    &pretty(Some(&b.content())),
                    &pretty(Some(&a.content())),
                    &a.label(),
                ));
            }
        }
        (None, Some(a)) => {
            out.push(Line::Part(Inert(format!("+ {}:", a.label())).to_string()));
            out.extend(hunk_lines("", &pretty(Some(a.value)), &a.label()));
        }
        (Some(b), None) => {
            out.push(Line::Part(Inert(format!("- {}:", b.label())).to_string()));
            out.extend(hunk_lines(&pretty(Some(b.value)), "", &b.label()));
        }
        (None, None) => {}
    }
}

/// What changed in where a panel sits: `panels[3] -> panels[7]`, `row "A" -> row "B"`,
/// `x=0 y=8 w=12 h=8 -> x=12 y=8 w=12 h=8`.
fn moves(b: &Panel, a: &Panel, elsewhere: bool) -> Vec<String> {
    let or = |s: &Option<String>, none: &str| s.clone().unwrap_or_else(|| none.to_string());
    let mut out = Vec::new();
    if elsewhere && b.path != a.path {
        out.push(format!("{} -> {}", b.path, a.path));
    }
    if b.group != a.group {
        out.push(format!(
            "{} -> {}",
            or(&b.group, "no group"),
            or(&a.group, "no group")
        ));
    }
    if b.place != a.place {
        out.push(format!(
            "{} -> {}",
            or(&b.place, "not placed"),
            or(&a.place, "not placed")
        ));
    }
    out
}

/// Two values equal but for the members `skip` of the outer object.
fn eq_except(a: &Value, b: &Value, skip: &[&str]) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if !skip.is_empty() => {
            let kept = |m: &'_ Map<String, Value>| {
                m.iter()
                    .filter(|(k, _)| !skip.contains(&k.as_str()))
                    .count()
            };
            kept(x) == kept(y)
                && x.iter()
                    .filter(|(k, _)| !skip.contains(&k.as_str()))
                    .all(|(k, v)| y.get(k) == Some(v))
        }
        _ => a == b,
    }
}

/// The panels of both sides paired: by identity (unique on both sides), then by title and
/// occurrence among those left; in the new side's order, then the removed in the old one's.
fn pair(before: &[Panel], after: &[Panel]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut of_after: Vec<Option<usize>> = vec![None; after.len()];
    let mut taken = vec![false; before.len()];
    let (ub, ua) = (unique(before), unique(after));
    let by_id: BTreeMap<&str, usize> = before
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            p.id.as_deref()
                .filter(|id| ub.contains(id))
                .map(|id| (id, i))
        })
        .collect();
    for (j, p) in after.iter().enumerate() {
        let found = p.id.as_deref().filter(|id| ua.contains(id));
        if let Some(&i) = found.and_then(|id| by_id.get(id)) {
            of_after[j] = Some(i);
            taken[i] = true;
        }
    }
    // Among those left: the n-th panel of a title with the n-th of the same title.
    let old = by_title(before, |i| !taken[i]);
    let new = by_title(after, |j| of_after[j].is_none());
    for (key, j) in new {
        if let Some(&i) = old.get(&key) {
            of_after[j] = Some(i);
            taken[i] = true;
        }
    }
    let mut out: Vec<_> = of_after
        .iter()
        .enumerate()
        .map(|(j, i)| (*i, Some(j)))
        .collect();
    out.extend(
        (0..before.len())
            .filter(|i| !taken[*i])
            .map(|i| (Some(i), None)),
    );
    out
}

/// The identities that one panel alone has.
fn unique<'p>(panels: &'p [Panel]) -> BTreeSet<&'p str> {
    let mut seen = BTreeMap::<&str, usize>::new();
    for p in panels {
        if let Some(id) = &p.id {
            *seen.entry(id.as_str()).or_default() += 1;
        }
    }
    seen.into_iter()
        .filter(|(_, n)| *n == 1)
        .map(|(id, _)| id)
        .collect()
}

/// The panels that `free` lets through, by (title, occurrence of that title among them).
fn by_title<'p>(
    panels: &'p [Panel],
    free: impl Fn(usize) -> bool,
) -> BTreeMap<(Option<&'p str>, usize), usize> {
    let mut count = BTreeMap::<Option<&str>, usize>::new();
    let mut keyed = BTreeMap::new();
    for (i, p) in panels.iter().enumerate().filter(|(i, _)| free(*i)) {
        let n = count.entry(p.name).or_default();
        keyed.insert((p.name, *n), i);
        *n += 1;
    }
    keyed
}

/// Of `matched` (a pair's number, its old position; in the new order), the pairs that kept
/// their order: a longest run whose old positions rise (patience sorting, O(n log n)). The
/// others moved.
fn in_order(matched: &[(usize, usize)]) -> BTreeSet<usize> {
    // tails[k]: the index into `matched` ending the best run of length k + 1 found so far.
    let mut tails: Vec<usize> = Vec::new();
    let mut back: Vec<Option<usize>> = vec![None; matched.len()];
    for (m, &(_, old)) in matched.iter().enumerate() {
        let k = tails.partition_point(|&t| matched[t].1 < old);
        back[m] = k.checked_sub(1).map(|p| tails[p]);
        if k == tails.len() {
            tails.push(m);
        } else {
            tails[k] = m;
        }
    }
    let mut out = BTreeSet::new();
    let mut at = tails.last().copied();
    while let Some(m) = at {
        out.insert(matched[m].0);
        at = back[m];
    }
    out
}

/// The family a document's shape says, if any.
fn family(doc: &Value) -> Option<Family> {
    if doc.pointer("/spec/panels").is_some_and(Value::is_object) {
        Some(Family::Perses)
    } else if doc.get("panels").is_some_and(Value::is_array) {
        Some(Family::Grafana)
    } else {
        None
    }
}

fn split(family: Family, doc: &Value) -> Option<Dashboard<'_>> {
    match family {
        Family::Perses => perses(doc),
        Family::Grafana => grafana(doc),
    }
}

/// An object's members but `key`, copied.
fn without(map: &Map<String, Value>, key: &str) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| k.as_str() != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn title<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// A Grafana panel's title, unless it has none.
fn named(p: &Value) -> Option<&str> {
    title(p, "/title").filter(|t| !t.is_empty())
}

/// A grid position as `x=0 y=8 w=12 h=8`, from the members the family names them by.
fn place(v: Option<&Value>, names: [&str; 4]) -> Option<String> {
    let v = v?;
    // An absent coordinate is 0: the plan compares documents without their zero values.
    let n = |k: &str| v.get(k).map(Value::to_string).unwrap_or_else(|| "0".into());
    Some(format!(
        "x={} y={} w={} h={}",
        n(names[0]),
        n(names[1]),
        n(names[2]),
        n(names[3])
    ))
}

/// A Grafana dashboard: `panels[i]`, rows (`type: row`) and their nested panels; a panel of
/// the flat form belongs to the row above it.
fn grafana(doc: &Value) -> Option<Dashboard<'_>> {
    let map = doc.as_object()?;
    let list = match map.get("panels") {
        None => &[][..],
        Some(Value::Array(list)) => list.as_slice(),
        Some(_) => return None,
    };
    let grid = ["x", "y", "w", "h"];
    let id = |p: &Value| match p.get("id") {
        Some(v @ (Value::Number(_) | Value::String(_))) => Some(v.to_string()),
        _ => None,
    };
    let mut panels = Vec::with_capacity(list.len());
    let mut row: Option<String> = None;
    for (i, p) in list.iter().enumerate() {
        let path = format!("panels[{i}]");
        if p.get("type").and_then(Value::as_str) != Some("row") {
            panels.push(Panel {
                path,
                name: named(p),
                group: row.clone(),
                place: place(p.get("gridPos"), grid),
                id: id(p),
                value: p,
                skip: &["gridPos"],
            });
            continue;
        }
        let this = match named(p) {
            Some(t) => format!("row {}", Value::from(t)),
            None => format!("row {path}"),
        };
        panels.push(Panel {
            path: path.clone(),
            name: named(p),
            group: None,
            place: place(p.get("gridPos"), grid),
            id: id(p),
            value: p,
            skip: &["gridPos", "panels"],
        });
        for (j, q) in p
            .get("panels")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            panels.push(Panel {
                path: format!("{path}.panels[{j}]"),
                name: named(q),
                group: Some(this.clone()),
                place: place(q.get("gridPos"), grid),
                id: id(q),
                value: q,
                skip: &["gridPos"],
            });
        }
        row = Some(this);
    }
    Some(Dashboard {
        panels,
        ordered: true,
        rest: Value::Object(without(map, "panels")),
    })
}

/// The key a Perses layout item's `content.$ref` names in `spec.panels`, if it is one.
fn referenced(item: &Value) -> Option<String> {
    let r = item.pointer("/content/$ref")?.as_str()?;
    let key = r.strip_prefix("#/spec/panels/")?;
    (!key.contains('/')).then(|| key.replace("~1", "/").replace("~0", "~"))
}

/// A Perses dashboard: `spec.panels.<key>`, placed by the items of `spec.layouts[].spec.items`
/// whose `content.$ref` names them; a layout with a `spec.display.title` is a section.
fn perses(doc: &Value) -> Option<Dashboard<'_>> {
    let map = doc.as_object()?;
    let spec = map.get("spec")?.as_object()?;
    let found = match spec.get("panels") {
        None => None,
        Some(Value::Object(found)) => Some(found),
        Some(_) => return None,
    };
    // Every placement of every panel: (section, place), in layout order.
    let mut placed = BTreeMap::<String, Vec<(String, Option<String>)>>::new();
    let mut layouts = spec.get("layouts").cloned().unwrap_or(Value::Null);
    if let Value::Array(list) = &mut layouts {
        for (l, layout) in list.iter_mut().enumerate() {
            let section = match title(layout, "/spec/display/title") {
                Some(t) => format!("in {}", Value::from(t)),
                None => format!("in spec.layouts[{l}]"),
            };
            let Some(Value::Array(items)) = layout.pointer_mut("/spec/items") else {
                continue;
            };
            items.retain(|item| {
                match referenced(item).filter(|k| found.is_some_and(|f| f.contains_key(k))) {
                    Some(key) => {
                        let at = place(Some(item), ["x", "y", "width", "height"]);
                        placed.entry(key).or_default().push((section.clone(), at));
                        false
                    }
                    None => true,
                }
            });
        }
    }
    let panels = found
        .into_iter()
        .flatten()
        .map(|(key, p)| {
            let at = placed.get(key).map(Vec::as_slice).unwrap_or_default();
            let (group, place) = match at {
                [] => (None, None),
                [(section, place)] => (Some(section.clone()), place.clone()),
                many => (
                    None,
                    Some(
                        many.iter()
                            .map(|(s, p)| format!("{s} {}", p.as_deref().unwrap_or("")))
                            .collect::<Vec<_>>()
                            .join("; "),
                    ),
                ),
            };
            Panel {
                path: format!("spec.panels.{key}"),
                name: title(p, "/spec/display/name").filter(|t| !t.is_empty()),
                group,
                place,
                id: Some(key.clone()),
                value: p,
                skip: &[],
            }
        })
        .collect();
    let mut rest_spec = without(spec, "panels");
    if !layouts.is_null() {
        rest_spec.insert("layouts".into(), layouts);
    }
    // The document as it is but for its spec, in its members' order.
    let rest = map
        .iter()
        .map(|(k, v)| match k.as_str() {
            "spec" => (k.clone(), Value::Object(std::mem::take(&mut rest_spec))),
            _ => (k.clone(), v.clone()),
        })
        .collect();
    Some(Dashboard {
        panels,
        ordered: false,
        rest: Value::Object(rest),
    })
}

#[cfg(test)]
mod tests;
