//! One signed HTTPS endpoint of a device: `POST /` with SigV4 over the rustls connector that
//! trusts the CA bundle only. The Snowball Device API (awsJson1.1) and IAM (Query, XML) are both
//! this with another body; each client adds its own encoding and error parsing on top.

use crate::client::{ClientConfig, SNOW_REGION, Trust, tls_provider};
use crate::error::{DeviceError, ErrorKind, Service, classify_transport};
use crate::limits;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_smithy_async::rt::sleep::TokioSleep;
use aws_smithy_runtime_api::client::http::{HttpConnector, HttpConnectorSettings};
use aws_smithy_runtime_api::client::identity::Identity;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use snow_api::DeviceIp;
use snow_credentials::DeviceCredentialsProvider;
use std::{net::SocketAddr, sync::Arc};
use zeroize::Zeroizing;

/// A device endpoint requests are signed for.
#[derive(Clone)]
pub(crate) struct SignedEndpoint {
    ip: DeviceIp,
    service: Service,
    port: u16,
    signing_name: &'static str,
    url: String,
    authority: String,
    provider: DeviceCredentialsProvider,
    connector: Arc<aws_smithy_http_client::Connector>,
    config: ClientConfig,
}

/// An answer: its status, the `x-amzn-errortype` header's code if any, and the body (zeroed on
/// drop: an IAM answer can hold a secret access key).
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) error_type: Option<String>,
    pub(crate) body: Zeroizing<Vec<u8>>,
}

impl SignedEndpoint {
    /// `https://IP:port/` of `service`, signed as `signing_name` in region `snow`.
    pub(crate) fn new(
        provider: DeviceCredentialsProvider,
        trust: &Trust,
        config: ClientConfig,
        service: Service,
        port: u16,
        signing_name: &'static str,
    ) -> Self {
        let ip = provider.device();
        let settings = HttpConnectorSettings::builder()
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.request_timeout)
            .build();
        let connector = aws_smithy_http_client::Connector::builder()
            .connector_settings(settings)
            .sleep_impl(TokioSleep::new())
            .tls_provider(tls_provider())
            .tls_context(trust.context().clone())
            .build();
        let addr = SocketAddr::new(ip.ip(), port);
        SignedEndpoint {
            ip,
            service,
            port,
            signing_name,
            url: format!("https://{addr}/"),
            authority: addr.to_string(),
            provider,
            connector: Arc::new(connector),
            config,
        }
    }

    pub(crate) fn ip(&self) -> DeviceIp {
        self.ip
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    pub(crate) fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub(crate) fn error(&self, kind: ErrorKind, detail: impl Into<String>) -> DeviceError {
        DeviceError::new(self.ip, self.service, kind, detail).at_port(self.port)
    }

    pub(crate) fn protocol(&self, detail: impl Into<String>) -> DeviceError {
        self.error(ErrorKind::Protocol, detail)
    }

    /// One signed `POST /` with `headers` and `body`, within the request timeout; no retry.
    pub(crate) async fn post(
        &self,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Answer, DeviceError> {
        let timeout = self.config.request_timeout;
        match tokio::time::timeout(timeout, self.post_once(headers, body)).await {
            Ok(result) => result,
            Err(_) => Err(self.error(ErrorKind::TimedOut(timeout), String::new())),
        }
    }

    async fn post_once(
        &self,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Answer, DeviceError> {
        let mut builder = http::Request::builder()
            .method("POST")
            .uri(&self.url)
            .header("host", &self.authority);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let mut request = builder
            .body(SdkBody::from(body.to_vec()))
            .map_err(|e| self.error(ErrorKind::Connection, e.to_string()))?;
        self.sign(&mut request, body)?;
        let request = HttpRequest::try_from(request)
            .map_err(|e| self.error(ErrorKind::Connection, e.to_string()))?;
        let response = self.connector.call(request).await.map_err(|err| {
            let timeout = self.config.request_timeout;
            if err.is_timeout() {
                return self.error(ErrorKind::TimedOut(timeout), String::new());
            }
            let (kind, detail) = classify_transport(&err, timeout);
            self.error(kind, detail)
        })?;
        let status = response.status().as_u16();
        let error_type = response
            .headers()
            .get("x-amzn-errortype")
            .map(|v| v.split(':').next().unwrap_or_default().to_owned());
        let body = self.read_body(response.into_body()).await?;
        Ok(Answer {
            status,
            error_type,
            body,
        })
    }

    /// Reads a response body, at most [`limits::MAX_RESPONSE_BYTES`] of it.
    async fn read_body(&self, body: SdkBody) -> Result<Zeroizing<Vec<u8>>, DeviceError> {
        let limit = limits::MAX_RESPONSE_BYTES;
        let too_large = || {
            self.protocol(format!(
                "the answer is larger than the {limit} bytes accepted (a {} answer is a few KiB)",
                self.service.name()
            ))
        };
        if body.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut stream = aws_smithy_types::byte_stream::ByteStream::new(body);
        let mut bytes = Zeroizing::new(Vec::new());
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                let (kind, detail) = classify_transport(&e, self.config.request_timeout);
                self.error(kind, detail)
            })?;
            if bytes.len() + chunk.len() > limit {
                return Err(too_large());
            }
            // Grow by hand so no reallocation leaves a copy of a secret behind.
            if bytes.capacity() < bytes.len() + chunk.len() {
                let mut grown =
                    Zeroizing::new(Vec::with_capacity((bytes.len() + chunk.len()).max(8192)));
                grown.extend_from_slice(&bytes);
                bytes = grown;
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    fn sign(&self, request: &mut http::Request<SdkBody>, body: &[u8]) -> Result<(), DeviceError> {
        let identity: Identity = self.provider.credentials().into();
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&identity)
            .region(SNOW_REGION)
            .name(self.signing_name)
            .time(std::time::SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| self.error(ErrorKind::Connection, format!("signing: {e}")))?
            .into();
        let headers: Vec<(String, String)> = request
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        let signable = SignableRequest::new(
            "POST",
            self.url.as_str(),
            headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            SignableBody::Bytes(body),
        )
        .map_err(|e| self.error(ErrorKind::Connection, format!("signing: {e}")))?;
        let (instructions, _signature) = sign(signable, &params)
            .map_err(|e| self.error(ErrorKind::Connection, format!("signing: {e}")))?
            .into_parts();
        instructions.apply_to_request_http1x(request);
        Ok(())
    }
}
