//! The settings file read: located problems, the schema and the typed file in agreement.

use super::*;

fn errors(text: &str) -> Vec<String> {
    match parse(Path::new("cfgctl.yaml"), text) {
        Ok(_) => vec![],
        Err(d) => d.iter().map(|d| d.to_string()).collect(),
    }
}

#[test]
fn full_file() {
    let s = parse(
        Path::new("cfgctl.yaml"),
        "prune: [\"Dashboard/*\"]\nexclude: [Bucket/legacy-*]\nmax_deletes: 3\nignore:\n  - {kind: Monitor, path: labels.generated_by}\n",
    )
    .unwrap();
    assert_eq!(s.prune.len(), 1);
    assert_eq!(s.exclude[0].as_str(), "Bucket/legacy-*");
    assert_eq!(s.max_deletes, 3);
    assert_eq!(
        s.ignore,
        vec![IgnoreRule {
            kind: Kind::named("Monitor"),
            path: "labels.generated_by".into()
        }]
    );
}

#[test]
fn empty_file_is_defaults() {
    assert_eq!(
        parse(Path::new("cfgctl.yaml"), "# nothing\n").unwrap(),
        Settings::default()
    );
}

#[test]
fn located_errors() {
    assert_eq!(
        errors("prune:\n  - Dashbord/*\nmax_delete: 3\n"),
        vec![
            "cfgctl.yaml:2:5: error: invalid settings file: `prune[0]`: pattern `Dashbord/*` names unknown kind `Dashbord` (did you mean `Dashboard`?)",
            "cfgctl.yaml:3:1: error: invalid settings file: unknown field `max_delete` (did you mean `max_deletes`?); expected prune, exclude, max_deletes, ignore, allow_literal_secrets, manage, environments, policy or secrets",
        ]
    );
    assert_eq!(
        errors("max_deletes: -1\n"),
        vec!["cfgctl.yaml:1:14: error: invalid settings file: `max_deletes` must be a whole number of 0 or more, found -1"]
    );
    assert_eq!(
        errors("ignore:\n  - {kind: Monitr, path: \"a..b\"}\n"),
        vec![
            "cfgctl.yaml:2:12: error: invalid settings file: `ignore[0].kind`: unknown kind `Monitr` (did you mean `Monitor`?)",
            "cfgctl.yaml:2:26: error: invalid settings file: `ignore[0].path`: \"a..b\" is not a dotted field path such as labels.generated_by",
        ]
    );
}

#[test]
fn the_schema_compiles_and_is_json_schema() {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap();
    assert!(jsonschema::meta::is_valid(&schema));
    assert_eq!(check::problems(&serde_json::json!({})), vec![]);
}

/// The schema and the typed file describe the same fields: a file with every field set
/// passes the schema, and at every mapping its keys are the schema's `properties`.
#[test]
fn the_schema_and_the_typed_file_agree() {
    use crate::config::environments::Scalar;
    use serde_json::Value;
    let file = SettingsFile {
        prune: vec!["Dashboard/*".into()],
        exclude: vec!["Bucket/legacy-*".into()],
        max_deletes: Some(3),
        ignore: vec![IgnoreEntry {
            kind: "Monitor".into(),
            path: "labels.a".into(),
        }],
        allow_literal_secrets: true,
        manage: vec![ManageEntry {
            pattern: "*/*".into(),
            mode: Mode::Observe,
        }],
        environments: [(
            "staging".to_string(),
            EnvironmentEntry {
                url: Some("https://x".into()),
                token_env: Some("T".into()),
                vars: [("a".to_string(), Scalar::Bool(true))].into(),
                overlay: Some("envs/staging".into()),
            },
        )]
        .into(),
        policy: Some("policy".into()),
        secrets: SecretsEntry {
            file_dirs: vec!["/run/secrets".into()],
        },
    };
    let value = serde_json::to_value(&file).unwrap();
    assert_eq!(check::problems(&value), vec![]);
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    fn walk(schema: &Value, node: &Value, value: &Value, at: &str) {
        let node = match node.get("$ref").and_then(Value::as_str) {
            Some(r) => schema.pointer(r.trim_start_matches('#')).unwrap(),
            None => node,
        };
        if let Some(props) = node.get("properties").and_then(Value::as_object) {
            let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
            assert_eq!(keys, props.keys().collect::<Vec<_>>(), "at {at}");
            for (name, prop) in props {
                walk(schema, prop, &value[name], &format!("{at}/{name}"));
            }
        }
        let each = node
            .get("patternProperties")
            .and_then(|p| p.as_object()?.values().next());
        for (name, v) in value.as_object().into_iter().flatten() {
            if let Some(each) = each.or(node.get("additionalProperties").filter(|a| a.is_object()))
            {
                walk(schema, each, v, &format!("{at}/{name}"));
            }
        }
        if let (Some(items), Some(values)) = (node.get("items"), value.as_array()) {
            assert!(!values.is_empty(), "at {at}");
            values
                .iter()
                .for_each(|v| walk(schema, items, v, &format!("{at}/0")));
        }
    }
    walk(&schema, &schema, &value, "");
    let read = parse(Path::new("cfgctl.yaml"), &value.to_string()).unwrap();
    assert_eq!(read.max_deletes, 3);
    assert_eq!(read.manage[0].mode, Mode::Observe);
    assert_eq!(
        read.secret_file_dirs,
        vec![std::path::PathBuf::from("/run/secrets")]
    );
}

/// An environment's name is the text written: a key YAML reads as another value (a number
/// in another spelling, null) is refused at the key, saying to quote it (red team E6).
#[test]
fn an_environment_name_is_the_text_written() {
    for (key, read) in [
        ("0x1", "1"),
        ("1_000", "1000"),
        ("~", "null"),
        ("1.0", "1"),
        ("prod", "prod"),
    ] {
        let text = format!("environments:\n  {key}: {{url: http://127.0.0.1:1}}\n");
        let found = errors(&text);
        if key == read {
            assert!(found.is_empty(), "{key}: {found:?}");
            continue;
        }
        assert_eq!(
            found,
            vec![format!("cfgctl.yaml:2:3: error: invalid settings file: the environment name `{key}` is read by YAML as `{read}`: quote it (\"{key}\")")],
            "{key}"
        );
    }
    let quoted = "environments:\n  \"0x1\": {url: http://127.0.0.1:1}\n  'prod': {url: http://127.0.0.1:2}\n";
    let read = parse(Path::new("cfgctl.yaml"), quoted).unwrap();
    assert_eq!(
        read.environments.keys().collect::<Vec<_>>(),
        ["0x1", "prod"]
    );
    assert!(errors("environments: {staging: {url: http://127.0.0.1:1}}\n").is_empty());
}

/// A safety guard is written as the number it is: YAML's other spellings of a number (a
/// float, an exponent, `_` separators, another base) and a tag are refused at the value
/// (red team E7).
#[test]
fn max_deletes_is_written_in_digits() {
    for v in [
        "1e3", "5.0", "3_000", "0b11", "0o17", "0x1F", "+5", "!foo 3",
    ] {
        assert_eq!(
            errors(&format!("max_deletes: {v}\n")),
            vec![format!("cfgctl.yaml:1:14: error: invalid settings file: `max_deletes` must be a whole number written in digits, such as 25, found `{v}`")],
            "{v}"
        );
    }
    assert!(errors("max_deletes: 30  # at most\n").is_empty());
    assert!(errors("{max_deletes: 7, prune: []}\n").is_empty());
    assert!(errors("max_deletes:\n  12\n").is_empty());
    assert_eq!(
        parse(Path::new("cfgctl.yaml"), "max_deletes: 0\n").map(|s| s.max_deletes),
        Ok(0)
    );
}

#[test]
fn every_field_checked_by_the_schema_keeps_its_located_message() {
    assert_eq!(
        errors("- a\n"),
        vec!["cfgctl.yaml:1:1: error: invalid settings file: the settings file must be a mapping with `prune`, `exclude`, `max_deletes`, `ignore`, `manage`, `environments`, `policy` or `secrets`"]
    );
    assert_eq!(
        errors("allow_literal_secrets: 1\nsecrets: {file_dirs: [\"\"], dirs: 1}\nprune: [1]\nmax_deletes: 5000000000\n"),
        vec![
            "cfgctl.yaml:1:24: error: invalid settings file: `allow_literal_secrets` must be true or false, found 1",
            "cfgctl.yaml:2:23: error: invalid settings file: `secrets.file_dirs[0]` must be a directory path, found \"\"",
            "cfgctl.yaml:2:28: error: invalid settings file: unknown field `secrets.dirs`; expected `file_dirs`",
            "cfgctl.yaml:3:9: error: invalid settings file: `prune[0]` must be a string such as \"Dashboard/team-a-*\"",
            "cfgctl.yaml:4:14: error: invalid settings file: `max_deletes` must be a whole number of 0 or more, found 5000000000",
        ]
    );
    assert_eq!(
        errors("environments:\n  a: {url: \" \", token_env: \"A-B\", vars: [], overlay: 1}\n  b: 3\nmanage: {}\nignore: [{kind: 1, path: x}]\n"),
        vec![
            "cfgctl.yaml:2:12: error: invalid settings file: `environments.a.url` must be an https:// (or, on loopback, http://) URL",
            "cfgctl.yaml:2:28: error: invalid settings file: `environments.a.token_env` must be the name of an environment variable (letters, digits, `_`)",
            "cfgctl.yaml:2:41: error: invalid settings file: `environments.a.vars` must be a mapping of names to strings, numbers or booleans",
            "cfgctl.yaml:2:54: error: invalid settings file: `environments.a.overlay` must be a directory",
            "cfgctl.yaml:3:6: error: invalid settings file: environment `b` must be a mapping with url, token_env, vars or overlay",
            "cfgctl.yaml:4:9: error: invalid settings file: `manage` must be a list of {match: KIND/SLUG-GLOB, mode: MODE}",
            "cfgctl.yaml:5:17: error: invalid settings file: `ignore[0].kind` must be a kind name such as Monitor, found 1",
        ]
    );
    // `secrets.file_dirs` is never the whole machine, nor an unexpanded `~` (red team E16).
    assert_eq!(
        errors("secrets: {file_dirs: [\"/\", \"~/x\", \"//\", /run/secrets]}\n"),
        vec![
            "cfgctl.yaml:1:23: error: invalid settings file: `secrets.file_dirs[0]` must name the directory your CI mounts secrets in: not `/` (every file of the machine would be a secret's source) and not starting with `~` (cfgctl does not expand it), found \"/\"",
            "cfgctl.yaml:1:28: error: invalid settings file: `secrets.file_dirs[1]` must name the directory your CI mounts secrets in: not `/` (every file of the machine would be a secret's source) and not starting with `~` (cfgctl does not expand it), found \"~/x\"",
            "cfgctl.yaml:1:35: error: invalid settings file: `secrets.file_dirs[2]` must name the directory your CI mounts secrets in: not `/` (every file of the machine would be a secret's source) and not starting with `~` (cfgctl does not expand it), found \"//\"",
        ]
    );
    // No `${…}` in cfgctl.yaml: one error at each, its value not checked (red team E22).
    assert_eq!(
        errors("prune: [\"${env:KIND}/*\"]\nenvironments:\n  s: {url: \"${env:URL}\", vars: {k: \"${env:K}\"}}\n"),
        vec![
            "cfgctl.yaml:1:9: error: invalid settings file: cfgctl.yaml is not substituted: `${…}` is read only in manifests (an environment's values go in its `vars:`, its token's variable in `token_env:`)",
            "cfgctl.yaml:3:12: error: invalid settings file: cfgctl.yaml is not substituted: `${…}` is read only in manifests (an environment's values go in its `vars:`, its token's variable in `token_env:`)",
        ]
    );
    // A mistyped scheme is found by `validate`, not first by a plan's connection.
    assert_eq!(
        errors("environments:\n  a: {url: \"htp://x.example.com\"}\n  b: {url: \"HTTPS://y.example.com\"}\n"),
        vec!["cfgctl.yaml:2:12: error: invalid settings file: `environments.a.url` must be an https:// (or, on loopback, http://) URL"]
    );
}

/// A key or value that looks like a placeholder of the schema's messages is printed as
/// written, never filled in.
#[test]
fn placeholders_in_the_file_are_text() {
    assert_eq!(
        errors("\"{known}\": 1\nmanage: [{match: \"*/*\", mode: \"{hint}\"}]\n"),
        vec![
            "cfgctl.yaml:1:1: error: invalid settings file: unknown field `{known}`; expected prune, exclude, max_deletes, ignore, allow_literal_secrets, manage, environments, policy or secrets",
            "cfgctl.yaml:2:31: error: invalid settings file: `manage[0].mode`: unknown mode `{hint}`; expected full, create-only, no-delete, observe",
        ]
    );
}

#[test]
fn manage_rules_first_match_wins() {
    let s = parse(
        Path::new("cfgctl.yaml"),
        "manage:\n  - {match: \"Dashboard/team-*\", mode: create-only}\n  - {match: \"*/*\", mode: no-delete}\n",
    )
    .unwrap();
    let dash = |slug: &str| {
        crate::api::registry::Address::new(Kind::named("Dashboard"), Some(slug.to_string()))
    };
    assert_eq!(s.mode(&dash("team-a")), Mode::CreateOnly);
    assert_eq!(s.mode(&dash("other")), Mode::NoDelete);
    assert_eq!(
        s.mode(&crate::api::registry::Address::new(
            Kind::named("ResourcePools"),
            None
        )),
        Mode::Full
    );
}

#[test]
fn manage_errors_are_located_with_hints() {
    assert_eq!(
        errors("manage:\n  - {match: \"Dashbord/x\", mode: create-once}\n  - {mach: \"Monitor/*\"}\n  - observe\n"),
        vec![
            "cfgctl.yaml:2:13: error: invalid settings file: `manage[0].match`: pattern `Dashbord/x` names unknown kind `Dashbord` (did you mean `Dashboard`?)",
            "cfgctl.yaml:2:33: error: invalid settings file: `manage[0].mode`: unknown mode `create-once` (did you mean `create-only`?); expected full, create-only, no-delete, observe",
            "cfgctl.yaml:3:6: error: invalid settings file: `manage[1]`: unknown field `mach` (did you mean `match`?); expected `match` and `mode`",
            "cfgctl.yaml:3:5: error: invalid settings file: `manage[1]` needs `match`, a KIND/SLUG-GLOB pattern",
            "cfgctl.yaml:3:5: error: invalid settings file: `manage[1]` needs `mode`: full, create-only, no-delete, observe",
            "cfgctl.yaml:4:5: error: invalid settings file: `manage[2]` must be a mapping {match: KIND/SLUG-GLOB, mode: MODE}",
        ]
    );
}
