//! Embedded JSON documents (`dashboard_json`): a mapping becomes its JSON string, a string
//! must hold a JSON object, and a syntax error inside it points into the manifest.

use super::*;

impl DocCheck<'_> {
    /// `dashboard_json` given as a mapping becomes its JSON string; given as a string it must
    /// hold a JSON object.
    pub(super) fn embedded_json(&mut self, kind: Kind, spec: &mut Value) -> Vec<String> {
        let mut failed = Vec::new();
        for embedded in kind.def().embedded_json {
            let Some(value) = spec.get_mut(embedded.field) else {
                continue;
            };
            let pointer = format!("/spec/{}", embedded.field);
            if self.unresolved(&pointer) {
                continue;
            }
            let field = embedded.field.to_string();
            let errors_before = self.diagnostics.len();
            match value {
                Value::Object(_) => {
                    // Serialising a Value cannot fail.
                    let mut text = serde_json::to_string(value).unwrap_or_default();
                    // Held for the whole run: no room left over from growing.
                    text.shrink_to_fit();
                    *value = Value::String(text);
                }
                Value::String(text) if text.trim().is_empty() => {}
                // Read once, for the digest: a text the reader takes on is JSON, so it is
                // checked as soon as it is known to be an object.
                Value::String(text) if self.read_object(text, embedded) => {}
                Value::String(text) => match serde_json::from_str::<Shape>(text) {
                    Ok(Shape("a mapping")) => {}
                    Ok(Shape(found)) => {
                        let pos = self.value_pos(&pointer);
                        self.error(
                            pos,
                            Problem::InvalidEmbeddedJson {
                                field,
                                message: format!(
                                    "the document must be a JSON object, found {found}"
                                ),
                            },
                        );
                    }
                    Err(e) if self.file_of(&pointer).is_some() => {
                        // The document is that file's text: its line and column are the file's.
                        let file = self.file_of(&pointer).unwrap_or_default();
                        let pos = Pos::new(
                            u32::try_from(e.line()).unwrap_or(u32::MAX).max(1),
                            u32::try_from(e.column()).unwrap_or(u32::MAX).max(1),
                        );
                        self.failed = true;
                        self.diagnostics.push(Diagnostic::error(
                            &file,
                            pos,
                            Problem::InvalidEmbeddedJson {
                                field,
                                message: format!(
                                    "not valid JSON: {} (the document of this `${{file:…}}`)",
                                    yaml::json_message(&e)
                                ),
                            },
                        ));
                    }
                    Err(e) => {
                        let pos = self.embedded_pos(&pointer, e.line(), e.column());
                        self.error(
                            pos,
                            Problem::InvalidEmbeddedJson {
                                field,
                                message: format!(
                                    "not valid JSON: {} at line {} column {} of the document",
                                    yaml::json_message(&e),
                                    e.line(),
                                    e.column()
                                ),
                            },
                        );
                    }
                },
                other => {
                    let found = crate::util::jsonpath::type_name(other);
                    let pos = self.value_pos(&pointer);
                    self.error(
                        pos,
                        Problem::InvalidEmbeddedJson {
                            field,
                            message: format!("expected a JSON string or a mapping, found {found}"),
                        },
                    );
                }
            }
            if self.diagnostics.len() > errors_before {
                failed.push(format!("/{}", embedded.field));
            }
        }
        failed
    }

    /// Whether a lean load's reader (`Lean::read_document`) takes the document `text` on and
    /// it is a JSON object; its bytes are then kept for the manifest's digest. A reader takes
    /// on only text serde_json reads (a property test of `plan::normalize` holds it to that),
    /// so the type of the value is its first byte's.
    fn read_object(&mut self, text: &str, embedded: &crate::api::registry::EmbeddedJson) -> bool {
        let Some(read) = self.read_document else {
            return false;
        };
        let first = text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .as_bytes()
            .first();
        if first != Some(&b'{') {
            return false;
        }
        match read(text, embedded.volatile) {
            Some(bytes) => {
                self.prepared.push((embedded.field, bytes));
                true
            }
            None => false,
        }
    }

    /// The file (as shown) whose whole text the value at `pointer` is, from a `${file:…}`.
    fn file_of(&self, pointer: &str) -> Option<PathBuf> {
        self.from_files
            .iter()
            .find(|(p, _)| p == pointer)
            .map(|(_, f)| f.clone())
    }

    /// The position of a JSON syntax error inside an embedded document: exact for a block
    /// scalar (`dashboard_json: |`), whose lines keep their columns; the value otherwise.
    fn embedded_pos(&self, pointer: &str, line: usize, column: usize) -> Pos {
        let Some(span) = self.doc.spans.get(pointer) else {
            return self.doc.start;
        };
        let is_block = span.key.is_some_and(|k| k.line < span.value.line);
        if !is_block || line == 0 {
            return span.value;
        }
        let add = |base: u32, n: usize| {
            u32::try_from(n)
                .ok()
                .and_then(|n| base.checked_add(n))
                .unwrap_or(base)
        };
        Pos::new(
            add(span.value.line, line - 1),
            add(span.value.column, column.saturating_sub(1)),
        )
    }
}
