//! `pull --env NAME`: each pulled value written back where the environment's value was
//! written (docs/environments.md, "pull --env").
//!
//! The environment's manifests are its base manifests with its variables substituted and its
//! overlay merged, so the file a manifest was read from is not where every one of its values
//! lives. The spec the target asks for is worked out on the environment's manifest (as a
//! plain pull would), then split by field: each changed value goes to the file the load's
//! provenance names for it (the overlay document that set it, else the base document), into
//! that document as written (its `${var:…}` text and other fields kept); a value that came
//! from a variable is not written at all but refused, naming the place and the variable.
//! A value the manifest did not have goes to the base document.

use super::*;
use crate::config::environments::Environment;
use crate::manifest::FieldOrigin;

/// A value the target changed that came from a reference: `pull` never writes a literal in
/// its place (a `${var:…}` is in `cfgctl.yaml`, shared by the documents that use it; an
/// `${env:…}` or `${file:…}` is read elsewhere).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub address: Address,
    /// The field, dotted (`labels.team`).
    pub field: String,
    /// Where the reference is written, as the load shows the file.
    pub file: PathBuf,
    pub line: u32,
    /// The value as written: `${var:region}`, `${env:DESC}`, `${file:x.txt}`, `eu-${var:r}`.
    pub variable: String,
    /// Why it is not written: where the value comes from, or why its file is not.
    pub why: String,
}

impl Refused {
    /// `file:line`.
    pub fn place(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// One value to write into a document: the pointer inside its spec, the new value (`None`:
/// the target has none), and whether the document is an overlay's merge patch of a base
/// manifest (where a removal is written as `null`).
struct Change {
    pointer: String,
    value: Option<Value>,
    patch: bool,
    /// The value as loaded (a reference's value, for a document written back to its file).
    old: Option<Value>,
}

/// `spec` (as loaded) with its text escaped (`manifest::escape`), but the secret fields'
/// whole references, which the loader keeps as references.
fn escaped(kind: crate::api::registry::Kind, spec: &Value) -> Value {
    let kept: Vec<(String, Value)> = kind
        .def()
        .secrets_in(spec)
        .into_iter()
        .filter(|f| crate::api::registry::parse_reference(&f.value).is_some())
        .map(|f| (f.pointer, Value::String(f.value)))
        .collect();
    let mut out = spec.clone();
    crate::manifest::escape_strings(&mut out);
    for (pointer, value) in kept {
        if let Some(slot) = out.pointer_mut(&pointer) {
            *slot = value;
        }
    }
    out
}

/// Splits the pulls of `addresses` (updates) over the files their values were written in.
pub(super) fn pull_env(
    input: &PullInput,
    environment: PullEnv,
    addresses: Vec<Address>,
    out: &mut Pulled,
) -> Result<(), PullError> {
    let loaded = environment.loaded;
    let mut per_file: BTreeMap<PathBuf, BTreeMap<Address, Vec<Change>>> = BTreeMap::new();
    for address in addresses {
        let Some(m) = loaded.manifests.iter().find(|m| m.address() == address) else {
            continue;
        };
        let Some(current) = input.current.resources.get(&address) else {
            continue;
        };
        // Escaped as the state's manifest form is (`escaped`).
        let spec = &escaped(address.kind, &m.spec);
        let mut written = Map::new();
        written.insert("spec".into(), spec.clone());
        let pulled = pulled_envelope(
            &m.file,
            &address,
            &Value::Object(written),
            &current.value(),
            input.ignore,
        )?;
        let new_spec = pulled.get("spec").unwrap_or(&Value::Null);
        let mut changed = Vec::new();
        leaves(Some(spec), Some(new_spec), String::new(), &mut changed);
        for (pointer, value) in changed {
            let origin = loaded
                .provenance(&address, &pointer)
                .unwrap_or_else(|| FieldOrigin {
                    file: m.file.clone(),
                    line: m.pos.line,
                    from_var: None,
                });
            if let Some(variable) = origin.from_var {
                out.refused.push(Refused {
                    address: address.clone(),
                    field: crate::util::jsonpath::pointer_to_path(&pointer),
                    file: origin.file,
                    line: origin.line,
                    variable: format!("${{var:{variable}}}"),
                    why: "a variable of cfgctl.yaml".into(),
                });
                continue;
            }
            let patch = origin.file != m.file;
            per_file
                .entry(origin.file)
                .or_default()
                .entry(address.clone())
                .or_default()
                .push(Change {
                    old: spec.pointer(&pointer).cloned(),
                    pointer,
                    value,
                    patch,
                });
        }
    }
    for (file, changes) in per_file {
        let text = input.text_of(&file)?;
        let docs = locate(&file, text, is_json_file(&file))?;
        let mut wanted = Vec::new();
        for (address, changes) in &changes {
            // The document's slug may be written with variables: found by its slug as the
            // environment reads it, and read back by its slug as written.
            let doc = docs
                .iter()
                .find(|d| resolved_address(&d.value, environment.env).as_ref() == Some(address))
                .ok_or_else(|| PullError::DocumentNotFound {
                    file: file.clone(),
                    address: address.clone(),
                })?;
            let mut envelope = doc.value.clone();
            let written_spec = doc.value.get("spec").cloned().unwrap_or(Value::Null);
            let references = refs::reference_leaves(address.kind, &written_spec);
            if let Some(spec) = envelope.get_mut("spec") {
                for change in changes {
                    // A value written as `${env:…}`/`${file:…}` is never replaced by a literal.
                    let Some(r) = references.iter().find(|r| r.covers(&change.pointer)) else {
                        write_change(spec, change);
                        continue;
                    };
                    let at = refs::Pulling {
                        file: &file,
                        doc,
                        address,
                    };
                    let values = (change.old.as_ref(), change.value.as_ref());
                    match r.write_back(&at, &change.pointer, values, input)? {
                        Some(Ok(data)) => out.rewritten.push(data),
                        Some(Err(why)) => out.refused.push(r.refused_because(&at, why)),
                        None => out.refused.push(r.refused(&at)),
                    }
                }
            }
            if envelope != doc.value {
                let written = doc.address.clone().unwrap_or_else(|| address.clone());
                wanted.push((doc, written, envelope));
            }
        }
        // Every change went elsewhere (a document's own file) or was refused.
        if wanted.is_empty() {
            continue;
        }
        let new_text = rewrite_docs(&file, text, &docs, &wanted)?;
        out.rewritten.push(RewrittenFile {
            path: file,
            text: new_text,
            addresses: changes.into_keys().collect(),
        });
    }
    out.rewritten.sort_by(|a, b| a.path.cmp(&b.path));
    out.refused
        .sort_by(|a, b| (&a.address, &a.field).cmp(&(&b.address, &b.field)));
    Ok(())
}

/// The address a document declares in `env`: its slug with the environment's variables put
/// in (`$${` is a literal `${`).
fn resolved_address(envelope: &Value, env: &Environment) -> Option<Address> {
    let address = address_of(envelope)?;
    let Some(slug) = &address.slug else {
        return Some(address);
    };
    if !slug.contains("${") {
        return Some(address);
    }
    let mut out = String::new();
    let mut rest = slug.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some((name, after)) =
            tail.strip_prefix("${var:").and_then(|t| t.split_once('}'))
        {
            out.push_str(&env.vars.get(name)?.to_text());
            rest = after;
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Some(Address::new(address.kind, Some(out)))
}

/// The pointers where `before` and `after` differ, with the value after: objects are
/// compared member by member, anything else (lists included) as a whole.
fn leaves(
    before: Option<&Value>,
    after: Option<&Value>,
    at: String,
    out: &mut Vec<(String, Option<Value>)>,
) {
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            for k in keys(b, a) {
                let pointer = format!("{at}/{}", crate::util::jsonpath::escape_pointer(k));
                leaves(b.get(k), a.get(k), pointer, out);
            }
        }
        (b, a) if b != a => out.push((at, a.cloned())),
        _ => {}
    }
}

/// Writes one change into a document's spec as written: the members on the way are created
/// when missing; an embedded document written as a mapping stays a mapping.
fn write_change(spec: &mut Value, change: &Change) {
    let segments: Vec<String> = change
        .pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, path)) = segments.split_last() else {
        if let Some(v) = &change.value {
            *spec = v.clone();
        }
        return;
    };
    let mut at = spec;
    for segment in path {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(map) = at else { return };
        at = map.entry(segment.clone()).or_insert(Value::Null);
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    let Value::Object(map) = at else { return };
    match &change.value {
        Some(value) => {
            let value = match (map.get(last), value) {
                (Some(Value::Object(_)), Value::String(text)) => {
                    match serde_json::from_str::<Value>(text) {
                        Ok(doc @ Value::Object(_)) => doc,
                        _ => value.clone(),
                    }
                }
                _ => value.clone(),
            };
            map.insert(last.clone(), value);
        }
        // RFC 7386: `null` removes the base's value.
        None if change.patch => {
            map.insert(last.clone(), Value::Null);
        }
        None => {
            map.shift_remove(last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_descend_objects_only() {
        let mut out = Vec::new();
        let before = json!({"a": 1, "l": {"x": 1, "y": 2}, "t": [1]});
        let after = json!({"a": 1, "l": {"x": 3}, "t": [2], "n": true});
        leaves(Some(&before), Some(&after), String::new(), &mut out);
        assert_eq!(
            out,
            vec![
                ("/l/x".to_string(), Some(json!(3))),
                ("/l/y".to_string(), None),
                ("/t".to_string(), Some(json!([2]))),
                ("/n".to_string(), Some(json!(true))),
            ]
        );
    }

    #[test]
    fn a_slug_written_with_variables_is_read_as_the_environment_reads_it() {
        let env = Environment {
            name: "staging".into(),
            url: None,
            token_env: None,
            vars: [(
                "region".to_string(),
                crate::config::environments::Scalar::String("eu".into()),
            )]
            .into(),
            overlay: None,
            overlay_pos: crate::util::yaml::Pos::new(1, 1),
        };
        let team = |slug: &str| json!({"kind": "Team", "spec": {"slug": slug}});
        let address = |slug: &str| resolved_address(&team(slug), &env).map(|a| a.to_string());
        assert_eq!(address("ops-${var:region}").as_deref(), Some("Team/ops-eu"));
        assert_eq!(address("a$${b}-$x").as_deref(), Some("Team/a${b}-$x"));
        assert_eq!(address("${var:nope}"), None);
    }

    #[test]
    fn changes_keep_the_written_form() {
        let mut spec = json!({"slug": "${var:region}-a", "doc": {"k": 1}, "l": {"x": 1}});
        let change = |pointer: &str, value: Option<Value>, patch: bool| Change {
            pointer: pointer.into(),
            value,
            patch,
            old: None,
        };
        write_change(&mut spec, &change("/doc", Some(json!("{\"k\":2}")), false));
        write_change(&mut spec, &change("/l/x", None, false));
        write_change(&mut spec, &change("/m/n", Some(json!(5)), false));
        assert_eq!(
            spec,
            json!({"slug": "${var:region}-a", "doc": {"k": 2}, "l": {}, "m": {"n": 5}})
        );
        let mut patch = json!({"slug": "a", "l": {"x": 1}});
        write_change(&mut patch, &change("/l/x", None, true));
        assert_eq!(patch, json!({"slug": "a", "l": {"x": null}}));
    }
}
