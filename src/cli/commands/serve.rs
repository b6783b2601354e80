//! `cfgctl serve`: the emulator until Ctrl-C.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

/// Settings of `cfgctl serve`.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    pub listen: std::net::SocketAddr,
    pub config: crate::emulator::Config,
}

/// `cfgctl serve`: runs the emulator until Ctrl-C.
pub fn serve(opts: ServeSettings) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let emulator = crate::emulator::Emulator::start(&opts.config, opts.listen)
            .await
            .context("starting the emulator")?;
        let store = opts
            .config
            .data
            .as_ref()
            .map_or("in memory".to_string(), |p| p.display().to_string());
        let profile = match opts.config.profile {
            crate::api::registry::Profile::Full => "full",
            crate::api::registry::Profile::Seed => "seed",
        };
        {
            let mut out = crate::util::output::stdout();
            writeln!(out, "{}", emulator.url()).context("writing to stdout")?;
            out.flush().context("writing to stdout")?;
        }
        tracing::info!(
            target: "cfgctl::emulator",
            url = %emulator.url(),
            profile,
            store = %store,
            token = opts.config.token.is_some(),
            server_defaults = opts.config.server_defaults,
            swagger = %opts
                .config
                .swagger
                .as_ref()
                .map_or("embedded".to_string(), |p| p.display().to_string()),
            "listening"
        );
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        tracing::info!(target: "cfgctl::emulator", "shutting down");
        emulator.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}
