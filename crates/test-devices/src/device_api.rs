//! A stand-in for the Snowball Device API (port 9092): awsJson1.1 over TLS, SigV4 verified with
//! the device's secret, configurable state and faults.
//!
//! There is no public emulator of this API (moto has no snowball-device backend, botocore does not
//! describe it); the shapes follow EKS Anywhere's vendored `snowballdevice` client.
//!
//! Direct network interfaces (DNIs) live in the stand-in: `CreateDirectNetworkInterface` needs one
//! of the device's physical interface ids and returns an ARN
//! `arn:aws:snowball-device:::interface/s.ni-…`; `DescribeDirectNetworkInterfaces` lists them;
//! `DeleteDirectNetworkInterface` of an unknown ARN is `ResourceNotFoundException` (400). Every
//! request that passed the signature check is logged ([`DeviceApiStandIn::log`]).

use crate::ca::ServerCertificate;
use aws_lc_rs::{digest, hmac};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the device reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceState {
    /// `UnlockStatus.State`: UNLOCKED, LOCKED, UNLOCKING.
    pub unlock_state: String,
    /// `InstalledVersion`.
    pub installed_version: String,
    /// `InstallState`.
    pub install_state: String,
    /// Available vCPU (total is this plus `used_vcpus`).
    pub available_vcpus: u64,
    /// vCPU in use.
    pub used_vcpus: u64,
    /// Available memory, bytes.
    pub available_memory_bytes: u64,
    /// Memory in use, bytes.
    pub used_memory_bytes: u64,
    /// Top-level fields to leave out of DescribeDevice (to test "a missing field is an error").
    pub omit: Vec<String>,
}

impl Default for DeviceState {
    /// An unlocked Snowball Edge Compute Optimized (104 vCPU, 416 GiB) on software 102.
    fn default() -> Self {
        DeviceState {
            unlock_state: "UNLOCKED".into(),
            installed_version: "102".into(),
            install_state: "NA".into(),
            available_vcpus: 104,
            used_vcpus: 0,
            available_memory_bytes: 416 << 30,
            used_memory_bytes: 0,
            omit: Vec::new(),
        }
    }
}

/// Faults to inject.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Answer this many requests with `ThrottlingException` (HTTP 400) first.
    pub throttle_first: u32,
    /// Wait this long before every answer.
    pub delay: Duration,
    /// Refuse `DeleteDirectNetworkInterface` of these ARNs (`AccessDeniedException`, 400).
    pub refuse_dni_delete: Vec<String>,
}

/// One direct network interface the stand-in holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dni {
    /// `arn:aws:snowball-device:::interface/s.ni-…`.
    pub arn: String,
    /// The physical interface it hangs off.
    pub physical_network_interface_id: String,
    /// The instance it is attached to (moto's `i-…` id in tests), if any.
    pub instance_id: Option<String>,
    /// The VLAN id, if any.
    pub vlan_id: Option<u64>,
    /// The MAC address.
    pub mac_address: String,
}

impl Dni {
    fn to_json(&self) -> Value {
        let mut v = json!({
            "DirectNetworkInterfaceArn": self.arn,
            "PhysicalNetworkInterfaceId": self.physical_network_interface_id,
            "MacAddress": self.mac_address,
            "Driver": "ixgbevf",
        });
        if let Some(id) = &self.instance_id {
            v["InstanceId"] = json!(id);
        }
        if let Some(vlan) = self.vlan_id {
            v["VlanId"] = json!(vlan);
        }
        v
    }
}

/// The physical interface ids `DescribeDevice` reports.
pub const PHYSICAL_INTERFACES: [&str; 2] = ["s.ni-8c2bc1b2f1bfa8c4a", "s.ni-0a3b2c1d4e5f60718"];

/// Starting the stand-in failed.
#[derive(Debug, thiserror::Error)]
pub enum StandInError {
    /// Binding failed.
    #[error("binding the Device API stand-in: {0}")]
    Io(#[from] std::io::Error),
    /// The certificate or key could not be used.
    #[error("TLS setup of the Device API stand-in: {0}")]
    Tls(String),
}

struct Shared {
    /// The access keys the device knows (id, secret): its root key first, then those
    /// [`DeviceApiStandIn::allow_key`] added (an IAM user's keys; no policy is evaluated).
    keys: Mutex<Vec<(String, String)>>,
    state: Mutex<(DeviceState, Faults)>,
    requests: AtomicU32,
    bad_signatures: AtomicU32,
    dnis: Mutex<Vec<Dni>>,
    log: Mutex<Vec<String>>,
    next_dni: AtomicU32,
}

/// A running stand-in; stops when dropped.
pub struct DeviceApiStandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Held for its drop, which stops serving.
    _serving: crate::https::Serving,
}

impl std::fmt::Debug for DeviceApiStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceApiStandIn")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl DeviceApiStandIn {
    /// Starts serving on `ip:port` (inside a tokio runtime).
    pub async fn start(
        ip: IpAddr,
        port: u16,
        certificate: &ServerCertificate,
        access_key_id: &str,
        secret_access_key: &str,
        state: DeviceState,
        faults: Faults,
    ) -> Result<DeviceApiStandIn, StandInError> {
        let acceptor = crate::https::acceptor(certificate).map_err(StandInError::Tls)?;
        let listener = tokio::net::TcpListener::bind((ip, port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            keys: Mutex::new(vec![(
                access_key_id.to_owned(),
                secret_access_key.to_owned(),
            )]),
            state: Mutex::new((state, faults)),
            requests: AtomicU32::new(0),
            bad_signatures: AtomicU32::new(0),
            dnis: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            next_dni: AtomicU32::new(1),
        });
        let serving = shared.clone();
        let task = crate::https::serve(listener, acceptor, move |req| {
            let shared = serving.clone();
            async move { handle(&shared, req).await }
        });
        Ok(DeviceApiStandIn {
            addr,
            shared,
            _serving: task,
        })
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests received so far (signature failures included).
    pub fn requests(&self) -> u32 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Requests whose signature did not verify.
    pub fn bad_signatures(&self) -> u32 {
        self.shared.bad_signatures.load(Ordering::SeqCst)
    }

    /// The direct network interfaces the device holds now.
    pub fn dnis(&self) -> Vec<Dni> {
        self.shared
            .dnis
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default()
    }

    /// Every signed request so far, in order: the operation name, then `" "` and the
    /// `DirectNetworkInterfaceArn` (delete) or `InstanceId` (create) when the request has one.
    pub fn log(&self) -> Vec<String> {
        self.shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Accepts requests signed with this key too (an IAM user's key made on the device's IAM,
    /// which the stand-in does not serve). Signatures are verified; policies are not evaluated.
    pub fn allow_key(&self, access_key_id: &str, secret_access_key: &str) {
        if let Ok(mut keys) = self.shared.keys.lock() {
            keys.push((access_key_id.to_owned(), secret_access_key.to_owned()));
        }
    }

    /// Changes the faults injected from now on.
    pub fn set_faults(&self, faults: Faults) {
        if let Ok(mut guard) = self.shared.state.lock() {
            guard.1 = faults;
        }
    }

    /// Changes the state served from now on.
    pub fn set_state(&self, state: DeviceState) {
        if let Ok(mut guard) = self.shared.state.lock() {
            guard.0 = state;
        }
    }
}

fn answer(status: u16, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/x-amz-json-1.1"),
    );
    response
}

fn error(status: u16, code: &str, message: &str) -> Response<Full<Bytes>> {
    answer(status, json!({"__type": code, "message": message}))
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let (parts, body) = req.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return error(400, "SerializationException", "unreadable body");
    };
    if let Err(why) = verify_sigv4(shared, &parts, &body) {
        shared.bad_signatures.fetch_add(1, Ordering::SeqCst);
        return error(403, why.0, why.1);
    }
    let (state, faults, throttle) = {
        let Ok(mut guard) = shared.state.lock() else {
            return error(500, "InternalFailure", "state lock poisoned");
        };
        let throttle = guard.1.throttle_first > 0;
        if throttle {
            guard.1.throttle_first -= 1;
        }
        (guard.0.clone(), guard.1.clone(), throttle)
    };
    let delay = faults.delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if throttle {
        return error(400, "ThrottlingException", "Rate exceeded");
    }
    let content_type = header(&parts, "content-type").unwrap_or_default();
    if parts.method != hyper::Method::POST
        || parts.uri.path() != "/"
        || content_type != "application/x-amz-json-1.1"
    {
        return error(
            400,
            "SerializationException",
            "expected POST / with application/x-amz-json-1.1",
        );
    }
    let target = header(&parts, "x-amz-target").unwrap_or_default();
    let Ok(input) = serde_json::from_slice::<Value>(&body) else {
        return error(400, "SerializationException", "the body is not JSON");
    };
    let operation = target
        .strip_prefix("SnowballDevice_20171127.")
        .unwrap_or(&target);
    let subject = ["DirectNetworkInterfaceArn", "InstanceId"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str));
    if let Ok(mut log) = shared.log.lock() {
        log.push(match subject {
            Some(s) => format!("{operation} {s}"),
            None => operation.to_owned(),
        });
    }
    match target.as_str() {
        "SnowballDevice_20171127.DescribeDirectNetworkInterfaces" => {
            let dnis = shared.dnis.lock().map(|d| d.clone()).unwrap_or_default();
            let list: Vec<Value> = dnis.iter().map(Dni::to_json).collect();
            answer(200, json!({ "DirectNetworkInterfaces": list }))
        }
        "SnowballDevice_20171127.CreateDirectNetworkInterface" => create_dni(shared, &input),
        "SnowballDevice_20171127.DeleteDirectNetworkInterface" => {
            let Some(arn) = input
                .get("DirectNetworkInterfaceArn")
                .and_then(Value::as_str)
            else {
                return error(
                    400,
                    "ValidationException",
                    "DirectNetworkInterfaceArn is required",
                );
            };
            if faults.refuse_dni_delete.iter().any(|r| r == arn) {
                return error(
                    400,
                    "AccessDeniedException",
                    "not allowed to delete this interface",
                );
            }
            let Ok(mut dnis) = shared.dnis.lock() else {
                return error(500, "InternalFailure", "state lock poisoned");
            };
            let before = dnis.len();
            dnis.retain(|d| d.arn != arn);
            if dnis.len() == before {
                return error(
                    400,
                    "ResourceNotFoundException",
                    &format!("interface {arn} not found"),
                );
            }
            answer(200, json!({}))
        }
        "SnowballDevice_20171127.DescribeDevice" => {
            let mut v = json!({
                "DeviceId": "JIDa1b2c3d4-0000-0000-0000-000000000000",
                "DeviceType": "SBE-C",
                "UnlockStatus": {"State": state.unlock_state},
                "ActiveNetworkInterface": {"IpAddress": parts.uri.host().unwrap_or_default()},
                "DeviceCapacities": [
                    {"Name": "HDD Storage", "Unit": "Byte", "Total": 42u64 << 40, "Used": 0, "Available": 42u64 << 40},
                    {"Name": "vCPU", "Unit": "Number", "Total": state.available_vcpus + state.used_vcpus, "Used": state.used_vcpus, "Available": state.available_vcpus},
                    {"Name": "Memory", "Unit": "Byte", "Total": state.available_memory_bytes + state.used_memory_bytes, "Used": state.used_memory_bytes, "Available": state.available_memory_bytes}
                ],
                "PhysicalNetworkInterfaces": [
                    {"PhysicalNetworkInterfaceId": "s.ni-8c2bc1b2f1bfa8c4a", "PhysicalConnectorType": "RJ45", "IpAddressAssignment": "STATIC", "IpAddress": "192.168.1.10", "Netmask": "255.255.255.0", "DefaultGateway": "192.168.1.1", "MacAddress": "0c:c4:7a:00:00:01"},
                    {"PhysicalNetworkInterfaceId": "s.ni-0a3b2c1d4e5f60718", "PhysicalConnectorType": "SFP_PLUS", "IpAddressAssignment": "DHCP"}
                ],
                "Tags": []
            });
            if let Some(obj) = v.as_object_mut() {
                for field in &state.omit {
                    obj.remove(field);
                }
            }
            answer(200, v)
        }
        "SnowballDevice_20171127.DescribeDeviceSoftware" => answer(
            200,
            json!({
                "InstalledVersion": state.installed_version,
                "InstallState": state.install_state,
                "CertificateExpiry": 1_900_000_000
            }),
        ),
        other => error(
            400,
            "UnknownOperationException",
            &format!("unknown operation {other}"),
        ),
    }
}

fn create_dni(shared: &Shared, input: &Value) -> Response<Full<Bytes>> {
    let physical = input
        .get("PhysicalNetworkInterfaceId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !PHYSICAL_INTERFACES.contains(&physical) {
        return error(
            400,
            "ValidationException",
            &format!("physical network interface {physical:?} not found"),
        );
    }
    let n = shared.next_dni.fetch_add(1, Ordering::SeqCst);
    let dni = Dni {
        arn: format!("arn:aws:snowball-device:::interface/s.ni-{n:017x}"),
        physical_network_interface_id: physical.to_owned(),
        instance_id: input
            .get("InstanceId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        vlan_id: input.get("VlanId").and_then(Value::as_u64),
        mac_address: format!("0e:00:00:00:{:02x}:{:02x}", (n >> 8) & 0xff, n & 0xff),
    };
    let out = json!({ "DirectNetworkInterface": dni.to_json() });
    match shared.dnis.lock() {
        Ok(mut dnis) => dnis.push(dni),
        Err(_) => return error(500, "InternalFailure", "state lock poisoned"),
    }
    answer(200, out)
}

fn header(parts: &http::request::Parts, name: &str) -> Option<String> {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
        .as_ref()
        .to_vec()
}

/// Verifies an `AWS4-HMAC-SHA256` Authorization header from scratch (not with the client's
/// signing library): canonical request, string to sign, derived key, signature.
fn verify_sigv4(
    shared: &Shared,
    parts: &http::request::Parts,
    body: &[u8],
) -> Result<(), (&'static str, &'static str)> {
    const MISSING: (&str, &str) = (
        "MissingAuthenticationTokenException",
        "Missing Authentication Token",
    );
    const UNKNOWN: (&str, &str) = (
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    );
    const BAD: (&str, &str) = (
        "InvalidSignatureException",
        "The request signature we calculated does not match the signature you provided.",
    );
    let auth = header(parts, "authorization").ok_or(MISSING)?;
    let rest = auth.strip_prefix("AWS4-HMAC-SHA256 ").ok_or(MISSING)?;
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for item in rest.split(',') {
        let (k, v) = item.trim().split_once('=').ok_or(MISSING)?;
        match k {
            "Credential" => credential = Some(v.to_owned()),
            "SignedHeaders" => signed_headers = Some(v.to_owned()),
            "Signature" => signature = Some(v.to_owned()),
            _ => {}
        }
    }
    let (credential, signed_headers, signature) = (
        credential.ok_or(MISSING)?,
        signed_headers.ok_or(MISSING)?,
        signature.ok_or(MISSING)?,
    );
    let mut scope = credential.splitn(5, '/');
    let (key_id, date, region, service, terminator) = (
        scope.next().unwrap_or_default(),
        scope.next().unwrap_or_default(),
        scope.next().unwrap_or_default(),
        scope.next().unwrap_or_default(),
        scope.next().unwrap_or_default(),
    );
    let secret_access_key = shared
        .keys
        .lock()
        .ok()
        .and_then(|keys| {
            keys.iter()
                .find(|(id, _)| id == key_id)
                .map(|k| k.1.clone())
        })
        .ok_or(UNKNOWN)?;
    if region != "snow" || service != "snowballdevice" || terminator != "aws4_request" {
        return Err(BAD);
    }
    let amz_date = header(parts, "x-amz-date").ok_or(BAD)?;
    if !amz_date.starts_with(date) {
        return Err(BAD);
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    if !names.contains(&"host") || !names.contains(&"x-amz-date") {
        return Err(BAD);
    }
    let mut canonical_headers = String::new();
    for name in &names {
        let value = if *name == "host" {
            header(parts, "host").or_else(|| parts.uri.authority().map(|a| a.to_string()))
        } else {
            header(parts, name)
        }
        .ok_or(BAD)?;
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        canonical_headers.push_str(&format!("{name}:{value}\n"));
    }
    let payload_hash = hex(digest::digest(&digest::SHA256, body).as_ref());
    let canonical_request = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{payload_hash}",
        parts.method,
        parts.uri.path(),
        parts.uri.query().unwrap_or_default()
    );
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical_request.as_bytes()).as_ref())
    );
    let k_date = hmac_sha256(
        format!("AWS4{secret_access_key}").as_bytes(),
        date.as_bytes(),
    );
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, service.as_bytes());
    let k_signing = hmac_sha256(&k_service, b"aws4_request");
    let expected = hex(&hmac_sha256(&k_signing, string_to_sign.as_bytes()));
    if expected == signature {
        Ok(())
    } else {
        Err(BAD)
    }
}
