//! Multi-line strings in plans (PromQL, templates, descriptions): shown as indented blocks,
//! a change inside one as a line-by-line unified diff, the way embedded documents are.
//! Each shown line is inert: control characters other than tab are escaped.

use serde_json::Value;

use super::diff::{diff_lines, inert_line, text_diff, Line, Sides};
use crate::plan::normalize::FieldChange;
use crate::util::output::Inert;

/// A string with a line break in it.
fn multiline(v: Option<&Value>) -> Option<&str> {
    match v {
        Some(Value::String(s)) if s.contains('\n') => Some(s),
        _ => None,
    }
}

/// `+ path: |` and the text's lines, indented. The indicator is YAML's: `|` for a text that
/// ends with one line break, `|-` for none, `|+` for more.
fn block(out: &mut Vec<Line>, sign: char, path: &str, text: &str) {
    let indicator = if !text.ends_with('\n') {
        "|-"
    } else if text.ends_with("\n\n") {
        "|+"
    } else {
        "|"
    };
    out.push(Line::Head(format!("{sign} {}: {indicator}", Inert(path))));
    for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        out.push(Line::Body(sign, inert_line(line)));
    }
}

/// The lines of a field change when either side is a multi-line string; `None` otherwise
/// (the caller's one-line form applies).
pub(crate) fn field_lines(f: &FieldChange, sides: Sides) -> Option<Vec<Line>> {
    let (before, after) = (multiline(f.before.as_ref()), multiline(f.after.as_ref()));
    if before.is_none() && after.is_none() {
        return None;
    }
    let mut out = Vec::new();
    match (&f.before, &f.after) {
        (None, Some(_)) => block(&mut out, '+', &f.path, after?),
        (Some(_), None) => block(&mut out, '-', &f.path, before?),
        (Some(Value::String(b)), Some(Value::String(a))) => {
            out.push(Line::Head(format!("~ {}:", Inert(&f.path))));
            out.extend(diff_lines(&text_diff(b, a, sides)));
        }
        // A multi-line string replaced by a number, a list...: the old block, then the new
        // value as JSON.
        (Some(b), Some(a)) => {
            match before {
                Some(text) => block(&mut out, '-', &f.path, text),
                None => out.push(Line::Head(format!("- {}: {}", Inert(&f.path), Inert(b)))),
            }
            match after {
                Some(text) => block(&mut out, '+', &f.path, text),
                None => out.push(Line::Head(format!("+ {}: {}", Inert(&f.path), Inert(a)))),
            }
        }
        (None, None) => return None,
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The lines as the text plan shows them.
    fn field_lines(f: &FieldChange) -> Option<Vec<String>> {
        super::field_lines(f, crate::render::diff::PLAN)
            .map(|lines| lines.iter().map(Line::text).collect())
    }

    fn change(before: Option<Value>, after: Option<Value>) -> FieldChange {
        FieldChange {
            path: "prometheus_query".into(),
            before,
            after,
        }
    }

    #[test]
    fn one_line_strings_are_left_to_the_caller() {
        assert_eq!(
            field_lines(&change(Some(json!("a")), Some(json!("b")))),
            None
        );
        assert_eq!(field_lines(&change(None, Some(json!(5)))), None);
    }

    #[test]
    fn an_added_multiline_string_is_an_indented_block() {
        let lines = field_lines(&change(
            None,
            Some(json!("sum(rate(a[5m]))\n  / sum(rate(b[5m]))\n")),
        ))
        .unwrap();
        assert_eq!(
            lines,
            [
                "+ prometheus_query: |",
                "    sum(rate(a[5m]))",
                "      / sum(rate(b[5m]))"
            ]
        );
    }

    #[test]
    fn the_block_indicator_says_how_the_text_ends() {
        let first = |text: &str| field_lines(&change(None, Some(json!(text)))).unwrap()[0].clone();
        assert_eq!(first("a\n"), "+ prometheus_query: |");
        assert_eq!(first("a\nb"), "+ prometheus_query: |-");
        assert_eq!(first("a\n\n"), "+ prometheus_query: |+");
    }

    #[test]
    fn a_change_inside_is_shown_line_by_line() {
        let lines = field_lines(&change(
            Some(json!("sum(rate(a[5m]))\n/\nsum(rate(b[5m]))")),
            Some(json!("sum(rate(a[1m]))\n/\nsum(rate(b[5m]))")),
        ))
        .unwrap();
        assert_eq!(
            lines,
            [
                "~ prometheus_query:",
                "    --- current",
                "    +++ desired",
                "    @@ -1,3 +1,3 @@",
                "    -sum(rate(a[5m]))",
                "    +sum(rate(a[1m]))",
                "     /",
                "     sum(rate(b[5m]))",
            ]
        );
    }

    #[test]
    fn a_one_line_string_becoming_multiline_is_diffed_too() {
        let lines = field_lines(&change(Some(json!("up")), Some(json!("up\n== 1")))).unwrap();
        assert!(lines.contains(&"     up".to_string()), "{lines:?}");
        assert!(lines.contains(&"    +== 1".to_string()), "{lines:?}");
    }

    #[test]
    fn control_characters_are_escaped_not_printed() {
        let lines =
            field_lines(&change(None, Some(json!("a\u{1b}[2Jb\r\nc\u{202e}d\te")))).unwrap();
        assert_eq!(lines[0], "+ prometheus_query: |-");
        assert_eq!(lines[1], "    a\\u{1b}[2Jb\\u{d}");
        assert_eq!(lines[2], "    c\\u{202e}d\te");
        assert!(lines
            .iter()
            .all(|l| !l.contains('\u{1b}') && !l.contains('\r')));
    }

    #[test]
    fn a_type_change_shows_both_sides() {
        let lines = field_lines(&change(Some(json!("a\nb")), Some(json!(3)))).unwrap();
        assert_eq!(
            lines,
            [
                "- prometheus_query: |-",
                "    a",
                "    b",
                "+ prometheus_query: 3"
            ]
        );
    }
}
