//! `anywhere.eks.amazonaws.com/v1alpha1` `Cluster`: every field of the EKS Anywhere CRD, so a
//! spec written for EKS Anywhere reads here unchanged. Snow uses only some of them; the rules for
//! those live in `validate`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::{NamedRef, preserve_unknown_fields, preserve_unknown_object};

/// The desired state of an EKS Anywhere cluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "Cluster",
    plural = "clusters",
    namespaced,
    status = "ClusterStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// The Bundles object that pins component versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundles_ref: Option<BundlesRef>,
    /// Pod, service and node networking, and the CNI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_network: Option<ClusterNetwork>,
    /// The control plane machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_configuration: Option<ControlPlaneConfiguration>,
    /// The provider datacenter object; `SnowDatacenterConfig` for Snow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datacenter_ref: Option<NamedRef>,
    /// The EKS Anywhere version the cluster runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eksa_version: Option<String>,
    /// Encryption of resources at rest in etcd (not supported on Snow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd_encryption: Option<Vec<EtcdEncryption>>,
    /// External (unstacked) etcd machines; absent means stacked etcd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_etcd_configuration: Option<ExternalEtcdConfiguration>,
    /// The GitOps configuration object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_ops_ref: Option<NamedRef>,
    /// OIDC and AWS IAM authenticator objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_provider_refs: Option<Vec<NamedRef>>,
    /// The Kubernetes version, `1.NN`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// License token for extended support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_token: Option<String>,
    /// Machine health check settings for all machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheck>,
    /// The management cluster; the cluster itself when self-managed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub management_cluster: Option<ManagementCluster>,
    /// Curated packages controller settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<PackageConfiguration>,
    /// IAM roles for service accounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_iam_config: Option<PodIamConfig>,
    /// HTTP(S) proxy for the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_configuration: Option<ProxyConfiguration>,
    /// A local registry mirror for all images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_mirror_configuration: Option<RegistryMirrorConfiguration>,
    /// The worker node groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_node_group_configurations: Option<Vec<WorkerNodeGroupConfiguration>>,
}

/// A reference to a Bundles object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundlesRef {
    /// API version of the Bundles object.
    pub api_version: String,
    /// Name of the Bundles object.
    pub name: String,
    /// Namespace of the Bundles object.
    pub namespace: String,
}

/// Cluster networking.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetwork {
    /// Deprecated: the CNI name; use `cniConfig`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cni: Option<String>,
    /// The CNI and its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cni_config: Option<CniConfig>,
    /// DNS settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<Dns>,
    /// Node pod-CIDR settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Nodes>,
    /// The pod CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<CidrBlocks>,
    /// The service CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<CidrBlocks>,
}

/// A list of CIDR blocks; EKS Anywhere accepts exactly one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CidrBlocks {
    /// The CIDR blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_blocks: Option<Vec<String>>,
}

/// The CNI choice.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CniConfig {
    /// Cilium (the only CNI for Snow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cilium: Option<CiliumConfig>,
    /// kindnetd (Docker provider only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kindnetd: Option<KindnetdConfig>,
}

/// Cilium settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CiliumConfig {
    /// Whether Cilium removes other CNI configuration files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cni_exclusive: Option<bool>,
    /// Interfaces on which to masquerade egress traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_masquerade_interfaces: Option<String>,
    /// Complete Helm values; overrides the other fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_fields")]
    pub helm_values: Option<serde_json::Value>,
    /// IPv4 native routing CIDR.
    #[serde(
        default,
        rename = "ipv4NativeRoutingCIDR",
        skip_serializing_if = "Option::is_none"
    )]
    pub ipv4_native_routing_cidr: Option<String>,
    /// IPv6 native routing CIDR.
    #[serde(
        default,
        rename = "ipv6NativeRoutingCIDR",
        skip_serializing_if = "Option::is_none"
    )]
    pub ipv6_native_routing_cidr: Option<String>,
    /// Policy enforcement mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_enforcement_mode: Option<String>,
    /// Routing mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_mode: Option<String>,
    /// Leave Cilium alone on upgrade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_upgrade: Option<bool>,
}

/// kindnetd settings (none).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct KindnetdConfig {}

/// DNS settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Dns {
    /// The resolv.conf for the kubelet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolv_conf: Option<ResolvConf>,
}

/// A resolv.conf path.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolvConf {
    /// The path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Node pod-CIDR settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Nodes {
    /// The mask size of each node's pod CIDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr_mask_size: Option<i64>,
}

/// The control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneConfiguration {
    /// Extra kube-apiserver flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server_extra_args: Option<BTreeMap<String, String>>,
    /// The kube-apiserver audit policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_policy_content: Option<String>,
    /// Extra subject alternative names for the API server certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_sans: Option<Vec<String>>,
    /// Number of control plane machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// The API server endpoint (the kube-vip address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
    /// Kubelet settings for control plane nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub kubelet_configuration: Option<serde_json::Value>,
    /// Node labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The SnowMachineConfig of the control plane machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_group_ref: Option<NamedRef>,
    /// Machine health check settings for the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheck>,
    /// Skip admission webhooks for system resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_admission_for_system_resources: Option<bool>,
    /// Do not deploy the load balancer (kube-vip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_load_balancer_deployment: Option<bool>,
    /// Node taints: absent means the default control-plane taint, empty means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
    /// How control plane machines are replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_rollout_strategy: Option<ControlPlaneUpgradeRolloutStrategy>,
}

/// An endpoint host.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct Endpoint {
    /// The IP address.
    pub host: String,
}

/// A node taint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: String,
    /// The taint key.
    pub key: String,
    /// When the taint was added (NoExecute only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::date_time")]
    pub time_added: Option<String>,
    /// The taint value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Control plane rollout.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneUpgradeRolloutStrategy {
    /// Rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<ControlPlaneRollingUpdateParams>,
    /// `RollingUpdate` (Snow) or `InPlace` (bare metal only).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// Control plane rolling update parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneRollingUpdateParams {
    /// Extra machines during a rollout: 0 or 1.
    pub max_surge: i64,
}

/// Machine health check settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheck {
    /// How many machines may be unhealthy before remediation stops (number or percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unhealthy: Option<IntOrString>,
    /// How long a node may take to join.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout: Option<String>,
    /// How long a machine may be unhealthy before it is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_machine_timeout: Option<String>,
}

/// Etcd encryption settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct EtcdEncryption {
    /// Encryption providers.
    pub providers: Vec<EtcdEncryptionProvider>,
    /// Resources to encrypt.
    pub resources: Vec<String>,
}

/// One etcd encryption provider.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct EtcdEncryptionProvider {
    /// The KMS plugin.
    pub kms: KmsConfig,
}

/// A KMS plugin.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KmsConfig {
    /// Cache size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cachesize: Option<i32>,
    /// Plugin name.
    pub name: String,
    /// Plugin socket.
    pub socket_listen_address: String,
    /// Call timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// External etcd machines.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalEtcdConfiguration {
    /// Number of etcd machines (odd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// The SnowMachineConfig of the etcd machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_group_ref: Option<NamedRef>,
}

/// The management cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ManagementCluster {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Curated packages settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageConfiguration {
    /// The package controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<PackageControllerConfig>,
    /// The package cron job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cronjob: Option<PackageCronJob>,
    /// Disable curated packages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
}

/// The package controller.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageControllerConfig {
    /// Image digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Disable its webhooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_webhooks: Option<bool>,
    /// Extra environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
    /// Image repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Resource requests and limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<PackageControllerResources>,
    /// Image tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// Resource requests and limits.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageControllerResources {
    /// Limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<CpuMemory>,
    /// Requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<CpuMemory>,
}

/// CPU and memory quantities.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct CpuMemory {
    /// CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// The package cron job.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageCronJob {
    /// Image digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Disable it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
    /// Image repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Image tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// IAM roles for service accounts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodIamConfig {
    /// The service account issuer URL.
    pub service_account_issuer: String,
}

/// Proxy settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyConfiguration {
    /// HTTP proxy, a URL or `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_proxy: Option<String>,
    /// HTTPS proxy, a URL or `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https_proxy: Option<String>,
    /// Hosts and CIDRs that bypass the proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<Vec<String>>,
}

/// Registry mirror settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistryMirrorConfiguration {
    /// The mirror requires authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authenticate: Option<bool>,
    /// The mirror's CA certificate (PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert_content: Option<String>,
    /// The mirror host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Skip TLS verification (not with Bottlerocket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_skip_verify: Option<bool>,
    /// Per-registry namespaces on the mirror.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_namespaces: Option<Vec<OciNamespace>>,
    /// The mirror port (default 443).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
}

/// A registry and its namespace on the mirror.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct OciNamespace {
    /// The namespace on the mirror.
    pub namespace: String,
    /// The upstream registry.
    pub registry: String,
}

/// One worker node group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerNodeGroupConfiguration {
    /// Cluster autoscaler bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling_configuration: Option<AutoscalingConfiguration>,
    /// Number of machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// Failure domains (not used by Snow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<Vec<String>>,
    /// Kubelet settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub kubelet_configuration: Option<serde_json::Value>,
    /// The group's Kubernetes version, when it differs from the cluster's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Node labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The SnowMachineConfig of the group's machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_group_ref: Option<NamedRef>,
    /// Machine health check settings for the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheck>,
    /// The group name, unique in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Node taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
    /// How machines are replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_rollout_strategy: Option<WorkerUpgradeRolloutStrategy>,
}

/// Cluster autoscaler bounds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingConfiguration {
    /// Upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_count: Option<i64>,
    /// Lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<i64>,
}

/// Worker rollout.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerUpgradeRolloutStrategy {
    /// Rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<WorkerRollingUpdateParams>,
    /// `RollingUpdate` (Snow) or `InPlace` (bare metal only).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// Worker rolling update parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerRollingUpdateParams {
    /// Extra machines during a rollout.
    pub max_surge: i64,
    /// Machines that may be unavailable during a rollout.
    pub max_unavailable: i64,
}

/// What the EKS Anywhere controller reports.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// Generation whose children were reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children_reconciled_generation: Option<i64>,
    /// Certificate expiry per machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_certificate_info: Option<Vec<ClusterCertificateInfo>>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The EKS-D release in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eksd_release_ref: Option<EksdReleaseRef>,
    /// Why reconciliation failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Machine-readable failure reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Last observed generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Last reconciled generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_generation: Option<i64>,
}

/// Certificate expiry of one machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCertificateInfo {
    /// Days until expiry.
    pub expires_in_days: i64,
    /// The machine.
    pub machine: String,
}

/// A Cluster API style condition.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// When the status last changed.
    #[schemars(schema_with = "super::date_time")]
    pub last_transition_time: String,
    /// Human-readable detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Error, Warning or Info.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// True, False or Unknown.
    pub status: String,
    /// The condition type.
    #[serde(rename = "type")]
    pub type_: String,
}

/// A reference to the EKS-D release object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EksdReleaseRef {
    /// API version.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
}
