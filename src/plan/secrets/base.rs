//! The secret references (and literals, by their hash) of the manifests at a base revision
//! (`--base REV`), and what stands for a redacted secret when REV held another.

use std::collections::BTreeMap;

use super::parse;
use crate::api::registry::Address;
pub use crate::api::registry::LITERAL_AT_BASE;

/// The secret references of the manifests at a base revision (`--base REV`, read by
/// `ops::base`), by address, then by JSON pointer inside the spec: what [`super::stand_in`] compares
/// the working tree's references with.
#[derive(Debug, Default)]
pub struct BaseRefs(pub BTreeMap<Address, BTreeMap<String, String>>);

/// How [`BaseRefs`] keeps a literal secret of REV: its hash, never its text.
const LITERAL_MARK: &str = "literal:";

/// [`BaseRefs`]' mark of a literal secret: its hash.
pub fn literal_mark(value: &str) -> String {
    format!("{LITERAL_MARK}{}", blake3::hash(value.as_bytes()).to_hex())
}

/// What stands for a redacted secret when REV held `was` and the manifest holds `desired`:
/// the manifest's own value when it is what REV held (no change), else REV's reference, or
/// [`LITERAL_AT_BASE`] for a literal of REV.
pub(super) fn base_stand_in(was: &str, desired: &str) -> String {
    let same = match was.strip_prefix(LITERAL_MARK) {
        Some(_) => parse(desired).is_none() && literal_mark(desired) == was,
        None => was == desired,
    };
    if same {
        desired.to_string()
    } else if was.starts_with(LITERAL_MARK) {
        LITERAL_AT_BASE.to_string()
    } else {
        was.to_string()
    }
}

impl BaseRefs {
    /// The reference a secret field held at REV, when the resource declared one there.
    pub fn get(&self, address: &Address, pointer: &str) -> Option<&str> {
        self.0.get(address)?.get(pointer).map(String::as_str)
    }
}
