//! What preflight must check, read from a [`ClusterSpec`]: the machine configs in use, their
//! devices and how many machines each puts where.

use snow_api::{ClusterSpec, DeviceIp, spec::object_id};
use std::collections::{BTreeMap, BTreeSet};

/// The Cluster annotation that skips the control-plane endpoint probe, as in EKS Anywhere.
pub const SKIP_IP_CHECK_ANNOTATION: &str = "anywhere.eks.amazonaws.com/skip-ip-check";
/// The AMI tag that names the Kubernetes version, for AMI lookup when `amiID` is empty.
pub const AMI_TAG_KUBERNETES_VERSION: &str = "eksa.aws.com/k8s-version";
/// The AMI tag that names the OS family, for AMI lookup when `amiID` is empty.
pub const AMI_TAG_OS_FAMILY: &str = "eksa.aws.com/os-family";

/// The tags preflight filters AMIs on when `amiID` is empty: the Kubernetes version (when known)
/// and the OS family (when not empty).
pub fn ami_tags(kubernetes_version: Option<&str>, os_family: &str) -> Vec<(String, String)> {
    let mut tags = Vec::new();
    if let Some(v) = kubernetes_version {
        tags.push((AMI_TAG_KUBERNETES_VERSION.to_owned(), v.to_owned()));
    }
    if !os_family.is_empty() {
        tags.push((AMI_TAG_OS_FAMILY.to_owned(), os_family.to_owned()));
    }
    tags
}

/// The role of a machine config in the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Control-plane machines.
    ControlPlane,
    /// External etcd machines.
    Etcd,
    /// Worker machines.
    Worker,
}

/// One SnowMachineConfig as preflight needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachinePlan {
    /// The config's name.
    pub name: String,
    /// `SnowMachineConfig/NAME`, the object id in findings.
    pub object: String,
    /// The devices in list order (entries that are not IPs are left out: static validation
    /// reports them).
    pub devices: Vec<DeviceIp>,
    /// `amiID`, when set.
    pub ami_id: Option<String>,
    /// `sshKeyName`, when set.
    pub ssh_key_name: Option<String>,
    /// `instanceType`.
    pub instance_type: Option<String>,
    /// `osFamily`.
    pub os_family: Option<String>,
    /// The machines that use this config, by role.
    pub machines: BTreeMap<Role, u32>,
}

impl MachinePlan {
    /// All machines of this config.
    pub fn machine_count(&self) -> u32 {
        self.machines.values().sum()
    }

    /// How many of this config's machines land on `device`, assuming CAPAS spreads them
    /// round-robin over `devices` in list order (the first `count % n` devices take one more).
    pub fn machines_on(&self, device: DeviceIp) -> u32 {
        let n = self.devices.len() as u32;
        let Some(k) = self.devices.iter().position(|d| *d == device) else {
            return 0;
        };
        if n == 0 {
            return 0;
        }
        self.machines
            .values()
            .map(|&count| count / n + u32::from((k as u32) < count % n))
            .sum()
    }
}

/// Everything preflight checks for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The cluster name.
    pub cluster: String,
    /// `kubernetesVersion`.
    pub kubernetes_version: Option<String>,
    /// The control-plane endpoint host.
    pub endpoint: Option<String>,
    /// Whether the Cluster carries the skip-ip-check annotation set to "true".
    pub skip_ip_check_annotation: bool,
    /// The machine configs referenced by the Cluster, by name.
    pub machines: BTreeMap<String, MachinePlan>,
}

impl Plan {
    /// Reads the plan from a (defaulted) spec. Machine configs that no role references are left
    /// out, as EKS Anywhere never creates machines from them.
    pub fn from_spec(spec: &ClusterSpec) -> Plan {
        let cluster = &spec.cluster.spec;
        let mut uses: Vec<(String, Role, u32)> = Vec::new();
        let count = |c: Option<i64>| u32::try_from(c.unwrap_or(1).max(0)).unwrap_or(0);
        if let Some(cp) = &cluster.control_plane_configuration
            && let Some(r) = &cp.machine_group_ref
        {
            uses.push((r.name().to_owned(), Role::ControlPlane, count(cp.count)));
        }
        if let Some(etcd) = &cluster.external_etcd_configuration
            && let Some(r) = &etcd.machine_group_ref
        {
            uses.push((r.name().to_owned(), Role::Etcd, count(etcd.count)));
        }
        for group in cluster.worker_node_group_configurations.iter().flatten() {
            if let Some(r) = &group.machine_group_ref {
                let n = group.count.or_else(|| {
                    group
                        .autoscaling_configuration
                        .as_ref()
                        .and_then(|a| a.min_count)
                });
                uses.push((r.name().to_owned(), Role::Worker, count(n)));
            }
        }
        let mut machines = BTreeMap::new();
        for (name, role, n) in uses {
            let Some(config) = spec.machine_configs.get(&name) else {
                continue;
            };
            let entry = machines.entry(name.clone()).or_insert_with(|| {
                let s = &config.spec;
                let mut seen = BTreeSet::new();
                MachinePlan {
                    object: object_id("SnowMachineConfig", &name),
                    name: name.clone(),
                    devices: s
                        .devices
                        .iter()
                        .flatten()
                        .filter_map(|d| d.trim().parse::<DeviceIp>().ok())
                        .filter(|d| seen.insert(*d))
                        .collect(),
                    ami_id: non_empty(&s.ami_id),
                    ssh_key_name: non_empty(&s.ssh_key_name),
                    instance_type: non_empty(&s.instance_type),
                    os_family: non_empty(&s.os_family),
                    machines: BTreeMap::new(),
                }
            });
            *entry.machines.entry(role).or_insert(0) += n;
        }
        let skip_ip_check_annotation = spec
            .cluster
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(SKIP_IP_CHECK_ANNOTATION))
            .is_some_and(|v| v == "true");
        Plan {
            cluster: spec.name().to_owned(),
            kubernetes_version: non_empty(&cluster.kubernetes_version),
            endpoint: cluster
                .control_plane_configuration
                .as_ref()
                .and_then(|c| c.endpoint.as_ref())
                .map(|e| e.host.trim().to_owned())
                .filter(|h| !h.is_empty()),
            skip_ip_check_annotation,
            machines,
        }
    }

    /// Every device some machine config lists, in first-seen order.
    pub fn devices(&self) -> Vec<DeviceIp> {
        let mut seen = BTreeSet::new();
        self.machines
            .values()
            .flat_map(|m| m.devices.iter().copied())
            .filter(|d| seen.insert(*d))
            .collect()
    }

    /// The machine configs that list `device`.
    pub fn machines_on(&self, device: DeviceIp) -> impl Iterator<Item = &MachinePlan> {
        self.machines
            .values()
            .filter(move |m| m.devices.contains(&device))
    }
}

fn non_empty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(devices: &[&str], cp: u32, workers: u32) -> MachinePlan {
        MachinePlan {
            name: "m".into(),
            object: "SnowMachineConfig/m".into(),
            devices: devices.iter().map(|d| d.parse().unwrap()).collect(),
            ami_id: None,
            ssh_key_name: None,
            instance_type: None,
            os_family: None,
            machines: [(Role::ControlPlane, cp), (Role::Worker, workers)]
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn round_robin_puts_the_remainder_on_the_first_devices() {
        let m = plan(&["10.0.0.1", "10.0.0.2", "10.0.0.3"], 3, 4);
        let on = |d: &str| m.machines_on(d.parse().unwrap());
        assert_eq!((on("10.0.0.1"), on("10.0.0.2"), on("10.0.0.3")), (3, 2, 2));
        assert_eq!(on("10.0.0.9"), 0);
        assert_eq!(m.machine_count(), 7);
    }
}
