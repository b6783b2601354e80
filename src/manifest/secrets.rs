//! The loader's check of secret fields: a reference, never a literal (docs/product.md §2).

use serde_json::Value;

use super::DocCheck;
use crate::api::registry::{Address, Kind};
use crate::config::diagnostic::{Diagnostic, Problem};

impl DocCheck<'_> {
    /// A secret field must hold a reference (`registry::parse_reference`). A literal is an error that
    /// keeps the manifest (`allow_literal_secrets` turns it into a warning once the settings
    /// are known: see `load_dir`); the file is read again located, so it points at the value.
    pub(super) fn literal_secrets(&mut self, kind: Kind, slug: Option<&str>, spec: &Value) {
        for f in kind.def().secrets_in(spec) {
            if crate::api::registry::parse_reference(&f.value).is_some() {
                continue;
            }
            let pos = self.value_pos(&format!("/spec{}", f.pointer));
            self.diagnostics.push(Diagnostic::error(
                self.file,
                pos,
                Problem::LiteralSecret {
                    address: Address::new(kind, slug.map(str::to_string)).to_string(),
                    field: f.path,
                },
            ));
        }
    }
}
