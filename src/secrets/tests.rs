use super::*;
use crate::registry::Kind;

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
