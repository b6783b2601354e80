//! Where serde-saphyr's reading of a scalar differs from YAML 1.2, the located reader corrects
//! it from the source text (it knows every node's bytes); the fast readers give up on those
//! scalars instead, so every reader gives the same values.
//!
//! - A decimal with leading zeros (`060`, `-007`, `00`) is an integer in YAML 1.2's core schema
//!   (`[-+]?[0-9]+`); serde-saphyr reads it as a float (or, as it is set up here, as text).
//! - A block scalar (`|`, `>`) whose last line ends the file without a line break keeps no final
//!   line break (YAML 1.2: `b-chomped-last` is the end of the input); serde-saphyr adds one.

use std::ops::Range;

use super::Node;

/// `[-+]?0[0-9]+`: what serde-saphyr hands over as text with `leading_zero_numbers_as_strings`.
pub(super) fn leading_zero_decimal(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|c| c.is_ascii_digit())
}

/// The node a string from serde-saphyr stands for, given its bytes `source` in `text`.
pub(super) fn resolve_str(mut s: String, source: Option<Range<usize>>, text: &str) -> Node {
    let Some(source) = source else {
        return Node::Str(s);
    };
    // A plain scalar's source is its value; a quoted one's has its quotes.
    if leading_zero_decimal(&s) && text.get(source.clone()) == Some(s.as_str()) {
        if !tagged(text, source.start) {
            return decimal(&s).unwrap_or(Node::Str(s));
        }
    } else if s.ends_with('\n')
        && source.end == text.len()
        && !text.ends_with(['\n', '\r'])
        && !text[source].starts_with(['"', '\''])
    {
        // Only a block scalar's content ends with a line break and is not quoted: its last
        // line ends the file, so that line has no break to keep.
        s.pop();
    }
    Node::Str(s)
}

/// A decimal integer with leading zeros: an integer, or (too large for 64 bits) a float, as
/// serde-saphyr reads a large decimal without them.
fn decimal(s: &str) -> Option<Node> {
    if s.starts_with('-') {
        if let Ok(v) = s.parse::<i64>() {
            return Some(Node::Int(v));
        }
    } else if let Ok(v) = s.trim_start_matches('+').parse::<u64>() {
        return Some(Node::UInt(v));
    }
    s.parse::<f64>().ok().map(Node::Float)
}

/// A tag (`!!str`, `!x`) before the scalar at `start`, past any anchor: then the tag decides.
fn tagged(text: &str, start: usize) -> bool {
    let separator = |c: char| c.is_whitespace() || matches!(c, '[' | '{' | ',');
    let mut before = text[..start].trim_end_matches(char::is_whitespace);
    loop {
        let word_start = before.rfind(separator).map_or(0, |i| i + 1);
        let word = &before[word_start..];
        if word.starts_with('!') {
            return true;
        }
        if !word.starts_with('&') || word_start == 0 {
            return false;
        }
        before = before[..word_start].trim_end_matches(char::is_whitespace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_zero_decimals() {
        for s in [
            "060",
            "-060",
            "+060",
            "00",
            "-00",
            "0777777777777777777777777",
        ] {
            assert!(leading_zero_decimal(s), "{s}");
        }
        for s in [
            "0", "-0", "60", "0x1f", "0o17", "060.5", "06e1", "0_6", "+", "0 6",
        ] {
            assert!(!leading_zero_decimal(s), "{s}");
        }
    }

    #[test]
    fn tags_past_anchors() {
        assert!(tagged("a: !!str 060", 9));
        assert!(tagged("a: !!str &x 060", 12));
        assert!(tagged("a: [!!str 060]", 10));
        assert!(!tagged("a: &x 060", 6));
        assert!(!tagged("a: 060", 3));
        assert!(!tagged("- 060", 2));
        assert!(!tagged("060", 0));
    }
}
