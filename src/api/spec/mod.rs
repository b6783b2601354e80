//! The embedded API description (swagger 2.0) and the JSON Schemas derived from it.
//!
//! The project's copy of `config-api-v1.swagger.json` is compiled into the binary. From its
//! definitions this module derives (a) one strict JSON Schema per kind used to check a
//! manifest's `spec` (unknown fields, types, enums, read-only fields), and (b) the editor
//! schema of whole manifests printed by `cfgctl schema`. Schema checks run on the jsonschema
//! crate; this module only builds schemas and turns its errors into messages.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::api::registry::{Kind, Ops, Profile};

/// The API description as shipped: `spec/config-api-v1.swagger.json`, a copy of the whole
/// API's description (docs/product.md says where it comes from).
pub const SWAGGER_JSON: &str = crate::api::registry::EMBEDDED_DESCRIPTION;

/// The manifest envelope's `api_version`.
pub const API_VERSION: &str = "v1/config";

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

/// Targets' descriptions that added kinds (see [`Description::adopt`]).
static ADOPTED: std::sync::RwLock<Vec<&'static Description>> = std::sync::RwLock::new(Vec::new());

/// An API description: the embedded one (the default everywhere), or one read at run time
/// (`cfgctl serve --swagger FILE` serves another, say newer, API). Its checkers compile on
/// first use, per kind.
pub struct Description {
    /// The document; the embedded one is the registry's parse, shared, not a copy.
    doc: std::borrow::Cow<'static, Value>,
    checkers: [OnceLock<Option<jsonschema::Validator>>; crate::api::registry::MAX_KINDS],
    check_definitions: OnceLock<Map<String, Value>>,
}

/// Why a swagger file cannot serve as the API description.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a swagger 2.0 document with `definitions`")]
    NoDefinitions,
    #[error("no definition `{definition}` for {kind}")]
    MissingKind {
        kind: Kind,
        definition: &'static str,
    },
    #[error("the definition of {kind} does not make a valid schema (a `$ref` to nothing?)")]
    BadSchema { kind: Kind },
}

impl Description {
    fn new(doc: std::borrow::Cow<'static, Value>) -> Description {
        Description {
            doc,
            checkers: [const { OnceLock::new() }; crate::api::registry::MAX_KINDS],
            check_definitions: OnceLock::new(),
        }
    }

    /// Reads a swagger 2.0 document, registers the kinds it describes (a newer API's new
    /// ones included), and compiles each one's checker (a schema that cannot check is
    /// refused here, not on a write).
    pub fn from_json(text: &str) -> Result<Description, DescriptionError> {
        let desc = Description::from_value(serde_json::from_str(text)?)?;
        for kind in crate::api::registry::register(desc.doc()) {
            let def = kind.def();
            if !desc.definitions().contains_key(def.definition) {
                return Err(DescriptionError::MissingKind {
                    kind: def.kind,
                    definition: def.definition,
                });
            }
            if desc.checker(def.kind).is_none() {
                return Err(DescriptionError::BadSchema { kind: def.kind });
            }
        }
        Ok(desc)
    }

    /// A swagger 2.0 document with definitions (some kinds may be missing: a target's).
    pub fn from_value(doc: Value) -> Result<Description, DescriptionError> {
        if !doc.get("definitions").is_some_and(Value::is_object) {
            return Err(DescriptionError::NoDefinitions);
        }
        Ok(Description::new(std::borrow::Cow::Owned(doc)))
    }

    /// The description compiled into this cfgctl.
    pub fn embedded() -> &'static Description {
        Description::shared_embedded()
    }

    /// The description that defines `kind`: the embedded one, else the target's description
    /// that added the kind at run time ([`Description::adopt`]).
    pub fn for_kind(kind: Kind) -> &'static Description {
        let embedded = Description::embedded();
        if embedded.definition(kind).is_some() {
            return embedded;
        }
        let adopted = ADOPTED.read().unwrap_or_else(|e| e.into_inner());
        adopted
            .iter()
            .copied()
            .find(|d| d.definition(kind).is_some())
            .unwrap_or(embedded)
    }

    /// Keeps a target's description for the kinds it adds to the embedded ones (their specs
    /// are checked and compared under it). Kept for the process: a run reads few.
    pub fn adopt(doc: &Value) {
        let embedded = Description::embedded();
        // Held while the kinds are registered: a thread that meets a new kind (the manifests
        // load while the description is read) asks [`Description::for_kind`], which waits
        // for this lock, so it never sees the kind without the description defining it.
        let mut adopted = ADOPTED.write().unwrap_or_else(|e| e.into_inner());
        let adds = crate::api::registry::register(doc)
            .into_iter()
            .any(|k| embedded.definition(k).is_none());
        if !adds {
            return;
        }
        if adopted.iter().any(|d| d.doc() == doc) {
            return;
        }
        if let Ok(desc) = Description::from_value(doc.clone()) {
            adopted.push(Box::leak(Box::new(desc)));
        }
    }

    /// The embedded description, shared (its checkers compile once per process).
    pub fn shared_embedded() -> &'static std::sync::Arc<Description> {
        static EMBEDDED: OnceLock<std::sync::Arc<Description>> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            // The file is part of the binary and checked by a unit test; a parse failure here
            // is a build defect, not an input error.
            std::sync::Arc::new(Description::new(std::borrow::Cow::Borrowed(
                crate::api::registry::embedded_doc(),
            )))
        })
    }

    /// The whole swagger document.
    pub fn doc(&self) -> &Value {
        &self.doc
    }

    /// Its definitions by name.
    pub fn definitions(&self) -> &Map<String, Value> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        self.doc
            .get("definitions")
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    /// The swagger definition of a kind's object.
    pub fn definition(&self, kind: Kind) -> Option<&Value> {
        self.definitions().get(kind.def().definition)
    }

    /// Follows `$ref`s to the schema they name.
    pub fn resolve<'a>(&'a self, mut node: &'a Value) -> &'a Value {
        for _ in 0..16 {
            match canonical::schema_member(node, "$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/definitions/"))
                .and_then(|name| self.definitions().get(name))
            {
                Some(target) => node = target,
                None => break,
            }
        }
        node
    }

    /// The compiled checker of a kind, built on first use (a run that loads only some kinds
    /// compiles only theirs).
    fn checker(&self, kind: Kind) -> Option<&jsonschema::Validator> {
        self.checkers[kind.index()]
            .get_or_init(|| {
                let defs = self
                    .check_definitions
                    .get_or_init(|| convert_definitions(self.definitions(), Mode::Check));
                let needed = reachable_definitions(defs, kind.def().definition)
                    .unwrap_or_else(|| defs.clone());
                compile_checker(kind, needed)
            })
            .as_ref()
    }

    /// Checks a spec against its kind's definition; every problem with its JSON pointer,
    /// sorted by pointer.
    pub fn check_spec(&self, kind: Kind, spec: &Value) -> Vec<SchemaProblem> {
        let Some(validator) = self.checker(kind) else {
            return vec![SchemaProblem {
                pointer: String::new(),
                at_key: false,
                message: format!("no schema for {kind} in the API description"),
            }];
        };
        let mut problems: Vec<SchemaProblem> = Vec::new();
        for error in validator.iter_errors(spec) {
            let pointer = error.instance_path().as_str().to_string();
            problems.extend(describe(
                self,
                kind,
                &pointer,
                error.kind(),
                error.instance(),
            ));
        }
        problems.sort_by(|a, b| a.pointer.cmp(&b.pointer).then(a.message.cmp(&b.message)));
        problems.dedup();
        // An int64 given as a string of non-digits fails both the type and the pattern; one
        // message per node is enough.
        problems.dedup_by(|b, a| a.pointer == b.pointer && !a.at_key && !b.at_key);
        problems
    }

    /// [`canonical`] in this description.
    pub fn canonical(&self, kind: Kind, object: &Value) -> Value {
        match self.definition(kind) {
            Some(def) => canonical_value(self, def, object).unwrap_or_else(|| json!({})),
            None => object.clone(),
        }
    }

    /// This document restricted to the operations of a profile.
    pub fn for_profile(&self, profile: Profile) -> Value {
        restrict(self.doc.clone().into_owned(), profile)
    }
}

impl std::fmt::Debug for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Description")
            .field("definitions", &self.definitions().len())
            .finish_non_exhaustive()
    }
}

/// The parsed swagger document.
pub fn swagger() -> &'static Value {
    Description::embedded().doc()
}

fn definitions() -> &'static Map<String, Value> {
    Description::embedded().definitions()
}

/// The swagger definition of a kind's object (in the description that defines it).
pub fn definition(kind: Kind) -> Option<&'static Value> {
    Description::for_kind(kind).definition(kind)
}

/// The dotted field path's proto3 default, as the API omits it: an enum's first value, or
/// nothing.
pub fn enum_default(kind: Kind, dotted: &str) -> Option<&'static str> {
    let desc = Description::for_kind(kind);
    let mut node = desc.definition(kind)?;
    for segment in dotted.split('.') {
        node = desc.resolve(node).get("properties")?.get(segment)?;
    }
    desc.resolve(node)
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .and_then(Value::as_str)
}

/// The operations a swagger document describes, per kind (from its paths and methods); the
/// kinds it adds to this cfgctl's are registered first, so a newer target's kinds are
/// managed like any other.
pub fn described_operations(doc: &Value) -> BTreeMap<Kind, Ops> {
    Description::adopt(doc);
    operations_in(doc, |_, _| true)
}

/// BLAKE3 of the embedded description as `cfgctl serve` serves it by default: serde_json's
/// compact writing of [`swagger_for`]`(Profile::Full)`. A unit test holds it to that (and
/// says the new value when the embedded file changes).
const SERVED_EMBEDDED_BLAKE3: &str =
    "8f73b974b268ba6df3a683d6ae323eb8a8a64e2c91d653315c18a8ee849689f8";

/// Whether a target's swagger.json, by its BLAKE3, is byte for byte the embedded description
/// as served for the full API: then it describes exactly what [`served_embedded_operations`]
/// says and no field the embedded one lacks, and nothing of it needs reading.
pub fn is_served_embedded(hash: &blake3::Hash) -> bool {
    hash.to_hex().as_str() == SERVED_EMBEDDED_BLAKE3
}

/// [`described_operations`] of [`swagger_for`]`(Profile::Full)`, worked out from the embedded
/// description without restricting a copy of it (its kinds are this cfgctl's own).
pub fn served_embedded_operations() -> BTreeMap<Kind, Ops> {
    operations_in(Description::embedded().doc(), |kind, op| {
        kind.def().ops(Profile::Full).has(op)
    })
}

/// The operations of `doc`'s paths and methods that `keep` keeps, per kind (a kind with none
/// left out).
fn operations_in(
    doc: &Value,
    keep: impl Fn(Kind, crate::api::registry::Op) -> bool,
) -> BTreeMap<Kind, Ops> {
    let mut out: BTreeMap<Kind, Ops> = BTreeMap::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, methods) in paths {
        let Some(rest) = path.strip_prefix(crate::api::wire::API_PREFIX) else {
            continue;
        };
        let segments: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
        // A nested path (`services/{service_slug}/attributes`) is not a kind's.
        let (kind, has_slug) = match segments.as_slice() {
            [segment] => (crate::api::wire::kind_for_path(segment), false),
            [segment, slug] if slug.starts_with('{') => {
                (crate::api::wire::kind_for_path(segment), true)
            }
            _ => (None, false),
        };
        let (Some(kind), Some(methods)) = (kind, methods.as_object()) else {
            continue;
        };
        for method in methods.keys() {
            match crate::api::wire::route_op(kind.def(), method, has_slug) {
                Some(op) if keep(kind, op) => out.entry(kind).or_insert(Ops::NONE).set(op),
                _ => {}
            }
        }
    }
    out
}

/// The embedded swagger document restricted to the operations of a profile.
pub fn swagger_for(profile: Profile) -> Value {
    Description::embedded().for_profile(profile)
}

/// A swagger document restricted to the operations of a profile.
fn restrict(mut doc: Value, profile: Profile) -> Value {
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        paths.retain(|path, methods| {
            let rest = path
                .strip_prefix(crate::api::wire::API_PREFIX)
                .unwrap_or_default();
            let mut segments = rest.trim_start_matches('/').split('/');
            let Some(kind) = segments.next().and_then(crate::api::wire::kind_for_path) else {
                return false;
            };
            let has_slug = segments.next().is_some();
            let ops = kind.def().ops(profile);
            if let Some(methods) = methods.as_object_mut() {
                methods.retain(|method, _| {
                    crate::api::wire::route_op(kind.def(), method, has_slug)
                        .is_some_and(|op| ops.has(op))
                });
                !methods.is_empty()
            } else {
                false
            }
        });
    }
    doc
}

mod canonical;
mod check;
mod schema;
#[cfg(test)]
mod tests;

pub use canonical::*;
pub use check::*;
pub use schema::*;
