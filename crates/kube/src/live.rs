//! A Snow cluster's objects as they are now on the management cluster: the live read layer every
//! operation and every read-only view (describe, plan, support bundle, import, standing) reads
//! through.

use crate::{KubeError, Management, WaitOptions, kubeconfig::Published};
use base64::Engine as _;
use capi_render::{
    Contract, NAMESPACE,
    contract::{ETCD_API_VERSION, INFRA_API_VERSION},
    upgrade::Existing,
};
use serde_json::Value;
use snow_api::names::ref_name;
use std::time::Instant;

/// The live Cluster, control plane, etcd and worker deployments of one cluster, and the
/// templates they use.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// The Cluster API Cluster.
    pub cluster: Option<Value>,
    /// The KubeadmControlPlane.
    pub control_plane: Option<Value>,
    /// The EtcdadmCluster `<cluster>-etcd`.
    pub etcd: Option<Value>,
    /// The MachineDeployments labelled with the cluster.
    pub deployments: Vec<Value>,
    /// The objects above and the templates they use, for rendering against them.
    pub existing: Existing,
}

/// The KCP's machine template reference (v1beta2 nests it under `spec`).
pub fn control_plane_template(kcp: &Value) -> Option<&str> {
    let template = &kcp["spec"]["machineTemplate"];
    ref_name(&template["spec"]["infrastructureRef"])
        .or_else(|| ref_name(&template["infrastructureRef"]))
}

/// A MachineDeployment's `(machine template, bootstrap config template)`.
pub fn deployment_templates(md: &Value) -> (Option<&str>, Option<&str>) {
    let spec = &md["spec"]["template"]["spec"];
    (
        ref_name(&spec["infrastructureRef"]),
        ref_name(&spec["bootstrap"]["configRef"]),
    )
}

/// `cluster.x-k8s.io/cluster-name=<cluster>`.
pub fn cluster_selector(cluster: &str) -> String {
    format!("cluster.x-k8s.io/cluster-name={cluster}")
}

impl Live {
    /// Reads what is there for `cluster` under `contract`.
    pub async fn read(
        mgmt: &Management,
        cluster: &str,
        contract: Contract,
    ) -> Result<Live, KubeError> {
        let ns = Some(NAMESPACE);
        let core = contract.api_version("cluster.x-k8s.io");
        let mut live = Live {
            cluster: mgmt.get(&core, "Cluster", ns, cluster).await?,
            control_plane: mgmt
                .get(
                    &contract.api_version("controlplane.cluster.x-k8s.io"),
                    "KubeadmControlPlane",
                    ns,
                    cluster,
                )
                .await?,
            etcd: mgmt
                .get(
                    ETCD_API_VERSION,
                    "EtcdadmCluster",
                    ns,
                    &format!("{cluster}-etcd"),
                )
                .await?,
            deployments: mgmt
                .list(
                    &core,
                    "MachineDeployment",
                    ns,
                    Some(&cluster_selector(cluster)),
                )
                .await?,
            existing: Existing::default(),
        };
        let mut machine_templates: Vec<String> = Vec::new();
        let mut config_templates: Vec<String> = Vec::new();
        if let Some(name) = live.control_plane.as_ref().and_then(control_plane_template) {
            machine_templates.push(name.to_owned());
        }
        if let Some(name) = live
            .etcd
            .as_ref()
            .and_then(|e| ref_name(&e["spec"]["infrastructureTemplate"]))
        {
            machine_templates.push(name.to_owned());
        }
        for md in &live.deployments {
            let (machine, config) = deployment_templates(md);
            machine_templates.extend(machine.map(str::to_owned));
            config_templates.extend(config.map(str::to_owned));
        }
        let bootstrap = contract.api_version("bootstrap.cluster.x-k8s.io");
        let mut existing = Existing::default();
        for name in machine_templates {
            if let Some(t) = mgmt
                .get(INFRA_API_VERSION, "AWSSnowMachineTemplate", ns, &name)
                .await?
            {
                existing.insert(t);
            }
        }
        for name in config_templates {
            if let Some(t) = mgmt
                .get(&bootstrap, "KubeadmConfigTemplate", ns, &name)
                .await?
            {
                existing.insert(t);
            }
        }
        for object in live
            .control_plane
            .iter()
            .chain(&live.etcd)
            .chain(&live.deployments)
        {
            existing.insert(object.clone());
        }
        live.existing = existing;
        Ok(live)
    }
}

/// The Cluster API contract the live Cluster `cluster` answers to, with the Cluster when it is
/// there; `recorded` (the inventory's contract) is tried first.
pub async fn find_cluster(
    mgmt: &Management,
    cluster: &str,
    recorded: Option<&str>,
) -> Result<(Contract, Option<serde_json::Value>), KubeError> {
    let mut order = vec![Contract::V1Beta2, Contract::V1Beta1];
    if recorded == Some("v1beta1") {
        order.reverse();
    }
    for contract in &order {
        let core = contract.api_version("cluster.x-k8s.io");
        if let Some(found) = mgmt.get(&core, "Cluster", Some(NAMESPACE), cluster).await? {
            return Ok((*contract, Some(found)));
        }
    }
    Ok((order[0], None))
}

/// The workload kubeconfig Cluster API publishes in `<cluster>-kubeconfig` (key `value`), when
/// the Secret is there; refused unless it authenticates with inline credentials only
/// ([`Published`]).
pub async fn published_kubeconfig(
    mgmt: &Management,
    cluster: &str,
) -> Result<Option<Published>, KubeError> {
    let name = format!("{cluster}-kubeconfig");
    let Some(secret) = mgmt.get("v1", "Secret", Some(NAMESPACE), &name).await? else {
        return Ok(None);
    };
    let encoded = secret["data"]["value"].as_str().unwrap_or_default();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| KubeError::Api {
            action: "read",
            object: format!("Secret/{name}"),
            code: 200,
            message: format!("data.value is not base64: {e}"),
        })?;
    let text = String::from_utf8(bytes).map_err(|_| KubeError::Api {
        action: "read",
        object: format!("Secret/{name}"),
        code: 200,
        message: "data.value is not UTF-8 text".into(),
    })?;
    Published::parse(&format!("{NAMESPACE}/{name}"), text).map(Some)
}

/// The workload kubeconfig CAPI publishes in `<cluster>-kubeconfig` once the control plane is
/// up; waits for it within the control-plane timeout.
pub async fn workload_kubeconfig(
    mgmt: &Management,
    cluster: &str,
    opts: &WaitOptions,
) -> Result<Published, KubeError> {
    let name = format!("{cluster}-kubeconfig");
    let start = Instant::now();
    loop {
        if let Some(kubeconfig) = published_kubeconfig(mgmt, cluster).await? {
            return Ok(kubeconfig);
        }
        if let Some(limit) = opts.timeouts.control_plane
            && start.elapsed() >= limit
        {
            return Err(KubeError::Timeout {
                object: format!("Secret {NAMESPACE}/{name}"),
                condition: "the Secret exists".into(),
                detail: "Cluster API has not published the workload kubeconfig".into(),
                after: crate::wait::human(limit),
            });
        }
        tokio::time::sleep(opts.poll).await;
    }
}

/// Cluster API's externally-managed annotation's value on a cluster snowctl imported.
pub const MANAGED_BY_VALUE: &str = "snowctl";
/// The label on everything an import writes; on a Cluster it marks the cluster as imported.
pub const IMPORTED_LABEL: &str = "snowctl.anywhere.eks.amazonaws.com/imported";

/// Whether a Cluster API Cluster was imported (it carries [`IMPORTED_LABEL`]).
pub fn is_imported(cluster: &Value) -> bool {
    cluster["metadata"]["labels"][IMPORTED_LABEL] == "true"
}
