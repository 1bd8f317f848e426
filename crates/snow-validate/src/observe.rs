//! The device side of `snowctl import cluster`: which instances back an existing cluster's
//! nodes, read with the Describe calls of [`crate::inventory::describe`] only (DescribeDevice,
//! DescribeDeviceSoftware, DescribeDirectNetworkInterfaces, DescribeInstances, DescribeImages,
//! DescribeKeyPairs) — nothing here can write to a device.
//!
//! A node is matched to an instance, in this order: by its provider ID (the instance ID is the
//! ID's last `/` segment: EKS Anywhere's Snow templates set `aws-snow:////<instance id>`), by
//! one of its addresses (the instance's private or public IPv4) when exactly one instance of all
//! the devices has it, else not at all. Instances
//! carrying CAPAS' cluster tag for the cluster that back no node are listed apart.

use crate::inventory::{self, FleetDevice, FleetInventory, Instance};
use serde::Serialize;
use snow_api::DeviceIp;

/// What the import knows of a node before looking at the devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeHint {
    /// The Node's name.
    pub name: String,
    /// `spec.providerID`, when set.
    pub provider_id: Option<String>,
    /// The Node's addresses (`InternalIP`, `ExternalIP`).
    pub addresses: Vec<String>,
}

/// How a node's instance was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MatchedBy {
    /// The instance ID in the Node's provider ID.
    ProviderId,
    /// One of the Node's addresses.
    Address,
}

/// The instance behind one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backing {
    /// The Node's name.
    pub node: String,
    /// The device the instance runs on.
    pub device: String,
    /// The instance.
    pub instance: Instance,
    /// How it was found.
    pub matched_by: MatchedBy,
    /// The ARNs of the direct network interfaces attached to it.
    pub dnis: Vec<String>,
}

/// The devices' view of a cluster.
#[derive(Debug, Clone)]
pub struct Observed {
    /// One entry per node whose instance was found.
    pub backing: Vec<Backing>,
    /// Nodes no instance was found for.
    pub unmatched_nodes: Vec<String>,
    /// `(device, instance)`: instances tagged for the cluster that back no node.
    pub tagged_without_node: Vec<(String, Instance)>,
    /// Everything read, with each device's errors.
    pub inventory: FleetInventory,
}

impl Observed {
    /// `device: error` for every call that failed.
    pub fn errors(&self) -> Vec<String> {
        self.inventory
            .devices
            .iter()
            .flat_map(|d| d.errors.iter().map(move |e| format!("{}: {e}", d.device)))
            .collect()
    }
}

/// Reads every device with Describe calls only and matches `nodes` to instances.
pub async fn observe<D: FleetDevice>(
    devices: &[D],
    without_credentials: &[DeviceIp],
    cluster: &str,
    nodes: &[NodeHint],
) -> Observed {
    let inventory = inventory::describe(devices, without_credentials).await;
    match_nodes(inventory, cluster, nodes)
}

/// The instance ID a provider ID names: its last `/` segment, without quotes.
fn instance_of(provider_id: &str) -> Option<&str> {
    let id = provider_id.rsplit('/').next()?.trim_matches('\'');
    (!id.is_empty()).then_some(id)
}

/// Matches `nodes` to the instances of `inventory` (see the module's rules).
pub fn match_nodes(inventory: FleetInventory, cluster: &str, nodes: &[NodeHint]) -> Observed {
    let all: Vec<(&str, &Instance)> = inventory
        .devices
        .iter()
        .flat_map(|d| {
            d.clusters
                .values()
                .flatten()
                .chain(&d.other_instances)
                .filter(|i| !i.is_gone())
                .map(move |i| (d.device.as_str(), i))
        })
        .collect();
    let mut backing = Vec::new();
    let mut unmatched_nodes = Vec::new();
    for node in nodes {
        let by_id = node
            .provider_id
            .as_deref()
            .and_then(instance_of)
            .and_then(|id| all.iter().find(|(_, i)| i.id == id))
            .map(|found| (found, MatchedBy::ProviderId));
        // Devices are separate networks: one address can name instances on two devices, and
        // then it names neither.
        let by_address = || {
            let mut hits = all
                .iter()
                .filter(|(_, i)| i.addresses.iter().any(|a| node.addresses.contains(a)));
            match (hits.next(), hits.next()) {
                (Some(found), None) => Some((found, MatchedBy::Address)),
                _ => None,
            }
        };
        match by_id.or_else(by_address) {
            Some(((device, instance), matched_by)) => {
                let dnis = inventory
                    .devices
                    .iter()
                    .filter(|d| d.device == *device)
                    .flat_map(|d| &d.direct_network_interfaces)
                    .filter(|n| n.instance_id.as_deref() == Some(instance.id.as_str()))
                    .map(|n| n.arn.clone())
                    .collect();
                backing.push(Backing {
                    node: node.name.clone(),
                    device: (*device).to_owned(),
                    instance: (*instance).clone(),
                    matched_by,
                    dnis,
                });
            }
            None => unmatched_nodes.push(node.name.clone()),
        }
    }
    let tagged_without_node = all
        .iter()
        .filter(|(_, i)| i.cluster.as_deref() == Some(cluster))
        .filter(|(_, i)| !backing.iter().any(|b| b.instance.id == i.id))
        .map(|(d, i)| ((*d).to_owned(), (*i).clone()))
        .collect();
    Observed {
        backing,
        unmatched_nodes,
        tagged_without_node,
        inventory,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{DeviceInventory, instance_from_tags};

    fn instance(id: &str, ip: &str, cluster: Option<&str>) -> Instance {
        let tag = cluster.map(|c| format!("{}{c}", inventory::CLUSTER_TAG_PREFIX));
        let mut i = instance_from_tags(
            id.into(),
            "running".into(),
            "sbe-c.large".into(),
            tag.as_deref().map(|t| (t, "owned")),
        );
        i.addresses = vec![ip.to_owned()];
        i
    }

    fn device(ip: &str, instances: Vec<Instance>) -> DeviceInventory {
        let mut d = DeviceInventory {
            device: ip.to_owned(),
            reachable: true,
            errors: Vec::new(),
            device_id: None,
            unlock_state: None,
            software_version: None,
            vcpu: None,
            memory: None,
            clusters: Default::default(),
            other_instances: Vec::new(),
            direct_network_interfaces: Vec::new(),
            images: Vec::new(),
            key_pairs: Vec::new(),
        };
        for i in instances {
            match &i.cluster {
                Some(c) => d.clusters.entry(c.clone()).or_default().push(i),
                None => d.other_instances.push(i),
            }
        }
        d
    }

    fn hint(name: &str, provider_id: Option<&str>, ip: &str) -> NodeHint {
        NodeHint {
            name: name.into(),
            provider_id: provider_id.map(str::to_owned),
            addresses: vec![ip.into()],
        }
    }

    #[test]
    fn nodes_are_matched_by_provider_id_then_address_and_leftovers_named() {
        let inv = FleetInventory {
            devices: vec![
                device(
                    "10.0.0.1",
                    vec![
                        instance("s.i-1", "192.168.1.11", None),
                        instance("s.i-9", "192.168.1.19", Some("prod")),
                    ],
                ),
                device(
                    "10.0.0.2",
                    vec![
                        instance("s.i-2", "192.168.1.12", None),
                        instance("s.i-3", "192.168.1.19", None),
                    ],
                ),
            ],
        };
        let nodes = [
            // The provider ID wins over an address that names another instance.
            hint("cp", Some("aws-snow:////'s.i-1'"), "192.168.1.12"),
            hint("w", None, "192.168.1.12"),
            hint("lost", Some("aws-snow:////s.i-404"), "192.168.9.9"),
            // An address two devices' instances have names neither.
            hint("twice", None, "192.168.1.19"),
        ];
        let seen = match_nodes(inv, "prod", &nodes);
        let got: Vec<_> = seen
            .backing
            .iter()
            .map(|b| {
                (
                    b.node.as_str(),
                    b.device.as_str(),
                    b.instance.id.as_str(),
                    b.matched_by,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("cp", "10.0.0.1", "s.i-1", MatchedBy::ProviderId),
                ("w", "10.0.0.2", "s.i-2", MatchedBy::Address),
            ]
        );
        assert_eq!(seen.unmatched_nodes, ["lost", "twice"]);
        let tagged: Vec<_> = seen
            .tagged_without_node
            .iter()
            .map(|(_, i)| i.id.as_str())
            .collect();
        assert_eq!(tagged, ["s.i-9"]);
    }
}
