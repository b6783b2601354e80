//! serde-saphyr's budget (its limits on what one file may hold), said in a user's words: a
//! breach is a file too large or too deeply nested for cfgctl to read, with what to do about
//! it, never the parser's `Debug` of its counter.

use serde_saphyr::budget::BudgetBreach;

/// The message of a budget breach: what was too much, and the way out.
pub(super) fn breach_message(breach: &BudgetBreach) -> String {
    let name = format!("{breach:?}");
    named_breach_message(name.split([' ', '{']).next().unwrap_or_default())
}

/// [`breach_message`] of a breach known by its name only, as a message that wraps it gives it
/// (`budget breached: Nodes { nodes: 250001 } ... (used at ...)`: an alias's expansion).
pub(super) fn rendered_breach_message(rendered: &str) -> Option<String> {
    let rest = rendered.split_once("budget breached: ")?.1;
    Some(named_breach_message(
        rest.split([' ', '{']).next().unwrap_or_default(),
    ))
}

fn named_breach_message(name: &str) -> String {
    let what = match name {
        "Nodes" | "Events" => "more values than cfgctl reads from one YAML file (250,000)",
        "Documents" => "more documents than cfgctl reads from one YAML file",
        "Depth" => "nesting deeper than cfgctl reads",
        "ScalarBytes" | "InputBytes" => "more text than cfgctl reads from one YAML file",
        "Aliases" | "Anchors" | "AliasAnchorRatio" | "MergeKeys" => {
            "more anchors, aliases or merge keys than cfgctl expands (a guard against alias bombs)"
        }
        _ => "more than cfgctl reads from one YAML file",
    };
    format!("the file holds {what}; split it into several files")
}

#[cfg(test)]
mod tests {
    /// A file past the budget is refused in words, at the place it was reached (red team D22:
    /// `budget breached: Nodes { nodes: 250001 }`).
    #[test]
    fn a_file_past_the_budget_is_refused_in_words() {
        let mut text = String::from("items:\n");
        for i in 0..130_000 {
            text.push_str(&format!("- {{a: {i}}}\n"));
        }
        let err = super::super::parse_documents(&text).unwrap_err();
        assert_eq!(
            err.message,
            "the file holds more values than cfgctl reads from one YAML file (250,000); split it into several files"
        );
        assert!(err.pos.line > 1, "{err:?}");
        // The same budget reached by expanding aliases (red team E4): worded, not the
        // parser's `Debug` cut off mid-word.
        let bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: *f\n";
        let err = super::super::parse_documents(bomb).unwrap_err();
        assert!(err.message.starts_with("the file holds "), "{err:?}");
        assert!(!err.message.contains("budget breached"), "{err:?}");
    }
}
