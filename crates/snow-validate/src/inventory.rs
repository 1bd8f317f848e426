//! What is on each device, read in one concurrent pass: state, software, capacity, instances by
//! cluster, direct network interfaces, AMIs and key pairs (`snowctl devices describe`).
//!
//! Every device is read at once, and on each device the six calls (DescribeDevice,
//! DescribeDeviceSoftware, DescribeDirectNetworkInterfaces on the Device API; DescribeInstances,
//! DescribeImages, DescribeKeyPairs on EC2) run at once too: none depends on another. A call that
//! fails is reported with the device; the device's other answers are kept.

use crate::device::{Capacity, Device, DirectNetworkInterface};
use crate::error::DeviceError;
use crate::plan::{AMI_TAG_KUBERNETES_VERSION, AMI_TAG_OS_FAMILY};
use serde::Serialize;
use snow_api::DeviceIp;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::future::Future;

/// The tag CAPAS puts on every instance of a cluster; the cluster name follows the prefix.
pub const CLUSTER_TAG_PREFIX: &str = "sigs.k8s.io/cluster-api-provider-aws-snow/cluster/";

/// One EC2 instance on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    /// `i-…` (`s.i-…` on a device).
    pub id: String,
    /// The `Name` tag.
    pub name: Option<String>,
    /// `pending`, `running`, `shutting-down`, `terminated`, `stopping`, `stopped`.
    pub state: String,
    /// e.g. `sbe-c.large`.
    pub instance_type: String,
    /// The cluster from the `sigs.k8s.io/cluster-api-provider-aws-snow/cluster/<name>` tag.
    pub cluster: Option<String>,
    /// The keys of the instance's cluster tags (cleanup deletes them).
    #[serde(skip)]
    pub cluster_tag_keys: Vec<String>,
    /// The AMI it runs (`ImageId`), for `import cluster`.
    #[serde(skip)]
    pub image_id: Option<String>,
    /// Its key pair (`KeyName`), for `import cluster`.
    #[serde(skip)]
    pub key_name: Option<String>,
    /// Its private and public IPv4 addresses, for `import cluster` to find a node's instance.
    #[serde(skip)]
    pub addresses: Vec<String>,
}

impl Instance {
    /// Whether the instance is gone or going (`terminated`, `shutting-down`).
    pub fn is_gone(&self) -> bool {
        matches!(self.state.as_str(), "terminated" | "shutting-down")
    }
}

/// One AMI with the EKS Anywhere tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaggedImage {
    /// `ami-…`.
    pub id: String,
    /// The image name.
    pub name: Option<String>,
    /// The `eksa.aws.com/k8s-version` tag.
    pub kubernetes_version: Option<String>,
    /// The `eksa.aws.com/os-family` tag.
    pub os_family: Option<String>,
}

/// Splits `(key, value)` instance tags into the `Name` tag and the cluster tags.
pub fn instance_from_tags<'a>(
    id: String,
    state: String,
    instance_type: String,
    tags: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Instance {
    let mut instance = Instance {
        id,
        name: None,
        state,
        instance_type,
        cluster: None,
        cluster_tag_keys: Vec::new(),
        image_id: None,
        key_name: None,
        addresses: Vec::new(),
    };
    for (key, value) in tags {
        if key == "Name" {
            instance.name = Some(value.to_owned());
        } else if let Some(cluster) = key.strip_prefix(CLUSTER_TAG_PREFIX) {
            instance.cluster.get_or_insert_with(|| cluster.to_owned());
            instance.cluster_tag_keys.push(key.to_owned());
        }
    }
    instance
}

/// Reads the EKS Anywhere tags off `(key, value)` AMI tags.
pub fn image_from_tags<'a>(
    id: String,
    name: Option<String>,
    tags: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> TaggedImage {
    let mut image = TaggedImage {
        id,
        name,
        kubernetes_version: None,
        os_family: None,
    };
    for (key, value) in tags {
        match key {
            AMI_TAG_KUBERNETES_VERSION => image.kubernetes_version = Some(value.to_owned()),
            AMI_TAG_OS_FAMILY => image.os_family = Some(value.to_owned()),
            _ => {}
        }
    }
    image
}

/// The further reads (and the writes of cleanup and key import) beyond what preflight needs.
pub trait FleetDevice: Device {
    /// EC2 `DescribeInstances`, every page.
    fn instances(&self) -> impl Future<Output = Result<Vec<Instance>, DeviceError>> + Send;
    /// EC2 `DescribeImages` (every AMI the device has).
    fn images(&self) -> impl Future<Output = Result<Vec<TaggedImage>, DeviceError>> + Send;
    /// EC2 `DescribeKeyPairs`: every key pair name.
    fn key_pairs(&self) -> impl Future<Output = Result<Vec<String>, DeviceError>> + Send;
    /// Device API `DescribeDirectNetworkInterfaces`.
    fn direct_network_interfaces(
        &self,
    ) -> impl Future<Output = Result<Vec<DirectNetworkInterface>, DeviceError>> + Send;
    /// EC2 `ImportKeyPair`.
    fn import_key_pair(
        &self,
        name: &str,
        public_key: &[u8],
    ) -> impl Future<Output = Result<(), DeviceError>> + Send;
}

/// What one device holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceInventory {
    /// The device IP.
    pub device: String,
    /// Whether any call was answered.
    pub reachable: bool,
    /// Each failed call, once per distinct message.
    pub errors: Vec<String>,
    /// `DeviceId`.
    pub device_id: Option<String>,
    /// `UnlockStatus.State`.
    pub unlock_state: Option<String>,
    /// `InstalledVersion`.
    pub software_version: Option<String>,
    /// The `vCPU` capacity.
    pub vcpu: Option<Capacity>,
    /// The `Memory` capacity (bytes).
    pub memory: Option<Capacity>,
    /// Instances with a cluster tag, by cluster name.
    pub clusters: BTreeMap<String, Vec<Instance>>,
    /// Instances without a cluster tag.
    pub other_instances: Vec<Instance>,
    /// Direct network interfaces.
    pub direct_network_interfaces: Vec<DirectNetworkInterface>,
    /// AMIs.
    pub images: Vec<TaggedImage>,
    /// Key pair names.
    pub key_pairs: Vec<String>,
}

impl DeviceInventory {
    fn empty(device: DeviceIp) -> Self {
        DeviceInventory {
            device: device.to_string(),
            reachable: false,
            errors: Vec::new(),
            device_id: None,
            unlock_state: None,
            software_version: None,
            vcpu: None,
            memory: None,
            clusters: BTreeMap::new(),
            other_instances: Vec::new(),
            direct_network_interfaces: Vec::new(),
            images: Vec::new(),
            key_pairs: Vec::new(),
        }
    }

    fn keep<T>(&mut self, result: Result<T, DeviceError>) -> Option<T> {
        match result {
            Ok(value) => {
                self.reachable = true;
                Some(value)
            }
            Err(err) => {
                let message = err.to_string();
                if !self.errors.contains(&message) {
                    self.errors.push(message);
                }
                None
            }
        }
    }
}

/// What every listed device holds, in the order listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetInventory {
    /// One entry per device.
    pub devices: Vec<DeviceInventory>,
}

impl FleetInventory {
    /// Whether any device had a failed call.
    pub fn has_errors(&self) -> bool {
        self.devices.iter().any(|d| !d.errors.is_empty())
    }

    /// Pretty JSON for scripts.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Reads one device: every call at once.
pub async fn describe_device<D: FleetDevice>(device: &D) -> DeviceInventory {
    let (description, software, instances, dnis, images, keys) = tokio::join!(
        device.describe_device(),
        device.describe_device_software(),
        device.instances(),
        device.direct_network_interfaces(),
        device.images(),
        device.key_pairs(),
    );
    let mut inv = DeviceInventory::empty(device.ip());
    if let Some(d) = inv.keep(description) {
        inv.device_id = d.device_id.clone();
        inv.unlock_state = Some(d.unlock_state.as_str().to_owned());
        inv.vcpu = d.capacity("vcpu").cloned();
        inv.memory = d.capacity("memory").cloned();
    }
    if let Some(s) = inv.keep(software) {
        inv.software_version = Some(s.installed_version);
    }
    for instance in inv.keep(instances).unwrap_or_default() {
        match &instance.cluster {
            Some(c) => inv.clusters.entry(c.clone()).or_default().push(instance),
            None => inv.other_instances.push(instance),
        }
    }
    inv.direct_network_interfaces = inv.keep(dnis).unwrap_or_default();
    inv.images = inv.keep(images).unwrap_or_default();
    inv.key_pairs = inv.keep(keys).unwrap_or_default();
    inv
}

/// Reads every device at once; `without_credentials` are listed as unreachable.
pub async fn describe<D: FleetDevice>(
    devices: &[D],
    without_credentials: &[DeviceIp],
) -> FleetInventory {
    let mut all: Vec<DeviceInventory> =
        futures_util::future::join_all(devices.iter().map(describe_device)).await;
    for ip in without_credentials {
        let mut inv = DeviceInventory::empty(*ip);
        inv.errors.push(format!(
            "no credentials for device {ip} in the credentials file"
        ));
        all.push(inv);
    }
    FleetInventory { devices: all }
}

fn capacity(c: Option<&Capacity>, scale: u64, unit: &str) -> String {
    match c {
        Some(c) => format!(
            "{} of {}{unit} free",
            c.available / scale.max(1),
            c.total / scale.max(1)
        ),
        None => "unknown".to_owned(),
    }
}

fn instance_line(out: &mut String, i: &Instance) {
    let _ = writeln!(
        out,
        "      {}  {}  {}  {}",
        i.id,
        i.name.as_deref().unwrap_or("-"),
        i.state,
        i.instance_type
    );
}

impl fmt::Display for DeviceInventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        if !self.reachable {
            let _ = writeln!(out, "device {}: unreachable", self.device);
            for e in &self.errors {
                let _ = writeln!(out, "  error: {e}");
            }
            return f.write_str(&out);
        }
        let _ = writeln!(
            out,
            "device {} ({})",
            self.device,
            self.device_id.as_deref().unwrap_or("id unknown")
        );
        let or_unknown = |s: &Option<String>| s.clone().unwrap_or_else(|| "unknown".to_owned());
        let _ = writeln!(
            out,
            "  state {}, software {}, vCPU {}, memory {}",
            or_unknown(&self.unlock_state),
            or_unknown(&self.software_version),
            capacity(self.vcpu.as_ref(), 1, ""),
            capacity(self.memory.as_ref(), 1 << 30, " GiB"),
        );
        for e in &self.errors {
            let _ = writeln!(out, "  error: {e}");
        }
        let count =
            self.clusters.values().map(Vec::len).sum::<usize>() + self.other_instances.len();
        let _ = writeln!(out, "  instances: {count}");
        for (cluster, instances) in &self.clusters {
            let _ = writeln!(out, "    cluster {cluster}:");
            instances.iter().for_each(|i| instance_line(&mut out, i));
        }
        if !self.other_instances.is_empty() {
            let _ = writeln!(out, "    no cluster tag:");
            self.other_instances
                .iter()
                .for_each(|i| instance_line(&mut out, i));
        }
        let _ = writeln!(
            out,
            "  direct network interfaces: {}",
            self.direct_network_interfaces.len()
        );
        for d in &self.direct_network_interfaces {
            let _ = writeln!(
                out,
                "    {}  on {}  attached to {}",
                d.arn,
                d.physical_network_interface_id,
                d.instance_id.as_deref().unwrap_or("nothing")
            );
        }
        let _ = writeln!(out, "  images: {}", self.images.len());
        for i in &self.images {
            let _ = writeln!(
                out,
                "    {}  {}  k8s {}  os {}",
                i.id,
                i.name.as_deref().unwrap_or("-"),
                i.kubernetes_version.as_deref().unwrap_or("-"),
                i.os_family.as_deref().unwrap_or("-")
            );
        }
        let _ = writeln!(out, "  key pairs: {}", self.key_pairs.join(", "));
        f.write_str(&out)
    }
}

impl fmt::Display for FleetInventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, d) in self.devices.iter().enumerate() {
            if n > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_give_the_cluster_and_the_name() {
        let i = instance_from_tags(
            "i-1".into(),
            "running".into(),
            "sbe-c.large".into(),
            [
                ("Name", "snow-cp-abc"),
                (
                    "sigs.k8s.io/cluster-api-provider-aws-snow/cluster/snow",
                    "owned",
                ),
                ("other", "x"),
            ],
        );
        assert_eq!(i.name.as_deref(), Some("snow-cp-abc"));
        assert_eq!(i.cluster.as_deref(), Some("snow"));
        assert_eq!(
            i.cluster_tag_keys,
            vec!["sigs.k8s.io/cluster-api-provider-aws-snow/cluster/snow"]
        );
        let bare = instance_from_tags("i-2".into(), "terminated".into(), "x".into(), []);
        assert!(bare.cluster.is_none() && bare.is_gone());
    }

    #[test]
    fn image_tags_are_read() {
        let i = image_from_tags(
            "ami-1".into(),
            None,
            [
                ("eksa.aws.com/k8s-version", "1.31"),
                ("eksa.aws.com/os-family", "ubuntu"),
            ],
        );
        assert_eq!(i.kubernetes_version.as_deref(), Some("1.31"));
        assert_eq!(i.os_family.as_deref(), Some("ubuntu"));
    }
}
