//! The Snow provider kinds: `SnowDatacenterConfig`, `SnowMachineConfig` and `SnowIPPool`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::NamedRef;

/// Where a Snow cluster's device credentials come from.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "SnowDatacenterConfig",
    plural = "snowdatacenterconfigs",
    namespaced,
    status = "SnowDatacenterConfigStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct SnowDatacenterConfigSpec {
    /// The Secret holding the device credentials and CA bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_ref: Option<NamedRef>,
}

/// SnowDatacenterConfig status (empty).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct SnowDatacenterConfigStatus {}

/// The machines of one node group: instance type, devices, OS, network and volumes.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "SnowMachineConfig",
    plural = "snowmachineconfigs",
    namespaced,
    status = "SnowMachineConfigStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct SnowMachineConfigSpec {
    /// The AMI; empty lets CAPAS pick the one tagged for the Kubernetes version and OS.
    #[serde(default, rename = "amiID", skip_serializing_if = "Option::is_none")]
    pub ami_id: Option<String>,
    /// The volume for container data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers_volume: Option<Volume>,
    /// The device IPs machines may be placed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Vec<String>>,
    /// Host OS settings.
    #[serde(
        default,
        rename = "hostOSConfiguration",
        skip_serializing_if = "Option::is_none"
    )]
    pub host_os_configuration: Option<HostOsConfiguration>,
    /// The instance type, `sbe-c.*` or `sbe-g.*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// The machines' network interfaces.
    #[serde(default)]
    pub network: Network,
    /// Extra data volumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_root_volumes: Option<Vec<Volume>>,
    /// `ubuntu` or `bottlerocket`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_family: Option<String>,
    /// `SFP_PLUS`, `QSFP` or `RJ45`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_network_connector: Option<String>,
    /// The key pair on the devices; empty means `create` uses a default key pair
    /// (`eksa-default-<cluster>-<uuid4>`, generated once) and imports it where it is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_key_name: Option<String>,
}

/// What the machine-config controller found.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnowMachineConfigStatus {
    /// Why the spec is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// Whether the spec was validated against the devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_valid: Option<bool>,
}

/// A storage volume.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// The device name, e.g. `/dev/sdc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// Size in GiB.
    #[schemars(range(min = 8))]
    pub size: i64,
    /// `sbp1` or `sbg1`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<VolumeType>,
}

/// Snow volume types.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum VolumeType {
    /// Performance-optimised SSD.
    #[serde(rename = "sbp1")]
    Sbp1,
    /// General-purpose HDD.
    #[serde(rename = "sbg1")]
    Sbg1,
}

/// The machines' network.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    /// Direct network interfaces, 1 to 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 8))]
    pub direct_network_interfaces: Option<Vec<DirectNetworkInterface>>,
}

/// A direct network interface (DNI).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DirectNetworkInterface {
    /// Take the address from DHCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dhcp: Option<bool>,
    /// The DNI index, 1 to 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 8))]
    pub index: Option<i64>,
    /// The SnowIPPool that static addresses come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_pool_ref: Option<NamedRef>,
    /// The primary DNI carries the node IP; exactly one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<bool>,
    /// VLAN, 0 to 4095.
    #[serde(default, rename = "vlanID", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 4095))]
    pub vlan_id: Option<i32>,
}

/// Host OS settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostOsConfiguration {
    /// Bottlerocket settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottlerocket_configuration: Option<BottlerocketConfiguration>,
    /// Extra trusted CA certificates (Bottlerocket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_bundles: Option<Vec<CertBundle>>,
    /// NTP servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntp_configuration: Option<NtpConfiguration>,
}

/// NTP servers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct NtpConfiguration {
    /// The servers.
    pub servers: Vec<String>,
}

/// A named PEM certificate bundle.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct CertBundle {
    /// PEM data.
    pub data: String,
    /// Name.
    pub name: String,
}

/// Bottlerocket settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct BottlerocketConfiguration {
    /// Boot settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<BottlerocketBoot>,
    /// Kernel settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<BottlerocketKernel>,
    /// Kubernetes settings (validated; not rendered for Snow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<BottlerocketKubernetes>,
}

/// Bottlerocket boot settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BottlerocketBoot {
    /// Kernel parameters, each with its values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_kernel_parameters: Option<BTreeMap<String, Vec<String>>>,
}

/// Bottlerocket kernel settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BottlerocketKernel {
    /// sysctl settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysctl_settings: Option<BTreeMap<String, String>>,
}

/// Bottlerocket Kubernetes settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct BottlerocketKubernetes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_unsafe_sysctls: Option<Vec<String>>,
    #[serde(
        default,
        rename = "clusterDNSIPs",
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_dns_ips: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_log_max_files: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_log_max_size: Option<String>,
    #[serde(
        default,
        rename = "cpuCFSQuota",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_cfs_quota: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_manager_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_manager_policy_options: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_manager_reconcile_period: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_burst: Option<i64>,
    #[serde(
        default,
        rename = "eventRecordQPS",
        skip_serializing_if = "Option::is_none"
    )]
    pub event_record_qps: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_hard: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_max_pod_grace_period: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft_grace_period: Option<BTreeMap<String, String>>,
    #[serde(
        default,
        rename = "imageGCHighThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_high_threshold_percent: Option<i64>,
    #[serde(
        default,
        rename = "imageGCLowThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_low_threshold_percent: Option<i64>,
    #[serde(
        default,
        rename = "kubeAPIBurst",
        skip_serializing_if = "Option::is_none"
    )]
    pub kube_api_burst: Option<i64>,
    #[serde(
        default,
        rename = "kubeAPIQPS",
        skip_serializing_if = "Option::is_none"
    )]
    pub kube_api_qps: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_reserved: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_manager_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_pids_limit: Option<i64>,
    #[serde(
        default,
        rename = "providerID",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_burst: Option<i64>,
    #[serde(
        default,
        rename = "registryPullQPS",
        skip_serializing_if = "Option::is_none"
    )]
    pub registry_pull_qps: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_grace_period: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_grace_period_critical_pods: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_reserved: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_manager_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_manager_scope: Option<String>,
}

/// Static IP ranges for node DNIs.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "SnowIPPool",
    plural = "snowippools",
    namespaced,
    status = "SnowIPPoolStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct SnowIPPoolSpec {
    /// The ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pools: Option<Vec<IpPool>>,
}

/// SnowIPPool status (empty).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct SnowIPPoolStatus {}

/// One range of addresses in a subnet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IpPool {
    /// The gateway.
    pub gateway: String,
    /// Last address of the range.
    pub ip_end: String,
    /// First address of the range.
    pub ip_start: String,
    /// The subnet, as a CIDR.
    pub subnet: String,
}
