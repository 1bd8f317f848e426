//! Text views of the inputs and the check, for people: the device table and a summary of both
//! files. They show presence and certificate facts only, never a key.

use crate::{
    bundle::{CaBundle, format_utc},
    check::{CheckReport, DeviceStatus},
    ini::CredentialsFile,
};
use std::fmt::Write as _;

impl CheckReport {
    /// The devices as an aligned table (`DEVICE KEYS REGION CERTIFICATE EXPIRES COVERED`).
    pub fn device_table(&self) -> String {
        device_table(&self.devices)
    }
}

/// What was read: the profiles of the credentials file and every certificate of the bundle, one
/// line each.
pub fn inputs_summary(c: &CredentialsFile, b: &CaBundle) -> String {
    let ips: Vec<String> = c.devices().iter().map(|d| d.ip().to_string()).collect();
    let mut out = format!(
        "credentials: {} ({} bytes): {} device profile(s): {}\n",
        c.source(),
        c.len(),
        ips.len(),
        ips.join(", ")
    );
    let _ = writeln!(
        out,
        "CA bundle: {} ({} bytes): {} certificate(s)",
        b.source(),
        b.content().len(),
        b.certificates().len()
    );
    for cert in b.certificates() {
        let covers: Vec<String> = cert.covers.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "  block #{} (line {}): {}; {:?} key; serial {}; valid {} to {}; covers [{}] ({:?})",
            cert.block,
            cert.line,
            cert.subject,
            cert.key_algorithm,
            cert.serial,
            format_utc(cert.not_before),
            format_utc(cert.not_after),
            covers.join(", "),
            cert.coverage
        );
    }
    out
}

fn keys_cell(d: &DeviceStatus) -> &'static str {
    match (d.access_key_id, d.secret_access_key) {
        (true, true) => "ok",
        (false, true) => "no access key",
        (true, false) => "no secret key",
        (false, false) => "no keys",
    }
}

/// The device table of `snowctl credentials check`: keys, region, certificate, expiry and
/// coverage per device, in aligned columns.
pub(crate) fn device_table(devices: &[DeviceStatus]) -> String {
    let header = [
        "DEVICE",
        "KEYS",
        "REGION",
        "CERTIFICATE",
        "EXPIRES (UTC)",
        "COVERED",
    ];
    let mut rows: Vec<[String; 6]> = vec![header.map(str::to_owned)];
    for d in devices {
        rows.push([
            d.device.to_string(),
            keys_cell(d).to_owned(),
            d.region.clone().unwrap_or_else(|| "-".into()),
            match (d.certificate, d.certificate_line) {
                (Some(block), Some(line)) => format!("#{block} (line {line})"),
                _ => "none".into(),
            },
            d.expires.clone().unwrap_or_else(|| "-".into()),
            match (d.covered, d.certificate) {
                (true, _) => "yes".into(),
                (false, Some(_)) => "no (not valid now)".into(),
                (false, None) => "no".into(),
            },
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}
