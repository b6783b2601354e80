//! `cfgctl.yaml` on arbitrary bytes (through `settings::parse`, as the loader reads it).
//! Checks: no panic, no hang, every problem located in the file at line/column >= 1.

use std::path::Path;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let file = Path::new("cfgctl.yaml");
        if let Err(diagnostics) = cfgctl::config::settings::parse(file, text) {
            assert!(!diagnostics.is_empty(), "refused without a reason");
            cfgctl_fuzz::assert_located(&diagnostics, file);
        }
    });
}
