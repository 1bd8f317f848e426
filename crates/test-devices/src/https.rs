//! The TLS + HTTP/1 serving loop the stand-ins share: rustls on aws-lc-rs, hyper 1.

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
