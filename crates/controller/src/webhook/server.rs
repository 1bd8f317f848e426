//! The HTTPS server of the webhooks: rustls on aws-lc-rs, hyper 1, one request per connection.
//! Every step is bounded: connections at once, the TLS handshake, the request head and body
//! (size and time), reviews running at once.

use super::{
    Hook,
    certificate::{CertificateError, ServingCertificate},
    review::review,
};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Bytes, Incoming},
    header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue},
};
use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

/// The largest request body read (7 MiB, controller-runtime's bound: an AdmissionReview holds an
/// object and its old version, each at most what etcd stores).
pub const MAX_BODY_BYTES: usize = 7 << 20;
/// Connections served at once; more are closed at once (the API server applies the webhook's
/// failure policy), so a flood cannot grow memory or tasks without bound: at most this many
/// bodies of [`MAX_BODY_BYTES`] are held.
pub const MAX_CONNECTIONS: usize = 16;
/// How long a connection may take for each of: the TLS handshake, the request head, the body
/// (the API server's default webhook timeout is 10 s).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// Reviews run at once: each may hold a body of [`MAX_BODY_BYTES`] parsed.
const MAX_REVIEWS: usize = 4;

/// Where and with what the webhooks are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The directory holding `tls.crt` and `tls.key`.
    pub cert_dir: PathBuf,
}

/// Why the webhooks cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The certificate directory has no usable pair.
    #[error("the webhook certificate cannot be used: {0}")]
    Certificate(#[from] CertificateError),
    /// The address cannot be listened on.
    #[error("cannot serve the webhooks on {addr}: {reason}")]
    Listen {
        /// Where.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

/// Reads the certificate, binds `options.addr` and serves until the task is aborted; returns
/// the bound address.
pub async fn serve(
    options: &WebhookOptions,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), WebhookError> {
    let config = tls_config(&options.cert_dir)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listen = |e: std::io::Error| WebhookError::Listen {
        addr: options.addr,
        reason: e.to_string(),
    };
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(listen)?;
    let bound = listener.local_addr().map_err(listen)?;
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let reviews = Arc::new(tokio::sync::Semaphore::new(MAX_REVIEWS));
    let task = tokio::spawn(async move {
        loop {
            let tcp = match listener.accept().await {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors under a flood: wait it out, never stop serving.
                    tracing::warn!(error = %e, "webhooks: accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(slot) = connections.clone().try_acquire_owned() else {
                continue; // dropped: closed without an answer
            };
            let acceptor = acceptor.clone();
            let reviews = reviews.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let Ok(Ok(tls)) = tokio::time::timeout(BODY_TIMEOUT, acceptor.accept(tcp)).await
                else {
                    return;
                };
                let service = hyper::service::service_fn(move |request| {
                    let reviews = reviews.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(request, &reviews).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(BODY_TIMEOUT)
                    .keep_alive(false)
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Ok((bound, task))
}

fn tls_config(dir: &Path) -> Result<rustls::ServerConfig, WebhookError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let certificate = ServingCertificate::new(dir, provider.clone())?;
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| CertificateError {
            path: dir.to_owned(),
            reason: e.to_string(),
        })?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(certificate));
    Ok(config)
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

fn json(review: &serde_json::Value) -> Response<Full<Bytes>> {
    let body = serde_json::to_vec(review).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// An AdmissionReview answering a request that cannot be reviewed (status 400, as
/// controller-runtime answers a body it cannot read).
fn refused(message: String) -> Response<Full<Bytes>> {
    json(
        &serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": {"uid": "", "allowed": false, "status": {"code": 400, "message": message}}}),
    )
}

async fn answer(
    request: Request<Incoming>,
    reviews: &tokio::sync::Semaphore,
) -> Response<Full<Bytes>> {
    let Some(hook) = Hook::from_path(request.uri().path()) else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    if request.method() != Method::POST {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "POST an AdmissionReview");
    }
    let content_type = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if content_type.split(';').next().map(str::trim) != Some("application/json") {
        let shown = snow_api::finding::shorten(content_type);
        return refused(format!("contentType={shown}, expected application/json"));
    }
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || {
        refused(format!(
            "request entity is too large; limit is {MAX_BODY_BYTES} bytes"
        ))
    };
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return too_large();
    }
    let body = Limited::new(request.into_body(), MAX_BODY_BYTES);
    let body = match tokio::time::timeout(BODY_TIMEOUT, body.collect()).await {
        Err(_) => {
            return refused(format!(
                "the request body did not arrive within {}s",
                BODY_TIMEOUT.as_secs()
            ));
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Ok(Err(e)) => return refused(format!("the request body cannot be read: {e}")),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    let Ok(_permit) = reviews.acquire().await else {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "stopping");
    };
    // Off the async workers (a large body takes a while to parse); a panic would be a bug, and
    // is answered, not spread.
    match tokio::task::spawn_blocking(move || review(hook, &body)).await {
        Ok(review) => {
            let response = &review["response"];
            tracing::debug!(
                path = hook.path(),
                uid = response["uid"].as_str().unwrap_or_default(),
                allowed = response["allowed"].as_bool().unwrap_or_default(),
                "admission review"
            );
            json(&review)
        }
        Err(e) => {
            tracing::error!(error = %e, path = hook.path(), "admission review failed");
            plain(StatusCode::INTERNAL_SERVER_ERROR, "the review failed")
        }
    }
}
