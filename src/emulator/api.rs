//! The API's rules, over the store, with no HTTP: validation, references, conflicts,
//! timestamps, the rewrites a real tenant does, pagination and filters. Every rule is driven
//! by the kind registry and the swagger file; nothing here names a kind.

use serde_json::{json, Value};

use std::sync::Arc;

use super::store::{Store, StoreError, Stored};
use crate::api::registry::{Address, Kind};
use crate::api::semantics::Semantics;
use crate::api::spec::{self, Description};
use crate::api::wire::{self, ListQuery, Write};

pub use super::config::MAX_PAGE_SIZE;

/// An API failure, with the status it is answered with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("store failure")]
    Store(#[from] StoreError),
}

impl ApiError {
    pub fn status(&self) -> u16 {
        match self {
            ApiError::BadRequest(_) => 400,
            ApiError::NotFound(_) => 404,
            ApiError::Conflict(_) => 409,
            ApiError::Store(_) => 500,
        }
    }

    /// The gRPC code a gateway puts beside the message.
    pub fn code(&self) -> i32 {
        match self {
            ApiError::BadRequest(_) => 3,
            ApiError::NotFound(_) => 5,
            ApiError::Conflict(_) => 6,
            ApiError::Store(_) => 13,
        }
    }

    /// The message sent to the client: internal details stay in the server's log.
    pub fn client_message(&self) -> String {
        match self {
            ApiError::Store(_) => "internal error".to_string(),
            other => other.to_string(),
        }
    }
}

/// The current time as the API writes it (RFC 3339, UTC).
pub fn now() -> String {
    humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()
}

/// The emulated tenant.
pub struct Api {
    pub store: Store,
    /// Page size when the client states none.
    pub page_size: u64,
    /// The API description served: validation and the canonical form of answers.
    pub description: Arc<Description>,
    /// Its documented defaults and sets.
    pub semantics: Semantics,
    /// Fill documented defaults a write leaves out, as a real tenant does.
    pub server_defaults: bool,
    /// The largest page served.
    pub max_page_size: u64,
    /// Secrets answered `**REDACTED**` (`--redact-secrets off`: in clear, as older tenants).
    pub redact_secrets: bool,
}

fn describe(address: &Address) -> String {
    match &address.slug {
        Some(slug) => format!("{} \"{slug}\"", address.kind),
        None => address.kind.to_string(),
    }
}

fn not_found(kind: Kind, slug: Option<&str>) -> ApiError {
    ApiError::NotFound(format!(
        "{} not found",
        describe(&Address::new(kind, slug.map(str::to_string)))
    ))
}

/// A slug made from a name: lowercase letters, digits and dashes.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "resource".to_string()
    } else {
        out
    }
}

impl Api {
    /// A tenant over a store, serving a description.
    pub fn new(
        store: Store,
        page_size: u64,
        description: Arc<Description>,
        server_defaults: bool,
    ) -> Api {
        let semantics = Semantics::derive(&description);
        Api {
            store,
            page_size,
            max_page_size: MAX_PAGE_SIZE,
            description,
            semantics,
            server_defaults,
            redact_secrets: true,
        }
    }

    /// The largest page it serves (`page.max_size` beyond is cut to it), at most
    /// [`MAX_PAGE_SIZE`].
    #[must_use]
    pub fn with_max_page_size(mut self, max: u64) -> Api {
        self.max_page_size = max.clamp(1, MAX_PAGE_SIZE);
        self
    }

    /// Validation shared by create and update: the object against the swagger, the "required
    /// if" rules, embedded documents.
    fn validate(&self, kind: Kind, object: &Value) -> Result<(), ApiError> {
        let problems = self.description.check_spec(kind, object);
        if !problems.is_empty() {
            let messages: Vec<String> = problems.into_iter().map(|p| p.message).collect();
            return Err(ApiError::BadRequest(format!(
                "invalid {}: {}",
                kind.def().singular,
                messages.join("; ")
            )));
        }
        // proto3: an empty `name` is a missing one.
        if !kind.def().singleton
            && spec::has_field(kind, "name")
            && object.get("name").is_none_or(crate::api::registry::is_zero)
        {
            return Err(ApiError::BadRequest(format!(
                "invalid {}: `name` is required",
                kind.def().singular
            )));
        }
        for rule in kind.def().required {
            if !rule.satisfied_by(object) {
                return Err(ApiError::BadRequest(format!(
                    "invalid {}: {} is required",
                    kind.def().singular,
                    rule.describe()
                )));
            }
        }
        for embedded in kind.def().embedded_json {
            if let Some(text) = object.get(embedded.field).and_then(Value::as_str) {
                if text.is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(_)) => {}
                    _ => {
                        return Err(ApiError::BadRequest(format!(
                            "invalid {}: {} must hold a JSON object",
                            kind.def().singular,
                            embedded.field
                        )))
                    }
                }
            }
        }
        Ok(())
    }

    /// The resources the object references; a missing one is a 400.
    fn references(&self, kind: Kind, object: &Value) -> Result<Vec<Address>, ApiError> {
        let mut out = Vec::new();
        for r in kind.def().references_in(object) {
            if !self.store.exists(r.target, &r.slug)? {
                return Err(ApiError::BadRequest(format!(
                    "invalid {}: {} references {} \"{}\", which does not exist",
                    kind.def().singular,
                    r.path,
                    r.target,
                    r.slug
                )));
            }
            out.push(Address::new(r.target, Some(r.slug)));
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn check_unique(&self, kind: Kind, object: &Value, slug: Option<&str>) -> Result<(), ApiError> {
        for &field in kind.def().unique_fields {
            let Some(value) = object.get(field).and_then(Value::as_str) else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            if let Some(other) = self.store.find_by_field(kind, field, value, slug)? {
                return Err(ApiError::Conflict(format!(
                    "{field} \"{value}\" is already used by {} \"{other}\"",
                    kind
                )));
            }
        }
        Ok(())
    }

    /// Stores a validated object as new or as a replacement; the response body.
    fn store_object(
        &mut self,
        kind: Kind,
        slug: Option<&str>,
        mut object: Value,
        existing: Option<Stored>,
        refs: &[Address],
        now: &str,
    ) -> Result<Value, ApiError> {
        spec::strip_server_owned(kind, &mut object);
        let before = existing.as_ref().map(|e| &e.object);
        secrets::keep_stored(kind, &mut object, before);
        secrets::generate(kind, &mut object, before);
        if let Some(map) = object.as_object_mut() {
            if let Some(slug) = slug {
                map.insert("slug".into(), json!(slug));
            }
            let created = existing
                .as_ref()
                .and_then(|e| e.object.get("created_at"))
                .cloned()
                .unwrap_or_else(|| json!(now));
            map.insert("created_at".into(), created);
            map.insert("updated_at".into(), json!(now));
        }
        let id = match &existing {
            Some(e) => e.id,
            None => self.store.insert(kind, slug, &json!({}), refs)?,
        };
        rewrite::rewrite_embedded(
            kind,
            &mut object,
            existing.as_ref().map(|e| &e.object),
            id,
            now,
        );
        let semantics = self.semantics.kind(kind);
        if self.server_defaults {
            semantics.fill_defaults(&mut object);
        }
        let mut object = self.description.canonical(kind, &object);
        // Sets are kept in the server's own order.
        semantics.sort_sets(&mut object);
        self.store.replace(kind, slug, &object, refs)?;
        let created = existing.is_none();
        let object = secrets::answered(kind, object, self.redact_secrets, created);
        Ok(wire::one_response(kind, object))
    }

    fn parse_body(kind: Kind, write: Write, body: &Value) -> Result<wire::WriteRequest, ApiError> {
        wire::parse_write_body(kind, write, body).map_err(ApiError::BadRequest)
    }

    /// POST: create.
    pub fn create(&mut self, kind: Kind, body: &Value, now: &str) -> Result<Value, ApiError> {
        let req = Self::parse_body(kind, Write::Create, body)?;
        self.validate(kind, &req.object)?;
        let slug = if kind.def().singleton {
            if self.store.get(kind, None)?.is_some() {
                return Err(ApiError::Conflict(format!("{kind} already exist")));
            }
            None
        } else {
            match crate::api::registry::object_slug(kind, &req.object).as_deref() {
                Some(slug) if !slug.is_empty() && !wire::is_usable_segment(slug) => {
                    return Err(ApiError::BadRequest(wire::unusable_segment_reason(slug)));
                }
                Some(slug) if !slug.is_empty() => {
                    if self.store.exists(kind, slug)? {
                        return Err(ApiError::Conflict(format!(
                            "{} \"{slug}\" already exists",
                            kind
                        )));
                    }
                    Some(slug.to_string())
                }
                _ => Some(self.generate_slug(kind, &req.object)?),
            }
        };
        self.check_unique(kind, &req.object, None)?;
        let refs = self.references(kind, &req.object)?;
        if req.dry_run {
            return Ok(json!({}));
        }
        self.store_object(kind, slug.as_deref(), req.object, None, &refs, now)
    }

    fn generate_slug(&self, kind: Kind, object: &Value) -> Result<String, ApiError> {
        let base = slugify(object.get("name").and_then(Value::as_str).unwrap_or(""));
        let mut slug = base.clone();
        let mut n = 1;
        while self.store.exists(kind, &slug)? {
            n += 1;
            slug = format!("{base}-{n}");
        }
        Ok(slug)
    }

    /// GET one.
    pub fn read(&self, kind: Kind, slug: Option<&str>) -> Result<Value, ApiError> {
        match self.store.get(kind, slug)? {
            Some(s) => Ok(wire::one_response(kind, self.answered(kind, s.object))),
            None => Err(not_found(kind, slug)),
        }
    }

    /// PUT: update, or create with `create_if_missing`.
    pub fn update(
        &mut self,
        kind: Kind,
        slug: Option<&str>,
        body: &Value,
        now: &str,
    ) -> Result<Value, ApiError> {
        let req = Self::parse_body(kind, Write::Update, body)?;
        if let Some(path_slug) = slug.filter(|s| !wire::is_usable_segment(s)) {
            return Err(ApiError::BadRequest(wire::unusable_segment_reason(
                path_slug,
            )));
        }
        if let (Some(path_slug), Some(body_slug)) = (
            slug,
            crate::api::registry::object_slug(kind, &req.object).as_deref(),
        ) {
            if !body_slug.is_empty() && body_slug != path_slug {
                return Err(ApiError::BadRequest(format!(
                    "slug cannot be changed: the path names \"{path_slug}\", the body \"{body_slug}\""
                )));
            }
        }
        self.validate(kind, &req.object)?;
        let existing = self.store.get(kind, slug)?;
        if existing.is_none() && !req.create_if_missing {
            return Err(not_found(kind, slug));
        }
        self.check_unique(kind, &req.object, slug)?;
        let refs = self.references(kind, &req.object)?;
        if req.dry_run {
            return Ok(json!({}));
        }
        self.store_object(kind, slug, req.object, existing, &refs, now)
    }

    /// DELETE, with `force_delete` where the kind has it.
    pub fn delete(
        &mut self,
        kind: Kind,
        slug: Option<&str>,
        query: &ListQuery,
    ) -> Result<Value, ApiError> {
        let flag = |name: &str| -> Result<bool, ApiError> {
            match query
                .filters
                .get(name)
                .and_then(|v| v.last())
                .map(String::as_str)
            {
                None | Some("false") | Some("") => Ok(false),
                Some("true") => Ok(true),
                Some(other) => Err(ApiError::BadRequest(format!(
                    "{name} must be true or false, got \"{other}\""
                ))),
            }
        };
        let force = kind.def().force_delete && flag(wire::FORCE_DELETE)?;
        let dry_run = flag("dry_run")?;
        if self.store.get(kind, slug)?.is_none() {
            return Err(not_found(kind, slug));
        }
        let target = Address::new(kind, slug.map(str::to_string));
        let key = slug.unwrap_or("");
        let referrers = self.store.referrers(kind, key)?;
        let mut doomed = vec![target.clone()];
        if force {
            doomed.extend(referrers.iter().cloned());
            for victim in &referrers {
                let outside: Vec<String> = self
                    .store
                    .referrers(victim.kind, victim.slug.as_deref().unwrap_or(""))?
                    .into_iter()
                    .filter(|r| !doomed.contains(r))
                    .map(|r| r.to_string())
                    .collect();
                if !outside.is_empty() {
                    return Err(ApiError::BadRequest(format!(
                        "cannot force-delete {}: {victim}, which would be deleted with it, is still referenced by {}",
                        describe(&target),
                        outside.join(", ")
                    )));
                }
            }
        } else if !referrers.is_empty() {
            let names: Vec<String> = referrers.iter().map(|r| r.to_string()).collect();
            return Err(ApiError::BadRequest(format!(
                "{} is in use: referenced by {}",
                describe(&target),
                names.join(", ")
            )));
        }
        if dry_run {
            return Ok(json!({}));
        }
        self.store.delete_all(&doomed)?;
        let Some(response) = kind.def().delete_response else {
            return Ok(json!({}));
        };
        let changes: Vec<Value> = doomed
            .iter()
            .map(|a| {
                json!({
                    "resource": a.kind.def().resource_type.unwrap_or(""),
                    "slug": a.slug.clone().unwrap_or_default(),
                    "action": "DELETED"
                })
            })
            .collect();
        Ok(spec::canonical_definition(
            response,
            &json!({ "changes": changes }),
        ))
    }
}

mod list;
mod rewrite;
mod secrets;
mod token;
#[cfg(test)]
use list::AsStored;
use token::{decode_token, encode_token};

#[cfg(test)]
mod tests;
