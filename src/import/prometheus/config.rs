//! An Alertmanager configuration read: the file itself, or a Kubernetes Secret holding it
//! (`stringData` or base64 `data`, key `alertmanager.yaml`), with the positions of its nodes
//! for the report and for located errors.

use std::path::Path;

use serde_json::Value;

use super::super::{located, ImportError, Source};
use crate::yaml::{Document, Pos};

/// A parsed Alertmanager configuration and what is needed to point into it.
pub struct Config {
    /// The file as named in messages (a Secret's key appended: `am.yaml#alertmanager.yaml`).
    pub label: String,
    pub doc: Document,
}

impl Config {
    pub fn source(&self, pointer: &str) -> Source {
        Source {
            file: self.label.clone(),
            line: self.pos(pointer).line,
        }
    }

    pub fn pos(&self, pointer: &str) -> Pos {
        self.doc
            .spans
            .nearest(pointer)
            .map(|s| s.field())
            .unwrap_or(self.doc.start)
    }

    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.doc.value.pointer(pointer)
    }

    pub fn err(&self, pointer: &str, message: impl Into<String>) -> ImportError {
        let pos = self.pos(pointer);
        ImportError::Located {
            file: self.label.clone().into(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }
}

/// The key of a Kubernetes Secret that holds the configuration.
const SECRET_KEY: &str = "alertmanager.yaml";

/// Reads an Alertmanager configuration: the file itself, or a Kubernetes Secret holding it
/// under `alertmanager.yaml` in `stringData` or (base64) `data`.
pub fn read(path: &Path, text: &str) -> Result<Config, ImportError> {
    let docs = crate::yaml::parse_documents(text).map_err(|e| located(path, e.pos, e.message))?;
    let Some(doc) = docs.into_iter().next() else {
        return Err(located(
            path,
            Pos::new(1, 1),
            "empty Alertmanager configuration",
        ));
    };
    let label = path.display().to_string();
    if doc.value.get("kind").and_then(Value::as_str) != Some("Secret") {
        return checked(Config { label, doc });
    }
    let outer = Config { label, doc };
    let string_data = format!("/stringData/{SECRET_KEY}");
    let data = format!("/data/{SECRET_KEY}");
    let inner = if let Some(Value::String(s)) = outer.get(&string_data) {
        s.clone()
    } else if let Some(Value::String(s)) = outer.get(&data) {
        let bytes = base64(s).ok_or_else(|| outer.err(&data, "not valid base64"))?;
        String::from_utf8(bytes).map_err(|_| outer.err(&data, "not UTF-8 text once decoded"))?
    } else {
        return Err(outer.err(
            "",
            format!("a Secret without `{SECRET_KEY}` in `stringData` or `data`"),
        ));
    };
    let label = format!("{}#{SECRET_KEY}", path.display());
    let docs = crate::yaml::parse_documents(&inner).map_err(|e| ImportError::Located {
        file: label.clone().into(),
        line: e.pos.line,
        column: e.pos.column,
        message: e.message,
    })?;
    let doc = docs
        .into_iter()
        .next()
        .ok_or_else(|| outer.err("", "empty Alertmanager configuration"))?;
    checked(Config { label, doc })
}

fn checked(config: Config) -> Result<Config, ImportError> {
    if !config.doc.value.is_object() {
        return Err(config.err("", "an Alertmanager configuration must be a mapping"));
    }
    if !matches!(config.get("/route"), Some(Value::Object(_))) {
        return Err(config.err("", "an Alertmanager configuration needs a `route`"));
    }
    Ok(config)
}

/// Standard base64 (padding optional, white space ignored).
fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
