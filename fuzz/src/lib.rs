//! Checks shared by the fuzz targets: every problem found in a user's file is located.

use std::path::Path;

use cfgctl::config::diagnostic::Diagnostic;

/// Panics (a finding for the fuzzer) when a diagnostic is not located in `file` at a line
/// and column >= 1, or has an empty message.
pub fn assert_located(diagnostics: &[Diagnostic], file: &Path) {
    for d in diagnostics {
        assert_eq!(d.file, file, "diagnostic in another file: {d}");
        assert!(d.pos.line >= 1, "diagnostic without a line: {d}");
        assert!(d.pos.column >= 1, "diagnostic without a column: {d}");
        assert!(
            !d.problem.to_string().trim().is_empty(),
            "empty message: {d:?}"
        );
    }
}

/// A scratch directory of this process (one per fuzzer instance), emptied.
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cfgctl-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}
