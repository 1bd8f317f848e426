//! The API server's side of an admission webhook call: one HTTPS POST, the server's certificate
//! checked against the configuration's `caBundle` only (no bundle: nothing is trusted, so the
//! call fails, as it would against a test CA the system does not trust), under a deadline.
//! Errors are worded as Go's HTTP client words them after `Post "URL": `, where the words are
//! known (unknown authority, deadline), else as rustls and the OS give them.

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The most of an answer read (an AdmissionReview is small).
const MAX_ANSWER: usize = 3 * 1024 * 1024;

/// Where a webhook is called.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// `https://HOST:PORT/PATH?timeout=Ns`, as the API server's messages name it.
    pub(crate) url: String,
    /// Where to connect.
    pub(crate) connect: Connect,
    /// The name the certificate must be valid for (`NAME.NAMESPACE.svc`, or the URL's host).
    pub(crate) server_name: String,
    /// The path and query sent.
    pub(crate) path: String,
    /// `clientConfig.caBundle`, PEM.
    pub(crate) ca: Vec<u8>,
}

/// A mapped Service's address, or a URL's host and port.
#[derive(Debug, Clone)]
pub(crate) enum Connect {
    Addr(SocketAddr),
    Host(String, u16),
}

fn roots(ca: &[u8]) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca).flatten() {
        let _ = roots.add(cert);
    }
    roots
}

fn tls_words(e: &std::io::Error) -> String {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                .to_owned()
        }
        Some(rustls::Error::InvalidCertificate(other)) => {
            format!("tls: failed to verify certificate: {other:?}")
        }
        _ => e.to_string(),
    }
}

/// POSTs `body` (JSON) to `endpoint` within `timeout`; the status code and body of the answer,
/// or why there is none (`Post "URL": ...`).
pub(crate) async fn post(
    endpoint: &Endpoint,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<(u16, Bytes), String> {
    let fail = |why: String| format!("Post \"{}\": {why}", endpoint.url);
    match tokio::time::timeout(timeout, exchange(endpoint, body)).await {
        Ok(answer) => answer.map_err(fail),
        Err(_) => Err(fail("context deadline exceeded".to_owned())),
    }
}

async fn exchange(endpoint: &Endpoint, body: Vec<u8>) -> Result<(u16, Bytes), String> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots(&endpoint.ca))
    .with_no_client_auth();
    let name = ServerName::try_from(endpoint.server_name.clone()).map_err(|e| e.to_string())?;
    let tcp = match &endpoint.connect {
        Connect::Addr(addr) => tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("dial tcp {addr}: connect: {e}"))?,
        Connect::Host(host, port) => tokio::net::TcpStream::connect((host.as_str(), *port))
            .await
            .map_err(|e| format!("dial tcp {host}:{port}: connect: {e}"))?,
    };
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| tls_words(&e))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
    let driving = tokio::spawn(connection);
    let request = hyper::Request::post(&endpoint.path)
        .header(hyper::header::HOST, &endpoint.server_name)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "application/json, */*")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let answer = sender.send_request(request).await;
    let result = match answer {
        Ok(response) => {
            let code = response.status().as_u16();
            Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map(|b| (code, b.to_bytes()))
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    driving.abort();
    result
}
