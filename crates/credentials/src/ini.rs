//! The AWS credentials INI file: one profile per Snow device, named by the device IP.
//!
//! Our own parser, because every finding needs a line and column, and because it has to be
//! tolerant where EKS Anywhere is not (a header with a trailing space, a BOM, CRLF) while
//! refusing what CAPAS would misread. It never panics and never puts a secret into a finding.

use crate::limits::{MAX_ACCESS_KEY_ID_CHARS, MAX_FINDINGS_PER_CHECK, MAX_SECRET_ACCESS_KEY_CHARS};
use crate::provider::DeviceCredentialsProvider;
use crate::secret::{SecretBytes, SecretString};
use snow_api::{DeviceIp, Finding, Location, Severity, finding::cap_per_check};
use std::net::IpAddr;

/// The region every Snow device profile should name.
pub const SNOW_REGION: &str = "snow";

/// The profile of one device: its keys (secret) and region.
#[derive(Debug, Clone)]
pub struct DeviceCredentials {
    ip: DeviceIp,
    line: usize,
    access_key_id: Option<SecretString>,
    secret_access_key: Option<SecretString>,
    region: Option<String>,
}

impl DeviceCredentials {
    /// The device IP (the profile name).
    pub fn ip(&self) -> DeviceIp {
        self.ip
    }

    /// The 1-based line of the profile header.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Whether a non-empty `aws_access_key_id` is present.
    pub fn has_access_key_id(&self) -> bool {
        self.access_key_id.as_ref().is_some_and(|k| !k.is_blank())
    }

    /// Whether a non-empty `aws_secret_access_key` is present.
    pub fn has_secret_access_key(&self) -> bool {
        self.secret_access_key
            .as_ref()
            .is_some_and(|k| !k.is_blank())
    }

    /// The `region` value, when present (not a secret).
    pub fn region(&self) -> Option<&str> {
        self.region.as_deref()
    }

    /// Whether both keys are present, so requests to the device can be signed.
    pub fn is_complete(&self) -> bool {
        self.has_access_key_id() && self.has_secret_access_key()
    }

    /// Whether the profile's `aws_access_key_id` is `id` (to match a key a device lists).
    pub fn access_key_id_is(&self, id: &str) -> bool {
        self.access_key_id
            .as_ref()
            .is_some_and(|k| k.expose_for_signing() == id)
    }

    /// Both keys, when both are present and not blank. Crate-private.
    pub(crate) fn keys(&self) -> Option<(&SecretString, &SecretString)> {
        match (&self.access_key_id, &self.secret_access_key) {
            (Some(access), Some(secret)) if !access.is_blank() && !secret.is_blank() => {
                Some((access, secret))
            }
            _ => None,
        }
    }

    /// The AWS SDK credentials provider for this device, when both keys are present.
    pub fn provider(&self) -> Option<DeviceCredentialsProvider> {
        match (&self.access_key_id, &self.secret_access_key) {
            (Some(access), Some(secret)) if !access.is_blank() && !secret.is_blank() => Some(
                DeviceCredentialsProvider::new(self.ip, access.clone(), secret.clone()),
            ),
            _ => None,
        }
    }
}

/// A parsed credentials file: its devices in file order, and its bytes (secret) for the encoders.
#[derive(Debug, Clone)]
pub struct CredentialsFile {
    source: String,
    content: SecretBytes,
    devices: Vec<DeviceCredentials>,
    redacted: String,
}

impl CredentialsFile {
    /// Parses a credentials file. `source` names it in findings (the path as the user gave it).
    ///
    /// Always returns the file (possibly with no devices) and the findings; never panics. The
    /// bytes are moved in and kept, zeroed on drop, for the encoders.
    pub fn parse(source: impl Into<String>, bytes: Vec<u8>) -> (CredentialsFile, Vec<Finding>) {
        let source = source.into();
        let mut parser = Parser::new(&source);
        parser.run(&bytes);
        let Parser {
            mut findings,
            devices,
            redacted,
            ..
        } = parser;
        // In file order (the per-device findings of the end come at their header's line).
        findings.sort_by_key(|f| f.line);
        let findings = cap_per_check(findings, MAX_FINDINGS_PER_CHECK);
        let file = CredentialsFile {
            source,
            content: SecretBytes::new(bytes),
            devices,
            redacted: redacted.join("\n"),
        };
        (file, findings)
    }

    /// The name the file was parsed under.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The device profiles, in file order (a duplicate section is not repeated).
    pub fn devices(&self) -> &[DeviceCredentials] {
        &self.devices
    }

    /// The profile of one device.
    pub fn device(&self, ip: DeviceIp) -> Option<&DeviceCredentials> {
        self.devices.iter().find(|d| d.ip == ip)
    }

    /// The AWS SDK credentials provider for one device, when its profile has both keys.
    pub fn provider(&self, ip: DeviceIp) -> Option<DeviceCredentialsProvider> {
        self.device(ip).and_then(DeviceCredentials::provider)
    }

    /// The file's lines with every value, comment and unrecognised line replaced by
    /// `<redacted>`, line for line: safe to print next to a finding's position.
    pub fn redacted_text(&self) -> &str {
        &self.redacted
    }

    /// How many bytes the file has.
    pub fn len(&self) -> usize {
        self.content.len()
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.content.is_empty()
    }

    pub(crate) fn content(&self) -> &SecretBytes {
        &self.content
    }
}

/// Where keys on the current line go.
enum Section {
    /// Before any header.
    None,
    /// A device profile: the index into `devices`.
    Device(usize),
    /// A profile that is not a device, or a duplicate: keys are ignored.
    Skipped,
}

struct Parser<'a> {
    source: &'a str,
    findings: Vec<Finding>,
    devices: Vec<DeviceCredentials>,
    redacted: Vec<String>,
    section: Section,
    /// For each device index: the lines of its access key, secret key and region.
    key_lines: Vec<[Option<usize>; 3]>,
}

const EXAMPLE_PROFILE: &str = "[192.168.1.10] then `aws_access_key_id = <key id>`, \
     `aws_secret_access_key = <secret key>` and `region = snow` on their own lines";

impl<'a> Parser<'a> {
    fn new(source: &'a str) -> Self {
        Parser {
            source,
            findings: Vec::new(),
            devices: Vec::new(),
            redacted: Vec::new(),
            section: Section::None,
            key_lines: Vec::new(),
        }
    }

    fn finding(&mut self, finding: Finding, line: usize, column: usize) {
        self.findings
            .push(finding.object(self.source).at(Location { line, column }));
    }

    fn run(&mut self, bytes: &[u8]) {
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            self.finding(
                Finding::error(
                    "credentials.not-text",
                    "the file is UTF-16 text; an AWS credentials file is UTF-8 (or ASCII)",
                )
                .hint("save the file as UTF-8, e.g. `iconv -f UTF-16 -t UTF-8`"),
                1,
                1,
            );
            return;
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut lines = bytes.split(|b| *b == b'\n').peekable();
        let mut number = 0usize;
        while let Some(raw) = lines.next() {
            number += 1;
            // A trailing newline leaves one empty last piece: not a line.
            if raw.is_empty() && lines.peek().is_none() {
                break;
            }
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let text = match std::str::from_utf8(raw) {
                Ok(text) if !text.contains('\0') => text,
                Ok(_) | Err(_) => {
                    let column = match std::str::from_utf8(raw) {
                        Ok(text) => text.find('\0').map_or(1, |i| char_column(text, i)),
                        Err(e) => {
                            let valid = raw.get(..e.valid_up_to()).unwrap_or_default();
                            String::from_utf8_lossy(valid).chars().count() + 1
                        }
                    };
                    self.redacted.push(REDACTED_LINE.into());
                    self.finding(
                        Finding::error(
                            "credentials.not-text",
                            format!(
                                "line {number} is not text (binary data or not UTF-8); \
                                 the rest of the file is not read"
                            ),
                        )
                        .hint("give the AWS credentials INI file, saved as UTF-8 text"),
                        number,
                        column,
                    );
                    break;
                }
            };
            self.line(number, text);
        }
        self.finish();
    }

    fn line(&mut self, number: usize, text: &str) {
        let trimmed = text.trim();
        let indent = text.len() - text.trim_start().len();
        let column = char_column(text, indent);
        if trimmed.is_empty() {
            self.redacted.push(String::new());
        } else if trimmed.starts_with('#') || trimmed.starts_with(';') {
            self.redacted.push(format!("{}<comment>", &text[..indent]));
        } else if trimmed.starts_with('[') {
            self.header(number, text, indent, column);
        } else {
            self.key_value(number, text, indent, column);
        }
    }

    fn header(&mut self, number: usize, text: &str, indent: usize, column: usize) {
        let trimmed = text.trim();
        let inner_and_rest = trimmed.get(1..).unwrap_or_default();
        let (inner, closed, rest) = match inner_and_rest.find(']') {
            Some(close) => (
                inner_and_rest.get(..close).unwrap_or_default(),
                true,
                inner_and_rest.get(close + 1..).unwrap_or_default().trim(),
            ),
            None => (inner_and_rest, false, ""),
        };
        let name = inner.trim();
        let ip = parse_profile_ip(name);
        let shown = ip
            .map(|ip| ip.to_string())
            .or_else(|| safe_to_show(name).then(|| name.to_owned()));
        // The redacted line keeps the header as written when its name may be shown (so the
        // caret points at what is really there); anything after `]` is never shown.
        let redacted = match &shown {
            Some(_) => {
                let head_len = indent + 1 + inner.len() + usize::from(closed);
                let head = text.get(..head_len).unwrap_or(text);
                let after = text.get(head_len..).unwrap_or_default();
                if after.trim().is_empty() {
                    text.to_owned()
                } else {
                    let ws = &after[..after.len() - after.trim_start().len()];
                    format!("{head}{ws}{}", crate::secret::REDACTED)
                }
            }
            None => format!(
                "{}[{}{}",
                &text[..indent],
                crate::secret::REDACTED,
                if closed { "]" } else { "" }
            ),
        };
        self.redacted.push(redacted);
        let label = shown
            .as_deref()
            .map_or_else(|| "this profile".to_owned(), |s| format!("`[{s}]`"));

        if !closed {
            self.finding(
                Finding::error(
                    "credentials.section-unclosed",
                    format!("the section header {label} has no closing `]`"),
                )
                .hint(format!(
                    "end the header with `]`: {}",
                    ip.map_or_else(|| "`[192.168.1.10]`".to_owned(), |ip| format!("`[{ip}]`"))
                )),
                number,
                column,
            );
        } else if !rest.is_empty() && !rest.starts_with('#') && !rest.starts_with(';') {
            self.finding(
                Finding::error(
                    "credentials.section-trailing-text",
                    format!("there is text after the `]` of {label}"),
                )
                .hint("put nothing but a `#` comment after `]` on a header line"),
                number,
                column,
            );
        }

        if name.is_empty() {
            self.section = Section::Skipped;
            self.finding(
                Finding::error(
                    "credentials.section-empty",
                    "the section header `[]` names no profile",
                )
                .hint(format!(
                    "name the profile by the device IP: {EXAMPLE_PROFILE}"
                )),
                number,
                column,
            );
            return;
        }

        let Some(ip) = ip else {
            self.section = Section::Skipped;
            self.finding(
                Finding::warning(
                    "credentials.non-device-profile",
                    format!("{label} is not named by a device IP address; it is skipped"),
                )
                .hint(
                    "each device needs a profile named by its IP, e.g. `[192.168.1.10]`; \
                     remove or rename this profile",
                ),
                number,
                column,
            );
            return;
        };

        if let Some(first) = self.devices.iter().find(|d| d.ip == ip) {
            let first_line = first.line;
            self.section = Section::Skipped;
            self.finding(
                Finding::error(
                    "credentials.duplicate-device",
                    format!(
                        "device {ip} has a second profile at line {number}; the first is at \
                         line {first_line}"
                    ),
                )
                .device(ip.to_string())
                .hint(format!(
                    "keep one `[{ip}]` section (lines {first_line} and {number}): merge them or \
                     delete one"
                )),
                number,
                column,
            );
            return;
        }

        if name.starts_with("profile ") {
            self.finding(
                Finding::error(
                    "credentials.profile-prefix",
                    format!(
                        "the header `[{name}]` uses the `profile ` prefix of ~/.aws/config; in a \
                         credentials file the profile is named by the IP alone"
                    ),
                )
                .device(ip.to_string())
                .hint(format!("write the header as `[{ip}]`")),
                number,
                column,
            );
        } else if text != format!("[{name}]")
            && closed
            && (rest.is_empty() || rest.starts_with('#') || rest.starts_with(';'))
        {
            self.finding(
                Finding::info(
                    "credentials.header-format",
                    format!(
                        "the header of device {ip} has spaces around it or inside the brackets; \
                         snowctl and CAPAS accept it, but `eksctl anywhere` does not see the \
                         profile (aws/eks-anywhere#5702)"
                    ),
                )
                .device(ip.to_string())
                .hint(format!(
                    "to share this file with eksctl anywhere, write the line as exactly `[{ip}]`"
                )),
                number,
                column,
            );
        }

        self.devices.push(DeviceCredentials {
            ip,
            line: number,
            access_key_id: None,
            secret_access_key: None,
            region: None,
        });
        self.key_lines.push([None; 3]);
        self.section = Section::Device(self.devices.len() - 1);
    }

    /// A `key = value` line (or a line that should be one).
    fn key_value(&mut self, number: usize, text: &str, indent: usize, column: usize) {
        let Some(eq) = text.find('=') else {
            self.missing_equals(number, text, indent, column);
            return;
        };
        let entry = Entry::split(text, eq);
        self.redacted.push(entry.redacted(text, indent));
        if entry.key.is_empty() {
            self.finding(
                Finding::error(
                    "credentials.empty-key",
                    format!("line {number} has no key before `=`"),
                )
                .hint("write `key = value`, e.g. `region = snow`"),
                number,
                column,
            );
            return;
        }
        let Some(index) = self.profile_of(&entry, number, column) else {
            return;
        };
        let Some(known) = entry.known else {
            // Unknown keys (aws_session_token, output, …) are ignored.
            return;
        };
        let Some(ip) = self.devices.get(index).map(|d| d.ip) else {
            return;
        };
        if self.is_duplicate_key(index, known, ip, number, column) {
            return;
        }
        self.check_value(ip, known, entry.value, number, entry.value_column);
        let Some(device) = self.devices.get_mut(index) else {
            return;
        };
        let value = entry.value.to_owned();
        match known {
            0 => device.access_key_id = Some(SecretString::new(value)),
            1 => device.secret_access_key = Some(SecretString::new(value)),
            _ => device.region = Some(value),
        }
    }

    /// A line that is neither a header nor `key = value`: no `=`.
    fn missing_equals(&mut self, number: usize, text: &str, indent: usize, column: usize) {
        // A known key name at the start of the line may be shown; nothing else.
        let first_word = text.split_whitespace().next().unwrap_or_default();
        let known = KNOWN_KEYS
            .iter()
            .find(|k| first_word.eq_ignore_ascii_case(k))
            .copied();
        let (message, hint) = match known {
            Some(key) => {
                self.redacted
                    .push(format!("{}{first_word} {REDACTED_LINE}", &text[..indent]));
                (
                    format!("`{key}` on line {number} has no `=`"),
                    format!("write `{key} = <value>`"),
                )
            }
            None => {
                self.redacted
                    .push(format!("{}{}", &text[..indent], REDACTED_LINE));
                (
                    format!(
                        "line {number} is neither a `[section]` header nor `key = value`: it has no `=`"
                    ),
                    "write `key = value` on one line, e.g. `aws_secret_access_key = <secret key>`; \
                     a comment starts with `#` or `;`"
                        .to_owned(),
                )
            }
        };
        self.finding(
            Finding::error("credentials.missing-equals", message).hint(hint),
            number,
            column,
        );
    }

    /// The device profile a key line belongs to; `None` (with a finding before any header) when
    /// its keys are not read.
    fn profile_of(&mut self, entry: &Entry<'_>, number: usize, column: usize) -> Option<usize> {
        match self.section {
            Section::Device(index) => Some(index),
            Section::Skipped => None,
            Section::None => {
                let shown = if entry.known.is_some() || is_plain_key(entry.key) {
                    format!("`{}`", entry.key)
                } else {
                    "a key".to_owned()
                };
                self.finding(
                    Finding::warning(
                        "credentials.key-outside-profile",
                        format!("{shown} comes before any `[device IP]` header; it is ignored"),
                    )
                    .hint(format!(
                        "put device keys under the device's header: {EXAMPLE_PROFILE}"
                    )),
                    number,
                    column,
                );
                None
            }
        }
    }

    /// Whether the profile already set this key (a finding if so); records the line if not.
    fn is_duplicate_key(
        &mut self,
        index: usize,
        known: usize,
        ip: DeviceIp,
        number: usize,
        column: usize,
    ) -> bool {
        let key_name = KNOWN_KEYS.get(known).copied().unwrap_or_default();
        if let Some(first) = self
            .key_lines
            .get(index)
            .and_then(|k| k.get(known).copied().flatten())
        {
            self.finding(
                Finding::error(
                    "credentials.duplicate-key",
                    format!(
                        "profile [{ip}] sets `{key_name}` twice: at line {first} and line {number}"
                    ),
                )
                .device(ip.to_string())
                .hint(format!("keep one `{key_name}` line under `[{ip}]`")),
                number,
                column,
            );
            return true;
        }
        if let Some(lines) = self.key_lines.get_mut(index)
            && let Some(slot) = lines.get_mut(known)
        {
            *slot = Some(number);
        }
        false
    }

    /// The findings about one known key's value: empty, too long for a device key, a region
    /// other than `snow`. A key's value is never shown, only its length.
    fn check_value(
        &mut self,
        ip: DeviceIp,
        known: usize,
        value: &str,
        number: usize,
        column: usize,
    ) {
        let key_name = KNOWN_KEYS.get(known).copied().unwrap_or_default();
        if value.is_empty() {
            let (what, severity) = if known == 2 {
                ("`snow`", Severity::Warning)
            } else {
                ("the key from the device", Severity::Error)
            };
            self.finding(
                Finding::new(
                    severity,
                    "credentials.empty-value",
                    format!("`{key_name}` of device {ip} has no value"),
                )
                .device(ip.to_string())
                .hint(format!(
                    "write `{key_name} = <value>` with {what} after `=`"
                )),
                number,
                column,
            );
            return;
        }
        let max = match known {
            0 => MAX_ACCESS_KEY_ID_CHARS,
            1 => MAX_SECRET_ACCESS_KEY_CHARS,
            _ => usize::MAX,
        };
        let length = value.chars().count();
        if length > max {
            self.finding(
                Finding::error(
                    "credentials.key-too-long",
                    format!(
                        "`{key_name}` of device {ip} is {length} characters long; a Snow device's has {max}"
                    ),
                )
                .device(ip.to_string())
                .hint(format!(
                    "copy the device's key again (`snowballEdge list-access-keys`, then `snowballEdge get-secret-access-key`): something else was pasted after `{key_name} =`"
                )),
                number,
                column,
            );
        }
        if known == 2 && value != SNOW_REGION {
            let shown = if safe_to_show(value) {
                format!("`{value}`")
            } else {
                "not `snow`".to_owned()
            };
            self.finding(
                Finding::warning(
                    "credentials.region",
                    format!(
                        "the region of device {ip} is {shown}; Snow devices sign with region `snow`"
                    ),
                )
                .device(ip.to_string())
                .hint("write `region = snow`"),
                number,
                column,
            );
        }
    }

    fn finish(&mut self) {
        let mut missing = Vec::new();
        for (device, lines) in self.devices.iter().zip(&self.key_lines) {
            let ip = device.ip;
            for (slot, key) in KNOWN_KEYS.iter().enumerate() {
                if lines.get(slot).copied().flatten().is_some() {
                    continue;
                }
                let (why, value) = match slot {
                    0 => (
                        "every device call is signed with it",
                        "<access key id of the device>",
                    ),
                    1 => (
                        "every device call is signed with it",
                        "<secret access key of the device>",
                    ),
                    _ => (
                        "snowctl signs with `snow` anyway, but the EKS-A controller refuses a \
                         profile without a region",
                        "snow",
                    ),
                };
                let severity = if slot == 2 {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                missing.push(
                    Finding::new(
                        severity,
                        format!(
                            "credentials.missing-{}",
                            MISSING_IDS.get(slot).copied().unwrap_or("key")
                        ),
                        format!("profile [{ip}] has no `{key}`; {why}"),
                    )
                    .object(self.source)
                    .device(ip.to_string())
                    .hint(format!("add `{key} = {value}` under `[{ip}]`"))
                    .at(Location {
                        line: device.line,
                        column: 1,
                    }),
                );
            }
        }
        self.findings.extend(missing);
        if self.devices.is_empty() {
            self.finding(
                Finding::error(
                    "credentials.no-device-profile",
                    "the file has no device profile: no section is named by a device IP",
                )
                .hint(format!("add one section per device: {EXAMPLE_PROFILE}")),
                1,
                1,
            );
        }
    }
}

/// A `key = value` line split at its first `=`.
struct Entry<'t> {
    /// The key as written, with the white space around it.
    key_raw: &'t str,
    /// Everything after `=`.
    value_raw: &'t str,
    /// The key, trimmed.
    key: &'t str,
    /// The value, trimmed and without an inline comment.
    value: &'t str,
    /// The 1-based column of the value (of `=` + 1 when it is empty).
    value_column: usize,
    /// The slot of a key we read (see [`KNOWN_KEYS`]).
    known: Option<usize>,
}

impl<'t> Entry<'t> {
    fn split(text: &'t str, eq: usize) -> Self {
        let key_raw = text.get(..eq).unwrap_or_default();
        let value_raw = text.get(eq + 1..).unwrap_or_default();
        let key = key_raw.trim();
        // An inline comment (`#` or `;` after whitespace) ends the value, as in go-ini, which
        // the EKS-A controller reads the file with. Keys and regions never contain one.
        let value = strip_inline_comment(value_raw).trim();
        let value_column = if value.is_empty() {
            char_column(text, eq + 1)
        } else {
            char_column(
                text,
                eq + 1 + (value_raw.len() - value_raw.trim_start().len()),
            )
        };
        let lower = key.to_ascii_lowercase();
        Entry {
            key_raw,
            value_raw,
            key,
            value,
            value_column,
            known: KNOWN_KEYS.iter().position(|k| *k == lower),
        }
    }

    /// The line as shown: the key kept when it is a plain key name, the value never (the
    /// region is not secret, and is kept when it looks like a region name).
    fn redacted(&self, text: &str, indent: usize) -> String {
        let shown_key = if self.known.is_some() || is_plain_key(self.key) {
            self.key_raw.to_owned()
        } else {
            format!("{}{}", &text[..indent], crate::secret::REDACTED)
        };
        let value_ws = &self.value_raw[..self.value_raw.len() - self.value_raw.trim_start().len()];
        let shown_value = if self.value.is_empty() {
            String::new()
        } else if self.known == Some(2) && safe_to_show(self.value) {
            self.value.to_owned()
        } else {
            crate::secret::REDACTED.to_owned()
        };
        format!("{shown_key}={value_ws}{shown_value}")
    }
}

/// The keys we read, in slot order.
const KNOWN_KEYS: [&str; 3] = ["aws_access_key_id", "aws_secret_access_key", "region"];
const MISSING_IDS: [&str; 3] = ["access-key", "secret-key", "region"];
const REDACTED_LINE: &str = "<redacted>";

/// The value up to an inline comment: `#` or `;` preceded by whitespace.
fn strip_inline_comment(value: &str) -> &str {
    let mut previous_is_space = false;
    for (i, c) in value.char_indices() {
        if (c == '#' || c == ';') && previous_is_space {
            return value.get(..i).unwrap_or(value);
        }
        previous_is_space = c.is_whitespace();
    }
    value
}

/// A profile name as a device IP: the whole name, or the name after a `profile ` prefix.
fn parse_profile_ip(name: &str) -> Option<DeviceIp> {
    let candidate = name.strip_prefix("profile ").map_or(name, str::trim);
    candidate.parse::<IpAddr>().ok().map(DeviceIp::from)
}

/// Whether a name may appear in output: short, lower-case words. AWS key ids are upper-case and
/// secret keys mix cases, digits, `/` and `+`, so neither passes.
fn safe_to_show(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 40
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || " _-.:".contains(c))
}

/// A key name as INI files write them: lower-case, digits and `_`.
fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' || c == '.'
        })
}

/// The 1-based character column of a byte offset in a line.
fn char_column(text: &str, byte_offset: usize) -> usize {
    text.get(..byte_offset).map_or(1, |s| s.chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const AK: &str = "AKIAIOSFODNN7EXAMPLE";
    const SK: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    fn parse(text: &str) -> (CredentialsFile, Vec<Finding>) {
        CredentialsFile::parse("credentials.ini", text.as_bytes().to_vec())
    }

    fn checks(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.check.as_str()).collect()
    }

    fn profile(ip: &str) -> String {
        format!("[{ip}]\naws_access_key_id = {AK}\naws_secret_access_key = {SK}\nregion = snow\n")
    }

    #[test]
    fn two_devices_parse_clean() {
        let text = format!("{}\n{}", profile("192.168.1.10"), profile("fe80::1"));
        let (file, findings) = parse(&text);
        assert!(findings.is_empty(), "{findings:?}");
        let ips: Vec<String> = file.devices().iter().map(|d| d.ip().to_string()).collect();
        assert_eq!(ips, ["192.168.1.10", "fe80::1"]);
        let d = &file.devices()[0];
        assert!(d.is_complete());
        assert_eq!(d.region(), Some("snow"));
        assert_eq!(d.line(), 1);
        assert_eq!(file.devices()[1].line(), 6);
        assert_eq!(
            d.access_key_id
                .as_ref()
                .map(SecretString::expose_for_signing),
            Some(AK)
        );
    }

    #[test]
    fn tolerates_bom_crlf_comments_whitespace() {
        let text = format!(
            "\u{feff}# devices\r\n; more\r\n\r\n  [ 10.0.0.1 ]  # first\r\n\taws_access_key_id=  {AK}  \r\n aws_secret_access_key ={SK}\r\nregion = snow\r\nunknown = x\r\n"
        );
        let (file, findings) = parse(&text);
        assert_eq!(checks(&findings), ["credentials.header-format"]);
        assert_eq!(findings[0].severity, Severity::Info);
        assert_eq!(findings[0].line, Some(4));
        assert_eq!(findings[0].column, Some(3));
        assert_eq!(file.devices().len(), 1);
        assert!(file.devices()[0].is_complete());
        assert_eq!(
            file.devices()[0]
                .secret_access_key
                .as_ref()
                .map(SecretString::expose_for_signing),
            Some(SK)
        );
    }

    #[test]
    fn trailing_space_header_is_accepted_with_an_info() {
        let text = format!(
            "[1.2.3.4] \naws_access_key_id = {AK}\naws_secret_access_key = {SK}\nregion = snow"
        );
        let (file, findings) = parse(&text);
        assert_eq!(file.devices().len(), 1);
        assert!(!snow_api::has_errors(&findings));
        assert_eq!(checks(&findings), ["credentials.header-format"]);
    }

    #[test]
    fn non_ip_profile_is_skipped_with_a_warning() {
        let text = format!(
            "[default]\naws_access_key_id = {AK}\n{}",
            profile("1.2.3.4")
        );
        let (file, findings) = parse(&text);
        assert_eq!(checks(&findings), ["credentials.non-device-profile"]);
        assert_eq!(findings[0].severity, Severity::Warning);
        assert_eq!(file.devices().len(), 1);
    }

    #[test]
    fn duplicate_device_names_both_lines() {
        let text = format!("{}{}", profile("1.2.3.4"), profile("1.2.3.4"));
        let (_, findings) = parse(&text);
        assert_eq!(checks(&findings), ["credentials.duplicate-device"]);
        let f = &findings[0];
        assert_eq!(f.line, Some(5));
        assert!(
            f.message.contains("line 5") && f.message.contains("line 1"),
            "{}",
            f.message
        );
        assert_eq!(f.object.as_deref(), Some("credentials.ini"));
    }

    #[test]
    fn empty_and_no_device_files_are_errors() {
        for text in ["", "\n\n# nothing\n", "[default]\nregion = snow\n"] {
            let (file, findings) = parse(text);
            assert!(file.devices().is_empty());
            assert!(
                checks(&findings).contains(&"credentials.no-device-profile"),
                "{text:?}"
            );
            assert!(snow_api::has_errors(&findings));
        }
    }

    #[test]
    fn missing_equals_blank_value_and_unclosed_header() {
        let text = format!(
            "[1.2.3.4\naws_access_key_id {AK}\naws_secret_access_key =    \nregion = snow\n"
        );
        let (file, findings) = parse(&text);
        assert_eq!(
            checks(&findings),
            [
                "credentials.section-unclosed",
                "credentials.missing-access-key",
                "credentials.missing-equals",
                "credentials.empty-value",
            ]
        );
        assert!(
            findings[2]
                .message
                .contains("`aws_access_key_id` on line 2 has no `=`")
        );
        assert_eq!(findings[3].line, Some(3));
        assert_eq!(findings[3].column, Some(24));
        assert_eq!(file.devices().len(), 1);
        for f in &findings {
            assert!(f.hint.is_some() && f.line.is_some(), "{f:?}");
            assert!(!f.to_string().contains(AK) && !f.to_string().contains(SK));
        }
        assert!(!file.redacted_text().contains(AK));
        assert!(!file.redacted_text().contains(SK));
        assert_eq!(file.redacted_text().lines().count(), 4);
    }

    #[test]
    fn missing_keys_and_region_warnings() {
        let text = format!("[1.2.3.4]\naws_secret_access_key = {SK}\nregion = us-west-2\n");
        let (file, findings) = parse(&text);
        assert_eq!(
            checks(&findings),
            ["credentials.missing-access-key", "credentials.region"]
        );
        assert!(findings[1].message.contains("us-west-2"));
        assert!(!file.devices()[0].is_complete());
        assert!(file.provider("1.2.3.4".parse().unwrap()).is_none());
        let (_, findings) = parse(&format!(
            "[1.2.3.4]\naws_access_key_id = {AK}\naws_secret_access_key = {SK}\n"
        ));
        assert_eq!(checks(&findings), ["credentials.missing-region"]);
        assert_eq!(findings[0].severity, Severity::Warning);
        let (_, findings) = parse(&format!(
            "[1.2.3.4]\naws_access_key_id = {AK}\naws_secret_access_key = {SK}\nregion =\n"
        ));
        assert_eq!(checks(&findings), ["credentials.empty-value"]);
        assert_eq!(findings[0].severity, Severity::Warning);
        // An inline comment ends a value, as in go-ini.
        let (file, findings) = parse(&format!(
            "[1.2.3.4]\naws_access_key_id = {AK} # device A\naws_secret_access_key = {SK}\nregion = snow ; rack 2\n"
        ));
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(file.devices()[0].region(), Some("snow"));
        assert_eq!(
            file.devices()[0]
                .access_key_id
                .as_ref()
                .map(SecretString::expose_for_signing),
            Some(AK)
        );
    }

    #[test]
    fn binary_and_utf16_files() {
        let (_, findings) = CredentialsFile::parse("c", b"[1.2.3.4]\n\x00\x01\x02\xff".to_vec());
        let binary = findings
            .iter()
            .find(|f| f.check == "credentials.not-text")
            .unwrap();
        assert_eq!(binary.line, Some(2));
        let (_, findings) = CredentialsFile::parse("c", b"\xff\xfe[\x001\x00".to_vec());
        assert_eq!(checks(&findings), ["credentials.not-text"]);
    }

    #[test]
    fn profile_prefix_and_trailing_text_and_duplicate_key() {
        let text = format!(
            "[profile 1.2.3.4]\naws_access_key_id = {AK}\naws_access_key_id = {AK}\naws_secret_access_key = {SK}\nregion = snow\n[5.6.7.8] x\n"
        );
        let (_, findings) = parse(&text);
        let c = checks(&findings);
        assert!(c.contains(&"credentials.profile-prefix"), "{c:?}");
        assert!(c.contains(&"credentials.duplicate-key"), "{c:?}");
        assert!(c.contains(&"credentials.section-trailing-text"), "{c:?}");
    }

    #[test]
    fn a_key_line_that_is_a_secret_is_never_shown() {
        let text = format!("[1.2.3.4]\n{AK}={SK}\n{SK}\n");
        let (file, findings) = parse(&text);
        assert!(!file.redacted_text().contains(AK));
        assert!(!file.redacted_text().contains(SK));
        for f in &findings {
            let shown = format!("{f} {f:?}");
            assert!(!shown.contains(AK) && !shown.contains(SK), "{shown}");
        }
        assert!(!format!("{file:?}").contains(SK));
    }
}
