//! A test CA and per-IP server certificates.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use std::net::IpAddr;

/// A CA generated for one test.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestCa")
    }
}

/// A server certificate and its key, PEM.
#[derive(Clone)]
pub struct ServerCertificate {
    /// The certificate.
    pub cert_pem: String,
    /// The private key (a test key).
    pub key_pem: String,
}

impl std::fmt::Debug for ServerCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerCertificate")
    }
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> Result<TestCa, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key)?;
        let pem = cert.pem();
        Ok(TestCa {
            issuer: Issuer::new(params, key),
            pem,
        })
    }

    /// The CA certificate, PEM: the CA bundle of the test.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A server certificate for `ip` (IP SAN), issued by this CA.
    pub fn server_certificate(&self, ip: IpAddr) -> Result<ServerCertificate, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, ip.to_string());
        params.subject_alt_names = vec![SanType::IpAddress(ip)];
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(ServerCertificate {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// A server certificate for the DNS name `name` (a Service's `NAME.NAMESPACE.svc`, as an
    /// admission webhook serves), issued by this CA.
    pub fn server_certificate_for_name(
        &self,
        name: &str,
    ) -> Result<ServerCertificate, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec![name.to_owned()])?;
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(ServerCertificate {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A self-signed certificate for the DNS names `names` (not a CA), as cert-manager's SelfSigned
/// issuer makes one: the certificate is its own issuer, so it is also its `ca.crt`.
pub fn self_signed_for_names(names: &[String]) -> Result<ServerCertificate, rcgen::Error> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(names.to_vec())?;
    if let Some(first) = names.first() {
        params.distinguished_name.push(DnType::CommonName, first);
    }
    let cert = params.self_signed(&key)?;
    Ok(ServerCertificate {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}
