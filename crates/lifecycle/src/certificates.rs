//! The workload cluster's API server serving certificate, read from a TLS handshake with the
//! server of the kubeconfig Cluster API publishes, and the age of a machine.
//!
//! The handshake checks the certificate against the kubeconfig's CA (rustls on aws-lc-rs, the one
//! TLS stack) and sends nothing after it: no credential leaves this machine. An expired
//! certificate is still reported (that is when it matters most); any other failure is an error.

use crate::{LifecycleError, kubeconfig::Published};
use k8s_openapi::jiff::Timestamp;
use kube::config::{Config, KubeConfigOptions};
use rustls::{
    CertificateError, DigitallySignedStruct, Error as TlsError, RootCertStore, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    pki_types::{CertificateDer, ServerName, UnixTime},
};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the TCP connect and TLS handshake may take together.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The serving certificate an API server presented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServingCertificate {
    /// The server handshaken with (`https://HOST:PORT`).
    pub server: String,
    /// The end of its validity, RFC 3339 UTC.
    pub not_after: String,
    /// Whole days from now to `not_after`; negative once expired.
    pub days_left: i64,
}

impl std::fmt::Display for ServingCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.days_left {
            d if d < 0 => write!(
                f,
                "expired {} ({} day(s) ago), served at {}",
                self.not_after, -d, self.server
            ),
            d => write!(
                f,
                "expires {} (in {d} day(s)), served at {}",
                self.not_after, self.server
            ),
        }
    }
}

/// What `describe` says of the API server's serving certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CertificateState {
    /// Read from the handshake.
    Read(ServingCertificate),
    /// Why it could not be read (no kubeconfig published yet, the server not reachable from
    /// here, a certificate the kubeconfig's CA does not trust).
    Unknown(String),
}

impl std::fmt::Display for CertificateState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CertificateState::Read(c) => c.fmt(f),
            CertificateState::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}

/// Handshakes with the API server of `kubeconfig` (its current context's cluster) and reads
/// the end of its serving certificate's validity. `cluster` names the cluster in errors.
pub async fn serving_certificate(
    cluster: &str,
    kubeconfig: &Published,
) -> Result<ServingCertificate, LifecycleError> {
    let fail = |reason: String| LifecycleError::Workload {
        cluster: cluster.to_owned(),
        reason,
    };
    let config =
        Config::from_custom_kubeconfig(kubeconfig.file().clone(), &KubeConfigOptions::default())
            .await
            .map_err(|e| {
                fail(format!(
                    "the published kubeconfig: {}",
                    crate::error::chain(&e)
                ))
            })?;
    let url = &config.cluster_url;
    let server = snow_api::redact::redact_userinfo(&url.to_string())
        .trim_end_matches('/')
        .to_owned();
    if url.scheme_str() != Some("https") {
        return Err(fail(format!(
            "{server} is not https: no certificate to read"
        )));
    }
    let host = url
        .host()
        .ok_or_else(|| fail(format!("{server} names no host")))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_u16().unwrap_or(443);
    let mut roots = RootCertStore::empty();
    for der in config.root_cert.iter().flatten() {
        roots
            .add(CertificateDer::from(der.clone()))
            .map_err(|e| fail(format!("the kubeconfig's certificate-authority-data: {e}")))?;
    }
    if roots.is_empty() {
        return Err(fail(
            "the published kubeconfig has no certificate-authority-data to check the server against"
                .into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| fail(format!("the kubeconfig's CA: {e}")))?;
    let seen = Arc::new(Recording {
        inner,
        leaf: Mutex::new(None),
    });
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(seen.clone())
        .with_no_client_auth();
    let name = ServerName::try_from(host.clone())
        .map_err(|e| fail(format!("{host} is not a server name: {e}")))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(tls));
    let handshake = async {
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
        connector.connect(name, tcp).await
    };
    let outcome = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await;
    let leaf = seen.leaf.lock().ok().and_then(|mut l| l.take());
    match (outcome, leaf) {
        (Err(_), _) => Err(fail(format!(
            "no TLS handshake with {server} within {}s",
            HANDSHAKE_TIMEOUT.as_secs()
        ))),
        // Verified, or refused only for being expired: the date is what was asked.
        (Ok(Ok(_)), Some((der, _))) | (Ok(Err(_)), Some((der, true))) => {
            let not_after = not_after(&der).map_err(|e| fail(format!("{server}: {e}")))?;
            let now = Timestamp::now().as_second();
            Ok(ServingCertificate {
                server,
                not_after: format_time(not_after),
                days_left: (not_after - now).div_euclid(86_400),
            })
        }
        (Ok(Err(e)), _) => Err(fail(format!("TLS handshake with {server}: {e}"))),
        (Ok(Ok(_)), None) => Err(fail(format!("{server} presented no certificate"))),
    }
}

/// `notAfter` of a DER certificate, Unix seconds.
fn not_after(der: &[u8]) -> Result<i64, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| format!("its certificate cannot be read: {e}"))?;
    Ok(cert.validity().not_after.timestamp())
}

fn format_time(seconds: i64) -> String {
    Timestamp::from_second(seconds).map_or_else(|_| format!("@{seconds}"), |t| t.to_string())
}

/// The age of an object from its `metadata.creationTimestamp`, as kubectl shows it: whole days
/// from two days on, else hours and minutes, else seconds.
pub(crate) fn age(creation: &str, now: Timestamp) -> Option<String> {
    let created: Timestamp = creation.parse().ok()?;
    let secs = now.as_second().saturating_sub(created.as_second()).max(0);
    Some(match secs {
        s if s >= 2 * 86_400 => format!("{}d", s / 86_400),
        s if s >= 3600 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s if s >= 60 => format!("{}m", s / 60),
        s => format!("{s}s"),
    })
}

/// Checks as webpki does, keeping the end-entity certificate and whether it was refused only
/// for being expired.
#[derive(Debug)]
struct Recording {
    inner: Arc<WebPkiServerVerifier>,
    leaf: Mutex<Option<(Vec<u8>, bool)>>,
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let verdict = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        let expired = matches!(
            verdict,
            Err(TlsError::InvalidCertificate(
                CertificateError::Expired | CertificateError::ExpiredContext { .. }
            ))
        );
        if (verdict.is_ok() || expired)
            && let Ok(mut leaf) = self.leaf.lock()
        {
            *leaf = Some((end_entity.to_vec(), expired));
        }
        verdict
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_like_kubectl() {
        let now: Timestamp = "2026-11-27T12:00:00Z".parse().unwrap();
        assert_eq!(age("2026-11-27T11:59:30Z", now).as_deref(), Some("30s"));
        assert_eq!(age("2026-11-27T11:55:00Z", now).as_deref(), Some("5m"));
        assert_eq!(age("2026-11-27T09:20:00Z", now).as_deref(), Some("2h40m"));
        assert_eq!(age("2026-11-20T12:00:00Z", now).as_deref(), Some("7d"));
        // A clock behind the API server's: never a negative age.
        assert_eq!(age("2026-11-27T12:00:05Z", now).as_deref(), Some("0s"));
        assert_eq!(age("yesterday", now), None);
    }

    #[test]
    fn the_line_says_expired_or_days_left() {
        let mut c = ServingCertificate {
            server: "https://10.0.0.1:6443".into(),
            not_after: "2027-01-01T00:00:00Z".into(),
            days_left: 35,
        };
        assert_eq!(
            c.to_string(),
            "expires 2027-01-01T00:00:00Z (in 35 day(s)), served at https://10.0.0.1:6443"
        );
        c.days_left = -2;
        assert!(
            c.to_string()
                .starts_with("expired 2027-01-01T00:00:00Z (2 day(s) ago)")
        );
    }
}
