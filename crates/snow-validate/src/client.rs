//! The real device clients: EC2 (aws-sdk-ec2) and the Snowball Device API (awsJson1.1 over
//! aws-smithy-http-client, signed with aws-sigv4), both on rustls with aws-lc-rs and trusting only
//! the CA bundle.

use crate::device::{
    Capacity, Device, DeviceDescription, DeviceSoftware, DirectNetworkInterface, Image,
    InstanceTypeInfo, NetworkInterface, UnlockState,
};
use crate::error::{DeviceError, ErrorKind, Service, classify_service, classify_transport};
use crate::limits;
use crate::signed::SignedEndpoint;
use aws_sdk_ec2::config::{BehaviorVersion, Region, retry::RetryConfig, timeout::TimeoutConfig};
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_async::rt::sleep::{SharedAsyncSleep, TokioSleep};
use aws_smithy_http_client::tls::{self, TlsContext, TrustStore, rustls_provider::CryptoMode};
use base64::Engine as _;
use snow_api::DeviceIp;
use snow_credentials::{CaBundle, CredentialsFile, DeviceCredentialsProvider};
use std::{error::Error as StdError, fmt, future::Future, net::SocketAddr, time::Duration};

/// The signing region of every Snow device.
pub const SNOW_REGION: &str = "snow";
/// The SigV4 signing name of the Snowball Device API.
pub const DEVICE_API_SIGNING_NAME: &str = "snowballdevice";
/// The awsJson1.1 target prefix of the Snowball Device API.
pub const DEVICE_API_TARGET_PREFIX: &str = "SnowballDevice_20171127";

/// How long to wait and how often to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// TCP connect timeout (default 3 s).
    pub connect_timeout: Duration,
    /// Whole-request timeout, TLS handshake and answer included (default 10 s).
    pub request_timeout: Duration,
    /// Retries for throttling and 5xx.
    pub retry: RetryPolicy,
    /// EC2 port (8243 on every device).
    pub ec2_port: u16,
    /// Snowball Device API port (9092 on every device).
    pub device_api_port: u16,
    /// IAM port (6078 on every device; only `create-scoped-user` calls IAM).
    pub iam_port: u16,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connect_timeout: limits::CONNECT_TIMEOUT,
            request_timeout: limits::REQUEST_TIMEOUT,
            retry: RetryPolicy::default(),
            ec2_port: Service::Ec2.port(),
            device_api_port: Service::DeviceApi.port(),
            iam_port: Service::Iam.port(),
        }
    }
}

/// Retries with exponential backoff, for throttling and 5xx only (never for refused, timed out,
/// TLS or credential errors: those do not heal in seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retry).
    pub max_attempts: u32,
    /// The wait before the first retry; doubled for each further retry.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: limits::MAX_ATTEMPTS,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `n` (1-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32 << retry.saturating_sub(1).min(16);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }

    /// Runs `call` until it succeeds, fails with a non-retryable error, or attempts run out.
    pub async fn run<T, F, Fut>(&self, mut call: F) -> Result<T, DeviceError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, DeviceError>>,
    {
        let mut attempt = 1;
        loop {
            match call().await {
                Err(err) if err.kind.is_retryable() && attempt < self.max_attempts.max(1) => {
                    tokio::time::sleep(self.backoff(attempt)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

/// Building clients failed (the CA bundle has no certificate, or TLS setup failed).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The CA bundle has no usable certificate: nothing could be trusted.
    #[error("the CA bundle {0} has no certificate to trust")]
    EmptyBundle(String),
    /// The TLS context could not be built.
    #[error("cannot build the TLS context from the CA bundle: {0}")]
    Tls(String),
}

/// The trust every device client uses: the CA bundle's certificates and never the system roots.
#[derive(Clone)]
pub struct Trust {
    context: TlsContext,
}

impl fmt::Debug for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Trust(CA bundle only)")
    }
}

impl Trust {
    /// Trusts exactly the bundle's certificates.
    pub fn from_bundle(bundle: &CaBundle) -> Result<Trust, ClientError> {
        let ders = bundle.certificates_der();
        if ders.is_empty() {
            return Err(ClientError::EmptyBundle(bundle.source().to_owned()));
        }
        let mut store = TrustStore::empty().with_native_roots(false);
        for der in ders {
            store = store.with_pem_certificate(der_to_pem(der.as_ref()));
        }
        let context = TlsContext::builder()
            .with_trust_store(store)
            .build()
            .map_err(|e| ClientError::Tls(e.to_string()))?;
        Ok(Trust { context })
    }
}

impl Trust {
    pub(crate) fn context(&self) -> &TlsContext {
        &self.context
    }
}

fn der_to_pem(der: &[u8]) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem.into_bytes()
}

pub(crate) fn tls_provider() -> tls::Provider {
    tls::Provider::Rustls(CryptoMode::AwsLc)
}

fn url(ip: DeviceIp, port: u16) -> String {
    format!("https://{}", SocketAddr::new(ip.ip(), port))
}

/// One Snow device: its EC2 client and its Snowball Device API client.
#[derive(Clone)]
pub struct SnowDevice {
    ip: DeviceIp,
    ec2: aws_sdk_ec2::Client,
    device_api: DeviceApiClient,
    config: ClientConfig,
}

impl fmt::Debug for SnowDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnowDevice")
            .field("ip", &self.ip)
            .finish_non_exhaustive()
    }
}

impl SnowDevice {
    /// Clients for one device, from its static credentials.
    pub fn new(provider: DeviceCredentialsProvider, trust: &Trust, config: ClientConfig) -> Self {
        let ip = provider.device();
        let http_client = aws_smithy_http_client::Builder::new()
            .tls_provider(tls_provider())
            .tls_context(trust.context.clone())
            .build_https();
        let ec2_config = aws_sdk_ec2::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .http_client(http_client)
            .sleep_impl(SharedAsyncSleep::new(TokioSleep::new()))
            .endpoint_url(url(ip, config.ec2_port))
            .region(Region::new(SNOW_REGION))
            .credentials_provider(provider.clone())
            // snowctl's own policy (throttling and 5xx only) wraps every call.
            .retry_config(RetryConfig::disabled())
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(config.connect_timeout)
                    .read_timeout(config.request_timeout)
                    .operation_attempt_timeout(config.request_timeout)
                    .build(),
            )
            .build();
        SnowDevice {
            ip,
            ec2: aws_sdk_ec2::Client::from_conf(ec2_config),
            device_api: DeviceApiClient::new(provider, trust, config),
            config,
        }
    }

    /// Clients for every listed device that has credentials; the IPs without credentials are
    /// returned apart (preflight reports them).
    pub fn fleet(
        credentials: &CredentialsFile,
        trust: &Trust,
        config: ClientConfig,
        ips: impl IntoIterator<Item = DeviceIp>,
    ) -> (Vec<SnowDevice>, Vec<DeviceIp>) {
        let mut devices = Vec::new();
        let mut missing = Vec::new();
        for ip in ips {
            match credentials.provider(ip) {
                Some(provider) => devices.push(SnowDevice::new(provider, trust, config)),
                None => missing.push(ip),
            }
        }
        (devices, missing)
    }

    /// The EC2 SDK client (tests seed moto through it; not API, like the `aws_sdk_ec2`
    /// re-export).
    #[doc(hidden)]
    pub fn ec2(&self) -> &aws_sdk_ec2::Client {
        &self.ec2
    }

    /// The Snowball Device API client.
    pub fn device_api(&self) -> &DeviceApiClient {
        &self.device_api
    }

    /// The timeouts and retry policy.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub(crate) fn ec2_error<E>(
        &self,
        err: SdkError<E, aws_smithy_runtime_api::http::Response>,
    ) -> DeviceError
    where
        E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
    {
        ec2_error(self.ip, &err, self.config.request_timeout).at_port(self.config.ec2_port)
    }
}

/// Classifies an EC2 SDK error.
fn ec2_error<E>(
    ip: DeviceIp,
    err: &SdkError<E, aws_smithy_runtime_api::http::Response>,
    timeout: Duration,
) -> DeviceError
where
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
{
    let (kind, detail) = match err {
        SdkError::ServiceError(service) => {
            let status = service.raw().status().as_u16();
            let code = service.err().code().unwrap_or_default();
            let message = service.err().message().unwrap_or_default().to_owned();
            (classify_service(status, code), message)
        }
        SdkError::TimeoutError(_) => (ErrorKind::TimedOut(timeout), String::new()),
        SdkError::DispatchFailure(failure) => {
            if failure.is_timeout() {
                (ErrorKind::TimedOut(timeout), String::new())
            } else {
                match StdError::source(err) {
                    Some(source) => classify_transport(source, timeout),
                    None => (ErrorKind::Connection, err.to_string()),
                }
            }
        }
        SdkError::ResponseError(response) => {
            let status = response.raw().status().as_u16();
            if status >= 500 {
                (
                    ErrorKind::Service {
                        status,
                        code: String::new(),
                    },
                    String::new(),
                )
            } else {
                (ErrorKind::Protocol, format!("HTTP {status}"))
            }
        }
        _ => match StdError::source(err) {
            Some(source) => classify_transport(source, timeout),
            None => (ErrorKind::Connection, err.to_string()),
        },
    };
    DeviceError::new(ip, Service::Ec2, kind, detail)
}

/// The token of the next page, when there is one (an empty token ends the listing too).
pub(crate) fn next_page(token: Option<&str>) -> Option<String> {
    token.filter(|t| !t.is_empty()).map(str::to_owned)
}

pub(crate) fn is_not_found(err: &DeviceError, codes: &[&str]) -> bool {
    matches!(&err.kind, ErrorKind::Service { code, .. } if codes.contains(&code.as_str()))
}

impl Device for SnowDevice {
    fn ip(&self) -> DeviceIp {
        self.ip
    }

    async fn describe_image(&self, ami_id: &str) -> Result<Option<Image>, DeviceError> {
        let result = self
            .config
            .retry
            .run(|| async {
                self.ec2
                    .describe_images()
                    .image_ids(ami_id)
                    .send()
                    .await
                    .map_err(|e| self.ec2_error(e))
            })
            .await;
        match result {
            Ok(out) => Ok(out
                .images()
                .iter()
                .find(|i| i.image_id() == Some(ami_id))
                .map(|i| Image {
                    id: ami_id.to_owned(),
                    name: i.name().map(str::to_owned),
                })),
            Err(err)
                if is_not_found(&err, &["InvalidAMIID.NotFound", "InvalidAMIID.Unavailable"]) =>
            {
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    async fn images_tagged(&self, tags: &[(String, String)]) -> Result<Vec<Image>, DeviceError> {
        let out = self
            .config
            .retry
            .run(|| async {
                let mut request = self.ec2.describe_images();
                for (key, value) in tags {
                    request = request.filters(
                        aws_sdk_ec2::types::Filter::builder()
                            .name(format!("tag:{key}"))
                            .values(value)
                            .build(),
                    );
                }
                request.send().await.map_err(|e| self.ec2_error(e))
            })
            .await?;
        let mut images: Vec<Image> = out
            .images()
            .iter()
            .filter_map(|i| {
                Some(Image {
                    id: i.image_id()?.to_owned(),
                    name: i.name().map(str::to_owned),
                })
            })
            .collect();
        images.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(images)
    }

    async fn key_pair_exists(&self, name: &str) -> Result<bool, DeviceError> {
        let result = self
            .config
            .retry
            .run(|| async {
                self.ec2
                    .describe_key_pairs()
                    .key_names(name)
                    .send()
                    .await
                    .map_err(|e| self.ec2_error(e))
            })
            .await;
        match result {
            Ok(out) => Ok(out.key_pairs().iter().any(|k| k.key_name() == Some(name))),
            Err(err) if is_not_found(&err, &["InvalidKeyPair.NotFound"]) => Ok(false),
            Err(err) => Err(err),
        }
    }

    async fn instance_types(&self) -> Result<Vec<InstanceTypeInfo>, DeviceError> {
        let mut types = Vec::new();
        let mut token: Option<String> = None;
        // A device has a few dozen types; the page bound keeps a looping token from hanging us.
        for _ in 0..limits::MAX_PAGES {
            let out = self
                .config
                .retry
                .run(|| async {
                    self.ec2
                        .describe_instance_types()
                        .set_next_token(token.clone())
                        .send()
                        .await
                        .map_err(|e| self.ec2_error(e))
                })
                .await?;
            for t in out.instance_types() {
                let Some(name) = t.instance_type() else {
                    continue;
                };
                types.push(InstanceTypeInfo {
                    name: name.as_str().to_owned(),
                    default_vcpus: t
                        .v_cpu_info()
                        .and_then(|v| v.default_v_cpus())
                        .and_then(|v| u32::try_from(v).ok()),
                    memory_mib: t
                        .memory_info()
                        .and_then(|m| m.size_in_mib())
                        .and_then(|m| u64::try_from(m).ok()),
                });
            }
            token = next_page(out.next_token());
            if token.is_none() {
                break;
            }
        }
        Ok(types)
    }

    async fn describe_device(&self) -> Result<DeviceDescription, DeviceError> {
        self.device_api.describe_device().await
    }

    async fn describe_device_software(&self) -> Result<DeviceSoftware, DeviceError> {
        self.device_api.describe_device_software().await
    }
}

/// The Snowball Device API client: awsJson1.1 `POST /` with
/// `X-Amz-Target: SnowballDevice_20171127.<Op>`, SigV4 (`snowballdevice`, region `snow`).
#[derive(Clone)]
pub struct DeviceApiClient {
    endpoint: SignedEndpoint,
}

impl fmt::Debug for DeviceApiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceApiClient")
            .field("url", &self.endpoint.url())
            .finish_non_exhaustive()
    }
}

impl DeviceApiClient {
    /// A client for `https://IP:9092`.
    pub fn new(provider: DeviceCredentialsProvider, trust: &Trust, config: ClientConfig) -> Self {
        DeviceApiClient {
            endpoint: SignedEndpoint::new(
                provider,
                trust,
                config,
                Service::DeviceApi,
                config.device_api_port,
                DEVICE_API_SIGNING_NAME,
            ),
        }
    }

    /// `DescribeDevice`.
    pub async fn describe_device(&self) -> Result<DeviceDescription, DeviceError> {
        let value = self.call("DescribeDevice").await?;
        parse_describe_device(&value).map_err(|detail| self.protocol(detail))
    }

    /// `DescribeDeviceSoftware`.
    pub async fn describe_device_software(&self) -> Result<DeviceSoftware, DeviceError> {
        let value = self.call("DescribeDeviceSoftware").await?;
        parse_describe_device_software(&value).map_err(|detail| self.protocol(detail))
    }

    fn protocol(&self, detail: String) -> DeviceError {
        self.endpoint.protocol(detail)
    }

    /// `DescribeDirectNetworkInterfaces`, every page (at most [`limits::MAX_PAGES`]).
    pub async fn describe_direct_network_interfaces(
        &self,
    ) -> Result<Vec<DirectNetworkInterface>, DeviceError> {
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..limits::MAX_PAGES {
            let input = match &token {
                Some(t) => serde_json::json!({ "NextToken": t }),
                None => serde_json::json!({}),
            };
            let value = self
                .call_with("DescribeDirectNetworkInterfaces", &input)
                .await?;
            all.extend(parse_direct_network_interfaces(&value).map_err(|d| self.protocol(d))?);
            token = value
                .get("NextToken")
                .and_then(|t| t.as_str())
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if token.is_none() {
                break;
            }
        }
        Ok(all)
    }

    /// `CreateDirectNetworkInterface` on a physical interface, attached to `instance_id`.
    pub async fn create_direct_network_interface(
        &self,
        physical_network_interface_id: &str,
        instance_id: Option<&str>,
    ) -> Result<DirectNetworkInterface, DeviceError> {
        let mut input = serde_json::json!({
            "PhysicalNetworkInterfaceId": physical_network_interface_id,
        });
        if let Some(id) = instance_id {
            input["InstanceId"] = serde_json::json!(id);
        }
        let value = self
            .call_with("CreateDirectNetworkInterface", &input)
            .await?;
        let dni = field(&value, "DirectNetworkInterface", "").map_err(|d| self.protocol(d))?;
        parse_direct_network_interface(dni, "DirectNetworkInterface.").map_err(|d| self.protocol(d))
    }

    /// `DeleteDirectNetworkInterface`; `Ok(false)` when the device no longer has it
    /// (`ResourceNotFoundException`), so a re-run skips what is already gone.
    pub async fn delete_direct_network_interface(&self, arn: &str) -> Result<bool, DeviceError> {
        let input = serde_json::json!({ "DirectNetworkInterfaceArn": arn });
        match self.call_with("DeleteDirectNetworkInterface", &input).await {
            Ok(_) => Ok(true),
            Err(err) if is_not_found(&err, &["ResourceNotFoundException"]) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// One operation without input (`{}`) with the retry policy; the JSON answer.
    pub async fn call(&self, operation: &str) -> Result<serde_json::Value, DeviceError> {
        self.call_with(operation, &serde_json::json!({})).await
    }

    /// One operation with a JSON input, with the retry policy; the JSON answer.
    pub async fn call_with(
        &self,
        operation: &str,
        input: &serde_json::Value,
    ) -> Result<serde_json::Value, DeviceError> {
        let body = input.to_string().into_bytes();
        self.endpoint
            .config()
            .retry
            .run(|| self.call_once(operation, &body))
            .await
    }

    async fn call_once(
        &self,
        operation: &str,
        body: &[u8],
    ) -> Result<serde_json::Value, DeviceError> {
        let target = format!("{DEVICE_API_TARGET_PREFIX}.{operation}");
        let answer = self
            .endpoint
            .post(
                &[
                    ("content-type", "application/x-amz-json-1.1"),
                    ("x-amz-target", &target),
                ],
                body,
            )
            .await?;
        let value: Option<serde_json::Value> = serde_json::from_slice(&answer.body).ok();
        if (200..300).contains(&answer.status) {
            return value.ok_or_else(|| self.protocol("the answer is not JSON".to_owned()));
        }
        let code = answer
            .error_type
            .or_else(|| {
                value
                    .as_ref()
                    .and_then(|v| v.get("__type"))
                    .and_then(|t| t.as_str())
                    .map(|t| t.rsplit('#').next().unwrap_or(t).to_owned())
            })
            .unwrap_or_default();
        let message = value
            .as_ref()
            .and_then(|v| v.get("message").or_else(|| v.get("Message")))
            .and_then(|m| m.as_str())
            .unwrap_or_default()
            .to_owned();
        Err(self
            .endpoint
            .error(classify_service(answer.status, &code), message))
    }
}

fn field<'a>(
    v: &'a serde_json::Value,
    name: &str,
    at: &str,
) -> Result<&'a serde_json::Value, String> {
    v.get(name)
        .filter(|v| !v.is_null())
        .ok_or_else(|| format!("{at}{name} is missing"))
}

fn string(v: &serde_json::Value, name: &str, at: &str) -> Result<String, String> {
    field(v, name, at)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{at}{name} is not a string"))
}

fn number(v: &serde_json::Value, name: &str, at: &str) -> Result<u64, String> {
    field(v, name, at)?
        .as_u64()
        .ok_or_else(|| format!("{at}{name} is not a non-negative integer"))
}

fn array<'a>(v: &'a serde_json::Value, name: &str) -> Result<&'a Vec<serde_json::Value>, String> {
    field(v, name, "")?
        .as_array()
        .ok_or_else(|| format!("{name} is not a list"))
}

/// Parses a `DescribeDevice` answer; a missing required field is an error.
pub fn parse_describe_device(v: &serde_json::Value) -> Result<DeviceDescription, String> {
    let unlock = field(v, "UnlockStatus", "")?;
    let unlock_state = UnlockState::parse(&string(unlock, "State", "UnlockStatus.")?);
    let mut capacities = Vec::new();
    for (i, c) in array(v, "DeviceCapacities")?.iter().enumerate() {
        let at = format!("DeviceCapacities[{i}].");
        capacities.push(Capacity {
            name: string(c, "Name", &at)?,
            unit: string(c, "Unit", &at)?,
            total: number(c, "Total", &at)?,
            used: number(c, "Used", &at)?,
            available: number(c, "Available", &at)?,
        });
    }
    let mut network_interfaces = Vec::new();
    for (i, n) in array(v, "PhysicalNetworkInterfaces")?.iter().enumerate() {
        let at = format!("PhysicalNetworkInterfaces[{i}].");
        network_interfaces.push(NetworkInterface {
            id: string(n, "PhysicalNetworkInterfaceId", &at)?,
            connector_type: string(n, "PhysicalConnectorType", &at)?,
            ip_address: n
                .get("IpAddress")
                .and_then(|a| a.as_str())
                .map(str::to_owned),
        });
    }
    Ok(DeviceDescription {
        device_id: v
            .get("DeviceId")
            .and_then(|d| d.as_str())
            .map(str::to_owned),
        unlock_state,
        capacities,
        network_interfaces,
    })
}

/// Parses one direct network interface; `DirectNetworkInterfaceArn` and
/// `PhysicalNetworkInterfaceId` are required.
fn parse_direct_network_interface(
    v: &serde_json::Value,
    at: &str,
) -> Result<DirectNetworkInterface, String> {
    let text = |name: &str| v.get(name).and_then(|x| x.as_str()).map(str::to_owned);
    Ok(DirectNetworkInterface {
        arn: string(v, "DirectNetworkInterfaceArn", at)?,
        physical_network_interface_id: string(v, "PhysicalNetworkInterfaceId", at)?,
        instance_id: text("InstanceId").filter(|s| !s.is_empty()),
        vlan_id: v.get("VlanId").and_then(|x| x.as_u64()),
        mac_address: text("MacAddress"),
    })
}

/// Parses a `DescribeDirectNetworkInterfaces` answer; a missing required field is an error.
pub fn parse_direct_network_interfaces(
    v: &serde_json::Value,
) -> Result<Vec<DirectNetworkInterface>, String> {
    array(v, "DirectNetworkInterfaces")?
        .iter()
        .enumerate()
        .map(|(i, d)| parse_direct_network_interface(d, &format!("DirectNetworkInterfaces[{i}].")))
        .collect()
}

/// Parses a `DescribeDeviceSoftware` answer; a missing required field is an error.
pub fn parse_describe_device_software(v: &serde_json::Value) -> Result<DeviceSoftware, String> {
    Ok(DeviceSoftware {
        installed_version: string(v, "InstalledVersion", "")?,
        install_state: string(v, "InstallState", "")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_credential_types::provider::ProvideCredentials;
    use serde_json::json;

    #[test]
    fn describe_device_requires_its_fields() {
        let ok = json!({
            "DeviceId": "JID1",
            "UnlockStatus": {"State": "UNLOCKED"},
            "DeviceCapacities": [{"Name": "vCPU", "Unit": "Number", "Total": 52, "Used": 4, "Available": 48}],
            "PhysicalNetworkInterfaces": [{"PhysicalNetworkInterfaceId": "s.ni-1", "PhysicalConnectorType": "RJ45", "IpAddress": "192.168.1.10"}]
        });
        let d = parse_describe_device(&ok).unwrap();
        assert_eq!(d.unlock_state, UnlockState::Unlocked);
        assert_eq!(d.capacity("vcpu").unwrap().available, 48);
        let mut missing = ok.clone();
        missing.as_object_mut().unwrap().remove("UnlockStatus");
        assert_eq!(
            parse_describe_device(&missing).unwrap_err(),
            "UnlockStatus is missing"
        );
        let mut bad = ok;
        bad["DeviceCapacities"][0]
            .as_object_mut()
            .unwrap()
            .remove("Available");
        assert_eq!(
            parse_describe_device(&bad).unwrap_err(),
            "DeviceCapacities[0].Available is missing"
        );
    }

    #[test]
    fn software_requires_installed_version() {
        assert!(parse_describe_device_software(&json!({"InstallState": "NA"})).is_err());
        let s = parse_describe_device_software(
            &json!({"InstalledVersion": "102", "InstallState": "NA"}),
        )
        .unwrap();
        assert_eq!(s.version_number(), Some(102));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(1), Duration::from_millis(200));
        assert_eq!(p.backoff(2), Duration::from_millis(400));
        assert_eq!(p.backoff(10), Duration::from_secs(2));
    }

    #[test]
    fn provider_trait_is_used() {
        fn assert_provider<P: ProvideCredentials>() {}
        assert_provider::<DeviceCredentialsProvider>();
    }
}
