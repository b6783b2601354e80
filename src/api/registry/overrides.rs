//! What no API description says, per kind name: the short override table of the registry.
//!
//! Everything else about a kind (its name, paths, wrapper keys, operations, references,
//! server-owned fields, list filters, delete options) is derived from the description by
//! rule (see `derive`). A kind absent here has no overrides; a new kind of a newer API needs
//! no row.

use super::{EmbeddedJson, ListFilter, Ops, RequiredOneOf, Rewrite, Volatile};

/// The overrides of one kind.
pub(super) struct Override {
    pub kind: &'static str,
    /// Operations of the seed profile (the first 13 kinds; any other kind: none).
    pub seed_ops: Ops,
    /// Reference fields (dotted paths as derived) that may be left out on create and set by
    /// a later update, to break a reference cycle.
    pub optional_references: &'static [&'static str],
    pub embedded_json: &'static [EmbeddedJson],
    pub required: &'static [RequiredOneOf],
    pub unique_fields: &'static [&'static str],
    /// List filters whose field is not the parameter's name (or `<x>_slugs` -> `<x>_slug`).
    pub list_filters: &'static [ListFilter],
    /// The kind's value in the API's `ResourceType` enum (a bucket delete's change log).
    pub resource_type: Option<&'static str>,
}

const NONE: Override = Override {
    kind: "",
    seed_ops: Ops::NONE,
    optional_references: &[],
    embedded_json: &[],
    required: &[],
    unique_fields: &[],
    list_filters: &[],
    resource_type: None,
};

/// Reference fields whose name breaks the `<kind>_slug(s)` rule, and the kind they name.
pub(super) const REFERENCE_NAMES: &[(&str, &str)] = &[
    ("behavior_slug", "TraceBehavior"),
    ("baseline_behavior_slug", "TraceBehavior"),
];

/// Names of fields that hold credentials, wherever they are (docs/product.md §2).
pub const SECRET_FIELDS: &[&str] = &[
    "password",
    "bearer_token",
    "api_key",
    "api_token",
    "token",
    "routing_key",
    "service_key",
    "client_secret",
    "ingest_token",
    "ops_genie_key",
    "private_key",
];

const GRAFANA_JSON: &[EmbeddedJson] = &[EmbeddedJson {
    field: "dashboard_json",
    volatile: &[
        Volatile {
            path: "id",
            rewrite: Rewrite::Id,
        },
        Volatile {
            path: "version",
            rewrite: Rewrite::Version,
        },
    ],
    omitted_in_lists: true,
}];

const GRAFANA_REQUIRED: &[RequiredOneOf] = &[
    RequiredOneOf(&["bucket_slug", "collection_slug", "collection.slug"]),
    RequiredOneOf(&["dashboard_json"]),
];

/// The table, by kind name.
pub(super) const OVERRIDES: &[Override] = &[
    Override {
        kind: "Bucket",
        seed_ops: Ops::CRUDL,
        optional_references: &["team_slug", "notification_policy_slug"],
        resource_type: Some("BUCKET"),
        ..NONE
    },
    Override {
        kind: "ClassicDashboard",
        seed_ops: Ops::CRUDL,
        embedded_json: GRAFANA_JSON,
        required: GRAFANA_REQUIRED,
        resource_type: Some("GRAFANA_DASHBOARD"),
        ..NONE
    },
    Override {
        kind: "GrafanaDashboard",
        embedded_json: GRAFANA_JSON,
        required: GRAFANA_REQUIRED,
        resource_type: Some("GRAFANA_DASHBOARD"),
        ..NONE
    },
    Override {
        kind: "Collection",
        seed_ops: Ops::CRUDL,
        optional_references: &["team_slug", "notification_policy_slug"],
        ..NONE
    },
    Override {
        kind: "ConsumptionBudget",
        seed_ops: Ops::UPDATE,
        optional_references: &["notification_policy_slug"],
        list_filters: &[
            ListFilter {
                param: "partition_slug_paths",
                field: "partition_slug_path",
                repeated: true,
            },
            ListFilter {
                param: "resources",
                field: "resource",
                repeated: true,
            },
        ],
        ..NONE
    },
    Override {
        kind: "Dashboard",
        seed_ops: Ops::CRUDL,
        embedded_json: &[EmbeddedJson {
            field: "dashboard_json",
            volatile: &[
                Volatile {
                    path: "metadata.created_at",
                    rewrite: Rewrite::CreatedAt,
                },
                Volatile {
                    path: "metadata.updated_at",
                    rewrite: Rewrite::UpdatedAt,
                },
                Volatile {
                    path: "metadata.version",
                    rewrite: Rewrite::Version,
                },
            ],
            omitted_in_lists: true,
        }],
        resource_type: Some("DASHBOARD"),
        ..NONE
    },
    Override {
        kind: "Dataset",
        seed_ops: Ops::CRUDL,
        required: &[RequiredOneOf(&["description"])],
        list_filters: &[ListFilter {
            param: "type",
            field: "configuration.type",
            repeated: false,
        }],
        ..NONE
    },
    Override {
        kind: "DerivedLabel",
        seed_ops: Ops::CRUDL,
        unique_fields: &["label_name"],
        ..NONE
    },
    Override {
        kind: "DerivedMetric",
        seed_ops: Ops::CRUDL,
        unique_fields: &["metric_name"],
        ..NONE
    },
    Override {
        kind: "DropRule",
        seed_ops: Ops::LIST_CREATE_READ,
        ..NONE
    },
    Override {
        kind: "Monitor",
        seed_ops: Ops::LIST,
        required: &[RequiredOneOf(&[
            "bucket_slug",
            "collection_slug",
            "collection.slug",
        ])],
        // Monitors belong to a team through their collection; the emulator matches the
        // collection's `team_slug`.
        list_filters: &[ListFilter {
            param: "team_slugs",
            field: "collection_slug->team_slug",
            repeated: true,
        }],
        resource_type: Some("MONITOR"),
        ..NONE
    },
    Override {
        kind: "NotificationPolicy",
        required: &[RequiredOneOf(&["bucket_slug", "team_slug"])],
        resource_type: Some("NOTIFICATION_POLICY"),
        ..NONE
    },
    Override {
        kind: "ResourcePools",
        seed_ops: Ops::READ,
        ..NONE
    },
];

/// The overrides of a kind (none for a kind the table does not name).
pub(super) fn of(kind: &str) -> &'static Override {
    OVERRIDES.iter().find(|o| o.kind == kind).unwrap_or(&NONE)
}
