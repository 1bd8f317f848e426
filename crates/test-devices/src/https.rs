//! The TLS + HTTP/1 serving loop the stand-ins share: rustls on aws-lc-rs, hyper 1; and a
//! one-request TLS client for tests of servers ([`exchange`], [`post`]).

use crate::ca::ServerCertificate;
use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::future::Future;
use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

/// A TLS acceptor serving `certificate` (rustls, aws-lc-rs provider).
pub fn acceptor(certificate: &ServerCertificate) -> Result<tokio_rustls::TlsAcceptor, String> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(certificate.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
    let key =
        PrivateKeyDer::from_pem_slice(certificate.key_pem.as_bytes()).map_err(|e| e.to_string())?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| e.to_string())?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// A running server: [`Serving::stop`] makes it unreachable at once.
#[derive(Debug)]
pub struct Serving {
    task: tokio::task::JoinHandle<()>,
    stopped: Arc<AtomicBool>,
}

impl Serving {
    /// Stops serving. Aborting the task cuts every connection, but only when the runtime next
    /// polls it; until then a pooled connection could still be answered, so every request from
    /// now on is refused first (the connection closes without an answer, as a dead server's).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.task.abort();
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Accepts TLS connections on `listener` and answers every request with `handle`, until
/// stopped. Connections live in a `JoinSet` owned by the task, so stopping it also cuts every
/// open connection (a stopped server is unreachable, pooled connections included).
pub fn serve<H, F, B>(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    handle: H,
) -> Serving
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stopped = Arc::new(AtomicBool::new(false));
    let refused = stopped.clone();
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            };
            let Ok((tcp, _)) = accepted else {
                continue;
            };
            let acceptor = acceptor.clone();
            let handle = handle.clone();
            let refused = refused.clone();
            connections.spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |req| {
                    let answer = (!refused.load(Ordering::SeqCst)).then(|| handle(req));
                    async move {
                        match answer {
                            Some(answer) => Ok(answer.await),
                            None => Err("stopped"),
                        }
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Serving { task, stopped }
}

/// An answer read by [`exchange`]: the status code and the body (lossy text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status code.
    pub status: u16,
    /// The body.
    pub body: String,
}

/// One HTTP/1.1 exchange over TLS with the server on `addr`, trusting only `ca_pem`, for tests of
/// servers: `request` (head and body, as bytes) is written while the answer is read to the end
/// (the server closes the connection), within 30 s. A write the server stops reading is not an
/// error: what was answered counts. `Err` says why no answer came (the handshake failed, the
/// connection closed without one).
pub async fn exchange(
    addr: std::net::SocketAddr,
    ca_pem: &str,
    request: Vec<u8>,
) -> Result<Answer, String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (mut reader, mut writer) = tokio::io::split(tls);
        let written = tokio::spawn(async move {
            let _ = writer.write_all(&request).await;
            let _ = writer.flush().await;
            writer
        });
        let mut answer = Vec::new();
        let read = reader.read_to_end(&mut answer).await;
        written.abort();
        if answer.is_empty() {
            return Err(format!("no answer ({read:?})"));
        }
        let text = String::from_utf8_lossy(&answer).into_owned();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP answer: {text}"))?;
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        Ok(Answer { status, body })
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), exchange)
        .await
        .map_err(|_| "no answer within 30 s".to_owned())?
}

/// [`exchange`] of a `POST` of `body` to `path` with `content_type`.
pub async fn post(
    addr: std::net::SocketAddr,
    ca_pem: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> Result<Answer, String> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    exchange(addr, ca_pem, request).await
}
