//! A top-level comparison of a query with a number (`rate(x[5m]) > 0.5`) split into the query
//! and the comparison, for importers that turn an alerting expression into a query and a
//! threshold condition.
//!
//! The split is decided on the parsed expression, not on its text: the whole must parse as a
//! comparison (no `bool`) whose right side is a number, and the text left of the operator
//! must parse to that comparison's left side. The query keeps its author's text.

use promql_parser::parser::{self, Expr};

/// A comparison operator of PromQL, in the order of the API's `ConditionOp` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Gt,
    Geq,
    Lt,
    Leq,
    Eq,
    Neq,
}

impl Comparison {
    fn from_token(text: &str) -> Option<Comparison> {
        Some(match text {
            ">" => Comparison::Gt,
            ">=" => Comparison::Geq,
            "<" => Comparison::Lt,
            "<=" => Comparison::Leq,
            "==" => Comparison::Eq,
            "!=" => Comparison::Neq,
            _ => return None,
        })
    }

    /// The operator as PromQL writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Gt => ">",
            Comparison::Geq => ">=",
            Comparison::Lt => "<",
            Comparison::Leq => "<=",
            Comparison::Eq => "==",
            Comparison::Neq => "!=",
        }
    }
}

/// `query op value`, the query as its author wrote it (trimmed).
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    pub query: String,
    pub op: Comparison,
    pub value: f64,
}

/// The number an expression is: a literal, or a negated one (`-5`), finite.
fn number(expr: &Expr) -> Option<f64> {
    let value = match expr {
        Expr::NumberLiteral(n) => n.val,
        Expr::Unary(u) => -number(&u.expr)?,
        Expr::Paren(p) => number(&p.expr)?,
        _ => return None,
    };
    value.is_finite().then_some(value)
}

/// `text` as a query compared with a number at its top level, or `None` when it is anything
/// else (a filter inside, `bool`, a comparison of two queries, a set operation on top, text
/// that does not parse).
pub fn split(text: &str) -> Option<Threshold> {
    let Ok(Expr::Binary(whole)) = parser::parse(text) else {
        return None;
    };
    if !whole.op.is_comparison_operator()
        || whole.modifier.as_ref().is_some_and(|m| m.return_bool)
        || number(&whole.lhs).is_some()
    {
        return None;
    }
    let value = number(&whole.rhs)?;
    // The operator is the last comparison character run before the number: a number's text
    // holds none of `<>=!`. The parse below confirms the split (a comment could hold one).
    let end = text.rfind(['<', '>', '=', '!'])?;
    let start = if end > 0 && text.is_char_boundary(end - 1) {
        let two = &text[end - 1..=end];
        if Comparison::from_token(two).is_some() {
            end - 1
        } else {
            end
        }
    } else {
        end
    };
    let op = Comparison::from_token(&text[start..=end])?;
    let query = text[..start].trim();
    let lhs = parser::parse(query).ok()?;
    (lhs == *whole.lhs && number(&parser::parse(&text[end + 1..]).ok()?) == Some(value)).then(
        || Threshold {
            query: query.to_string(),
            op,
            value,
        },
    )
}

/// Two queries "agree" when they parse to the same expression (white space, comments and the
/// author's layout aside); a text that does not parse agrees only with itself.
pub fn same_query(a: &str, b: &str) -> bool {
    a == b || matches!((parser::parse(a), parser::parse(b)), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(query: &str, op: Comparison, value: f64) -> Option<Threshold> {
        Some(Threshold {
            query: query.to_string(),
            op,
            value,
        })
    }

    #[test]
    fn a_top_level_comparison_with_a_number_is_split() {
        assert_eq!(
            split("rate(errors_total[5m]) > 0.5"),
            t("rate(errors_total[5m])", Comparison::Gt, 0.5)
        );
        assert_eq!(
            split("sum by (job) (up) / count by (job) (up) <= 1e-1\n"),
            t(
                "sum by (job) (up) / count by (job) (up)",
                Comparison::Leq,
                0.1
            )
        );
        assert_eq!(
            split("deriv(x[1h])[6h:5m] < -1048576"),
            None,
            "a subquery of a range is not a query at all"
        );
        assert_eq!(
            split("deriv(avg_over_time(x[1h])[6h:5m]) < -1048576"),
            t(
                "deriv(avg_over_time(x[1h])[6h:5m])",
                Comparison::Lt,
                -1048576.0
            )
        );
        assert_eq!(split("up == 0"), t("up", Comparison::Eq, 0.0));
        assert_eq!(split("up != 1"), t("up", Comparison::Neq, 1.0));
        assert_eq!(
            split("x{a=\"<>\"} >= 2"),
            t("x{a=\"<>\"}", Comparison::Geq, 2.0)
        );
    }

    #[test]
    fn anything_else_is_kept_whole() {
        for text in [
            "absent(up{job=\"api\"} == 1)",
            "up > bool 1",
            "a > b",
            "a > 5 and b",
            "a and b > 5",
            "a > 5 unless on(x) b == 1",
            "(a > 5) * on(instance) group_left(nodename) b",
            "1 < up",
            "up > Inf",
            "not promql (",
        ] {
            assert_eq!(split(text), None, "{text}");
        }
    }
}
