//! Property: for a generated YAML document in any of the styles people write (block and flow
//! collections, plain, single- and double-quoted scalars and keys, comments) and one changed
//! leaf, pull's output differs from the input only on that leaf's line.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::super::*;

#[derive(Clone, Copy, Debug)]
enum Quote {
    Plain,
    Single,
    Double,
}

#[derive(Clone, Debug)]
enum Node {
    Scalar(Value, Quote),
    /// Lines of a block scalar: literal (`|-`, kept as lines) or folded (`>-`, one line).
    Block(Vec<String>, bool),
    Map(Vec<(String, Quote, Node)>, bool),
    Seq(Vec<Node>, bool),
}

const RESERVED: [&str; 12] = [
    "true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf", "infinity",
];

fn scalar_text(v: &Value, q: Quote) -> String {
    match (v, q) {
        (Value::String(s), Quote::Plain) if !RESERVED.contains(&s.as_str()) => s.clone(),
        (Value::String(s), Quote::Double) => format!("\"{s}\""),
        (Value::String(s), _) => format!("'{s}'"),
        (other, _) => other.to_string(),
    }
}

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z ]{0,6}[a-z]|[a-z]"
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        word().prop_map(Value::String),
        (0u32..1000).prop_map(Value::from)
    ]
}

fn quote() -> impl Strategy<Value = Quote> {
    prop_oneof![Just(Quote::Plain), Just(Quote::Single), Just(Quote::Double)]
}

/// A node; `flow` forces flow style (inside a flow collection).
fn node(depth: u32, flow: bool) -> BoxedStrategy<Node> {
    let scalar_leaf = (scalar(), quote()).prop_map(|(v, q)| Node::Scalar(v, q));
    let leaf = if flow {
        scalar_leaf.boxed()
    } else {
        let block = (prop::collection::vec("[a-z]{1,6}", 1..4), any::<bool>())
            .prop_map(|(lines, folded)| Node::Block(lines, folded));
        prop_oneof![4 => scalar_leaf, 1 => block].boxed()
    };
    if depth == 0 {
        return leaf;
    }
    let style = if flow {
        Just(true).boxed()
    } else {
        any::<bool>().boxed()
    };
    let inner = style.prop_flat_map(move |f| {
        let child = node(depth - 1, f);
        prop_oneof![
            prop::collection::vec(("[a-z]{1,5}", quote(), child.clone()), 1..4).prop_map(
                move |members| {
                    let mut seen = std::collections::BTreeSet::new();
                    let members = members
                        .into_iter()
                        .filter(|(k, _, _)| seen.insert(k.clone()))
                        .collect();
                    Node::Map(members, f)
                }
            ),
            prop::collection::vec(child, 1..4).prop_map(move |items| Node::Seq(items, f)),
        ]
    });
    prop_oneof![leaf, inner].boxed()
}

fn value(n: &Node) -> Value {
    match n {
        Node::Scalar(v, _) => v.clone(),
        Node::Block(lines, folded) => Value::from(lines.join(if *folded { " " } else { "\n" })),
        Node::Map(members, _) => Value::Object(
            members
                .iter()
                .map(|(k, _, v)| (k.clone(), value(v)))
                .collect::<Map<String, Value>>(),
        ),
        Node::Seq(items, _) => Value::Array(items.iter().map(value).collect()),
    }
}

fn flow_text(n: &Node) -> String {
    match n {
        Node::Scalar(v, q) => scalar_text(v, *q),
        // Where no block scalar can stand: its value, double-quoted.
        Node::Block(..) => serde_json::to_string(&value(n)).unwrap_or_default(),
        Node::Map(members, _) => {
            let m: Vec<String> = members
                .iter()
                .map(|(k, q, v)| {
                    format!(
                        "{}: {}",
                        scalar_text(&Value::from(k.as_str()), *q),
                        flow_text(v)
                    )
                })
                .collect();
            format!("{{{}}}", m.join(", "))
        }
        Node::Seq(items, _) => {
            let i: Vec<String> = items.iter().map(flow_text).collect();
            format!("[{}]", i.join(", "))
        }
    }
}

fn is_block(n: &Node) -> bool {
    matches!(n, Node::Map(_, false) | Node::Seq(_, false))
}

/// The members of a block mapping at `indent`; the first one's line starts with `first`
/// (`- ` of a list item) when given.
fn block_map(
    members: &[(String, Quote, Node)],
    indent: usize,
    first: Option<&str>,
    out: &mut String,
) {
    for (i, (k, q, v)) in members.iter().enumerate() {
        let pad = match (i, first) {
            (0, Some(dash)) => dash.to_string(),
            _ => " ".repeat(indent),
        };
        let key = scalar_text(&Value::from(k.as_str()), *q);
        if let Node::Block(lines, folded) = v {
            out.push_str(&format!(
                "{pad}{key}: {}-\n",
                if *folded { '>' } else { '|' }
            ));
            for line in lines {
                out.push_str(&format!("{}{line}\n", " ".repeat(indent + 2)));
            }
        } else if is_block(v) {
            out.push_str(&format!("{pad}{key}:\n"));
            block(v, indent + 2, out);
        } else {
            let comment = if k.len() % 2 == 0 { "  # note" } else { "" };
            out.push_str(&format!("{pad}{key}: {}{comment}\n", flow_text(v)));
        }
        if k.len() == 3 {
            out.push_str(&format!("{}# about {k}\n", " ".repeat(indent)));
        }
    }
}

fn block(n: &Node, indent: usize, out: &mut String) {
    match n {
        Node::Map(members, false) => block_map(members, indent, None, out),
        Node::Seq(items, false) => {
            let pad = " ".repeat(indent);
            for item in items {
                match item {
                    Node::Map(members, false) => {
                        block_map(members, indent + 2, Some(&format!("{pad}- ")), out)
                    }
                    Node::Seq(..) if is_block(item) => {
                        // A nested block list: written in flow style on the item's line.
                        out.push_str(&format!("{pad}- {}\n", flow_text(item)));
                    }
                    Node::Block(..) => {
                        let text = serde_json::to_string(&value(item)).unwrap_or_default();
                        out.push_str(&format!("{pad}- {text}\n"))
                    }
                    other => out.push_str(&format!("{pad}- {}\n", flow_text(other))),
                }
            }
        }
        other => out.push_str(&format!("{}{}\n", " ".repeat(indent), flow_text(other))),
    }
}

/// The pointers of every scalar leaf.
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                leaves(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, format!("{at}/{i}"), out);
            }
        }
        _ => out.push(at),
    }
}

/// The pointers of the block scalars a mapping writes (`key: |-`).
fn block_pointers(n: &Node, at: String, out: &mut Vec<String>) {
    match n {
        Node::Map(members, _) => {
            for (k, _, v) in members {
                match v {
                    Node::Block(..) => out.push(format!("{at}/{k}")),
                    _ => block_pointers(v, format!("{at}/{k}"), out),
                }
            }
        }
        Node::Seq(items, _) => {
            for (i, v) in items.iter().enumerate() {
                block_pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn spec_node() -> impl Strategy<Value = Vec<(String, Quote, Node)>> {
    prop::collection::vec(("[a-z]{1,5}", quote(), node(3, false)), 1..5).prop_map(|members| {
        let mut seen = std::collections::BTreeSet::from(["slug".to_string()]);
        members
            .into_iter()
            .filter(|(k, _, _)| seen.insert(k.clone()))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn one_changed_leaf_changes_only_its_line(
        members in spec_node(),
        pick in any::<prop::sample::Index>(),
        new in scalar(),
    ) {
        let mut text = String::from("# a team\napi_version: v1/config\nkind: Team\nspec:\n  slug: t\n");
        block_map(&members, 2, None, &mut text);
        let file = Path::new("t.yaml");
        let docs = locate(file, &text, false).unwrap();
        prop_assert_eq!(docs.len(), 1);
        let mut spec = value(&Node::Map(members.clone(), false));
        spec.as_object_mut().unwrap().shift_insert(0, "slug".into(), Value::from("t"));
        prop_assert_eq!(docs[0].value.get("spec"), Some(&spec), "the generator writes what it means: {}", text);
        let mut pointers = Vec::new();
        leaves(&spec, String::new(), &mut pointers);
        // Block scalars stay as they are (each of their lines is checked to be kept).
        let mut blocks = Vec::new();
        block_pointers(&Node::Map(members.clone(), false), String::new(), &mut blocks);
        pointers.retain(|p| p != "/slug" && !blocks.contains(p));
        prop_assume!(!pointers.is_empty());
        let pointer = pick.get(&pointers).clone();
        prop_assume!(spec.pointer(&pointer) != Some(&new));
        let line = docs[0].spans.as_ref().unwrap().get(&format!("/spec{pointer}")).unwrap().value.line;
        let mut envelope = docs[0].value.clone();
        *envelope.pointer_mut(&format!("/spec{pointer}")).unwrap() = new.clone();
        let address = docs[0].address.clone().unwrap();
        let wanted = vec![(&docs[0], address, envelope)];
        let out = rewrite_docs(file, &text, &docs, &wanted).unwrap();
        let (before, after): (Vec<&str>, Vec<&str>) = (text.lines().collect(), out.lines().collect());
        prop_assert_eq!(before.len(), after.len(), "{}\n---\n{}", text, out);
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            if i + 1 != line as usize {
                prop_assert_eq!(b, a, "line {} of\n{}\n---\n{}", i + 1, text, out);
            }
        }
    }
}
