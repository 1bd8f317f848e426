//! The settings of `registry serve`: the flags turned into `snow_registry::ServeOptions`, every
//! problem with them said at once.

use super::SettingsError;
use crate::args::RegistryServeArgs;
use snow_registry::{CertificateSource, Limits, Namespaces, ServeOptions};
use std::net::{IpAddr, SocketAddr};

/// `registry serve`, resolved from its flags.
pub struct RegistryServeSettings {
    /// What the server takes.
    pub options: ServeOptions,
}

impl RegistryServeSettings {
    /// From `registry serve`'s flags; every problem with them in one usage error, a line each.
    pub fn resolve(args: &RegistryServeArgs) -> Result<RegistryServeSettings, SettingsError> {
        options(args)
            .map(|options| RegistryServeSettings { options })
            .map_err(|problems| SettingsError::Usage(problems.join("\n")))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, RegistryCommand};
    use clap::Parser;

    fn resolve(line: &[&str]) -> Result<RegistryServeSettings, SettingsError> {
        let mut full = vec!["snowctl", "registry", "serve", "--archive", "a.tar"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Registry(RegistryCommand::Serve(args)) => {
                RegistryServeSettings::resolve(&args)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_problem_is_named_at_once() {
        let Err(SettingsError::Usage(message)) = resolve(&[
            "--listen",
            "nowhere",
            "--address",
            "x",
            "--oci-namespace",
            "bad",
        ]) else {
            panic!("not a usage error");
        };
        let lines: Vec<&str> = message.lines().collect();
        assert_eq!(lines.len(), 4, "{message}");
        assert!(
            lines[0].starts_with("--listen nowhere: not an IP:PORT"),
            "{message}"
        );
        assert!(
            lines[1].starts_with("--address x: not an IP address"),
            "{message}"
        );
        assert!(lines[2].starts_with("--oci-namespace bad:"), "{message}");
        assert!(
            lines[3].starts_with("give --cert FILE and --key FILE"),
            "{message}"
        );
    }

    #[test]
    fn a_state_dir_certificate_names_the_listen_address() {
        let got = resolve(&["--listen", "127.0.0.1:5000", "--state-dir", "s"]).unwrap();
        let CertificateSource::StateDir { ips, .. } = got.options.certificate else {
            panic!("not a state directory");
        };
        assert_eq!(ips, ["127.0.0.1".parse::<IpAddr>().unwrap()]);
    }
}
