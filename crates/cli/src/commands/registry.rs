//! `snowctl registry serve`: the archive as the site's registry mirror, until SIGINT or SIGTERM.
//! The flags are turned into `snow_registry::ServeOptions` here; the server is the library's.

use crate::{
    args::RegistryServeArgs,
    exit::{self, Outcome},
    output::Io,
};
use snow_registry::{CertificateSource, Limits, Namespaces, RegistryError, ServeOptions};
use std::{
    net::{IpAddr, SocketAddr},
    process::ExitCode,
};

/// The options of the flags, or every problem with them at once.
fn options(args: &RegistryServeArgs) -> Result<ServeOptions, Vec<String>> {
    let mut problems = Vec::new();
    let listen = args.listen.parse::<SocketAddr>().map_err(|_| {
        problems.push(format!(
            "--listen {}: not an IP:PORT (e.g. 10.0.0.5:443, or 0.0.0.0:443 with --address)",
            args.listen
        ))
    });
    let mut ips = Vec::new();
    for address in &args.addresses {
        match address.parse::<IpAddr>() {
            Ok(ip) => ips.push(ip),
            Err(_) => problems.push(format!("--address {address}: not an IP address")),
        }
    }
    let mut pairs = Vec::new();
    for namespace in &args.namespaces {
        match namespace.split_once('=') {
            Some((registry, ns))
                if !registry.is_empty()
                    && !ns.is_empty()
                    && snow_registry::names::is_name(ns.trim_matches('/')) =>
            {
                pairs.push((registry.to_owned(), ns.to_owned()));
            }
            _ => problems.push(format!(
                "--oci-namespace {namespace}: not REGISTRY=NAMESPACE (e.g. public.ecr.aws=eks-anywhere; the namespace lowercase)"
            )),
        }
    }
    let certificate = match (&args.cert, &args.key, &args.state_dir) {
        (Some(cert), Some(key), None) => {
            if !args.addresses.is_empty() {
                problems.push(
                    "--address names the addresses of a certificate made in --state-dir; a certificate given with --cert names its own".to_owned(),
                );
            }
            Some(CertificateSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            })
        }
        (None, None, Some(dir)) => {
            if let Ok(listen) = listen
                && ips.is_empty()
            {
                if listen.ip().is_unspecified() {
                    problems.push(format!(
                        "--listen {listen} names no address for the certificate: add --address IP for each address the nodes use"
                    ));
                } else {
                    ips.push(listen.ip());
                }
            }
            Some(CertificateSource::StateDir {
                dir: dir.clone(),
                ips,
            })
        }
        _ => {
            problems.push(
                "give --cert FILE and --key FILE, or --state-dir DIR to have a CA and a certificate made there".to_owned(),
            );
            None
        }
    };
    match (listen, certificate) {
        (Ok(listen), Some(certificate)) if problems.is_empty() => Ok(ServeOptions {
            archive: args.archive.clone(),
            listen,
            certificate,
            namespaces: Namespaces::new(pairs),
            limits: Limits::default(),
        }),
        _ => Err(problems),
    }
}

/// Runs `snowctl registry serve`.
pub fn serve(args: RegistryServeArgs, io: &mut Io<'_>) -> Outcome {
    let options = options(&args).map_err(|problems| exit::usage(io, problems.join("\n")))?;
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
