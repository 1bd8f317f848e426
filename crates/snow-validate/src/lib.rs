//! Device clients and preflight checks for Snow clusters.
//!
//! This crate is the only one in the workspace that talks to Snow devices: EC2 on
//! `https://IP:8243`, the Snowball Device API on `https://IP:9092` and IAM on `https://IP:6078`.
//! Its checks run concurrently across devices and produce the same [`snow_api::Finding`]s as
//! static validation, each tagged with its device.
//!
//! - [`SnowDevice`]: the real clients of one device, built from the credentials crate's
//!   [`snow_credentials::DeviceCredentialsProvider`] and a [`Trust`] made from the CA bundle
//!   (never the system roots); rustls on aws-lc-rs.
//! - [`Device`]: the calls preflight makes, as a trait, so in-memory devices can stand in.
//! - [`inventory::describe`]: what every device holds (instances by cluster, DNIs, AMIs, key
//!   pairs); [`chores`]: key import on every device and the AMIs preflight would pick;
//!   [`cleanup`]: removing a cluster's leftover instances and DNIs.
//! - [`scoped_user::create_scoped_users`]: on every device, through its IAM ([`iam::IamClient`],
//!   port 6078), a user with exactly EKS Anywhere's Snow policy and an access key, written to a
//!   new credentials file.
//! - [`Plan::from_spec`] then [`preflight::run`]: every check on every device at once;
//!   [`preflight_from_files`] does it all from the credentials INI and CA bundle paths.
//!
//! ```no_run
//! # async fn demo(spec: &snow_api::ClusterSpec, creds: &snow_credentials::CredentialsFile, bundle: &snow_credentials::CaBundle) -> Result<(), snow_validate::ClientError> {
//! use snow_validate::{ClientConfig, Plan, PreflightOptions, SnowDevice, Trust, preflight};
//! let plan = Plan::from_spec(spec);
//! let trust = Trust::from_bundle(bundle)?;
//! let (devices, missing) = SnowDevice::fleet(creds, &trust, ClientConfig::default(), plan.devices());
//! let report = preflight::run(&plan, &devices, &missing, &PreflightOptions::default(), &mut |_| {}).await;
//! for finding in &report.findings {
//!     println!("{finding}");
//! }
//! # Ok(()) }
//! ```

pub mod chores;
pub mod cleanup;
pub mod client;
pub mod device;
pub mod error;
mod files;
mod fleet_client;
pub mod iam;
pub mod imds;
pub mod inventory;
pub mod limits;
pub mod observe;
pub mod plan;
pub mod preflight;
pub mod scoped_user;
mod signed;

// For `snow-test-devices` (a separate crate, so not `cfg(test)`), which seeds moto through a
// device's own EC2 client (`SnowDevice::ec2`), and this crate's tests: not API.
#[doc(hidden)]
pub use aws_sdk_ec2;
pub use client::{ClientConfig, ClientError, DeviceApiClient, RetryPolicy, SnowDevice, Trust};
pub use device::{
    Capacity, Device, DeviceDescription, DeviceSoftware, DirectNetworkInterface, Image,
    InstanceTypeInfo, NetworkInterface, UnlockState,
};
pub use error::{DeviceError, ErrorKind, Service};
pub use files::{
    DeviceFiles, FilesFleet, FilesReport, LoadedFiles, fleet_from_files, load_files,
    preflight_from_files,
};
pub use inventory::{FleetDevice, FleetInventory};
pub use plan::{MachinePlan, Plan, Role};
pub use preflight::{DeviceProgress, Mode, PreflightOptions, PreflightReport, Schedule};
