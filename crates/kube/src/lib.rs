//! snowctl's Kubernetes client: what every operation on a management or workload cluster asks
//! of an API server, and nothing an operation decides.
//!
//! - [`Management`] (and [`WorkloadCluster`], the same client made from the kubeconfig Cluster
//!   API publishes for a workload cluster): objects by `apiVersion`, kind and name as JSON, get,
//!   list, server-side apply as [`FIELD_MANAGER`], merge patches, deletes, discovery; connected
//!   with a [`KubeconfigSource`] (kubeconfig files merged as kubectl merges a `KUBECONFIG` list,
//!   and a context; the caller finds the files), from a [`kubeconfig::Published`] (a
//!   kubeconfig read out of a Secret: inline credentials only), or in a pod
//!   ([`Management::in_cluster`]).
//! - [`kubeconfig`]: the workload kubeconfig read out of its Secret and written to a file.
//! - [`apply`]: rendered objects parsed and ordered so that what an object references is
//!   applied before it; [`applied`]: whether applying an object again would change nothing.
//! - [`wait`]: readiness read from an object's status and conditions (both Cluster API
//!   contracts), and polling until ready, with progress as [`Event`]s and a timeout.
//! - [`live`]: the live read layer of a Snow cluster: the Cluster and the contract it answers to
//!   ([`live::find_cluster`]), its control plane, etcd, worker deployments and their templates
//!   ([`live::Live`]), its published kubeconfig ([`live::published_kubeconfig`],
//!   [`live::workload_kubeconfig`]) and whether it was imported ([`live::is_imported`]).
//! - [`flux`]: what Flux's GitRepository and Kustomization say about a sync (revision, `Ready`).
//! - [`Event`]: the progress every operation reports.
//!
//! Nothing here calls a device, prints, or reads flags or environment variables (but kube-rs's
//! in-cluster configuration, `KUBERNETES_SERVICE_HOST`/`PORT`, for [`Management::in_cluster`]);
//! failures are [`KubeError`]s. The only files touched are the kubeconfig files it is given
//! (read, bounded) and the workload kubeconfigs [`kubeconfig::write`] writes.

pub mod applied;
pub mod apply;
pub mod error;
mod event;
pub mod flux;
pub mod kubeconfig;
mod kubeconfig_file;
pub mod live;
mod management;
mod object;
pub mod wait;

pub use error::KubeError;
pub use event::{Event, Milestones, Stage};
pub use kubeconfig_file::{KubeconfigFile, KubeconfigSource, MAX_KUBECONFIG_BYTES};
pub use management::{Management, WorkloadCluster, cluster_scoped, identity, plural};
pub use object::ObjectRef;
pub use wait::{Timeouts, WaitOptions};

/// The field manager of every server-side apply snowctl makes.
pub const FIELD_MANAGER: &str = "snowctl";
