//! The one walk of a kind's fields through an API description's definitions, for every rule
//! that finds fields by what the description says (references, secrets, PromQL).
//!
//! A description is input: a target's `swagger.json` can be hostile. So the walk is bounded:
//! - each definition's fields are worked out once per context and reused wherever it is
//!   reached again (a `$ref` DAG of 30 levels is 30 definitions, not 2^30 paths);
//! - a `$ref` cycle is cut where it closes (what lies beyond is what was found on the way in);
//! - it goes at most [`MAX_DEPTH`] levels deep (a 10,000-long `$ref` chain cannot exhaust
//!   the stack), keeps at most [`MAX_FOUND`] fields per definition, and visits at most
//!   [`MAX_VISITS`] schemas; past any of them it stops and says so ([`Walk::problem`]).
//!
//! Paths are dotted, `[]` marking every element of an array (`slack.actions[].token`).

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Value};

/// How deep the walk goes (nested objects, arrays and `$ref`s counted alike).
pub const MAX_DEPTH: usize = 64;
/// How many fields one definition may hold for one rule.
pub const MAX_FOUND: usize = 4096;
/// How many schemas one walk visits.
pub const MAX_VISITS: usize = 200_000;

/// What a rule says of one property.
pub(super) enum Step<P> {
    /// The property is found: its path gets `suffix` (`[]`, `.slug`), and the rule's payload.
    Found(&'static str, P),
    /// Not found here: its schema is walked.
    Descend,
}

/// Where a property is met: the name of the field whose value holds it (`slack` for
/// `slack.api_url`, empty at the top), and the definition its object was reached through.
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub parent: &'a str,
    pub definition: Option<&'a str>,
}

/// The fields a schema holds, relative to it, and whether nothing was cut (a cycle, a limit):
/// only complete results are reused.
type Found<P> = (Fields<P>, bool);

/// Fields by relative path, shared where a definition is reused.
type Fields<P> = Rc<Vec<(String, P)>>;

pub(super) struct Walk<'a, P, R> {
    defs: &'a Map<String, Value>,
    rule: R,
    /// Which part of [`At::parent`] the rule reads (a definition's fields are reused per value).
    context: fn(&str) -> u8,
    memo: HashMap<(&'a str, u8), Fields<P>>,
    stack: Vec<&'a str>,
    visits: usize,
    /// Why the walk stopped short, if it did.
    pub problem: Option<String>,
}

impl<'a, P: Clone, R: FnMut(At<'a>, &'a str, &'a Value) -> Step<P>> Walk<'a, P, R> {
    /// A walk of `defs` by `rule`; `context` maps the parent field's name to the part of it the
    /// rule reads (`|_| 0` when it reads none).
    pub fn new(defs: &'a Map<String, Value>, context: fn(&str) -> u8, rule: R) -> Self {
        Walk {
            defs,
            rule,
            context,
            memo: HashMap::new(),
            stack: Vec::new(),
            visits: 0,
            problem: None,
        }
    }

    /// Every field of `schema` the rule finds, depth first in property order.
    pub fn fields(&mut self, schema: &'a Value) -> Vec<(String, P)> {
        let (found, _) = self.schema(schema, "", None, 0);
        Rc::try_unwrap(found).unwrap_or_else(|rc| (*rc).clone())
    }

    fn stop(&mut self, why: String) -> Found<P> {
        self.problem.get_or_insert(why);
        (Rc::new(Vec::new()), false)
    }

    fn schema(
        &mut self,
        schema: &'a Value,
        parent: &'a str,
        definition: Option<&'a str>,
        depth: usize,
    ) -> Found<P> {
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return self.stop(format!("more than {MAX_VISITS} schemas to walk"));
        }
        if depth > MAX_DEPTH {
            let at = self.stack.last().copied().unwrap_or("the top");
            return self.stop(format!(
                "nested more than {MAX_DEPTH} levels deep (at {at})"
            ));
        }
        if let Some(name) = ref_name(schema) {
            return self.definition(name, parent, depth);
        }
        if let Some(items) = schema.get("items") {
            let (found, complete) = self.schema(items, parent, None, depth + 1);
            let found = found
                .iter()
                .map(|(path, p)| (join("[]", path), p.clone()))
                .collect();
            return (Rc::new(found), complete);
        }
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return (Rc::new(Vec::new()), true);
        };
        let mut out = Vec::new();
        let mut complete = true;
        for (field, sub) in props {
            let at = At { parent, definition };
            match (self.rule)(at, field, sub) {
                Step::Found(suffix, p) => out.push((format!("{field}{suffix}"), p)),
                Step::Descend => {
                    let (found, whole) = self.schema(sub, field, None, depth + 1);
                    complete &= whole;
                    out.extend(found.iter().map(|(path, p)| (join(field, path), p.clone())));
                }
            }
            if out.len() > MAX_FOUND {
                // Cut, but reused all the same: the cut is the limit's, not the way in's.
                out.truncate(MAX_FOUND);
                let at = definition.unwrap_or("a definition");
                self.problem
                    .get_or_insert(format!("{at} holds more than {MAX_FOUND} such fields"));
                return (Rc::new(out), complete);
            }
        }
        (Rc::new(out), complete)
    }

    fn definition(&mut self, name: &'a str, parent: &'a str, depth: usize) -> Found<P> {
        if self.stack.contains(&name) {
            // A cycle: cut here; what holds it is not reused (it depends on the way in).
            return (Rc::new(Vec::new()), false);
        }
        let key = (name, (self.context)(parent));
        if let Some(found) = self.memo.get(&key) {
            return (Rc::clone(found), true);
        }
        let Some(def) = self.defs.get(name) else {
            return (Rc::new(Vec::new()), true);
        };
        self.stack.push(name);
        let (found, complete) = self.schema(def, parent, Some(name), depth + 1);
        self.stack.pop();
        if complete {
            self.memo.insert(key, Rc::clone(&found));
        }
        (found, complete)
    }
}

/// A path below `field`: `field[]...`, `field.sub`, or `field` itself.
fn join(field: &str, rest: &str) -> String {
    if rest.is_empty() {
        field.to_string()
    } else if rest.starts_with('[') || field.is_empty() {
        format!("{field}{rest}")
    } else {
        format!("{field}.{rest}")
    }
}

/// The definition a `$ref` names (`#/definitions/NAME`).
pub(super) fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/definitions/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(defs: &Map<String, Value>, top: &Value) -> (Vec<String>, Option<String>) {
        let mut walk = Walk::new(
            defs,
            |_| 0,
            |_, field: &str, _| {
                if field.ends_with("_slug") {
                    Step::Found("", ())
                } else {
                    Step::Descend
                }
            },
        );
        let found = walk.fields(top).into_iter().map(|(p, _)| p).collect();
        (found, walk.problem)
    }

    /// R4-6: a `$ref` DAG of 30 levels, each level's two fields naming the next: 2^30 paths
    /// by a naive walk; here each definition is worked out once, and the paths kept are
    /// capped (a problem says so).
    #[test]
    fn a_deep_ref_dag_is_walked_once_per_definition() {
        let mut defs = Map::new();
        for i in 0..30 {
            defs.insert(
                format!("L{i}"),
                json!({"properties": {
                    "a": {"$ref": format!("#/definitions/L{}", i + 1)},
                    "b": {"$ref": format!("#/definitions/L{}", i + 1)},
                }}),
            );
        }
        defs.insert(
            "L30".into(),
            json!({"properties": {"team_slug": {"type": "string"}}}),
        );
        let (found, problem) = names(&defs, &json!({"$ref": "#/definitions/L20"}));
        // Ten levels below L20: 2^10 paths, all kept.
        assert_eq!(found.len(), 1 << 10);
        assert_eq!(found[0], "a.a.a.a.a.a.a.a.a.a.team_slug");
        assert!(problem.is_none(), "{problem:?}");
        let (found, problem) = names(&defs, &json!({"$ref": "#/definitions/L0"}));
        assert_eq!(found.len(), MAX_FOUND);
        assert!(problem.unwrap().contains("more than 4096"));
    }

    /// R4-7: a 10,000-long `$ref` chain stops at the depth limit with a problem, not a stack
    /// overflow.
    #[test]
    fn a_long_ref_chain_stops_at_the_depth_limit() {
        let mut defs = Map::new();
        for i in 0..10_000 {
            defs.insert(
                format!("C{i}"),
                json!({"properties": {
                    "x_slug": {"type": "string"},
                    "next": {"$ref": format!("#/definitions/C{}", i + 1)},
                }}),
            );
        }
        let (found, problem) = names(&defs, &json!({"$ref": "#/definitions/C0"}));
        assert!(!found.is_empty() && found.len() < 64, "{}", found.len());
        assert!(problem.unwrap().contains("nested more than 64 levels"));
    }

    #[test]
    fn a_cycle_is_cut_where_it_closes_and_arrays_are_marked() {
        let defs: Map<String, Value> = serde_json::from_value(json!({
            "Node": {"properties": {
                "owner_slug": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}},
                "other": {"$ref": "#/definitions/Leaf"},
            }},
            "Leaf": {"properties": {"team_slug": {"type": "string"}}},
        }))
        .unwrap();
        let (found, problem) = names(&defs, &json!({"$ref": "#/definitions/Node"}));
        assert_eq!(found, ["owner_slug", "other.team_slug"]);
        assert!(problem.is_none());
        let (found, _) = names(
            &defs,
            &json!({"properties": {"list": {"type": "array", "items": {"$ref": "#/definitions/Leaf"}}}}),
        );
        assert_eq!(found, ["list[].team_slug"]);
    }
}
