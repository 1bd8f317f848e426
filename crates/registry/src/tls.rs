//! The serving certificate: given as files, or made with a CA of its own in a state directory.
//!
//! Nodes check the mirror's certificate against the CA in the spec's
//! `registryMirrorConfiguration.caCertContent`, and Go's and rustls' clients match an IP address
//! only against the certificate's IP subject alternative names (never its common name). So
//! without files a CA (`ca.crt`, `ca.key`) is made once in the state directory and signs a
//! serving certificate (`tls.crt`, `tls.key`) whose SANs are the serving addresses. On a
//! restart the CA is read back, and the serving certificate is kept while it names every address
//! asked for and is valid for at least [`RENEW_BEFORE_DAYS`] more days; otherwise the same CA
//! signs a new one, so the CA the nodes trust stays the same. Every file is written 0600 through
//! `snow_io::files` (never through a link).

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

/// The CA certificate in the state directory.
pub const CA_CERT: &str = "ca.crt";
/// The CA key in the state directory.
pub const CA_KEY: &str = "ca.key";
/// The serving certificate in the state directory.
pub const TLS_CERT: &str = "tls.crt";
/// The serving key in the state directory.
pub const TLS_KEY: &str = "tls.key";
/// How long a made CA is valid (10 years, as the Harbor scripts for Snow make theirs).
pub const CA_DAYS: u64 = 3650;
/// How long a made serving certificate is valid (825 days, the most Apple's clients accept).
pub const SERVING_DAYS: u64 = 825;
/// A serving certificate valid for fewer days than this is made again at start.
pub const RENEW_BEFORE_DAYS: u64 = 30;
/// The most bytes read of a certificate or key file.
const MAX_PEM_BYTES: u64 = 1 << 20;

/// Why the certificate cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read or written.
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A certificate cannot be made or used.
    #[error("the serving certificate cannot be made: {0}")]
    Make(String),
}

/// Where the serving certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertificateSource {
    /// A certificate chain and its key, PEM files the user gives (read only).
    Files {
        /// The chain, leaf first.
        cert: PathBuf,
        /// The key.
        key: PathBuf,
    },
    /// Made (and on restart reused) in this directory, for these addresses.
    StateDir {
        /// The directory (made when missing).
        dir: PathBuf,
        /// The IP addresses the certificate names (its SANs).
        ips: Vec<IpAddr>,
    },
}

/// The certificate to serve, and the CA to give to the nodes when it was made here.
pub struct ServingCertificate {
    /// The chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The key.
    pub(crate) key: PrivateKeyDer<'static>,
    /// The CA certificate (PEM), when made here: what `caCertContent` takes.
    pub ca_pem: Option<String>,
    /// Whether the serving certificate was made (or made again) by this call.
    pub made: bool,
}

impl std::fmt::Debug for ServingCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingCertificate")
            .field("chain", &self.chain.len())
            .field("key", &"<redacted>")
            .field("made", &self.made)
            .finish()
    }
}

fn file_error(path: &Path, reason: impl ToString) -> TlsError {
    TlsError::File {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    snow_io::files::read_bounded(path, MAX_PEM_BYTES).map_err(|e| file_error(path, e))
}

fn make(e: impl ToString) -> TlsError {
    TlsError::Make(e.to_string())
}

fn parse_chain(path: &Path, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let chain: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| file_error(path, format!("not PEM certificates: {e}")))?;
    if chain.is_empty() {
        return Err(file_error(path, "holds no certificate"));
    }
    Ok(chain)
}

fn parse_key(path: &Path, pem: &[u8]) -> Result<PrivateKeyDer<'static>, TlsError> {
    // The key's bytes never reach an error message.
    PrivateKeyDer::from_pem_slice(pem).map_err(|_| file_error(path, "not a PEM private key"))
}

/// The certificate of `source`: read from the files, or made or reused in the state directory.
pub fn serving_certificate(source: &CertificateSource) -> Result<ServingCertificate, TlsError> {
    match source {
        CertificateSource::Files { cert, key } => Ok(ServingCertificate {
            chain: parse_chain(cert, &read(cert)?)?,
            key: parse_key(key, &read(key)?)?,
            ca_pem: None,
            made: false,
        }),
        CertificateSource::StateDir { dir, ips } => state_dir(dir, ips),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), TlsError> {
    use std::io::Write as _;
    snow_io::files::write_under(dir, Path::new(name), |f| f.write_all(text.as_bytes()))
        .map(|_| ())
        .map_err(|e| file_error(&dir.join(name), e))
}

/// The text of a file of the state directory, `None` when it is absent (never read through a
/// link or from anything but a regular file).
fn existing(path: &Path) -> Result<Option<String>, TlsError> {
    match snow_io::files::existing(path, MAX_PEM_BYTES).map_err(|e| file_error(path, e))? {
        snow_io::files::Existing::Absent => Ok(None),
        snow_io::files::Existing::File(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| file_error(path, "not PEM text")),
        snow_io::files::Existing::Other => Err(file_error(
            path,
            "not a regular file of at most 1 MiB (a link, a directory, a FIFO?): remove it",
        )),
    }
}

fn days(n: u64) -> Duration {
    Duration::from_secs(n * 86_400)
}

fn validity(params: &mut CertificateParams, valid_days: u64) {
    let now = SystemTime::now();
    // An hour back: a node whose clock is a little behind still accepts it.
    params.not_before = (now - Duration::from_secs(3600)).into();
    params.not_after = (now + days(valid_days)).into();
}

fn state_dir(dir: &Path, ips: &[IpAddr]) -> Result<ServingCertificate, TlsError> {
    snow_io::files::make_dirs(dir, Path::new("")).map_err(|e| file_error(dir, e))?;
    let (ca_cert, ca_key) = (dir.join(CA_CERT), dir.join(CA_KEY));
    let (ca_pem, ca_key_pem) = match (existing(&ca_cert)?, existing(&ca_key)?) {
        (Some(cert), Some(key)) => (cert, key),
        (None, None) => {
            let key = KeyPair::generate().map_err(make)?;
            let mut params = CertificateParams::default();
            let mut name = DistinguishedName::new();
            name.push(DnType::CommonName, "Snow site registry CA");
            params.distinguished_name = name;
            params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
            params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
            validity(&mut params, CA_DAYS);
            let cert = params.self_signed(&key).map_err(make)?;
            // The key first: a CA certificate without its key would be refused next time.
            write(dir, CA_KEY, &key.serialize_pem())?;
            write(dir, CA_CERT, &cert.pem())?;
            (cert.pem(), key.serialize_pem())
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(file_error(
                dir,
                format!(
                    "holds one of {CA_CERT} and {CA_KEY} without the other: restore the missing one, or remove both to make a new CA (which the nodes must then be given)"
                ),
            ));
        }
    };
    let ca_key =
        KeyPair::from_pem(&ca_key_pem).map_err(|_| file_error(&ca_key, "not a PEM private key"))?;
    let issuer = Issuer::from_ca_cert_pem(&ca_pem, ca_key)
        .map_err(|e| file_error(&ca_cert, format!("not a CA certificate: {e}")))?;
    let ca_der = parse_chain(&ca_cert, ca_pem.as_bytes())?;
    let (tls_cert, tls_key) = (dir.join(TLS_CERT), dir.join(TLS_KEY));
    if let (Some(cert), Some(key)) = (existing(&tls_cert)?, existing(&tls_key)?) {
        let chain = parse_chain(&tls_cert, cert.as_bytes())?;
        if covers(&chain[0], &ca_der[0], ips) {
            return Ok(ServingCertificate {
                chain,
                key: parse_key(&tls_key, key.as_bytes())?,
                ca_pem: Some(ca_pem),
                made: false,
            });
        }
    }
    let key = KeyPair::generate().map_err(make)?;
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "Snow site registry");
    params.distinguished_name = name;
    params.subject_alt_names = ips.iter().map(|ip| SanType::IpAddress(*ip)).collect();
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    validity(&mut params, SERVING_DAYS);
    let cert = params.signed_by(&key, &issuer).map_err(make)?;
    write(dir, TLS_KEY, &key.serialize_pem())?;
    write(dir, TLS_CERT, &cert.pem())?;
    Ok(ServingCertificate {
        chain: vec![cert.der().clone()],
        key: PrivateKeyDer::try_from(key.serialize_der()).map_err(make)?,
        ca_pem: Some(ca_pem),
        made: true,
    })
}

/// Whether `leaf` was issued by `ca`, names every one of `ips` and is valid for
/// [`RENEW_BEFORE_DAYS`] more days.
fn covers(leaf: &CertificateDer<'_>, ca: &CertificateDer<'_>, ips: &[IpAddr]) -> bool {
    use x509_parser::prelude::{FromDer as _, GeneralName, X509Certificate};
    let (Ok((_, leaf)), Ok((_, ca))) = (
        X509Certificate::from_der(leaf),
        X509Certificate::from_der(ca),
    ) else {
        return false;
    };
    if leaf.issuer() != ca.subject() || leaf.verify_signature(Some(ca.public_key())).is_err() {
        return false;
    }
    let soon = SystemTime::now() + days(RENEW_BEFORE_DAYS);
    let soon = soon
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(i64::MAX, |d| d.as_secs() as i64);
    if leaf.validity().not_after.timestamp() < soon {
        return false;
    }
    let named: Vec<IpAddr> = leaf
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    GeneralName::IPAddress(b) => match b.len() {
                        4 => <[u8; 4]>::try_from(*b).ok().map(IpAddr::from),
                        16 => <[u8; 16]>::try_from(*b).ok().map(IpAddr::from),
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    ips.iter().all(|ip| named.contains(ip))
}

/// The spec's `registryMirrorConfiguration` for a mirror at `endpoint:port` whose CA is
/// `ca_pem`: YAML to put under a Cluster's `spec` (`caCertContent` is the CA's PEM text).
pub fn mirror_configuration(endpoint: &IpAddr, port: u16, ca_pem: Option<&str>) -> String {
    let mut out =
        format!("registryMirrorConfiguration:\n  endpoint: \"{endpoint}\"\n  port: \"{port}\"\n");
    if let Some(ca) = ca_pem {
        out.push_str("  caCertContent: |\n");
        for line in ca.trim_end().lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_certificate_is_reused_and_made_again_for_new_addresses_with_the_same_ca() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let source = CertificateSource::StateDir {
            dir: dir.path().join("state"),
            ips: vec![ip],
        };
        let first = serving_certificate(&source).unwrap();
        assert!(first.made);
        for name in [CA_CERT, CA_KEY, TLS_CERT, TLS_KEY] {
            let mode = std::fs::metadata(dir.path().join("state").join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
        let again = serving_certificate(&source).unwrap();
        assert!(!again.made);
        assert_eq!(again.chain, first.chain);
        assert_eq!(again.ca_pem, first.ca_pem);
        let moved = CertificateSource::StateDir {
            dir: dir.path().join("state"),
            ips: vec![ip, "10.0.0.5".parse().unwrap()],
        };
        let third = serving_certificate(&moved).unwrap();
        assert!(third.made);
        assert_ne!(third.chain, first.chain);
        assert_eq!(third.ca_pem, first.ca_pem);
        assert!(format!("{third:?}").contains("<redacted>"));
    }

    #[test]
    fn a_ca_certificate_without_its_key_is_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CA_CERT), "x").unwrap();
        let source = CertificateSource::StateDir {
            dir: dir.path().to_owned(),
            ips: vec!["127.0.0.1".parse().unwrap()],
        };
        let e = serving_certificate(&source).unwrap_err().to_string();
        assert!(e.contains("ca.crt") && e.contains("ca.key"), "{e}");
    }

    #[test]
    fn the_mirror_configuration_carries_the_ca_as_a_block() {
        let yaml = mirror_configuration(
            &"10.0.0.5".parse().unwrap(),
            443,
            Some("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"),
        );
        assert_eq!(
            yaml,
            "registryMirrorConfiguration:\n  endpoint: \"10.0.0.5\"\n  port: \"443\"\n  caCertContent: |\n    -----BEGIN CERTIFICATE-----\n    AA==\n    -----END CERTIFICATE-----\n"
        );
    }
}
