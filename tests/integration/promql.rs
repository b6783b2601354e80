//! PromQL checked offline by `validate`: a syntax error is an error at the file:line:col of the
//! offending character inside the manifest, whatever the scalar's style (block, quoted, JSON);
//! every query of `fixtures/` and `examples/` parses.

use crate::support::{cfgctl_snapshot, files, root, Cfgctl};

/// (query, byte offset of the offending character, the parser's message).
const KINDS: &[(&str, usize, &str)] = &[
    ("sum(rate(x[5m])", 3, "unclosed left parenthesis"),
    ("x{a=\"b\"", 1, "unexpected end of input inside braces"),
    ("x{a~\"b\"}", 3, "unexpected character inside braces: '~'"),
    ("foo_bar(x)", 0, "unknown function with name 'foo_bar'"),
    ("x{a=\"\\q\"}", 6, "unknown escape sequence 'q'"),
    (
        "x +",
        3,
        "invalid promql query: unexpected end of the query",
    ),
    (
        "sum by (a b) (x)",
        10,
        "invalid promql query: unexpected `b`",
    ),
    ("1 +* 2", 3, "invalid promql query: unexpected `*`"),
    (
        "y + rate(x)",
        4,
        "expected type matrix in call to function 'rate', got vector",
    ),
    (
        "x{a=b}",
        4,
        "unexpected identifier 'b' in label matching, expected string",
    ),
    ("x)", 1, "unexpected right parenthesis ')'"),
    ("x @ foo", 4, "invalid promql query: unexpected `foo`"),
    ("x[5m:1m:2m]", 7, "unexpected second colon(:) in brackets"),
    (
        "y and 1",
        2,
        "set operator 'and' not allowed in binary scalar expression",
    ),
];

const BUCKET: &str = "api_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n";

fn monitor_yaml(i: usize, query_line: &str) -> String {
    format!(
        "api_version: v1/config\nkind: Monitor\nspec:\n  slug: m{i}\n  name: M{i}\n  bucket_slug: b\n  prometheus_query: {query_line}\n"
    )
}

/// Columns count characters, as the file shows them.
fn col(prefix: &str) -> usize {
    prefix.chars().count() + 1
}

/// One manifest file per style, a document per kind of error; the errors expected, in order.
fn write_styles(dir: &std::path::Path) -> Vec<String> {
    files::write(dir, "bucket.yaml", BUCKET);
    let mut expected = Vec::new();
    let (mut block, mut quoted, mut single, mut json) = (vec![], vec![], vec![], vec![]);
    for (i, (query, offset, message)) in KINDS.iter().enumerate() {
        // A literal block scalar: the query on the line after the key, indented by 4.
        block.push(monitor_yaml(i, &format!("|\n    {query}")));
        let line = 8 + 9 * i;
        expected.push(format!("block.yaml:{line}:{}: {message}", 5 + offset));
        // A double-quoted scalar, escapes and all.
        let escaped = serde_json::to_string(query).unwrap();
        quoted.push(monitor_yaml(i, &escaped));
        let before = serde_json::to_string(&query[..*offset]).unwrap();
        let line = 7 + 8 * i;
        let at = col("  prometheus_query: ") + col(&before) - 2;
        expected.push(format!("quoted.yaml:{line}:{at}: {message}"));
        // A single-quoted scalar ('' is one quote).
        single.push(monitor_yaml(i, &format!("'{}'", query.replace('\'', "''"))));
        let before = query[..*offset].replace('\'', "''");
        let at = col("  prometheus_query: '") + col(&before) - 1;
        expected.push(format!("single.yaml:{line}:{at}: {message}"));
        // JSON: one object per line.
        json.push(format!(
            "{{\"api_version\": \"v1/config\", \"kind\": \"Monitor\", \"spec\": {{\"slug\": \"j{i}\", \"name\": \"J{i}\", \"bucket_slug\": \"b\", \"prometheus_query\": {escaped}}}}}"
        ));
        let prefix = format!(
            "  {{\"api_version\": \"v1/config\", \"kind\": \"Monitor\", \"spec\": {{\"slug\": \"j{i}\", \"name\": \"J{i}\", \"bucket_slug\": \"b\", \"prometheus_query\": "
        );
        let before = serde_json::to_string(&query[..*offset]).unwrap();
        let at = col(&prefix) + col(&before) - 2;
        expected.push(format!("monitors.json:{}:{at}: {message}", i + 2));
    }
    files::write(dir, "block.yaml", &block.join("---\n"));
    files::write(dir, "quoted.yaml", &quoted.join("---\n"));
    files::write(dir, "single.yaml", &single.join("---\n"));
    files::write(
        dir,
        "monitors.json",
        &format!("[\n  {}\n]\n", json.join(",\n  ")),
    );
    expected
}

#[test]
fn each_kind_of_syntax_error_is_at_its_character_in_every_style() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = write_styles(dir.path());
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate"])
        .run_blocking();
    run.assert_clean_exit();
    assert_eq!(run.code, 1, "{}", run.transcript());
    let mut found: Vec<String> = run
        .stdout
        .lines()
        .filter(|l| l.contains("invalid PromQL"))
        .map(|l| {
            let (at, rest) = l.split_once(": error: ").unwrap();
            let message = rest.split_once("`: ").unwrap().1;
            format!("{at}: {message}")
        })
        .collect();
    expected.sort();
    found.sort();
    assert_eq!(found, expected);
    assert!(KINDS.len() >= 10);
    cfgctl_snapshot!("promql_errors_in_every_style", run.transcript());
}

#[test]
fn folded_and_templated_queries_are_located_too() {
    let dir = tempfile::tempdir().unwrap();
    files::write(dir.path(), "bucket.yaml", BUCKET);
    files::write(
        dir.path(),
        "monitor.yaml",
        &monitor_yaml(0, ">-\n    sum(rate(x[5m]))\n    / sum(rate(y[5m])) +"),
    );
    files::write(
        dir.path(),
        "slo.yaml",
        "api_version: v1/config\nkind: SLO\nspec:\n  slug: s\n  name: S\n  sli:\n    custom_indicator:\n      good_query_template: sum(rate(ok{a=\"b\",{{ .AdditionalFilters }}}[{{.Window}}])) by ({{.GroupBy}})\n      total_query_template: |\n        sum(rate(all[{{.Window}}])) by ({{.GroupBy}}) by\n",
    );
    files::write(
        dir.path(),
        "derived.yaml",
        "api_version: v1/config\nkind: DerivedMetric\nspec:\n  slug: d\n  name: D\n  metric_name: d\n  queries:\n    - query:\n        prometheus_expr: sum(rate(x{code=~\"5..$\",$service}[5m])) / sum(rate(x{$service}[5m]))\n        variables:\n          - name: service\n            default_prometheus_selector: service=checkout\n",
    );
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate"])
        .run_blocking();
    let promql: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("PromQL"))
        .collect();
    assert_eq!(
        promql,
        [
            "derived.yaml:12:50: error: invalid PromQL in `queries[].query.variables[].default_prometheus_selector`: unexpected identifier 'checkout' in label matching, expected string",
            "monitor.yaml:9:25: error: invalid PromQL in `prometheus_query`: invalid promql query: unexpected end of the query",
            "slo.yaml:10:55: error: invalid PromQL in `sli.custom_indicator.total_query_template`: invalid promql query: unexpected `by`",
        ],
        "{}",
        run.transcript()
    );
}

#[test]
fn every_query_of_the_fixtures_and_examples_parses() {
    for dir in ["fixtures/valid", "examples/quickstart", "examples/ci"] {
        let run = Cfgctl::bare()
            .args(&["validate", &root().join(dir).to_string_lossy()])
            .run_blocking();
        assert!(
            !run.stdout.contains("PromQL"),
            "{dir}: {}",
            run.transcript()
        );
    }
    for entry in std::fs::read_dir(root().join("fixtures/invalid")).unwrap() {
        let path = entry.unwrap().path();
        let run = Cfgctl::bare()
            .args(&["validate", &path.to_string_lossy()])
            .run_blocking();
        assert!(!run.stdout.contains("PromQL"), "{}", run.transcript());
    }
}

/// R4-9: the offline check's time grows with the square of a query's tokens (promql-parser's
/// parse), and a pull request may hold any text: `1+1+...` of 90,000 terms (and 64,000, and a
/// query of 3,000 terms, short in bytes but long in tokens) is an error at its field, at once,
/// not a validate that runs for minutes.
#[test]
fn a_query_too_long_to_check_offline_is_an_error_at_its_field() {
    let dir = tempfile::tempdir().unwrap();
    files::write(dir.path(), "bucket.yaml", BUCKET);
    let mut expected = Vec::new();
    for (i, terms) in [90_000usize, 64_000, 3_000].into_iter().enumerate() {
        let query = vec!["1"; terms].join("+");
        files::write(dir.path(), &format!("m{i}.yaml"), &monitor_yaml(i, &query));
        let size = if query.len() > 65_536 {
            format!(
                "{} bytes, too long to check offline (at most 65536)",
                query.len()
            )
        } else {
            format!(
                "{} tokens, too many to check offline (at most 4000)",
                query.len()
            )
        };
        expected.push(format!(
            "m{i}.yaml:7:21: error: invalid PromQL in `prometheus_query`: {size}: split the query"
        ));
    }
    let run = Cfgctl::bare()
        .dir(dir.path())
        .args(&["validate", "."])
        .run_blocking();
    run.assert_clean_exit();
    assert_eq!(run.code, 1, "{}", run.transcript());
    let found: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("PromQL"))
        .collect();
    assert_eq!(found, expected, "{}", run.transcript());
}
