//! The hashes of a normalised form: the digest a plan compares a manifest and its object by
//! (in memory only), and the fingerprint a saved plan keeps of what it changes.

use serde_json::Value;

use crate::api::registry::Kind;

/// See [`super::digest`]. Only ever compared within one process: never written anywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digest(pub [u8; 16]);

impl Digest {
    /// XXH3-128 of a comparable form under a secret drawn for this process. A digest is only
    /// compared with another made in the same run (a manifest's with its object's), so it
    /// needs no fixed key; the random secret means nobody who writes to the tenant can make
    /// an object whose digest is its manifest's while its form differs (XXH3 is not meant to
    /// resist collisions made by someone who knows its secret). BLAKE3 did this before: on
    /// forms of ~3 KB it runs at ~1 GB/s, and a cold plan of the harness's 10,000 spent
    /// 7 % of its CPU hashing them (541 → 505 ms, `perf stat`, ten cold plans each).
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(xxhash_rust::xxh3::xxh3_128_with_secret(bytes, secret()).to_le_bytes())
    }
}

/// The process's digest secret: 192 bytes (XXH3 takes 136 or more) expanded by BLAKE3 from 32
/// bytes of the system's random source, or, if that cannot be read, from the standard
/// library's per-process random hash keys, the time and the process id.
fn secret() -> &'static [u8] {
    use std::hash::BuildHasher;
    use std::io::Read;
    static SECRET: std::sync::OnceLock<[u8; 192]> = std::sync::OnceLock::new();
    SECRET.get_or_init(|| {
        let mut seed = [0u8; 32];
        let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut seed));
        let mut hasher =
            blake3::Hasher::new_derive_key("cfgctl 2026-11-28 comparable-form digest secret");
        hasher.update(&seed);
        if read.is_err() {
            let keys = std::collections::hash_map::RandomState::new();
            let h = keys.hash_one((std::process::id(), std::time::SystemTime::now()));
            hasher.update(&h.to_le_bytes());
        }
        let mut secret = [0u8; 192];
        hasher.finalize_xof().fill(&mut secret);
        secret
    })
}

/// A stable fingerprint of an object's normalised form: BLAKE3, its first 128 bits in hex. A
/// saved plan holds it for each object it updates or deletes, and `apply` refuses the plan when
/// the object's fingerprint changed since: nobody who writes to the tenant can change an object
/// and keep its fingerprint (FNV-1a's 64 bits, used before, are no such guard). Secret
/// fields count as set or not, whatever they hold: a plan holds the manifests' references in
/// place of what the target answered (`secrets::stand_in`), and a target reads them back as
/// `**REDACTED**`.
pub fn fingerprint(kind: Kind, object: &Value) -> String {
    let found = kind.def().secrets_in(object);
    let masked;
    let object = if found.is_empty() {
        object
    } else {
        let mut copy = object.clone();
        for f in found {
            if let Some(slot) = copy.pointer_mut(&f.pointer) {
                *slot = Value::String(crate::api::registry::SHOWN.into());
            }
        }
        masked = copy;
        &masked
    };
    let text = super::normalize(kind, object, &[]).to_string();
    let hash = blake3::hash(text.as_bytes());
    hash.as_bytes()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `text` has the form [`fingerprint`] writes: 32 lowercase hex digits.
pub fn is_fingerprint(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_forms_have_one_digest_and_the_secret_is_not_xxh3s_own() {
        assert_eq!(Digest::of(b"{\"a\":1}"), Digest::of(b"{\"a\":1}"));
        assert_ne!(Digest::of(b"{\"a\":1}"), Digest::of(b"{\"a\":2}"));
        // Keyed: not the hash anyone can work out with XXH3's default secret.
        let unkeyed = xxhash_rust::xxh3::xxh3_128(b"{\"a\":1}").to_le_bytes();
        assert_ne!(Digest::of(b"{\"a\":1}").0, unkeyed);
        assert_ne!(secret(), &[0u8; 192][..]);
    }
}
