//! `import`: an existing cluster that no management cluster of ours made, reflected on the
//! management cluster observe-only, so that it is listed with the others and GitOps and app
//! tooling find its kubeconfig where Cluster API publishes one.
//!
//! What is written, all in `eksa-system` (the namespace made if missing), all labelled [`IMPORTED_LABEL`]:
//! - an `AWSSnowCluster` annotated [`MANAGED_BY_ANNOTATION`]` = snowctl`, with
//!   `spec.controlPlaneEndpoint` and `status.ready: true` filled in by us;
//! - a Cluster API `Cluster` whose `infrastructureRef` names it and which has **no**
//!   `controlPlaneRef` (and no KubeadmControlPlane, MachineDeployment or Machine is made);
//! - the `<cluster>-kubeconfig` Secret in Cluster API's format (type `cluster.x-k8s.io/secret`,
//!   label `cluster.x-k8s.io/cluster-name`, the kubeconfig under key `value`);
//! - the ConfigMap `<cluster>-observed` ([`OBSERVED_SUFFIX`]) holding what was observed
//!   (key [`OBSERVED_KEY`], JSON): nodes, versions, devices, instances. Observed, never desired:
//!   nothing reconciles towards it.
//!
//! Facts of Cluster API this relies on (kubernetes-sigs/cluster-api, main at 2026-08):
//! - `docs/book/src/developer/providers/contracts/infra-cluster.md`, "Externally managed
//!   infrastructure": an InfraCluster controller skips an object annotated
//!   `cluster.x-k8s.io/managed-by: "<system>"` and never updates it or its status; the external
//!   system fills `spec.controlPlaneEndpoint` and the provisioned status itself. The check is
//!   `util/annotations.IsExternallyManaged`: the annotation's *presence* (any value). The key is
//!   `cluster.x-k8s.io/…`, not `clusters.x-k8s.io/…`.
//! - The rule covers the infrastructure cluster only; Cluster API's own Cluster controller still
//!   reconciles the `Cluster` (`core/reconcilers/cluster`): it makes the Cluster an owner of the
//!   AWSSnowCluster and labels it, reads its `status.ready` (v1beta1 infra contract) into
//!   `InfrastructureReady`/`infrastructureProvisioned`, and copies its endpoint into the Cluster.
//! - Without a `controlPlaneRef`, `reconcileKubeconfig` writes `<cluster>-kubeconfig` from the
//!   `<cluster>-ca` Secret only when no kubeconfig Secret exists (and requeues while the CA
//!   Secret is missing). The import writes the kubeconfig Secret itself and never a CA Secret,
//!   so Cluster API leaves it as written.
//! - Without a `controlPlaneRef`, `ControlPlaneInitialized` comes from control-plane Machines
//!   with a `nodeRef` (`reconcileV1Beta1ControlPlaneInitialized`): an imported cluster has none,
//!   so Cluster API reports it False; the cluster's readiness is the observed nodes'.
//! - The phase (`setPhase`) is `Provisioned` once the infrastructure is provisioned and the
//!   endpoint is valid.

use super::{
    LifecycleError, Management,
    kubeconfig::Published,
    live::{cluster_selector, find_cluster},
    wait::delete_cluster,
};
use base64::Engine as _;
use capi_render::{Contract, NAMESPACE};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use snow_api::release::INFRA_API_VERSION;
use snow_kube::KubeError;
use std::path::Path;

/// Cluster API's externally-managed annotation (on the infrastructure cluster).
pub const MANAGED_BY_ANNOTATION: &str = snow_api::names::MANAGED_BY_ANNOTATION;
/// Its value on what snowctl imports; the label on everything an import writes (on a Cluster it
/// marks the cluster as imported); whether a Cluster was imported: read through snow-kube's live
/// layer, which every operation's refusal reads.
pub use snow_kube::live::{IMPORTED_LABEL, MANAGED_BY_VALUE, is_imported};
/// The observed topology's ConfigMap is `<cluster>` + this.
pub const OBSERVED_SUFFIX: &str = "-observed";
/// Its key.
pub const OBSERVED_KEY: &str = "observed.json";
/// The field manager of an import.
const MANAGER: &str = "snowctl-import";

/// The API server of the workload cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// Host name or IP.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// The instance behind a node, as the devices described it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedInstance {
    /// The device's IP.
    pub device: String,
    /// `s.i-…`.
    pub id: String,
    /// e.g. `sbe-c.large`.
    pub instance_type: String,
    /// The AMI.
    pub image_id: Option<String>,
    /// The key pair.
    pub key_name: Option<String>,
    /// Attached direct network interfaces.
    pub dnis: Vec<String>,
    /// `providerId` or `address`.
    pub matched_by: String,
}

/// One node of the workload cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedNode {
    /// The Node's name.
    pub name: String,
    /// From the `node-role.kubernetes.io/<role>` labels.
    pub roles: Vec<String>,
    /// `status.nodeInfo.kubeletVersion`.
    pub kubelet_version: String,
    /// `status.nodeInfo.osImage`.
    pub os_image: String,
    /// `spec.providerID`.
    pub provider_id: Option<String>,
    /// `status.addresses` (InternalIP, ExternalIP).
    pub addresses: Vec<String>,
    /// The `Ready` condition is True.
    pub ready: bool,
    /// Its instance, when one was found on the devices.
    pub instance: Option<ObservedInstance>,
}

impl ObservedNode {
    /// Whether the node runs the control plane (role `control-plane` or `master`).
    pub fn is_control_plane(&self) -> bool {
        self.roles
            .iter()
            .any(|r| r == "control-plane" || r == "master")
    }
}

/// What an import observed: the content of the `<cluster>-observed` ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// The workload cluster's API server (from its kubeconfig).
    pub endpoint: Endpoint,
    /// The CNI DaemonSet in `kube-system` and its first image, when one is known.
    pub cni: Option<String>,
    /// Every node, by name.
    pub nodes: Vec<ObservedNode>,
    /// Instances tagged for the cluster by CAPAS that back no node (`device/instance`).
    pub tagged_without_node: Vec<String>,
    /// Device calls that failed (`device: error`).
    pub device_errors: Vec<String>,
}

impl Observation {
    /// The distinct kubelet versions, sorted.
    pub fn versions(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .nodes
            .iter()
            .map(|n| n.kubelet_version.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The devices the nodes run on, sorted.
    pub fn devices(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .nodes
            .iter()
            .filter_map(|n| n.instance.as_ref().map(|i| i.device.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// The workload cluster's kubeconfig, checked to stand alone (it is published in a Secret).
#[derive(Debug)]
pub struct WorkloadKubeconfig(Published);

impl WorkloadKubeconfig {
    /// Reads `path` (bounded, through [`crate::KubeconfigFile`]'s limit) and refuses a
    /// kubeconfig that would run a program or read a file of this machine.
    pub fn read(path: &Path) -> Result<WorkloadKubeconfig, LifecycleError> {
        let bad = |reason: String| KubeError::Kubeconfig {
            path: path.to_owned(),
            reason,
        };
        let limit = crate::MAX_KUBECONFIG_BYTES;
        let bytes = crate::files::read_bounded(path, limit).map_err(|e| {
            bad(match e.kind() {
                std::io::ErrorKind::FileTooLarge => format!(
                    "it is larger than {} MiB, the most snowctl reads from a kubeconfig",
                    limit >> 20
                ),
                _ => e.to_string(),
            })
        })?;
        let text =
            String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text; save it as UTF-8".into()))?;
        Published::parse(&path.display().to_string(), text)
            .map(WorkloadKubeconfig)
            .map_err(|e| match e {
                KubeError::SecretKubeconfig { reason, .. } => KubeError::Kubeconfig {
                    path: path.to_owned(),
                    reason: format!(
                        "{reason} (it is published as the cluster's kubeconfig Secret, which must stand alone: embed the credentials)"
                    ),
                },
                other => other,
            })
            .map_err(LifecycleError::from)
    }

    /// Connects to the workload cluster.
    pub async fn connect(&self) -> Result<crate::WorkloadCluster, LifecycleError> {
        Ok(Management::from_published(&self.0).await?)
    }
}

/// `https://host:port/…` → host and port (443 when none).
fn endpoint_of(server: &str) -> Endpoint {
    let rest = server.split_once("://").map_or(server, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && p.parse::<u16>().is_ok() => {
            (h, p.parse().unwrap_or(443))
        }
        _ => (authority, 443),
    };
    Endpoint {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port,
    }
}

fn node_of(node: &Value) -> ObservedNode {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut roles: Vec<String> = node["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
        .map(str::to_owned)
        .collect();
    roles.sort();
    let addresses = node["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| matches!(a["type"].as_str(), Some("InternalIP" | "ExternalIP")))
        .map(|a| text(&a["address"]))
        .collect();
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    ObservedNode {
        name: text(&node["metadata"]["name"]),
        roles,
        kubelet_version: text(&node["status"]["nodeInfo"]["kubeletVersion"]),
        os_image: text(&node["status"]["nodeInfo"]["osImage"]),
        provider_id: node["spec"]["providerID"].as_str().map(str::to_owned),
        addresses,
        ready,
        instance: None,
    }
}

/// Reads the workload cluster (GET and LIST only): its nodes and the CNI DaemonSet of
/// `kube-system` (Cilium, Calico, Flannel, Weave or kube-router by name).
pub async fn discover(workload: &Management) -> Result<Observation, LifecycleError> {
    let mut nodes: Vec<ObservedNode> = workload
        .list("v1", "Node", None, None)
        .await?
        .iter()
        .map(node_of)
        .collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let daemonsets = workload
        .list("apps/v1", "DaemonSet", Some("kube-system"), None)
        .await?;
    let cni = daemonsets.iter().find_map(|ds| {
        let name = ds["metadata"]["name"].as_str()?;
        let known = [
            "cilium",
            "calico-node",
            "kube-flannel",
            "weave-net",
            "kube-router",
        ];
        known.iter().find(|k| name.starts_with(*k))?;
        let image = ds["spec"]["template"]["spec"]["containers"][0]["image"].as_str();
        Some(match image {
            Some(image) => format!("{name} ({image})"),
            None => name.to_owned(),
        })
    });
    Ok(Observation {
        endpoint: endpoint_of(workload.server()),
        cni,
        nodes,
        tagged_without_node: Vec::new(),
        device_errors: Vec::new(),
    })
}

/// Refuses `action` when cluster `name` on the management cluster was imported.
pub async fn refuse_imported(
    mgmt: &Management,
    name: &str,
    action: &str,
) -> Result<(), LifecycleError> {
    let (_, live) = find_cluster(mgmt, name, None).await?;
    crate::standing::refuse_live(live.as_ref(), name, action)
}

/// What [`reflect`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reflected {
    /// The Cluster API contract the Cluster was written in.
    pub contract: Contract,
    /// Whether the cluster was imported before (a refresh).
    pub refreshed: bool,
}

fn labels(cluster: &str) -> Value {
    json!({IMPORTED_LABEL: "true", "cluster.x-k8s.io/cluster-name": cluster})
}

/// The Cluster under `contract`: the infrastructure reference only.
fn cluster_object(contract: Contract, name: &str, endpoint: &Endpoint) -> Value {
    let infra_ref = match contract {
        Contract::V1Beta1 => json!({
            "apiVersion": INFRA_API_VERSION, "kind": "AWSSnowCluster",
            "name": name, "namespace": NAMESPACE,
        }),
        Contract::V1Beta2 => json!({
            "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowCluster", "name": name,
        }),
    };
    json!({
        "apiVersion": contract.api_version("cluster.x-k8s.io"),
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {IMPORTED_LABEL: "true"}},
        "spec": {
            "controlPlaneEndpoint": {"host": endpoint.host, "port": endpoint.port},
            "infrastructureRef": infra_ref,
        },
    })
}

/// Writes (or refreshes) the records of imported cluster `name`: see the module. Refuses a
/// cluster of that name that was not imported (one snowctl or another tool manages), before
/// writing anything.
pub async fn reflect(
    mgmt: &Management,
    name: &str,
    observation: &Observation,
    kubeconfig: &WorkloadKubeconfig,
) -> Result<Reflected, LifecycleError> {
    let (found_contract, live) = find_cluster(mgmt, name, None).await?;
    if let Some(cluster) = &live
        && !is_imported(cluster)
    {
        return Err(LifecycleError::NotImported {
            cluster: name.to_owned(),
            reason: format!(
                "Cluster {NAMESPACE}/{name} exists and was not imported (no label {IMPORTED_LABEL}); an import never takes over a cluster something else manages"
            ),
        });
    }
    let contract = match &live {
        Some(_) => found_contract,
        None if mgmt.served("cluster.x-k8s.io/v1beta2").await?.is_some() => Contract::V1Beta2,
        None => Contract::V1Beta1,
    };
    let endpoint = &observation.endpoint;
    let infra = json!({
        "apiVersion": INFRA_API_VERSION,
        "kind": "AWSSnowCluster",
        "metadata": {
            "name": name, "namespace": NAMESPACE, "labels": labels(name),
            "annotations": {MANAGED_BY_ANNOTATION: MANAGED_BY_VALUE},
        },
        "spec": {"controlPlaneEndpoint": {"host": endpoint.host, "port": endpoint.port}},
    });
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    mgmt.apply_as(&namespace, MANAGER).await?;
    mgmt.apply_as(&namespace, MANAGER).await?;
    // The annotation first: from its first version the object is one CAPAS must skip.
    let written = mgmt.apply_as(&infra, MANAGER).await?;
    // The external system sets the ready status (the contract); the v1beta1 infra contract's
    // field is `status.ready`.
    mgmt.patch_status(&written, &json!({"ready": true}), MANAGER)
        .await?;
    let secret_value =
        base64::engine::general_purpose::STANDARD.encode(kubeconfig.0.text().as_bytes());
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("{name}-kubeconfig"), "namespace": NAMESPACE, "labels": labels(name)},
        "type": "cluster.x-k8s.io/secret",
        "data": {"value": secret_value},
    });
    mgmt.apply_as(&secret, MANAGER).await?;
    let observed =
        serde_json::to_string_pretty(observation).map_err(|e| LifecycleError::Document {
            what: "the observation".into(),
            reason: format!("does not serialize: {e}"),
        })?;
    let config_map = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": format!("{name}{OBSERVED_SUFFIX}"), "namespace": NAMESPACE,
            "labels": labels(name),
            "annotations": {"snowctl.anywhere.eks.amazonaws.com/observed": "observed state of an imported cluster, not a desired state"},
        },
        "data": {OBSERVED_KEY: observed},
    });
    mgmt.apply_as(&config_map, MANAGER).await?;
    mgmt.apply_as(&cluster_object(contract, name, endpoint), MANAGER)
        .await?;
    Ok(Reflected {
        contract,
        refreshed: live.is_some(),
    })
}

/// The observation recorded for imported cluster `name`, when there is one.
pub async fn observed(
    mgmt: &Management,
    name: &str,
) -> Result<Option<Observation>, LifecycleError> {
    let cm = mgmt
        .get(
            "v1",
            "ConfigMap",
            Some(NAMESPACE),
            &format!("{name}{OBSERVED_SUFFIX}"),
        )
        .await?;
    Ok(cm
        .as_ref()
        .and_then(|c| c["data"][OBSERVED_KEY].as_str())
        .and_then(|t| serde_json::from_str(t).ok()))
}

/// Removes the records of imported cluster `name` and nothing else: the Cluster (Cluster API
/// removes the AWSSnowCluster it owns; no provider acts on it), then the AWSSnowCluster if still
/// there, the kubeconfig Secret and the observation. Refuses a cluster that was not imported.
/// Returns `Kind/name` of what was removed.
pub async fn remove_records(
    mgmt: &Management,
    name: &str,
    wait: &crate::WaitOptions,
) -> Result<Vec<String>, LifecycleError> {
    let (contract, live) = find_cluster(mgmt, name, None).await?;
    if let Some(cluster) = &live
        && !is_imported(cluster)
    {
        return Err(LifecycleError::NotImported {
            cluster: name.to_owned(),
            reason: format!(
                "Cluster {NAMESPACE}/{name} was not imported: only an imported cluster's records are removed on their own"
            ),
        });
    }
    let mut removed = Vec::new();
    if live.is_some() {
        delete_cluster(mgmt, contract, name, wait, &mut |_| {}).await?;
        removed.push(format!("Cluster/{name}"));
    }
    let selector = format!("{IMPORTED_LABEL}=true,{}", cluster_selector(name));
    for (api_version, kind) in [
        (INFRA_API_VERSION, "AWSSnowCluster"),
        ("v1", "Secret"),
        ("v1", "ConfigMap"),
    ] {
        for object in mgmt
            .list(api_version, kind, Some(NAMESPACE), Some(&selector))
            .await?
        {
            let Some(object_name) = object["metadata"]["name"].as_str() else {
                continue;
            };
            if mgmt
                .delete(api_version, kind, Some(NAMESPACE), object_name)
                .await?
            {
                removed.push(format!("{kind}/{object_name}"));
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_comes_from_the_server_url() {
        let e = endpoint_of("https://127.0.0.9:6443/");
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.9", 6443));
        let e = endpoint_of("https://api.example");
        assert_eq!((e.host.as_str(), e.port), ("api.example", 443));
        let e = endpoint_of("https://[fd00::1]:8443");
        assert_eq!((e.host.as_str(), e.port), ("fd00::1", 8443));
    }

    #[test]
    fn a_node_is_read_with_roles_addresses_and_readiness() {
        let node = json!({
            "metadata": {"name": "cp-1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"providerID": "aws-snow:////s.i-1"},
            "status": {
                "nodeInfo": {"kubeletVersion": "v1.31.2-eks-1-31-9", "osImage": "Ubuntu 22.04"},
                "addresses": [{"type": "InternalIP", "address": "192.168.1.11"}, {"type": "Hostname", "address": "cp-1"}],
                "conditions": [{"type": "Ready", "status": "True"}],
            }
        });
        let n = node_of(&node);
        assert!(n.is_control_plane() && n.ready);
        assert_eq!(n.addresses, ["192.168.1.11"]);
        assert_eq!(n.provider_id.as_deref(), Some("aws-snow:////s.i-1"));
        let worker = node_of(
            &json!({"metadata": {"name": "w"}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
        );
        assert!(!worker.is_control_plane() && !worker.ready);
    }

    #[test]
    fn imported_is_the_label_on_the_cluster() {
        assert!(is_imported(
            &json!({"metadata": {"labels": {IMPORTED_LABEL: "true"}}})
        ));
        assert!(!is_imported(&json!({"metadata": {"labels": {}}})));
    }
}
