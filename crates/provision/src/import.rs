//! `import cluster` as one call: the workload cluster read (`snow_lifecycle::import::discover`),
//! the devices read with Describe calls only (`snow_validate::observe`), the nodes matched to
//! their instances, and the records written on the management cluster
//! (`snow_lifecycle::import::reflect`); and the site view ([`site`]): the management cluster's
//! clusters with the devices' instances. Nothing here writes to a device or to the workload
//! cluster.

use crate::ProvisionError;
use snow_api::DeviceIp;
use snow_kube::Management;
use snow_lifecycle::import::{self, Observation, ObservedInstance, Reflected, WorkloadKubeconfig};
use snow_validate::SnowDevice;
use snow_validate::observe::{self, MatchedBy, NodeHint};

/// The devices to read: clients and the chosen devices without a profile.
#[derive(Debug, Clone, Copy)]
pub struct Devices<'a> {
    /// One client per device.
    pub devices: &'a [SnowDevice],
    /// Devices the credentials file has no profile for (reported, not read).
    pub without_credentials: &'a [DeviceIp],
}

/// What an import did.
#[derive(Debug, Clone)]
pub struct Imported {
    /// What was observed (as recorded in `<cluster>-observed`).
    pub observation: Observation,
    /// What was written.
    pub reflected: Reflected,
}

/// Observes cluster `name` through `workload` (and `devices`, when given) and records it on
/// `mgmt`. A re-run replaces what was observed with what is there now.
pub async fn import(
    mgmt: &Management,
    name: &str,
    workload: &WorkloadKubeconfig,
    devices: Option<Devices<'_>>,
) -> Result<Imported, ProvisionError> {
    let cluster = workload.connect().await?;
    let mut observation = import::discover(&cluster).await?;
    if let Some(devices) = devices {
        let hints: Vec<NodeHint> = observation
            .nodes
            .iter()
            .map(|n| NodeHint {
                name: n.name.clone(),
                provider_id: n.provider_id.clone(),
                addresses: n.addresses.clone(),
            })
            .collect();
        let seen =
            observe::observe(devices.devices, devices.without_credentials, name, &hints).await;
        for backing in &seen.backing {
            let Some(node) = observation
                .nodes
                .iter_mut()
                .find(|n| n.name == backing.node)
            else {
                continue;
            };
            let i = &backing.instance;
            node.instance = Some(ObservedInstance {
                device: backing.device.clone(),
                id: i.id.clone(),
                instance_type: i.instance_type.clone(),
                image_id: i.image_id.clone(),
                key_name: i.key_name.clone(),
                dnis: backing.dnis.clone(),
                matched_by: match backing.matched_by {
                    MatchedBy::ProviderId => "providerId",
                    MatchedBy::Address => "address",
                }
                .to_owned(),
            });
        }
        observation.tagged_without_node = seen
            .tagged_without_node
            .iter()
            .map(|(device, i)| format!("{device}/{}", i.id))
            .collect();
        observation.device_errors = seen.errors();
    }
    let reflected = import::reflect(mgmt, name, &observation, workload).await?;
    Ok(Imported {
        observation,
        reflected,
    })
}

/// An instance on a device that belongs to no listed cluster.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unaccounted {
    /// The device.
    pub device: String,
    /// The instance.
    pub id: String,
    /// Its `Name` tag.
    pub name: Option<String>,
    /// The cluster its CAPAS tag names, when it has one (a cluster this management cluster
    /// does not know).
    pub cluster_tag: Option<String>,
    /// Its state.
    pub state: String,
}

/// One view of the site.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Site {
    /// Every cluster of the management cluster.
    pub clusters: Vec<snow_lifecycle::site::SiteCluster>,
    /// Instances of the devices read that belong to none of them (empty when no device was
    /// read).
    pub unaccounted: Vec<Unaccounted>,
    /// Whether devices were read.
    pub devices_read: bool,
    /// Device calls that failed (`device: error`).
    pub device_errors: Vec<String>,
}

/// The clusters of `mgmt`; with `devices`, each managed cluster's devices (those holding
/// instances with its CAPAS tag) and the instances no cluster accounts for. An instance is
/// accounted for when it carries the tag of a listed managed cluster or backs an observed node
/// of a listed imported cluster. Terminated instances are left out.
pub async fn site(mgmt: &Management, devices: Option<Devices<'_>>) -> Result<Site, ProvisionError> {
    let mut clusters = snow_lifecycle::site::clusters(mgmt).await?;
    crate::mirror::answer_all(
        clusters
            .iter_mut()
            .filter_map(|c| c.registry_mirror.as_mut()),
        snow_images::probe::PROBE_TIMEOUT,
    )
    .await;
    let Some(devices) = devices else {
        return Ok(Site {
            clusters,
            unaccounted: Vec::new(),
            devices_read: false,
            device_errors: Vec::new(),
        });
    };
    let inventory =
        snow_validate::inventory::describe(devices.devices, devices.without_credentials).await;
    let mut unaccounted = Vec::new();
    let mut device_errors = Vec::new();
    for device in &inventory.devices {
        device_errors.extend(
            device
                .errors
                .iter()
                .map(|e| format!("{}: {e}", device.device)),
        );
        let all = device
            .clusters
            .values()
            .flatten()
            .chain(&device.other_instances);
        for instance in all.filter(|i| !i.is_gone()) {
            let key = format!("{}/{}", device.device, instance.id);
            let managed = clusters.iter_mut().find(|c| {
                c.kind == "managed" && instance.cluster.as_deref() == Some(c.name.as_str())
            });
            if let Some(owner) = managed {
                if !owner.devices.contains(&device.device) {
                    owner.devices.push(device.device.clone());
                    owner.devices.sort();
                }
                continue;
            }
            if clusters.iter().any(|c| c.instances.contains(&key)) {
                continue;
            }
            unaccounted.push(Unaccounted {
                device: device.device.clone(),
                id: instance.id.clone(),
                name: instance.name.clone(),
                cluster_tag: instance.cluster.clone(),
                state: instance.state.clone(),
            });
        }
    }
    Ok(Site {
        clusters,
        unaccounted,
        devices_read: true,
        device_errors,
    })
}
