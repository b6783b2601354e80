use super::*;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap_or_else(|| panic!("no kind {name}"))
}

fn refs(name: &str) -> Vec<(String, String, bool)> {
    kind(name)
        .def()
        .references
        .iter()
        .map(|r| (r.path.to_string(), r.target.name().to_string(), r.optional))
        .collect()
}

#[test]
fn every_kind_of_the_whole_api_is_derived() {
    let names: Vec<&str> = kinds().iter().map(|d| d.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "registry order is alphabetical");
    for name in [
        "AzureMetricsIntegration",
        "Bucket",
        "ClassicDashboard",
        "Collection",
        "ConsumptionBudget",
        "ConsumptionConfig",
        "Dashboard",
        "Dataset",
        "DerivedLabel",
        "DerivedMetric",
        "DropRule",
        "ExternalConnection",
        "GcpMetricsIntegration",
        "GrafanaDashboard",
        "LogAllocationConfig",
        "LogControlConfig",
        "LogIngestConfig",
        "LogRetentionConfig",
        "LogScaleAction",
        "LogScaleAlert",
        "MappingRule",
        "Monitor",
        "MutingRule",
        "NotificationPolicy",
        "Notifier",
        "OtelMetricsIngestion",
        "RecordingRule",
        "ResourcePools",
        "RollupRule",
        "SLO",
        "Service",
        "ServiceAccount",
        "ServiceAttribute",
        "Team",
        "TraceBehavior",
        "TraceBehaviorConfig",
        "TraceJaegerRemoteSamplingStrategy",
        "TraceMetricsRule",
        "TraceTailSamplingRules",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(names.len() >= 39, "{}", names.len());
    for (i, d) in kinds().iter().enumerate() {
        assert_eq!(Kind::from_name(d.name), Some(d.kind), "{i}");
        assert_eq!(d.kind.name(), d.name);
    }
}

#[test]
fn the_first_thirteen_keep_their_wire_details() {
    let b = kind("Bucket").def();
    assert_eq!(
        (b.path, b.singular, b.plural, b.definition),
        ("buckets", "bucket", Some("buckets"), "configv1Bucket")
    );
    assert_eq!(b.full_ops, Ops::CRUDL);
    assert!(b.force_delete);
    assert_eq!(b.delete_response, Some("configv1DeleteBucketResponse"));
    assert_eq!(b.server_owned, &["created_at", "updated_at"]);
    assert_eq!(
        refs("Bucket"),
        vec![
            ("team_slug".into(), "Team".into(), true),
            (
                "notification_policy_slug".into(),
                "NotificationPolicy".into(),
                true
            ),
        ]
    );
    let c = kind("ClassicDashboard").def();
    assert_eq!(c.definition, "configv1GrafanaDashboard");
    assert_eq!(c.path, "classic-dashboards");
    assert_eq!(
        refs("ClassicDashboard"),
        vec![
            ("bucket_slug".into(), "Bucket".into(), false),
            ("collection_slug".into(), "Collection".into(), false),
            ("collection.slug".into(), "Collection".into(), false),
        ]
    );
    let filters: Vec<(&str, &str)> = c.list_filters.iter().map(|f| (f.param, f.field)).collect();
    assert_eq!(
        filters,
        vec![
            ("bucket_slugs", "bucket_slug"),
            ("collection_slugs", "collection_slug"),
            ("include_dashboard_json", "dashboard_json"),
        ]
    );
    let rp = kind("ResourcePools").def();
    assert!(rp.singleton && rp.plural.is_none());
    assert_eq!(rp.full_ops, Ops::CRUD);
    assert_eq!(rp.seed_ops, Ops::READ);
    assert_eq!(kind("ConsumptionBudget").def().seed_ops, Ops::UPDATE);
    assert_eq!(kind("Team").def().seed_ops, Ops::NONE);
    assert_eq!(
        refs("ConsumptionBudget"),
        vec![
            (
                "priorities[].filters[].dataset_slug".into(),
                "Dataset".into(),
                false
            ),
            (
                "notification_policy_slug".into(),
                "NotificationPolicy".into(),
                true
            ),
        ]
    );
    let monitor_filters: Vec<(&str, &str)> = kind("Monitor")
        .def()
        .list_filters
        .iter()
        .map(|f| (f.param, f.field))
        .collect();
    assert!(monitor_filters.contains(&("team_slugs", "collection_slug->team_slug")));
    assert!(monitor_filters.contains(&("bucket_slugs", "bucket_slug")));
    let dataset: Vec<(&str, &str)> = kind("Dataset")
        .def()
        .list_filters
        .iter()
        .map(|f| (f.param, f.field))
        .collect();
    assert_eq!(dataset, vec![("type", "configuration.type")]);
}

#[test]
fn references_of_the_new_kinds_follow_the_rule() {
    let np = refs("NotificationPolicy");
    assert!(np.contains(&(
        "routes.defaults.warn.notifier_slugs[]".into(),
        "Notifier".into(),
        false
    )));
    assert!(np.contains(&(
        "routes.overrides[].notifiers.critical.destinations[].slack.external_connection_slug"
            .into(),
        "ExternalConnection".into(),
        false
    )));
    assert!(refs("LogScaleAlert").contains(&(
        "log_scale_action_slugs[]".into(),
        "LogScaleAction".into(),
        false
    )));
    let tbc = refs("TraceBehaviorConfig");
    assert!(tbc.contains(&(
        "main_behavior_assignments[].behavior_slug".into(),
        "TraceBehavior".into(),
        false
    )));
    assert!(tbc.contains(&(
        "baseline_behavior_slug".into(),
        "TraceBehavior".into(),
        false
    )));
    assert!(tbc.contains(&(
        "main_behavior_assignments[].dataset_slug".into(),
        "Dataset".into(),
        false
    )));
    for k in ["RecordingRule", "RollupRule", "MappingRule"] {
        assert!(
            refs(k).contains(&("bucket_slug".into(), "Bucket".into(), false)),
            "{k}"
        );
    }
    assert!(kind("TraceBehaviorConfig").def().singleton);
    assert_eq!(kind("SLO").def().list_operation, Some("ListSLOs"));
}

#[test]
fn operations_are_exactly_those_described() {
    let sa = kind("ServiceAccount").def();
    assert!(sa.full_ops.create && sa.full_ops.read && sa.full_ops.delete && sa.full_ops.list);
    assert!(!sa.full_ops.update, "ServiceAccount has no update");
    assert!(sa.server_owned.contains(&"token"));
    let service = kind("Service").def();
    assert_eq!(
        service.full_ops,
        Ops {
            read: true,
            list: true,
            ..Ops::NONE
        }
    );
    let attr = kind("ServiceAttribute").def();
    assert_eq!(attr.full_ops, Ops::NONE);
    assert!(attr
        .unaddressable
        .is_some_and(|r| r.contains("nested path")));
}

#[test]
fn a_newer_description_adds_its_kinds() {
    let doc = json!({
        "swagger": "2.0",
        "paths": {
            "/api/v1/config/widgets": {
                "get": {"operationId": "ListWidgets", "parameters": [{"in": "query", "name": "bucket_slugs", "type": "array"}],
                        "responses": {"200": {"schema": {"$ref": "#/definitions/ListWidgetsResponse"}}}},
                "post": {"operationId": "CreateWidget", "parameters": [{"in": "body", "name": "body", "schema": {"$ref": "#/definitions/CreateWidgetRequest"}}],
                         "responses": {"200": {"schema": {"$ref": "#/definitions/WidgetResponse"}}}}
            },
            "/api/v1/config/widgets/{slug}": {
                "get": {"operationId": "ReadWidget", "responses": {"200": {"schema": {"$ref": "#/definitions/WidgetResponse"}}}},
                "delete": {"operationId": "DeleteWidget", "responses": {"200": {"schema": {"$ref": "#/definitions/Empty"}}}}
            }
        },
        "definitions": {
            "Widget": {"type": "object", "properties": {
                "slug": {"type": "string"}, "name": {"type": "string"},
                "bucket_slug": {"type": "string"},
                "parts": {"type": "array", "items": {"$ref": "#/definitions/Part"}},
                "created_at": {"type": "string", "readOnly": true}}},
            "Part": {"type": "object", "properties": {"notifier_slugs": {"type": "array", "items": {"type": "string"}}}},
            "CreateWidgetRequest": {"type": "object", "properties": {"widget": {"$ref": "#/definitions/Widget"}, "dry_run": {"type": "boolean"}}},
            "WidgetResponse": {"type": "object", "properties": {"widget": {"$ref": "#/definitions/Widget"}}},
            "ListWidgetsResponse": {"type": "object", "properties": {"widgets": {"type": "array", "items": {"$ref": "#/definitions/Widget"}}, "page": {"type": "object"}}},
            "Empty": {"type": "object"}
        }
    });
    let described = register(&doc);
    let widget = kind("Widget");
    assert_eq!(described, vec![widget]);
    let d = widget.def();
    assert_eq!(
        (d.path, d.singular, d.plural, d.definition),
        ("widgets", "widget", Some("widgets"), "Widget")
    );
    assert_eq!(
        d.full_ops,
        Ops {
            create: true,
            read: true,
            delete: true,
            list: true,
            update: false
        }
    );
    assert_eq!(d.server_owned, &["created_at"]);
    assert_eq!(
        refs("Widget"),
        vec![
            ("bucket_slug".into(), "Bucket".into(), false),
            ("parts[].notifier_slugs[]".into(), "Notifier".into(), false),
        ]
    );
    let found = d.references_in(&json!({"slug": "w", "parts": [{"notifier_slugs": ["a", "b"]}]}));
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|r| (r.path.as_str(), r.slug.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("parts[0].notifier_slugs[0]", "a"),
            ("parts[0].notifier_slugs[1]", "b")
        ]
    );
    // Registering again changes nothing; the embedded kinds keep their rows.
    assert_eq!(register(&doc), vec![widget]);
    assert_eq!(kind("Bucket").def().path, "buckets");
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
    let found = kind("ConsumptionBudget").def().references_in(&budget);
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
    assert!(found.iter().all(|r| r.target == kind("Dataset")));
}

#[test]
fn service_collection_reference_is_not_a_collection() {
    let def = kind("Monitor").def();
    let simple = json!({"collection": {"type": "SIMPLE", "slug": "payments"}});
    let service = json!({"collection": {"type": "SERVICE", "slug": "checkout"}});
    let found = def.references_in(&simple);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].target, kind("Collection"));
    assert_eq!(found[0].path, "collection.slug");
    assert!(def.references_in(&service).is_empty());
}

#[test]
fn suggestions_for_misspelt_kinds() {
    assert_eq!(Kind::suggest("bucket"), Some(kind("Bucket")));
    assert_eq!(Kind::suggest("buckets"), Some(kind("Bucket")));
    assert_eq!(
        Kind::suggest("classic_dashboard"),
        Some(kind("ClassicDashboard"))
    );
    assert_eq!(
        Kind::suggest("notification-policies"),
        Some(kind("NotificationPolicy"))
    );
    assert_eq!(Kind::suggest("Zzqx"), None);
    assert_eq!(Kind::suggest("Dashbord"), Some(kind("Dashboard")));
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

#[test]
fn a_hostile_description_registers_no_unprintable_or_unaddressable_kind() {
    let kind_at = |segment: &str, name: &str, key: &str| {
        json!({
            format!("/api/v1/config/{segment}"): {
                "post": {"operationId": format!("Create{name}"), "parameters": [{"in": "body", "name": "body",
                    "schema": {"$ref": format!("#/definitions/Req{key}")}}]}
            },
            format!("/api/v1/config/{segment}/{{slug}}"): {"get": {"operationId": format!("Read{name}")}}
        })
    };
    let mut paths = serde_json::Map::new();
    let mut defs = serde_json::Map::new();
    for (segment, name, key) in [
        ("..", "Dots", "dots"),
        ("evil", "Evil\n::set-output name=x::", "evil"),
        ("spaced", "Spaced", "spaced key"),
        ("fine-things", "FineThing", "fine_thing"),
    ] {
        paths.extend(kind_at(segment, name, key).as_object().unwrap().clone());
        defs.insert(
            format!("Req{key}"),
            json!({"properties": {key: {"$ref": "#/definitions/Obj"}}}),
        );
    }
    defs.insert(
        "Obj".into(),
        json!({"properties": {"slug": {"type": "string"}}}),
    );
    let doc = json!({"paths": paths, "definitions": defs});
    let names: Vec<&str> = register(&doc).into_iter().map(|k| k.name()).collect();
    assert_eq!(names, vec!["FineThing"]);
    assert!(Kind::from_name("Dots").is_none());
}

/// Issue 38 item 2: references are found by the definition a field points to. An independent
/// walk of the whole 38-kind description finds every field whose schema is a `...Reference`
/// definition (under any name: SLO's `collection_ref`, Monitor's `collection`) or is named
/// `<k>_slug(s)`; the registry derives exactly those (and the override table's names).
#[test]
fn every_reference_of_the_description_is_derived_by_its_shape() {
    let doc: Value = serde_json::from_str(EMBEDDED_DESCRIPTION).unwrap();
    let defs = doc["definitions"].as_object().unwrap();
    let singular: BTreeMap<&str, &str> = embedded_kinds()
        .iter()
        .map(|d| (d.singular, d.name))
        .collect();
    fn expect(
        defs: &serde_json::Map<String, Value>,
        singular: &BTreeMap<&str, &str>,
        schema: &Value,
        path: &str,
        seen: &mut Vec<String>,
        out: &mut BTreeSet<(String, String)>,
    ) {
        let named = schema["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/definitions/"));
        if let Some(name) = named {
            if seen.iter().any(|s| s == name) {
                return;
            }
            seen.push(name.to_string());
            expect(defs, singular, &defs[name], path, seen, out);
            seen.pop();
            return;
        }
        if let Some(items) = schema.get("items") {
            expect(defs, singular, items, &format!("{path}[]"), seen, out);
            return;
        }
        let Some(props) = schema["properties"].as_object() else {
            return;
        };
        for (field, sub) in props {
            let dotted = if path.is_empty() {
                field.clone()
            } else {
                format!("{path}.{field}")
            };
            let stem = field
                .strip_suffix("_slugs")
                .or_else(|| field.strip_suffix("_slug"));
            if let Some(target) = stem.and_then(|s| singular.get(s)) {
                let leaf = if field.ends_with("_slugs") {
                    format!("{dotted}[]")
                } else {
                    dotted
                };
                out.insert((leaf, target.to_string()));
                continue;
            }
            let reference = sub["$ref"]
                .as_str()
                .and_then(|r| r.strip_suffix("Reference"))
                .and_then(|stem| {
                    singular
                        .values()
                        .filter(|k| stem.ends_with(*k))
                        .max_by_key(|k| k.len())
                });
            if let Some(target) = reference {
                out.insert((format!("{dotted}.slug"), target.to_string()));
                continue;
            }
            expect(defs, singular, sub, &dotted, seen, out);
        }
    }
    let mut checked = 0;
    for d in embedded_kinds() {
        let mut expected = BTreeSet::new();
        expect(
            defs,
            &singular,
            &defs[d.definition],
            "",
            &mut Vec::new(),
            &mut expected,
        );
        let derived: BTreeSet<(String, String)> = d
            .references
            .iter()
            .map(|r| (r.path.to_string(), r.target.name().to_string()))
            .filter(|(path, _)| {
                !overrides::REFERENCE_NAMES.iter().any(|(name, _)| {
                    path.rsplit('.')
                        .next()
                        .unwrap_or(path)
                        .trim_end_matches("[]")
                        == *name
                })
            })
            .collect();
        assert_eq!(derived, expected, "{}", d.name);
        checked += expected.len();
    }
    assert!(checked > 40, "{checked} references");
    assert!(refs("SLO").contains(&("collection_ref.slug".into(), "Collection".into(), false)));
    assert!(refs("Monitor").contains(&("collection.slug".into(), "Collection".into(), false)));
    // A collection reference of type SERVICE names a service, not a Collection.
    let slo = kind("SLO").def();
    assert!(slo
        .references_in(&json!({"collection_ref": {"type": "SERVICE", "slug": "svc"}}))
        .is_empty());
    assert_eq!(
        slo.references_in(&json!({"collection_ref": {"type": "SIMPLE", "slug": "c"}}))[0].target,
        kind("Collection")
    );
}
