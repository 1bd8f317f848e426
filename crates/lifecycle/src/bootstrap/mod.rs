//! The bootstrap cluster: the temporary Kubernetes cluster a first (management or standalone)
//! cluster is created from, before Cluster API's objects move into the new cluster itself.
//!
//! Two kinds, behind one trait, [`BootstrapCluster`]:
//! - [`Existing`] (`--bootstrap-kubeconfig FILE`): any cluster the operator already has (k3s,
//!   kind, any Kubernetes). It is only connected to; [`BootstrapCluster::delete`] leaves it alone
//!   (the caller removes what it added).
//! - [`Kind`]: a kind cluster made as EKS Anywhere makes it (`kind create cluster --name
//!   <cluster>-eks-a-cluster` with the bundle's kind node image and a generated config under
//!   `<dir>/<cluster>/generated/`), found again by a re-run, deleted with `kind delete cluster`.
//!
//! [`Bootstrap`] holds either, for callers that choose at run time.
//!
//! ```no_run
//! # async fn demo(spec: &snow_api::ValidSpec) -> Result<(), Box<dyn std::error::Error>> {
//! use snow_lifecycle::bootstrap::{Bootstrap, BootstrapCluster, Existing, Kind, KindOptions};
//! let inputs = snow_api::release::ReleaseInputs::embedded()?;
//! let release = inputs.resolve(spec, None)?;
//! let given: Option<std::path::PathBuf> = None; // --bootstrap-kubeconfig FILE
//! let bootstrap = match given {
//!     Some(file) => Bootstrap::Existing(Existing::new(file, None)),
//!     None => Bootstrap::Kind(Box::new(Kind::new(spec, &release, KindOptions::default())?)),
//! };
//! let mut on_event = |e: snow_lifecycle::Event| eprintln!("{e}");
//! let mgmt = bootstrap.create_or_find(&mut on_event).await?; // a re-run finds it again
//! // … install the providers on `mgmt`, create the cluster, move it …
//! # let _ = mgmt;
//! bootstrap.delete(&mut on_event).await?; // kind: `kind delete cluster`; existing: nothing
//! # Ok(()) }
//! ```

mod config;
mod existing;
mod kind;
mod process;

pub use config::{
    AUDIT_POLICY, AUDIT_POLICY_FILE, CERTS_DIR, CONFIG_FILE, KindFiles, kind_files, kind_node_image,
};
pub use existing::Existing;
pub use kind::{Kind, KindOptions, NAMESPACE, internal_name};
pub use process::find_executable;

use crate::{Event, LifecycleError, Management};
use std::{future::Future, path::Path};

/// A bootstrap cluster.
pub trait BootstrapCluster {
    /// Makes the cluster, or finds the one an earlier run made (or was given), and connects to
    /// it: the API server has answered when this returns.
    fn create_or_find(
        &self,
        on_event: &mut dyn FnMut(Event),
    ) -> impl Future<Output = Result<Management, LifecycleError>>;

    /// Its kubeconfig file.
    fn kubeconfig(&self) -> &Path;

    /// Deletes the cluster if this made it; an [`Existing`] cluster is left alone.
    fn delete(
        &self,
        on_event: &mut dyn FnMut(Event),
    ) -> impl Future<Output = Result<(), LifecycleError>>;
}

/// Either bootstrap cluster.
#[derive(Debug, Clone)]
pub enum Bootstrap {
    /// One the operator already has.
    Existing(Existing),
    /// A kind cluster snowctl makes and deletes (boxed: it holds its generated files).
    Kind(Box<Kind>),
}

impl BootstrapCluster for Bootstrap {
    async fn create_or_find(
        &self,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Management, LifecycleError> {
        match self {
            Bootstrap::Existing(b) => b.create_or_find(on_event).await,
            Bootstrap::Kind(b) => b.create_or_find(on_event).await,
        }
    }

    fn kubeconfig(&self) -> &Path {
        match self {
            Bootstrap::Existing(b) => b.kubeconfig(),
            Bootstrap::Kind(b) => b.kubeconfig(),
        }
    }

    async fn delete(&self, on_event: &mut dyn FnMut(Event)) -> Result<(), LifecycleError> {
        match self {
            Bootstrap::Existing(b) => b.delete(on_event).await,
            Bootstrap::Kind(b) => b.delete(on_event).await,
        }
    }
}
