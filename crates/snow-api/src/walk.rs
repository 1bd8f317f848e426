//! The walk from a declared EKS Anywhere Cluster object (JSON, as read from an API server) to the
//! objects it references: its SnowDatacenterConfig, its SnowMachineConfigs, their SnowIPPools,
//! its identity providers, its FluxConfig and the datacenter's identity Secret. Pure: each step takes the object
//! already read and names the next ones; the caller reads them (the controller's sources with
//! GETs, its caches from their stores).

use crate::names::ref_name;
use serde_json::Value;
use std::collections::BTreeSet;

/// What a Cluster's `spec` references by name, in its own namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterRefs {
    /// The SnowDatacenterConfig of `datacenterRef`.
    pub datacenter: Option<String>,
    /// The SnowMachineConfigs of the control plane, the external etcd and every worker group,
    /// each once, sorted.
    pub machine_configs: BTreeSet<String>,
    /// `identityProviderRefs` as `(kind, name)`, those with both.
    pub identity_providers: Vec<(String, String)>,
    /// The FluxConfig `gitOpsRef` names (a reference of another kind is not followed: the
    /// spec's check says what is wrong with it).
    pub flux_config: Option<String>,
}

/// The objects `cluster`'s spec references.
pub fn cluster_refs(cluster: &Value) -> ClusterRefs {
    let spec = &cluster["spec"];
    let mut machine_configs = BTreeSet::new();
    for group in [
        &spec["controlPlaneConfiguration"],
        &spec["externalEtcdConfiguration"],
    ]
    .into_iter()
    .chain(
        spec["workerNodeGroupConfigurations"]
            .as_array()
            .into_iter()
            .flatten(),
    ) {
        machine_configs.extend(ref_name(&group["machineGroupRef"]).map(str::to_owned));
    }
    let identity_providers = spec["identityProviderRefs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["kind"].as_str()?.to_owned(), ref_name(p)?.to_owned())))
        .collect();
    ClusterRefs {
        datacenter: ref_name(&spec["datacenterRef"]).map(str::to_owned),
        machine_configs,
        identity_providers,
        flux_config: (spec["gitOpsRef"]["kind"] == crate::crd::Kind::FluxConfig.as_str())
            .then(|| ref_name(&spec["gitOpsRef"]).map(str::to_owned))
            .flatten(),
    }
}

/// The SnowIPPools a SnowMachineConfig's direct network interfaces name.
pub fn ip_pools(machine_config: &Value) -> impl Iterator<Item = &str> {
    machine_config["spec"]["network"]["directNetworkInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|dni| ref_name(&dni["ipPoolRef"]))
}

/// The identity Secret's name a SnowDatacenterConfig names; an empty `identityRef` defaults as
/// in the CLI (`<datacenter>-snow-credentials`).
pub fn identity_secret(datacenter: &Value) -> String {
    ref_name(&datacenter["spec"]["identityRef"])
        .map(str::to_owned)
        .unwrap_or_else(|| {
            crate::defaults::default_identity_secret_name(
                datacenter["metadata"]["name"].as_str().unwrap_or_default(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cluster_names_its_datacenter_machine_configs_and_identity_providers() {
        let cluster = json!({"spec": {
            "datacenterRef": {"kind": "SnowDatacenterConfig", "name": "dc"},
            "controlPlaneConfiguration": {"machineGroupRef": {"name": "cp"}},
            "externalEtcdConfiguration": {"machineGroupRef": {"name": "etcd"}},
            "workerNodeGroupConfigurations": [
                {"machineGroupRef": {"name": "w"}},
                {"machineGroupRef": {"name": "cp"}},
                {"machineGroupRef": {"name": ""}},
            ],
            "identityProviderRefs": [
                {"kind": "OIDCConfig", "name": "oidc"},
                {"name": "no-kind"},
            ],
            "gitOpsRef": {"kind": "FluxConfig", "name": "fleet"},
        }});
        let refs = cluster_refs(&cluster);
        assert_eq!(refs.datacenter.as_deref(), Some("dc"));
        assert_eq!(
            refs.machine_configs
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["cp", "etcd", "w"]
        );
        assert_eq!(
            refs.identity_providers,
            [("OIDCConfig".to_owned(), "oidc".to_owned())]
        );
        assert_eq!(refs.flux_config.as_deref(), Some("fleet"));
        assert_eq!(cluster_refs(&json!({})), ClusterRefs::default());
        let legacy = json!({"spec": {"gitOpsRef": {"kind": "GitOpsConfig", "name": "old"}}});
        assert_eq!(cluster_refs(&legacy).flux_config, None);
    }

    #[test]
    fn a_machine_config_names_its_pools_and_a_datacenter_its_secret() {
        let m = json!({"spec": {"network": {"directNetworkInterfaces": [
            {"ipPoolRef": {"name": "p1"}}, {"dhcp": true}, {"ipPoolRef": {"name": "p2"}},
        ]}}});
        assert_eq!(ip_pools(&m).collect::<Vec<_>>(), ["p1", "p2"]);
        let named = json!({"metadata": {"name": "dc"}, "spec": {"identityRef": {"name": "s"}}});
        assert_eq!(identity_secret(&named), "s");
        let unnamed = json!({"metadata": {"name": "dc"}, "spec": {}});
        assert_eq!(identity_secret(&unnamed), "dc-snow-credentials");
    }
}
