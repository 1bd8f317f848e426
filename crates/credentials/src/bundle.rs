//! The CA bundle: one PEM file with the certificate of every device.
//!
//! The block structure (BEGIN/END lines, junk between and inside blocks) is scanned here so every
//! finding has a line; each block's base64 is decoded by `rustls-pki-types` (`PemObject`) and
//! each certificate is inspected with `x509-parser`. Never panics.

use crate::limits::{MAX_CERTIFICATES, MAX_FINDINGS_PER_CHECK};
use rustls_pki_types::pem::{PemObject, SectionKind};
use rustls_pki_types::{CertificateDer, UnixTime};
use snow_api::{DeviceIp, Finding, Location, finding::cap_per_check};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use x509_parser::prelude::{FromDer, GeneralName, ParsedExtension, X509Certificate};

/// The public-key algorithm of a certificate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyAlgorithm {
    /// RSA.
    Rsa,
    /// ECDSA (any curve).
    Ecdsa,
    /// Ed25519.
    Ed25519,
    /// Something else, by OID.
    Other(String),
}

/// How a certificate names the devices it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// IP addresses in the subject alternative names.
    IpSan,
    /// No IP SAN: the subject common name is an IP address.
    CommonName,
    /// Neither: the certificate names no IP address.
    None,
}

/// Unix seconds as [`format_utc`] writes them.
fn utc_text<S: serde::Serializer>(seconds: &i64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format_utc(*seconds))
}

/// One certificate of the bundle, inspected.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleCertificate {
    /// 1-based number of the PEM block in the file.
    pub block: usize,
    /// 1-based line of the block's BEGIN line.
    pub line: usize,
    /// The subject, as `CN=…, O=…`.
    pub subject: String,
    /// The serial number, as colon-separated hex bytes.
    pub serial: String,
    /// Start of validity, Unix seconds (serialized as UTC text).
    #[serde(serialize_with = "utc_text")]
    pub not_before: i64,
    /// End of validity, Unix seconds (serialized as UTC text).
    #[serde(serialize_with = "utc_text")]
    pub not_after: i64,
    /// The public-key algorithm.
    pub key_algorithm: KeyAlgorithm,
    /// How the covered devices were found.
    pub coverage: Coverage,
    /// The IP addresses the certificate covers.
    pub covers: Vec<DeviceIp>,
    /// The DER bytes (for a TLS root store).
    #[serde(skip)]
    pub der: CertificateDer<'static>,
}

/// A parsed CA bundle.
#[derive(Debug, Clone)]
pub struct CaBundle {
    source: String,
    content: Vec<u8>,
    certificates: Vec<BundleCertificate>,
    shown: String,
    /// Why the bundle holds no certificate: the first error found reading it.
    problem: Option<String>,
}

impl CaBundle {
    /// Parses a PEM bundle. `source` names it in findings. Structural findings only; expiry and
    /// coverage are judged by [`crate::check`], which knows the time and the devices.
    pub fn parse(source: impl Into<String>, bytes: Vec<u8>) -> (CaBundle, Vec<Finding>) {
        let source = source.into();
        let mut scan = Scan {
            source: &source,
            findings: Vec::new(),
            certificates: Vec::new(),
            shown: Vec::new(),
            blocks: 0,
            over_limit: false,
        };
        scan.run(&bytes);
        let Scan {
            mut findings,
            certificates,
            shown,
            ..
        } = scan;
        findings.sort_by_key(|f| f.line);
        let findings = cap_per_check(findings, MAX_FINDINGS_PER_CHECK);
        let problem = certificates
            .is_empty()
            .then(|| findings.iter().find(|f| f.is_error()))
            .flatten()
            .map(|f| f.message.clone());
        let bundle = CaBundle {
            source,
            content: bytes,
            certificates,
            shown: shown.join("\n"),
            problem,
        };
        (bundle, findings)
    }

    /// Why the bundle holds no usable certificate (the first error found reading it), when it
    /// holds none.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The same bundle with `problem` as the reason it holds no certificate (a file refused
    /// before parsing, e.g. for its size).
    pub(crate) fn with_problem(mut self, problem: String) -> Self {
        self.problem = Some(problem);
        self
    }

    /// The name the bundle was parsed under.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The certificates that parsed, in file order.
    pub fn certificates(&self) -> &[BundleCertificate] {
        &self.certificates
    }

    /// The certificates as DER, for a TLS root store.
    pub fn certificates_der(&self) -> Vec<CertificateDer<'static>> {
        self.certificates.iter().map(|c| c.der.clone()).collect()
    }

    /// The certificates that cover a device.
    pub fn covering(&self, device: DeviceIp) -> impl Iterator<Item = &BundleCertificate> {
        self.certificates
            .iter()
            .filter(move |c| c.covers.contains(&device))
    }

    /// The file's bytes, exactly as read.
    pub fn content(&self) -> &[u8] {
        &self.content
    }

    /// The file's lines for display next to findings, line for line: BEGIN/END lines and
    /// certificate bodies as they are, every other line (text outside blocks, the body of a
    /// private key or of an unknown block) replaced by `<redacted>`.
    pub fn display_text(&self) -> &str {
        &self.shown
    }
}

struct Scan<'a> {
    source: &'a str,
    findings: Vec<Finding>,
    certificates: Vec<BundleCertificate>,
    shown: Vec<String>,
    blocks: usize,
    /// [`MAX_CERTIFICATES`] was passed (and said once).
    over_limit: bool,
}

/// A PEM block being read.
struct Block {
    number: usize,
    begin_line: usize,
    begin_column: usize,
    label: String,
    body: Vec<String>,
    /// The first body line with a character that is not base64, and its column.
    junk: Option<(usize, usize)>,
}

const EXPECTED_PEM: &str = "the bundle should be PEM certificates, one `-----BEGIN CERTIFICATE-----` … \
     `-----END CERTIFICATE-----` block per device";

impl Scan<'_> {
    fn finding(&mut self, finding: Finding, line: usize, column: usize) {
        self.findings
            .push(finding.object(self.source).at(Location { line, column }));
    }

    fn run(&mut self, bytes: &[u8]) {
        if bytes.first() == Some(&0x30) && bytes.get(1).is_some_and(|b| *b >= 0x80) {
            self.finding(
                Finding::error(
                    "ca-bundle.der-not-pem",
                    "the file is a binary (DER) certificate, not a PEM bundle",
                )
                .hint("convert it: `openssl x509 -inform der -in FILE -out FILE.pem`"),
                1,
                1,
            );
            self.no_certificate_check();
            return;
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut block: Option<Block> = None;
        let mut junk: Option<(usize, usize, usize)> = None; // first line, column, last line
        let mut number = 0usize;
        let mut lines = bytes.split(|b| *b == b'\n').peekable();
        while let Some(raw) = lines.next() {
            number += 1;
            if raw.is_empty() && lines.peek().is_none() {
                break;
            }
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.contains(&0) {
                self.shown.push("<binary>".into());
                self.finding(
                    Finding::error(
                        "ca-bundle.not-text",
                        format!("line {number} is binary data; the rest of the file is not read"),
                    )
                    .hint(EXPECTED_PEM),
                    number,
                    1,
                );
                if let Some(open) = block.take() {
                    self.missing_end(&open, None);
                }
                junk = None;
                break;
            }
            let text = String::from_utf8_lossy(raw);
            let trimmed = text.trim();
            let indent = text.len() - text.trim_start().len();
            let column = text.get(..indent).map_or(1, |s| s.chars().count() + 1);
            // Shown next to findings: markers and certificate bodies only. Text outside blocks
            // and the bodies of other blocks may be anything (a pasted key, the credentials
            // file given as the bundle by mistake), so it is never shown.
            let in_certificate = block.as_ref().is_some_and(|b| b.label == "CERTIFICATE");
            if trimmed.is_empty() || trimmed.starts_with("-----") || in_certificate {
                self.shown.push(text.clone().into_owned());
            } else {
                self.shown.push(format!(
                    "{}{}",
                    text.get(..indent).unwrap_or_default(),
                    crate::secret::REDACTED
                ));
            }

            if let Some(label) = marker(trimmed, "-----BEGIN ") {
                if let Some((first, col, last)) = junk.take() {
                    self.junk_between(first, col, last);
                }
                if let Some(open) = block.take() {
                    self.missing_end(&open, Some(number));
                }
                self.blocks += 1;
                block = Some(Block {
                    number: self.blocks,
                    begin_line: number,
                    begin_column: column,
                    label: label.to_owned(),
                    body: Vec::new(),
                    junk: None,
                });
                if (!trimmed.ends_with("-----") || label.is_empty())
                    && let Some(open) = block.as_mut()
                {
                    open.junk.get_or_insert((number, column));
                }
                continue;
            }
            if let Some(label) = marker(trimmed, "-----END ") {
                match block.take() {
                    Some(open) => self.close(open, label, number, column),
                    None => {
                        self.finding(
                            Finding::error(
                                "ca-bundle.missing-begin",
                                format!("an END line at line {number} has no BEGIN line before it"),
                            )
                            .hint("the certificate above it is cut: copy the whole block, from its BEGIN line to its END line"),
                            number,
                            column,
                        );
                    }
                }
                continue;
            }
            match block.as_mut() {
                Some(open) => {
                    if trimmed.is_empty() {
                        continue;
                    }
                    if open.junk.is_none()
                        && let Some(bad) = trimmed.find(|c: char| !is_base64_char(c))
                    {
                        let col = column + trimmed.get(..bad).map_or(0, |s| s.chars().count());
                        open.junk = Some((number, col));
                    }
                    open.body.push(trimmed.to_owned());
                }
                None if trimmed.is_empty() => {}
                None => match junk.as_mut() {
                    Some((_, _, last)) => *last = number,
                    None => junk = Some((number, column, number)),
                },
            }
        }
        if let Some(open) = block.take() {
            self.missing_end(&open, None);
        }
        if let Some((first, col, last)) = junk.take() {
            self.junk_between(first, col, last);
        }
        self.no_certificate_check();
    }

    fn no_certificate_check(&mut self) {
        if self.certificates.is_empty() && !crate::has_check(&self.findings, "ca-bundle.not-text") {
            let message = if self.blocks == 0 {
                "the bundle has no PEM block at all".to_owned()
            } else {
                "the bundle has no valid certificate".to_owned()
            };
            self.finding(
                Finding::error("ca-bundle.no-certificate", message).hint(EXPECTED_PEM),
                1,
                1,
            );
        }
    }

    fn junk_between(&mut self, first: usize, column: usize, last: usize) {
        let lines = if first == last {
            format!("line {first}")
        } else {
            format!("lines {first}–{last}")
        };
        self.finding(
            Finding::warning(
                "ca-bundle.text-outside-blocks",
                format!("{lines}: text outside any PEM block is ignored"),
            )
            .hint("remove it, so that the bundle holds only the certificate blocks"),
            first,
            column,
        );
    }

    fn missing_end(&mut self, open: &Block, next_begin: Option<usize>) {
        let label = shown_label(&open.label);
        let message = match next_begin {
            Some(next) => format!(
                "PEM block #{} (`{label}`, line {}) has no END line before the next BEGIN at line {next}",
                open.number, open.begin_line
            ),
            None => format!(
                "PEM block #{} (`{label}`, line {}) has no END line: the file ends inside it",
                open.number, open.begin_line
            ),
        };
        self.finding(
            Finding::error("ca-bundle.missing-end", message).hint(format!(
                "the block is cut: copy the whole certificate, ending with `-----END {label}-----`"
            )),
            open.begin_line,
            open.begin_column,
        );
    }

    fn close(&mut self, open: Block, end_label: &str, end_line: usize, end_column: usize) {
        let label = shown_label(&open.label);
        let name = format!(
            "PEM block #{} (`{label}`, lines {}–{end_line})",
            open.number, open.begin_line
        );
        if end_label != open.label {
            self.finding(
                Finding::error(
                    "ca-bundle.invalid-block",
                    format!(
                        "{name} ends with `-----END {}-----`",
                        shown_label(end_label)
                    ),
                )
                .hint(format!("end the block with `-----END {label}-----`")),
                end_line,
                end_column,
            );
            return;
        }
        if let Some((line, column)) = open.junk {
            self.finding(
                Finding::error(
                    "ca-bundle.invalid-block",
                    format!("{name} has text that is not base64 at line {line}"),
                )
                .hint("copy the certificate again; a PEM block holds only base64 lines between its BEGIN and END lines"),
                line,
                column,
            );
            return;
        }
        let mut pem = format!("-----BEGIN {}-----\n", open.label);
        for line in &open.body {
            pem.push_str(line);
            pem.push('\n');
        }
        pem.push_str(&format!("-----END {}-----\n", open.label));
        let at = (open.begin_line, open.begin_column);
        match <(SectionKind, Vec<u8>)>::from_pem_slice(pem.as_bytes()) {
            Ok((SectionKind::Certificate, der)) => self.certificate(&name, open.number, at, der),
            Ok((
                SectionKind::PrivateKey | SectionKind::RsaPrivateKey | SectionKind::EcPrivateKey,
                _,
            )) => {
                self.finding(
                    Finding::error(
                        "ca-bundle.private-key",
                        format!("{name} is a private key; a CA bundle holds certificates only, and it is copied into Secrets and clusterctl variables"),
                    )
                    .hint("remove the private key from the bundle, and treat it as leaked if the file was shared"),
                    at.0,
                    at.1,
                );
            }
            Ok(_) | Err(rustls_pki_types::pem::Error::NoItemsFound) => {
                self.finding(
                    Finding::warning(
                        "ca-bundle.not-a-certificate",
                        format!("{name} is not a certificate; it is ignored"),
                    )
                    .hint("remove it: the bundle should hold only `CERTIFICATE` blocks"),
                    at.0,
                    at.1,
                );
            }
            Err(err) => {
                let what = match err {
                    rustls_pki_types::pem::Error::Base64Decode(_) => {
                        "its base64 text does not decode".to_owned()
                    }
                    other => other.to_string(),
                };
                self.finding(
                    Finding::error("ca-bundle.invalid-block", format!("{name}: {what}"))
                        .hint("copy the certificate again; a line may be cut or doubled"),
                    at.0,
                    at.1,
                );
            }
        }
    }

    fn certificate(&mut self, name: &str, number: usize, at: (usize, usize), der: Vec<u8>) {
        // A bundle holds one certificate per device (a few more for chains): past the bound it is
        // not a device bundle, and reading on would only cost time.
        if self.certificates.len() >= MAX_CERTIFICATES {
            if !self.over_limit {
                self.finding(
                    Finding::error(
                        "ca-bundle.too-many-certificates",
                        format!(
                            "{name} is past the {MAX_CERTIFICATES} certificates snowctl reads from one bundle; it and the rest are not read"
                        ),
                    )
                    .hint("a Snow CA bundle holds one certificate per device: remove the copies and unrelated certificates"),
                    at.0,
                    at.1,
                );
                // Counted once: the bound is reported, not every block past it.
                self.over_limit = true;
            }
            return;
        }
        let parsed = X509Certificate::from_der(&der);
        let (rest, cert) = match parsed {
            Ok(ok) => ok,
            Err(err) => {
                self.finding(
                    Finding::error(
                        "ca-bundle.invalid-certificate",
                        format!("{name} is not a valid X.509 certificate: {err}"),
                    )
                    .hint("get the device's certificate again (`snowballEdge get-certificate`) and replace this block"),
                    at.0,
                    at.1,
                );
                return;
            }
        };
        let mut findings = Vec::new();
        if !rest.is_empty() {
            findings.push(
                Finding::error(
                    "ca-bundle.invalid-certificate",
                    format!(
                        "{name} has {} bytes of trailing data after the certificate",
                        rest.len()
                    ),
                )
                .hint("get the device's certificate again and replace this block"),
            );
        }
        let tbs = &cert.tbs_certificate;
        let raw_serial = tbs.raw_serial();
        if raw_serial.first().is_none_or(|b| b & 0x80 != 0) {
            findings.push(
                Finding::error(
                    "ca-bundle.negative-serial",
                    format!("{name} has a negative or empty serial number; Go TLS clients (EKS-A, CAPAS) refuse to load it"),
                )
                .hint("re-issue the certificate with a positive serial number, or get the device's current certificate"),
            );
        }
        for ext in tbs.extensions() {
            if !ext.critical {
                continue;
            }
            match ext.parsed_extension() {
                ParsedExtension::UnsupportedExtension { .. } => findings.push(
                    Finding::error(
                        "ca-bundle.unknown-critical-extension",
                        format!("{name} has a critical extension {} that TLS clients do not know; they reject the certificate", ext.oid),
                    )
                    .hint("use a certificate without unknown critical extensions (the device's own certificate has none)"),
                ),
                ParsedExtension::ParseError { .. } => findings.push(
                    Finding::error(
                        "ca-bundle.invalid-certificate",
                        format!("{name} has a critical extension {} that does not parse", ext.oid),
                    )
                    .hint("get the device's certificate again and replace this block"),
                ),
                _ => {}
            }
        }

        let mut covers: Vec<DeviceIp> = Vec::new();
        match tbs.subject_alternative_name() {
            Ok(Some(san)) => {
                for general in &san.value.general_names {
                    if let GeneralName::IPAddress(bytes) = general
                        && let Some(ip) = ip_from_bytes(bytes)
                        && !covers.contains(&ip)
                    {
                        covers.push(ip);
                    }
                }
            }
            Ok(None) => {}
            Err(err) => findings.push(
                Finding::error(
                    "ca-bundle.invalid-certificate",
                    format!("{name}: its subject alternative names do not parse: {err}"),
                )
                .hint("get the device's certificate again and replace this block"),
            ),
        }
        let coverage = if !covers.is_empty() {
            Coverage::IpSan
        } else if let Some(ip) = tbs
            .subject()
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .and_then(|cn| cn.trim().parse::<IpAddr>().ok())
        {
            covers.push(DeviceIp::from(ip));
            Coverage::CommonName
        } else {
            Coverage::None
        };

        let oid = &tbs.subject_pki.algorithm.algorithm;
        let key_algorithm = if *oid == x509_parser::oid_registry::OID_PKCS1_RSAENCRYPTION {
            KeyAlgorithm::Rsa
        } else if *oid == x509_parser::oid_registry::OID_KEY_TYPE_EC_PUBLIC_KEY {
            KeyAlgorithm::Ecdsa
        } else if *oid == x509_parser::oid_registry::OID_SIG_ED25519 {
            KeyAlgorithm::Ed25519
        } else {
            KeyAlgorithm::Other(oid.to_id_string())
        };
        let validity = tbs.validity();
        let certificate = BundleCertificate {
            block: number,
            line: at.0,
            subject: tbs.subject().to_string(),
            serial: tbs.raw_serial_as_string(),
            not_before: validity.not_before.timestamp(),
            not_after: validity.not_after.timestamp(),
            key_algorithm,
            coverage,
            covers,
            der: CertificateDer::from(der.clone()),
        };
        if let Some(same) = self.certificates.iter().find(|c| c.der == certificate.der) {
            findings.push(
                Finding::warning(
                    "ca-bundle.duplicate-certificate",
                    format!(
                        "{name} is the same certificate as block #{} (line {})",
                        same.block, same.line
                    ),
                )
                .hint("remove one of the two copies"),
            );
        }
        for f in findings {
            self.finding(f, at.0, at.1);
        }
        self.certificates.push(certificate);
    }
}

/// The label of a `-----BEGIN X-----` / `-----END X-----` line, when the line is one.
fn marker<'t>(line: &'t str, prefix: &str) -> Option<&'t str> {
    let rest = line.strip_prefix(prefix)?;
    Some(rest.trim_end().trim_end_matches('-').trim())
}

/// A label safe to print: printable ASCII, at most 40 characters.
fn shown_label(label: &str) -> String {
    let shown: String = label
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    shown
}

fn is_base64_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '=' || c == ' ' || c == '\t'
}

fn ip_from_bytes(bytes: &[u8]) -> Option<DeviceIp> {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        return Some(DeviceIp::from(IpAddr::V4(Ipv4Addr::from(v4))));
    }
    if let Ok(v6) = <[u8; 16]>::try_from(bytes) {
        return Some(DeviceIp::from(IpAddr::V6(Ipv6Addr::from(v6))));
    }
    None
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (UTC), for messages and reports.
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// The current time in Unix seconds.
pub fn now_secs(now: UnixTime) -> i64 {
    i64::try_from(now.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_dates() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(1_765_843_200), "2025-12-16T00:00:00Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn junk_only_and_empty_files() {
        for text in ["", "hello\nworld\n", "\n\n"] {
            let (bundle, findings) = CaBundle::parse("ca.pem", text.as_bytes().to_vec());
            assert!(bundle.certificates().is_empty());
            assert!(
                crate::has_check(&findings, "ca-bundle.no-certificate"),
                "{text:?}: {findings:?}"
            );
        }
    }

    #[test]
    fn unterminated_and_mismatched_blocks() {
        let text = "-----BEGIN CERTIFICATE-----\nMIIB\n";
        let (_, findings) = CaBundle::parse("ca.pem", text.as_bytes().to_vec());
        assert!(crate::has_check(&findings, "ca-bundle.missing-end"));
        let text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CRL-----\n";
        let (_, findings) = CaBundle::parse("ca.pem", text.as_bytes().to_vec());
        assert!(crate::has_check(&findings, "ca-bundle.invalid-block"));
        let text = "-----BEGIN CERTIFICATE-----\nMI*IB\n-----END CERTIFICATE-----\n";
        let (_, findings) = CaBundle::parse("ca.pem", text.as_bytes().to_vec());
        let f = findings
            .iter()
            .find(|f| f.check == "ca-bundle.invalid-block")
            .unwrap();
        assert_eq!((f.line, f.column), (Some(2), Some(3)));
        assert!(f.message.contains("block #1"));
        let text = "-----END CERTIFICATE-----\n";
        let (_, findings) = CaBundle::parse("ca.pem", text.as_bytes().to_vec());
        assert!(crate::has_check(&findings, "ca-bundle.missing-begin"));
    }

    #[test]
    fn der_and_binary_files() {
        let (_, findings) = CaBundle::parse("ca.der", vec![0x30, 0x82, 0x01, 0x00, 0x00]);
        assert!(crate::has_check(&findings, "ca-bundle.der-not-pem"));
        let (_, findings) = CaBundle::parse("ca.bin", vec![b'x', 0, 1, 2]);
        assert!(crate::has_check(&findings, "ca-bundle.not-text"));
    }
}
