//! What a command does to one cluster on its management cluster besides a create, an upgrade or
//! a delete: describe it, plan its upgrade, renew its control plane's certificates, move it to
//! another management cluster, back it up to a directory or restore it from one, and remove the
//! records of an imported cluster. Each call connects to the management cluster of a kubeconfig
//! and runs the `snow-lifecycle` steps the operation is made of, so that an embedder and the CLI
//! do the same thing.

use crate::{ProvisionError, Request};
use snow_lifecycle::{
    self as lifecycle, ClusterPlan, Described, Event, KubeconfigSource, LifecycleError, Management,
    MoveOptions, Moved, RenewOptions, Renewed, WaitOptions,
};
use std::path::Path;

/// Connects to the management cluster of `source` (its kubeconfig files merged as kubectl merges
/// them, and its context).
pub async fn connect(source: &KubeconfigSource) -> Result<Management, ProvisionError> {
    Ok(Management::connect(source).await?)
}

/// Describes cluster `cluster`: its objects' conditions, machines and nodes, and the registry
/// mirror its spec names with whether it answers (`GET /v2/` checked against the spec's
/// `caCertContent`, within [`snow_images::probe::PROBE_TIMEOUT`]). A cluster that is not on the
/// management cluster is [`LifecycleError::NotFound`].
pub async fn describe(
    management: &KubeconfigSource,
    cluster: &str,
) -> Result<Described, ProvisionError> {
    let mgmt = connect(management).await?;
    let mut described = lifecycle::describe(&mgmt, cluster).await?;
    if described.root.is_none() {
        return Err(LifecycleError::NotFound {
            what: format!("cluster {cluster}"),
        }
        .into());
    }
    crate::mirror::answer_all(
        described.registry_mirror.as_mut(),
        snow_images::probe::PROBE_TIMEOUT,
    )
    .await;
    Ok(described)
}

/// Plans the upgrade of `req`'s cluster and writes nothing: the versions now and after, and the
/// machines that would roll. Machine configs without `sshKeyName` are planned with the default
/// key a create recorded for the cluster, as [`crate::upgrade`] renders them, so the plan shows
/// no roll the upgrade would not make.
pub async fn upgrade_plan(
    management: &KubeconfigSource,
    req: &Request<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<ClusterPlan, ProvisionError> {
    let mgmt = connect(management).await?;
    let key = lifecycle::ssh_key::recorded_name(&mgmt, req.spec.name()).await?;
    let cluster = req.cluster(key.as_deref());
    Ok(lifecycle::upgrade_plan(&mgmt, &cluster, on_event).await?)
}

/// Renews the control plane's certificates of `cluster` by replacing every control-plane machine
/// (the KubeadmControlPlane's rollout time set, then waited for as an upgrade waits).
pub async fn renew_certificates(
    management: &KubeconfigSource,
    cluster: &str,
    options: &RenewOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Renewed, ProvisionError> {
    let mgmt = connect(management).await?;
    Ok(lifecycle::renew_certificates(&mgmt, cluster, options, on_event).await?)
}

/// Where [`move_cluster`] takes a cluster.
#[derive(Debug, Clone, Copy)]
pub enum MoveTarget<'a> {
    /// The management cluster of another kubeconfig: a move (the source's objects deleted).
    Cluster(&'a KubeconfigSource),
    /// A directory: a backup (the source keeps its objects), one file per object.
    Directory(&'a Path),
}

/// Moves cluster `cluster` from the management cluster of `from` to `to`, clusterctl move's way.
/// The target is connected to first, so a target that cannot be reached stops the move before
/// the source is read.
pub async fn move_cluster(
    from: &KubeconfigSource,
    cluster: &str,
    to: MoveTarget<'_>,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Moved, ProvisionError> {
    let target = match to {
        MoveTarget::Cluster(to) => Some(connect(to).await?),
        MoveTarget::Directory(_) => None,
    };
    let source = connect(from).await?;
    let destination = match (&target, to) {
        (Some(target), _) => lifecycle::Destination::Cluster(target),
        (None, MoveTarget::Directory(dir)) => lifecycle::Destination::Directory(dir),
        (None, MoveTarget::Cluster(_)) => unreachable!("a cluster target is connected above"),
    };
    Ok(lifecycle::move_cluster(&source, cluster, destination, options, on_event).await?)
}

/// Restores the backup in `dir` (written by [`move_cluster`] to a directory, or before an
/// upgrade) onto the management cluster of `to`.
pub async fn restore(
    dir: &Path,
    to: &KubeconfigSource,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Moved, ProvisionError> {
    let target = connect(to).await?;
    Ok(lifecycle::restore(dir, &target, options, on_event).await?)
}

/// Removes the records of imported cluster `cluster` and nothing else (nothing on its devices
/// or nodes); a cluster that was not imported is refused. Returns `Kind/name` of what was
/// removed.
pub async fn remove_import_records(
    management: &KubeconfigSource,
    cluster: &str,
    wait: &WaitOptions,
) -> Result<Vec<String>, ProvisionError> {
    let mgmt = connect(management).await?;
    Ok(lifecycle::import::remove_records(&mgmt, cluster, wait).await?)
}
