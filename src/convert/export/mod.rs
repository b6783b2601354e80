//! `cfgctl export`: the current state as manifests that `plan` reads back with no changes.
//!
//! Pure: [`export_files`] turns the state into file paths and texts; the command writes them.
//! Each resource is its API object in the canonical form (no server-owned fields, no zero
//! values, fields in the API's order), in the vendor envelope, at
//! `<kind path>/<slug>.yaml` (`resource-pools.yaml` for the singleton). Embedded dashboard
//! JSON is written as YAML, without the members the server rewrites, so reviews diff it line
//! by line. Same state, same bytes.

pub mod write;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::api::registry::{Address, Kind};
use crate::config::pattern::Pattern;
use crate::plan::Current;

/// One file to write, relative to the export folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedFile {
    pub path: PathBuf,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {address} as YAML: {reason}")]
    Yaml { address: Address, reason: String },
    #[error("{first} and {second} would both be written to {}: nothing was written", path.display())]
    SamePath {
        first: Address,
        second: Address,
        path: PathBuf,
    },
}

/// Longest file name (bytes, before `.yaml`) an export writes: file systems allow 255.
const MAX_NAME: usize = 200;

/// A slug as a file name: letters, digits, `-`, `_` and `.` kept, the rest %-encoded; a name
/// too long for a file system is cut and made unique by a cryptographic hash of the whole slug
/// (128 bits of BLAKE3: no two slugs meet by chance or by design; the slug itself lives in the
/// file, so `plan` reads it back unchanged).
fn file_name(slug: &str) -> String {
    let full = encoded_name(slug);
    if full.len() <= MAX_NAME {
        return full;
    }
    let hash = blake3::hash(slug.as_bytes());
    let hex: String = hash.as_bytes()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // The encoded name is ASCII: any byte is a character boundary.
    format!("{}~{hex}", &full[..MAX_NAME - 33])
}

fn encoded_name(slug: &str) -> String {
    let mut out = String::new();
    for c in slug.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') || (c == '.' && !out.is_empty()) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Where a resource's manifest goes.
pub fn path_for(address: &Address) -> PathBuf {
    path_with(address, file_name)
}

fn path_with(address: &Address, name: fn(&str) -> String) -> PathBuf {
    let def = address.kind.def();
    match &address.slug {
        Some(slug) => PathBuf::from(def.path).join(format!("{}.yaml", name(slug))),
        None => PathBuf::from(format!("{}.yaml", def.path)),
    }
}

/// The spec of a manifest for a server object: its manifest form (one canonicalisation for
/// export and the planner, [`crate::api::spec::manifest_form`]).
///
/// A secret the target answered (`**REDACTED**`, or a value in clear) is written as a
/// reference, `${env:KIND_SLUG_FIELD}` (`secrets::references_for_export`), never as it came.
///
/// Every string of the object is written escaped (`crate::manifest::escape`: `${` as `$${`)
/// before the references cfgctl writes are put in: text from the tenant is never read as a
/// `${env:…}`, `${file:…}` or `${var:…}` of its own.
pub fn manifest_spec(kind: Kind, object: &Value) -> Value {
    written_spec(kind, crate::api::spec::manifest_form(kind, object), object)
}

/// `spec` (a manifest form of `object`) escaped, with references for its secrets.
fn written_spec(kind: Kind, mut spec: Value, object: &Value) -> Value {
    crate::manifest::escape_strings(&mut spec);
    let address = Address::new(kind, crate::api::registry::object_slug(kind, object));
    crate::plan::secrets::references_for_export(&address, &mut spec);
    spec
}

/// The environment variables the secrets of an export of `current` are written as, sorted.
pub fn secret_variables(current: &Current, only: &[Pattern]) -> Vec<String> {
    let mut vars: Vec<String> = current
        .resources
        .iter()
        .filter(|(a, _)| only.is_empty() || only.iter().any(|p| p.matches(a)))
        .flat_map(|(address, object)| {
            let mut spec = crate::api::spec::manifest_form(address.kind, &object.value());
            crate::manifest::escape_strings(&mut spec);
            crate::plan::secrets::references_for_export(address, &mut spec)
        })
        .collect();
    vars.sort();
    vars.dedup();
    vars
}

/// The files of an export of `current`, sorted by path. Two resources for one path (names
/// that meet however unlikely) are refused, naming both.
pub fn export_files(current: &Current, only: &[Pattern]) -> Result<Vec<ExportedFile>, ExportError> {
    files_with(current, only, file_name, Layout::default())
}

/// How an export lays its files out.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layout {
    /// `--dashboards-as-files`: each embedded document (`dashboard_json`) in its own JSON file
    /// beside its manifest, pretty-printed with 2 spaces in the order the API answered its
    /// members (without those the server rewrites), the manifest's field `${file:NAME.json}`.
    pub dashboards_as_files: bool,
}

/// [`export_files`] in `layout`.
pub fn export_files_in(
    current: &Current,
    only: &[Pattern],
    layout: Layout,
) -> Result<Vec<ExportedFile>, ExportError> {
    files_with(current, only, file_name, layout)
}

/// The embedded documents of `spec` moved to their own files beside `path` (the manifest's),
/// the caller puts its `${file:…}` reference in its place. A document's own file is data,
/// never substituted: its text is written as the tenant has it (not escaped).
fn documents_as_files(
    kind: Kind,
    spec: &mut Value,
    path: &std::path::Path,
) -> Vec<(&'static str, ExportedFile)> {
    let fields = kind.def().embedded_json;
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let mut out = Vec::new();
    for e in fields {
        let Some(slot) = spec.get_mut(e.field) else {
            continue;
        };
        if !slot.is_object() {
            continue;
        }
        let name = match fields.len() {
            1 => format!("{stem}.json"),
            _ => format!("{stem}.{}.json", e.field),
        };
        let mut text = serde_json::to_string_pretty(slot).unwrap_or_default();
        text.push('\n');
        // Its `${file:NAME}` is put in after the spec is escaped (`files_with`).
        *slot = Value::Null;
        out.push((
            e.field,
            ExportedFile {
                path: path.with_file_name(&name),
                text,
            },
        ));
    }
    out
}

fn files_with(
    current: &Current,
    only: &[Pattern],
    name: fn(&str) -> String,
    layout: Layout,
) -> Result<Vec<ExportedFile>, ExportError> {
    let mut files: BTreeMap<PathBuf, (&Address, String)> = BTreeMap::new();
    for (address, object) in &current.resources {
        if !only.is_empty() && !only.iter().any(|p| p.matches(address)) {
            continue;
        }
        let path = path_with(address, name);
        if let Some((first, _)) = files.get(&path) {
            return Err(ExportError::SamePath {
                first: (*first).clone(),
                second: address.clone(),
                path,
            });
        }
        let mut envelope = Map::new();
        envelope.insert("api_version".into(), json!(crate::api::spec::API_VERSION));
        envelope.insert("kind".into(), json!(address.kind.name()));
        let value = object.value();
        let mut form = crate::api::spec::manifest_form(address.kind, &value);
        let mut documents = Vec::new();
        if layout.dashboards_as_files {
            documents = documents_as_files(address.kind, &mut form, &path);
        }
        let mut spec = written_spec(address.kind, form, &value);
        {
            for (field, doc) in documents {
                // The reference cfgctl writes, put in after the escaping.
                let reference = format!(
                    "${{file:{}}}",
                    doc.path.file_name().unwrap_or_default().to_string_lossy()
                );
                spec[field] = Value::String(reference);
                if let Some((first, _)) = files.get(&doc.path) {
                    return Err(ExportError::SamePath {
                        first: (*first).clone(),
                        second: address.clone(),
                        path: doc.path,
                    });
                }
                files.insert(doc.path, (address, doc.text));
            }
        }
        envelope.insert("spec".into(), spec);
        let text =
            serde_saphyr::to_string(&Value::Object(envelope)).map_err(|e| ExportError::Yaml {
                address: address.clone(),
                reason: e.to_string(),
            })?;
        files.insert(path, (address, text));
    }
    Ok(files
        .into_iter()
        .map(|(path, (_, text))| ExportedFile { path, text })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_per_kind() {
        assert_eq!(
            path_for(&Address::new(
                Kind::named("ClassicDashboard"),
                Some("nodes".into())
            )),
            PathBuf::from("classic-dashboards/nodes.yaml")
        );
        assert_eq!(
            path_for(&Address::new(Kind::named("ResourcePools"), None)),
            PathBuf::from("resource-pools.yaml")
        );
        assert_eq!(file_name("a/b c"), "a%2Fb%20c");
        assert_eq!(file_name(".hidden"), "%2Ehidden");
        let long = file_name(&"é".repeat(300));
        assert_eq!(long.len(), MAX_NAME);
        assert_ne!(long, file_name(&"é".repeat(301)));
        assert!(
            long.ends_with("~8221aeba400087846cee3bf8dfa556e4"),
            "{long}"
        );
    }

    /// Issue 3: two slugs whose names meet (here a name function that cuts every slug to one
    /// letter stands in for a hash collision) are refused before anything is written, naming
    /// both resources and the file.
    #[test]
    fn two_resources_for_one_file_are_refused() {
        let mut current = Current::default();
        for slug in ["alpha", "apple", "beta"] {
            let obj = json!({"slug": slug, "name": slug});
            current.insert(Address::new(Kind::named("Team"), Some(slug.into())), &obj);
        }
        fn first_letter(slug: &str) -> String {
            slug[..1].to_string()
        }
        let e = files_with(&current, &[], first_letter, Layout::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Team/alpha and Team/apple would both be written to teams/a.yaml: nothing was written"
        );
        assert_eq!(export_files(&current, &[]).unwrap().len(), 3);
    }

    #[test]
    fn specs_drop_what_the_server_owns_and_rewrites() {
        let served = json!({
            "slug": "d", "name": "D", "created_at": "x", "updated_at": "y",
            "dashboard_json": "{\"id\":7,\"title\":\"T\",\"version\":3}",
            "bucket_slug": "b"
        });
        let spec = manifest_spec(Kind::named("ClassicDashboard"), &served);
        assert_eq!(
            spec,
            json!({"slug": "d", "name": "D", "bucket_slug": "b", "dashboard_json": {"title": "T"}})
        );
    }

    #[test]
    fn yaml_round_trips_tricky_scalars() {
        let mut current = Current::default();
        let obj = json!({"slug": "b", "name": "yes", "description": "1.0\nnull: ~", "labels": {"on": "off", "n": "123"}});
        current.insert(Address::new(Kind::named("Bucket"), Some("b".into())), &obj);
        let files = export_files(&current, &[]).unwrap();
        let docs = crate::util::yaml::parse_documents(&files[0].text).unwrap();
        assert_eq!(docs[0].value["spec"], obj);
    }

    /// Every string the serialiser writes reads back as that string in cfgctl and in another
    /// YAML 1.2 reader (ruamel.yaml): numbers with leading zeros or odd prefixes, YAML 1.1
    /// booleans, separators and control characters.
    #[test]
    fn written_strings_read_back_the_same_in_another_yaml_reader() {
        let strings = [
            "060",
            "-060",
            "+60",
            "0X1F",
            "0O17",
            "0o17",
            "0x1f",
            "0b11",
            "1_000",
            ".1e3",
            "1e3",
            "1:30",
            "yes",
            "no",
            "on",
            "y",
            "~",
            "null",
            "NULL",
            "true",
            "2024-01-01",
            ".inf",
            "nan",
            "=",
            "<<",
            "- a",
            "a: b",
            "#c",
            "  lead",
            "trail ",
            "",
            "é",
            "x\u{85}y",
            "a\u{2028}b\u{2029}",
            "d\u{7f}\u{9f}",
            "multi\nline\n",
            "m\u{85}\nl\n",
            "tab\there",
            "\u{feff}bom",
        ];
        let values: Vec<Value> = strings.iter().map(|s| json!({"v": s})).collect();
        let texts: Vec<String> = values
            .iter()
            .map(|v| serde_saphyr::to_string(v).unwrap())
            .collect();
        let theirs = crate::util::yaml::yaml12::ruamel(&texts);
        for ((text, value), theirs) in texts.iter().zip(&values).zip(theirs) {
            let ours = &crate::util::yaml::parse_documents(text).unwrap()[0].value;
            assert_eq!(ours, value, "cfgctl reads {text:?}");
            assert_eq!(
                theirs,
                Ok(vec![value.clone()]),
                "ruamel.yaml reads {text:?}"
            );
        }
    }
}
