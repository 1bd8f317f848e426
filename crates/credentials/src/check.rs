//! The checks across both files: certificate validity and device coverage.

use crate::bundle::{BundleCertificate, CaBundle, Coverage, format_utc, now_secs};
use crate::ini::CredentialsFile;
use crate::limits::{MAX_DEVICES_LISTED, MAX_FINDINGS_PER_CHECK};
use rustls_pki_types::UnixTime;
use serde::Serialize;
use snow_api::{DeviceIp, Finding, Location, finding::cap_per_check};

/// A certificate expiring within this many days gets a warning.
pub const EXPIRY_WARNING_DAYS: i64 = 30;

/// One row of the per-device table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceStatus {
    /// The device IP.
    pub device: DeviceIp,
    /// The line of the device's profile header.
    pub line: usize,
    /// Whether `aws_access_key_id` is present and non-empty.
    pub access_key_id: bool,
    /// Whether `aws_secret_access_key` is present and non-empty.
    pub secret_access_key: bool,
    /// The region, when present and printable (never a secret-looking value).
    pub region: Option<String>,
    /// The PEM block number of the certificate covering the device (the latest-expiring one).
    pub certificate: Option<usize>,
    /// The line of that certificate's BEGIN line.
    pub certificate_line: Option<usize>,
    /// When that certificate expires, `YYYY-MM-DDTHH:MM:SSZ`.
    pub expires: Option<String>,
    /// Whether a certificate that is valid now covers the device.
    pub covered: bool,
}

/// The per-device table and the cross-file findings.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// One row per device of the credentials file, in file order.
    pub devices: Vec<DeviceStatus>,
    /// Findings about certificate validity and device coverage (the parse findings of each
    /// file come from [`CredentialsFile::parse`] and [`CaBundle::parse`]).
    pub findings: Vec<Finding>,
}

/// Judges the bundle's certificates at `now` and matches them with the devices: every device
/// needs a certificate that covers it, and every certificate should cover some device.
pub fn check(credentials: &CredentialsFile, bundle: &CaBundle, now: UnixTime) -> CheckReport {
    let now = now_secs(now);
    let mut findings = Vec::new();
    let source = bundle.source();

    for cert in bundle.certificates() {
        let at = Location {
            line: cert.line,
            column: 1,
        };
        let name = describe(cert);
        if cert.not_after < now {
            findings.push(
                Finding::error(
                    "ca-bundle.expired",
                    format!("{name} expired on {}", format_utc(cert.not_after)),
                )
                .object(source)
                .hint(renew_hint(cert))
                .at(at),
            );
        } else if cert.not_before > now {
            findings.push(
                Finding::error(
                    "ca-bundle.not-yet-valid",
                    format!(
                        "{name} is not valid before {}; TLS clients reject it until then",
                        format_utc(cert.not_before)
                    ),
                )
                .object(source)
                .hint("check this machine's clock, or get the device's current certificate")
                .at(at),
            );
        } else if cert.not_after - now < EXPIRY_WARNING_DAYS * 86_400 {
            let days = (cert.not_after - now) / 86_400;
            findings.push(
                Finding::warning(
                    "ca-bundle.expiring",
                    format!(
                        "{name} expires on {}, in {days} day(s)",
                        format_utc(cert.not_after)
                    ),
                )
                .object(source)
                .hint(renew_hint(cert))
                .at(at),
            );
        }
        match cert.coverage {
            Coverage::None => findings.push(
                Finding::warning(
                    "ca-bundle.no-ip",
                    format!("{name} names no IP address (no IP SAN, and the CN is not an IP), so it covers no device"),
                )
                .object(source)
                .hint("a Snow device certificate names the device IP; remove this certificate if no device needs it")
                .at(at),
            ),
            Coverage::CommonName => findings.push(
                Finding::warning(
                    "ca-bundle.cn-only",
                    format!(
                        "{name} names its device only in the subject CN; Go and rustls TLS clients match an IP address against IP SANs only"
                    ),
                )
                .object(source)
                .hint("use the device's own certificate, which has the device IP as an IP SAN")
                .at(at),
            ),
            Coverage::IpSan => {}
        }
        if cert.coverage != Coverage::None
            && !cert
                .covers
                .iter()
                .any(|ip| credentials.device(*ip).is_some())
        {
            findings.push(
                Finding::warning(
                    "ca-bundle.unused-certificate",
                    format!("{name} covers no device of {}", credentials.source()),
                )
                .object(source)
                .hint(format!(
                    "remove it, or add the device's profile to {}",
                    credentials.source()
                ))
                .at(at),
            );
        }
    }

    // A bundle without any certificate covers no device: one finding, its cause first.
    let unusable = bundle.certificates().is_empty();
    if unusable && let Some(first) = credentials.devices().first() {
        findings.push(unusable_bundle(credentials, bundle).at(Location {
            line: first.line(),
            column: 1,
        }));
    }
    let mut devices = Vec::new();
    for device in credentials.devices() {
        let ip = device.ip();
        let covering: Vec<&BundleCertificate> = bundle.covering(ip).collect();
        let best = covering.iter().copied().max_by_key(|c| c.not_after);
        let valid = covering
            .iter()
            .any(|c| c.not_before <= now && now <= c.not_after);
        if covering.is_empty() && !unusable {
            findings.push(
                Finding::error(
                    "ca-bundle.device-not-covered",
                    format!("no certificate in {source} covers device {ip}; TLS to the device will fail"),
                )
                .object(credentials.source())
                .device(ip.to_string())
                .hint(format!(
                    "add the certificate of device {ip} to {source} (`snowballEdge list-certificates`, then `snowballEdge get-certificate --certificate-arn …`)"
                ))
                .at(Location { line: device.line(), column: 1 }),
            );
        }
        let region = device.region().map(|r| {
            if r.len() <= 40
                && r.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                r.to_owned()
            } else {
                crate::secret::REDACTED.to_owned()
            }
        });
        devices.push(DeviceStatus {
            device: ip,
            line: device.line(),
            access_key_id: device.has_access_key_id(),
            secret_access_key: device.has_secret_access_key(),
            region,
            certificate: best.map(|c| c.block),
            certificate_line: best.map(|c| c.line),
            expires: best.map(|c| format_utc(c.not_after)),
            covered: valid,
        });
    }
    CheckReport {
        devices,
        findings: cap_per_check(findings, MAX_FINDINGS_PER_CHECK),
    }
}

/// The finding for a bundle with no certificate at all: why first (the first error reading it),
/// then what it means for the devices.
fn unusable_bundle(credentials: &CredentialsFile, bundle: &CaBundle) -> Finding {
    let source = bundle.source();
    let cause = bundle
        .problem()
        .unwrap_or("the bundle has no certificate")
        .to_owned();
    let ips: Vec<String> = credentials
        .devices()
        .iter()
        .map(|d| d.ip().to_string())
        .collect();
    let mut listed = ips
        .iter()
        .take(MAX_DEVICES_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ips.len() > MAX_DEVICES_LISTED {
        listed.push_str(&format!(" … and {} more", ips.len() - MAX_DEVICES_LISTED));
    }
    Finding::error(
        "ca-bundle.device-not-covered",
        format!(
            "{source}: {cause}; so no certificate covers device(s) {listed}, and TLS to them will fail"
        ),
    )
    .object(credentials.source())
    .hint(format!(
        "fix {source} first: it should hold each device's certificate (`snowballEdge list-certificates`, then `snowballEdge get-certificate --certificate-arn …`)"
    ))
}

fn describe(cert: &BundleCertificate) -> String {
    let covers = if cert.covers.is_empty() {
        String::new()
    } else {
        let ips: Vec<String> = cert.covers.iter().map(ToString::to_string).collect();
        format!(" for {}", ips.join(", "))
    };
    format!(
        "the certificate in block #{} (line {}){covers}",
        cert.block, cert.line
    )
}

fn renew_hint(cert: &BundleCertificate) -> String {
    match cert.covers.first() {
        Some(ip) => format!(
            "replace it with device {ip}'s current certificate (`snowballEdge get-certificate`); renew the device certificate if it has expired there too"
        ),
        None => "replace it with the device's current certificate".to_owned(),
    }
}
