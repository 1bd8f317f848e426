//! Where a cluster's create or delete runs: on a management cluster, or, for a cluster that
//! manages itself, from nothing (create) or through a bootstrap cluster (delete). Decided here,
//! so every caller decides alike: first the target ([`create_target`], [`delete_target`]),
//! then, with what that target needs, one call ([`create`], [`delete`]).

use crate::gitops::{Bootstrapped, GitOpsInputs, auth_for, by_commit};
use crate::{CreateOptions, ProvisionError, Provisioned, Request, self_managed};
use snow_lifecycle::{
    self as lifecycle, Deleted, Event, KubeconfigSource, LifecycleError, Management,
    bootstrap::BootstrapCluster,
};

/// What [`create_target`] decides from.
#[derive(Debug, Clone, Default)]
pub struct CreateTargetOptions {
    /// The management cluster's kubeconfig, when the caller found one.
    pub management: Option<KubeconfigSource>,
    /// Create from nothing even when a kubeconfig was found.
    pub self_managed: bool,
}

/// Where a create runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateTarget {
    /// On the management cluster of this kubeconfig.
    Management(KubeconfigSource),
    /// From nothing, through a bootstrap cluster: the cluster then manages itself.
    FromNothing {
        /// Asked for ([`CreateTargetOptions::self_managed`]), not for want of a kubeconfig.
        asked: bool,
    },
}

/// Where a create runs: from nothing when asked or when no kubeconfig was found (the first
/// cluster of a site); else on the management cluster of the kubeconfig found.
pub fn create_target(opts: CreateTargetOptions) -> CreateTarget {
    match opts.management {
        Some(source) if !opts.self_managed => CreateTarget::Management(source),
        _ => CreateTarget::FromNothing {
            asked: opts.self_managed,
        },
    }
}

/// Where a delete runs.
#[derive(Debug)]
pub enum DeleteTarget {
    /// On this management cluster (connected), which is not the cluster itself.
    Management(Management),
    /// The cluster is its own management cluster: deleting it from itself would delete the
    /// controllers doing the deleting, so it goes through a bootstrap cluster
    /// ([`self_managed::delete`]).
    SelfManaged,
}

/// Where the delete of `cluster` on the management cluster of `management` runs: through a
/// bootstrap cluster when the cluster manages itself ([`self_managed::is_self_managed`]).
pub async fn delete_target(
    management: &KubeconfigSource,
    cluster: &str,
) -> Result<DeleteTarget, LifecycleError> {
    let mgmt = Management::connect(management).await?;
    Ok(match self_managed::is_self_managed(&mgmt, cluster).await? {
        true => DeleteTarget::SelfManaged,
        false => DeleteTarget::Management(mgmt),
    })
}

/// A create, with what its target needs.
#[derive(Debug)]
pub enum Create<'a, B> {
    /// On the management cluster of this kubeconfig ([`crate::create`]).
    OnManagement(&'a KubeconfigSource, &'a CreateOptions),
    /// From nothing, through this bootstrap cluster ([`self_managed::create`]).
    FromNothing(&'a B, &'a self_managed::Options),
}

/// What a create made.
#[derive(Debug, Clone)]
pub enum Created {
    /// A cluster on a management cluster, and its workload kubeconfig.
    OnManagement(Provisioned),
    /// A cluster that manages itself.
    SelfManaged(self_managed::SelfManaged),
}

/// Creates the cluster of `req` where `how` says. A management cluster whose spec names a
/// FluxConfig needs [`create_with`]: here it is refused before anything
/// ([`crate::gitops::GitOpsError::Missing`]).
pub async fn create<B: BootstrapCluster>(
    how: Create<'_, B>,
    req: &Request<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Created, ProvisionError> {
    // Boxed: one more level of nested futures would pass the compiler's query depth.
    Box::pin(create_with(how, req, &GitOpsInputs::default(), on_event)).await
}

/// Creates the cluster of `req` where `how` says; a management cluster whose spec names a
/// FluxConfig (`gitOpsRef`) ends with its GitOps set up ([`crate::gitops::bootstrap`]) from
/// `gitops`: Flux's install manifest and the repository's credentials, both required then
/// (checked before anything is applied). On a management cluster that has no Flux yet, Flux is
/// installed there; from nothing, on the new cluster once it manages itself. When GitOps fails
/// after the cluster is up, the error ([`ProvisionError::GitOpsUnfinished`]) says so, and the
/// same call again finishes it.
pub async fn create_with<B: BootstrapCluster>(
    how: Create<'_, B>,
    req: &Request<'_>,
    gitops: &GitOpsInputs,
    on_event: &mut dyn FnMut(Event),
) -> Result<Created, ProvisionError> {
    Ok(match how {
        Create::OnManagement(management, opts) => Created::OnManagement(
            crate::workflow::create_with(management, req, opts, gitops, on_event).await?,
        ),
        Create::FromNothing(bootstrap, opts) => Created::SelfManaged(
            self_managed::create_with(bootstrap, req, opts, gitops, on_event).await?,
        ),
    })
}

/// A delete, with what its target needs.
#[derive(Debug)]
pub enum Delete<'a, B> {
    /// On this management cluster ([`lifecycle::delete`]).
    OnManagement(&'a Management, &'a lifecycle::DeleteOptions),
    /// Through this bootstrap cluster, the cluster reached with this kubeconfig
    /// ([`self_managed::delete`]).
    SelfManaged(&'a B, &'a KubeconfigSource, &'a self_managed::DeleteOptions),
}

/// Deletes cluster `cluster` where `how` says. A cluster whose files are in a GitOps repository
/// needs [`delete_with`]'s credentials: here it is refused before anything
/// ([`crate::gitops::GitOpsError::Missing`]).
pub async fn delete<B: BootstrapCluster>(
    how: Delete<'_, B>,
    cluster: &str,
    on_event: &mut dyn FnMut(Event),
) -> Result<Deleted, ProvisionError> {
    let none = GitOpsInputs::default();
    let deleted = Box::pin(delete_with(how, cluster, &none, on_event));
    Ok(deleted.await?.0)
}

/// The GitOps repository that holds cluster `cluster` of the management cluster of
/// `management`: the FluxConfig its declared Cluster names (`None`: it names none, is not
/// declared, or the management cluster does not answer, which a delete that already removed
/// it from git leaves). A caller finds the credentials [`delete_with`] needs for it.
pub async fn repository(
    management: &KubeconfigSource,
    cluster: &str,
) -> Result<Option<snow_api::gitops::GitOps>, ProvisionError> {
    let mgmt = match Management::connect(management).await {
        Ok(mgmt) if mgmt.ping().await.is_ok() => mgmt,
        _ => return Ok(None),
    };
    Ok(by_commit::repository_of(&mgmt, cluster).await?)
}

/// [`delete`], keeping the repository true when the cluster's files are in one
/// ([`repository`]), with `gitops`' credentials for it: a workload cluster's folder removed by
/// one commit and Flux synced (it prunes the declared objects) before the cluster is deleted,
/// so that Flux cannot apply it again meanwhile; a management cluster (refused while it manages
/// others) has Flux's Kustomization suspended and its own files removed by one commit before
/// its delete, every other file kept. What was committed comes back with what was deleted.
pub async fn delete_with<B: BootstrapCluster>(
    how: Delete<'_, B>,
    cluster: &str,
    gitops: &GitOpsInputs,
    on_event: &mut dyn FnMut(Event),
) -> Result<(Deleted, Option<Bootstrapped>), ProvisionError> {
    let options = &gitops.options;
    Ok(match how {
        Delete::OnManagement(mgmt, opts) => {
            let committed = match by_commit::repository_of(mgmt, cluster).await? {
                Some(repo) => {
                    let auth = auth_for(&repo, gitops)?;
                    let removed =
                        by_commit::remove_workload(mgmt, &repo, auth, cluster, options, on_event);
                    Some(removed.await?)
                }
                None => None,
            };
            let deleted = lifecycle::delete(mgmt, cluster, opts, on_event).await?;
            (deleted, committed)
        }
        Delete::SelfManaged(bootstrap, management, opts) => {
            let mut committed = None;
            if let Ok(own) = Management::connect(management).await
                && own.ping().await.is_ok()
                && let Some(repo) = by_commit::repository_of(&own, cluster).await?
            {
                let others = self_managed::other_clusters(&own, cluster).await?;
                if !others.is_empty() {
                    return Err(ProvisionError::StillManages {
                        cluster: cluster.to_owned(),
                        others,
                    });
                }
                let auth = auth_for(&repo, gitops)?;
                let removed =
                    by_commit::remove_management(&own, &repo, auth, cluster, options, on_event);
                committed = Some(removed.await?);
            }
            let deleted =
                self_managed::delete(bootstrap, management, cluster, opts, on_event).await?;
            (deleted, committed)
        }
    })
}
