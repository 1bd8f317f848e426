//! The controller behind `snowctl controller`: reconciles Snow clusters declared with kubectl or
//! GitOps, as EKS Anywhere's cluster and SnowMachineConfig controllers do, from the same library
//! code as the CLI: the same validation (`snow-api`), the same rendering (`capi-render`), the same
//! level-based apply ([`snow_lifecycle::reconcile`]).
//!
//! - [`machine_config::reconcile`] checks each SnowMachineConfig (statically, then its AMI and SSH
//!   key on its devices) into `status.specValid`/`status.failureMessage`.
//! - [`cluster::reconcile`] builds the spec from a Cluster's objects, checks it, waits for valid
//!   machine configs, renders, applies what differs (field manager [`FIELD_MANAGER`]), rolls
//!   external etcd first, removes dropped worker groups, reports readiness in the Cluster's
//!   status and as Events, and deletes through a finalizer.
//!
//! Both are level-based: the same inputs converge to the same objects, and a pass over unchanged
//! clusters writes nothing ([`resync`] counts the writes). [`run`] drives them with kube-runtime
//! watches, behind a leader-elected Lease.
//!
//! [`webhook`] serves the admission webhooks of the same kinds (every replica serves them, the
//! leader or not).

pub mod cache;
pub mod cluster;
mod health;
mod leader;
pub mod machine_config;
pub mod metrics;
mod process;
mod sources;
pub mod webhook;

pub use cache::Caches;
pub use health::Health;
pub use leader::LeaderElection;
pub use machine_config::{BOOTSTRAP_SECRET, BootstrapCredentials, DeviceSource};
pub use metrics::Metrics;
pub use process::{replica_identity, termination};
/// Where the Cilium manifest comes from: one type for the controller and for create/upgrade.
pub use snow_lifecycle::cni::CniSource;
pub use sources::{EKSA_API_VERSION, Sources};

use futures_util::{FutureExt, StreamExt, stream};
use kube::{
    Api,
    api::DynamicObject,
    core::{ApiResource, GroupVersionKind},
    runtime::{
        Controller,
        controller::{Action, Config as ControllerConfig},
        reflector::ObjectRef,
        watcher,
    },
};
use serde_json::Value;
use snow_kube::Management;
use snow_lifecycle::LifecycleError;
use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

/// The field manager of the controller's writes.
pub const FIELD_MANAGER: &str = "snowctl-controller";
/// The finalizer on a Cluster the controller manages (EKS Anywhere's name).
pub const FINALIZER: &str = "clusters.anywhere.eks.amazonaws.com/finalizer";
/// The annotation that pauses reconciliation of a Cluster.
pub use snow_api::admission::PAUSED_ANNOTATION;
/// How often every object is looked at again without an event.
pub const RESYNC: Duration = Duration::from_secs(300);

/// What a reconcile did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
    /// Writes made to the management cluster.
    pub writes: u32,
}

/// What the reconcilers share.
pub struct Context<S: DeviceSource> {
    /// The management cluster.
    pub mgmt: Management,
    /// Versions and images to render with.
    pub inputs: snow_api::release::ReleaseInputs,
    /// Device clients for the machine-config checks.
    pub devices: S,
    /// The field manager (normally [`FIELD_MANAGER`]).
    pub manager: String,
    /// Only this namespace's objects; `None` for all.
    pub namespace: Option<String>,
    /// Where each cluster's Cilium manifest comes from.
    pub cni: CniSource,
}

impl<S: DeviceSource> std::fmt::Debug for Context<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("mgmt", &self.mgmt)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// The EKS Anywhere kinds the controller watches.
fn resource(kind: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("anywhere.eks.amazonaws.com", "v1alpha1", kind),
        &snow_kube::plural(kind),
    )
}

impl<S: DeviceSource> Context<S> {
    fn api(&self, kind: &str) -> Api<DynamicObject> {
        let r = resource(kind);
        match &self.namespace {
            Some(ns) => Api::namespaced_with(self.mgmt.client().clone(), ns, &r),
            None => Api::all_with(self.mgmt.client().clone(), &r),
        }
    }

    async fn list(&self, kind: &str) -> Result<Vec<Value>, LifecycleError> {
        Ok(self
            .mgmt
            .list(EKSA_API_VERSION, kind, self.namespace.as_deref(), None)
            .await?)
    }
}

/// One full pass: every SnowMachineConfig, then every Cluster.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resync {
    /// Machine configs looked at.
    pub machine_configs: usize,
    /// Clusters looked at.
    pub clusters: usize,
    /// Writes made.
    pub writes: u32,
    /// Reconciles that failed with an API error.
    pub errors: usize,
}

/// Reconciles every declared object once, `concurrency` at a time.
pub async fn resync<S: DeviceSource>(
    ctx: &Context<S>,
    concurrency: usize,
) -> Result<Resync, LifecycleError> {
    let mut total = Resync::default();
    let configs = ctx.list("SnowMachineConfig").await?;
    total.machine_configs = configs.len();
    let outcomes: Vec<_> = stream::iter(configs.iter())
        .map(|c| machine_config::reconcile(&ctx.mgmt, &ctx.devices, &ctx.manager, c))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let clusters = ctx.list("Cluster").await?;
    total.clusters = clusters.len();
    let more: Vec<_> = stream::iter(clusters.iter())
        .map(|c| cluster::reconcile(ctx, c))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    for outcome in outcomes.into_iter().chain(more) {
        match outcome {
            Ok(o) => total.writes += o.writes,
            Err(e) => {
                tracing::warn!(error = %e, "reconcile failed");
                total.errors += 1;
            }
        }
    }
    Ok(total)
}

/// [`resync`] through the caches: every cached SnowMachineConfig, then every cached Cluster,
/// `concurrency` at a time; an object whose inputs have not changed since a pass found it
/// Ready is not reconciled again ([`Caches`]), so a resync of unchanged, Ready clusters makes
/// no request. Each reconcile is recorded in `metrics`.
pub async fn resync_cached<S: DeviceSource>(
    ctx: &Context<S>,
    caches: &Caches,
    metrics: &Metrics,
    concurrency: usize,
) -> Resync {
    let mut total = Resync::default();
    let configs = caches.eksa("SnowMachineConfig");
    let clusters = caches.eksa("Cluster");
    total.machine_configs = configs.len();
    total.clusters = clusters.len();
    metrics.queued(i64::try_from(configs.len() + clusters.len()).unwrap_or(i64::MAX));
    let outcomes: Vec<_> = stream::iter(configs.iter())
        .map(|c| async {
            let outcome = reconcile_machine_config(ctx, caches, metrics, c).await;
            metrics.queued(-1);
            outcome
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let deployments = caches.machine_deployments();
    let more: Vec<_> = stream::iter(clusters.iter())
        .map(|c| async {
            let fingerprint =
                (deployments.as_ref()).and_then(|mds| caches.cluster_fingerprint_in(c, mds));
            let outcome = reconcile_cluster_with(ctx, caches, metrics, c, fingerprint).await;
            metrics.queued(-1);
            outcome
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    for outcome in outcomes.into_iter().chain(more) {
        match outcome {
            Ok(o) => total.writes += o.writes,
            Err(e) => {
                tracing::warn!(error = %e, "reconcile failed");
                total.errors += 1;
            }
        }
    }
    total
}

/// [`machine_config::reconcile`] unless nothing it reads changed since it found the config
/// valid.
pub async fn reconcile_machine_config<S: DeviceSource>(
    ctx: &Context<S>,
    caches: &Caches,
    metrics: &Metrics,
    config: &Value,
) -> Result<Outcome, LifecycleError> {
    let settled =
        config["status"]["specValid"] == true && config["metadata"]["deletionTimestamp"].is_null();
    let pass = machine_config::reconcile(&ctx.mgmt, &ctx.devices, &ctx.manager, config);
    let fingerprint = caches.machine_config_fingerprint(config);
    (caches.reconcile(
        metrics,
        "SnowMachineConfig",
        config,
        fingerprint,
        settled,
        pass,
    ))
    .await
}

/// [`cluster::reconcile`] unless nothing it reads changed since it found the cluster Ready.
pub async fn reconcile_cluster<S: DeviceSource>(
    ctx: &Context<S>,
    caches: &Caches,
    metrics: &Metrics,
    cluster: &Value,
) -> Result<Outcome, LifecycleError> {
    let fingerprint = caches.cluster_fingerprint(cluster);
    reconcile_cluster_with(ctx, caches, metrics, cluster, fingerprint).await
}

async fn reconcile_cluster_with<S: DeviceSource>(
    ctx: &Context<S>,
    caches: &Caches,
    metrics: &Metrics,
    cluster: &Value,
    fingerprint: Option<u64>,
) -> Result<Outcome, LifecycleError> {
    let pass = cluster::reconcile(ctx, cluster);
    let settled = cluster::settled(cluster);
    (caches.reconcile(metrics, "Cluster", cluster, fingerprint, settled, pass)).await
}

/// How [`run`] runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Reconciles at once per kind.
    pub concurrency: u16,
    /// Where the health endpoint listens; `None` for none.
    pub health: Option<SocketAddr>,
    /// The Lease; `None` runs without leader election (one replica only).
    pub leader: Option<LeaderElection>,
    /// Where and with what certificate the admission webhooks are served; `None` for none.
    pub webhook: Option<webhook::WebhookOptions>,
}

/// Why the controller stopped.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The management cluster failed.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// The health endpoint could not listen.
    #[error("cannot serve the health endpoint on {addr}: {reason}")]
    Health {
        /// Where.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The admission webhooks could not be served.
    #[error(transparent)]
    Webhook(#[from] webhook::WebhookError),
    /// Another replica took the Lease while this one led.
    #[error("lost the leader Lease to another replica")]
    LostLease,
}

/// A request of snow-kube's client is a failure of the management cluster, as it was when the
/// client was part of snow-lifecycle.
impl From<snow_kube::KubeError> for ControllerError {
    fn from(err: snow_kube::KubeError) -> ControllerError {
        ControllerError::Lifecycle(err.into())
    }
}

/// The reconcile error type kube-runtime needs.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ReconcileError(#[from] LifecycleError);

/// The kind a watch-driven reconcile is for.
#[derive(Debug, Clone, Copy)]
enum Watched {
    MachineConfig,
    Cluster,
}

/// One reconcile of a watched object, counted in the queue depth while it runs.
async fn watched<S: DeviceSource>(
    kind: Watched,
    object: Arc<DynamicObject>,
    ctx: Arc<Context<S>>,
    caches: Arc<Caches>,
    health: Arc<Health>,
) -> Result<Action, ReconcileError> {
    let value = serde_json::to_value(object.as_ref()).unwrap_or_default();
    let metrics = &health.metrics;
    metrics.queued(1);
    let outcome = match kind {
        Watched::MachineConfig => reconcile_machine_config(&ctx, &caches, metrics, &value).await,
        Watched::Cluster => reconcile_cluster(&ctx, &caches, metrics, &value).await,
    };
    metrics.queued(-1);
    outcome.map(action).map_err(ReconcileError)
}

fn action(outcome: Outcome) -> Action {
    Action::requeue(outcome.requeue_after.unwrap_or(RESYNC))
}

fn backoff<K, C>(_: Arc<K>, err: &ReconcileError, _: Arc<C>) -> Action {
    tracing::warn!(error = %err.0, "reconcile failed; retrying in 15s");
    Action::requeue(Duration::from_secs(15))
}

/// Runs the controller until `shutdown` resolves: health endpoint, leader election, then the
/// machine-config and cluster controllers (watches, with re-lists when a watch drops).
pub async fn run<S: DeviceSource>(
    ctx: Arc<Context<S>>,
    options: RunOptions,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<(), ControllerError> {
    let health = Arc::new(Health::default());
    let _server = match options.health {
        Some(addr) => {
            let (bound, task) =
                health::serve(addr, health.clone())
                    .await
                    .map_err(|e| ControllerError::Health {
                        addr,
                        reason: e.to_string(),
                    })?;
            tracing::info!(%bound, "health endpoint: /healthz, /readyz, /metrics");
            Some(AbortOnDrop(task))
        }
        None => None,
    };
    let _webhooks = match &options.webhook {
        Some(webhook) => {
            let (bound, task) = webhook::serve(webhook).await?;
            tracing::info!(%bound, cert_dir = %webhook.cert_dir.display(), "admission webhooks");
            Some(AbortOnDrop(task))
        }
        None => None,
    };
    let version = ctx.mgmt.ping().await?;
    health.set_ready(true);
    tracing::info!(server = ctx.mgmt.server(), %version, "connected to the management cluster");

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
        .boxed()
        .shared()
    };
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let is_stopping = || *stop_rx.borrow();

    // Stand by until this replica holds the Lease.
    if let Some(election) = &options.leader {
        loop {
            if is_stopping() {
                return Ok(());
            }
            match election.try_acquire(&ctx.mgmt).await {
                Ok(true) => break,
                Ok(false) => {
                    tracing::debug!(lease = %election.name, "standing by: another replica leads")
                }
                Err(e) => tracing::warn!(error = %e, "leader election failed"),
            }
            let mut rx = stop_rx.clone();
            tokio::select! {
                () = tokio::time::sleep(election.renew_every()) => {}
                _ = rx.wait_for(|s| *s) => return Ok(()),
            }
        }
        tracing::info!(identity = %election.identity, lease = %election.name, "leading");
        health.set_leader(true);
    } else {
        health.set_leader(true);
    }

    let caches = Arc::new(Caches::start(ctx.mgmt.client(), ctx.namespace.as_deref()).await);
    // Until a cache has listed, what it would hold counts as changed: passes run as before.
    // Bounded well under a probe's patience: correctness does not depend on it.
    if tokio::time::timeout(Duration::from_secs(10), caches.ready())
        .await
        .is_err()
    {
        tracing::warn!(
            "some caches have not listed within 10s; their objects are read with GETs until they do"
        );
    }
    tracing::info!(
        namespace = ctx.namespace.as_deref().unwrap_or("*"),
        cached = caches.len(),
        "watching Clusters and SnowMachineConfigs"
    );
    let config = ControllerConfig::default().concurrency(options.concurrency);
    let machine_configs = Controller::new_with(
        ctx.api("SnowMachineConfig"),
        watcher::Config::default(),
        resource("SnowMachineConfig"),
    )
    .with_config(config.clone())
    .graceful_shutdown_on(stopped.clone())
    .run(
        {
            let (caches, health) = (caches.clone(), health.clone());
            move |object, ctx| {
                watched(
                    Watched::MachineConfig,
                    object,
                    ctx,
                    caches.clone(),
                    health.clone(),
                )
            }
        },
        backoff,
        ctx.clone(),
    )
    .for_each(|_| async {});

    // A machine config's verdict concerns the Clusters of its namespace.
    let clusters_controller = Controller::new_with(
        ctx.api("Cluster"),
        watcher::Config::default(),
        resource("Cluster"),
    );
    let store = clusters_controller.store();
    let clusters = clusters_controller
        .watches_with(
            ctx.api("SnowMachineConfig"),
            resource("SnowMachineConfig"),
            watcher::Config::default(),
            move |config: DynamicObject| {
                let ns = config.metadata.namespace.clone();
                store
                    .state()
                    .into_iter()
                    .filter(|c| c.metadata.namespace == ns)
                    .map(|c| ObjectRef::from_obj_with(c.as_ref(), resource("Cluster")))
                    .collect::<Vec<_>>()
            },
        )
        .with_config(config)
        .graceful_shutdown_on(stopped.clone())
        .run(
            {
                let (caches, health) = (caches.clone(), health.clone());
                move |object, ctx| {
                    watched(
                        Watched::Cluster,
                        object,
                        ctx,
                        caches.clone(),
                        health.clone(),
                    )
                }
            },
            backoff,
            ctx.clone(),
        )
        .for_each(|_| async {});

    // The holder renews; losing the Lease stops this replica (its supervisor restarts it).
    let renew = async {
        let Some(election) = &options.leader else {
            return stopped.await;
        };
        loop {
            let mut rx = stop_rx.clone();
            tokio::select! {
                () = tokio::time::sleep(election.renew_every()) => {}
                _ = rx.wait_for(|s| *s) => return,
            }
            match election.try_acquire(&ctx.mgmt).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => tracing::warn!(error = %e, "renewing the Lease failed"),
            }
        }
    };
    let lost = tokio::select! {
        _ = async { tokio::join!(machine_configs, clusters) } => false,
        () = renew => !is_stopping(),
    };
    if let Some(election) = &options.leader {
        if lost {
            health.set_leader(false);
            return Err(ControllerError::LostLease);
        }
        if let Err(e) = election.release(&ctx.mgmt).await {
            tracing::warn!(error = %e, "releasing the Lease failed");
        }
    }
    tracing::info!("stopped");
    Ok(())
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
