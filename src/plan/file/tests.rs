use super::*;
use serde_json::json;

fn saved(changes: Value, guards: Value) -> String {
    json!({
        "format_version": 1, "target": "local:x",
        "summary": {"create": 0, "update": 0, "delete": 0, "upsert": 0, "unchanged": 4, "unsupported": 0},
        "changes": changes, "unmanaged": [], "warnings": [], "guards": guards
    })
    .to_string()
}

fn guards() -> Value {
    json!({"max_deletes": 25, "prune": ["Bucket/*"], "exclude": [], "declared_kinds": ["Bucket", "Team"]})
}

fn change(address: &str, action: &str, step: Value) -> Value {
    let (kind, slug) = address.split_once('/').unwrap();
    json!({"address": address, "kind": kind, "slug": slug, "action": action,
           "source": null, "fields": [], "depends_on": [], "reason": null, "step": step})
}

#[test]
fn addresses_round_trip() {
    assert_eq!(
        parse_address("Bucket/platform"),
        Some(Address::new(Kind::named("Bucket"), Some("platform".into())))
    );
    assert_eq!(
        parse_address("ResourcePools"),
        Some(Address::new(Kind::named("ResourcePools"), None))
    );
    assert_eq!(parse_address("ResourcePools/x"), None);
    assert_eq!(parse_address("Bucket"), None);
    assert_eq!(parse_address("Gadget/x"), None);
    assert_eq!(parse_address("Bucket/"), None);
}

#[test]
fn reads_what_it_writes() {
    let text = saved(two_changes(), guards());
    let plan = read_saved(&text).unwrap();
    assert_eq!(plan.target, "local:x");
    assert_eq!(plan.unchanged, 4);
    assert_eq!(plan.actions[1].depends_on, vec![0]);
    assert_eq!(plan.guard.max_deletes, 25);
    // And back: the same file, byte for byte, once summary and dependencies are derived.
    let again = serde_json::to_value(PlanFile::from_plan(&plan, true)).unwrap();
    let mut original: Value = serde_json::from_str(&text).unwrap();
    original["summary"] = json!({"create": 1, "update": 0, "delete": 1, "upsert": 0, "unchanged": 4, "unsupported": 0});
    original["changes"][1]["depends_on"] = json!(["Team/t"]);
    // A create's fields are its body's, listed when written.
    original["changes"][0]["fields"] = json!([
        {"path": "slug", "before": null, "after": "t"},
        {"path": "name", "before": null, "after": "T"},
    ]);
    // Written always; a file without them (an older cfgctl's) is read.
    original["observed"] = json!([]);
    original["orphaned"] = json!([]);
    original["policy"] = json!([]);
    original["review"] = json!({});
    // The risk summary too (this file has none): worked out from the plan.
    original["risk"] = serde_json::to_value(crate::plan::risk::summarize(&plan)).unwrap();
    assert_eq!(again["risk"]["deletes"][0]["address"], "Bucket/b");
    assert_eq!(again, original);
}

#[test]
fn a_saved_plan_with_its_risk_summary_is_read_and_a_bad_one_refused() {
    let plan = read_saved(&saved(two_changes(), guards())).unwrap();
    let mut written = Vec::new();
    crate::render::write_saved_plan(&mut written, &plan).unwrap();
    let text = String::from_utf8(written).unwrap();
    assert!(text.contains(r#""risk":{"counts":"#), "{text}");
    assert_eq!(read_saved(&text).unwrap().actions, plan.actions);
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["risk"]["surprise"] = json!(1);
    assert!(
        refused(&doc.to_string()).contains("surprise"),
        "{}",
        refused(&doc.to_string())
    );
}

fn refused(text: &str) -> String {
    read_saved(text).unwrap_err().to_string()
}

#[test]
fn refuses_unknown_fields_everywhere() {
    let mut doc: Value = serde_json::from_str(&saved(json!([]), guards())).unwrap();
    doc["extra"] = json!(1);
    assert!(refused(&doc.to_string()).contains("unknown field `extra`"));
    let mut g = guards();
    g["max_delete"] = json!(1000);
    assert!(refused(&saved(json!([]), g)).contains("unknown field `max_delete`"));
}

#[test]
fn refuses_a_display_plan_and_missing_guards() {
    let mut doc: Value = serde_json::from_str(&saved(json!([]), guards())).unwrap();
    doc.as_object_mut().unwrap().remove("guards");
    assert!(matches!(
        read_saved(&doc.to_string()),
        Err(SavedPlanError::NotSaved)
    ));
    let no_step = json!([{"address": "Team/t", "kind": "Team", "slug": "t", "action": "create",
        "source": null, "fields": [], "depends_on": [], "reason": null}]);
    assert!(matches!(
        read_saved(&saved(no_step, guards())),
        Err(SavedPlanError::NotSaved)
    ));
}

#[test]
fn refuses_updates_and_deletes_without_fingerprints() {
    let del = change(
        "Bucket/b",
        "delete",
        json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": null}),
    );
    assert!(refused(&saved(json!([del]), guards())).contains("without the fingerprint"));
    let upd = change(
        "Bucket/b",
        "update",
        json!({"depends_on_steps": [], "intended": null, "body": {"slug": "b"}, "fingerprint": null}),
    );
    assert!(refused(&saved(json!([upd]), guards())).contains("without the fingerprint"));
}

#[test]
fn refuses_what_does_not_fit() {
    let step = json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": "0123456789abcdef0123456789abcdef"});
    // A delete outside the prune scope.
    let del = change("Team/t", "delete", step.clone());
    assert!(refused(&saved(json!([del]), guards())).contains("outside the saved prune scope"));
    // A dependency that is not an earlier step.
    let mut later = change("Bucket/b", "delete", step.clone());
    later["step"]["depends_on_steps"] = json!([0]);
    assert!(refused(&saved(json!([later]), guards())).contains("not an earlier step"));
    // A body for another resource than the address.
    let other = change(
        "Bucket/b",
        "create",
        json!({"depends_on_steps": [], "intended": null, "body": {"slug": "c"}, "fingerprint": null}),
    );
    assert!(refused(&saved(json!([other]), guards())).contains("another slug"));
    // An operation the kind does not have; a slug that is no path segment.
    let dots = change("Bucket/..", "delete", step);
    assert!(refused(&saved(json!([dots]), guards())).contains("path segment"));
    let mut kind = change(
        "Bucket/b",
        "create",
        json!({"depends_on_steps": [], "intended": null, "body": {"slug": "b"}, "fingerprint": null}),
    );
    kind["kind"] = json!("Team");
    assert!(refused(&saved(json!([kind]), guards())).contains("do not match"));
}

/// A fingerprint this cfgctl does not write (an older one's 64-bit FNV, or a made-up one) is
/// refused with the file, not compared and reported as a changed target.
#[test]
fn refuses_a_fingerprint_of_another_form() {
    for fp in ["0123456789abcdef", "f", "0123456789ABCDEF0123456789ABCDEF"] {
        let step =
            json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": fp});
        let del = change("Bucket/b", "delete", step);
        let why = refused(&saved(json!([del]), guards()));
        assert!(
            why.contains("a fingerprint this cfgctl does not write"),
            "{fp}: {why}"
        );
    }
}

#[test]
fn guards_are_recomputed_not_trusted() {
    let step = |fp: &str| json!({"depends_on_steps": [], "intended": null, "body": null, "fingerprint": fp});
    let mut g = guards();
    g["max_deletes"] = json!(1);
    g["declared_kinds"] = json!(["Team"]);
    let plan = read_saved(&saved(
        json!([
            change("Bucket/a", "delete", step(&"1".repeat(32))),
            change("Bucket/b", "delete", step(&"2".repeat(32)))
        ]),
        g,
    ))
    .unwrap();
    let refusals = super::super::refusals(&plan, false, false);
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(refusals[0].contains("more than max_deletes (1)"));
    assert!(refusals[1].contains("no manifest declares any Bucket"));
    assert_eq!(super::super::refusals(&plan, true, false).len(), 1);
}

#[test]
fn version_and_garbage() {
    assert!(matches!(
        read_saved("{\"format_version\": 2}"),
        Err(SavedPlanError::Version(_))
    ));
    assert!(matches!(read_saved("[]"), Err(SavedPlanError::Invalid(_))));
    assert!(matches!(
        read_saved("nope"),
        Err(SavedPlanError::Invalid(_))
    ));
}

#[test]
fn a_create_shows_its_object_and_an_update_its_saved_fields() {
    let mut update = change(
        "Team/u",
        "update",
        json!({"depends_on_steps": [], "intended": null,
        "body": {"slug": "u", "name": "New"}, "fingerprint": "0123456789abcdef0123456789abcdef"}),
    );
    update["fields"] = json!([{"path": "name", "before": "Old", "after": "New"}]);
    let create_t = || {
        change(
            "Team/t",
            "create",
            json!({"depends_on_steps": [], "intended": null,
            "body": {"slug": "t", "name": "T"}, "fingerprint": null}),
        )
    };
    let mut create = create_t();
    // What the file shows for a create is not kept: its object is what is sent and shown.
    create["fields"] = json!([{"path": "name", "before": null, "after": "Something else"}]);
    let text = saved(json!([create, update]), guards());
    for text in [text.clone(), format!("\u{feff}{text}")] {
        let from_text = read_saved(&text).unwrap();
        assert!(from_text.actions[0].fields.is_empty());
        assert_eq!(
            from_text.actions[0].shown_fields()[1].after,
            Some(json!("T"))
        );
        assert_eq!(
            from_text.actions[1].fields,
            vec![FieldChange {
                path: "name".into(),
                before: Some(json!("Old")),
                after: Some(json!("New")),
            }]
        );
    }
    // A create's fields are still checked to be fields.
    let mut bad = create_t();
    bad["fields"] = json!([{"path": "name", "color": "red"}]);
    assert!(
        refused(&saved(json!([bad]), guards()))
            .contains("changes[0] (Team/t): fields: unknown field `color`"),
        "{}",
        refused(&saved(json!([bad]), guards()))
    );
}

/// The same text read whole and read as a stream gives the same plan or the same refusal.
fn both(text: &str) -> Result<Plan, String> {
    let whole = read_saved(text).map_err(|e| e.to_string());
    // A reader that hands out a few bytes at a time: nothing may depend on where it stops.
    let small = std::io::BufReader::with_capacity(7, text.as_bytes());
    let streamed = read_saved_from(small).map_err(|e| e.to_string());
    // serde_json's two readers may place an error one column apart.
    let unplaced = |r: &Result<Plan, String>| {
        let text = format!("{r:?}");
        text.split(" at line ")
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        unplaced(&whole),
        unplaced(&streamed),
        "the stream and the text disagree"
    );
    whole
}

/// A create of `Team/t`, then a delete of `Bucket/b` after it.
fn two_changes() -> Value {
    json!([
        change(
            "Team/t",
            "create",
            json!({"depends_on_steps": [], "intended": null,
            "body": {"slug": "t", "name": "T"}, "fingerprint": null})
        ),
        change(
            "Bucket/b",
            "delete",
            json!({"depends_on_steps": [0], "intended": null,
            "body": null, "fingerprint": "0123456789abcdef0123456789abcdef"})
        ),
    ])
}

/// The document's fields in the given order (`serde_json`'s maps keep insertion order).
fn reordered(text: &str, order: &[&str]) -> String {
    let doc: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
    let mut out = serde_json::Map::new();
    for k in order {
        if let Some(v) = doc.get(*k) {
            out.insert((*k).to_string(), v.clone());
        }
    }
    assert_eq!(out.len(), doc.len());
    Value::Object(out).to_string()
}

#[test]
fn a_stream_reads_what_the_text_reads() {
    let text = saved(two_changes(), guards());
    let plan = both(&text).unwrap();
    assert_eq!(plan.actions.len(), 2);
    assert_eq!(
        plan.actions[0].body.as_deref(),
        Some(&json!({"slug": "t", "name": "T"}))
    );
    both(&format!("\u{feff}{text}")).unwrap();
    let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&text).unwrap());
    assert_eq!(
        format!("{:?}", both(&pretty.unwrap()).unwrap()),
        format!("{plan:?}")
    );
    // Refusals: the same message either way.
    for bad in [
        "",
        "nope",
        "[]",
        "{\"format_version\": 2}",
        "{\"format_version\": 1}",
        &text[..text.len() / 2],
        &format!("{text} {{}}"),
        &text.replace("\"Bucket/b\"", "\"Bucket/b/c\""),
        &saved(json!([{"address": "Team/t"}]), guards()),
    ] {
        assert!(both(bad).is_err(), "{bad}");
    }
}

#[test]
fn fields_in_any_order_read_the_same() {
    let text = saved(two_changes(), guards());
    let plan = format!("{:?}", both(&text).unwrap());
    // `jq -S` order (changes before format_version, guards before summary), and the reverse.
    let sorted = [
        "changes",
        "format_version",
        "guards",
        "summary",
        "target",
        "unmanaged",
        "warnings",
    ];
    let mut reverse = sorted;
    reverse.reverse();
    for order in [sorted, reverse] {
        let moved = reordered(&text, &order);
        assert_eq!(format!("{:?}", both(&moved).unwrap()), plan, "{order:?}");
    }
    // A newer file gets the version message even when its changes come first (and do not
    // read as this version's).
    let mut newer: Value = serde_json::from_str(&text).unwrap();
    newer["format_version"] = json!(2);
    newer["changes"] = json!([{"what": "a field this version does not know"}]);
    let newer = reordered(&newer.to_string(), &sorted);
    assert!(both(&newer)
        .unwrap_err()
        .contains("format_version 2 is not supported"));
    // The delete scope is checked once the guards are known, wherever they are.
    let mut g = guards();
    g["prune"] = json!(["Team/*"]);
    let out_of_scope = reordered(&saved(two_changes(), g), &sorted);
    assert!(both(&out_of_scope)
        .unwrap_err()
        .contains("changes[1] (Bucket/b): a delete outside the saved prune scope"));
}

#[test]
fn a_field_twice_unknown_or_missing_is_refused() {
    let text = saved(two_changes(), guards());
    let twice = text.replacen("{", "{\"target\": \"local:y\", ", 1);
    assert!(both(&twice)
        .unwrap_err()
        .contains("duplicate field `target`"));
    let unknown = text.replacen("{", "{\"extra\": 1, ", 1);
    assert!(both(&unknown)
        .unwrap_err()
        .contains("unknown field `extra`"));
    for field in ["target", "summary", "changes", "unmanaged", "warnings"] {
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        doc.as_object_mut().unwrap().remove(field);
        let refused = both(&doc.to_string()).unwrap_err();
        assert!(
            refused.contains(&format!("missing field `{field}`")),
            "{refused}"
        );
    }
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc.as_object_mut().unwrap().remove("guards");
    assert!(both(&doc.to_string())
        .unwrap_err()
        .contains("not a saved plan"));
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(512))]
    /// A saved plan after a hostile edit (a byte replaced, inserted or deleted), its fields in
    /// the written or in sorted order: the stream reader and the text reader agree (`both`).
    #[test]
    fn the_readers_agree_after_an_edit(
        sorted in proptest::bool::ANY,
        at in proptest::prelude::any::<proptest::sample::Index>(),
        edit in 0u8..3,
        byte in proptest::sample::select(b"{}[],:\"\\ 0a-/\n".to_vec()),
    ) {
        let mut update = change(
            "Team/u",
            "update",
            json!({"depends_on_steps": [0], "intended": null,
            "body": {"slug": "u", "name": "New \"quoted\" \u{e9}"}, "fingerprint": "0123456789abcdef0123456789abcdef"}),
        );
        update["fields"] = json!([{"path": "name", "before": "Old", "after": "New"}]);
        let text = saved(json!([two_changes()[0].clone(), update, two_changes()[1].clone()]), guards());
        let text = if sorted {
            reordered(&text, &["changes", "format_version", "guards", "summary", "target", "unmanaged", "warnings"])
        } else {
            text
        };
        proptest::prop_assert!(both(&text).is_ok(), "the unedited plan reads");
        let mut bytes = text.into_bytes();
        let i = at.index(bytes.len());
        match edit {
            0 => bytes[i] = byte,
            1 => bytes.insert(i, byte),
            _ => { bytes.remove(i); }
        }
        if let Ok(text) = String::from_utf8(bytes) {
            let _ = both(&text);
        }
    }
}

#[test]
fn the_stream_reader_knows_every_field_the_writer_writes() {
    // The stream reader walks the file's fields itself: they must be `PlanFile`'s, in order.
    let plan = read_saved(&saved(two_changes(), guards())).unwrap();
    let written = serde_json::to_value(PlanFile::from_plan(&plan, true)).unwrap();
    let keys: Vec<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, read::FIELDS);
}

#[test]
fn a_saved_plan_records_its_environment_and_the_seal_covers_it() {
    let mut g = guards();
    g["environment"] = json!("staging");
    let text = saved(two_changes(), g);
    let mut plan = read_saved(&text).unwrap();
    assert_eq!(plan.guard.environment.as_deref(), Some("staging"));
    // Written back where it was read, and by the stream reader alike.
    let again = serde_json::to_value(PlanFile::from_plan(&plan, true)).unwrap();
    assert_eq!(again["guards"]["environment"], "staging");
    assert_eq!(
        both(&text).unwrap().guard.environment,
        plan.guard.environment
    );
    // The seal covers it: another environment (or none) breaks it.
    let key = [9u8; 32];
    plan.guard.seal = Some(plan.guard.seal_with("local:x", &key).to_hex().to_string());
    assert!(plan.guard.is_sealed("local:x", &key));
    let mut sealed = serde_json::to_value(PlanFile::from_plan(&plan, true)).unwrap();
    sealed["guards"]["environment"] = json!("prod");
    let edited = read_saved(&sealed.to_string()).unwrap();
    assert_eq!(edited.guard.environment.as_deref(), Some("prod"));
    assert!(!edited.guard.is_sealed("local:x", &key));
    plan.guard.environment = None;
    assert!(!plan.guard.is_sealed("local:x", &key));
    // An empty name is no environment's.
    let mut g = guards();
    g["environment"] = json!(" ");
    assert!(refused(&saved(json!([]), g)).contains("guards.environment: an empty name"));
}

#[test]
fn a_plan_without_environments_is_written_and_sealed_as_before() {
    let plan = read_saved(&saved(two_changes(), guards())).unwrap();
    assert_eq!(plan.guard.environment, None);
    let written = serde_json::to_value(PlanFile::from_plan(&plan, true)).unwrap();
    assert!(written["guards"].get("environment").is_none(), "{written}");
    // The seal of a plan without environments is what it was before they existed: the
    // guards' fields alone (a saved plan of an older cfgctl still verifies).
    let key = [3u8; 32];
    let mut h = blake3::Hasher::new_keyed(&key);
    let mut field = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"saved plan guards");
    field(b"local:x");
    field(&25u32.to_le_bytes());
    for (what, patterns) in [("prune", vec!["Bucket/*"]), ("exclude", vec![])] {
        field(what.as_bytes());
        field(&(patterns.len() as u64).to_le_bytes());
        for p in patterns {
            field(p.as_bytes());
        }
    }
    field(b"declared");
    field(&2u64.to_le_bytes());
    field(b"Bucket");
    field(b"Team");
    field(b"manage");
    field(&0u64.to_le_bytes());
    assert_eq!(plan.guard.seal_with("local:x", &key), h.finalize());
}

#[test]
fn apply_file_is_held_to_the_environment_it_was_made_for() {
    use crate::plan::{refuse_other_environment, EnvironmentRefusal};
    let envs = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    // No --env: the plan's own environment (or its bare target), either way.
    assert_eq!(refuse_other_environment(Some("staging"), &[]), None);
    assert_eq!(refuse_other_environment(None, &[]), None);
    assert_eq!(
        refuse_other_environment(Some("staging"), &envs(&["staging"])),
        None
    );
    let other = refuse_other_environment(Some("staging"), &envs(&["prod"])).unwrap();
    assert_eq!(
        other.to_string(),
        "the saved plan was made for the environment `staging`, not `prod`: nothing was changed; \
         make a plan for `prod` with `cfgctl plan --env prod --out FILE`"
    );
    let none = refuse_other_environment(None, &envs(&["prod"])).unwrap();
    assert!(
        matches!(&none, EnvironmentRefusal::NoneSaved { requested } if requested == "prod"),
        "{none}"
    );
    assert!(
        none.to_string().contains("apply it without --env"),
        "{none}"
    );
    // A saved plan is one environment's, even when the other one asked for is its own.
    let several = refuse_other_environment(Some("staging"), &envs(&["prod", "staging"])).unwrap();
    assert_eq!(
        several.to_string(),
        "a saved plan is for one environment (`staging`), but 2 were asked for: nothing was changed"
    );
    let several = refuse_other_environment(None, &envs(&["prod", "staging"])).unwrap();
    assert!(
        several
            .to_string()
            .starts_with("a saved plan is for one environment (this one records none), but 2"),
        "{several}"
    );
    // A hostile name in a file prints inert.
    let hostile = refuse_other_environment(Some("a\n::error::x"), &envs(&["prod"])).unwrap();
    assert!(!hostile.to_string().contains('\n'), "{hostile}");
}
