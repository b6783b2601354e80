use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::super::{normalize_as, Described};
use crate::api::registry::Kind;
use crate::api::spec::{schema_member, Description};

/// The slow way: the object without the members left out, normalised, then written.
fn slow(kind: Kind, object: &Map<String, Value>, left_out: &[&str]) -> Vec<u8> {
    slow_as(kind, object, left_out, Described::All)
}

fn slow_as(
    kind: Kind,
    object: &Map<String, Value>,
    left_out: &[&str],
    described: Described,
) -> Vec<u8> {
    let rest: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| !left_out.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::to_vec(&normalize_as(kind, &Value::Object(rest), &[], described)).unwrap()
}

/// A small deterministic generator (proptest gives the seed).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }
}

/// A value of any type, which the canonical form keeps as it is.
fn any_value(rng: &mut Rng, depth: usize) -> Value {
    let scalars = [
        json!(null),
        json!(false),
        json!(true),
        json!(0),
        json!(-0.0),
        json!(2.0),
        json!(2.5),
        json!(1e20),
        json!(u64::MAX),
        json!(""),
        json!("a\"é\n"),
        json!("0"),
    ];
    match (depth < 3).then(|| rng.below(4)) {
        Some(0) => Value::Array(
            (0..rng.below(3))
                .map(|_| any_value(rng, depth + 1))
                .collect(),
        ),
        Some(1) => Value::Object(
            (0..rng.below(4))
                .map(|_| {
                    (
                        rng.pick(&["b", "a", "", "é", "a b"]).to_string(),
                        any_value(rng, depth + 1),
                    )
                })
                .collect(),
        ),
        _ => rng.pick(&scalars),
    }
}

/// A value for `schema`, mostly of its type, sometimes of another or with members the
/// schema lacks.
fn for_schema(desc: &Description, schema: &Value, rng: &mut Rng, depth: usize) -> Value {
    let schema = desc.resolve(schema);
    if depth > 5 || rng.below(12) == 0 {
        return any_value(rng, 2);
    }
    let member = |name: &str| schema_member(schema, name);
    if let Some(props) = member("properties").and_then(Value::as_object) {
        let mut out = Map::new();
        for (name, prop) in props {
            if rng.below(2) == 0 {
                out.insert(name.clone(), for_schema(desc, prop, rng, depth + 1));
            }
        }
        // A member of a newer API.
        if rng.below(8) == 0 {
            out.insert("newer_field".into(), any_value(rng, 1));
        }
        return Value::Object(out);
    }
    match member("type").and_then(Value::as_str) {
        Some("object") => Value::Object(
            (0..rng.below(3))
                .map(|_| {
                    let v = match member("additionalProperties") {
                        Some(item) if item.is_object() => for_schema(desc, item, rng, depth + 1),
                        _ => any_value(rng, 1),
                    };
                    (rng.pick(&["k", "a", "z", ""]).to_string(), v)
                })
                .collect(),
        ),
        Some("array") => Value::Array(
            (0..rng.below(3))
                .map(|_| match member("items") {
                    Some(item) => for_schema(desc, item, rng, depth + 1),
                    None => any_value(rng, 1),
                })
                .collect(),
        ),
        Some("string") => match member("enum").and_then(Value::as_array) {
            Some(values) if rng.below(3) > 0 => rng.pick(values),
            _ => rng.pick(&[
                json!(""),
                json!("x"),
                json!(" -12 "),
                json!("1e3"),
                json!(7),
                json!(2.5),
            ]),
        },
        Some("integer" | "number") => rng.pick(&[
            json!(0),
            json!(3),
            json!(-1),
            json!(4.0),
            json!(0.5),
            json!(1e20),
            json!(u64::MAX),
            json!(-0.0),
        ]),
        Some("boolean") => json!(rng.below(2) == 0),
        _ => any_value(rng, 1),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Whenever the writer takes an object on, it writes what normalising and serialising
    /// it writes.
    #[test]
    fn the_writer_writes_the_slow_ways_bytes(seed in 1u64.., pick in 0usize..64) {
        let kinds: Vec<Kind> = Kind::all().collect();
        let kind = kinds[pick % kinds.len()];
        let desc = Description::for_kind(kind);
        let Some(def) = desc.definition(kind) else { return Ok(()) };
        let mut rng = Rng(seed);
        let Value::Object(object) = for_schema(desc, def, &mut rng, 0) else { return Ok(()) };
        let left_out: Vec<&str> = kind.def().embedded_json.iter().map(|e| e.field).collect();
        let value = Value::Object(object.clone());
        // Known to be described or not (the slow way then strips a newer API's members).
        let described = match crate::plan::newer::undescribed(kind, &value).is_empty() {
            true if seed % 2 == 0 => Described::All,
            _ => Described::Unknown,
        };
        if let Some((fast, vouched)) =
            super::comparable_vouched(kind, &value, described, &[], &left_out)
        {
            let slow = slow_as(kind, &object, &left_out, described);
            prop_assert_eq!(
                String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow), "{} {}", kind, value
            );
            // A writing that vouches for the object: the newer API's walk finds nothing in it.
            if vouched {
                let found = crate::plan::newer::undescribed(kind, &value);
                prop_assert!(found.is_empty(), "{} {} {:?}", kind, value, found);
            }
        }
    }
}

/// A member the schema lacks, zero or not, at the top (left out or not) or below, and the
/// writing does not vouch for the object; without one, it does.
#[test]
fn the_writer_vouches_only_for_objects_without_undescribed_members() {
    let kind = Kind::named("Dashboard");
    let left_out = ["dashboard_json"];
    let vouched = |value: &Value| {
        super::comparable_vouched(kind, value, Described::Unknown, &[], &left_out)
            .map(|(_, vouched)| vouched)
    };
    let plain = json!({"slug": "d", "name": "D", "labels": {"a": "b"}, "dashboard_json": "{}"});
    assert_eq!(vouched(&plain), Some(true));
    assert!(crate::plan::newer::undescribed(kind, &plain).is_empty());
    for zero in [json!(0), json!(null), json!(""), json!({})] {
        let mut with = plain.clone();
        with["newer"] = zero;
        assert!(!crate::plan::newer::undescribed(kind, &with).is_empty());
        assert_eq!(vouched(&with), Some(false), "{with}");
    }
    // A non-zero one: strict writing gives up (the slow way strips it).
    let mut with = plain.clone();
    with["newer"] = json!("x");
    assert_eq!(vouched(&with), None);
}

#[test]
fn a_listed_object_of_the_common_kinds_is_taken_on() {
    let dashboard = json!({
        "slug": "d", "name": "D", "created_at": "2026-01-01T00:00:00Z",
        "collection_slug": "c", "labels": {"tier": "gold", "service": "ads"},
        "dashboard_json": "{}"
    });
    let fast = super::comparable_vouched(
        Kind::named("Dashboard"),
        &dashboard,
        Described::All,
        &[("dashboard_json", &b"{\"a\":1}"[..])],
        &["dashboard_json"],
    )
    .unwrap()
    .0;
    assert_eq!(
        String::from_utf8(fast).unwrap(),
        r#"{"collection_slug":"c","dashboard_json":{"a":1},"labels":{"service":"ads","tier":"gold"},"name":"D","slug":"d"}"#
    );
    let bucket = json!({"slug": "b", "name": "B", "team_slug": "t", "retention_days": 30.0});
    let fast = super::comparable_vouched(Kind::named("Bucket"), &bucket, Described::All, &[], &[]);
    let Value::Object(map) = &bucket else {
        unreachable!()
    };
    assert_eq!(fast.unwrap().0, slow(Kind::named("Bucket"), map, &[]));
    // Not known to be described: the slow way strips what a newer API added.
    assert!(super::comparable_vouched(
        Kind::named("Bucket"),
        &bucket,
        Described::Unknown,
        &[],
        &[]
    )
    .is_none());
}
