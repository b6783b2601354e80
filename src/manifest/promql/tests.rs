use super::*;

/// The position of the first `X` of the value, found by `scalar_pos` from the value's start.
fn at_x(text: &str, at: Pos, value: &str) -> Option<Pos> {
    scalar_pos(text, at, value, value.find('X').expect("an X"))
}

#[test]
fn plain() {
    let text = "q: sum(X)\n";
    assert_eq!(at_x(text, Pos::new(1, 4), "sum(X)"), Some(Pos::new(1, 8)));
    // Folded over lines.
    let text = "q: sum(a)\n  / sum(X)\nn: 1\n";
    assert_eq!(
        at_x(text, Pos::new(1, 4), "sum(a) / sum(X)"),
        Some(Pos::new(2, 9))
    );
}

#[test]
fn single_quoted() {
    let text = "q: 'a{b=''c''} + X'\n";
    assert_eq!(
        at_x(text, Pos::new(1, 4), "a{b='c'} + X"),
        Some(Pos::new(1, 18))
    );
}

#[test]
fn double_quoted_with_escapes() {
    let text = "q: \"a{b=\\\"c\\\"}\\t+ X\"\n";
    assert_eq!(
        at_x(text, Pos::new(1, 4), "a{b=\"c\"}\t+ X"),
        Some(Pos::new(1, 19))
    );
    // JSON: a surrogate pair is one character.
    let text = "{\"q\": \"a{b=\\\"\\ud83d\\ude00\\\"} X\"}";
    assert_eq!(
        at_x(text, Pos::new(1, 7), "a{b=\"\u{1F600}\"} X"),
        Some(Pos::new(1, 30))
    );
    // Folded over lines, with an escaped line break.
    let text = "q: \"sum(a)\n  / sum(\\\n  X)\"\n";
    assert_eq!(
        at_x(text, Pos::new(1, 4), "sum(a) / sum(X)"),
        Some(Pos::new(3, 3))
    );
}

#[test]
fn literal_block() {
    // The node starts at the content, as the located reader has it.
    let text = "spec:\n  q: |\n    sum(a)\n      / sum(X)\n  n: 1\n";
    assert_eq!(
        at_x(text, Pos::new(3, 5), "sum(a)\n  / sum(X)\n"),
        Some(Pos::new(4, 13))
    );
}

#[test]
fn folded_block() {
    let text = "q: >- # a comment\n\n  sum(a)\n  / sum(X)\n\n  + 1\n";
    assert_eq!(
        at_x(text, Pos::new(3, 3), "\nsum(a) / sum(X)\n+ 1"),
        Some(Pos::new(4, 9))
    );
}

#[test]
fn the_end_of_the_value_is_after_its_last_character() {
    let text = "q: 'x +'\n";
    assert_eq!(
        scalar_pos(text, Pos::new(1, 4), "x +", 3),
        Some(Pos::new(1, 8))
    );
}

#[test]
fn a_value_decoded_otherwise_is_not_placed() {
    assert_eq!(scalar_pos("q: 'abc'\n", Pos::new(1, 4), "xyz", 1), None);
}
