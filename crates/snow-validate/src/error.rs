//! Per-device errors, classified so that a finding can say exactly what is wrong and what to do.

use snow_api::DeviceIp;
use std::{error::Error as StdError, fmt, io, time::Duration};

/// The services of a Snow device snowctl calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Service {
    /// The EC2-compatible endpoint, `https://IP:8243`.
    Ec2,
    /// The Snowball Device API, `https://IP:9092`.
    DeviceApi,
    /// The device's IAM, `https://IP:6078` (only `snowctl credentials create-scoped-user`).
    Iam,
}

impl Service {
    /// The port the service listens on.
    pub fn port(self) -> u16 {
        match self {
            Service::Ec2 => 8243,
            Service::DeviceApi => 9092,
            Service::Iam => 6078,
        }
    }

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Service::Ec2 => "EC2",
            Service::DeviceApi => "Snowball Device API",
            Service::Iam => "IAM",
        }
    }
}

/// What went wrong talking to a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing listens on the port (connection refused or reset before TLS).
    Refused,
    /// No answer within the connect or request timeout.
    TimedOut(Duration),
    /// The device's certificate does not chain to the CA bundle.
    TlsUntrusted,
    /// The certificate chains to the bundle but is not issued for this IP.
    TlsNameMismatch,
    /// Another TLS failure (expired certificate, protocol error).
    Tls,
    /// The device rejected the access key or the signature (AuthFailure, SignatureDoesNotMatch …).
    BadCredentials,
    /// Still throttled after every retry.
    Throttled,
    /// The service answered with an error (HTTP status and error code).
    Service {
        /// The HTTP status.
        status: u16,
        /// The AWS error code, when the response had one.
        code: String,
    },
    /// The answer could not be read: not JSON, or a required field is missing.
    Protocol,
    /// Another connection failure (unreachable network, DNS, I/O).
    Connection,
}

impl ErrorKind {
    /// A stable, short label (used in JSON and tests).
    pub fn label(&self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::TimedOut(_) => "timed-out",
            ErrorKind::TlsUntrusted => "tls-untrusted",
            ErrorKind::TlsNameMismatch => "tls-name-mismatch",
            ErrorKind::Tls => "tls",
            ErrorKind::BadCredentials => "bad-credentials",
            ErrorKind::Throttled => "throttled",
            ErrorKind::Service { .. } => "service-error",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Connection => "connection",
        }
    }

    /// Whether the error means the service cannot be used at all from here (as opposed to one
    /// call failing): such errors are reported once per device and port, as reachability.
    pub fn is_reachability(&self) -> bool {
        matches!(
            self,
            ErrorKind::Refused
                | ErrorKind::TimedOut(_)
                | ErrorKind::TlsUntrusted
                | ErrorKind::TlsNameMismatch
                | ErrorKind::Tls
                | ErrorKind::BadCredentials
                | ErrorKind::Connection
        )
    }

    /// Whether a retry may help: throttling and 5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            ErrorKind::Throttled => true,
            ErrorKind::Service { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

/// An error from one call to one device. Never holds a secret: messages come from the transport
/// and the service's error code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} on {}:{}: {}", service.name(), device, port, self.describe())]
pub struct DeviceError {
    /// The device.
    pub device: DeviceIp,
    /// The service called.
    pub service: Service,
    /// The port called (the service's own port unless a client was configured otherwise).
    pub port: u16,
    /// The classification.
    pub kind: ErrorKind,
    /// The transport's or service's own words.
    pub detail: String,
}

impl DeviceError {
    /// A new error.
    pub fn new(
        device: DeviceIp,
        service: Service,
        kind: ErrorKind,
        detail: impl Into<String>,
    ) -> Self {
        DeviceError {
            device,
            service,
            port: service.port(),
            kind,
            detail: detail.into(),
        }
    }

    /// The same error, on `port` (a client configured with another port than the service's).
    pub fn at_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// One sentence: what went wrong.
    pub fn describe(&self) -> String {
        let port = self.port;
        let ip = self.device;
        let what = match &self.kind {
            ErrorKind::Refused => format!("connection to port {port} refused"),
            ErrorKind::TimedOut(after) => format!("no answer within {}", human(*after)),
            ErrorKind::TlsUntrusted => {
                format!("the certificate for {ip} is not in the CA bundle")
            }
            ErrorKind::TlsNameMismatch => {
                format!("the certificate presented on port {port} is not issued for {ip}")
            }
            ErrorKind::Tls => "TLS handshake failed".to_owned(),
            ErrorKind::BadCredentials => {
                format!("the device rejected the credentials of profile [{ip}]")
            }
            ErrorKind::Throttled => "still throttled after every retry".to_owned(),
            ErrorKind::Service { status, code } if code.is_empty() => {
                format!("the service answered HTTP {status}")
            }
            ErrorKind::Service { status, code } => {
                format!("the service answered {code} (HTTP {status})")
            }
            ErrorKind::Protocol => "the answer could not be read".to_owned(),
            ErrorKind::Connection => "the connection failed".to_owned(),
        };
        if self.detail.is_empty() {
            what
        } else {
            format!("{what} ({})", self.detail)
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        let ip = self.device;
        let port = self.port;
        match &self.kind {
            ErrorKind::Refused => format!(
                "check that {ip} is the device's IP and that the device is powered on and unlocked; nothing accepts connections on port {port}"
            ),
            ErrorKind::TimedOut(_) => format!(
                "check the network path to {ip}:{port} (routing, firewall, VPN); raise the request timeout if the device is slow"
            ),
            ErrorKind::TlsUntrusted => format!(
                "the certificate for {ip} is not in the CA bundle: add it with `snowballEdge get-certificate` and append it to the bundle"
            ),
            ErrorKind::TlsNameMismatch => format!(
                "the CA bundle trusts the certificate but it is for another device: check that {ip} is the right IP, or fetch this device's certificate with `snowballEdge get-certificate`"
            ),
            ErrorKind::Tls => format!(
                "fetch the current certificate of {ip} with `snowballEdge get-certificate` and replace it in the CA bundle"
            ),
            ErrorKind::BadCredentials => format!(
                "fetch the access key of {ip} with `snowballEdge list-access-keys` and its secret with `snowballEdge get-secret-access-key`, and update profile [{ip}] in the credentials file"
            ),
            ErrorKind::Throttled => {
                "the device is busy; wait and run the validation again".to_owned()
            }
            ErrorKind::Service { status, .. } if *status >= 500 => {
                format!(
                    "the device {ip} reported an internal error; check its status with `snowballEdge describe-device` and retry"
                )
            }
            ErrorKind::Service { .. } => {
                format!("check that the credentials of [{ip}] may call this operation")
            }
            ErrorKind::Protocol => format!(
                "check that {ip}:{port} is a Snow device's {} endpoint",
                self.service.name()
            ),
            ErrorKind::Connection => format!("check the network path to {ip}:{port}"),
        }
    }
}

fn human(d: Duration) -> String {
    snow_api::short_duration(d)
}

/// AWS error codes that mean the credentials were refused.
pub(crate) fn is_credentials_code(code: &str) -> bool {
    matches!(
        code,
        "AuthFailure"
            | "SignatureDoesNotMatch"
            | "InvalidSignatureException"
            | "UnrecognizedClientException"
            | "InvalidClientTokenId"
            | "IncompleteSignature"
            | "MissingAuthenticationToken"
            | "InvalidAccessKeyId"
    )
}

/// AWS error codes that mean "slow down".
pub(crate) fn is_throttling_code(code: &str) -> bool {
    matches!(
        code,
        "Throttling"
            | "ThrottlingException"
            | "ThrottledException"
            | "RequestLimitExceeded"
            | "RequestThrottled"
            | "RequestThrottledException"
            | "TooManyRequestsException"
            | "SlowDown"
    )
}

/// Classifies a service error by its code and HTTP status.
pub(crate) fn classify_service(status: u16, code: &str) -> ErrorKind {
    if is_credentials_code(code) {
        ErrorKind::BadCredentials
    } else if is_throttling_code(code) || status == 429 {
        ErrorKind::Throttled
    } else {
        ErrorKind::Service {
            status,
            code: code.to_owned(),
        }
    }
}

/// Classifies a transport failure by walking its source chain: rustls certificate errors, then
/// I/O error kinds, then (as a last resort) the text of the chain.
pub(crate) fn classify_transport(
    err: &(dyn StdError + 'static),
    timeout: Duration,
) -> (ErrorKind, String) {
    let mut text = Vec::new();
    let mut kind = None;
    let mut current: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = current {
        let line = e.to_string();
        if !text.contains(&line) {
            text.push(line);
        }
        if kind.is_none() {
            kind = classify_one(e, timeout);
        }
        // `io::Error::source` skips the error it wraps; look at the wrapped error itself too.
        if let Some(io_err) = e.downcast_ref::<io::Error>()
            && let Some(inner) = io_err.get_ref()
        {
            if kind.is_none() {
                kind = classify_one(inner, timeout);
            }
            let line = inner.to_string();
            if !text.contains(&line) {
                text.push(line);
            }
        }
        current = e.source();
    }
    let detail = text.join(": ");
    let kind = kind.unwrap_or_else(|| classify_text(&detail, timeout));
    (kind, detail)
}

fn classify_one(e: &(dyn StdError + 'static), timeout: Duration) -> Option<ErrorKind> {
    if let Some(tls) = e.downcast_ref::<rustls::Error>() {
        return Some(match tls {
            rustls::Error::InvalidCertificate(cert) => match cert {
                rustls::CertificateError::UnknownIssuer
                | rustls::CertificateError::BadSignature => ErrorKind::TlsUntrusted,
                rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. } => {
                    ErrorKind::TlsNameMismatch
                }
                _ => ErrorKind::Tls,
            },
            _ => ErrorKind::Tls,
        });
    }
    if let Some(io_err) = e.downcast_ref::<io::Error>() {
        return match io_err.kind() {
            io::ErrorKind::ConnectionRefused => Some(ErrorKind::Refused),
            io::ErrorKind::TimedOut => Some(ErrorKind::TimedOut(timeout)),
            _ => None,
        };
    }
    None
}

fn classify_text(text: &str, timeout: Duration) -> ErrorKind {
    let t = text.to_ascii_lowercase();
    if t.contains("unknownissuer") || t.contains("unknown issuer") {
        ErrorKind::TlsUntrusted
    } else if t.contains("notvalidforname") || t.contains("not valid for name") {
        ErrorKind::TlsNameMismatch
    } else if t.contains("certificate") || t.contains("tls") || t.contains("handshake") {
        ErrorKind::Tls
    } else if t.contains("connection refused") {
        ErrorKind::Refused
    } else if t.contains("timed out") || t.contains("timeout") {
        ErrorKind::TimedOut(timeout)
    } else {
        ErrorKind::Connection
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
