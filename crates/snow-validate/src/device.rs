//! What preflight asks of a device, as a trait: the real clients ([`crate::SnowDevice`]) and
//! in-memory devices (tests, benchmarks) both implement it.

use crate::error::DeviceError;
use serde::Serialize;
use snow_api::DeviceIp;
use std::future::Future;

/// An AMI on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Image {
    /// `ami-…`.
    pub id: String,
    /// The image name, when it has one.
    pub name: Option<String>,
}

/// One instance type a device offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceTypeInfo {
    /// e.g. `sbe-c.large`.
    pub name: String,
    /// The default vCPU count, when the device reports it.
    pub default_vcpus: Option<u32>,
    /// Memory in MiB, when the device reports it.
    pub memory_mib: Option<u64>,
}

/// The unlock state of a device (`UnlockStatus.State`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum UnlockState {
    /// Ready.
    Unlocked,
    /// Locked: `snowballEdge unlock-device` is needed.
    Locked,
    /// Unlocking is in progress.
    Unlocking,
    /// A state this version does not know.
    Other(String),
}

impl UnlockState {
    /// Parses the wire value.
    pub fn parse(s: &str) -> UnlockState {
        match s {
            "UNLOCKED" => UnlockState::Unlocked,
            "LOCKED" => UnlockState::Locked,
            "UNLOCKING" => UnlockState::Unlocking,
            other => UnlockState::Other(other.to_owned()),
        }
    }

    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            UnlockState::Unlocked => "UNLOCKED",
            UnlockState::Locked => "LOCKED",
            UnlockState::Unlocking => "UNLOCKING",
            UnlockState::Other(s) => s,
        }
    }
}

/// One entry of `DeviceCapacities`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capacity {
    /// e.g. `vCPU`, `Memory`, `HDD Storage`.
    pub name: String,
    /// e.g. `Number`, `Byte`.
    pub unit: String,
    /// Total.
    pub total: u64,
    /// In use.
    pub used: u64,
    /// Free.
    pub available: u64,
}

/// One entry of `PhysicalNetworkInterfaces`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterface {
    /// `s.ni-…`.
    pub id: String,
    /// `RJ45`, `SFP_PLUS`, `QSFP`.
    pub connector_type: String,
    /// The interface's IP, when it has one.
    pub ip_address: Option<String>,
}

/// One direct network interface (`DescribeDirectNetworkInterfaces`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectNetworkInterface {
    /// `DirectNetworkInterfaceArn`.
    pub arn: String,
    /// `PhysicalNetworkInterfaceId`: the port it hangs off.
    pub physical_network_interface_id: String,
    /// `InstanceId`: the instance it is attached to, if any.
    pub instance_id: Option<String>,
    /// `VlanId`, if any.
    pub vlan_id: Option<u64>,
    /// `MacAddress`, if reported.
    pub mac_address: Option<String>,
}

/// The parts of `DescribeDevice` preflight uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceDescription {
    /// The device id, when reported.
    pub device_id: Option<String>,
    /// `UnlockStatus.State`.
    pub unlock_state: UnlockState,
    /// `DeviceCapacities`.
    pub capacities: Vec<Capacity>,
    /// `PhysicalNetworkInterfaces`.
    pub network_interfaces: Vec<NetworkInterface>,
}

impl DeviceDescription {
    /// The capacity entry with this name (ASCII case-insensitive).
    pub fn capacity(&self, name: &str) -> Option<&Capacity> {
        self.capacities
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }
}

/// The parts of `DescribeDeviceSoftware` preflight uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSoftware {
    /// `InstalledVersion`, as the device sends it (a decimal string such as `"102"`).
    pub installed_version: String,
    /// `InstallState` (NA, DOWNLOADING, INSTALLING, REQUIRE_REBOOT …).
    pub install_state: String,
}

impl DeviceSoftware {
    /// The installed version as a number, when it is one.
    pub fn version_number(&self) -> Option<u32> {
        self.installed_version.trim().parse().ok()
    }
}

/// The calls preflight makes to one device. Every method is one request (plus retries); none
/// panics; errors are classified [`DeviceError`]s.
pub trait Device: Send + Sync {
    /// The device's IP.
    fn ip(&self) -> DeviceIp;

    /// EC2 `DescribeImages` by id: `Ok(None)` only when the device says the image does not exist
    /// (`InvalidAMIID.NotFound` or an empty list).
    fn describe_image(
        &self,
        ami_id: &str,
    ) -> impl Future<Output = Result<Option<Image>, DeviceError>> + Send;

    /// EC2 `DescribeImages` filtered by tags (`tag:KEY = VALUE`, all must match).
    fn images_tagged(
        &self,
        tags: &[(String, String)],
    ) -> impl Future<Output = Result<Vec<Image>, DeviceError>> + Send;

    /// EC2 `DescribeKeyPairs` by name: `Ok(false)` when the key pair does not exist.
    fn key_pair_exists(&self, name: &str)
    -> impl Future<Output = Result<bool, DeviceError>> + Send;

    /// EC2 `DescribeInstanceTypes`, every page.
    fn instance_types(
        &self,
    ) -> impl Future<Output = Result<Vec<InstanceTypeInfo>, DeviceError>> + Send;

    /// Snowball Device API `DescribeDevice`.
    fn describe_device(
        &self,
    ) -> impl Future<Output = Result<DeviceDescription, DeviceError>> + Send;

    /// Snowball Device API `DescribeDeviceSoftware`.
    fn describe_device_software(
        &self,
    ) -> impl Future<Output = Result<DeviceSoftware, DeviceError>> + Send;
}
