//! GET of a collection: one page of a kind's resources, filtered, in slug order. An object
//! nothing of which changes on the way out is answered as the text the store holds.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::Value;

use super::{decode_token, encode_token, Api, ApiError};
use crate::api::registry::Kind;
use crate::api::spec;
use crate::api::wire::{self, ListQuery, COMMON_FILTERS};
use crate::emulator::store::{Store, StoreError};
use crate::util::jsonpath::get_path;

/// Whether a list answers a stored object's text as it is (see [`Api::list`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AsStored {
    /// Where a list answers the object unchanged (no filter, no omitted field, no secret).
    WhereAnswered,
    /// Never: every object parsed and written again.
    #[cfg_attr(not(test), allow(dead_code))]
    Never,
}

impl Api {
    /// GET the collection: one page, filters ANDed, values ORed, in slug order.
    pub fn list(&self, kind: Kind, raw_query: &str) -> Result<wire::ListPage, ApiError> {
        self.list_as(kind, raw_query, AsStored::WhereAnswered)
    }

    /// [`Api::list`], answering an object as it is stored where nothing of it changes (the
    /// fast way), or always parsed and written again (the slow way: its oracle).
    pub(super) fn list_as(
        &self,
        kind: Kind,
        raw_query: &str,
        as_stored: AsStored,
    ) -> Result<wire::ListPage, ApiError> {
        let def = kind.def();
        let mut query = ListQuery::parse(raw_query).map_err(ApiError::BadRequest)?;
        for name in query.filters.keys() {
            let known = COMMON_FILTERS.contains(&name.as_str())
                || def.list_filters.iter().any(|f| f.param == name);
            if !known {
                return Err(ApiError::BadRequest(format!(
                    "unknown query parameter \"{name}\" for {}",
                    wire::operation_id(kind, crate::api::registry::Op::List)
                )));
            }
        }
        // A token is bound to the kind as well as to the filters: another list refuses it.
        let fingerprint = format!("{}?{}", def.path, query.filter_fingerprint());
        let after = match query.token.as_deref().filter(|t| !t.is_empty()) {
            None => String::new(),
            Some(token) => {
                let (after, bound) = decode_token(token)
                    .ok_or_else(|| ApiError::BadRequest("invalid page.token".into()))?;
                if bound != fingerprint {
                    return Err(ApiError::BadRequest(
                        "page.token was issued for another list or other filters: kind and filters must be identical on every page; restart from the first page".into(),
                    ));
                }
                after
            }
        };
        let include_json = match query.filters.remove(wire::INCLUDE_DASHBOARD_JSON) {
            None => false,
            Some(v) => match v.last().map(String::as_str) {
                Some("true") => true,
                Some("false") | Some("") | None => false,
                Some(other) => {
                    return Err(ApiError::BadRequest(format!(
                        "include_dashboard_json must be true or false, got \"{other}\""
                    )))
                }
            },
        };
        let size = query
            .max_size
            .filter(|&n| n > 0)
            .unwrap_or(self.page_size)
            .clamp(1, self.max_page_size.max(1));
        let limit = usize::try_from(size).unwrap_or(usize::MAX);
        // An object is answered as it is stored unless a filter, an omitted field or a
        // secret needs its value: its text, not parsed and written again.
        let verbatim = as_stored == AsStored::WhereAnswered
            && query.filters.is_empty()
            && def.secrets.is_empty()
            && (include_json || !def.embedded_json.iter().any(|e| e.omitted_in_lists));
        let mut items = Vec::new();
        let mut last = String::new();
        let mut more = false;
        self.store.scan(kind, &after, |slug, body| {
            let item = match verbatim {
                true => RawValue::from_string(body).map_err(|source| StoreError::Corrupt {
                    kind,
                    slug: slug.to_string(),
                    source,
                })?,
                false => match self.listed(kind, slug, &body, &query.filters, include_json)? {
                    Some(item) => item,
                    None => return Ok(true),
                },
            };
            if items.len() == limit {
                more = true;
                return Ok(false);
            }
            items.push(item);
            slug.clone_into(&mut last);
            Ok(true)
        })?;
        let next = match more {
            true => encode_token(&last, &fingerprint),
            false => String::new(),
        };
        Ok(wire::ListPage::new(def, items, next))
    }

    /// A stored object as a list answers it (`None` when a filter leaves it out): parsed,
    /// without the fields lists omit, its secrets answered as reads answer them.
    fn listed(
        &self,
        kind: Kind,
        slug: &str,
        body: &str,
        filters: &BTreeMap<String, Vec<String>>,
        include_json: bool,
    ) -> Result<Option<Box<RawValue>>, StoreError> {
        let mut object = Store::parse(kind, slug, body)?;
        if !self.matches(kind, &object, filters)? {
            return Ok(None);
        }
        if !include_json {
            for e in kind
                .def()
                .embedded_json
                .iter()
                .filter(|e| e.omitted_in_lists)
            {
                if let Some(map) = object.as_object_mut() {
                    map.shift_remove(e.field);
                }
            }
        }
        let object = self.answered(kind, object);
        serde_json::value::to_raw_value(&object)
            .map(Some)
            .map_err(|source| StoreError::Corrupt {
                kind,
                slug: slug.to_string(),
                source,
            })
    }

    fn matches(
        &self,
        kind: Kind,
        object: &Value,
        filters: &BTreeMap<String, Vec<String>>,
    ) -> Result<bool, StoreError> {
        for (param, values) in filters {
            let field = match param.as_str() {
                "slugs" => "slug",
                "names" => "name",
                other => match kind.def().list_filters.iter().find(|f| f.param == other) {
                    Some(f) => f.field,
                    None => continue,
                },
            };
            let actual = self.field_value(kind, object, field)?;
            if !values.iter().any(|v| Some(v.as_str()) == actual.as_deref()) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A field's value for filtering: dotted paths, `a->b` for a field of the referenced
    /// resource, and the enum default for an omitted enum.
    fn field_value(
        &self,
        kind: Kind,
        object: &Value,
        field: &str,
    ) -> Result<Option<String>, StoreError> {
        if let Some((local, remote)) = field.split_once("->") {
            let Some(slug) = get_path(object, local).and_then(Value::as_str) else {
                return Ok(None);
            };
            let Some(target) = kind
                .def()
                .references
                .iter()
                .find(|r| r.path == local)
                .map(|r| r.target)
            else {
                return Ok(None);
            };
            let Some(stored) = self.store.get(target, Some(slug))? else {
                return Ok(None);
            };
            return Ok(get_path(&stored.object, remote)
                .and_then(Value::as_str)
                .map(str::to_string));
        }
        Ok(match get_path(object, field) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => spec::enum_default(kind, field).map(str::to_string),
            Some(other) => Some(other.to_string()),
        })
    }
}
