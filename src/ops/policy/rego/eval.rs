//! The rules evaluated: `data.main.deny`/`warn` once per manifest, `data.cfgctl.plan.deny`/
//! `warn` once over the JSON plan, and what they answer read as located messages.

use std::path::Path;

use serde_json::{json, Value};

use super::load::Loaded;
use super::located::Failure;
use crate::config::diagnostic::{Diagnostic, Problem, Severity};
use crate::manifest::Manifest;
use crate::plan::Plan;
use crate::util::yaml::Pos;

/// The manifest rules' package (conftest's default).
pub(super) const MAIN: &str = "data.main";
/// The plan rules' package.
pub(super) const PLAN: &str = "data.cfgctl.plan";

const RULES: [(&str, Severity); 2] = [("deny", Severity::Error), ("warn", Severity::Warning)];

/// One message a rule answered.
struct Message {
    text: String,
    /// A plan rule's `{msg, address}`: the resource it is about.
    address: Option<String>,
}

/// The `input` of the manifest rules for one manifest (docs/product.md §3).
pub fn manifest_input(m: &Manifest, environment: Option<&str>) -> Value {
    json!({
        "kind": m.kind.name(),
        "address": m.address().to_string(),
        "spec": &*m.spec,
        "source": {"file": m.file.display().to_string(), "line": m.pos.line},
        "environment": environment,
    })
}

/// What an evaluation found, and the failure that ended it (handed up unlocated: the caller
/// puts it at its place, `Failure::located`).
pub(super) type Found = (Vec<Diagnostic>, Option<Failure>);

/// The manifest rules over every manifest, in manifest order, on all cores (an engine each,
/// cloned from the one that has read the files). A rule that fails to evaluate is reported
/// once (the first in manifest order), and ends the evaluation.
pub(super) fn manifests(
    rules: &mut Loaded,
    manifests: &[Manifest],
    environment: Option<&str>,
) -> Found {
    use rayon::prelude::*;
    if !rules.packages.contains(MAIN) || manifests.is_empty() {
        return (Vec::new(), None);
    }
    // The first manifest on this engine compiles the policy once, before it is cloned.
    let (first, rest) = manifests.split_at(1);
    let files = &rules.files;
    let mut out = match on_manifests(&mut rules.engine, files, first, environment) {
        Ok(found) => found,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let size = rest.len().div_ceil(rayon::current_num_threads()).max(64);
    let work: Vec<(&[Manifest], regorus::Engine)> = rest
        .chunks(size)
        .map(|chunk| (chunk, rules.engine.clone()))
        .collect();
    let done: Vec<Result<Vec<Diagnostic>, Failure>> = work
        .into_par_iter()
        .map(|(chunk, mut engine)| on_manifests(&mut engine, files, chunk, environment))
        .collect();
    for found in done {
        match found {
            Ok(found) => out.extend(found),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// The manifest rules over some manifests, on one engine.
fn on_manifests(
    engine: &mut regorus::Engine,
    files: &[(std::path::PathBuf, String)],
    manifests: &[Manifest],
    environment: Option<&str>,
) -> Result<Vec<Diagnostic>, Failure> {
    let mut out = Vec::new();
    for m in manifests {
        let input = regorus::Value::from(manifest_input(m, environment));
        engine.set_input(input.clone());
        for (rule, severity) in RULES {
            let messages = query(engine, (files, &input), MAIN, rule)?;
            out.extend(messages.into_iter().map(|msg| Diagnostic {
                severity,
                file: m.file.clone(),
                pos: m.pos,
                problem: Problem::Policy {
                    address: Some(m.address().to_string()),
                    rule: format!("main.{rule}"),
                    message: msg.text,
                },
            }));
        }
    }
    Ok(out)
}

/// The plan rules over the JSON plan. A message naming a declared manifest's address is put
/// at that manifest; any other at `fallback` (`policy:` in `cfgctl.yaml`).
pub(super) fn plan(
    rules: &mut Loaded,
    plan: &Plan,
    environment: Option<&str>,
    manifests: &[Manifest],
    fallback: (&Path, Pos),
) -> Found {
    let mut out = Vec::new();
    if !rules.packages.contains(PLAN) {
        return (out, None);
    }
    let input = match plan_input(plan).and_then(|input| with_environment(input, environment)) {
        Ok(input) => input,
        Err(e) => {
            out.push(Diagnostic::error(
                fallback.0,
                fallback.1,
                Problem::PolicyInvalid(format!("the JSON plan could not be given to it: {e}")),
            ));
            return (out, None);
        }
    };
    rules.engine.set_input(input.clone());
    for (rule, severity) in RULES {
        let messages = match query(&mut rules.engine, (&rules.files, &input), PLAN, rule) {
            Ok(messages) => messages,
            Err(e) => return (out, Some(e)),
        };
        for msg in messages {
            let at = msg.address.as_deref().and_then(|a| {
                manifests
                    .iter()
                    .find(|m| m.address().to_string() == a)
                    .map(|m| (m.file.as_path(), m.pos))
            });
            let (file, pos) = at.unwrap_or(fallback);
            out.push(Diagnostic {
                severity,
                file: file.to_path_buf(),
                pos,
                problem: Problem::Policy {
                    address: msg.address,
                    rule: format!("cfgctl.plan.{rule}"),
                    message: msg.text,
                },
            });
        }
    }
    (out, None)
}

/// The plan rules' `input`: the JSON plan (`plan --format json`'s document) and `environment`
/// (the environment's name, or null; as a manifest rule's input has it: red team E14), written compact
/// (no indentation to write and read past: at 10,000 creates 2.4-2.5 s against 2.8-3.3 s
/// indented, two runs each; a `serde_json::Value` on the way took 3.3 s) and read by regorus.
fn plan_input(plan: &Plan) -> Result<regorus::Value, String> {
    let document = crate::plan::file::PlanFileWriter { plan, saved: false };
    let mut json = Vec::new();
    crate::render::write_json_document(&mut json, &document, false).map_err(|e| e.to_string())?;
    let text = std::str::from_utf8(&json).map_err(|e| e.to_string())?;
    regorus::Value::from_json_str(text).map_err(|e| e.to_string())
}

/// The plan rules' `input` with `environment` (the environment's name, or null).
fn with_environment(
    mut input: regorus::Value,
    environment: Option<&str>,
) -> Result<regorus::Value, String> {
    let name = environment.map_or(regorus::Value::Null, regorus::Value::from);
    input
        .as_object_mut()
        .map_err(|e| e.to_string())?
        .insert(regorus::Value::from("environment"), name);
    Ok(input)
}

/// The messages of the rule `package.rule` (none when it is undefined), in the set's order.
fn query(
    engine: &mut regorus::Engine,
    (files, input): (&[(std::path::PathBuf, String)], &regorus::Value),
    package: &str,
    rule: &str,
) -> Result<Vec<Message>, Failure> {
    let results = engine
        .eval_query(format!("{package}.{rule}"), false)
        .map_err(|e| {
            if super::budget::is_exhausted(&e) {
                Failure::Budget {
                    rule: rule.to_string(),
                    at: place(engine, files, input, package, rule),
                }
            } else {
                Failure::Error(e.to_string())
            }
        })?;
    let Some(value) = results
        .result
        .first()
        .and_then(|r| r.expressions.first())
        .map(|e| &e.value)
    else {
        return Ok(Vec::new());
    };
    let items = match serde_json::to_value(value).map_err(|e| Failure::Error(e.to_string()))? {
        Value::Array(items) => items,
        Value::Null | Value::Bool(false) => Vec::new(),
        one => vec![one],
    };
    Ok(items.into_iter().map(message).collect())
}

/// A message: a string, or an object with `msg` (and `address`); anything else as its JSON.
fn message(value: Value) -> Message {
    match value {
        Value::String(text) => Message {
            text,
            address: None,
        },
        Value::Object(map) if map.get("msg").is_some_and(Value::is_string) => Message {
            address: map
                .get("address")
                .and_then(Value::as_str)
                .map(str::to_string),
            text: map
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        },
        other => Message {
            text: other.to_string(),
            address: None,
        },
    }
}

/// Where the evaluation of the rule `rule` of `package` over `input` passed the budget: its
/// first definition in the first of `files` whose rules pass it on their own (each read into
/// an engine of its own; a file that needs another's rules fails otherwise there), else its
/// first definition in any file. Worked out only once the budget is passed.
fn place(
    engine: &mut regorus::Engine,
    files: &[(std::path::PathBuf, String)],
    input: &regorus::Value,
    package: &str,
    rule: &str,
) -> Option<(std::path::PathBuf, crate::util::yaml::Pos)> {
    let alone = files
        .iter()
        .filter(|(_, p)| p == package)
        .find_map(|(file, _)| {
            let mut one = super::load::engine().ok()?;
            super::load::add_file(&mut one, file).ok()?;
            one.set_input(input.clone());
            let e = one.eval_query(format!("{package}.{rule}"), false).err()?;
            super::budget::is_exhausted(&e)
                .then(|| rule_place(&mut one, package, rule))
                .flatten()
        });
    alone.or_else(|| rule_place(engine, package, rule))
}

/// Where the rule `rule` of `package` (`data.main`) is first defined (files in walk order), as the interpreter has
/// read its files: the place an evaluation that passed the budget is reported at.
fn rule_place(
    engine: &mut regorus::Engine,
    package: &str,
    rule: &str,
) -> Option<(std::path::PathBuf, crate::util::yaml::Pos)> {
    use regorus::unstable::{Rule, RuleHead};
    let package = package.strip_prefix("data.").unwrap_or(package);
    engine
        .get_modules()
        .iter()
        .filter(|m| m.package.refr.span().text() == package)
        .flat_map(|m| m.policy.iter())
        .filter_map(|r| match &**r {
            Rule::Spec {
                head: RuleHead::Compr { refr, .. } | RuleHead::Set { refr, .. },
                ..
            } if refr.span().text() == rule => {
                let span = refr.span();
                Some((
                    std::path::PathBuf::from(span.source.file()),
                    crate::util::yaml::Pos::new(span.line, span.col),
                ))
            }
            _ => None,
        })
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input as `plan --format json` writes it (indented), read.
    fn as_text_read(plan: &Plan) -> regorus::Value {
        let mut json = Vec::new();
        crate::render::write_json_plan(&mut json, plan, false).unwrap();
        regorus::Value::from_json_str(std::str::from_utf8(&json).unwrap()).unwrap()
    }

    #[test]
    fn the_plan_rules_see_the_json_plan_as_it_is_written() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart");
        let loaded = crate::manifest::load_dir(&dir).unwrap();
        assert_eq!(loaded.error_count(), 0, "{:?}", loaded.diagnostics);
        let opts = crate::plan::PlanOptions {
            target: "t \"quoted\" \u{e9}".into(),
            prune: true,
            only: vec![],
            references_declared: false,
        };
        let caps = crate::plan::Capabilities::assumed_full();
        // Creates (nothing on the target), then updates and deletes (every object changed, one
        // more object than declared).
        let mut current = crate::plan::Current::default();
        let mut plans = Vec::new();
        plans.push(
            crate::plan::plan(&loaded.manifests, &current, &caps, &loaded.settings, &opts).unwrap(),
        );
        for m in &loaded.manifests {
            current.known.insert(m.kind);
            let mut spec = (*m.spec).clone();
            if let Some(o) = spec.as_object_mut() {
                o.insert(
                    "description".into(),
                    json!("changed\n\t\"on the target\" 1.5e300"),
                );
            }
            current.insert(m.address(), &spec);
        }
        plans.push(
            crate::plan::plan(&loaded.manifests, &current, &caps, &loaded.settings, &opts).unwrap(),
        );
        assert!(plans.iter().all(|p| !p.actions.is_empty()));
        for plan in &plans {
            // The JSON plan as written, and the environment, as a manifest rule's input has it
            // (red team E14).
            for environment in [None, Some("prod")] {
                let mut expected = as_text_read(plan);
                let name = environment.map_or(regorus::Value::Null, regorus::Value::from);
                expected
                    .as_object_mut()
                    .unwrap()
                    .insert(regorus::Value::from("environment"), name);
                let input = with_environment(plan_input(plan).unwrap(), environment).unwrap();
                assert_eq!(input, expected);
                assert_eq!(
                    input["environment"],
                    environment.map_or(regorus::Value::Null, regorus::Value::from)
                );
            }
        }
    }
}
