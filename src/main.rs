//! The `cfgctl` binary: everything lives in the library; see `cfgctl::cli`.

/// jemalloc: parsing and comparing manifests is allocation-heavy (serde `Value`s). Chosen by
/// measurement on the harness's realistic mix against glibc's malloc (more CPU for the same
/// memory) and mimalloc (more CPU and a higher peak RSS); the figures are in
/// docs/performance.md.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its start (before `main`): two arenas instead of four per core
/// (cfgctl's heavy work runs on the rayon pool, one thread per core), which lowers a large
/// no-change plan's peak RSS at no CPU cost measured (docs/performance.md).
/// `_RJEM_MALLOC_CONF` still overrides it.
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &u8 = &b"narenas:2\0"[0];

fn main() -> std::process::ExitCode {
    cfgctl::cli::main()
}
