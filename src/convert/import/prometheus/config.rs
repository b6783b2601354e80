//! An Alertmanager configuration read: the file itself, or a Kubernetes Secret holding it
//! (`stringData` or base64 `data`, key `alertmanager.yaml`), with the positions of its nodes
//! for the report and for located errors.

use std::path::Path;

use serde_json::Value;

use super::super::{located, ImportError, Source};
use crate::util::yaml::{Document, Pos};

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
    let docs =
        crate::util::yaml::parse_documents(text).map_err(|e| located(path, e.pos, e.message))?;
    // One configuration a file (red team D29): a second document is never dropped silently.
    if let Some(second) = docs.get(1) {
        return Err(located(
            path,
            second.start,
            format!(
                "{} documents: an Alertmanager configuration (or the Secret holding it) is one document; give the file of the one to import",
                docs.len()
            ),
        ));
    }
    let Some(doc) = docs.into_iter().next() else {
        return Err(located(
            path,
            Pos::new(1, 1),
            "empty Alertmanager configuration",
        ));
    };
    let label = path.display().to_string();
    let base = match secret_at(&doc.value) {
        Ok(Some(base)) => base,
        Ok(None) => return checked(Config { label, doc }),
        Err(message) => return Err(Config { label, doc }.err("", message)),
    };
    let outer = Config { label, doc };
    let string_data = format!("{base}/stringData/{SECRET_KEY}");
    let data = format!("{base}/data/{SECRET_KEY}");
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
    let docs = crate::util::yaml::parse_documents(&inner).map_err(|e| ImportError::Located {
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

/// Where the Secret holding the configuration is in a document: `Some("")` for a Secret, the
/// pointer of the one item of a `List` that holds it (what `kubectl get secret -o yaml` gives
/// for several names), `None` for a configuration itself.
fn secret_at(doc: &Value) -> Result<Option<String>, String> {
    match doc.get("kind").and_then(Value::as_str) {
        Some("Secret") => Ok(Some(String::new())),
        Some("List") => {
            let items = doc
                .get("items")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let holding: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(_, i)| i.get("kind").and_then(Value::as_str) == Some("Secret"))
                .filter(|(_, i)| {
                    ["stringData", "data"]
                        .iter()
                        .any(|k| i.get(k).and_then(|d| d.get(SECRET_KEY)).is_some())
                })
                .map(|(n, _)| n)
                .collect();
            match holding.as_slice() {
                [one] => Ok(Some(format!("/items/{one}"))),
                [] => Err(format!("a List with no Secret holding `{SECRET_KEY}`")),
                more => Err(format!(
                    "a List with {} Secrets holding `{SECRET_KEY}`: give the file of the one to import",
                    more.len()
                )),
            }
        }
        _ => Ok(None),
    }
}

fn checked(config: Config) -> Result<Config, ImportError> {
    if !config.doc.value.is_object() {
        return Err(config.err("", "an Alertmanager configuration must be a mapping"));
    }
    if !matches!(config.get("/route"), Some(Value::Object(_))) {
        return Err(config.err("", "an Alertmanager configuration needs a `route`"));
    }
    check_route(&config, "/route")?;
    check_receivers(&config)?;
    Ok(config)
}

/// The shape Alertmanager requires of a route and its children, located.
fn check_route(config: &Config, at: &str) -> Result<(), ImportError> {
    if !matches!(config.get(at), Some(Value::Object(_))) {
        return Err(config.err(at, "a route must be a mapping"));
    }
    for key in ["repeat_interval", "group_wait", "group_interval"] {
        let p = format!("{at}/{key}");
        if let Some(v) = config.get(&p) {
            if v.as_str().and_then(super::parse_duration).is_none() {
                return Err(config.err(&p, format!("`{key}` is not a duration (such as 5m or 4h)")));
            }
        }
    }
    let lists = [("group_by", true), ("matchers", true), ("routes", false)];
    for (key, of_strings) in lists {
        let p = format!("{at}/{key}");
        match config.get(&p) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if !of_strings || items.iter().all(Value::is_string) => {}
            Some(_) if of_strings => {
                return Err(config.err(&p, format!("`{key}` must be a list of strings")))
            }
            Some(_) => return Err(config.err(&p, format!("`{key}` must be a list"))),
        }
    }
    for key in ["match", "match_re"] {
        let p = format!("{at}/{key}");
        if config.get(&p).is_some_and(|v| !v.is_object()) {
            return Err(config.err(&p, format!("`{key}` must be a mapping of label values")));
        }
    }
    let n = config
        .get(&format!("{at}/routes"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    for i in 0..n {
        check_route(config, &format!("{at}/routes/{i}"))?;
    }
    Ok(())
}

/// Receivers: a list of mappings, each named once, each integration a list of mappings.
fn check_receivers(config: &Config) -> Result<(), ImportError> {
    let receivers = match config.get("/receivers") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(config.err("/receivers", "`receivers` must be a list")),
    };
    let mut names = std::collections::BTreeSet::new();
    for (i, receiver) in receivers.iter().enumerate() {
        let at = format!("/receivers/{i}");
        let Value::Object(members) = receiver else {
            return Err(config.err(&at, "a receiver must be a mapping"));
        };
        let name = members.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            return Err(config.err(&at, "a receiver needs a `name`"));
        }
        if !names.insert(name) {
            return Err(config.err(
                &format!("{at}/name"),
                format!("receiver `{name}` is defined twice"),
            ));
        }
        for (key, value) in members.iter().filter(|(k, _)| k.ends_with("_configs")) {
            let p = format!("{at}/{key}");
            let ok = value
                .as_array()
                .is_some_and(|l| l.iter().all(Value::is_object));
            if !ok {
                return Err(config.err(&p, format!("`{key}` must be a list of mappings")));
            }
        }
    }
    Ok(())
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
