//! The manifest loader on arbitrary bytes: the first byte picks the file type (even: YAML,
//! odd: JSON), the rest is the file. Checks: no panic, no hang (AFL's timeout), every
//! diagnostic located in that file at line/column >= 1, and a file either loads manifests or
//! says why not.

fn main() {
    let dir = cfgctl_fuzz::scratch_dir("manifest");
    afl::fuzz!(|data: &[u8]| {
        let Some((&selector, content)) = data.split_first() else {
            return;
        };
        let name = if selector % 2 == 0 {
            "m.yaml"
        } else {
            "m.json"
        };
        let file = dir.join(name);
        for stale in ["m.yaml", "m.json"] {
            let _ = std::fs::remove_file(dir.join(stale));
        }
        std::fs::write(&file, content).expect("write the input");
        let loaded = cfgctl::manifest::load_dir(&dir).expect("the directory exists");
        cfgctl_fuzz::assert_located(&loaded.diagnostics, &file);
        if loaded.error_count() > 0 {
            assert!(
                loaded.manifests.len() <= 1 || !loaded.diagnostics.is_empty(),
                "errors without a diagnostic"
            );
        }
        for m in &loaded.manifests {
            assert!(m.pos.line >= 1, "manifest without a line: {}", m.address());
            if let Some(slug) = &m.slug {
                assert!(
                    cfgctl::api::wire::is_usable_segment(slug),
                    "a manifest with an unusable slug was accepted: {slug:?}"
                );
            }
        }
    });
}
