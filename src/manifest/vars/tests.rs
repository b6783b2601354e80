use serde_json::json;

use crate::manifest::{load_dir_for, Loaded};

const SETTINGS: &str =
    "environments:\n  staging:\n    vars: {threshold: 50000, on: true, region: eu, name: Drop}\n";

pub(in crate::manifest) fn load_env(
    files: &[(&str, &str)],
    env: Option<&str>,
) -> (tempfile::TempDir, Loaded) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let loaded = load_dir_for(dir.path(), env).unwrap();
    (dir, loaded)
}

pub(in crate::manifest) fn messages(loaded: &Loaded, dir: &tempfile::TempDir) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .map(|d| {
            d.to_string()
                .replace(&format!("{}/", dir.path().display()), "")
        })
        .collect()
}

fn drop_rule(body: &str) -> String {
    format!("api_version: v1/config\nkind: DropRule\nspec:\n{body}")
}

#[test]
fn typed_quoted_and_textual_substitution() {
    let rule = drop_rule(
        "  slug: drop-${var:region}\n  name: \"${var:name}\"\n  mode: ENABLED\n  filters:\n    - {name: env, value_glob: \"$${literal}-${var:threshold}\"}\n  conditional_rate_based_drop:\n    enabled: ${var:on}\n    rate_limit_threshold: ${var:threshold}\n    activated_drop_duration_secs: 600\n",
    );
    let (d, loaded) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("r.yaml", &rule)],
        Some("staging"),
    );
    assert_eq!(messages(&loaded, &d), Vec::<String>::new());
    let spec = &loaded.manifests[0].spec;
    assert_eq!(spec["slug"], json!("drop-eu"), "inside a string: textual");
    assert_eq!(spec["name"], json!("Drop"), "quoted: a string");
    assert_eq!(
        spec["filters"][0]["value_glob"],
        json!("${literal}-50000"),
        "`$${{` escapes"
    );
    let drop = &spec["conditional_rate_based_drop"];
    assert_eq!(
        drop["enabled"],
        json!(true),
        "plain whole value: the variable's type"
    );
    assert_eq!(drop["rate_limit_threshold"], json!(50000));
}

#[test]
fn quoted_whole_value_is_a_string() {
    let rule = drop_rule(
        "  slug: r\n  name: R\n  mode: ENABLED\n  conditional_rate_based_drop:\n    enabled: '${var:on}'\n",
    );
    let (_d, loaded) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("r.yaml", &rule)],
        Some("staging"),
    );
    let shown: Vec<String> = loaded.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("r.yaml:8:14: error: DropRule/r:"),
        "{shown:?}"
    );
    assert!(
        shown[0].contains("boolean"),
        "the quoted `true` is a string: {shown:?}"
    );
}

#[test]
fn undefined_variable_is_located_and_names_the_environment() {
    let rule = drop_rule("  slug: r-${var:regon}\n  name: R\n  mode: ENABLED\n");
    let (d, loaded) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("r.yaml", &rule)],
        Some("staging"),
    );
    assert_eq!(
        messages(&loaded, &d),
        vec!["r.yaml:4:11: error: undefined variable `regon` in environment `staging` (did you mean `region`?)"]
    );
}

#[test]
fn a_variable_without_an_environment() {
    let rule = drop_rule("  slug: r\n  name: ${var:name}\n  mode: ENABLED\n");
    let (d, loaded) = load_env(&[("r.yaml", &rule)], None);
    assert_eq!(
        messages(&loaded, &d),
        vec!["r.yaml:5:9: error: `${var:name}` needs an environment: cfgctl.yaml declares none (docs/environments.md)"]
    );
    let (d, loaded) = load_env(&[("cfgctl.yaml", SETTINGS), ("r.yaml", &rule)], None);
    assert_eq!(
        messages(&loaded, &d),
        vec!["r.yaml:5:9: error: `${var:name}` needs an environment: none is selected (`--env NAME`)"]
    );
}

#[test]
fn json_strings_are_strings_and_located() {
    let rule = "{\"api_version\": \"v1/config\", \"kind\": \"DropRule\",\n \"spec\": {\"slug\": \"${var:region}\", \"mode\": \"ENABLED\",\n  \"name\": \"x ${var:nope}\"}}";
    let (d, loaded) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("r.json", rule)],
        Some("staging"),
    );
    assert_eq!(
        messages(&loaded, &d),
        vec!["r.json:3:14: error: undefined variable `nope` in environment `staging` (did you mean `name`?)"]
    );
    let (_d, loaded) = load_env(
        &[
            ("cfgctl.yaml", SETTINGS),
            ("r.json", &rule.replace("x ${var:nope}", "${var:threshold}")),
        ],
        Some("staging"),
    );
    let spec = &loaded.manifests[0].spec;
    assert_eq!(spec["slug"], json!("eu"));
    assert_eq!(
        spec["name"],
        json!("50000"),
        "a JSON string is quoted: a string"
    );
}

#[test]
fn references_outside_secret_fields_resolve_at_load_and_secret_fields_keep_them() {
    let files = [
        ("desc.txt", "from a file\n"),
        (
            "n.yaml",
            "api_version: v1/config\nkind: Notifier\nspec:\n  slug: on-call\n  name: ${file:desc.txt}\n  slack:\n    api_url: ${env:SLACK_URL}\n    channel: '#on-call'\n",
        ),
        ("m.yaml", "api_version: v1/config\nkind: Team\nspec: {slug: t, name: \"${env:CFGCTL_ENVLOAD_TEST_UNSET}\"}\n"),
    ];
    let (d, loaded) = load_env(&files, None);
    assert_eq!(
        messages(&loaded, &d),
        vec!["m.yaml:3:24: error: cannot resolve `${env:CFGCTL_ENVLOAD_TEST_UNSET}`: environment variable CFGCTL_ENVLOAD_TEST_UNSET is not set"]
    );
    let n = loaded
        .manifests
        .iter()
        .find(|m| m.spec["slug"] == "on-call")
        .unwrap();
    assert_eq!(n.spec["name"], json!("from a file"));
    assert_eq!(
        n.spec["slack"]["api_url"],
        json!("${env:SLACK_URL}"),
        "a secret stays a reference"
    );
    assert!(
        loaded.resolved.iter().any(|r| r.token == "${file:desc.txt}"
            && r.source.starts_with("file:")
            && r.source.ends_with("desc.txt")
            && r.hash == *blake3::hash(b"from a file").as_bytes()),
        "what the load read counts among what it resolved: {:?}",
        loaded.resolved
    );
}

#[test]
fn files_without_references_read_the_fast_way_and_unchanged() {
    let team = "api_version: v1/config\nkind: Team\nspec: {slug: t, name: \"costs $5 {a}\"}\n";
    let (_d, loaded) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("t.yaml", team)],
        Some("staging"),
    );
    assert_eq!(loaded.diagnostics, vec![]);
    assert_eq!(loaded.manifests[0].spec["name"], json!("costs $5 {a}"));
    assert!(
        loaded.manifests[0].spans.is_empty(),
        "read by the fast reader"
    );
}

#[test]
fn other_dollar_braces_are_text() {
    let team =
        "api_version: v1/config\nkind: Team\nspec: {slug: t, name: \"${HOME} and $${var:x}\"}\n";
    let (_d, loaded) = load_env(&[("t.yaml", team)], None);
    assert_eq!(loaded.diagnostics, vec![]);
    assert_eq!(
        loaded.manifests[0].spec["name"],
        json!("${HOME} and ${var:x}")
    );
}

/// Substitution on the block reader's values (no positions) against substitution on the
/// located reader's: the same manifests, variables used, sources and problems, for plain,
/// quoted, flow and block values, typed and textual, escaped, `${file:…}`, secret fields, and
/// a problem (which reads the file located). The fast way takes the plain ones.
#[test]
fn substitution_without_positions_loads_as_the_located_way() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.txt"), "from-file\n").unwrap();
    let vars: std::collections::BTreeMap<String, crate::config::environments::Scalar> = [
        (
            "region",
            crate::config::environments::Scalar::String("eu".into()),
        ),
        (
            "threshold",
            crate::config::environments::Scalar::Number(50000.into()),
        ),
        ("on", crate::config::environments::Scalar::Bool(true)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let env = crate::config::environments::Environment {
        name: "staging".into(),
        url: None,
        token_env: None,
        vars,
        overlay: None,
        overlay_pos: crate::util::yaml::Pos::new(1, 1),
    };
    let ctx = super::Context {
        env: Some(&env),
        declared: true,
        files: None,
        tokens: &[],
        read_document: None,
    };
    let bodies = [
        ("  slug: a\n  name: ${var:region}\n  mode: ENABLED\n  conditional_rate_based_drop:\n    enabled: ${var:on}\n    rate_limit_threshold: ${var:threshold}\n    activated_drop_duration_secs: 600\n", true),
        ("  slug: b-${var:region}\n  name: \"x ${var:threshold} $${lit}\"\n  mode: ENABLED\n", true),
        ("  slug: c\n  name: ${file:label.txt}\n  mode: ENABLED\n", true),
        ("  slug: d\n  name: '${var:region}'\n  mode: ENABLED\n", false),
        ("  slug: e\n  name: |-\n    ${var:region}\n  mode: ENABLED\n", false),
        ("  slug: f\n  name: ${var:nowhere}\n  mode: ENABLED\n", false),
        ("  slug: g\n  name: G\n  mode: ENABLED\n  filters:\n    - {name: env, value_glob: \"${var:region}\"}\n", false),
        ("  slug: h\n  name: ${var:region}\n  mode: ${var:threshold}\n", false),
    ];
    for (body, fast) in bodies {
        let text = format!("api_version: v1/config\nkind: DropRule\nspec:\n{body}---\napi_version: v1/config\nkind: Team\nspec:\n  slug: t\n  name: T\n");
        let path = dir.path().join("r.yaml");
        let src = super::Source {
            text: &text,
            is_json: false,
            path: &path,
            shown: &path,
            plain: true,
        };
        let mut quick = Loaded::default();
        let taken = crate::manifest::locate::load_plain(&src, true, &ctx, &mut quick);
        assert_eq!(taken, fast, "{body} {:?}", quick.diagnostics);
        let mut via = Loaded::default();
        crate::manifest::load_text(&path, &path, &text, &ctx, &mut via);
        let mut located = Loaded::default();
        crate::manifest::load_located(&src, true, &ctx, &mut located);
        let specs = |l: &Loaded| {
            l.manifests
                .iter()
                .map(|m| (*m.spec).clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(specs(&via), specs(&located), "{body}");
        assert_eq!(via.diagnostics, located.diagnostics, "{body}");
        assert_eq!(via.sources.0, located.sources.0, "{body}");
        assert_eq!(
            format!("{:?}", via.provenance),
            format!("{:?}", located.provenance),
            "{body}"
        );
        if fast {
            assert!(via.manifests.iter().all(|m| m.spans.is_empty()), "{body}");
        }
    }
}

/// `escape` is what the loader reads back as the text itself, in every form of `${` and `$`
/// run, in an environment with variables and with the environment's variables unset; and
/// `references` finds exactly the `${…}`s the loader substitutes.
#[test]
fn escaped_text_reads_back_as_itself() {
    let texts = [
        "${env:HOME}",
        "owned ${env:AWS_SECRET_ACCESS_KEY}",
        "T ${env:HOME} ${var:x} $${y} ${file:../../etc/passwd}",
        "$$$${var:region}$",
        "${",
        "$",
        "a $ b $$ {c}",
        "${unclosed",
    ];
    let mut spec = String::new();
    for (i, t) in texts.iter().enumerate() {
        let value = serde_json::to_string(&crate::manifest::escape(t)).unwrap();
        spec.push_str(&format!("  f{i}: {value}\n"));
    }
    let doc = format!(
        "api_version: v1/config\nkind: Bucket\nspec:\n  slug: t\n  name: T\n  labels:\n{}",
        spec.replace("  f", "    f")
    );
    for env in [None, Some("staging")] {
        let (dir, loaded) = load_env(&[("cfgctl.yaml", SETTINGS), ("t.yaml", &doc)], env);
        assert!(
            loaded.diagnostics.is_empty(),
            "{:?}",
            messages(&loaded, &dir)
        );
        let labels = &loaded.manifests[0].spec["labels"];
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(labels[format!("f{i}")], json!(t), "{t:?}");
            let escaped = crate::manifest::escape(t);
            assert!(crate::manifest::references(&escaped).is_empty(), "{t:?}");
            assert_eq!(crate::manifest::unescape(&escaped), *t);
        }
    }
    assert_eq!(
        // `$$${` is a `$` and an escaped `${`.
        crate::manifest::references("a ${env:A} $${env:B} $$${var:c} ${file:d}"),
        ["env:A", "file:d"]
    );
}

/// A reference inside a reference is an error at the outer one, never read up to the first
/// `}` (`./n-${var:region` was tried as a file; red team E20), in any field.
#[test]
fn a_reference_inside_a_reference_is_an_error() {
    let rule = drop_rule(
        "  slug: a\n  name: \"${file:n-${var:region}.txt}\"\n  mode: ENABLED\n  filters:\n    - {name: env, value_glob: \"x-${env:A_${var:region}}\"}\n",
    );
    let (d, loaded) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("r.yaml", &rule)],
        Some("staging"),
    );
    let why = "a reference cannot hold another (cfgctl reads no nesting): write the name whole, or give each environment its own `vars:` value";
    assert_eq!(
        messages(&loaded, &d),
        vec![
            format!("r.yaml:5:10: error: cannot resolve `${{file:n-${{var:region}}.txt}}`: {why}"),
            format!("r.yaml:8:34: error: cannot resolve `${{env:A_${{var:region}}}}`: {why}"),
        ]
    );
    // Text that only looks like nesting, outside cfgctl's references, stays text.
    let text = drop_rule("  slug: b\n  name: \"run ${HOME:-${USER}} first\"\n  mode: ENABLED\n");
    let (d2, plain) = load_env(
        &[("cfgctl.yaml", SETTINGS), ("r.yaml", &text)],
        Some("staging"),
    );
    assert_eq!(messages(&plain, &d2), Vec::<String>::new());
    assert_eq!(
        plain.manifests[0].spec["name"],
        json!("run ${HOME:-${USER}} first")
    );
    // Errors: the load fails as for any reference that does not resolve.
    assert!(loaded
        .diagnostics
        .iter()
        .all(|d| d.severity == crate::config::diagnostic::Severity::Error));
}
