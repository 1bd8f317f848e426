//! A Snow cluster's create and upgrade workflows, from device checks to a running cluster.
//!
//! `snow-lifecycle` does the management-cluster side of one step (apply, wait, move, init);
//! this crate runs the steps a create or an upgrade is made of, in EKS Anywhere's order:
//! the CNI manifest (given, else `helm template`), preflight against the devices
//! ([`preflight`]), the default SSH key (named once per cluster and imported on the devices
//! that lack it, [`default_key`]), then [`snow_lifecycle::create`] or
//! [`snow_lifecycle::upgrade`] and the workload kubeconfig. [`self_managed`] makes the first
//! cluster from nothing: a bootstrap cluster, the providers, the create, the providers on the
//! new cluster, the move, the bootstrap cluster deleted; every step resumes when run again.
//! [`support_bundle`] writes a cluster's support bundle, with its devices' inventory.
//! [`validate`] merges the static, catalog, environment and preflight findings of `validate`.
//! [`catalog`] reads the release catalog once from its one source (an archive, a Bundles file,
//! the published release or the embedded sample), keeping the archive it was read from.
//! [`components`] makes the provider stack `init` installs from a directory, an archive or HTTPS.
//! [`cleanup`] plans `devices cleanup` only once the management cluster no longer has the cluster.
//! [`refusal`] says what a command will not do to a cluster before anything it needs to do it.
//! [`target`] decides where a create or a delete runs: on a management cluster, or from nothing
//! and through a bootstrap cluster for a cluster that manages itself.
//! [`cluster`] describes a cluster, plans its upgrade (with the default key a create recorded),
//! renews its control plane's certificates, moves, backs up and restores it, and removes an
//! imported cluster's records. [`management`] installs and upgrades the management components
//! (the provider stack, then the snowctl controller) and makes the controller's component.
//! [`mirror`] asks the registry mirror a cluster's spec names whether it answers, for
//! [`cluster::describe`] and the site view ([`import::site`]).
//! [`store_cilium`] stores a cluster's Cilium manifests for a controller without helm.
//!
//! This crate is the one front for everything that composes steps: a tool that embeds the
//! libraries calls these functions, as the CLI does, and names the `snow-lifecycle` types it
//! needs through the re-exports below.
//!
//! Nothing here prints or reads flags or the environment: progress goes to a callback as
//! [`Event`]s, failures are [`ProvisionError`]s.

pub mod catalog;
pub mod cleanup;
pub mod cluster;
mod cni;
pub mod components;
mod error;
pub mod flux_manifest;
pub mod gitops;
pub mod import;
pub mod management;
pub mod mirror;
pub mod preflight;
pub mod self_managed;
pub mod support_bundle;
pub mod target;
pub mod validate;
mod workflow;

pub use error::ProvisionError;
/// Where the Cilium manifest comes from (`snow_lifecycle::cni::CniSource`, the controller's too).
pub use snow_lifecycle::cni::CniSource;
/// What a command would do to a cluster, for [`refusal`].
pub use snow_lifecycle::standing::Action;
pub use workflow::{
    CreateOptions, Provisioned, UpgradeOptions, create, default_key, upgrade, upgrade_with,
};

/// The `snow-lifecycle` types a caller of these workflows names: their options, results,
/// progress events and errors, re-exported so that a caller needs no other front.
pub use snow_kube::KubeError;
/// The bootstrap cluster of a create from nothing and of a self-managed cluster's delete.
pub use snow_lifecycle::bootstrap;
/// helm's errors and options (the Cilium render).
pub use snow_lifecycle::cni::helm;
/// Where stored Cilium manifests come from and what storing them did ([`store_cilium`]).
pub use snow_lifecycle::cni::stored::{
    Outcome as StoredOutcome, Source as StoredCiliumSource, StoreReport,
};
/// An imported cluster's observation and its kubeconfig ([`import`]).
pub use snow_lifecycle::import::{Observation, WorkloadKubeconfig};
/// The management components' options, objects and results ([`management`]).
pub use snow_lifecycle::init::{
    InitOptions, Initialized,
    components::ComponentObjects,
    to_yaml as components_yaml,
    upgrade::{UpgradePlan as ComponentsPlan, Upgraded as ComponentsUpgraded},
};
/// What a render or dry run says about the default SSH key a create would use.
pub use snow_lifecycle::ssh_key::dry_run_note as default_key_note;
/// A support bundle's bounds ([`support_bundle`]).
pub use snow_lifecycle::support_bundle::BundleOptions;
pub use snow_lifecycle::{
    Backup, ClusterPlan, CniManifest, DeleteOptions, Deleted, Described, Event, KubeconfigSource,
    LifecycleError, Management, Milestones, MoveOptions, Moved, RegistryMirror, RenewOptions,
    Renewed, Timeouts, WaitOptions,
};

use capi_render::SecretInputs;
use snow_api::{ValidSpec, release::ClusterRelease};
use snow_credentials::RegistryCredentials;
use snow_lifecycle::ClusterRequest;
use std::{path::Path, time::Duration};

/// The cluster a workflow provisions and what it needs besides a Kubernetes cluster.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The spec, checked.
    pub spec: &'a ValidSpec,
    /// The spec as written (recorded in the inventory).
    pub spec_text: &'a str,
    /// Its release, resolved once.
    pub release: &'a ClusterRelease<'a>,
    /// The device files the identity Secret is rendered from; `None` expects the Secret on the
    /// management cluster already.
    pub secrets: Option<SecretInputs<'a>>,
    /// The registry mirror's login (`authenticate: true`).
    pub registry_credentials: Option<&'a RegistryCredentials>,
    /// The device files preflight and the default key's import read.
    pub devices: DevicePaths<'a>,
    /// The release inputs the cluster's came from: with them, a create or upgrade also stores
    /// the default Cilium manifest of every Kubernetes version of their bundle on the
    /// management cluster (for `snowctl controller --cni-stored`); without, only the cluster's
    /// own.
    pub inputs: Option<&'a snow_api::release::ReleaseInputs>,
    /// The directory of the cluster's local files: `<dir>/<cluster>/` holds the default SSH key
    /// and the workload kubeconfig (EKS Anywhere's layout; the CLI passes the current directory).
    pub dir: &'a Path,
}

/// Where the device files are, when given.
#[derive(Debug, Clone, Copy, Default)]
pub struct DevicePaths<'a> {
    /// The AWS credentials INI (`EKSA_AWS_CREDENTIALS_FILE`).
    pub credentials: Option<&'a Path>,
    /// The devices' CA bundle (`EKSA_AWS_CA_BUNDLES_FILE`).
    pub ca_bundle: Option<&'a Path>,
}

/// Whether and how preflight runs before anything is applied.
#[derive(Debug, Clone, Copy)]
pub enum Checks {
    /// Skipped (a warning says so).
    Skip,
    /// Run against the devices.
    Run {
        /// Do not probe whether the control-plane endpoint IP is in use.
        skip_ip_check: bool,
        /// Each device request's timeout.
        timeout: Duration,
        /// One note per device as it finishes (for a terminal).
        device_lines: bool,
    },
}

impl<'a> Request<'a> {
    /// The lifecycle's request, with the default key's name.
    pub fn cluster(&self, default_ssh_key_name: Option<&'a str>) -> ClusterRequest<'a> {
        ClusterRequest {
            spec: self.spec,
            spec_text: self.spec_text,
            release: self.release,
            secrets: self.secrets,
            default_ssh_key_name,
            registry_credentials: self.registry_credentials,
        }
    }
}

/// What `action` will not do to cluster `cluster` on the management cluster of `management`,
/// said before anything the action needs (helm, kind, the devices, a release download): connects
/// and refuses through [`snow_lifecycle::standing::refusal`] (the cluster not there when the
/// action needs it, imported observe-only, managed by another system, paused by someone else).
/// A caller runs it first; the workflows keep their own checks for a caller that does not.
pub async fn refusal(
    management: &snow_kube::KubeconfigSource,
    cluster: &str,
    action: Action,
) -> Result<(), ProvisionError> {
    let mgmt = snow_kube::Management::connect(management).await?;
    snow_lifecycle::standing::refusal(&mgmt, cluster, action).await?;
    Ok(())
}

/// Stores the Cilium manifests of `spec`'s cluster on `mgmt` for a controller that cannot run
/// helm (`CniSource::Stored`): the cluster's own settings and, but for a given manifest, the
/// default settings of every Kubernetes version of `inputs`' bundle, from `source`. One report
/// per manifest, stored or why not.
pub async fn store_cilium(
    mgmt: &Management,
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    inputs: Option<&snow_api::release::ReleaseInputs>,
    source: &StoredCiliumSource,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<StoreReport>, ProvisionError> {
    let stored =
        snow_lifecycle::cni::stored::store_all(mgmt, spec, release, inputs, None, source, on_event);
    Ok(stored.await?)
}

/// Says a step, as a progress line.
fn step(on_event: &mut dyn FnMut(Event), text: impl Into<String>) {
    on_event(Event::Step(text.into()));
}
