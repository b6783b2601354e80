//! The block reader against serde-saphyr.

use super::*;
use proptest::prelude::*;

/// The block reader takes `text` and gives what the located reader gives, or leaves it.
fn agrees(text: &str) -> bool {
    let taken = parse_documents_block(text).is_some();
    if !taken {
        assert_eq!(located::field_positions_block(text), None, "{text:?}");
    }
    // The same values and starts, and where the located mode takes it, the same fields.
    let difference = super::super::block_reader_disagreement(text);
    assert!(
        difference.is_none(),
        "{text:?}\n{}",
        difference.unwrap_or_default()
    );
    taken
}

#[test]
fn takes_the_common_shape_with_the_same_values_and_starts() {
    for text in [
        "# c\n---\napi_version: v1/config\nkind: Team\nspec:\n  slug: a\n  name: A b\n",
        "a: 1\n---\n\n# only a comment\n---\nb: 2\n",
        "---\n---\na: x\n",
        "--- # first\na: 1\n",
        "a:\n  b:\n    c: -12\n    d: 0.25\n    e: -0.5\n  f: ~\n  g:\n  h: null\n",
        "a:\n- 1\n- x\n-\n-\n  - 2\n",
        "a:\n  - k: v\n    l: w\n  - m: [] # c\n  -\n    n: {}\n  - \"q\": 'r''s'\n",
        "a: \"\\u00e9\\\"\\\\\\/\\n\\t x\" # c\nb: 'it''s'\n",
        "t: true\nf: False\nn: NULL\nw: hello world # c\nu: http://x:80/y#z\n",
        "a: |\n  {\n    \"x\": 1\n  }\n\n  tail\n\nb: |-\n  one\n   two\n\n",
        "a: |\n  x\n# c\nb: 1\n",
        "a: |-\n  x\n\n\n",
        "a: | # c\n  x\n  # not a comment\n",
        "k:\n  - a\n  - b\nl: 1\n",
        "\"quoted key\": 1\n'single': 2\nplain key: 3\n",
        "a: é ünïcödé\nb: \"日本\"\n",
        "a: 18446744073709551\nb: -9007199254740993\nc: 0\nd: 1.0\n",
        "duration: 12h\nrefresh: 30s\nlimit: 64Mi\nevery: 1w\ngc: 10ms\n",
        "a: >\n  folded\nb: >-\n  one two\n  three\n\nc: 1\n",
        "y: yes\nn: On\nx: off\nh: N\n",
        "a: x,y\nb: 'a: b'\nc: \"a #b\"\nd: a#b\n",
        "a:\n\n  b: 1\n\n\n  c: 2\n",
        "a: 1\nb: 2",
        "a: |-\n  x",
        // Comments where a scalar could continue, spaces before a colon, empty quotes.
        "key: value\n  #notcomment\nb: 1\n",
        "key: value\n# c\n  # d\nb: 1\n",
        "a:\n  # c\n  b: 1\n",
        "a: |\n  x\n  #y\n",
        "a :  1\n",
        "a: 'x' # c\n",
        "a: \"\"\nb: ''\n",
        "a:\n- x\n  # c\n- y\n",
        "a: x #\n",
        "\"a\\u0000\": 1\n",
        "a: \"\\u0000\"\n",
        "a: b #: c\n",
        "a: [] #x\nb: {} \n",
        "a:\n  -\n  -\n",
        "a: |-\n  x\n \n  y\n",
    ] {
        assert!(agrees(text), "the block reader left {text:?}");
    }
}

#[test]
fn leaves_what_it_does_not_take() {
    for text in [
        "a: 1\na: 2\n",
        "a: 1\n...\n",
        "- a\n",
        "a: -x\n",
        "a: |-\n  x\n   \n  y\n",
        "a: .nan\n",
        "a: nan\n",
        "a: Infinity\n",
        "a: 0x1f\n",
        "a: 012\n",
        "a: 1e3\n",
        "a: +1\n",
        "a: -0\n",
        "a: 1_000\n",
        "a: 2024-01-01\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "<<: {a: 1}\n",
        "a: [1, 2]\n",
        "a: {b: 1}\n",
        "a: >\n  x\n\n  y\n",
        "a: >\n  x\n    y\n",
        "a: >+\n  kept\n",
        "a: |+\n  kept\n",
        "a: |2\n   x\n",
        "a: |\n  x",
        "a: |\n  x\n  ",
        "a: |\n\n  x\n",
        "a: |\nb: 1\n",
        "a: multi\n  line\n",
        "a: \"multi\n  line\"\n",
        "a: b: c\n",
        "a: b:\n",
        "a:b\n",
        "a:\tb\n",
        "a: 1\r\nb: 2\r\n",
        "a: \u{85}\n",
        "  a: 1\n",
        "- a\n- b\n",
        "a\n",
        "a: 1\n- b\n",
        "a: 1\n   b: 2\n",
        "a:\n  - x\n   - y\n",
        "%YAML 1.2\n---\na: 1\n",
        "--- a: 1\n",
        "1: x\n",
        "true: x\n",
        "? a\n: b\n",
        "a: \"\\x41\"\n",
        "a: \"\\ud83d\\ude00\"\n",
        "a: 'x\n  y'\n",
        "a: \"x\" y\n",
        "a: @x\n",
        "a: `x\n",
        "a: %x\n",
        "a: 123456789012345678901\n",
        "a:#x\n",
    ] {
        assert!(
            parse_documents_block(text).is_none(),
            "the block reader took {text:?}"
        );
    }
}

/// Every YAML file of the repository's fixtures and examples: the same values.
#[test]
fn fixtures_and_examples_agree() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut taken = 0;
    for dir in ["fixtures", "examples"] {
        for entry in walkdir::WalkDir::new(root.join(dir)) {
            let entry = entry.unwrap();
            let path = entry.path();
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            if agrees(super::super::strip_bom(&text)) {
                taken += 1;
            }
        }
    }
    assert!(taken > 10, "only {taken} files taken");
}

/// The harness's generated mix (`../shared/perf/perf.py --emit-only`, 2,000 resources, its
/// default seed) and any directory in `$CFGCTL_YAML_CORPUS` (the harness's `--keep` repository,
/// say): the same values, and every file taken. Without `../shared` beside the repository (a
/// clone on its own) only `$CFGCTL_YAML_CORPUS` is read; the repository's own fixtures are
/// always read by `fixtures_and_examples_agree`.
#[test]
fn corpus_agrees() {
    let generated = tempfile::tempdir().unwrap();
    let mut dirs: Vec<std::path::PathBuf> = Vec::new();
    dirs.extend(crate::util::test_support::harness_mix(
        2000,
        generated.path(),
    ));
    if let Some(dir) = std::env::var_os("CFGCTL_YAML_CORPUS") {
        dirs.push(dir.into());
    }
    let (mut taken, mut left) = (0, Vec::new());
    for dir in &dirs {
        for entry in walkdir::WalkDir::new(dir) {
            let path = entry.unwrap().into_path();
            if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if agrees(super::super::strip_bom(&text)) {
                taken += 1;
            } else {
                left.push(path);
            }
        }
    }
    assert!(
        left.is_empty() && (dirs.is_empty() || taken > 0),
        "{taken} files taken; left: {left:?}"
    );
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_./-]{0,8}( [a-z]{1,4})?",
        "-?(0|[1-9][0-9]{0,12})",
        "-?(0|[1-9][0-9]{0,3})\\.[0-9]{1,4}",
        Just("true".to_string()),
        Just("~".to_string()),
        Just("null".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        "\"[a-z :#'\\\\\"é{}]{0,8}\"",
        "'[a-z :#\"]{0,6}'",
        Just("yes".to_string()),
        Just("x: y".to_string()),
        Just("a #c".to_string()),
        Just(".5".to_string()),
        // Digits first: durations and sizes are text; what may be a number, a timestamp or
        // a time is left to the general reader.
        "[0-9]{1,3}(h|m|s|ms|Mi|Gi|w|y|d|e5|x1|:30|_0|\\.[0-9]\\.[0-9]|-01-01|[a-z]{1,3})",
    ]
}

#[derive(Clone, Debug)]
enum Tree {
    Leaf(String),
    /// Its lines, stripped (`|-`), folded (`>`).
    Literal(Vec<String>, bool, bool),
    Map(Vec<(String, Tree)>),
    Seq(Vec<Tree>),
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        4 => word().prop_map(Tree::Leaf),
        1 => (prop::collection::vec("[ a-z{}\":#]{0,6}", 1..4), any::<bool>(), any::<bool>())
            .prop_map(|(l, s, f)| Tree::Literal(l, s, f)),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(("[a-z][a-z_]{0,5}", inner.clone()), 1..5).prop_map(Tree::Map),
            prop::collection::vec(inner, 1..4).prop_map(Tree::Seq),
        ]
    })
}

/// Block-style YAML of a tree (the value of `key` at `indent`).
fn emit(t: &Tree, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match t {
        Tree::Leaf(w) => {
            out.push(' ');
            out.push_str(w);
            out.push('\n');
        }
        Tree::Literal(lines, strip, folded) => {
            out.push_str(match (*folded, *strip) {
                (false, true) => " |-\n",
                (false, false) => " |\n",
                (true, true) => " >-\n",
                (true, false) => " >\n",
            });
            for l in lines {
                out.push_str(&pad);
                out.push_str("  ");
                out.push_str(l);
                out.push('\n');
            }
        }
        Tree::Map(entries) => {
            out.push('\n');
            let mut seen = std::collections::BTreeSet::new();
            for (k, v) in entries {
                if !seen.insert(k) {
                    continue;
                }
                out.push_str(&pad);
                out.push_str("  ");
                out.push_str(k);
                out.push(':');
                emit(v, indent + 2, out);
            }
        }
        Tree::Seq(items) => {
            out.push('\n');
            for v in items {
                out.push_str(&pad);
                out.push_str("  -");
                emit(v, indent + 2, out);
            }
        }
    }
}

fn doc() -> impl Strategy<Value = String> {
    prop::collection::vec(tree(), 1..3).prop_map(|docs| {
        let mut out = String::new();
        for d in docs {
            out.push_str("---\nroot:");
            emit(&d, 0, &mut out);
        }
        out
    })
}

/// The generated texts are mostly taken (the property tests below compare something).
#[test]
fn takes_most_generated_texts() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = doc();
    let taken = (0..400)
        .filter(|_| agrees(&strategy.new_tree(&mut runner).unwrap().current()))
        .count();
    assert!(taken > 100, "only {taken} of 400 taken");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Generated block YAML: whatever the block reader takes, it reads as serde-saphyr does.
    #[test]
    fn agrees_with_serde_saphyr(text in doc()) {
        agrees(&text);
    }

    /// The same, after a hostile edit (a byte replaced, inserted or deleted).
    #[test]
    fn agrees_after_an_edit(text in doc(), at in any::<prop::sample::Index>(), edit in 0u8..3, byte in prop_oneof![Just(b' '), Just(b'\n'), Just(b':'), Just(b'-'), Just(b'#'), Just(b'"'), Just(b'\''), Just(b'|'), Just(b'>'), Just(b'a'), Just(b'1'), Just(b'h'), Just(b'['), Just(b'$')]) {
        let mut bytes = text.into_bytes();
        let i = at.index(bytes.len());
        match edit {
            0 => bytes[i] = byte,
            1 => bytes.insert(i, byte),
            _ => { bytes.remove(i); }
        }
        if let Ok(text) = String::from_utf8(bytes) {
            agrees(&text);
        }
    }
}

/// The byte-by-byte check `plain_chars` was before it passed over plain runs sixteen at a time.
fn plain_chars_reference(b: &[u8]) -> bool {
    (0..b.len()).all(|i| plain_at(b, i))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Passing over plain runs decides as looking at every byte does, wherever the special
    /// bytes and multi-byte characters fall against the runs' edges.
    #[test]
    fn plain_runs_decide_as_every_byte_does(
        parts in prop::collection::vec(
            prop_oneof![
                8 => Just(b"plain text: ok\n".to_vec()),
                1 => prop::sample::select(vec![
                    b"\t".to_vec(), b"\r".to_vec(), b"\x7f".to_vec(), b"\x00".to_vec(),
                    "é".as_bytes().to_vec(), "\u{85}".as_bytes().to_vec(), "\u{feff}".as_bytes().to_vec(),
                    "\u{fffe}".as_bytes().to_vec(), "\u{2028}".as_bytes().to_vec(), "€".as_bytes().to_vec(),
                    vec![0xC2], vec![0xE2, 0x80], vec![0xEF, 0xBF],
                ]),
                1 => prop::collection::vec(any::<u8>(), 0..20),
            ],
            0..12,
        )
    ) {
        let bytes: Vec<u8> = parts.concat();
        prop_assert_eq!(plain_chars(&bytes), plain_chars_reference(&bytes));
    }
}

/// For substitution without positions, a whole `${var:NAME}` must have been plain (only a
/// plain one takes the variable's type): quoted or in a block scalar, the reader gives up.
#[test]
fn a_whole_variable_is_taken_only_plain() {
    use super::parse_documents_block_refs as refs;
    for text in [
        "a: '${var:x}'\n",
        "a: \"${var:x}\"\n",
        "a: |-\n  ${var:x}\n",
    ] {
        assert!(refs(text).is_none(), "{text:?}");
        assert!(parse_documents_block(text).is_some(), "{text:?}");
    }
    for text in [
        "a: ${var:x}\n",
        "a: 'x ${var:y}'\n",
        "a: \"${var:x}-${var:y}\"\n",
        "a: |\n  ${var:x}\n",
    ] {
        assert_eq!(refs(text), parse_documents_block(text), "{text:?}");
        assert!(refs(text).is_some(), "{text:?}");
    }
}
