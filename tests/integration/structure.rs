//! ARCHITECTURE.md's structural invariants, checked against the source: no import circle
//! among the library's modules, no source file over 600 lines but the registry table, no
//! kind named outside the registry (its tests aside), clap only in `cli`; and ARCHITECTURE.md
//! itself stays a short map naming real paths. Each failure names the file to look at.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Every library source file with its text, tests cut off (`#[cfg(test)]` to the end, and
/// the `tests.rs` files of modules).
fn sources() -> Vec<(PathBuf, String)> {
    let src = crate::support::root().join("src");
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || path.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let code = match text.find("#[cfg(test)]") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        out.push((path.strip_prefix(&src).unwrap().to_path_buf(), code));
    }
    out
}

/// The top-level module a file belongs to (`plan/file.rs` → `plan`).
fn module_of(path: &std::path::Path) -> String {
    let first = path
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn no_import_circle_among_modules() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, code) in sources() {
        let from = module_of(&path);
        for (i, _) in code.match_indices("crate::") {
            let to: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !to.is_empty() && to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // A module reaches itself through its imports: a circle.
    let mut circles = Vec::new();
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<String> = edges[start].iter().cloned().collect();
        while let Some(m) = stack.pop() {
            if &m == start {
                circles.push(start.clone());
                break;
            }
            if seen.insert(m.clone()) {
                stack.extend(edges.get(&m).into_iter().flatten().cloned());
            }
        }
    }
    assert!(
        circles.is_empty(),
        "modules in an import circle: {circles:?}\n{edges:#?}"
    );
}

/// The sibling files one file of a folder names by path (`super::NAME::`, or
/// `crate::MODULE::NAME::`), the folder's root (`mod.rs`, or `MODULE.rs` beside the folder)
/// left out: it declares its files, and they take its shared items (`super::runtime`).
fn sibling_edges() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let files = sources();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (path, code) in &files {
        let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) else {
            continue;
        };
        if path.ends_with("mod.rs") {
            continue;
        }
        let module = folder.to_string_lossy().replace('/', "::");
        let prefixes = ["super::".to_string(), format!("crate::{module}::")];
        for prefix in &prefixes {
            for (i, _) in code.match_indices(prefix.as_str()) {
                let rest = &code[i + prefix.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !rest[name.len()..].starts_with("::") || name == "mod" {
                    continue;
                }
                let to = folder.join(format!("{name}.rs"));
                if &to != path && files.iter().any(|(p, _)| p == &to) {
                    edges.entry(path.clone()).or_default().insert(to);
                }
            }
        }
    }
    edges
}

#[test]
fn no_import_circle_among_the_files_of_a_module() {
    let edges = sibling_edges();
    let mut circles = Vec::new();
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<PathBuf> = edges[start].iter().cloned().collect();
        while let Some(f) = stack.pop() {
            if &f == start {
                circles.push(start.clone());
                break;
            }
            if seen.insert(f.clone()) {
                stack.extend(edges.get(&f).into_iter().flatten().cloned());
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files in an import circle: {circles:?}\n{edges:#?}"
    );
}

#[test]
fn no_source_file_over_600_lines_but_the_registry_table() {
    let src = crate::support::root().join("src");
    let mut long = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || path.ends_with("registry.rs")
        {
            continue;
        }
        let lines = std::fs::read_to_string(path).unwrap().lines().count();
        if lines > 600 {
            long.push(format!("{} ({lines} lines)", path.display()));
        }
    }
    assert!(long.is_empty(), "split these: {long:?}");
}

#[test]
fn only_the_registry_names_a_kind() {
    // A kind named in code is a kind treated apart: `Kind::named("Team")`, or a kind's name
    // as a string next to a lookup. Behaviour that differs by kind is a registry column.
    let names: Vec<String> = cfgctl::api::registry::embedded_kinds()
        .iter()
        .map(|d| format!("\"{}\"", d.name))
        .collect();
    let mut found = Vec::new();
    for (path, code) in sources() {
        if path.starts_with("api/registry") || path.ends_with("registry.rs") {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            let named = line.contains("Kind::named(")
                || (line.contains("from_name(") && names.iter().any(|k| line.contains(k.as_str())));
            if named {
                found.push(format!("src/{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "behaviour that differs by kind belongs in a registry column:\n{}",
        found.join("\n")
    );
}

#[test]
fn clap_stops_at_cli() {
    // `cli::resolve` turns clap's types into the commands' settings; nothing below sees them.
    let mut found = Vec::new();
    for (path, code) in sources() {
        if path.starts_with("cli") || path.ends_with("cli.rs") {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            if line.contains("clap::")
                || line.contains("clap_complete")
                || line.contains("use clap")
            {
                found.push(format!("src/{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "clap's types stop at `cli` (resolve them into settings there):\n{}",
        found.join("\n")
    );
}

/// The longest ARCHITECTURE.md may grow: a map, not a manual (issue 40).
const MAX_ARCHITECTURE_LINES: usize = 300;

/// Every `src/...` path a text names (globs left out), trailing punctuation trimmed.
fn src_paths(text: &str) -> Vec<String> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || "_./*-".contains(c);
    let mut out = Vec::new();
    for (at, _) in text.match_indices("src/") {
        if text[..at].chars().next_back().is_some_and(path_char) {
            continue;
        }
        let path: String = text[at..].chars().take_while(|&c| path_char(c)).collect();
        let path = path.trim_end_matches(['.', ',']);
        if !path.contains('*') {
            out.push(path.to_string());
        }
    }
    out
}

#[test]
fn the_architecture_map_is_short_and_names_real_paths() {
    let text = std::fs::read_to_string(crate::support::root().join("ARCHITECTURE.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= MAX_ARCHITECTURE_LINES,
        "ARCHITECTURE.md has {lines} lines, over {MAX_ARCHITECTURE_LINES}: keep it a map \
         (details belong in the module docs, measurements in docs/performance.md)"
    );
    let paths = src_paths(&text);
    assert!(paths.iter().any(|p| p == "src/lib.rs"), "{paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !crate::support::root().join(p.as_str()).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn src_paths_are_read_as_written() {
    let text = "`src/lib.rs`, src/ops/ (see `src/**/snapshots/`) and fuzz/src/bin; src/a.rs.";
    assert_eq!(src_paths(text), ["src/lib.rs", "src/ops/", "src/a.rs"]);
}

/// Functions longer than this are split (ARCHITECTURE.md: "no function over 120 lines").
const MAX_FUNCTION_LINES: usize = 120;

/// Functions over the limit that another change splits; each entry is `file: fn` and must
/// still be over it (a stale entry fails too).
const LONG_FUNCTIONS_BEING_SPLIT: &[&str] = &[];

/// Every function of `code` with its first line and its length in lines, signature to
/// closing brace. The source is rustfmt's: a body's closing brace stands alone at the
/// indentation of its `fn` line.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = ["pub", "async", "const", "unsafe", "extern"];
        if !words[..at]
            .iter()
            .all(|w| qualifiers.contains(w) || w.starts_with("pub("))
        {
            continue;
        }
        let Some(name) = words.get(at + 1).map(|w| {
            w.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")
                .to_string()
        }) else {
            continue;
        };
        // The signature ends at `{` (a body) or `;` (none).
        let Some(open) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with(';') || t.ends_with("{}")
        }) else {
            continue;
        };
        let t = lines[open].trim_end();
        if t.ends_with(';') {
            continue;
        }
        if t.ends_with("{}") {
            found.push((name, i + 1, open - i + 1));
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (open + 1..lines.len()).find(|&j| lines[j].trim_end() == close) {
            found.push((name, i + 1, end - i + 1));
        }
    }
    found
}

#[test]
fn no_function_over_120_lines() {
    let mut long = Vec::new();
    let mut being_split = Vec::new();
    for (path, code) in sources() {
        for (name, line, lines) in functions(&code) {
            if lines <= MAX_FUNCTION_LINES {
                continue;
            }
            let entry = format!("{}: {name}", path.display());
            if LONG_FUNCTIONS_BEING_SPLIT.contains(&entry.as_str()) {
                being_split.push(entry);
            } else {
                long.push(format!(
                    "src/{}:{line}: fn {name} ({lines} lines)",
                    path.display()
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these functions:\n{}",
        long.join("\n")
    );
    let stale: Vec<&&str> = LONG_FUNCTIONS_BEING_SPLIT
        .iter()
        .filter(|e| !being_split.iter().any(|b| b == *e))
        .collect();
    assert!(
        stale.is_empty(),
        "no longer over {MAX_FUNCTION_LINES} lines: remove them from LONG_FUNCTIONS_BEING_SPLIT: {stale:?}"
    );
}

/// The measure itself, on a sample: a body's lines from its signature to its closing brace.
#[test]
fn function_lengths_are_measured_from_signature_to_closing_brace() {
    let code = "pub(crate) async fn a(\n    x: u8,\n) -> u8 {\n    x\n}\n\nimpl T {\n    fn b(&self) {}\n    fn c(&self);\n    pub fn d(&self) {\n        if true {\n        }\n    }\n}\n";
    assert_eq!(
        functions(code),
        vec![
            ("a".to_string(), 1, 5),
            ("b".to_string(), 8, 1),
            ("d".to_string(), 10, 4),
        ]
    );
}

/// The crate's top-level modules are its wings, each a layer or a concern a newcomer can name
/// (ARCHITECTURE.md's code map); a new concern finds its wing rather than a place of its own.
const MAX_TOP_LEVEL_MODULES: usize = 12;

#[test]
fn at_most_twelve_top_level_modules_each_a_folder_with_its_mod_rs() {
    let src = crate::support::root().join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|name| name.strip_suffix(';'))
        .collect();
    assert!(
        modules.len() <= MAX_TOP_LEVEL_MODULES,
        "{} top-level modules, at most {MAX_TOP_LEVEL_MODULES}: {modules:?}",
        modules.len()
    );
    // One form for a wing: `src/WING/mod.rs`; beside the wings src/ holds lib.rs and main.rs.
    let mut others = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        let wing = modules.contains(&name.as_str()) && src.join(&name).join("mod.rs").is_file();
        if !wing && name != "lib.rs" && name != "main.rs" {
            others.push(name);
        }
    }
    others.sort();
    assert!(
        others.is_empty(),
        "src/ holds only lib.rs, main.rs and the wings' folders: {others:?}"
    );
}

/// One test-file convention (ARCHITECTURE.md, "How to work here"): a module's unit tests are its
/// child module `tests`, inline or in `tests.rs` in the module's own folder (a larger one may
/// have children under `tests/`), found by the module tree alone: no `#[path]`, no
/// `*_tests.rs` beside the module.
#[test]
fn one_test_file_convention_without_path_attributes() {
    let src = crate::support::root().join("src");
    let mut wrong = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let shown = path.strip_prefix(&src).unwrap().display().to_string();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with("_tests.rs") {
            wrong.push(format!("{shown}: a test file beside its module (make it `tests.rs` in the module's folder)"));
        }
        let text = std::fs::read_to_string(path).unwrap();
        if text.lines().any(|l| l.trim_start().starts_with("#[path")) {
            wrong.push(format!(
                "{shown}: a `#[path]` attribute (let the module tree find the file)"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Where each cargo feature's dependencies may be named (`crate::` paths in src/, as prefixes):
/// the modules its `off.rs` stands in for when it is left out. A dependency named elsewhere
/// breaks the lean build (`cargo check --no-default-features` in `.ci/run`).
const FEATURE_HOMES: [(&str, &[&str]); 3] = [
    (
        "emulator",
        &[
            "emulator/mod.rs",
            "emulator/api",
            "emulator/idle.rs",
            "emulator/layers.rs",
            "emulator/query.rs",
            "emulator/ratelimit.rs",
            "emulator/stats.rs",
            "emulator/store.rs",
        ],
    ),
    ("policy", &["ops/policy/rego.rs", "ops/policy/rego/"]),
    ("promql", &["util/promql.rs", "util/promql/threshold.rs"]),
];

/// The `[features]` of Cargo.toml: each feature with what it turns on (`dep:` dependencies
/// with `-` read as `_`, as src/ names them).
fn features() -> BTreeMap<String, Vec<String>> {
    let manifest = std::fs::read_to_string(crate::support::root().join("Cargo.toml")).unwrap();
    let section = manifest.split("\n[features]\n").nth(1).unwrap_or("");
    let section = section.split("\n[").next().unwrap_or("");
    let mut out = BTreeMap::new();
    for line in section.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, list)) = line.split_once(" = ") else {
            continue;
        };
        let items = list.split('"').skip(1).step_by(2);
        out.insert(
            name.to_string(),
            items.map(|item| item.replace('-', "_")).collect(),
        );
    }
    out
}

#[test]
fn a_features_dependencies_are_named_only_in_the_modules_it_gates() {
    let features = features();
    let names: Vec<&str> = FEATURE_HOMES.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        features.get("default"),
        Some(&names.iter().map(|n| n.to_string()).collect())
    );
    let mut outside = Vec::new();
    for (path, code) in sources() {
        let shown = path.to_string_lossy().replace('\\', "/");
        for (name, homes) in FEATURE_HOMES {
            if homes.iter().any(|home| shown.starts_with(home)) {
                continue;
            }
            let deps = features[name].iter().filter_map(|d| d.strip_prefix("dep:"));
            for dep in deps {
                if code.contains(&format!("{dep}::")) {
                    outside.push(format!("src/{shown} names {dep} (feature `{name}`)"));
                }
            }
        }
    }
    assert!(outside.is_empty(), "{outside:#?}");
}
