//! The kind registry: one table row per resource kind of the Config API v1.
//!
//! Architecture invariant: this module is the only place that knows a kind's wire details
//! (path segment, wrapper keys, operations, reference fields, server-owned fields, list
//! filters, embedded-JSON fields). Loader, planner, client and emulator read this table;
//! adding a kind is adding a row.

use std::fmt;

use serde_json::Value;

use crate::jsonpath::{escape_pointer, get_path};

/// Every kind cfgctl manages. The order is the registry's order (alphabetical by name, the
/// order used wherever kinds reach the user).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Bucket,
    ClassicDashboard,
    Collection,
    ConsumptionBudget,
    Dashboard,
    Dataset,
    DerivedLabel,
    DerivedMetric,
    DropRule,
    Monitor,
    NotificationPolicy,
    ResourcePools,
    Team,
}

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

const fn volatile(path: &'static str, rewrite: Rewrite) -> Volatile {
    Volatile { path, rewrite }
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
}

const SERVER_OWNED: &[&str] = &["created_at", "updated_at"];

const fn reference(path: &'static str, target: Kind, optional: bool) -> Reference {
    Reference {
        path,
        target,
        optional,
        unless: None,
    }
}

/// `collection: {type: SERVICE, slug: …}` names a service, not a Collection.
const COLLECTION_REF: Reference = Reference {
    path: "collection.slug",
    target: Kind::Collection,
    optional: false,
    unless: Some(("type", "SERVICE")),
};

const fn filter(param: &'static str, field: &'static str) -> ListFilter {
    ListFilter {
        param,
        field,
        repeated: true,
    }
}

const INCLUDE_DASHBOARD_JSON: ListFilter = ListFilter {
    param: "include_dashboard_json",
    field: "dashboard_json",
    repeated: false,
};

/// The registry, one row per kind, in the order of [`Kind`].
pub static KINDS: [KindDef; 13] = [
    KindDef {
        kind: Kind::Bucket,
        name: "Bucket",
        path: "buckets",
        singular: "bucket",
        plural: Some("buckets"),
        definition: "configv1Bucket",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[
            reference("team_slug", Kind::Team, true),
            reference("notification_policy_slug", Kind::NotificationPolicy, true),
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[],
        embedded_json: &[],
        required: &[],
        unique_fields: &[],
        force_delete: true,
        delete_response: Some("configv1DeleteBucketResponse"),
        resource_type: Some("BUCKET"),
    },
    KindDef {
        kind: Kind::ClassicDashboard,
        name: "ClassicDashboard",
        path: "classic-dashboards",
        singular: "classic_dashboard",
        plural: Some("classic_dashboards"),
        definition: "configv1GrafanaDashboard",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[
            reference("bucket_slug", Kind::Bucket, false),
            reference("collection_slug", Kind::Collection, false),
            COLLECTION_REF,
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[
            filter("bucket_slugs", "bucket_slug"),
            filter("collection_slugs", "collection_slug"),
            INCLUDE_DASHBOARD_JSON,
        ],
        embedded_json: &[EmbeddedJson {
            field: "dashboard_json",
            volatile: &[
                volatile("id", Rewrite::Id),
                volatile("version", Rewrite::Version),
            ],
            omitted_in_lists: true,
        }],
        required: &[
            RequiredOneOf(&["bucket_slug", "collection_slug", "collection.slug"]),
            RequiredOneOf(&["dashboard_json"]),
        ],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: Some("GRAFANA_DASHBOARD"),
    },
    KindDef {
        kind: Kind::Collection,
        name: "Collection",
        path: "collections",
        singular: "collection",
        plural: Some("collections"),
        definition: "configv1Collection",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[
            reference("team_slug", Kind::Team, true),
            reference("notification_policy_slug", Kind::NotificationPolicy, true),
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[
            filter("team_slugs", "team_slug"),
            filter("notification_policy_slugs", "notification_policy_slug"),
        ],
        embedded_json: &[],
        required: &[],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::ConsumptionBudget,
        name: "ConsumptionBudget",
        path: "consumption-budgets",
        singular: "consumption_budget",
        plural: Some("consumption_budgets"),
        definition: "configv1ConsumptionBudget",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::UPDATE,
        references: &[
            reference("notification_policy_slug", Kind::NotificationPolicy, true),
            reference("priorities[].filters[].dataset_slug", Kind::Dataset, false),
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[
            filter("partition_slug_paths", "partition_slug_path"),
            filter("resources", "resource"),
        ],
        embedded_json: &[],
        required: &[],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::Dashboard,
        name: "Dashboard",
        path: "dashboards",
        singular: "dashboard",
        plural: Some("dashboards"),
        definition: "configv1Dashboard",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[
            reference("collection_slug", Kind::Collection, false),
            COLLECTION_REF,
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[
            filter("collection_slugs", "collection_slug"),
            INCLUDE_DASHBOARD_JSON,
        ],
        embedded_json: &[EmbeddedJson {
            field: "dashboard_json",
            volatile: &[
                volatile("metadata.created_at", Rewrite::CreatedAt),
                volatile("metadata.updated_at", Rewrite::UpdatedAt),
                volatile("metadata.version", Rewrite::Version),
            ],
            omitted_in_lists: true,
        }],
        required: &[],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: Some("DASHBOARD"),
    },
    KindDef {
        kind: Kind::Dataset,
        name: "Dataset",
        path: "datasets",
        singular: "dataset",
        plural: Some("datasets"),
        definition: "configv1Dataset",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[ListFilter {
            param: "type",
            field: "configuration.type",
            repeated: false,
        }],
        embedded_json: &[],
        required: &[RequiredOneOf(&["description"])],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::DerivedLabel,
        name: "DerivedLabel",
        path: "derived-labels",
        singular: "derived_label",
        plural: Some("derived_labels"),
        definition: "configv1DerivedLabel",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[],
        embedded_json: &[],
        required: &[],
        unique_fields: &["label_name"],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::DerivedMetric,
        name: "DerivedMetric",
        path: "derived-metrics",
        singular: "derived_metric",
        plural: Some("derived_metrics"),
        definition: "configv1DerivedMetric",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::CRUDL,
        references: &[],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[],
        embedded_json: &[],
        required: &[],
        unique_fields: &["metric_name"],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::DropRule,
        name: "DropRule",
        path: "drop-rules",
        singular: "drop_rule",
        plural: Some("drop_rules"),
        definition: "configv1DropRule",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::LIST_CREATE_READ,
        references: &[],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[],
        embedded_json: &[],
        required: &[],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::Monitor,
        name: "Monitor",
        path: "monitors",
        singular: "monitor",
        plural: Some("monitors"),
        definition: "configv1Monitor",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::LIST,
        references: &[
            reference("bucket_slug", Kind::Bucket, false),
            reference("collection_slug", Kind::Collection, false),
            COLLECTION_REF,
            reference("notification_policy_slug", Kind::NotificationPolicy, false),
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[
            filter("bucket_slugs", "bucket_slug"),
            filter("collection_slugs", "collection_slug"),
            // Monitors belong to a team through their collection; the emulator matches the
            // collection's `team_slug`.
            filter("team_slugs", "collection_slug->team_slug"),
        ],
        embedded_json: &[],
        required: &[RequiredOneOf(&[
            "bucket_slug",
            "collection_slug",
            "collection.slug",
        ])],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: Some("MONITOR"),
    },
    KindDef {
        kind: Kind::NotificationPolicy,
        name: "NotificationPolicy",
        path: "notification-policies",
        singular: "notification_policy",
        plural: Some("notification_policies"),
        definition: "configv1NotificationPolicy",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::NONE,
        references: &[
            reference("bucket_slug", Kind::Bucket, false),
            reference("team_slug", Kind::Team, false),
        ],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[
            filter("bucket_slugs", "bucket_slug"),
            filter("team_slugs", "team_slug"),
        ],
        embedded_json: &[],
        required: &[RequiredOneOf(&["bucket_slug", "team_slug"])],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: Some("NOTIFICATION_POLICY"),
    },
    KindDef {
        kind: Kind::ResourcePools,
        name: "ResourcePools",
        path: "resource-pools",
        singular: "resource_pools",
        plural: None,
        definition: "configv1ResourcePools",
        singleton: true,
        full_ops: Ops::CRUD,
        seed_ops: Ops::READ,
        references: &[],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[],
        embedded_json: &[],
        required: &[],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
    KindDef {
        kind: Kind::Team,
        name: "Team",
        path: "teams",
        singular: "team",
        plural: Some("teams"),
        definition: "configv1Team",
        singleton: false,
        full_ops: Ops::CRUDL,
        seed_ops: Ops::NONE,
        references: &[],
        server_owned: SERVER_OWNED,
        field_notes: &[],
        list_filters: &[],
        embedded_json: &[],
        required: &[],
        unique_fields: &[],
        force_delete: false,
        delete_response: None,
        resource_type: None,
    },
];

impl Kind {
    /// Every kind, in registry order.
    pub fn all() -> impl Iterator<Item = Kind> {
        KINDS.iter().map(|d| d.kind)
    }

    /// This kind's registry row.
    pub fn def(self) -> &'static KindDef {
        // The table is in enum order; checked by a unit test.
        &KINDS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Looks a kind up by its manifest name (exact, case-sensitive).
    pub fn from_name(name: &str) -> Option<Kind> {
        KINDS.iter().find(|d| d.name == name).map(|d| d.kind)
    }

    /// A likely intended kind for a misspelt name: same letters in another case, a plural,
    /// the path segment or a wrapper key (`buckets`, `bucket`, `classic_dashboard`).
    pub fn suggest(name: &str) -> Option<Kind> {
        let folded: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        KINDS
            .iter()
            .find(|d| {
                let canon = d.name.to_ascii_lowercase();
                let plural = d.plural.unwrap_or(d.singular).replace('_', "");
                folded == canon || folded == plural || folded == d.path.replace('-', "")
            })
            .map(|d| d.kind)
            .or_else(|| {
                let names: Vec<String> = KINDS.iter().map(|d| d.name.to_string()).collect();
                let best = crate::jsonpath::closest(name, &names)?;
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table_is_in_enum_order_and_complete() {
        assert_eq!(KINDS.len(), 13);
        for (i, def) in KINDS.iter().enumerate() {
            assert_eq!(def.kind as usize, i, "{} out of order", def.name);
            assert_eq!(format!("{:?}", def.kind), def.name);
            assert_eq!(Kind::from_name(def.name), Some(def.kind));
        }
        let mut names: Vec<_> = KINDS.iter().map(|d| d.name).collect();
        let sorted = {
            let mut s = names.clone();
            s.sort();
            s
        };
        assert_eq!(names, sorted, "registry order is alphabetical");
        names.dedup();
        assert_eq!(names.len(), 13);
    }

    #[test]
    fn only_the_singleton_lacks_a_plural_key_and_list() {
        for def in &KINDS {
            assert_eq!(def.singleton, def.plural.is_none(), "{}", def.name);
            assert_eq!(def.singleton, !def.full_ops.list, "{}", def.name);
        }
    }

    #[test]
    fn seed_profile_is_a_subset_of_the_full_api() {
        for def in &KINDS {
            for op in Op::ALL {
                if def.seed_ops.has(op) {
                    assert!(def.full_ops.has(op), "{} {:?}", def.name, op);
                }
            }
        }
        assert_eq!(Kind::ConsumptionBudget.def().seed_ops, Ops::UPDATE);
        assert_eq!(Kind::Team.def().seed_ops, Ops::NONE);
    }

    #[test]
    fn nested_array_references_are_found_with_their_paths() {
        let budget = json!({
            "slug": "b",
            "priorities": [
                {"priority": 1, "filters": [{"dataset_slug": "logs-a"}, {"log_filter": {"query": "x"}}]},
                {"priority": 2, "filters": [{"dataset_slug": "logs-b"}, {"dataset_slug": ""}]}
            ]
        });
        let found = Kind::ConsumptionBudget.def().references_in(&budget);
        let got: Vec<_> = found
            .iter()
            .map(|r| (r.path.as_str(), r.pointer.as_str(), r.slug.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "priorities[0].filters[0].dataset_slug",
                    "/priorities/0/filters/0/dataset_slug",
                    "logs-a"
                ),
                (
                    "priorities[1].filters[0].dataset_slug",
                    "/priorities/1/filters/0/dataset_slug",
                    "logs-b"
                ),
            ]
        );
        assert!(found.iter().all(|r| r.target == Kind::Dataset));
    }

    #[test]
    fn service_collection_reference_is_not_a_collection() {
        let def = Kind::Monitor.def();
        let simple = json!({"collection": {"type": "SIMPLE", "slug": "payments"}});
        let service = json!({"collection": {"type": "SERVICE", "slug": "checkout"}});
        let found = def.references_in(&simple);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target, Kind::Collection);
        assert_eq!(found[0].path, "collection.slug");
        assert!(def.references_in(&service).is_empty());
    }

    #[test]
    fn suggestions_for_misspelt_kinds() {
        assert_eq!(Kind::suggest("bucket"), Some(Kind::Bucket));
        assert_eq!(Kind::suggest("buckets"), Some(Kind::Bucket));
        assert_eq!(
            Kind::suggest("classic_dashboard"),
            Some(Kind::ClassicDashboard)
        );
        assert_eq!(
            Kind::suggest("notification-policies"),
            Some(Kind::NotificationPolicy)
        );
        assert_eq!(Kind::suggest("Widget"), None);
        assert_eq!(Kind::suggest("Dashbord"), Some(Kind::Dashboard));
    }

    #[test]
    fn required_one_of_rules() {
        let rule = RequiredOneOf(&["bucket_slug", "collection_slug", "collection.slug"]);
        assert!(!rule.satisfied_by(&json!({"bucket_slug": ""})));
        assert!(rule.satisfied_by(&json!({"collection": {"slug": "c"}})));
        assert_eq!(
            rule.describe(),
            "one of `bucket_slug`, `collection_slug` or `collection.slug`"
        );
        assert_eq!(RequiredOneOf(&["description"]).describe(), "`description`");
    }

    #[test]
    fn zero_values() {
        for v in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert!(is_zero(&v), "{v}");
        }
        for v in [
            json!(true),
            json!(1),
            json!("x"),
            json!([0]),
            json!({"a": 0}),
        ] {
            assert!(!is_zero(&v), "{v}");
        }
    }
}
