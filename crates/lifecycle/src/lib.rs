//! A Snow cluster's life on a management cluster: create, upgrade, delete and describe.
//!
//! The management cluster already runs Cluster API, CAPAS and etcdadm; snow-lifecycle applies
//! exactly the objects `capi_render` renders (server-side apply, field manager [`FIELD_MANAGER`]),
//! in dependency order, and waits for them with visible progress. Every step can be interrupted
//! and run again: apply converges, and the objects a cluster ever had are recorded in an inventory
//! ConfigMap (`eksa-system/<cluster>-snowctl`) so that delete leaves nothing behind.
//!
//! One function per operation, each with its options type: [`create`] ([`CreateOptions`]),
//! [`upgrade`] ([`UpgradeOptions`]), [`delete`] ([`DeleteOptions`]), [`describe`]; and, for
//! controllers that reconcile level-based instead of waiting, [`reconcile::pass`] and
//! [`reconcile::delete_pass`], which make one non-blocking step each. [`move_cluster()`] moves a
//! cluster's Cluster API objects to another management cluster or a backup directory, and
//! [`restore`] brings a backup back. [`support_bundle::collect`] reads what the people who help
//! need when a cluster is in trouble ([`SupportBundle`], [`BundleOptions`]).
//! [`standing::refusal`] says what a command will not do to a cluster (not there, imported,
//! managed by another system, paused by someone else) from one read, before anything else.
//!
//! The Kubernetes client these operations use ([`Management`], kubeconfigs, server-side apply,
//! waits, the live read of a cluster, [`Event`]) is snow-kube's, re-exported here at the paths it
//! had before it moved.
//!
//! Nothing here prints or reads flags: progress goes to a callback as [`Event`]s, failures are
//! [`LifecycleError`]s (the client's own, [`KubeError`], as [`LifecycleError::Kube`]). The only files touched are kubeconfigs ([`kubeconfig`]), the kind
//! bootstrap cluster's generated files ([`bootstrap`]) and the backup directories of
//! [`move_cluster()`] and [`restore`].
//!
//! ```no_run
//! # async fn demo(text: String) -> Result<(), Box<dyn std::error::Error>> {
//! use snow_lifecycle::{
//!     self as lifecycle, ClusterRequest, CreateOptions, KubeconfigSource, Management,
//! };
//! let spec = snow_api::check(&text)?
//!     .into_valid()
//!     .map_err(|r| format!("{} finding(s)", r.findings.len()))?;
//! let inputs = snow_api::release::ReleaseInputs::embedded()?;
//! let release = inputs.resolve(&spec, None)?;
//! let mgmt = Management::connect(&KubeconfigSource::file("mgmt.kubeconfig")).await?;
//! let request = ClusterRequest {
//!     spec: &spec,
//!     spec_text: &text,
//!     release: &release,
//!     secrets: None,
//!     default_ssh_key_name: None,
//!     registry_credentials: None,
//! };
//! let options = CreateOptions {
//!     cni: Some(lifecycle::CniManifest::parse(&std::fs::read_to_string("cilium.yaml")?)?),
//!     ..CreateOptions::default()
//! };
//! let created = lifecycle::create(&mgmt, &request, &options, &mut |e| {
//!     eprintln!("{e}");
//! })
//! .await?;
//! # let _ = created; Ok(()) }
//! ```

mod apply;
pub mod bootstrap;
pub mod certificates;
mod changes;
pub mod cni;
mod create;
mod delete;
mod describe;
mod error;
pub mod flux;
use snow_io::files;
mod immutable;
pub mod import;
pub mod init;
mod inventory;
pub mod mirror;
pub mod move_cluster;
mod plan;
use snow_io::process;
mod providers;
pub mod reconcile;
mod renew;
pub mod site;
pub mod ssh_key;
pub mod standing;
pub mod support_bundle;
mod upgrade;

// The client's modules, under the names lifecycle's operations use for them.
/// The workload cluster's kubeconfig (snow-kube's).
pub use snow_kube::kubeconfig;
use snow_kube::{applied, live, wait};

pub use cni::{CniManifest, CniManifestError};
pub use create::{CreateOptions, Created, create};
pub use delete::{DeleteOptions, Deleted, Located, delete, locate};
pub use describe::{
    Condition, Described, FluxSync, GitOpsSource, Node, Reconciled, SyncState, describe,
};
pub use error::LifecycleError;
pub use inventory::{INVENTORY_SUFFIX, Inventory, MANAGED_BY, ObjectRef};
pub use mirror::RegistryMirror;
pub use move_cluster::{
    Backup, Destination, MoveOptions, Moved, backup_all_before_upgrade, backup_before_upgrade,
    move_cluster, restore,
};
pub use plan::{ClusterPlan, ComponentPlan, upgrade_plan};
pub use providers::{CAPAS_DEPLOYMENT, CAPAS_NAMESPACE, ProviderCheck, check_providers};
pub use renew::{RENEW_FIELD_MANAGER, RenewOptions, Renewed, renew_certificates};
/// The Kubernetes client and what it reads, kept at the paths embedders used before it moved to
/// snow-kube.
pub use snow_kube::{
    Event, FIELD_MANAGER, KubeError, KubeconfigFile, KubeconfigSource, MAX_KUBECONFIG_BYTES,
    Management, Milestones, Stage, Timeouts, WaitOptions, WorkloadCluster,
    live::published_kubeconfig, plural,
};
pub use support_bundle::{BundleOptions, SupportBundle, collect as collect_support_bundle};
pub use upgrade::{UpgradeOptions, UpgradeOutcome, upgrade};

/// The device credentials a [`ClusterRequest`] renders the identity Secret from.
pub use capi_render::SecretInputs;

use capi_render::RenderOptions;
use snow_api::{ValidSpec, release::ClusterRelease};

/// The annotation that pauses Cluster API reconciliation of an object.
pub const PAUSED: &str = snow_api::names::PAUSED_ANNOTATION;

/// The cluster to create or upgrade: a spec without error findings, its text, its resolved
/// release, and the device credentials for the identity Secret.
#[derive(Clone, Copy)]
pub struct ClusterRequest<'a> {
    /// The spec, parsed, defaulted and statically valid.
    pub spec: &'a ValidSpec,
    /// The spec as the user wrote it: recorded in the inventory, for upgrades and describe.
    pub spec_text: &'a str,
    /// Versions, images and the Cluster API contract, resolved for this spec.
    pub release: &'a ClusterRelease<'a>,
    /// Render the CAPAS identity Secret from these files; `None` expects it on the management
    /// cluster already.
    pub secrets: Option<SecretInputs<'a>>,
    /// The default key pair name for machine configs with an empty `sshKeyName`
    /// ([`ssh_key::default_key`]); recorded in the inventory.
    pub default_ssh_key_name: Option<&'a str>,
    /// The registry mirror's login, for `authenticate: true`: applied as
    /// `eksa-system/registry-credentials`.
    pub registry_credentials: Option<&'a snow_credentials::RegistryCredentials>,
}

impl ClusterRequest<'_> {
    /// Rendering options for a new cluster (template names are decided from the live objects).
    fn render_options(&self) -> RenderOptions<'_> {
        RenderOptions {
            secrets: self.secrets,
            names: None,
            default_ssh_key_name: self.default_ssh_key_name,
            registry_credentials: self.registry_credentials,
        }
    }
}
