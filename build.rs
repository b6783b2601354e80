//! Build script: the commit cfgctl is built from, for `cfgctl --version`.
//!
//! `CFGCTL_COMMIT` is `git rev-parse --short HEAD` when the source is a git checkout and git is
//! installed (a release build, `cargo install --git`), else the `CFGCTL_BUILD_COMMIT`
//! environment variable, else "unknown". No dependency: only `std::process::Command`.

// A build script talks to cargo on stdout (`cargo:` lines): the output layer is the crate's.
#![allow(clippy::disallowed_macros)]

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=CFGCTL_BUILD_COMMIT");
    let from_env = std::env::var("CFGCTL_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty());
    let commit = from_env
        .or_else(|| git(&["rev-parse", "--short", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    // Only a commit-like word reaches the version string.
    let commit = if commit.chars().all(|c| c.is_ascii_alphanumeric()) && commit.len() <= 40 {
        commit
    } else {
        "unknown".to_string()
    };
    println!("cargo:rustc-env=CFGCTL_COMMIT={commit}");

    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it points at (a commit).
    if let Some(git_dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
        if let (Some(common), Some(head_ref)) = (
            git(&["rev-parse", "--git-common-dir"]).map(PathBuf::from),
            git(&["symbolic-ref", "-q", "HEAD"]),
        ) {
            let ref_file = common.join(&head_ref);
            if ref_file.exists() {
                println!("cargo:rerun-if-changed={}", ref_file.display());
            }
            // A path that does not exist would make cargo rerun this script on every build.
            let packed = common.join("packed-refs");
            if packed.exists() {
                println!("cargo:rerun-if-changed={}", packed.display());
            }
        }
    }
}
