//! `site`: every cluster the management cluster knows, managed and imported, in one list
//! (`snowctl get clusters`). Managed clusters are read from their Cluster API objects (Cluster,
//! Machines); imported ones from the observation their import recorded, so what is shown for
//! them is what was last observed.

use super::{LifecycleError, Management, import};
use capi_render::{Contract, NAMESPACE};
use serde::Serialize;
use serde_json::Value;
use snow_api::names::condition_true;

/// One cluster of the site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteCluster {
    /// The Cluster's name.
    pub name: String,
    /// `managed` (Cluster API reconciles its machines) or `imported` (observe-only).
    pub kind: String,
    /// The Kubernetes versions its machines (managed) or kubelets (imported) report.
    pub kubernetes_versions: Vec<String>,
    /// Control-plane nodes.
    pub control_plane_nodes: u32,
    /// Worker nodes.
    pub worker_nodes: u32,
    /// Nodes that are ready.
    pub ready_nodes: u32,
    /// Managed: the Cluster's `Ready` condition is True; imported: every observed node was
    /// Ready.
    pub ready: bool,
    /// The devices it runs on (imported: as observed; managed: filled in from the devices'
    /// instances tagged for it, when the devices are read).
    pub devices: Vec<String>,
    /// `device/instance` of the instances known to be its own (imported: the observed nodes').
    #[serde(skip)]
    pub instances: Vec<String>,
    /// The registry mirror its nodes pull from (managed clusters: `crate::mirror::all`), when
    /// its spec names one; whether it answers is filled by a caller that asks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_mirror: Option<crate::mirror::RegistryMirror>,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Every Cluster API Cluster in `eksa-system`, sorted by name.
pub async fn clusters(mgmt: &Management) -> Result<Vec<SiteCluster>, LifecycleError> {
    let contract = match mgmt.served("cluster.x-k8s.io/v1beta2").await? {
        Some(_) => Contract::V1Beta2,
        None => Contract::V1Beta1,
    };
    let core = contract.api_version("cluster.x-k8s.io");
    let ns = Some(NAMESPACE);
    let mut all = Vec::new();
    let machines = mgmt.list(&core, "Machine", ns, None).await?;
    let mut mirrors = crate::mirror::all(mgmt).await?;
    for cluster in mgmt.list(&core, "Cluster", ns, None).await? {
        let name = cluster["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if import::is_imported(&cluster) {
            let observed = import::observed(mgmt, &name).await?;
            let nodes = observed.as_ref().map(|o| o.nodes.as_slice()).unwrap_or(&[]);
            let cp = nodes.iter().filter(|n| n.is_control_plane()).count();
            let ready = nodes.iter().filter(|n| n.ready).count();
            all.push(SiteCluster {
                kind: "imported".into(),
                kubernetes_versions: observed.as_ref().map(|o| o.versions()).unwrap_or_default(),
                control_plane_nodes: count(cp),
                worker_nodes: count(nodes.len() - cp),
                ready_nodes: count(ready),
                ready: !nodes.is_empty() && ready == nodes.len(),
                devices: observed.as_ref().map(|o| o.devices()).unwrap_or_default(),
                instances: nodes
                    .iter()
                    .filter_map(|n| n.instance.as_ref())
                    .map(|i| format!("{}/{}", i.device, i.id))
                    .collect(),
                registry_mirror: None,
                name,
            });
            continue;
        }
        let mine: Vec<&Value> = machines
            .iter()
            .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == name.as_str())
            .collect();
        let cp = mine
            .iter()
            .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/control-plane"].is_string())
            .count();
        let mut versions: Vec<String> = mine
            .iter()
            .filter_map(|m| m["spec"]["version"].as_str().map(str::to_owned))
            .collect();
        versions.sort();
        versions.dedup();
        all.push(SiteCluster {
            kind: "managed".into(),
            kubernetes_versions: versions,
            control_plane_nodes: count(cp),
            worker_nodes: count(mine.len() - cp),
            ready_nodes: count(mine.iter().filter(|m| condition_true(m, "Ready")).count()),
            ready: condition_true(&cluster, "Ready"),
            devices: Vec::new(),
            instances: Vec::new(),
            registry_mirror: mirrors.remove(&name),
            name,
        });
    }
    all.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(all)
}
