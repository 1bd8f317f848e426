//! Fleet-wide chores built on single device calls: importing an SSH key pair on every device that
//! lacks it (`snowctl devices import-key`), and the AMIs usable for a Kubernetes version and OS
//! as preflight's auto-pick sees them (`snowctl devices images`).

use crate::device::{Device, Image};
use crate::inventory::FleetDevice;
use crate::plan::{AMI_TAG_KUBERNETES_VERSION, AMI_TAG_OS_FAMILY};
use serde::Serialize;
use snow_api::DeviceIp;
use std::fmt::{self, Write as _};

/// What happened on one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome", content = "error")]
pub enum KeyOutcome {
    /// `DescribeKeyPairs` found the name: nothing was imported (the material is not compared).
    AlreadyPresent,
    /// `ImportKeyPair` succeeded.
    Imported,
    /// A call failed; the message names the device and the call.
    Failed(String),
}

/// The key import on every device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyImport {
    /// The key pair name.
    pub name: String,
    /// Per device, in the order listed.
    pub devices: Vec<(String, KeyOutcome)>,
}

impl KeyImport {
    /// Whether any device failed.
    pub fn has_failures(&self) -> bool {
        self.devices
            .iter()
            .any(|(_, o)| matches!(o, KeyOutcome::Failed(_)))
    }
}

impl KeyImport {
    /// One error finding per device that failed, naming the device.
    pub fn failures(&self) -> Vec<snow_api::Finding> {
        self.devices
            .iter()
            .filter_map(|(device, outcome)| match outcome {
                KeyOutcome::Failed(e) => Some(
                    snow_api::Finding::error(
                        "ssh-key.import",
                        format!("key pair {} on device {device}: {e}", self.name),
                    )
                    .device(device),
                ),
                _ => None,
            })
            .collect()
    }
}

impl fmt::Display for KeyImport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (device, outcome) in &self.devices {
            match outcome {
                KeyOutcome::AlreadyPresent => {
                    writeln!(f, "{device}: key pair {} already present", self.name)?
                }
                KeyOutcome::Imported => writeln!(f, "{device}: key pair {} imported", self.name)?,
                KeyOutcome::Failed(e) => writeln!(f, "{device}: failed: {e}")?,
            }
        }
        Ok(())
    }
}

/// An OpenSSH public key, checked to be one line of `TYPE BASE64 [COMMENT]` with a known type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey(String);

impl PublicKey {
    /// Parses the file's bytes (surrounding whitespace is dropped).
    pub fn parse(bytes: &[u8]) -> Result<PublicKey, String> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| "the public key file is not UTF-8 text".to_owned())?
            .trim();
        if text.starts_with("-----BEGIN") {
            return Err(
                "this is a PEM file (a private key?): give the OpenSSH public key (the .pub file)"
                    .to_owned(),
            );
        }
        if text.lines().count() != 1 {
            return Err("the public key file must hold exactly one key on one line".to_owned());
        }
        let mut parts = text.split_whitespace();
        let kind = parts.next().unwrap_or_default();
        let known = ["ssh-ed25519", "ssh-rsa"].contains(&kind) || kind.starts_with("ecdsa-sha2-");
        if !known || parts.next().is_none() {
            return Err(format!(
                "not an OpenSSH public key: it must start with ssh-ed25519, ssh-rsa or ecdsa-sha2-*, then the key (found {:?})",
                kind.chars().take(20).collect::<String>()
            ));
        }
        Ok(PublicKey(text.to_owned()))
    }

    /// The key line.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// Imports the key pair `name` with `public_key` (OpenSSH public key text) on one device unless
/// `DescribeKeyPairs` finds the name there.
pub async fn import_key_on<D: FleetDevice>(
    device: &D,
    name: &str,
    public_key: &[u8],
) -> KeyOutcome {
    match device.key_pair_exists(name).await {
        Ok(true) => KeyOutcome::AlreadyPresent,
        Ok(false) => match device.import_key_pair(name, public_key).await {
            Ok(()) => KeyOutcome::Imported,
            Err(e) => KeyOutcome::Failed(format!("ImportKeyPair: {e}")),
        },
        Err(e) => KeyOutcome::Failed(format!("DescribeKeyPairs: {e}")),
    }
}

/// [`import_key_on`] on every device at once; `without_credentials` fail with that reason.
pub async fn import_key<D: FleetDevice>(
    devices: &[D],
    without_credentials: &[DeviceIp],
    name: &str,
    public_key: &[u8],
) -> KeyImport {
    let outcomes =
        futures_util::future::join_all(devices.iter().map(|d| async move {
            (d.ip().to_string(), import_key_on(d, name, public_key).await)
        }))
        .await;
    let mut devices = outcomes;
    for ip in without_credentials {
        devices.push((
            ip.to_string(),
            KeyOutcome::Failed(format!(
                "no credentials for device {ip} in the credentials file"
            )),
        ));
    }
    KeyImport {
        name: name.to_owned(),
        devices,
    }
}

/// The devices of the machine configs whose `sshKeyName` is empty: EKS Anywhere imports its
/// default key on each of them (and only those).
pub fn default_key_devices(plan: &crate::Plan) -> Vec<DeviceIp> {
    let mut seen = std::collections::BTreeSet::new();
    plan.machines
        .values()
        .filter(|m| m.ssh_key_name.is_none())
        .flat_map(|m| m.devices.iter().copied())
        .filter(|d| seen.insert(*d))
        .collect()
}

/// EKS Anywhere's default key on every device of a machine config with an empty `sshKeyName`:
/// `DescribeKeyPairs` (KeyNames=[name]) on each, `ImportKeyPair` where it is missing. Without
/// `public_key` (the key files are not at hand) nothing is imported and a device that lacks the
/// name fails. `Err` is device files that cannot be used at all.
pub async fn import_default_key(
    spec: &snow_api::ClusterSpec,
    files: crate::DeviceFiles<'_>,
    name: &str,
    public_key: Option<&str>,
) -> Result<KeyImport, Box<snow_api::Finding>> {
    let ips = default_key_devices(&crate::Plan::from_spec(spec));
    if ips.is_empty() {
        return Ok(KeyImport {
            name: name.to_owned(),
            devices: Vec::new(),
        });
    }
    let fleet = crate::fleet_from_files(files, &ips)?;
    let (devices, missing) = (fleet.devices, fleet.without_credentials);
    let Some(key) = public_key else {
        // Describe only: a key made elsewhere cannot be re-created, and a new one under the same
        // name would differ from the devices' copies.
        let mut import = import_key_where_present(&devices, name).await;
        import.devices.extend(missing.iter().map(|ip| {
            (
                ip.to_string(),
                KeyOutcome::Failed(format!(
                    "no credentials for device {ip} in the credentials file"
                )),
            )
        }));
        return Ok(import);
    };
    Ok(import_key(&devices, &missing, name, key.as_bytes()).await)
}

async fn import_key_where_present<D: FleetDevice>(devices: &[D], name: &str) -> KeyImport {
    let devices = futures_util::future::join_all(devices.iter().map(|d| async move {
        let outcome = match d.key_pair_exists(name).await {
            Ok(true) => KeyOutcome::AlreadyPresent,
            Ok(false) => KeyOutcome::Failed(format!(
                "key pair {name} is not on the device, and its public key file is not at hand to import it"
            )),
            Err(e) => KeyOutcome::Failed(format!("DescribeKeyPairs: {e}")),
        };
        (d.ip().to_string(), outcome)
    }))
    .await;
    KeyImport {
        name: name.to_owned(),
        devices,
    }
}

/// The AMIs one device has for the version and OS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceImages {
    /// The device IP.
    pub device: String,
    /// The matching AMIs, by id; preflight uses the first when `amiID` is empty.
    pub images: Vec<Image>,
    /// Why the device could not be asked.
    pub error: Option<String>,
}

/// The AMIs usable for a Kubernetes version and OS family, per device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsableImages {
    /// The `eksa.aws.com/k8s-version` asked for.
    pub kubernetes_version: String,
    /// The `eksa.aws.com/os-family` asked for (empty: any).
    pub os_family: String,
    /// Per device, in the order listed.
    pub devices: Vec<DeviceImages>,
}

impl UsableImages {
    /// Whether a device failed or has no usable AMI.
    pub fn has_gaps(&self) -> bool {
        self.devices
            .iter()
            .any(|d| d.error.is_some() || d.images.is_empty())
    }
}

impl fmt::Display for UsableImages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for d in &self.devices {
            if let Some(e) = &d.error {
                let _ = writeln!(out, "{}: failed: {e}", d.device);
                continue;
            }
            if d.images.is_empty() {
                let _ = writeln!(
                    out,
                    "{}: no AMI tagged {AMI_TAG_KUBERNETES_VERSION}={}{}",
                    d.device,
                    self.kubernetes_version,
                    self.os_suffix()
                );
                continue;
            }
            for (n, image) in d.images.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{}: {}  {}{}",
                    d.device,
                    image.id,
                    image.name.as_deref().unwrap_or("-"),
                    if n == 0 {
                        "  (preflight uses this one)"
                    } else {
                        ""
                    }
                );
            }
        }
        f.write_str(&out)
    }
}

impl UsableImages {
    fn os_suffix(&self) -> String {
        if self.os_family.is_empty() {
            String::new()
        } else {
            format!(" and {AMI_TAG_OS_FAMILY}={}", self.os_family)
        }
    }
}

/// Asks every device at once for the AMIs tagged for the version and OS (`DescribeImages`
/// filtered by tag, sorted by id, the same call preflight makes).
pub async fn usable_images<D: Device>(
    devices: &[D],
    without_credentials: &[DeviceIp],
    kubernetes_version: &str,
    os_family: Option<snow_api::OsFamily>,
) -> UsableImages {
    let os_family = os_family.map_or("", snow_api::OsFamily::as_str);
    let tags = crate::plan::ami_tags(Some(kubernetes_version), os_family);
    let tags = &tags;
    let mut all = futures_util::future::join_all(devices.iter().map(|d| async move {
        match d.images_tagged(tags).await {
            Ok(images) => DeviceImages {
                device: d.ip().to_string(),
                images,
                error: None,
            },
            Err(e) => DeviceImages {
                device: d.ip().to_string(),
                images: Vec::new(),
                error: Some(e.to_string()),
            },
        }
    }))
    .await;
    for ip in without_credentials {
        all.push(DeviceImages {
            device: ip.to_string(),
            images: Vec::new(),
            error: Some(format!(
                "no credentials for device {ip} in the credentials file"
            )),
        });
    }
    UsableImages {
        kubernetes_version: kubernetes_version.to_owned(),
        os_family: os_family.to_owned(),
        devices: all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_keys_are_parsed() {
        assert!(PublicKey::parse(b"ssh-ed25519 AAAAC3Nza me@host\n").is_ok());
        assert!(PublicKey::parse(b"ecdsa-sha2-nistp256 AAAA").is_ok());
        let pem = PublicKey::parse(b"-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n").unwrap_err();
        assert!(pem.contains("private key"), "{pem}");
        assert!(PublicKey::parse(b"ssh-ed25519").is_err());
        assert!(PublicKey::parse(b"hello world").is_err());
        assert!(PublicKey::parse(b"ssh-rsa A\nssh-rsa B").is_err());
        assert!(PublicKey::parse(&[0xff, 0xfe]).is_err());
    }
}
