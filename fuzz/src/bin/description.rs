//! The description walk (`registry::derive_summary`) on arbitrary JSON: a target's
//! `swagger.json` is input. Checks: no panic, no stack overflow, no hang (the walk is bounded
//! by `registry::walk`'s limits; R4-6, R4-7).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
            return;
        };
        for (name, _) in cfgctl::api::registry::derive_summary(&doc) {
            assert!(!name.is_empty(), "a kind without a name");
        }
    });
}
