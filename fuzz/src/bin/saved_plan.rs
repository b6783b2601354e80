//! The saved-plan reader (`apply PLANFILE`) on arbitrary bytes, as the stream `apply` reads
//! and as text. Checks: no panic, no hang, a refusal always says why, and the two readers
//! agree on whether a file is a plan.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let streamed = cfgctl::apply::saved::parse(data);
        if let Err(e) = &streamed {
            assert!(!e.to_string().trim().is_empty(), "refused without a reason");
        }
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let whole = cfgctl::plan::file::read_saved(text);
        assert_eq!(whole.is_ok(), streamed.is_ok(), "the two readers disagree");
    });
}
