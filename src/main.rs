//! The `cfgctl` binary: everything lives in the library; see `cfgctl::cli`.

/// mimalloc: parsing and comparing manifests is allocation-heavy (serde `Value`s), and glibc's
/// malloc took about a third of a load's time (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cfgctl::cli::main()
}
