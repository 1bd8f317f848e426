//! A Snow cluster's life on a management cluster: create, upgrade, delete and describe.
//!
//! The management cluster already runs Cluster API, CAPAS and etcdadm; snowctl applies exactly
//! the objects `capi_render` renders (server-side apply, field manager [`FIELD_MANAGER`]), in
//! dependency order, and waits for them with visible progress. Every step can be interrupted and
//! run again: apply converges, and the objects a cluster ever had are recorded in an inventory
//! ConfigMap (`eksa-system/<cluster>-snowctl`) so that delete leaves nothing behind.
//!
//! Nothing here prints: progress goes to a callback as [`Event`]s, failures are
//! [`LifecycleError`]s.
//!
//! ```no_run
//! # async fn demo(spec: snow_api::ClusterSpec, text: String) -> Result<(), Box<dyn std::error::Error>> {
//! use snowctl::lifecycle::{self, Management, WaitOptions};
//! let mgmt = Management::connect(std::path::Path::new("mgmt.kubeconfig"), None).await?;
//! let inputs = capi_render::ReleaseInputs::embedded()?;
//! let request = lifecycle::ClusterRequest {
//!     spec: &spec,
//!     spec_text: &text,
//!     inputs: &inputs,
//!     options: capi_render::RenderOptions::default(),
//! };
//! let created = lifecycle::create(&mgmt, &request, &WaitOptions::default(), &mut |e| {
//!     eprintln!("{e}");
//! })
//! .await?;
//! # let _ = created; Ok(()) }
//! ```

pub(crate) mod apply;
pub(crate) mod create;
pub(crate) mod delete;
mod describe;
mod error;
mod event;
mod immutable;
pub(crate) mod inventory;
pub mod kubeconfig;
pub(crate) mod live;
mod management;
mod providers;
pub(crate) mod upgrade;
pub(crate) mod wait;

pub use create::{Created, create};
pub use delete::{Deleted, delete};
pub use describe::{Condition, Described, Node, describe};
pub use error::LifecycleError;
pub use event::{Event, Stage};
pub use immutable::immutable_changes;
pub use inventory::{INVENTORY_SUFFIX, Inventory, MANAGED_BY, ObjectRef};
pub use management::{Management, plural};
pub use providers::{CAPAS_DEPLOYMENT, CAPAS_NAMESPACE, ProviderCheck, check_providers};
pub use upgrade::{UpgradeOutcome, upgrade};
pub use wait::{Timeouts, WaitOptions};

/// The field manager of every server-side apply snowctl makes.
pub const FIELD_MANAGER: &str = "snowctl";

/// What to create or upgrade: the checked spec, its text, and how to render it.
#[derive(Clone, Copy)]
pub struct ClusterRequest<'a> {
    /// The spec, parsed and statically valid.
    pub spec: &'a snow_api::ClusterSpec,
    /// The spec as the user wrote it: recorded in the inventory, for upgrades and describe.
    pub spec_text: &'a str,
    /// Versions and images.
    pub inputs: &'a capi_render::ReleaseInputs,
    /// Contract and identity Secret; `names` is decided here, from the live objects.
    pub options: capi_render::RenderOptions<'a>,
}
