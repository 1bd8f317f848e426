//! Defaults, as EKS Anywhere's CLI applies them (as EKS Anywhere's CLI and its SnowMachineConfig defaults apply them). A separate, visible
//! step: each default that fills a field is returned, so `validate` can show what it filled.

use crate::{
    crd::Kind,
    gitops,
    spec::{ClusterSpec, object_id},
    types::NamedRef,
};
use serde::Serialize;

/// The instance type a machine config gets when it names none.
pub const DEFAULT_INSTANCE_TYPE: &str = "sbe-c.large";
/// The physical network connector a machine config gets when it names none.
pub const DEFAULT_PHYSICAL_NETWORK_CONNECTOR: &str = "SFP_PLUS";
/// The name of the first worker group when it has none.
pub const DEFAULT_FIRST_WORKER_GROUP_NAME: &str = "md-0";
/// The registry mirror port when none is given.
pub const DEFAULT_REGISTRY_MIRROR_PORT: &str = "443";
/// Annotation on the control-plane machine config.
pub const CONTROL_PLANE_ANNOTATION: &str = "anywhere.eks.amazonaws.com/control-plane";
/// Annotation on the etcd machine config.
pub const ETCD_ANNOTATION: &str = "anywhere.eks.amazonaws.com/etcd";

/// One default that filled a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppliedDefault {
    /// `Kind/name`.
    pub object: String,
    /// The field path.
    pub field: String,
    /// The value it now has, as YAML-ish text.
    pub value: String,
}

/// The identity Secret name EKS Anywhere expects for a datacenter.
pub fn default_identity_secret_name(datacenter: &str) -> String {
    format!("{datacenter}-snow-credentials")
}

impl ClusterSpec {
    /// The management cluster's name: `spec.managementCluster.name`, else the cluster's own.
    pub fn management_cluster_name(&self) -> String {
        (self.cluster.spec.management_cluster.as_ref())
            .and_then(|m| m.name.as_deref())
            .filter(|n| !n.is_empty())
            .unwrap_or(self.name())
            .to_owned()
    }

    /// Whether the cluster manages itself (it is its own management cluster).
    pub fn is_self_managed(&self) -> bool {
        self.management_cluster_name() == self.name()
    }

    /// Applies the defaults and returns what was filled, in a stable order.
    pub fn apply_defaults(&mut self) -> Vec<AppliedDefault> {
        let mut applied = Vec::new();
        let mut note = |object: String, field: &str, value: String| {
            applied.push(AppliedDefault {
                object,
                field: field.to_owned(),
                value,
            });
        };
        let cluster_id = object_id("Cluster", self.name());

        // Datacenter identityRef: only when both kind and name are empty.
        if let Some(dc) = self.datacenter.as_mut() {
            let name = dc.metadata.name.clone().unwrap_or_default();
            let identity = dc.spec.identity_ref.get_or_insert_with(NamedRef::default);
            if identity.kind().is_empty() && identity.name().is_empty() {
                *identity = NamedRef::new("Secret", &default_identity_secret_name(&name));
                note(
                    object_id(Kind::SnowDatacenterConfig.as_str(), &name),
                    "spec.identityRef",
                    format!(
                        "{{kind: Secret, name: {}}}",
                        default_identity_secret_name(&name)
                    ),
                );
            }
        }

        // Machine configs: instance type and connector (CLI and mutating webhook).
        for (name, machine) in &mut self.machine_configs {
            let id = object_id(Kind::SnowMachineConfig.as_str(), name);
            if machine
                .spec
                .instance_type
                .as_deref()
                .unwrap_or("")
                .is_empty()
            {
                machine.spec.instance_type = Some(DEFAULT_INSTANCE_TYPE.into());
                note(
                    id.clone(),
                    "spec.instanceType",
                    DEFAULT_INSTANCE_TYPE.into(),
                );
            }
            if machine
                .spec
                .physical_network_connector
                .as_deref()
                .unwrap_or("")
                .is_empty()
            {
                machine.spec.physical_network_connector =
                    Some(DEFAULT_PHYSICAL_NETWORK_CONNECTOR.into());
                note(
                    id,
                    "spec.physicalNetworkConnector",
                    DEFAULT_PHYSICAL_NETWORK_CONNECTOR.into(),
                );
            }
        }

        // Role annotations on the control-plane and etcd machine configs.
        let cp_ref = self
            .cluster
            .spec
            .control_plane_configuration
            .as_ref()
            .and_then(|cp| cp.machine_group_ref.as_ref())
            .map(|r| r.name().to_owned());
        let etcd_ref = self
            .cluster
            .spec
            .external_etcd_configuration
            .as_ref()
            .and_then(|e| e.machine_group_ref.as_ref())
            .map(|r| r.name().to_owned());
        for (reference, annotation) in [
            (cp_ref, CONTROL_PLANE_ANNOTATION),
            (etcd_ref, ETCD_ANNOTATION),
        ] {
            let Some(machine) = reference.and_then(|name| self.machine_configs.get_mut(&name))
            else {
                continue;
            };
            let annotations = machine
                .metadata
                .annotations
                .get_or_insert_with(Default::default);
            if annotations.get(annotation).map(String::as_str) != Some("true") {
                annotations.insert(annotation.to_owned(), "true".to_owned());
                let id = object_id(
                    Kind::SnowMachineConfig.as_str(),
                    machine.metadata.name.as_deref().unwrap_or(""),
                );
                note(
                    id,
                    &format!("metadata.annotations[{annotation:?}]"),
                    "\"true\"".into(),
                );
            }
        }

        // Worker groups: the first group's name, and counts.
        if let Some(groups) = self.cluster.spec.worker_node_group_configurations.as_mut() {
            for (i, group) in groups.iter_mut().enumerate() {
                if i == 0 && group.name.as_deref().unwrap_or("").is_empty() {
                    group.name = Some(DEFAULT_FIRST_WORKER_GROUP_NAME.into());
                    note(
                        cluster_id.clone(),
                        "spec.workerNodeGroupConfigurations[0].name",
                        DEFAULT_FIRST_WORKER_GROUP_NAME.into(),
                    );
                }
                if group.count.is_none() {
                    let count = group
                        .autoscaling_configuration
                        .as_ref()
                        .and_then(|a| a.min_count)
                        .unwrap_or(1);
                    group.count = Some(count);
                    note(
                        cluster_id.clone(),
                        &format!("spec.workerNodeGroupConfigurations[{i}].count"),
                        count.to_string(),
                    );
                }
            }
        }

        // Registry mirror port.
        if let Some(mirror) = self.cluster.spec.registry_mirror_configuration.as_mut()
            && mirror.port.as_deref().unwrap_or("").is_empty()
        {
            mirror.port = Some(DEFAULT_REGISTRY_MIRROR_PORT.into());
            note(
                cluster_id,
                "spec.registryMirrorConfiguration.port",
                DEFAULT_REGISTRY_MIRROR_PORT.into(),
            );
        }

        // FluxConfig: EKS Anywhere's SetDefaults (branch, namespace), its cluster path default
        // (`clusters/<management cluster>`, for a workload cluster too), and the key algorithm
        // an empty value means (`ecdsa`).
        let path = gitops::default_cluster_config_path(&self.management_cluster_name());
        for (name, flux) in &mut self.flux_configs {
            let id = object_id(Kind::FluxConfig.as_str(), name);
            let s = &mut flux.spec;
            let mut fill = |field: &mut Option<String>, path: &str, value: &str| {
                if field.as_deref().unwrap_or("").is_empty() {
                    *field = Some(value.to_owned());
                    note(id.clone(), path, value.to_owned());
                }
            };
            fill(&mut s.branch, "spec.branch", gitops::DEFAULT_BRANCH);
            fill(&mut s.cluster_config_path, "spec.clusterConfigPath", &path);
            fill(
                &mut s.system_namespace,
                "spec.systemNamespace",
                gitops::DEFAULT_SYSTEM_NAMESPACE,
            );
            // An https repository authenticates without an SSH key.
            if let Some(git) =
                (s.git.as_mut()).filter(|g| !g.repository_url.starts_with("https://"))
            {
                fill(
                    &mut git.ssh_key_algorithm,
                    "spec.git.sshKeyAlgorithm",
                    gitops::SshKeyAlgorithm::default().as_str(),
                );
            }
        }
        applied
    }
}
