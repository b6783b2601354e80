//! Query parameters validated like bodies: against the operation's parameters in the swagger
//! file (name, type, format, enum), so `page.max_size=9223372036854775808` or
//! `datasets?type=null` are a 400, as on the real gateway, not a page.
//!
//! Driven by the swagger's `parameters` of the operation: no parameter is named here.

use serde_json::Value;

use crate::api::registry::{Kind, Op};
use crate::api::wire;

/// The swagger operation object of a kind's operation.
fn operation(swagger: &Value, kind: Kind, op: Op) -> Option<&Value> {
    let def = kind.def();
    let collection = wire::collection_path(kind);
    let (path, method) = match op {
        Op::List => (collection, "get"),
        Op::Create => (collection, "post"),
        Op::Read if def.singleton => (collection, "get"),
        Op::Update if def.singleton => (collection, "put"),
        Op::Delete if def.singleton => (collection, "delete"),
        Op::Read => (format!("{collection}/{{slug}}"), "get"),
        Op::Update => (format!("{collection}/{{slug}}"), "put"),
        Op::Delete => (format!("{collection}/{{slug}}"), "delete"),
    };
    swagger.get("paths")?.get(path)?.get(method)
}

/// Checks one value against a swagger parameter (or its `items`).
fn check_value(name: &str, schema: &Value, value: &str) -> Result<(), String> {
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.iter().any(|a| a.as_str() == Some(value)) {
            let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
            return Err(format!(
                "query parameter {name}: {value:?} is not one of {}",
                names.join(", ")
            ));
        }
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
    let fits = match (kind, format) {
        ("integer", "int32") => value.parse::<i32>().is_ok(),
        ("integer", "uint32") => value.parse::<u32>().is_ok(),
        ("integer", "uint64") => value.parse::<u64>().is_ok(),
        ("integer", _) => value.parse::<i64>().is_ok(),
        ("number", _) => value.parse::<f64>().is_ok_and(f64::is_finite),
        ("boolean", _) => matches!(value, "true" | "false"),
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        let what = if format.is_empty() { kind } else { format };
        Err(format!(
            "query parameter {name}: {value:?} is not a valid {what}"
        ))
    }
}

/// Every query parameter of the request against the operation's description: unknown names,
/// a single-valued parameter given twice, and values of the wrong type, format or enum are
/// refused with a message naming the parameter.
pub fn check(swagger: &Value, kind: Kind, op: Op, raw_query: &str) -> Result<(), String> {
    let params: Vec<&Value> = operation(swagger, kind, op)
        .and_then(|o| o.get("parameters"))
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter(|p| p.get("in").and_then(Value::as_str) == Some("query"))
                .collect()
        })
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for (name, value) in form_urlencoded::parse(raw_query.as_bytes()) {
        let Some(param) = params
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(&name))
        else {
            return Err(format!(
                "unknown query parameter \"{name}\" for {}",
                wire::operation_id(kind, op)
            ));
        };
        if param.get("type").and_then(Value::as_str) == Some("array") {
            let items = param.get("items").unwrap_or(&Value::Null);
            check_value(&name, items, &value)?;
        } else {
            if !seen.insert(name.to_string()) {
                return Err(format!("query parameter {name} is given more than once"));
            }
            check_value(&name, param, &value)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_embedded(kind: Kind, op: Op, q: &str) -> Result<(), String> {
        check(crate::api::spec::swagger(), kind, op, q)
    }

    #[test]
    fn valid_queries_pass() {
        for (kind, op, q) in [
            (Kind::named("Bucket"), Op::List, ""),
            (
                Kind::named("Bucket"),
                Op::List,
                "page.max_size=5&page.token=abc&slugs=a&slugs=b",
            ),
            (Kind::named("Dataset"), Op::List, "type=LOGS&names=x"),
            (
                Kind::named("Dashboard"),
                Op::List,
                "include_dashboard_json=true",
            ),
            (Kind::named("Bucket"), Op::Delete, "force_delete=false"),
            (
                Kind::named("ConsumptionBudget"),
                Op::List,
                "resources=LOG_ALL&resources=ALL",
            ),
            (Kind::named("ResourcePools"), Op::Delete, "dry_run=true"),
            (
                Kind::named("Bucket"),
                Op::List,
                "page.max_size=9223372036854775807",
            ),
        ] {
            assert_eq!(check_embedded(kind, op, q), Ok(()), "{kind} {q}");
        }
    }

    #[test]
    fn invalid_queries_name_the_parameter() {
        for (kind, op, q, expected) in [
            (
                Kind::named("Bucket"),
                Op::List,
                "page.max_size=9223372036854775808",
                "query parameter page.max_size: \"9223372036854775808\" is not a valid int64",
            ),
            (
                Kind::named("Dataset"),
                Op::List,
                "type=null",
                "query parameter type: \"null\" is not one of TRACES, LOGS",
            ),
            (
                Kind::named("Dashboard"),
                Op::List,
                "include_dashboard_json=yes",
                "query parameter include_dashboard_json: \"yes\" is not a valid boolean",
            ),
            (
                Kind::named("ConsumptionBudget"),
                Op::List,
                "resources=ALL&resources=nope",
                "query parameter resources: \"nope\" is not one of",
            ),
            (
                Kind::named("Team"),
                Op::List,
                "page.max_size=1&page.max_size=2",
                "query parameter page.max_size is given more than once",
            ),
            (
                Kind::named("Team"),
                Op::Read,
                "x=1",
                "unknown query parameter \"x\" for ReadTeam",
            ),
            (
                Kind::named("Team"),
                Op::Delete,
                "force_delete=true",
                "unknown query parameter \"force_delete\" for DeleteTeam",
            ),
        ] {
            let err = check_embedded(kind, op, q).unwrap_err();
            assert!(err.starts_with(expected), "{q}: {err}");
        }
    }
}
