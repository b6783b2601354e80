//! The `cfgctl` binary: everything lives in the library; see `cfgctl::cli`.

fn main() -> std::process::ExitCode {
    cfgctl::cli::main()
}
