//! Why a workflow stopped, with what to do about it.

use snow_api::Finding;
use snow_lifecycle::{CniManifestError, LifecycleError, cni::helm::HelmError};

/// A workflow failure.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// An input preflight needs cannot be used at all (a device file missing or unreadable).
    #[error("{}", .0.message)]
    Input(Box<Finding>),
    /// Preflight found errors; nothing was applied.
    #[error("Validation failed: nothing was applied")]
    Preflight {
        /// Every finding of the run (errors and warnings).
        findings: Vec<Finding>,
    },
    /// `helm template` failed or is missing.
    #[error(transparent)]
    Helm(#[from] HelmError),
    /// What helm rendered is not a Cilium manifest.
    #[error("the manifest helm rendered: {0}")]
    HelmManifest(CniManifestError),
    /// A create or an upgrade was given `CniSource::Stored`, which only a controller reads: the
    /// create or upgrade is what stores the manifests.
    #[error(
        "the stored Cilium manifests are for a controller: a create or an upgrade renders its manifest or is given one"
    )]
    CniStored,
    /// A lifecycle step failed.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// A self-managed cluster still manages other clusters: deleting it would orphan them.
    #[error("cluster {cluster} still manages {}: deleting it would orphan them", .others.join(", "))]
    StillManages {
        /// The cluster asked to be deleted.
        cluster: String,
        /// `namespace/name` of every other Cluster API Cluster on it.
        others: Vec<String>,
    },
    /// `devices cleanup` of a cluster the management cluster still has, whose controllers would
    /// recreate its machines: it is deleted there first.
    #[error(
        "cluster {cluster} still exists on the management cluster, whose controllers would recreate its machines"
    )]
    ClusterExists {
        /// The cluster.
        cluster: String,
    },
    /// The release catalog is larger than the ConfigMap the snowctl controller reads it from.
    #[error(
        "the release catalog ({bytes} bytes) is larger than the {max} bytes of the ConfigMap the controller reads it from"
    )]
    CatalogTooLarge {
        /// The catalog's size.
        bytes: usize,
        /// The most the ConfigMap holds.
        max: usize,
    },
    /// The spec asks for GitOps and what it needs is missing or unusable (said before anything
    /// is applied).
    #[error(transparent)]
    GitOps(#[from] crate::gitops::GitOpsError),
    /// The cluster was created, and setting up its GitOps then failed: the cluster is up, and
    /// the same command run again finishes GitOps (unlike EKS Anywhere, which reports success
    /// and leaves the cluster without GitOps, its issue 1511).
    #[error(
        "cluster {cluster} is up, but its GitOps is not set up: {source}. Run the same command again to finish GitOps (the cluster is kept as it is)"
    )]
    GitOpsUnfinished {
        /// The cluster.
        cluster: String,
        /// Why GitOps failed.
        source: Box<crate::gitops::GitOpsError>,
    },
    /// A step of the first cluster's create failed: what is left and how to go on.
    #[error("{step} failed: {source}")]
    Interrupted {
        /// The step, in EKS Anywhere's words.
        step: String,
        /// Why.
        source: Box<ProvisionError>,
        /// What exists now and how to resume or clean up.
        left: String,
    },
}

/// A request of snow-kube's client made by a workflow step is a lifecycle failure, as it was when
/// the client was part of snow-lifecycle.
impl From<snow_kube::KubeError> for ProvisionError {
    fn from(err: snow_kube::KubeError) -> ProvisionError {
        ProvisionError::Lifecycle(err.into())
    }
}

impl ProvisionError {
    /// Whether the input given cannot be used (a device file, the rendered Cilium manifest, a
    /// missing helm, a kubeconfig, components or a backup directory), as opposed to findings or
    /// a failure; for the step behind an interruption, that step's error.
    pub fn is_input(&self) -> bool {
        match self.cause() {
            ProvisionError::Input(_)
            | ProvisionError::HelmManifest(_)
            | ProvisionError::CatalogTooLarge { .. }
            | ProvisionError::Helm(HelmError::NotFound { .. }) => true,
            ProvisionError::Lifecycle(e) => e.is_input(),
            ProvisionError::GitOps(e) => e.is_input(),
            _ => false,
        }
    }

    /// The error behind an [`ProvisionError::Interrupted`] step (itself otherwise).
    pub fn cause(&self) -> &ProvisionError {
        match self {
            ProvisionError::Interrupted { source, .. } => source.cause(),
            other => other,
        }
    }
}
