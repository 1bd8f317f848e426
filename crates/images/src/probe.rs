//! Whether a registry mirror answers: one `GET https://ENDPOINT:PORT/v2/`, its certificate checked
//! against the spec's `caCertContent` alone (as the nodes check it), within a time limit.
//!
//! `GET /v2/` is the Distribution API's base check: a registry answers 200, or 401 when it wants
//! credentials; both count as answering. Nothing is sent but that request: no credential leaves
//! this machine. The answer is `snow_api::mirror::MirrorAnswer`; a failure is one of its cases
//! (refused, timeout, the TLS problem, a status that is not a registry's), never an error, so a
//! view that shows it goes on. TLS is rustls on aws-lc-rs, the one stack of the workspace.

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore,
    SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature},
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject as _},
};
use snow_api::mirror::{MirrorAnswer, Silence, TlsProblem, Trust};
use std::{sync::Arc, time::Duration};

/// The time limit a view gives the whole probe (connect, handshake, request, answer).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the mirror's certificate is checked against: the spec's `registryMirrorConfiguration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorTrust<'a> {
    /// `caCertContent`: the only CA trusted.
    Ca(&'a str),
    /// `insecureSkipVerify: true`: not checked, as the nodes do not check it.
    InsecureSkipVerify,
    /// Neither: the nodes use their own trusted CAs, which this machine does not have, so the
    /// certificate is not checked.
    NoCa,
}

/// Asks `GET https://ENDPOINT:PORT/v2/` and says whether a registry answered, within `limit`.
pub async fn probe_mirror(
    endpoint: &str,
    port: u16,
    trust: MirrorTrust<'_>,
    limit: Duration,
) -> MirrorAnswer {
    let (config, how) = match client_config(trust) {
        Ok(config) => config,
        Err(problem) => {
            return MirrorAnswer::NotAnswering {
                reason: Silence::BadCaCertContent { problem },
            };
        }
    };
    let reason = match tokio::time::timeout(limit, ask(endpoint, port, config)).await {
        Err(_) => Silence::Timeout {
            milliseconds: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        },
        Ok(Err(silence)) => silence,
        Ok(Ok(status @ (200 | 401))) => return MirrorAnswer::Answering { status, trust: how },
        Ok(Ok(status)) => Silence::NotARegistry { status },
    };
    MirrorAnswer::NotAnswering { reason }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The client configuration for `trust`, or what is wrong with the CA.
fn client_config(trust: MirrorTrust<'_>) -> Result<(Arc<ClientConfig>, Trust), String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let (config, how) = match trust {
        MirrorTrust::Ca(pem) => {
            let certificates = CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("not PEM: {e}"))?;
            if certificates.is_empty() {
                return Err("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into());
            }
            let mut roots = RootCertStore::empty();
            for certificate in certificates {
                roots
                    .add(certificate)
                    .map_err(|e| format!("not a usable CA certificate: {e}"))?;
            }
            (
                builder.with_root_certificates(roots).with_no_client_auth(),
                Trust::CaCertContent,
            )
        }
        MirrorTrust::InsecureSkipVerify | MirrorTrust::NoCa => (
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked(provider())))
                .with_no_client_auth(),
            match trust {
                MirrorTrust::InsecureSkipVerify => Trust::InsecureSkipVerify,
                _ => Trust::NoCaCertContent,
            },
        ),
    };
    Ok((Arc::new(config), how))
}

/// Connects, handshakes and asks `GET /v2/`: the status, or why there is none.
async fn ask(endpoint: &str, port: u16, config: Arc<ClientConfig>) -> Result<u16, Silence> {
    let host = endpoint.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(host.to_owned()).map_err(|_| Silence::Unreachable {
        error: format!("{endpoint} is neither an IP address nor a host name"),
    })?;
    let tcp = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => Silence::Refused,
            _ => Silence::Unreachable {
                error: e.to_string(),
            },
        })?;
    let tls = tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| Silence::Tls {
            problem: tls_problem(&e, host),
        })?;
    let http = |e: hyper::Error| Silence::Http {
        error: e.to_string(),
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(http)?;
    let request = hyper::Request::get("/v2/")
        .header(hyper::header::HOST, format!("{endpoint}:{port}"))
        .header(hyper::header::USER_AGENT, "snowctl")
        .body(Empty::<Bytes>::new())
        .map_err(|e| Silence::Http {
            error: e.to_string(),
        })?;
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        response = sender.send_request(request) => Ok(response.map_err(http)?.status().as_u16()),
        ended = &mut connection => Err(match ended {
            Err(e) => http(e),
            Ok(()) => Silence::Http { error: "the server closed the connection without an answer".into() },
        }),
    }
}

/// The TLS problem in a failed handshake's error, in the spec's terms.
fn tls_problem(error: &std::io::Error, host: &str) -> TlsProblem {
    let Some(tls) = error.get_ref().and_then(|e| e.downcast_ref::<TlsError>()) else {
        return TlsProblem::Other {
            error: error.to_string(),
        };
    };
    match tls {
        TlsError::InvalidCertificate(CertificateError::UnknownIssuer) => TlsProblem::UnknownIssuer,
        TlsError::InvalidCertificate(CertificateError::NotValidForName) => {
            TlsProblem::NotValidForName {
                expected: host.to_owned(),
                presented: Vec::new(),
            }
        }
        TlsError::InvalidCertificate(CertificateError::NotValidForNameContext {
            presented,
            ..
        }) => TlsProblem::NotValidForName {
            expected: host.to_owned(),
            presented: presented.clone(),
        },
        TlsError::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => TlsProblem::Expired,
        TlsError::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => TlsProblem::NotValidYet,
        // What a plain-HTTP server's answer to a ClientHello looks like to rustls.
        TlsError::InvalidMessage(_) => TlsProblem::NotTls,
        other => TlsProblem::Other {
            error: other.to_string(),
        },
    }
}

/// Accepts any certificate (`insecureSkipVerify`, or no `caCertContent` to check against), but
/// still checks the handshake's signatures, so the answer is the server's.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_that_is_not_pem_is_said_before_anything_is_asked() {
        for bad in [
            "",
            "hello",
            "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
        ] {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let answer = runtime.block_on(probe_mirror(
                "127.0.0.1",
                // Nothing is asked, so no port is needed.
                9,
                MirrorTrust::Ca(bad),
                PROBE_TIMEOUT,
            ));
            assert!(
                matches!(
                    answer,
                    MirrorAnswer::NotAnswering {
                        reason: Silence::BadCaCertContent { .. }
                    }
                ),
                "{bad:?}: {answer:?}"
            );
        }
    }
}
