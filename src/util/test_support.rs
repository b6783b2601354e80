//! What unit tests share: the perf harness's generated mix of manifests.

use std::path::{Path, PathBuf};

/// The harness's generated mix of `n` resources (`../shared/perf/perf.py --emit-only`, its
/// default seed) written into `into`, when `../shared` is beside the repository; `None` in a
/// clone on its own (the tests then read the repository's fixtures alone).
pub fn harness_mix(n: usize, into: &Path) -> Option<PathBuf> {
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/perf/perf.py");
    if !harness.is_file() {
        return None;
    }
    let out = std::process::Command::new("python3")
        .arg(&harness)
        .args(["--cfgctl", "unused", "--n", &n.to_string(), "--emit-only"])
        .arg(into)
        .output()
        .expect("python3 runs the harness's generator");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(into.to_path_buf())
}
