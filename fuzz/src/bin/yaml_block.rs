//! The block reader (`yaml::block`, the fast path for the common shape of a manifest file) on
//! arbitrary UTF-8: whenever it takes a text, the located reader must read the very same documents
//! (values and starts). Checks: no panic, no hang, no disagreement.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        if let Some(difference) = cfgctl::util::yaml::block_reader_disagreement(text) {
            panic!("the block reader disagrees on {text:?}:\n{difference}");
        }
    });
}
