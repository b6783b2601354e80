use super::*;
use crate::api::registry::Kind;

#[test]
fn references_are_whole_values_of_two_forms() {
    assert_eq!(parse("${env:SLACK_URL}"), Some(SecretRef::Env("SLACK_URL")));
    assert_eq!(
        parse("${file:secrets/pd.txt}"),
        Some(SecretRef::File("secrets/pd.txt"))
    );
    for literal in [
        "https://hooks.slack.com/x",
        "${env:}",
        "${vault:x}",
        "x${env:A}",
        "${env:A B}",
        "**REDACTED**",
    ] {
        assert_eq!(parse(literal), None, "{literal}");
    }
}

#[test]
fn variables_for_export_are_upper_snake_case() {
    let a = Address::new(Kind::named("Notifier"), Some("on-call".into()));
    assert_eq!(
        variable_for(&a, "slack.api_url"),
        "NOTIFIER_ON_CALL_SLACK_API_URL"
    );
    let e = Address::new(Kind::named("ExternalConnection"), Some("x".into()));
    assert_eq!(
        variable_for(&e, "a[0].token"),
        "EXTERNAL_CONNECTION_X_A_0_TOKEN"
    );
}

/// Red team D28: slugs that fold to one name (`col-x`, `col_x`, `Col-X`) never share a
/// variable; a slug that folds without loss keeps today's name.
#[test]
fn slugs_that_fold_alike_get_distinct_variables() {
    let kind = Kind::named("Notifier");
    let names: Vec<String> = ["col-x", "col_x", "Col-X", "col--x"]
        .iter()
        .map(|s| variable_for(&Address::new(kind, Some((*s).into())), "slack.api_url"))
        .collect();
    assert_eq!(names[0], "NOTIFIER_COL_X_SLACK_API_URL");
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len(), "{names:?}");
    for n in &names {
        assert!(
            n.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
            "{n}"
        );
    }
}

#[test]
fn shown_masked_whole_or_inside_an_object() {
    let kind = Kind::named("Notifier");
    let f = crate::plan::normalize::FieldChange {
        path: "slack".into(),
        before: None,
        after: Some(serde_json::json!({"api_url": "${env:X}", "channel": "#c"})),
    };
    let m = crate::plan::normalize::secret::mask(kind, &f).unwrap();
    assert_eq!(
        m.after,
        Some(serde_json::json!({"api_url": "(sensitive)", "channel": "#c"}))
    );
    let f = crate::plan::normalize::FieldChange {
        path: "slack.api_url".into(),
        before: Some("(sensitive value changed)".into()),
        after: Some("${env:X}".into()),
    };
    let m = crate::plan::normalize::secret::mask(kind, &f).unwrap();
    assert_eq!(m.after, Some(Value::String(CHANGED.into())));
    let f = crate::plan::normalize::FieldChange {
        path: "slack.channel".into(),
        before: None,
        after: Some("#c".into()),
    };
    assert!(crate::plan::normalize::secret::mask(kind, &f).is_none());
}

/// R4-10: a token whose file cannot be written at the end is never lost silently: it goes to
/// a new private file in the temporary directory, and the error says where. (The only test of
/// this process that keeps created tokens.)
#[test]
fn a_token_the_file_cannot_take_is_written_elsewhere_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    open_token_file(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
    // A read-only handle in place of the file: every write to it fails.
    {
        let mut open = TOKEN_FILE.lock().unwrap();
        open.as_mut().unwrap().file = std::fs::File::open(&path).unwrap();
    }
    let kind = crate::api::registry::kinds()
        .into_iter()
        .map(|d| d.kind)
        .find(|k| answers_secrets(*k))
        .expect("a kind that answers a token");
    let def = kind.def();
    let field = def
        .secrets
        .iter()
        .find(|s| def.server_owned.contains(*s))
        .unwrap();
    let mut answer = serde_json::json!({"slug": "ci"});
    let mut at = &mut answer;
    let parts: Vec<&str> = field.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        at[*part] = if i + 1 == parts.len() {
            serde_json::json!("tok-r4-10-kept-elsewhere")
        } else {
            serde_json::json!({})
        };
        at = &mut at[*part];
    }
    let address = crate::api::registry::Address::new(kind, Some("ci".into()));
    keep_created(kind, &address, &answer);
    assert_eq!(created().len(), 1, "{answer}");
    let err = close_token_file(true).unwrap_err();
    let TokenFileError::Elsewhere { fallback, .. } = &err else {
        panic!("{err}");
    };
    let shown = err.to_string();
    assert!(
        shown.contains("could not be written to")
            && shown.contains(&fallback.display().to_string()),
        "{shown}"
    );
    assert!(!shown.contains("tok-r4-10"), "{shown}");
    let kept = std::fs::read_to_string(fallback).unwrap();
    assert!(kept.contains("tok-r4-10-kept-elsewhere"), "{kept}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(fallback).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    std::fs::remove_file(fallback).unwrap();
}
