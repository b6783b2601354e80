use super::*;

fn err(text: &str, form: Form) -> (usize, String) {
    let e = check(text, form).expect_err(text);
    (e.offset, e.message)
}

const EXPR: Form = Form {
    selector: false,
    template: false,
    variables: false,
};

#[test]
fn each_kind_of_error_is_at_its_character() {
    let cases = [
        ("sum(rate(x[5m])", 3, "unclosed left parenthesis"),
        ("x{a=\"b\"", 1, "unexpected end of input inside braces"),
        ("x{a~\"b\"}", 3, "unexpected character inside braces: '~'"),
        ("foo_bar(x)", 0, "unknown function with name 'foo_bar'"),
        ("x{a=\"\\q\"}", 6, "unknown escape sequence 'q'"),
        (
            "x + ",
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
        ("'abc", 0, "unterminated quoted string '"),
        ("x @ foo", 4, "invalid promql query: unexpected `foo`"),
        ("x[5m:1m:2m]", 7, "unexpected second colon(:) in brackets"),
        (
            "y and 1",
            2,
            "set operator 'and' not allowed in binary scalar expression",
        ),
    ];
    for (text, at, message) in cases {
        assert_eq!(err(text, EXPR), (at, message.to_string()), "{text}");
    }
}

#[test]
fn valid_queries_pass() {
    for q in [
        "sum(rate(http_requests_total{service=\"a\",code=~\"5..\"}[5m])) / sum(rate(x[5m]))",
        "histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))",
        "slo:checkout:burn_rate1h > 14.4",
        "1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes",
    ] {
        assert_eq!(check(q, EXPR), Ok(()), "{q}");
    }
}

#[test]
fn placeholders_are_stood_in_for_and_mapped_back() {
    let template = Form {
        template: true,
        ..EXPR
    };
    let q = "sum by ({{ .GroupBy }}) (rate(x{a=\"b\",{{.AdditionalFilters}}}[{{.Window}}]))";
    assert_eq!(check(q, template), Ok(()));
    let bad = "sum by ({{ .GroupBy }}) (rate(x{a=\"b\"}[{{.Window}}])) +";
    assert_eq!(err(bad, template).0, bad.len());
    let bad = "rate(x[{{.Window}}]) ) ";
    assert_eq!(err(bad, template).0, bad.rfind(')').unwrap());
    let variables = Form {
        variables: true,
        ..EXPR
    };
    let q = "sum(rate(x{code=~\"5..$\",$service}[5m])) / sum(rate(x{$service}[5m]))";
    assert_eq!(check(q, variables), Ok(()));
    let bad = "sum(rate(x{$service}[5m])) / / 2";
    assert_eq!(err(bad, variables).0, bad.rfind('/').unwrap());
    let selector = Form {
        selector: true,
        ..EXPR
    };
    assert_eq!(check("service=\"checkout\"", selector), Ok(()));
    assert_eq!(err("service=checkout", selector).0, 8);
}

/// The grammar built at run time numbers its tokens as promql-parser's compiled one does.
#[test]
fn runtime_grammar_agrees_with_the_crate() {
    let (grammar, _) = grammar().expect("grammar");
    for (name, id) in [
        ("LEFT_PAREN", promql_parser::parser::token::T_LEFT_PAREN),
        ("IDENTIFIER", promql_parser::parser::token::T_IDENTIFIER),
        ("SUM", promql_parser::parser::token::T_SUM),
        ("DURATION", promql_parser::parser::token::T_DURATION),
    ] {
        let idx = grammar.token_idx(name).expect(name);
        assert_eq!(idx.as_storaget(), id, "{name}");
    }
}

/// The rule on the embedded description: the fields its descriptions call PromQL.
#[test]
fn the_fields_come_from_the_description() {
    let mut found = Vec::new();
    for def in crate::api::registry::embedded_kinds() {
        for f in def.promql {
            found.push(format!(
                "{}.{} selector={} template={} variables={}",
                def.name, f.path, f.form.selector, f.form.template, f.form.variables
            ));
        }
    }
    assert_eq!(
        found,
        [
            "DerivedMetric.queries[].query.prometheus_expr selector=false template=false variables=true",
            "DerivedMetric.queries[].query.variables[].default_prometheus_selector selector=true template=false variables=false",
            "Monitor.prometheus_query selector=false template=false variables=false",
            "RecordingRule.prometheus_expr selector=false template=false variables=false",
            "SLO.sli.custom_indicator.good_query_template selector=false template=true variables=false",
            "SLO.sli.custom_indicator.bad_query_template selector=false template=true variables=false",
            "SLO.sli.custom_indicator.total_query_template selector=false template=true variables=false",
            "SLO.sli.custom_timeslice_indicator.query_template selector=false template=true variables=false",
        ]
    );
}

/// `check` remembers what parsed: it answers as `parse` does, whatever came before, and an
/// error is never remembered (a query fixed and broken again is still reported).
#[test]
fn remembered_checks_answer_as_parsing_does() {
    let queries = [
        (
            "sum(rate(http_requests_total[5m])) by (job)",
            Form::default(),
        ),
        (
            "sum(rate(http_requests_total[5m]) by (job)",
            Form::default(),
        ),
        ("up{job=\"a\"", Form::default()),
        (
            "service=\"checkout\"",
            Form {
                selector: true,
                ..Form::default()
            },
        ),
        ("service=\"checkout\"", Form::default()),
    ];
    for _ in 0..3 {
        for (text, form) in queries {
            assert_eq!(check(text, form), parse(text, form), "{text} {form:?}");
        }
    }
    assert!(check(queries[1].0, queries[1].1).is_err());
}

#[test]
fn a_query_past_the_limits_is_refused_before_it_is_parsed() {
    let at_limit = vec!["1"; MAX_TOKENS.div_ceil(2)].join("+");
    assert!(check(&at_limit, Form::default()).is_ok());
    let past = format!("{at_limit}+1");
    let e = check(&past, Form::default()).unwrap_err();
    assert_eq!(e.offset, 0);
    assert_eq!(
        e.message,
        format!(
            "{} tokens, too many to check offline (at most {MAX_TOKENS}): split the query",
            MAX_TOKENS + 1
        )
    );
    let long = format!("x{{a=\"{}\"}}", "b".repeat(MAX_BYTES));
    let e = check(&long, Form::default()).unwrap_err();
    assert!(
        e.message
            .starts_with(&format!("{} bytes, too long", long.len())),
        "{e:?}"
    );
}

#[test]
fn a_lexer_error_at_the_end_of_a_long_query_is_found_by_bisection() {
    let text = format!("{} ~", vec!["x"; 2000].join(" + "));
    let e = check(&text, Form::default()).unwrap_err();
    assert_eq!(e.offset, text.len() - 1, "{e:?}");
}
