//! The `cfgctl` binary: everything lives in the library; see `cfgctl::cli`.

/// jemalloc: parsing and comparing manifests is allocation-heavy (serde `Value`s). Measured on
/// the realistic 10,000-resource mix (docs/performance.md): against glibc's malloc a third less
/// CPU for the same memory; against mimalloc less CPU and two thirds of its peak RSS.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its start (before `main`): two arenas instead of four per core
/// (cfgctl's heavy work runs on the rayon pool, one thread per core), which keeps a no-change
/// plan of 10,000 resources about 12 MiB lower at no CPU cost measured. `_RJEM_MALLOC_CONF`
/// still overrides it.
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &u8 = &b"narenas:2\0"[0];

fn main() -> std::process::ExitCode {
    cfgctl::cli::main()
}
