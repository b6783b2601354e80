//! Snapshots of what users read, with what varies from run to run replaced by a placeholder
//! (insta filters, as uv's `uv_snapshot!`): `cfgctl_snapshot!` takes what
//! `insta::assert_snapshot!` takes.

use std::sync::LazyLock;

/// Regex and replacement, applied in order to the value before it is compared.
static FILTERS: LazyLock<Vec<(String, String)>> = LazyLock::new(|| {
    let temp = std::env::temp_dir();
    let temp = temp.to_string_lossy();
    vec![
        // A `tempfile::tempdir()` (where a test writes its manifests, plans, exports).
        (
            format!(r"{}/\.tmp[A-Za-z0-9]+", escape(temp.trim_end_matches('/'))),
            "[DIR]".into(),
        ),
        // The emulator on 127.0.0.1:0 (a run against a `Tenant` already prints `[TARGET]`).
        (r"https?://127\.0\.0\.1:[0-9]+".into(), "[TARGET]".into()),
        // The emulator's `X-Request-Id`s are random.
        (r"request id [A-Za-z0-9_-]+".into(), "request id [ID]".into()),
        // RFC 3339 times (`created_at`, `updated_at`).
        (
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"
                .into(),
            "[TIMESTAMP]".into(),
        ),
        // How long an apply action took: `created Team/t (12 ms)`.
        (r"\([0-9]+ ms\)".into(), "([DURATION])".into()),
        // A git commit (the plan names the commit it was made from: this repository's, or a
        // test's own).
        (r"\b[0-9a-f]{40}\b".into(), "[COMMIT]".into()),
    ]
});

/// The filters as insta's settings take them.
pub fn filters() -> Vec<(&'static str, &'static str)> {
    FILTERS
        .iter()
        .map(|(regex, replacement)| (regex.as_str(), replacement.as_str()))
        .collect()
}

/// `text` as a regex that matches it literally.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `insta::assert_snapshot!` with the filters above: `cfgctl_snapshot!(run.stdout)`,
/// `cfgctl_snapshot!("name", text)`, `cfgctl_snapshot!(text, @"inline")`.
macro_rules! cfgctl_snapshot {
    ($($snapshot:tt)*) => {
        insta::with_settings!({filters => $crate::support::snapshot::filters()}, {
            insta::assert_snapshot!($($snapshot)*);
        })
    };
}
pub(crate) use cfgctl_snapshot;

#[test]
fn filters_replace_what_varies_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "plan for http://127.0.0.1:40321 in {}/teams.yaml\n\
         created Team/t (12 ms)\n\
         400 invalid team (code 3, request id 0a1B-c_d) (team.yaml:1)\n\
         created_at: 2026-11-22T21:20:37.123456Z, updated_at: 2026-11-22T21:20:37+01:00\n\
         kept: 127.0.0.2:80 (12 s) request id: x 2026-11-22\n",
        dir.path().display()
    );
    cfgctl_snapshot!(text, @r"
    plan for [TARGET] in [DIR]/teams.yaml
    created Team/t ([DURATION])
    400 invalid team (code 3, request id [ID]) (team.yaml:1)
    created_at: [TIMESTAMP], updated_at: [TIMESTAMP]
    kept: 127.0.0.2:80 (12 s) request id: x 2026-11-22
    ");
}

#[test]
fn escape_makes_a_path_literal() {
    assert_eq!(escape("/tmp/a.b+c"), r"/tmp/a\.b\+c");
}
