//! Each input form, the slug rules, what is left out and reported, bad input.

use std::path::Path;

use super::*;

fn run(files: &[(&str, &str)]) -> Result<Output, ImportError> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = import(&GrafanaSettings {
        inputs: files.iter().map(|(n, _)| dir.path().join(n)).collect(),
        collection: Some("c".into()),
        command: "cfgctl import grafana".into(),
        ..GrafanaSettings::default()
    });
    let prefix = format!("{}/", dir.path().display());
    out.map(|mut o| {
        for n in &mut o.report.notes {
            n.source.file = n.source.file.replace(&prefix, "");
        }
        for i in &mut o.report.inputs {
            *i = i.replace(&prefix, "");
        }
        o
    })
    .map_err(|e| match e {
        ImportError::Located {
            file,
            line,
            column,
            message,
        } => ImportError::Located {
            file: file
                .strip_prefix(dir.path())
                .map(Path::to_path_buf)
                .unwrap_or(file),
            line,
            column,
            message,
        },
        e => e,
    })
}

fn notes(out: &Output) -> Vec<String> {
    let mut n: Vec<String> = out
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}: {}", n.source, n.subject, n.message))
        .collect();
    n.sort();
    n
}

#[test]
fn a_dashboard_file_becomes_a_manifest_and_its_json_beside_it() {
    let dash = r#"{"id": 7, "uid": "api-1", "title": "API", "version": 3, "panels": [{"type": "row", "collapsed": true, "title": "R", "panels": [{"id": 2, "libraryPanel": {"uid": "lib-1", "name": "L"}}]}]}"#;
    let out = run(&[("api.json", dash)]).unwrap();
    let names: Vec<String> = out.files.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "grafana-dashboards/api-1.json",
            "grafana-dashboards/api-1.yaml"
        ]
    );
    assert_eq!(
        out.files[Path::new("grafana-dashboards/api-1.yaml")],
        "api_version: v1/config\nkind: GrafanaDashboard\nspec:\n  slug: api-1\n  name: API\n  collection_slug: c\n  dashboard_json: ${file:api-1.json}\n"
    );
    // Pretty-printed, two spaces, the author's key order, no `id` or `version`.
    let json = &out.files[Path::new("grafana-dashboards/api-1.json")];
    assert!(
        json.starts_with("{\n  \"uid\": \"api-1\",\n  \"title\": \"API\",\n  \"panels\": ["),
        "{json}"
    );
    assert!(json.ends_with("}\n"));
    assert_eq!(
        notes(&out),
        [
            "api.json:1: dashboard API: `id` left out (the server sets it)",
            "api.json:1: dashboard API: `version` left out (the server sets it)",
            "api.json:1: dashboard API: library panels referenced by uid (`lib-1`): their models are not in the dashboard and are not imported",
        ]
    );
}

#[test]
fn envelopes_config_maps_and_lists_are_read_and_slugs_are_unique() {
    let envelope = r#"{"dashboard": {"uid": "same", "title": "One", "panels": []}, "meta": {"folderTitle": "x"}}"#;
    let list = "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n    a.json: |\n      {\"uid\": \"same\", \"title\": \"Two\", \"panels\": []}\n    README: not a dashboard\n- kind: ConfigMap\n  data:\n    b.json: '{\"title\": \"Three Dashboards\", \"schemaVersion\": 39}'\n---\nkind: Service\n";
    let out = run(&[("e.json", envelope), ("l.yaml", list)]).unwrap();
    let manifests: Vec<(String, String)> = out
        .files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "yaml"))
        .map(|(p, t)| {
            (
                p.display().to_string(),
                t.lines().find(|l| l.contains("name:")).unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        manifests,
        [
            (
                "grafana-dashboards/same-2.yaml".to_string(),
                "  name: Two".to_string()
            ),
            (
                "grafana-dashboards/same.yaml".to_string(),
                "  name: One".to_string()
            ),
            (
                "grafana-dashboards/three-dashboards.yaml".to_string(),
                "  name: Three Dashboards".to_string()
            ),
        ]
    );
    assert_eq!(
        notes(&out),
        [
            "e.json:1: dashboard One: the export envelope's `meta` left out",
            "l.yaml:14: object of kind Service: not a ConfigMap: skipped",
            "l.yaml:7: dashboard Two: uid `same` already imported: a duplicate, written as `same-2`",
            "l.yaml:9: ConfigMap key README: not a `.json` key: skipped",
        ]
    );
    assert_eq!(out.report.counts.get("GrafanaDashboard"), Some(&3));
}

#[test]
fn bad_input_is_located() {
    for (name, text, want) in [
        ("d.json", "{\"title\": \"x\", \"panels\": [}", "d.json:1:"),
        (
            "d.json",
            "{\"hello\": 1}",
            "d.json:1:1: not a Grafana dashboard",
        ),
        (
            "c.yaml",
            "kind: ConfigMap\ndata:\n  a.json: '{not json'\n",
            "c.yaml:3:3: `a.json` does not hold a JSON object",
        ),
    ] {
        let e = run(&[(name, text)]).unwrap_err().to_string();
        assert!(e.starts_with(want), "{text}\n got: {e}\nwant: {want}");
    }
}

#[test]
fn the_report_of_a_small_input() {
    let envelope = r#"{"dashboard": {"id": 3, "uid": "svc", "title": "Service", "__inputs": [{"name": "DS_PROM"}], "panels": [{"id": 1, "datasource": {"uid": "prom-main"}, "targets": [{"datasource": "$ds"}]}]}, "meta": {}}"#;
    let out = run(&[("svc.json", envelope)]).unwrap();
    insta::assert_snapshot!(out.report.markdown());
}

/// Red team D24: a uid that is a slug as it is keeps it whatever else is imported beside it;
/// every other dashboard whose slug is not its uid is reported.
#[test]
fn a_uid_that_is_a_slug_keeps_it_and_every_rename_is_reported() {
    let d = |uid: Option<&str>, title: &str| match uid {
        Some(u) => format!(r#"{{"uid": "{u}", "title": "{title}", "panels": []}}"#),
        None => format!(r#"{{"title": "{title}", "panels": []}}"#),
    };
    let all = [
        ("a.json", d(Some("ABC"), "A")),
        ("b.json", d(Some("abc"), "B")),
        ("c.json", d(None, "abc")),
        ("d.json", d(Some("a_b_c"), "D")),
        ("e.json", d(Some("a-b-c"), "E")),
    ];
    let files: Vec<(&str, &str)> = all.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let out = run(&files).unwrap();
    let slug_of = |title: &str| {
        out.files
            .iter()
            .find(|(p, t)| {
                p.extension().is_some_and(|e| e == "yaml")
                    && t.contains(&format!("name: {title}\n"))
            })
            .map(|(p, _)| p.file_stem().unwrap().to_string_lossy().into_owned())
            .unwrap()
    };
    assert_eq!(slug_of("B"), "abc");
    assert_eq!(slug_of("E"), "a-b-c");
    let notes = notes(&out);
    for (file, uid) in [("a.json", "ABC"), ("d.json", "a_b_c")] {
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with(file)
                    && n.contains(&format!("uid `{uid}` written as the slug"))),
            "{file}: {notes:#?}"
        );
    }
    // Without a.json, b.json's slug is the same.
    let out = run(&files[1..]).unwrap();
    assert!(
        out.files.keys().any(|p| p.ends_with("abc.yaml")),
        "{:?}",
        out.files.keys()
    );
}
