//! The saved-plan reader (`apply PLANFILE`) on arbitrary text. Checks: no panic, no hang,
//! and a refusal always says why.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        if let Err(e) = cfgctl::apply::saved::parse(text) {
            assert!(!e.to_string().trim().is_empty(), "refused without a reason");
        }
    });
}
