use super::*;

#[test]
fn a_runtime_description_checks_with_its_own_definitions() {
    let mut doc = swagger().clone();
    doc["definitions"]["configv1Bucket"]["properties"]["retention_tier"] =
        json!({"type": "string", "enum": ["HOT", "COLD"]});
    let newer = Description::from_json(&doc.to_string()).unwrap();
    let spec = json!({"slug": "b", "name": "B", "retention_tier": "COLD"});
    assert_eq!(newer.check_spec(Kind::named("Bucket"), &spec), vec![]);
    let wrong = json!({"slug": "b", "name": "B", "retention_tier": "WARM"});
    assert_eq!(newer.check_spec(Kind::named("Bucket"), &wrong).len(), 1);
    // The embedded one is unchanged and still refuses the field.
    assert_eq!(check_spec(Kind::named("Bucket"), &spec).len(), 1);
    // Its canonical form follows its own definitions (the field is an enum there: its
    // first value is the default and omitted).
    let hot = json!({"slug": "b", "name": "B", "retention_tier": "HOT"});
    assert_eq!(
        newer.canonical(Kind::named("Bucket"), &hot),
        json!({"slug": "b", "name": "B"})
    );
}

#[test]
fn runtime_descriptions_must_describe_every_kind() {
    assert!(matches!(
        Description::from_json("{"),
        Err(DescriptionError::Json(_))
    ));
    assert!(matches!(
        Description::from_json("{}"),
        Err(DescriptionError::NoDefinitions)
    ));
    let mut doc = swagger().clone();
    doc["definitions"]
        .as_object_mut()
        .unwrap()
        .shift_remove("configv1Team");
    // A description without a kind's definition does not describe that kind (a target of
    // an older or smaller API): the kind is unsupported there, not an error.
    assert!(Description::from_json(&doc.to_string()).is_ok());
    let mut doc = swagger().clone();
    doc["definitions"]["configv1Bucket"]["properties"]["tier"] =
        json!({"$ref": "#/definitions/Nowhere"});
    let e = Description::from_json(&doc.to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the definition of Bucket does not make a valid schema (a `$ref` to nothing?)"
    );
}

#[test]
fn embedded_swagger_describes_every_kind() {
    assert_eq!(swagger()["swagger"], "2.0");
    for def in crate::api::registry::embedded_kinds() {
        assert!(definition(def.kind).is_some(), "{}", def.definition);
        let path = format!("/api/v1/config/{}", def.path);
        assert!(swagger()["paths"].get(&path).is_some(), "{path}");
    }
}

#[test]
fn every_kind_has_a_checker() {
    for def in crate::api::registry::embedded_kinds() {
        let kind = def.kind;
        assert!(Description::embedded().checker(kind).is_some(), "{kind}");
    }
}

#[test]
fn a_valid_spec_has_no_problems() {
    let spec = json!({"slug": "b", "name": "B", "labels": {"team": "x"}});
    assert_eq!(check_spec(Kind::named("Bucket"), &spec), vec![]);
}

fn messages(kind: Kind, spec: Value) -> Vec<(String, String)> {
    check_spec(kind, &spec)
        .into_iter()
        .map(|p| (p.pointer, p.message))
        .collect()
}

#[test]
fn unknown_fields_with_suggestions() {
    let got = messages(
        Kind::named("Bucket"),
        json!({"slug": "b", "name": "B", "descripton": "x"}),
    );
    assert_eq!(
        got,
        vec![(
            "/descripton".to_string(),
            "unknown field `descripton` in the Bucket definition (did you mean `description`?)"
                .to_string()
        )]
    );
}

#[test]
fn nested_types_enums_and_read_only() {
    let got = messages(
        Kind::named("ConsumptionBudget"),
        json!({
            "slug": "b", "name": "B", "created_at": "2020-01-01T00:00:00Z",
            "thresholds": [{"action": "ALERT_LOUD", "volume": {"fixed_value": "12x"}}],
            "default_priority": "high"
        }),
    );
    assert_eq!(
        got,
        vec![
            ("/created_at".into(), "`created_at` is read-only: the server sets it".into()),
            ("/default_priority".into(), "`default_priority`: expected an integer, found a string".into()),
            ("/thresholds/0/action".into(), "`thresholds[0].action`: \"ALERT_LOUD\" is not one of ALERT_WARN, ALERT_CRITICAL, DROP".into()),
            ("/thresholds/0/volume/fixed_value".into(), "`thresholds[0].volume.fixed_value`: expected an integer (int64, written as a number or a string of digits), found \"12x\"".into()),
        ]
    );
}

#[test]
fn int64_accepts_numbers_and_digit_strings() {
    for v in [json!("1000"), json!(1000), json!("-5")] {
        let spec =
            json!({"slug": "b", "name": "B", "thresholds": [{"volume": {"fixed_value": v}}]});
        assert_eq!(messages(Kind::named("ConsumptionBudget"), spec), vec![]);
    }
}

#[test]
fn slug_and_name_required_except_singleton() {
    let got = messages(Kind::named("Team"), json!({"slug": "t"}));
    assert_eq!(
        got,
        vec![("".into(), "missing required field `name`".into())]
    );
    assert_eq!(
        messages(Kind::named("ResourcePools"), json!({"pools": []})),
        vec![]
    );
}

#[test]
fn editor_schema_compiles_and_accepts_mapping_dashboards() {
    let schema = manifest_schema();
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(&schema)
        .unwrap();
    let ok = json!({"api_version": "v1/config", "kind": "Dashboard",
        "spec": {"slug": "d", "name": "D", "dashboard_json": {"kind": "Dashboard"}}});
    assert!(v.is_valid(&ok));
    let bad = json!({"api_version": "v1/config", "kind": "Dashboard",
        "spec": {"slug": "d", "name": "D", "colour": "red"}});
    assert!(!v.is_valid(&bad));
    let bad_kind = json!({"api_version": "v1/config", "kind": "Widget", "spec": {}});
    assert!(!v.is_valid(&bad_kind));
}

#[test]
fn canonical_form_of_the_gateway() {
    let object = json!({
        "name": "R",
        "slug": "r",
        "mode": "ENABLED",
        "drop_nan_value": false,
        "filters": [{"name": "a", "value_glob": ""}],
        "conditional_rate_based_drop": {"enabled": true, "rate_limit_threshold": 50, "activated_drop_duration_secs": 60.0},
        "value_based_drop": {"enabled": false}
    });
    let got = canonical(Kind::named("DropRule"), &object);
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        r#"{"slug":"r","name":"R","filters":[{"name":"a"}],"conditional_rate_based_drop":{"enabled":true,"rate_limit_threshold":50.0,"activated_drop_duration_secs":60}}"#
    );
}

#[test]
fn canonical_int64_and_maps() {
    let object = json!({
        "slug": "b", "name": "B",
        "thresholds": [{"volume": {"fixed_value": 1000}}, {"instant_rate": {"fixed_value_per_sec": " 7"}}],
        "alert_action_config": {"labels": {"z": "1", "a": ""}}
    });
    let got = canonical(Kind::named("ConsumptionBudget"), &object);
    assert_eq!(got["thresholds"][0]["volume"]["fixed_value"], json!("1000"));
    assert_eq!(
        got["thresholds"][1]["instant_rate"]["fixed_value_per_sec"],
        json!("7")
    );
    assert_eq!(
        serde_json::to_string(&got["alert_action_config"]["labels"]).unwrap(),
        r#"{"a":"","z":"1"}"#
    );
}

#[test]
fn enum_defaults() {
    assert_eq!(
        enum_default(Kind::named("Dataset"), "configuration.type"),
        Some("TRACES")
    );
    assert_eq!(enum_default(Kind::named("Bucket"), "name"), None);
}

#[test]
fn the_full_swagger_describes_the_full_registry() {
    let ops = described_operations(swagger());
    for def in crate::api::registry::embedded_kinds() {
        assert_eq!(
            ops.get(&def.kind).copied().unwrap_or(Ops::NONE),
            def.full_ops,
            "{}",
            def.name
        );
    }
}

#[test]
fn the_seed_swagger_describes_only_the_seed_column() {
    let ops = described_operations(&swagger_for(Profile::Seed));
    for def in crate::api::registry::embedded_kinds() {
        assert_eq!(
            ops.get(&def.kind).copied().unwrap_or(Ops::NONE),
            def.seed_ops,
            "{}",
            def.name
        );
    }
}

#[test]
fn a_checker_over_the_reachable_definitions_checks_as_one_over_all() {
    let all = convert_definitions(Description::embedded().definitions(), Mode::Check);
    let errors = |v: &jsonschema::Validator, spec: &Value| -> Vec<String> {
        let mut e: Vec<String> = v
            .iter_errors(spec)
            .map(|e| format!("{} {:?}", e.instance_path().as_str(), e.kind()))
            .collect();
        e.sort();
        e
    };
    for def in crate::api::registry::embedded_kinds() {
        let kind = def.kind;
        let reachable = reachable_definitions(&all, def.definition).expect("plain `$ref`s");
        assert!(reachable.contains_key(def.definition), "{kind}");
        assert!(
            reachable.len() * 10 < all.len(),
            "{kind}: {}",
            reachable.len()
        );
        let (Some(few), Some(every)) = (
            compile_checker(kind, reachable),
            compile_checker(kind, all.clone()),
        ) else {
            panic!("{kind}: a checker does not compile");
        };
        let properties: Vec<String> = all[def.definition]["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let mut specs = vec![json!({}), json!({"name": 5, "nope": true})];
        for p in &properties {
            for wrong in [json!({"x": [1]}), json!("s"), json!([{"x": 1}]), json!(7)] {
                specs.push(json!({"name": "n", p.as_str(): wrong}));
            }
        }
        let mut differ = 0;
        for spec in &specs {
            let e = errors(&every, spec);
            assert_eq!(errors(&few, spec), e, "{kind}: {spec}");
            differ += usize::from(!e.is_empty());
        }
        // The specs do reach into the definitions (most of them are refused).
        assert!(differ * 2 > specs.len(), "{kind}");
    }
    // A `$ref` that names no definition by its plain name: no restriction.
    let mut odd = all.clone();
    odd.insert("Odd".into(), json!({"$ref": "other.json#/x"}));
    assert_eq!(reachable_definitions(&odd, "Odd"), None);
}

/// The embedded description as `cfgctl serve` serves it is recognised by its bytes, and
/// recognising it gives what reading it gives: the same operations, no newer field, and
/// bytes that read and write back as they are (so its hash is the one a read would make).
#[test]
fn the_embedded_description_as_served_is_known_by_its_bytes() {
    let served = serde_json::to_vec(&swagger_for(Profile::Full)).unwrap();
    let hash = blake3::hash(&served).to_hex().to_string();
    assert_eq!(
        SERVED_EMBEDDED_BLAKE3, hash,
        "the embedded description changed: set SERVED_EMBEDDED_BLAKE3 to {hash}"
    );
    let known = |bytes: &[u8]| is_served_embedded(&blake3::hash(bytes));
    assert!(known(&served));
    let read: Value = serde_json::from_slice(&served).unwrap();
    assert_eq!(serde_json::to_vec(&read).unwrap(), served);
    assert_eq!(served_embedded_operations(), described_operations(&read));
    assert!(crate::plan::newer::described_newer(read).is_empty());
    // What the emulator serves by default.
    let emulator = Description::shared_embedded()
        .for_profile(Profile::Full)
        .to_string();
    assert!(known(emulator.as_bytes()));
    // Anything else is read: another profile, a byte more.
    let seed = serde_json::to_vec(&swagger_for(Profile::Seed)).unwrap();
    assert!(!known(&seed));
    let mut more = served.clone();
    more.push(b' ');
    assert!(!known(&more));
}
