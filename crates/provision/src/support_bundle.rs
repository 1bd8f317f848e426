//! The support bundle written to a file: [`snow_lifecycle::support_bundle::collect`] from the
//! management and workload clusters, the device inventory of the cluster's devices when the
//! device files are given (`snow_validate::inventory`: Describe calls only), then
//! [`snow_images::support_archive::write`] (a private `.tar.gz`, never over a file unless
//! replacing, never through a link).

use crate::DevicePaths;
use snow_api::{DeviceIp, Finding};
use snow_images::support_archive::{self, SupportArchiveError};
use snow_kube::Management;
use snow_lifecycle::LifecycleError;
use snow_lifecycle::support_bundle::{self, BundleOptions, DeviceStatus, Summary};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to collect and where to write it.
#[derive(Debug, Clone)]
pub struct BundleRequest<'a> {
    /// The cluster.
    pub cluster: &'a str,
    /// The `.tar.gz` to write.
    pub output: &'a Path,
    /// Replace a regular file at `output` (never a link).
    pub replace: bool,
    /// The device credentials and CA bundle: with both, the cluster's devices are described.
    pub devices: DevicePaths<'a>,
    /// Each device request's limit.
    pub device_timeout: Duration,
    /// The collection's bounds and snowctl's version.
    pub options: BundleOptions,
}

/// A bundle written.
#[derive(Debug, Clone)]
pub struct Written {
    /// Where.
    pub path: PathBuf,
    /// Its size, compressed.
    pub bytes: u64,
    /// Its analysis.
    pub summary: Summary,
}

/// Why no bundle was written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The management cluster did not answer.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// The device files could not be used.
    #[error("{}", .0.message)]
    Devices(Box<Finding>),
    /// The file could not be written.
    #[error(transparent)]
    Archive(#[from] SupportArchiveError),
}

impl BundleError {
    /// Whether the input was at fault (a file there, a device file unreadable): exit 2.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            BundleError::Devices(_)
                | BundleError::Archive(
                    SupportArchiveError::Exists { .. }
                        | SupportArchiveError::NotAFile { .. }
                        | SupportArchiveError::LinkedDirectory { .. }
                )
        )
    }
}

/// The file of an automatic bundle (after a failed create, upgrade or delete): beside the
/// cluster's kubeconfig, `<dir>/<cluster>/support-bundle-<UTC time>.tar.gz`.
pub fn automatic_path(dir: &Path, cluster: &str) -> PathBuf {
    let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    dir.join(cluster)
        .join(format!("support-bundle-{now}.tar.gz"))
}

/// The support bundle of `cluster` after a create, upgrade or delete on the management cluster
/// of `management` failed: written to a new file beside the cluster's files
/// ([`automatic_path`] under `dir`), with the default bounds and no device called (a failure
/// may be a device that does not answer). The failure stands whether the bundle was written or
/// not: the caller says this result and returns its failure.
pub async fn after_failure(
    management: &snow_lifecycle::KubeconfigSource,
    dir: &Path,
    cluster: &str,
) -> Result<Written, BundleError> {
    let path = automatic_path(dir, cluster);
    let request = BundleRequest {
        cluster,
        output: &path,
        replace: false,
        devices: DevicePaths::default(),
        device_timeout: snow_validate::limits::REQUEST_TIMEOUT,
        options: BundleOptions::default(),
    };
    let mgmt = Management::connect(management)
        .await
        .map_err(LifecycleError::from)?;
    write(&mgmt, &request).await
}

/// Collects the bundle of `req.cluster` and writes it. The target is checked first, so a file
/// already there is refused before anything is read.
pub async fn write(mgmt: &Management, req: &BundleRequest<'_>) -> Result<Written, BundleError> {
    support_archive::check_target(req.output, req.replace)?;
    let mut bundle = support_bundle::collect(mgmt, req.cluster, &req.options).await?;
    if let (Some(credentials), Some(ca_bundle)) = (req.devices.credentials, req.devices.ca_bundle) {
        let paths = DevicePaths {
            credentials: Some(credentials),
            ca_bundle: Some(ca_bundle),
        };
        let files = crate::preflight::device_files(paths, req.device_timeout)
            .map_err(BundleError::Devices)?;
        let ips: Vec<DeviceIp> = bundle
            .devices()
            .iter()
            .filter_map(|d| d.parse().ok())
            .collect();
        let fleet = snow_validate::fleet_from_files(files, &ips).map_err(BundleError::Devices)?;
        let found =
            snow_validate::inventory::describe(&fleet.devices, &fleet.without_credentials).await;
        let statuses: Vec<DeviceStatus> = found
            .devices
            .iter()
            .map(|d| DeviceStatus {
                device: d.device.clone(),
                reachable: d.reachable,
                errors: d.errors.clone(),
            })
            .collect();
        bundle.add_devices(found.to_json(), &statuses);
    } else {
        bundle
            .summary
            .notes
            .push("devices: not described (no device credentials and CA bundle were given)".into());
    }
    let files = bundle.files();
    let bytes = support_archive::write(req.output, &files, req.replace)?;
    Ok(Written {
        path: req.output.to_owned(),
        bytes,
        summary: bundle.summary,
    })
}
