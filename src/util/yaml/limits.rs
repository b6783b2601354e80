//! serde-saphyr's budget (its limits on what one file may hold), said in a user's words: a
//! breach is a file too large or too deeply nested for cfgctl to read, with what to do about
//! it, never the parser's `Debug` of its counter.

use serde_saphyr::budget::BudgetBreach;

/// The message of a budget breach: what was too much, and the way out.
pub(super) fn breach_message(breach: &BudgetBreach) -> String {
    let what = match breach {
        BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. } => {
            "more values than cfgctl reads from one YAML file (250,000)".to_string()
        }
        BudgetBreach::Documents { documents } => {
            format!(
                "more documents than cfgctl reads from one YAML file ({documents} and counting)"
            )
        }
        BudgetBreach::Depth { depth } => {
            format!("nesting deeper than cfgctl reads ({depth} levels)")
        }
        BudgetBreach::ScalarBytes { .. } | BudgetBreach::InputBytes { .. } => {
            "more text than cfgctl reads from one YAML file".to_string()
        }
        BudgetBreach::Aliases { .. }
        | BudgetBreach::Anchors { .. }
        | BudgetBreach::AliasAnchorRatio { .. }
        | BudgetBreach::MergeKeys { .. } => {
            "more anchors, aliases or merge keys than cfgctl expands (a guard against alias bombs)"
                .to_string()
        }
        _ => "more than cfgctl reads from one YAML file".to_string(),
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
    }
}
