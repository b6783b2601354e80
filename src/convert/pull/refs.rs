//! References in a pulled manifest (docs/pull.md, "References"): `pull` never replaces a
//! `${env:…}`, `${file:…}` or `${var:…}` with a literal. The spec is merged with each
//! reference's value as the load read it; then each reference whose value the target kept
//! stays as written, a whole `${file:NAME}` of an embedded-JSON field whose document changed
//! is written back into NAME (in NAME's own layout: the merge already edited only the changed
//! members of its text), and any other changed reference is refused by name and left as
//! written. A file that several references name is refused too: one edit cannot be meant for
//! all of them.

use super::*;

/// A string value of the spec as written that holds a reference: its JSON pointer inside the
/// spec and its text.
#[derive(Debug)]
pub(super) struct RefLeaf {
    pointer: String,
    text: String,
}

/// Every reference of the spec as written, but a secret field's whole reference (the plan
/// compares those as references already: `secrets::stand_in`).
pub(super) fn reference_leaves(kind: Kind, spec: &Value) -> Vec<RefLeaf> {
    let secrets: Vec<String> = kind
        .def()
        .secrets_in(spec)
        .into_iter()
        .filter(|f| crate::api::registry::parse_reference(&f.value).is_some())
        .map(|f| f.pointer)
        .collect();
    let mut out = Vec::new();
    walk(spec, &mut String::new(), &mut |pointer, text| {
        // Only what the loader reads as a reference: an escaped `$${` is text.
        let holds = crate::manifest::references(text)
            .iter()
            .any(|b| ["env:", "file:", "var:"].iter().any(|r| b.starts_with(r)));
        if holds && !secrets.iter().any(|p| p == pointer) {
            out.push(RefLeaf {
                pointer: pointer.to_string(),
                text: text.to_string(),
            });
        }
    });
    out
}

fn walk(value: &Value, pointer: &mut String, f: &mut dyn FnMut(&str, &str)) {
    let len = pointer.len();
    match value {
        Value::String(s) => f(pointer, s),
        Value::Object(map) => {
            for (k, v) in map {
                pointer.push('/');
                pointer.push_str(&crate::util::jsonpath::escape_pointer(k));
                walk(v, pointer, f);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointer.push('/');
                pointer.push_str(&i.to_string());
                walk(v, pointer, f);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// The value at `pointer` of the spec as loaded; a pointer into an embedded document the
/// manifest wrote as a mapping goes on inside the loaded document's text.
fn loaded_value(kind: Kind, loaded: &Value, pointer: &str) -> Option<Value> {
    if let Some(v) = loaded.pointer(pointer) {
        return Some(v.clone());
    }
    kind.def().embedded_json.iter().find_map(|e| {
        let rest = pointer.strip_prefix(&format!("/{}", e.field))?;
        let doc: Value = serde_json::from_str(loaded.get(e.field)?.as_str()?).ok()?;
        doc.pointer(rest).cloned()
    })
}

/// The spec as written with each reference's loaded value in its place, escaped as a
/// manifest writes text (`manifest::escape`), like every other value of the spec as written
/// and of the state's manifest form (`export::manifest_spec`).
pub(super) fn resolved_spec(
    kind: Kind,
    written: &Value,
    loaded: &Value,
    refs: &[RefLeaf],
) -> Value {
    let mut out = written.clone();
    for r in refs {
        if let (Some(mut value), Some(slot)) = (
            loaded_value(kind, loaded, &r.pointer),
            out.pointer_mut(&r.pointer),
        ) {
            crate::manifest::escape_strings(&mut value);
            *slot = value;
        }
    }
    out
}

/// What the references of one pulled document come to.
#[derive(Default)]
pub(super) struct Restored {
    /// Documents written back into the files their `${file:…}` names.
    pub files: Vec<RewrittenFile>,
    pub refused: Vec<Refused>,
}

/// One pulled document: its file, where it is, its address.
pub(super) struct Pulling<'a> {
    pub file: &'a Path,
    pub doc: &'a Located,
    pub address: &'a Address,
}

/// Puts every reference back in the pulled `spec` (see the module documentation); `resolved`
/// is the spec the merge started from.
pub(super) fn restore(
    at: &Pulling<'_>,
    spec: &mut Value,
    resolved: &Value,
    refs: &[RefLeaf],
    input: &PullInput,
) -> Result<Restored, PullError> {
    let mut out = Restored::default();
    for r in refs {
        let (before, after) = (resolved.pointer(&r.pointer), spec.pointer(&r.pointer));
        if before != after {
            match r.write_back(at, &r.pointer, (before, after), input)? {
                Some(Ok(file)) => out.files.push(file),
                Some(Err(why)) => out.refused.push(r.refused_because(at, why)),
                None => out.refused.push(r.refused(at)),
            }
        }
        set(spec, &r.pointer, Value::String(r.text.clone()));
    }
    Ok(out)
}

impl RefLeaf {
    /// A change at `pointer` would replace this reference (or a part of its value).
    pub(super) fn covers(&self, pointer: &str) -> bool {
        pointer == self.pointer || pointer.starts_with(&format!("{}/", self.pointer))
    }

    /// This reference, refused.
    pub(super) fn refused(&self, at: &Pulling<'_>) -> Refused {
        refused(at, self, why_refused(&self.text))
    }

    /// This reference, refused for `why`.
    pub(super) fn refused_because(&self, at: &Pulling<'_>, why: String) -> Refused {
        refused(at, self, why)
    }

    /// A change at `pointer` (its value before and after) of the whole embedded document
    /// this reference names as `${file:NAME}`: NAME's new text, or why it is not written;
    /// `None` when it is no such change.
    pub(super) fn write_back(
        &self,
        at: &Pulling<'_>,
        pointer: &str,
        (before, after): (Option<&Value>, Option<&Value>),
        input: &PullInput,
    ) -> Result<Option<Result<RewrittenFile, String>>, PullError> {
        let embedded = (at.address.kind.def().embedded_json)
            .iter()
            .any(|e| self.pointer == format!("/{}", e.field));
        let path = match crate::api::registry::parse_reference(&self.text) {
            Some(crate::api::registry::SecretRef::File(path))
                if embedded && pointer == self.pointer =>
            {
                path
            }
            _ => return Ok(None),
        };
        let (Some(Value::String(old)), Some(Value::String(new))) = (before, after) else {
            return Ok(None);
        };
        // The values are escaped as manifest text; the file is data, written as it reads.
        let (old, new) = (
            crate::manifest::unescape(old),
            crate::manifest::unescape(new),
        );
        write_back(at, path, &old, &new, input).map(Some)
    }
}

fn why_refused(text: &str) -> String {
    let refs = crate::manifest::references(text);
    if refs.iter().any(|r| r.starts_with("var:")) {
        "a variable of cfgctl.yaml".into()
    } else if refs.iter().any(|r| r.starts_with("env:")) {
        "an environment variable".into()
    } else {
        "a file's text".into()
    }
}

fn refused(at: &Pulling<'_>, r: &RefLeaf, why: String) -> Refused {
    let line = at
        .doc
        .spans
        .as_ref()
        .and_then(|s| s.nearest(&format!("/spec{}", r.pointer)))
        .map_or(0, |s| s.value.line);
    Refused {
        address: at.address.clone(),
        field: crate::util::jsonpath::pointer_to_path(&r.pointer),
        file: at.file.to_path_buf(),
        line,
        variable: r.text.clone(),
        why,
    }
}

/// The file a `${file:PATH}` of `manifest` names, as the load shows it.
pub fn named_file(manifest: &Path, path: &str) -> PathBuf {
    crate::util::file_ref::joined(manifest, path)
}

/// Every file a `${file:…}` of the manifest files names, as the load shows them (what the
/// command reads for [`PullInput::texts`] beside the manifests).
pub fn referenced_files(texts: &BTreeMap<PathBuf, String>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = texts
        .iter()
        .flat_map(|(file, text)| file_paths(text).map(|p| named_file(file, p)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The PATHs of the `${file:PATH}`s in a text.
fn file_paths(text: &str) -> impl Iterator<Item = &str> {
    crate::manifest::references(text)
        .into_iter()
        .filter_map(|r| r.strip_prefix("file:"))
        .filter(|path| !path.is_empty() && !path.contains('\n'))
}

/// The new text of the file `path` names: the document's new text with the file's final
/// line break. `Err`: refused, and why.
fn write_back(
    at: &Pulling<'_>,
    path: &str,
    old: &str,
    new: &str,
    input: &PullInput,
) -> Result<Result<RewrittenFile, String>, PullError> {
    let target = named_file(at.file, path);
    let mut places: Vec<String> = Vec::new();
    for (file, text) in input.texts {
        for p in file_paths(text) {
            if named_file(file, p) == target {
                places.push(file.display().to_string());
            }
        }
    }
    if places.len() > 1 {
        places.dedup();
        return Ok(Err(format!(
            "{} manifests reference this file ({}): one edit cannot be meant for all",
            places.len(),
            places.join(", ")
        )));
    }
    let text = input.text_of(&target)?;
    // The value is the file's text without its byte-order mark and final line break
    // (`file_ref::value_of`): both are kept as they were.
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text.as_str()),
    };
    let Some(ending) = text.strip_prefix(old) else {
        return Err(PullError::Unreadable {
            file: target,
            message: "changed since it was loaded".into(),
        });
    };
    Ok(Ok(RewrittenFile {
        path: target,
        text: format!("{bom}{new}{ending}"),
        addresses: vec![at.address.clone()],
    }))
}

/// Sets the value at `pointer`, creating the members on the way.
fn set(spec: &mut Value, pointer: &str, value: Value) {
    let mut at = spec;
    for segment in pointer.split('/').skip(1) {
        let key = segment.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Array(items) => match key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(item) => item,
                None => return,
            },
            other => {
                if !other.is_object() {
                    *other = Value::Object(Map::new());
                }
                let Value::Object(map) = other else { return };
                map.entry(key).or_insert(Value::Null)
            }
        };
    }
    *at = value;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_found_but_a_secret_fields_own() {
        let kind = Kind::named("Notifier");
        let spec = json!({"name": "${env:NAME}", "slack": {"api_url": "${env:URL}", "text": "a ${file:t.txt}"}, "x": ["${var:r}"]});
        let found: Vec<(String, String)> = reference_leaves(kind, &spec)
            .into_iter()
            .map(|r| (r.pointer, r.text))
            .collect();
        assert_eq!(
            found,
            vec![
                ("/name".to_string(), "${env:NAME}".to_string()),
                ("/slack/text".to_string(), "a ${file:t.txt}".to_string()),
                ("/x/0".to_string(), "${var:r}".to_string()),
            ]
        );
    }

    #[test]
    fn referenced_files_are_named_as_the_load_shows_them() {
        let texts: BTreeMap<PathBuf, String> = [
            (
                PathBuf::from("d/a/m.yaml"),
                "x: ${file:p.json}\ny: ${file:../b/q.json} ${file:}".to_string(),
            ),
            (
                PathBuf::from("d/c.yaml"),
                "x: ${file:./a/p.json}".to_string(),
            ),
        ]
        .into();
        assert_eq!(
            referenced_files(&texts),
            vec![PathBuf::from("d/a/p.json"), PathBuf::from("d/b/q.json")]
        );
    }

    #[test]
    fn set_creates_members_on_the_way() {
        let mut spec = json!({"a": [{"b": 1}]});
        set(&mut spec, "/a/0/b", json!("${env:B}"));
        set(&mut spec, "/c/d", json!("${env:D}"));
        assert_eq!(
            spec,
            json!({"a": [{"b": "${env:B}"}], "c": {"d": "${env:D}"}})
        );
    }
}
