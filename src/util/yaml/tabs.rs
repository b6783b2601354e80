//! A tab in indentation, which YAML never takes: the parser's error about it said as what to
//! do, at the tab.

use super::{Pos, SyntaxError};

/// A parser error about a tab (which YAML never takes as indentation) said as what to do, at
/// the tab: the parser names it at the end of the line before ("while scanning a plain scalar,
/// found a tab") or just after it. The tab is the first in the leading whitespace of the
/// error's line or the next, else the last before it; any other error is kept.
pub(super) fn tab_indented(text: &str, e: SyntaxError) -> SyntaxError {
    if !e.message.contains("tab") {
        return e;
    }
    let tab_at = |(i, line): (usize, &str)| {
        let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        let col = indent.find('\t')?;
        Some(Pos::new(
            u32::try_from(i + 1).unwrap_or(u32::MAX),
            u32::try_from(col + 1).unwrap_or(u32::MAX),
        ))
    };
    let from = usize::try_from(e.pos.line.saturating_sub(1)).unwrap_or(usize::MAX);
    let lines: Vec<&str> = text.lines().collect();
    let after = lines
        .iter()
        .copied()
        .enumerate()
        .skip(from)
        .take(2)
        .find_map(tab_at);
    let before = || {
        let upto = from.min(lines.len());
        lines[..upto]
            .iter()
            .copied()
            .enumerate()
            .rev()
            .find_map(tab_at)
    };
    match after.or_else(before) {
        Some(pos) => SyntaxError {
            pos,
            message: "YAML indents with spaces, not tabs".to_string(),
        },
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_in_indentation_is_named_at_the_tab() {
        for (text, pos) in [
            ("a:\n\tb: 1\n", Pos::new(2, 1)),
            ("spec:\n  slug: x\n\tname: y\n", Pos::new(3, 1)),
            ("k: X\nspec:\n  a: 1\n  \tb: 2\n", Pos::new(4, 3)),
            ("a:\n  - x\n\t- y\n", Pos::new(3, 1)),
        ] {
            let err = super::super::parse_documents(text).unwrap_err();
            assert_eq!(
                err.message, "YAML indents with spaces, not tabs",
                "{text:?}"
            );
            assert_eq!(err.pos, pos, "{text:?}");
        }
        // A tab where YAML takes one is no error; an error about something else is kept.
        assert!(super::super::parse_documents("a: [1,\n\t2]\n").is_ok());
        let err = super::super::parse_documents("a: [1,\n\t2\n").unwrap_err();
        assert!(!err.message.contains("spaces, not tabs"), "{err:?}");
    }
}
