//! The wire format of the Config API v1, shared by the client and the emulator: paths, the
//! token header, request and response wrappers, the error body, and list queries.
//!
//! Architecture invariant: both sides go through these functions (paths, queries, the server's
//! reader of write bodies, the client's reader of pages), and the client's body writer
//! (`client::body`) is held to the plain builders kept here for tests, so the emulator cannot
//! drift from what the client sends. Everything here is pure and unit-tested.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
#[cfg(test)]
use serde_json::json;
use serde_json::{Map, Value};

use crate::api::registry::{Kind, KindDef, Op};

mod documents;
mod page;
pub use documents::{documents, Document};
pub use page::{page_shape, split_list_page, split_list_page_items, trailing_next_token, Item};

/// Prefix of every API path.
pub const API_PREFIX: &str = "/api/v1/config";
/// Where a target describes itself.
pub const SWAGGER_PATH: &str = "/api/v1/config/swagger.json";
/// The header that carries the API token.
pub const TOKEN_HEADER: &str = "API-Token";

/// Query parameter of the page size preference.
pub const PAGE_MAX_SIZE: &str = "page.max_size";
/// Query parameter of the page token.
pub const PAGE_TOKEN: &str = "page.token";
/// The filters every list accepts.
pub const COMMON_FILTERS: [&str; 2] = ["slugs", "names"];

/// The error body of every non-2xx response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

/// The `page` object of a list response.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageResult {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub next_token: String,
}

/// `/api/v1/config/buckets`.
pub fn collection_path(kind: Kind) -> String {
    format!("{API_PREFIX}/{}", kind.def().path)
}

/// `/api/v1/config/buckets/{slug}`, the slug percent-encoded; the singleton's path has no
/// slug.
pub fn item_path(kind: Kind, slug: Option<&str>) -> String {
    match slug {
        Some(slug) if !kind.def().singleton => {
            format!("{}/{}", collection_path(kind), encode_segment(slug))
        }
        _ => collection_path(kind),
    }
}

/// Whether a slug can be one URL path segment: not empty, not `.` or `..` (which a URL
/// resolves to the collection or the API root, whatever their encoding).
pub fn is_usable_segment(slug: &str) -> bool {
    !matches!(slug, "" | "." | "..")
}

/// Why a slug cannot be used, as one sentence (for every side's error message).
pub fn unusable_segment_reason(slug: &str) -> String {
    // `{:?}` quotes the slug and escapes control characters: the message is inert as it is.
    format!("the slug {slug:?} cannot be used as a URL path segment (a slug must not be empty, `.` or `..`)")
}

/// Percent-encodes a path segment (RFC 3986 unreserved characters pass).
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The kind served at a path segment (`buckets` → Bucket).
pub fn kind_for_path(segment: &str) -> Option<Kind> {
    crate::api::registry::kinds()
        .into_iter()
        .find(|d| d.path == segment)
        .map(|d| d.kind)
}

/// The operation a method names at a kind's collection path (`has_slug` false) or item
/// path. The singleton lives at its collection path and has no list.
pub fn route_op(def: &KindDef, method: &str, has_slug: bool) -> Option<Op> {
    crate::api::registry::route(def.singleton, method, has_slug)
}

/// The API's name of an operation (`CreateBucket`, `ListBuckets`, `ReadResourcePools`).
pub fn operation_id(kind: Kind, op: Op) -> String {
    let verb = match op {
        Op::Create => "Create",
        Op::Read => "Read",
        Op::Update => "Update",
        Op::Delete => "Delete",
        Op::List => "List",
    };
    if op == Op::List {
        if let Some(id) = kind.def().list_operation {
            return id.to_string();
        }
        // The plural of the kind name, as the API spells it.
        let name = kind.name();
        let plural = match name.strip_suffix('y') {
            Some(stem) => format!("{stem}ies"),
            None => format!("{name}s"),
        };
        format!("{verb}{plural}")
    } else {
        format!("{verb}{}", kind.name())
    }
}

/// Whether a write takes effect or is only validated by the server (`dry_run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commit {
    Apply,
    DryRun,
}

/// What an update does when the resource does not exist (`create_if_missing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfMissing {
    Fail,
    Create,
}

/// Whether a delete also takes what references the resource (`force_delete`, for the kinds
/// whose registry row says their delete can cascade).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cascade {
    No,
    Force,
}

/// The delete query parameter of a cascading delete.
pub const FORCE_DELETE: &str = "force_delete";

/// The list query parameter that asks for embedded documents in list results.
pub const INCLUDE_DASHBOARD_JSON: &str = "include_dashboard_json";

/// The query of a delete: `force_delete=true` only for a cascade of a kind that has one.
pub fn delete_query(kind: Kind, cascade: Cascade) -> String {
    if cascade == Cascade::Force && kind.def().force_delete {
        format!("{FORCE_DELETE}=true")
    } else {
        String::new()
    }
}

/// Body of a create: `{"bucket": {...}, "dry_run": false}`, built as a `Value`: the oracle of
/// `client::body`, which writes the same bytes from the borrowed object (the integration tests
/// have their own copy in `tests/integration/support/wire.rs`).
#[cfg(test)]
pub(crate) fn create_body(kind: Kind, object: &Value, commit: Commit) -> Value {
    let mut body = Map::new();
    body.insert(kind.def().singular.to_string(), object.clone());
    if commit == Commit::DryRun {
        body.insert("dry_run".into(), json!(true));
    }
    Value::Object(body)
}

/// Body of an update: `{"bucket": {...}, "create_if_missing": false, "dry_run": false}`, built
/// as a `Value` (the oracle of `client::body`, as [`create_body`]).
#[cfg(test)]
pub(crate) fn update_body(
    kind: Kind,
    object: &Value,
    if_missing: IfMissing,
    commit: Commit,
) -> Value {
    let mut body = Map::new();
    body.insert(kind.def().singular.to_string(), object.clone());
    if if_missing == IfMissing::Create {
        body.insert("create_if_missing".into(), json!(true));
    }
    if commit == Commit::DryRun {
        body.insert("dry_run".into(), json!(true));
    }
    Value::Object(body)
}

/// A create or update request as the server reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteRequest {
    pub object: Value,
    pub dry_run: bool,
    pub create_if_missing: bool,
}

/// Which write a body is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    Create,
    Update,
}

/// Reads a create or update body: exactly the wrapper key and the options of that operation.
pub fn parse_write_body(kind: Kind, write: Write, body: &Value) -> Result<WriteRequest, String> {
    let def = kind.def();
    let Some(map) = body.as_object() else {
        return Err("request body must be a JSON object".into());
    };
    let mut request = WriteRequest {
        object: Value::Null,
        dry_run: false,
        create_if_missing: false,
    };
    for (key, value) in map {
        match key.as_str() {
            k if k == def.singular => request.object = value.clone(),
            "dry_run" => request.dry_run = flag(key, value)?,
            "create_if_missing" if write == Write::Update => {
                request.create_if_missing = flag(key, value)?
            }
            other => return Err(format!("unknown field \"{other}\" in request body")),
        }
    }
    match &request.object {
        Value::Object(_) => Ok(request),
        Value::Null => Err(format!("request body is missing \"{}\"", def.singular)),
        _ => Err(format!("\"{}\" must be a JSON object", def.singular)),
    }
}

fn flag(key: &str, value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        _ => Err(format!("\"{key}\" must be a boolean")),
    }
}

/// A read, create or update response: `{"bucket": {...}}`.
pub fn one_response(kind: Kind, object: Value) -> Value {
    let mut body = Map::new();
    body.insert(kind.def().singular.to_string(), object);
    Value::Object(body)
}

/// The object of a read, create or update response (absent for a dry run).
pub fn parse_one_response(kind: Kind, body: &Value) -> Option<Value> {
    body.get(kind.def().singular)
        .filter(|v| v.is_object())
        .cloned()
}

/// A list response: `{"buckets": [...], "page": {"next_token": "..."}}`. Its items are JSON
/// texts written as they are (the emulator answers a stored object without parsing it again),
/// so the page is written, not built as one value.
#[derive(Debug)]
pub struct ListPage {
    key: &'static str,
    items: Vec<Box<serde_json::value::RawValue>>,
    next_token: String,
}

impl ListPage {
    /// The page of a kind with these items (each one JSON text) and next page token.
    pub fn new(
        def: &KindDef,
        items: Vec<Box<serde_json::value::RawValue>>,
        next_token: String,
    ) -> ListPage {
        ListPage {
            key: def.plural.unwrap_or(def.singular),
            items,
            next_token,
        }
    }

    /// The length of the page's JSON text, to within a few bytes: its items' texts and the
    /// punctuation around them.
    pub fn len_hint(&self) -> usize {
        let items: usize = self.items.iter().map(|i| i.get().len() + 1).sum();
        items + self.key.len() + self.next_token.len() + 64
    }
}

impl Serialize for ListPage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry(self.key, &self.items)?;
        let page = PageResult {
            next_token: self.next_token.clone(),
        };
        map.serialize_entry("page", &page)?;
        map.end()
    }
}

/// The items and next page token of a list response, parsed whole. A missing plural key is an
/// empty page (proto3 omits empty lists). For tests: the client reads a page with
/// [`split_list_page`], without building it.
#[cfg(test)]
pub(crate) fn parse_list_response(
    kind: Kind,
    body: &Value,
) -> Result<(Vec<Value>, String), String> {
    let def = kind.def();
    let key = def.plural.unwrap_or(def.singular);
    let items = match body.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(format!("\"{key}\" in the list response is not an array")),
    };
    let next = body
        .get("page")
        .and_then(|p| p.get("next_token"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok((items, next))
}

/// The parameters of one list request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Page size preference; 0 or absent lets the server choose.
    pub max_size: Option<u64>,
    /// Token of the page to fetch; empty for the first.
    pub token: Option<String>,
    /// Filters by parameter name, each with the values it accepts (ORed).
    pub filters: BTreeMap<String, Vec<String>>,
}

impl ListQuery {
    /// The query string (without `?`), filters in name order, repeated parameters repeated.
    pub fn to_query_string(&self) -> String {
        let mut ser = form_urlencoded::Serializer::new(String::new());
        if let Some(n) = self.max_size {
            ser.append_pair(PAGE_MAX_SIZE, &n.to_string());
        }
        if let Some(t) = self.token.as_deref().filter(|t| !t.is_empty()) {
            ser.append_pair(PAGE_TOKEN, t);
        }
        for (name, values) in &self.filters {
            for v in values {
                ser.append_pair(name, v);
            }
        }
        ser.finish()
    }

    /// Reads a query string. Unknown parameters are kept as filters for the caller to refuse.
    pub fn parse(query: &str) -> Result<ListQuery, String> {
        let mut q = ListQuery::default();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            match k.as_ref() {
                PAGE_MAX_SIZE => {
                    q.max_size = Some(v.parse().map_err(|_| {
                        format!("{PAGE_MAX_SIZE} must be a non-negative integer, got {v:?}")
                    })?)
                }
                PAGE_TOKEN => q.token = Some(v.into_owned()),
                _ => q
                    .filters
                    .entry(k.into_owned())
                    .or_default()
                    .push(v.into_owned()),
            }
        }
        Ok(q)
    }

    /// The filters as one canonical string (sorted names, sorted values): what a page token
    /// is bound to.
    pub fn filter_fingerprint(&self) -> String {
        let mut parts = Vec::new();
        for (name, values) in &self.filters {
            let mut values = values.clone();
            values.sort();
            parts.push(format!("{name}={}", values.join(",")));
        }
        parts.join("&")
    }
}

/// Whether a status is worth retrying (throttled or a transient server failure).
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pages_length_hint_holds_its_text() {
        let item = |t: &str| serde_json::value::RawValue::from_string(t.to_string()).unwrap();
        for (items, next) in [
            (vec![], ""),
            (vec![item(r#"{"slug":"a"}"#)], "tok"),
            (vec![item(r#"{"slug":"a","n":"\u00e9"}"#), item("{}")], ""),
        ] {
            let page = ListPage::new(Kind::named("Bucket").def(), items, next.to_string());
            let text = serde_json::to_vec(&page).unwrap();
            assert!(
                page.len_hint() >= text.len(),
                "{}",
                String::from_utf8_lossy(&text)
            );
            assert!(page.len_hint() <= text.len() + 64);
        }
    }

    #[test]
    fn unusable_segments() {
        for bad in ["", ".", ".."] {
            assert!(!is_usable_segment(bad), "{bad:?}");
        }
        for good in ["...", ".a", "a.", "a/b", "%2e"] {
            assert!(is_usable_segment(good), "{good:?}");
        }
        assert!(unusable_segment_reason("..").contains("\"..\""));
    }

    #[test]
    fn paths() {
        assert_eq!(
            collection_path(Kind::named("ClassicDashboard")),
            "/api/v1/config/classic-dashboards"
        );
        assert_eq!(
            item_path(Kind::named("Bucket"), Some("a b/c")),
            "/api/v1/config/buckets/a%20b%2Fc"
        );
        assert_eq!(
            item_path(Kind::named("ResourcePools"), None),
            "/api/v1/config/resource-pools"
        );
        assert_eq!(
            kind_for_path("notification-policies"),
            Some(Kind::named("NotificationPolicy"))
        );
        assert_eq!(kind_for_path("swagger.json"), None);
    }

    #[test]
    fn write_bodies_round_trip() {
        let obj = json!({"slug": "a", "name": "A"});
        let body = update_body(
            Kind::named("Bucket"),
            &obj,
            IfMissing::Create,
            Commit::Apply,
        );
        assert_eq!(
            body,
            json!({"bucket": {"slug": "a", "name": "A"}, "create_if_missing": true})
        );
        let req = parse_write_body(Kind::named("Bucket"), Write::Update, &body).unwrap();
        assert_eq!(req.object, obj);
        assert!(req.create_if_missing && !req.dry_run);
        let create = create_body(Kind::named("DerivedLabel"), &obj, Commit::DryRun);
        assert_eq!(
            create,
            json!({"derived_label": {"slug": "a", "name": "A"}, "dry_run": true})
        );
        assert_eq!(
            parse_write_body(Kind::named("Bucket"), Write::Create, &body).unwrap_err(),
            "unknown field \"create_if_missing\" in request body"
        );
        assert_eq!(
            parse_write_body(
                Kind::named("Bucket"),
                Write::Create,
                &json!({"dry_run": true})
            )
            .unwrap_err(),
            "request body is missing \"bucket\""
        );
    }

    #[test]
    fn list_query_string_is_exact() {
        let mut q = ListQuery {
            max_size: Some(5),
            token: Some("abc=".into()),
            ..ListQuery::default()
        };
        q.filters
            .insert("slugs".into(), vec!["a".into(), "b c".into()]);
        q.filters
            .insert("include_dashboard_json".into(), vec!["true".into()]);
        let s = q.to_query_string();
        assert_eq!(
            s,
            "page.max_size=5&page.token=abc%3D&include_dashboard_json=true&slugs=a&slugs=b+c"
        );
        assert_eq!(ListQuery::parse(&s).unwrap(), q);
        assert_eq!(ListQuery::default().to_query_string(), "");
        assert!(ListQuery::parse("page.max_size=-1").is_err());
    }

    #[test]
    fn fingerprint_ignores_order() {
        let a = ListQuery::parse("slugs=b&slugs=a&names=x").unwrap();
        let b = ListQuery::parse("names=x&slugs=a&slugs=b&page.token=t").unwrap();
        assert_eq!(a.filter_fingerprint(), b.filter_fingerprint());
    }

    #[test]
    fn list_responses() {
        let raw = |v: Value| serde_json::value::to_raw_value(&v).unwrap();
        let page = ListPage::new(
            Kind::named("Monitor").def(),
            vec![raw(json!({"slug": "m", "b": 1})), raw(json!({"slug": "n"}))],
            "t".into(),
        );
        // Written as serde_json writes the page built as one value.
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            json!({"monitors": [{"slug": "m", "b": 1}, {"slug": "n"}], "page": {"next_token": "t"}})
                .to_string()
        );
        let body = serde_json::to_value(&page).unwrap();
        assert_eq!(
            parse_list_response(Kind::named("Monitor"), &body).unwrap(),
            (
                vec![json!({"slug": "m", "b": 1}), json!({"slug": "n"})],
                "t".to_string()
            )
        );
        let last = ListPage::new(Kind::named("Monitor").def(), vec![], String::new());
        assert_eq!(
            serde_json::to_value(&last).unwrap(),
            json!({"monitors": [], "page": {}})
        );
        assert_eq!(
            parse_list_response(Kind::named("Monitor"), &json!({})).unwrap(),
            (vec![], String::new())
        );
    }

    #[test]
    fn routes_and_operation_ids() {
        let bucket = Kind::named("Bucket").def();
        assert_eq!(route_op(bucket, "get", false), Some(Op::List));
        assert_eq!(route_op(bucket, "GET", true), Some(Op::Read));
        assert_eq!(route_op(bucket, "PUT", false), None);
        let pools = Kind::named("ResourcePools").def();
        assert_eq!(route_op(pools, "PUT", false), Some(Op::Update));
        assert_eq!(route_op(pools, "GET", true), None);
        assert_eq!(
            operation_id(Kind::named("NotificationPolicy"), Op::List),
            "ListNotificationPolicies"
        );
        assert_eq!(
            operation_id(Kind::named("Bucket"), Op::Create),
            "CreateBucket"
        );
        assert_eq!(
            operation_id(Kind::named("ResourcePools"), Op::Read),
            "ReadResourcePools"
        );
    }

    #[test]
    fn operation_ids_match_the_swagger() {
        let swagger = crate::api::spec::swagger();
        let mut ids = std::collections::BTreeSet::new();
        for (_, methods) in swagger["paths"].as_object().unwrap() {
            for (_, op) in methods.as_object().unwrap() {
                ids.insert(op["operationId"].as_str().unwrap().to_string());
            }
        }
        for def in crate::api::registry::embedded_kinds() {
            for op in Op::ALL {
                if def.full_ops.has(op) {
                    let id = operation_id(def.kind, op);
                    assert!(ids.contains(&id), "{id} is not in the swagger");
                }
            }
        }
    }
}
