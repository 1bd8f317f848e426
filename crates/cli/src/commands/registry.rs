//! `snowctl registry serve`: the archive as the site's registry mirror, until SIGINT or SIGTERM.
//! The flags are turned into `snow_registry::ServeOptions` by `settings::registry`; the server is
//! the library's.

use crate::{
    args::RegistryServeArgs,
    exit::{self, Outcome},
    output::Io,
    settings::RegistryServeSettings,
};
use snow_registry::{CertificateSource, RegistryError};
use std::{net::IpAddr, process::ExitCode};

/// Runs `snowctl registry serve`.
pub fn serve(args: RegistryServeArgs, io: &mut Io<'_>) -> Outcome {
    let RegistryServeSettings { options } =
        exit::settled(io, RegistryServeSettings::resolve(&args))?;
    let archive = args.archive.display().to_string();
    let addresses: Vec<IpAddr> = match &options.certificate {
        CertificateSource::StateDir { ips, .. } => ips.clone(),
        CertificateSource::Files { .. } => vec![options.listen.ip()],
    };
    let runtime = exit::runtime(io, true)?;
    // The handlers first: a signal sent as soon as the CA is printed must stop the server
    // gracefully, not kill the process.
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        let _entered = runtime.enter();
        signal(SignalKind::terminate()).and_then(|t| Ok((t, signal(SignalKind::interrupt())?)))
    };
    let (mut term, mut int) = signals
        .map_err(|e| exit::failed(io, format_args!("cannot handle SIGTERM and SIGINT: {e}")))?;
    let running = runtime.block_on(snow_registry::serve(options));
    let running = running.map_err(|e| match &e {
        RegistryError::Archive(_) => exit::archive(io, &e),
        RegistryError::Tls(_) => exit::usage(io, &e),
        RegistryError::Listen { .. } => exit::failed(io, &e),
    })?;
    if let Some(ca) = &running.ca_pem {
        let endpoint = addresses.first().copied().unwrap_or(running.addr.ip());
        io.out(&snow_registry::tls::mirror_configuration(
            &endpoint,
            running.addr.port(),
            Some(ca),
        ));
    }
    let made = if running.made_certificate {
        "a new certificate"
    } else {
        "its certificate"
    };
    io.progress(&format!(
        "Serving {} images ({} repositories) of {archive} at https://{} with {made}; stop with Ctrl-C or SIGTERM\n",
        running.images, running.repositories, running.addr
    ));
    runtime.block_on(async {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    });
    running.stop();
    io.progress("Stopped\n");
    Ok(ExitCode::SUCCESS)
}
