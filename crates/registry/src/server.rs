//! The HTTPS server: rustls on aws-lc-rs and hyper 1 (HTTP/1.1, keep-alive), as the
//! controller's webhooks. Every connection is bounded: at most [`Limits::connections`] at once
//! (more wait in the listen queue), the TLS handshake and each request head within
//! [`Limits::header_timeout`], and a connection that moves no byte either way for
//! [`Limits::idle_timeout`] is closed (a client that stops reading, or trickles a request).

use crate::{
    catalog::Catalog,
    http::Served,
    metrics::Metrics,
    names::Namespaces,
    tls::{CertificateSource, TlsError, serving_certificate},
};
use snow_images::{Archive, ArchiveError};
use std::{
    future::Future,
    net::SocketAddr,
    path::PathBuf,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The default most connections served at once (256): each holds at most one chunk of a body
/// ([`crate::CHUNK`]) and, for a manifest, nothing more, so memory stays flat in the archive's
/// size.
pub const MAX_CONNECTIONS: usize = 256;
/// The default time for the TLS handshake and for each request head (20 s).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(20);
/// The default time a connection may move no byte either way (60 s), idle keep-alive included.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The most bytes of a request head (64 KiB; a registry request's is well under 4 KiB).
pub const MAX_HEAD_BYTES: usize = 64 << 10;

/// The server's bounds; [`Limits::default`] holds the constants above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once.
    pub connections: usize,
    /// The TLS handshake's and each request head's time.
    pub header_timeout: Duration,
    /// How long a connection may move no byte.
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: MAX_CONNECTIONS,
            header_timeout: HEADER_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
        }
    }
}

/// What to serve, where, and how.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The archive: a `download artifacts` tar, its unpacked directory, or an OCI layout.
    pub archive: PathBuf,
    /// The address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// The certificate.
    pub certificate: CertificateSource,
    /// EKS Anywhere's `ociNamespaces`, as the nodes' `hosts.toml` ask through them.
    pub namespaces: Namespaces,
    /// The bounds.
    pub limits: Limits,
}

/// Why the registry cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The archive cannot be read.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The certificate cannot be read or made.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {reason}")]
    Listen {
        /// Where.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

/// A registry serving, until [`Running::stop`] or its drop.
#[derive(Debug)]
pub struct Running {
    /// The address bound (the port chosen when 0 was asked).
    pub addr: SocketAddr,
    /// The CA certificate (PEM) when the certificate was made here.
    pub ca_pem: Option<String>,
    /// Whether the serving certificate was made (or made again) at this start.
    pub made_certificate: bool,
    /// Images in the archive.
    pub images: usize,
    /// Repositories served.
    pub repositories: usize,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Stops accepting and closes every connection.
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Opens the archive, gets the certificate, binds, and serves in a task of the current tokio
/// runtime.
pub async fn serve(options: ServeOptions) -> Result<Running, RegistryError> {
    let path = options.archive.clone();
    // Opening reads every header and the images' manifests: off the async workers.
    let opened = tokio::task::spawn_blocking(move || {
        let archive = Archive::open(&path)?;
        let catalog = Catalog::of(&archive);
        Ok::<_, ArchiveError>((archive, catalog))
    })
    .await
    .map_err(|e| ArchiveError::Io {
        path: options.archive.clone(),
        message: e.to_string(),
    })??;
    let (archive, catalog) = opened;
    let certificate = serving_certificate(&options.certificate)?;
    let listen = |e: std::io::Error| RegistryError::Listen {
        addr: options.listen,
        reason: e.to_string(),
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Make(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certificate.chain.clone(), certificate.key.clone_key())
        .map_err(|e| TlsError::Make(format!("the certificate and key do not match: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(listen)?;
    let addr = listener.local_addr().map_err(listen)?;
    let images = archive.images().len();
    let repositories = catalog.repositories.len();
    let served = Arc::new(Served {
        archive: Arc::new(archive),
        catalog,
        namespaces: options.namespaces,
        metrics: Arc::new(Metrics::default()),
    });
    let limits = options.limits;
    let task = tokio::spawn(accept(listener, acceptor, served, limits));
    Ok(Running {
        addr,
        ca_pem: certificate.ca_pem,
        made_certificate: certificate.made,
        images,
        repositories,
        task,
    })
}

async fn accept(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    served: Arc<Served>,
    limits: Limits,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.connections.max(1)));
    // The connections' tasks end with the server: aborted when this task is.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // A slot first: past the limit, new connections wait in the kernel's listen queue.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // Out of descriptors under a flood: wait it out, never stop serving.
                tracing::warn!(error = %e, "registry: accept failed; retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        let acceptor = acceptor.clone();
        let served = served.clone();
        connections.spawn(async move {
            let _slot = slot;
            let _ = tcp.set_nodelay(true);
            let Ok(Ok(tls)) =
                tokio::time::timeout(limits.header_timeout, acceptor.accept(tcp)).await
            else {
                return;
            };
            let io = hyper_util::rt::TokioIo::new(Idle::new(tls, limits.idle_timeout));
            let service = hyper::service::service_fn(move |request| {
                let served = served.clone();
                async move { Ok::<_, std::convert::Infallible>(served.answer(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(MAX_HEAD_BYTES)
                .serve_connection(io, service)
                .await;
        });
    }
}

/// A stream closed (an error on the next read or write) once no byte has moved either way for
/// its idle time.
struct Idle<T> {
    inner: T,
    limit: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl<T> Idle<T> {
    fn new(inner: T, limit: Duration) -> Idle<T> {
        Idle {
            inner,
            limit,
            sleep: Box::pin(tokio::time::sleep(limit)),
        }
    }

    fn moved(&mut self) {
        let deadline = tokio::time::Instant::now() + self.limit;
        self.sleep.as_mut().reset(deadline);
    }

    /// `Pending` while time is left; the timeout error once it is up.
    fn waited<R>(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<R>> {
        match self.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no byte moved within the idle time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Idle<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.moved();
                Poll::Ready(r)
            }
            Poll::Pending => this.waited(cx),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Idle<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(r) => {
                this.moved();
                Poll::Ready(r)
            }
            Poll::Pending => this.waited(cx),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => this.waited(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
