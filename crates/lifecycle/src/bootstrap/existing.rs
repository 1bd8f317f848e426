//! A cluster the operator already has, used as the bootstrap cluster (`--bootstrap-kubeconfig`).

use super::BootstrapCluster;
use crate::{Event, LifecycleError, Management};
use std::path::{Path, PathBuf};

/// Any reachable cluster (k3s, kind, an existing cluster), given by its kubeconfig. snowctl
/// never creates or deletes it.
#[derive(Debug, Clone)]
pub struct Existing {
    kubeconfig: PathBuf,
    context: Option<String>,
}

impl Existing {
    /// The cluster of `kubeconfig` (its current context, or `context`).
    pub fn new(kubeconfig: impl Into<PathBuf>, context: Option<String>) -> Existing {
        Existing {
            kubeconfig: kubeconfig.into(),
            context,
        }
    }
}

impl BootstrapCluster for Existing {
    /// Connects and checks that the API server answers; creates nothing.
    async fn create_or_find(
        &self,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Management, LifecycleError> {
        let mgmt = Management::connect(
            &crate::KubeconfigSource::file(&self.kubeconfig).with_context(self.context.as_deref()),
        )
        .await?;
        on_event(Event::Step(format!(
            "Using existing bootstrap cluster at {}",
            mgmt.server()
        )));
        Ok(mgmt)
    }

    fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Does nothing: the cluster is the operator's.
    async fn delete(&self, _on_event: &mut dyn FnMut(Event)) -> Result<(), LifecycleError> {
        Ok(())
    }
}
