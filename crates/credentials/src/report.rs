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

/// Both device files read and checked: the parsed files, the cross-file check and every finding
/// (parse first, then the check), in the order `snowctl credentials check` reports them.
#[derive(Debug)]
pub struct Checked {
    /// The credentials INI.
    pub credentials: CredentialsFile,
    /// The CA bundle.
    pub bundle: CaBundle,
    /// The device-by-device check.
    pub report: CheckReport,
    /// Every finding of both files and the check.
    pub findings: Vec<snow_api::Finding>,
}

impl Checked {
    /// Reads and checks both files at `now`; when either cannot be read at all, every such
    /// error (both files' when both fail), each with the file's kind (`credentials`,
    /// `ca-bundle`: the prefix of its finding's check).
    pub fn load(
        credentials: &std::path::Path,
        ca_bundle: &std::path::Path,
        now: rustls_pki_types::UnixTime,
    ) -> Result<Checked, Vec<(&'static str, crate::InputError)>> {
        match (
            crate::load_credentials(credentials),
            crate::load_ca_bundle(ca_bundle),
        ) {
            (Ok((credentials, mut findings)), Ok((bundle, more))) => {
                findings.extend(more);
                let report = crate::check(&credentials, &bundle, now);
                findings.extend(report.findings.iter().cloned());
                Ok(Checked {
                    credentials,
                    bundle,
                    report,
                    findings,
                })
            }
            (c, b) => Err((c.err().map(|e| ("credentials", e)).into_iter())
                .chain(b.err().map(|e| ("ca-bundle", e)))
                .collect()),
        }
    }

    /// The findings of each file as text, each with its own source lines (the credentials file's
    /// redacted view, so no key is ever shown), in line order; findings about neither file last.
    pub fn findings_text(&self) -> String {
        let (c, b) = (self.credentials.source(), self.bundle.source());
        let of = |keep: &dyn Fn(Option<&str>) -> bool| {
            let mut found: Vec<_> = self
                .findings
                .iter()
                .filter(|f| keep(f.object.as_deref()))
                .cloned()
                .collect();
            // Findings without a line first: they concern the whole file.
            found.sort_by_key(|f| f.line);
            found
        };
        let text = snow_api::finding_text::text;
        let mut out = text(
            &of(&|o| o == Some(c)),
            c,
            Some(self.credentials.redacted_text()),
            &[],
        );
        out.push_str(&text(
            &of(&|o| o == Some(b)),
            b,
            Some(self.bundle.display_text()),
            &[],
        ));
        let others = of(&|o| o != Some(c) && o != Some(b));
        if !others.is_empty() {
            out.push_str(&text(&others, "(other)", None, &[]));
        }
        out
    }

    /// The `credentials check` structured report: findings, both sources, devices and
    /// certificates.
    pub fn to_json(&self) -> serde_json::Value {
        let mut extra = serde_json::Map::new();
        extra.insert("credentials".into(), self.credentials.source().into());
        extra.insert("caBundle".into(), self.bundle.source().into());
        extra.insert(
            "devices".into(),
            serde_json::to_value(&self.report.devices).unwrap_or_default(),
        );
        extra.insert(
            "certificates".into(),
            serde_json::to_value(self.bundle.certificates()).unwrap_or_default(),
        );
        snow_api::finding_text::report(&self.findings, extra)
    }

    /// The `credentials check` text report: the device table, then the findings.
    pub fn to_text(&self) -> String {
        let mut out = if self.report.devices.is_empty() {
            "no device profiles\n".to_owned()
        } else {
            self.report.device_table()
        };
        out.push('\n');
        out.push_str(&self.findings_text());
        out
    }
}
