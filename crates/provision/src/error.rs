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
    #[error("Validation failed: nothing was applied (fix the findings, or --skip-validations)")]
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
    /// A lifecycle step failed.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
}

impl ProvisionError {
    /// Whether the input could not be used (exit 2 in the CLI), as opposed to findings or a
    /// failure.
    pub fn is_input(&self) -> bool {
        match self {
            ProvisionError::Input(_)
            | ProvisionError::HelmManifest(_)
            | ProvisionError::Helm(HelmError::NotFound { .. }) => true,
            ProvisionError::Lifecycle(e) => matches!(
                e,
                LifecycleError::Kubeconfig { .. }
                    | LifecycleError::Components { .. }
                    | LifecycleError::Backup { .. }
            ),
            _ => false,
        }
    }
}
