//! Tests against another YAML 1.2 reader: ruamel.yaml (pure Python, safe loader), asked through
//! `tests/yaml12.py`. A test that needs it fails with a message naming the install command when
//! it is missing (CI installs it in `.ci/run`), never passes without it.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// How ruamel.yaml reads each text: its non-empty documents, or `Err` with its refusal.
pub(crate) fn ruamel(texts: &[String]) -> Vec<Result<Vec<Value>, String>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/yaml12.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 is needed for the YAML 1.2 cross-check: {e}"));
    let input = serde_json::to_vec(texts).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "tests/yaml12.py failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    answers
        .into_iter()
        .map(|a| match (a.get("docs"), a.get("error")) {
            (Some(Value::Array(docs)), _) => Ok(docs.clone()),
            (_, Some(e)) => Err(e.to_string()),
            _ => panic!("tests/yaml12.py answered {a}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::yaml::{parse_documents, parse_documents_plain};

    fn located(text: &str) -> Result<Vec<Value>, String> {
        parse_documents(text)
            .map(|docs| docs.into_iter().map(|d| d.value).collect())
            .map_err(|e| e.message)
    }

    /// Every reader here gives what ruamel.yaml gives (or refuses what it refuses), and the
    /// fast readers give that too or give up.
    fn same_as_ruamel(texts: &[String]) {
        let reference = ruamel(texts);
        for (text, theirs) in texts.iter().zip(reference) {
            let ours = located(text);
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text:?}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{text:?}: cfgctl {ours:?}, ruamel.yaml {theirs:?}"),
            }
            if let Some(fast) = parse_documents_plain(text) {
                let fast: Vec<Value> = fast.into_iter().map(|d| d.value).collect();
                assert_eq!(Ok(fast), ours, "fast reader, {text:?}");
            }
        }
    }

    #[test]
    fn decimals_with_leading_zeros_are_integers() {
        let texts: Vec<String> = [
            "a: 060\n",
            "a: -060\n",
            "a: +060\n",
            "a: 00\n",
            "a: 08\n",
            "a: 017\n",
            "a: +60\n",
            "a: 0o17\n",
            "a: 0x1f\n",
            "a: 060.5\n",
            "a: '060'\n",
            "a: \"060\"\n",
            "a: !!str 060\n",
            "a: &x 060\nb: *x\n",
            "a: [060, '060', 07]\n",
            "060: x\n'061': y\n",
            "- 060\n- 0\n- -0\n",
            "a: 0777777777777777777777777\n",
        ]
        .map(String::from)
        .to_vec();
        same_as_ruamel(&texts);
        let doc = &parse_documents("a: 060\n").unwrap()[0].value;
        assert_eq!(doc["a"], Value::from(60u64));
    }

    /// `interval_secs: 060` (an int32) is sent as 60, never 60.0, however the file is read.
    #[test]
    fn a_manifest_sends_060_as_the_integer_60() {
        let dir = tempfile::tempdir().unwrap();
        let monitor = "api_version: v1/config\nkind: Monitor\nspec:\n  slug: m\n  name: M\n  bucket_slug: b\n  prometheus_query: up == 0\n  interval_secs: 060\n";
        let bucket = "---\napi_version: v1/config\nkind: Bucket\nspec:\n  slug: b\n  name: B\n";
        std::fs::write(dir.path().join("m.yaml"), format!("{monitor}{bucket}")).unwrap();
        let loaded = crate::manifest::load_dir(dir.path()).unwrap();
        assert_eq!(loaded.error_count(), 0, "{:?}", loaded.diagnostics);
        let m = loaded
            .manifests
            .iter()
            .find(|m| m.slug.as_deref() == Some("m"))
            .unwrap();
        assert_eq!(
            serde_json::to_string(&m.spec["interval_secs"]).unwrap(),
            "60"
        );
    }

    #[test]
    fn a_block_scalar_ending_the_file_keeps_no_line_break() {
        let texts: Vec<String> = [
            "a: |\n  x",
            "a: |+\n  x",
            "a: >\n  x",
            "a: |\n  x\n  y",
            "- |\n  x\n  y",
            "a: |\n  x\n",
            "a: |\n  x\n# c",
            "a: |-\n  x",
            "a: \"x\\n\"",
            "a: |\n  x\nb: |\n  y",
            "--- |\n  x",
            "a: 1\n---\nb: >\n  x\n  y",
        ]
        .map(String::from)
        .to_vec();
        same_as_ruamel(&texts);
    }

    #[test]
    fn implicit_keys_longer_than_1024_characters_are_refused() {
        let texts = vec![
            format!("\"{}\": 1\n", "\\u00e9".repeat(200)),
            format!("'{}': 1\n", "''".repeat(600)),
            format!("{}{}: 1\n", "a".repeat(1000), " ".repeat(30)),
            format!("{}: 1\n", "a".repeat(1025)),
            format!("{}: 1\n", "a".repeat(1000)),
            format!("b:\n  - {}: 1\n", "a".repeat(1000)),
        ];
        same_as_ruamel(&texts);
        assert!(parse_documents(&texts[0]).is_err());
    }
}
