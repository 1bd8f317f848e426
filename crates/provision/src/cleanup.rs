//! `devices cleanup`'s plan behind its safety rule: nothing is removed from the devices while a
//! management cluster still has the cluster, whose controllers would recreate its machines (the
//! cluster read through `snow_lifecycle::locate`, the plan through `snow_validate::cleanup`).

use crate::{ProvisionError, import::Devices};
use snow_kube::Management;
use snow_lifecycle::LifecycleError;
use snow_validate::cleanup::{self, CleanupPlan};

/// What a cleanup plan is made for.
#[derive(Clone, Copy)]
pub struct CleanupOptions<'a> {
    /// The cluster whose instances and DNIs are to go.
    pub cluster: &'a str,
    /// The management cluster that may still have it: with it, a cluster it still has (or an
    /// imported one) is refused before any device call; without, nothing is checked there.
    pub management: Option<&'a Management>,
    /// The devices to read.
    pub devices: Devices<'a>,
}

/// The cluster's instances and DNIs on every device, once the management cluster (when given)
/// no longer has the cluster: [`ProvisionError::ClusterExists`] while it does,
/// [`LifecycleError::Imported`] for an imported cluster.
pub async fn plan(options: CleanupOptions<'_>) -> Result<CleanupPlan, ProvisionError> {
    let cluster = options.cluster;
    if let Some(mgmt) = options.management {
        let found = snow_lifecycle::locate(mgmt, cluster).await?;
        match &found.cluster {
            Some(live) if snow_lifecycle::import::is_imported(live) => {
                return Err(LifecycleError::Imported {
                    cluster: cluster.to_owned(),
                    action: "devices cleanup".into(),
                }
                .into());
            }
            Some(_) => {
                return Err(ProvisionError::ClusterExists {
                    cluster: cluster.to_owned(),
                });
            }
            None => {}
        }
    }
    let devices = options.devices;
    Ok(cleanup::plan(devices.devices, devices.without_credentials, cluster).await)
}
