//! The digest of a comparable form: what a plan compares a manifest and its object by.

/// See [`digest`]. Only ever compared within one process: never written anywhere.
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
