//! The cluster's objects as they are now on the management cluster.

use super::{LifecycleError, Management};
use capi_render::{
    Contract, NAMESPACE,
    contract::{ETCD_API_VERSION, INFRA_API_VERSION},
    upgrade::Existing,
};
use serde_json::Value;
use snow_api::names::ref_name;

/// The live Cluster, control plane, etcd and worker deployments of one cluster, and the
/// templates they use.
#[derive(Debug, Clone, Default)]
pub(crate) struct Live {
    pub cluster: Option<Value>,
    pub control_plane: Option<Value>,
    pub etcd: Option<Value>,
    pub deployments: Vec<Value>,
    pub existing: Existing,
}

/// The KCP's machine template reference (v1beta2 nests it under `spec`).
pub(crate) fn control_plane_template(kcp: &Value) -> Option<&str> {
    let template = &kcp["spec"]["machineTemplate"];
    ref_name(&template["spec"]["infrastructureRef"])
        .or_else(|| ref_name(&template["infrastructureRef"]))
}

/// A MachineDeployment's `(machine template, bootstrap config template)`.
pub(crate) fn deployment_templates(md: &Value) -> (Option<&str>, Option<&str>) {
    let spec = &md["spec"]["template"]["spec"];
    (
        ref_name(&spec["infrastructureRef"]),
        ref_name(&spec["bootstrap"]["configRef"]),
    )
}

/// `cluster.x-k8s.io/cluster-name=<cluster>`.
pub(crate) fn cluster_selector(cluster: &str) -> String {
    format!("cluster.x-k8s.io/cluster-name={cluster}")
}

impl Live {
    /// Reads what is there for `cluster` under `contract`.
    pub(crate) async fn read(
        mgmt: &Management,
        cluster: &str,
        contract: Contract,
    ) -> Result<Live, LifecycleError> {
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
