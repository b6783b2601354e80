//! The kind registry: every resource kind of the Config API v1, derived from an API
//! description by rule (`derive`), with the short table of what no description says
//! (`overrides`).
//!
//! Architecture invariant: this module is the only place that knows a kind's wire details
//! (path segment, wrapper keys, operations, reference fields, server-owned fields, list
//! filters, embedded-JSON fields). Loader, planner, client and emulator read its rows; a kind
//! that a newer API adds is registered from that API's description at run time
//! ([`register`]), with no code of its own.

mod derive;
mod overrides;
mod secrets;
mod walk;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::util::jsonpath::{escape_pointer, get_path};

pub use overrides::SECRET_FIELDS;
pub use secrets::{
    is_secret_path, parse_reference, pointers_at, strip_indices, FoundSecret, SecretRef, CHANGED,
    LITERAL_AT_BASE, REDACTED, SHOWN,
};

/// The API description compiled into cfgctl (a copy of the vendor's whole Config API v1).
pub const EMBEDDED_DESCRIPTION: &str = include_str!("../../spec/config-api-v1.swagger.json");

/// At most this many kinds in one process (the embedded ones and what targets add).
pub const MAX_KINDS: usize = 256;

/// A resource kind: a handle to its registry row. Kinds order by name (the order used
/// wherever kinds reach the user).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kind(u16);
/// A set of API operations on a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ops {
    pub create: bool,
    pub read: bool,
    pub update: bool,
    pub delete: bool,
    pub list: bool,
}

impl Ops {
    pub const NONE: Ops = Ops {
        create: false,
        read: false,
        update: false,
        delete: false,
        list: false,
    };
    pub const CRUDL: Ops = Ops {
        create: true,
        read: true,
        update: true,
        delete: true,
        list: true,
    };
    /// create, read, update, delete without list (the ResourcePools singleton).
    pub const CRUD: Ops = Ops {
        list: false,
        ..Ops::CRUDL
    };
    pub const LIST_CREATE_READ: Ops = Ops {
        create: true,
        read: true,
        list: true,
        ..Ops::NONE
    };
    pub const UPDATE: Ops = Ops {
        update: true,
        ..Ops::NONE
    };
    pub const READ: Ops = Ops {
        read: true,
        ..Ops::NONE
    };
    pub const LIST: Ops = Ops {
        list: true,
        ..Ops::NONE
    };

    /// Adds an operation to the set.
    pub fn set(&mut self, op: Op) {
        match op {
            Op::Create => self.create = true,
            Op::Read => self.read = true,
            Op::Update => self.update = true,
            Op::Delete => self.delete = true,
            Op::List => self.list = true,
        }
    }

    /// Whether the operation is in the set.
    pub fn has(&self, op: Op) -> bool {
        match op {
            Op::Create => self.create,
            Op::Read => self.read,
            Op::Update => self.update,
            Op::Delete => self.delete,
            Op::List => self.list,
        }
    }
}

/// One API operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Create,
    Read,
    Update,
    Delete,
    List,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::Create, Op::Read, Op::Update, Op::Delete, Op::List];

    /// The HTTP method of the operation.
    pub fn method(self) -> &'static str {
        match self {
            Op::Create => "POST",
            Op::Read | Op::List => "GET",
            Op::Update => "PUT",
            Op::Delete => "DELETE",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Read => "read",
            Op::Update => "update",
            Op::Delete => "delete",
            Op::List => "list",
        }
    }
}

/// A field of one kind that names a resource of another kind by slug.
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    /// Path of the field: dotted, `[]` marks every element of an array
    /// (`priorities[].filters[].dataset_slug`).
    pub path: &'static str,
    /// The kind the slug names.
    pub target: Kind,
    /// The resource can be created without this reference and have it set by a later
    /// update (used to break reference cycles among creates).
    pub optional: bool,
    /// The reference does not apply when the sibling field (relative to the parent object of
    /// `path`) has this value: `collection: {type: SERVICE, slug: …}` names a service.
    pub unless: Option<(&'static str, &'static str)>,
}

/// A filter parameter of a kind's list operation.
#[derive(Clone, Copy, Debug)]
pub struct ListFilter {
    /// Query parameter name (`bucket_slugs`).
    pub param: &'static str,
    /// The field of the object the filter matches (`bucket_slug`), dotted.
    pub field: &'static str,
    /// Repeated parameter (array) or a single value.
    pub repeated: bool,
}

/// A string field holding a JSON document, compared as parsed JSON.
#[derive(Clone, Copy, Debug)]
pub struct EmbeddedJson {
    pub field: &'static str,
    /// Members of the document the server rewrites on every write (dotted paths), and how.
    pub volatile: &'static [Volatile],
    /// Left empty in list results unless the list asks `include_dashboard_json=true`.
    pub omitted_in_lists: bool,
}

/// A member of an embedded document that the server rewrites on every write.
#[derive(Clone, Copy, Debug)]
pub struct Volatile {
    /// Dotted path inside the document.
    pub path: &'static str,
    pub rewrite: Rewrite,
}

/// What the server writes into a volatile member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// The resource's numeric id.
    Id,
    /// One more than the previous version (1 on create).
    Version,
    /// The time of the first write, kept afterwards.
    CreatedAt,
    /// The time of this write.
    UpdatedAt,
}

/// A "required if" rule of the swagger's field descriptions: at least one of these dotted
/// paths must be set (non-zero).
#[derive(Clone, Copy, Debug)]
pub struct RequiredOneOf(pub &'static [&'static str]);

/// A fact about a field that the registry states because the swagger's prose does not (in a
/// form `semantics` reads). Paths are dotted, `[]` marks every element of an array.
#[derive(Clone, Copy, Debug)]
pub enum FieldNote {
    /// The field's documented default, as a JSON literal (`60`, `"COLD"`, `true`).
    Default(&'static str, &'static str),
    /// The array is a set (compared without order).
    Set(&'static str),
    /// The array is ordered, though its description reads like a set.
    Ordered(&'static str),
}

/// A field holding PromQL (dotted, `[]` for arrays), and how it is read: derived from the
/// field's description (`derive::promql_fields`).
#[derive(Clone, Copy, Debug)]
pub struct PromqlField {
    pub path: &'static str,
    pub form: crate::util::promql::Form,
}

/// One row of the registry.
#[derive(Debug)]
pub struct KindDef {
    pub kind: Kind,
    /// Kind name as written in manifests (`ClassicDashboard`).
    pub name: &'static str,
    /// Path segment under `/api/v1/config/` (`classic-dashboards`).
    pub path: &'static str,
    /// Wrapper key of one object (`classic_dashboard`).
    pub singular: &'static str,
    /// Wrapper key of a list (`classic_dashboards`); the singleton has none.
    pub plural: Option<&'static str>,
    /// The swagger definition of the object.
    pub definition: &'static str,
    /// A single object per tenant, addressed without a slug.
    pub singleton: bool,
    /// Operations of the full API.
    pub full_ops: Ops,
    /// Operations of the seed profile.
    pub seed_ops: Ops,
    pub references: &'static [Reference],
    /// Fields set by the server, never by a manifest.
    pub server_owned: &'static [&'static str],
    /// Fields that hold credentials (dotted, `[]` for arrays; see `secrets`).
    pub secrets: &'static [&'static str],
    /// Fields parsed as PromQL at validation.
    pub promql: &'static [PromqlField],
    /// Defaults and sets the swagger's descriptions do not state in a form cfgctl derives
    /// (see `semantics`); most kinds need none.
    pub field_notes: &'static [FieldNote],
    /// List filters beyond `slugs` and `names`, which every list has.
    pub list_filters: &'static [ListFilter],
    pub embedded_json: &'static [EmbeddedJson],
    /// Rules a valid object must satisfy beyond the swagger types.
    pub required: &'static [RequiredOneOf],
    /// Fields whose value is unique across all resources of the kind.
    pub unique_fields: &'static [&'static str],
    /// Delete accepts `force_delete=true`, which cascades to the resources that reference it.
    pub force_delete: bool,
    /// The swagger definition of a delete's answer, when it has a body (the bucket delete
    /// lists what it took with it); `None`: an empty object.
    pub delete_response: Option<&'static str>,
    /// The kind's value in the API's `ResourceType` enum (the change log of a bucket delete).
    pub resource_type: Option<&'static str>,
    /// Why the kind cannot be managed although the description names it (a nested path).
    pub unaddressable: Option<&'static str>,
    /// The list operation's id as the description spells it (`ListSLOs`).
    pub list_operation: Option<&'static str>,
}

/// The rows, by kind index: set once, before the kind is handed out.
static SLOTS: [OnceLock<&'static KindDef>; MAX_KINDS] = [const { OnceLock::new() }; MAX_KINDS];

/// Kinds by name, and every singular wrapper key (a reference names a kind by it).
struct Table {
    by_name: BTreeMap<&'static str, Kind>,
    keys: BTreeMap<String, String>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    by_name: BTreeMap::new(),
    keys: BTreeMap::new(),
});

/// The kinds of the embedded description, once registered.
static EMBEDDED: OnceLock<Vec<Kind>> = OnceLock::new();

/// The table, with the embedded description's kinds registered the first time.
fn table() -> std::sync::MutexGuard<'static, Table> {
    EMBEDDED.get_or_init(|| {
        let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        add(&mut t, embedded_doc())
    });
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The kinds of the embedded description (what `validate`, `schema` and the docs know), by
/// name; [`kinds`] adds those a target described at run time.
pub fn embedded_kinds() -> Vec<&'static KindDef> {
    drop(table());
    EMBEDDED
        .get()
        .map(|k| k.iter().map(|k| k.def()).collect())
        .unwrap_or_default()
}

/// The embedded description, parsed once.
pub fn embedded_doc() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    // The file is part of the binary and checked by unit tests; a parse failure here is a
    // build defect, not an input error.
    DOC.get_or_init(|| serde_json::from_str(EMBEDDED_DESCRIPTION).unwrap_or(Value::Null))
}

/// The kinds an API description derives to, each with its number of references, secret and
/// PromQL fields, without registering any: the fuzz target of the description walk.
#[doc(hidden)]
pub fn derive_summary(doc: &Value) -> Vec<(String, usize)> {
    derive::kinds(doc, &BTreeMap::new())
        .into_iter()
        .map(|d| {
            let fields = d.references.len() + d.secrets.len() + d.promql.len();
            (d.name, fields)
        })
        .collect()
}

/// Registers the kinds an API description describes that are not known yet (a newer
/// target's), and returns every kind it describes. Known kinds keep their rows.
pub fn register(doc: &Value) -> Vec<Kind> {
    let mut t = table();
    add(&mut t, doc)
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn leak_slice<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn add(t: &mut Table, doc: &Value) -> Vec<Kind> {
    let derived = derive::kinds(doc, &t.keys);
    let mut fresh = Vec::new();
    let mut described = Vec::new();
    for d in &derived {
        if let Some(&k) = t.by_name.get(d.name.as_str()) {
            described.push(k);
            continue;
        }
        let index = t.by_name.len();
        let Ok(id) = u16::try_from(index) else { break };
        if index >= MAX_KINDS {
            tracing::warn!("more than {MAX_KINDS} kinds: {} is not managed", d.name);
            continue;
        }
        let kind = Kind(id);
        t.by_name.insert(leak(d.name.clone()), kind);
        t.keys.insert(d.singular.clone(), d.name.clone());
        fresh.push((kind, d));
        described.push(kind);
    }
    // Rows are made once every kind of the description has its handle (references name
    // them), and each is set before any caller can see its kind.
    for (kind, d) in fresh {
        let row = row(kind, d, &t.by_name);
        let _ = SLOTS[usize::from(kind.0)].set(Box::leak(Box::new(row)));
    }
    described.sort();
    described
}

fn row(kind: Kind, d: &derive::Derived, by_name: &BTreeMap<&'static str, Kind>) -> KindDef {
    let o = overrides::of(&d.name);
    let references = d
        .references
        .iter()
        .filter_map(|(path, target, unless)| {
            Some(Reference {
                path: leak(path.clone()),
                target: *by_name.get(target.as_str())?,
                optional: o.optional_references.contains(&path.as_str()),
                unless: *unless,
            })
        })
        .collect();
    let mut list_filters: Vec<ListFilter> = d
        .list_filters
        .iter()
        .filter(|(param, _, _)| !o.list_filters.iter().any(|f| f.param == param))
        .map(|(param, field, repeated)| ListFilter {
            param: leak(param.clone()),
            field: leak(field.clone()),
            repeated: *repeated,
        })
        .collect();
    list_filters.extend(o.list_filters.iter().copied());
    KindDef {
        kind,
        name: leak(d.name.clone()),
        path: leak(d.path.clone()),
        singular: leak(d.singular.clone()),
        plural: d.plural.clone().map(leak),
        definition: leak(d.definition.clone()),
        singleton: d.singleton,
        full_ops: d.ops,
        seed_ops: o.seed_ops,
        references: leak_slice(references),
        server_owned: leak_slice(d.server_owned.iter().cloned().map(leak).collect()),
        secrets: leak_slice(d.secrets.iter().cloned().map(leak).collect()),
        promql: leak_slice(
            d.promql
                .iter()
                .map(|(path, form)| PromqlField {
                    path: leak(path.clone()),
                    form: *form,
                })
                .collect(),
        ),
        field_notes: &[],
        list_filters: leak_slice(list_filters),
        embedded_json: o.embedded_json,
        required: o.required,
        unique_fields: o.unique_fields,
        force_delete: d.force_delete,
        delete_response: d.delete_response.clone().map(leak),
        resource_type: o.resource_type,
        unaddressable: d.unaddressable.clone().map(leak),
        list_operation: d.list_operation.clone().map(leak),
    }
}

/// Every kind registered (the embedded description's and those targets added), by name.
pub fn kinds() -> Vec<&'static KindDef> {
    let t = table();
    t.by_name.values().map(|k| k.def()).collect()
}

/// The route of an HTTP method at a kind's collection path (`at_item` false) or item path.
/// The singleton lives at its collection path and has no list.
pub fn route(singleton: bool, method: &str, at_item: bool) -> Option<Op> {
    match (singleton, at_item, method.to_ascii_uppercase().as_str()) {
        (true, false, "GET") => Some(Op::Read),
        (true, false, "POST") => Some(Op::Create),
        (true, false, "PUT") => Some(Op::Update),
        (true, false, "DELETE") => Some(Op::Delete),
        (false, false, "GET") => Some(Op::List),
        (false, false, "POST") => Some(Op::Create),
        (false, true, "GET") => Some(Op::Read),
        (false, true, "PUT") => Some(Op::Update),
        (false, true, "DELETE") => Some(Op::Delete),
        _ => None,
    }
}

impl PartialOrd for Kind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self.0 == other.0 {
            return std::cmp::Ordering::Equal;
        }
        self.name().cmp(other.name())
    }
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Kind {
    /// Every kind registered, by name.
    pub fn all() -> impl Iterator<Item = Kind> {
        kinds().into_iter().map(|d| d.kind)
    }

    /// The kind's index in the registry (below [`MAX_KINDS`]), for tables by kind.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// This kind's registry row.
    pub fn def(self) -> &'static KindDef {
        match SLOTS[usize::from(self.0)].get() {
            Some(def) => def,
            // A kind is handed out only once its row is set (see `add`).
            None => unreachable!("kind {} has no row", self.0),
        }
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The kind of a name known to be registered (the embedded description's): for tests and
    /// examples. Panics on an unknown name, so code that reads input uses [`Kind::from_name`].
    pub fn named(name: &str) -> Kind {
        match Kind::from_name(name) {
            Some(kind) => kind,
            None => panic!("no kind named {name}"),
        }
    }

    /// Looks a kind up by its manifest name (exact, case-sensitive).
    pub fn from_name(name: &str) -> Option<Kind> {
        table().by_name.get(name).copied()
    }

    /// A likely intended kind for a misspelt name: same letters in another case, a plural,
    /// the path segment or a wrapper key (`buckets`, `bucket`, `classic_dashboard`).
    pub fn suggest(name: &str) -> Option<Kind> {
        let folded: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let defs = kinds();
        defs.iter()
            .find(|d| {
                let canon = d.name.to_ascii_lowercase();
                let plural = d.plural.unwrap_or(d.singular).replace('_', "");
                folded == canon || folded == plural || folded == d.path.replace('-', "")
            })
            .map(|d| d.kind)
            .or_else(|| {
                let names: Vec<String> = defs.iter().map(|d| d.name.to_string()).collect();
                let best = crate::util::jsonpath::closest(name, &names)?;
                Kind::from_name(&best)
            })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A resource's identity: `Kind/slug`, or the kind alone for the singleton.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address {
    pub kind: Kind,
    pub slug: Option<String>,
}

impl Address {
    pub fn new(kind: Kind, slug: Option<String>) -> Address {
        Address { kind, slug }
    }
}

/// The slug of an API object of a kind (`None` for the singleton or an object without one).
pub fn object_slug(kind: Kind, object: &serde_json::Value) -> Option<String> {
    if kind.def().singleton {
        return None;
    }
    object
        .get("slug")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.slug {
            Some(slug) => write!(f, "{}/{}", self.kind, slug),
            None => write!(f, "{}", self.kind),
        }
    }
}

/// One slug found at a reference field of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundReference {
    /// JSON pointer of the value inside the object (`/priorities/0/filters/1/dataset_slug`).
    pub pointer: String,
    /// Dotted path with indices (`priorities[0].filters[1].dataset_slug`).
    pub path: String,
    pub target: Kind,
    pub slug: String,
    pub optional: bool,
}

impl Reference {
    /// Every non-empty slug `value` holds at `rest` of this reference's path, into `out`;
    /// `trail` is the walk's scratch (the fields and indices down to `value`). A reference's
    /// pointer and path are written only for a slug that is found (most objects hold few of
    /// the fields the registry names).
    fn walk(
        &self,
        value: &Value,
        rest: &'static str,
        trail: &mut Vec<(&'static str, Option<usize>)>,
        out: &mut Vec<FoundReference>,
    ) {
        if rest.is_empty() {
            if let Value::String(slug) = value {
                if !slug.is_empty() {
                    out.push(self.found(trail, slug));
                }
            }
            return;
        }
        let (first, rest) = rest.split_once('.').unwrap_or((rest, ""));
        let Value::Object(map) = value else { return };
        if rest.is_empty() {
            if let Some((field, excluded)) = self.unless {
                if map.get(field).and_then(Value::as_str) == Some(excluded) {
                    return;
                }
            }
        }
        let (name, is_array) = match first.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (first, false),
        };
        let Some(child) = map.get(name) else { return };
        if is_array {
            if let Value::Array(items) = child {
                for (i, item) in items.iter().enumerate() {
                    trail.push((name, Some(i)));
                    self.walk(item, rest, trail, out);
                    trail.pop();
                }
            }
        } else {
            trail.push((name, None));
            self.walk(child, rest, trail, out);
            trail.pop();
        }
    }

    /// The reference found at the end of `trail`: its JSON pointer
    /// (`/priorities/0/filters/1/dataset_slug`) and dotted path
    /// (`priorities[0].filters[1].dataset_slug`).
    fn found(&self, trail: &[(&'static str, Option<usize>)], slug: &str) -> FoundReference {
        use std::fmt::Write as _;
        let mut pointer = String::new();
        let mut path = String::new();
        for (n, (name, index)) in trail.iter().enumerate() {
            pointer.push('/');
            pointer.push_str(&escape_pointer(name));
            if n > 0 {
                path.push('.');
            }
            path.push_str(name);
            if let Some(i) = index {
                // Writing to a String cannot fail.
                let _ = write!(pointer, "/{i}");
                let _ = write!(path, "[{i}]");
            }
        }
        FoundReference {
            pointer,
            path,
            target: self.target,
            slug: slug.to_string(),
            optional: self.optional,
        }
    }
}

impl KindDef {
    /// Every reference the object makes, in registry order.
    pub fn references_in(&self, object: &Value) -> Vec<FoundReference> {
        let mut out = Vec::new();
        let mut trail = Vec::new();
        for r in self.references {
            r.walk(object, r.path, &mut trail, &mut out);
        }
        out
    }

    /// Every non-empty secret value the object holds, in registry order.
    pub fn secrets_in(&self, object: &Value) -> Vec<FoundSecret> {
        secrets::find(self.secrets, object)
    }

    /// Operations of a profile.
    pub fn ops(&self, profile: Profile) -> Ops {
        match profile {
            Profile::Full => self.full_ops,
            Profile::Seed => self.seed_ops,
        }
    }
}

/// The two API profiles the product knows: the full API, and the seed tenant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Full,
    Seed,
}

/// A value the API treats as absent (proto3 zero value).
pub fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

impl RequiredOneOf {
    /// Whether the object satisfies the rule: some path holds a non-zero value.
    pub fn satisfied_by(&self, object: &Value) -> bool {
        self.0
            .iter()
            .any(|path| get_path(object, path).is_some_and(|v| !is_zero(v)))
    }

    /// `bucket_slug`, `collection_slug` or `collection.slug`.
    pub fn describe(&self) -> String {
        let quoted: Vec<String> = self.0.iter().map(|p| format!("`{p}`")).collect();
        match quoted.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [init @ .., last] => format!("one of {} or {last}", init.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests;
