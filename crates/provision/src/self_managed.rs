//! The first cluster from nothing (EKS Anywhere's management create without `--kubeconfig`):
//! a bootstrap cluster, the providers there, the cluster created from it, the providers on the
//! new cluster, Cluster API's objects moved into it so that it manages itself, its spec recorded
//! on it, and the bootstrap cluster deleted.
//!
//! Every step converges, so a re-run after a failure continues: it finds the bootstrap cluster
//! (kind's by name, or the one given), the installed providers, the cluster already created
//! (the same default key name, read from the inventory wherever it is), the objects already
//! moved (the move resumes; once the new cluster holds the Cluster and the bootstrap cluster no
//! longer does, the create and the move are skipped).

use crate::gitops::{Bootstrapped, GitOpsInputs};
use crate::{CreateOptions, ProvisionError, Request, preflight, step, workflow};
use serde_json::Value;
use snow_lifecycle::{
    Destination, Event, KubeconfigSource, LifecycleError, Management, MoveOptions,
    bootstrap::BootstrapCluster,
    init::{self, InitOptions, components::ComponentObjects},
    kubeconfig, move_cluster,
};
use std::path::PathBuf;

/// The Cluster API group of the Cluster a move carries.
const CAPI_CLUSTER: (&str, &str) = ("cluster.x-k8s.io/v1beta1", "Cluster");
/// Cluster API's pause annotation (a move pauses with [`snow_lifecycle::move_cluster::MOVE_PAUSE`]).
const PAUSED: &str = snow_api::names::PAUSED_ANNOTATION;
/// The EKS Anywhere API version of the spec's objects.
const EKSA_API_VERSION: &str = snow_api::names::EKSA_API_VERSION;

/// How [`create`] runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Checks, CNI, waits and `force`, as for a create on a management cluster.
    pub create: CreateOptions,
    /// The provider stack installed on both clusters (`snow_lifecycle::init::prepare`).
    pub components: Vec<ComponentObjects>,
    /// The snowctl controller (`snow_lifecycle::init::controller::component`), installed on
    /// the new cluster only, last; `None`: not installed.
    pub controller: Option<ComponentObjects>,
    /// How the providers are waited for.
    pub init: InitOptions,
    /// How the move runs.
    pub moving: MoveOptions,
    /// Keep the bootstrap cluster at the end.
    pub keep_bootstrap: bool,
}

/// A self-managed cluster made.
#[derive(Debug, Clone)]
pub struct SelfManaged {
    /// The cluster.
    pub cluster: String,
    /// Its kubeconfig (it manages itself: this is also its management kubeconfig).
    pub kubeconfig: PathBuf,
    /// Whether an earlier run had already moved it (this run only finished the last steps).
    pub resumed_after_move: bool,
    /// What GitOps' set-up did, when the spec names a FluxConfig.
    pub gitops: Option<Bootstrapped>,
}

/// Creates the first cluster of `req` from `bootstrap` (see the module documentation). A
/// failure after the bootstrap cluster exists is [`ProvisionError::Interrupted`], saying what
/// is left and how to resume or clean up.
pub async fn create(
    bootstrap: &impl BootstrapCluster,
    req: &Request<'_>,
    opts: &Options,
    on_event: &mut dyn FnMut(Event),
) -> Result<SelfManaged, ProvisionError> {
    // Boxed: one more level of nested futures would pass the compiler's query depth.
    Box::pin(create_with(
        bootstrap,
        req,
        opts,
        &GitOpsInputs::default(),
        on_event,
    ))
    .await
}

/// [`create`], ending, when the spec names a FluxConfig, with GitOps set up on the new cluster
/// ([`crate::gitops::bootstrap`] with `gitops`' inputs, checked before anything is made), after
/// the bootstrap cluster is gone: a GitOps failure leaves a cluster that manages itself, and the
/// same command run again finishes GitOps.
pub(crate) async fn create_with(
    bootstrap: &impl BootstrapCluster,
    req: &Request<'_>,
    opts: &Options,
    gitops: &GitOpsInputs,
    on_event: &mut dyn FnMut(Event),
) -> Result<SelfManaged, ProvisionError> {
    crate::gitops::required(req.spec, req.release, gitops)?;
    let cluster = req.spec.name().to_owned();
    let cni = crate::cni::render(opts.create.cni.clone(), req, on_event).await?;
    preflight::checks(req.spec, req.devices, opts.create.checks, on_event).await?;
    let path = kubeconfig::path_for(req.dir, &cluster);
    let mut target = reach(&path).await;
    let mut state = State::default();
    if let Some(t) = &target {
        let held = cluster_on(t, &cluster).await.unwrap_or(None);
        state.target_holds = held.is_some();
        // A move killed after it deleted the source's Cluster but before it unpaused the
        // target's leaves it paused: the move still has that to do.
        state.target_paused = held.as_ref().is_some_and(|c| {
            c["metadata"]["annotations"][PAUSED] == snow_lifecycle::move_cluster::MOVE_PAUSE
        });
    }
    // Once the new cluster holds its Cluster, the bootstrap cluster is only looked at (an
    // interrupted move resumes from it), never made again.
    let boot = match state.target_holds {
        true => reach(bootstrap.kubeconfig()).await,
        false => {
            let what = "Creating new bootstrap cluster";
            step(on_event, what);
            let boot = bootstrap.create_or_find(on_event).await;
            Some(boot.map_err(|e| interrupted(what, e.into(), &cluster, bootstrap, false))?)
        }
    };
    if let Some(boot) = &boot {
        let held = holds_cluster(boot, &cluster).await;
        state.boot_holds = held.map_err(|e| {
            interrupted(
                "Creating new bootstrap cluster",
                e.into(),
                &cluster,
                bootstrap,
                false,
            )
        })?;
    }
    let resumed_after_move = state.target_holds && !state.boot_holds && !state.target_paused;
    if boot.is_none() && state.target_paused {
        let why = LifecycleError::NotFound {
            what: format!(
                "the bootstrap cluster at {} (the move of cluster {cluster} into itself is not finished: it is still paused)",
                bootstrap.kubeconfig().display()
            ),
        };
        let what = "Moving the cluster management components from the bootstrap cluster to the management cluster";
        return Err(interrupted(what, why.into(), &cluster, bootstrap, false));
    }
    if let Some(boot) = boot.as_ref().filter(|_| !resumed_after_move) {
        let fail = |what: &str, e: ProvisionError| interrupted(what, e, &cluster, bootstrap, false);
        if !state.target_holds {
            let what = "Provider specific pre-capi-install-setup on bootstrap cluster";
            step(on_event, what);
            identity_secret(boot, req)
                .await
                .map_err(|e| fail(what, e.into()))?;
            let what = "Installing cluster-api providers on bootstrap cluster";
            step(on_event, what);
            init::init(boot, &opts.components, &opts.init, on_event)
                .await
                .map_err(|e| fail(what, e.into()))?;
            let what = "Creating new management cluster";
            step(on_event, what);
            let made = workflow::create_on(boot, req, cni.manifest.clone(), &opts.create, on_event);
            let made = made.await;
            let made = made.map_err(|e| fail(what, e.into()))?;
            let t = Management::connect(&KubeconfigSource::file(&made.kubeconfig)).await;
            target = Some(t.map_err(|e| fail(what, e.into()))?);
        }
        let Some(t) = &target else {
            let why = LifecycleError::NotFound {
                what: format!("the kubeconfig {} of cluster {cluster}", path.display()),
            };
            return Err(fail("Creating new management cluster", why.into()));
        };
        let what = "Installing cluster-api providers on management cluster";
        step(on_event, what);
        init::init(t, &opts.components, &opts.init, on_event)
            .await
            .map_err(|e| fail(what, e.into()))?;
        let what = "Installing EKS-A secrets on management cluster";
        step(on_event, what);
        identity_secret(t, req)
            .await
            .map_err(|e| fail(what, e.into()))?;
        let what = "Moving the cluster management components from the bootstrap cluster to the management cluster";
        step(on_event, what);
        let to = Destination::Cluster(t);
        move_cluster(boot, &cluster, to, &opts.moving, on_event)
            .await
            .map_err(|e| fail(what, e.into()))?;
    }
    let what = "Moving cluster spec to workload cluster";
    let Some(t) = &target else {
        let why = LifecycleError::NotFound {
            what: format!("cluster {cluster} at {}", path.display()),
        };
        return Err(interrupted(what, why.into(), &cluster, bootstrap, true));
    };
    step(on_event, what);
    record_spec(t, req, &opts.init)
        .await
        .map_err(|e| interrupted(what, e, &cluster, bootstrap, true))?;
    // On the new cluster, which manages the next ones (what the bootstrap cluster held is gone
    // with it).
    workflow::store_cilium(t, req, &cni, on_event)
        .await
        .map_err(|e| {
            let what = "Storing the Cilium manifests for the in-cluster controller";
            interrupted(what, e.into(), &cluster, bootstrap, true)
        })?;
    // After the spec is recorded: the controller's webhooks would review (and its defaulting
    // webhook change) the recorded objects, and it finds the cluster it manages in place.
    if let Some(controller) = &opts.controller {
        let what = "Installing the snowctl controller on management cluster";
        step(on_event, what);
        init::init(t, std::slice::from_ref(controller), &opts.init, on_event)
            .await
            .map_err(|e| interrupted(what, e.into(), &cluster, bootstrap, true))?;
    }
    match opts.keep_bootstrap {
        true => on_event(Event::Note(format!(
            "Keeping the bootstrap cluster, as asked: {}",
            bootstrap.kubeconfig().display()
        ))),
        false => bootstrap.delete(on_event).await.map_err(|e| {
            interrupted(
                "Deleting bootstrap cluster",
                e.into(),
                &cluster,
                bootstrap,
                true,
            )
        })?,
    }
    let gitops = crate::gitops::after_create(t, req.spec, req.release, gitops, on_event).await?;
    Ok(SelfManaged {
        cluster,
        kubeconfig: path,
        resumed_after_move,
        gitops,
    })
}

/// What an earlier run left.
#[derive(Debug, Default)]
struct State {
    /// The new cluster answers and holds its own Cluster object.
    target_holds: bool,
    /// The bootstrap cluster still holds it (not moved, or the move was interrupted).
    boot_holds: bool,
    /// The new cluster's Cluster is still paused by the move.
    target_paused: bool,
}

/// The new cluster, when its kubeconfig is there and it answers.
async fn reach(path: &std::path::Path) -> Option<Management> {
    if !path.exists() {
        return None;
    }
    let mgmt = Management::connect(&KubeconfigSource::file(path))
        .await
        .ok()?;
    mgmt.ping().await.ok()?;
    Some(mgmt)
}

/// Whether `mgmt` has the Cluster API Cluster `cluster` (in `eksa-system`).
async fn holds_cluster(mgmt: &Management, cluster: &str) -> Result<bool, LifecycleError> {
    Ok(cluster_on(mgmt, cluster).await?.is_some())
}

/// The Cluster API Cluster `cluster` (in `eksa-system`) on `mgmt`, if there.
async fn cluster_on(mgmt: &Management, cluster: &str) -> Result<Option<Value>, LifecycleError> {
    let (api_version, kind) = CAPI_CLUSTER;
    if mgmt.served(api_version).await?.is_none() {
        return Ok(None);
    }
    Ok(mgmt
        .get(api_version, kind, Some(capi_render::NAMESPACE), cluster)
        .await?)
}

/// The namespace `eksa-system` and the CAPAS identity Secret of the cluster in it (with
/// clusterctl's move label), when the device files were given.
async fn identity_secret(mgmt: &Management, req: &Request<'_>) -> Result<(), LifecycleError> {
    let Some(secrets) = req.secrets else {
        return Ok(());
    };
    let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": capi_render::NAMESPACE}});
    mgmt.apply(&namespace).await?;
    let secret = snow_credentials::encode::capas_cluster_secret(
        req.spec.name(),
        secrets.credentials,
        secrets.ca_bundle,
    );
    mgmt.apply(&secret.to_json()).await?;
    Ok(())
}

/// The spec on the new cluster: EKS Anywhere's CRDs, each waited for `Established` (as `init`
/// waits, within `init.crd_timeout`: the API server serves a kind only from then on), the
/// spec's objects, so a controller and EKS Anywhere's tools see it (without `managed-by-cli`:
/// EKS Anywhere's create ends by removing it), and the identity Secret its datacenter names
/// (when the device files were given); and the inventory ConfigMap the move brought
/// (upgrade and delete read it there).
async fn record_spec(
    mgmt: &Management,
    req: &Request<'_>,
    init: &InitOptions,
) -> Result<(), ProvisionError> {
    let crds = snow_api::crd::crds();
    for crd in &crds {
        let crd = serde_json::to_value(crd).map_err(|e| document("an EKS Anywhere CRD", e))?;
        mgmt.apply(&crd).await?;
    }
    for crd in &crds {
        let name = crd.metadata.name.as_deref().unwrap_or_default();
        init::crd_established(mgmt, name, init).await?;
    }
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(req.spec_text).map_err(|e| document("the spec", e))?;
    for mut object in documents.into_iter().filter(Value::is_object) {
        if object["apiVersion"] != EKSA_API_VERSION {
            continue;
        }
        if object["metadata"]["namespace"].is_null() {
            object["metadata"]["namespace"] = req.spec.namespace().into();
        }
        mgmt.apply(&object).await?;
    }
    // The Secret the SnowDatacenterConfig's identityRef names, in EKS Anywhere's encoding:
    // the controller on the new cluster reads the device credentials from it, as EKS
    // Anywhere's does, to manage this cluster and the next ones.
    // A checked spec has its identityRef defaulted (`<datacenter>-snow-credentials`).
    let datacenter = req.spec.datacenter.as_ref();
    let identity = datacenter.and_then(|dc| Some((dc, dc.spec.identity_ref.as_ref()?.name())));
    if let (Some(secrets), Some((dc, name))) = (req.secrets, identity) {
        let namespace = dc
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(req.spec.namespace());
        let secret = snow_credentials::encode::eksa_identity_secret(
            name,
            namespace,
            secrets.credentials,
            secrets.ca_bundle,
        );
        mgmt.apply(&secret.to_json()).await?;
    }
    match snow_lifecycle::Inventory::load(mgmt, req.spec.name()).await? {
        Some(_) => Ok(()),
        None => Err(LifecycleError::NotFound {
            what: format!(
                "the inventory ConfigMap of cluster {} (the move carries it)",
                req.spec.name()
            ),
        }
        .into()),
    }
}

fn document(what: &str, reason: impl std::fmt::Display) -> ProvisionError {
    LifecycleError::Document {
        what: what.to_owned(),
        reason: reason.to_string(),
    }
    .into()
}

/// A failed step, with what is left and how to go on.
fn interrupted(
    what: &str,
    source: ProvisionError,
    cluster: &str,
    bootstrap: &impl BootstrapCluster,
    moved: bool,
) -> ProvisionError {
    let boot = bootstrap.kubeconfig().display();
    let left = match moved {
        false => format!(
            "The bootstrap cluster ({boot}) keeps what this run made so far (the providers, and cluster {cluster} once created). Run the same command again to resume from this step; to give up, delete cluster {cluster} there if it was created (with the bootstrap cluster's kubeconfig {boot}), then the bootstrap cluster."
        ),
        true => format!(
            "Cluster {cluster} manages itself now (./{cluster}/{cluster}-eks-a-cluster.kubeconfig). Run the same command again to finish; the bootstrap cluster ({boot}) holds nothing of it any more and can be deleted."
        ),
    };
    ProvisionError::Interrupted {
        step: what.to_owned(),
        source: Box::new(source),
        left,
    }
}

/// How [`delete`] runs.
#[derive(Debug, Clone)]
pub struct DeleteOptions {
    /// The provider stack installed on the bootstrap cluster (the versions the cluster runs:
    /// the move refuses others).
    pub components: Vec<ComponentObjects>,
    /// How the providers are waited for.
    pub init: InitOptions,
    /// How the move back runs.
    pub moving: MoveOptions,
    /// How the delete waits.
    pub delete: snow_lifecycle::DeleteOptions,
    /// Keep the bootstrap cluster at the end.
    pub keep_bootstrap: bool,
}

/// Whether cluster `cluster` on `mgmt` is `mgmt` itself: its `<cluster>-kubeconfig` Secret (the
/// one Cluster API publishes) points at the API server `mgmt` talks to. Deleting such a cluster
/// from itself would delete the controllers doing the deleting, so it goes through [`delete`].
pub async fn is_self_managed(mgmt: &Management, cluster: &str) -> Result<bool, LifecycleError> {
    let Some(kubeconfig) = snow_kube::live::published_kubeconfig(mgmt, cluster).await? else {
        return Ok(false);
    };
    let text = kubeconfig.text();
    let own = mgmt.server().trim_end_matches('/');
    Ok(text.lines().any(|line| {
        line.trim()
            .strip_prefix("server:")
            .is_some_and(|server| server.trim().trim_matches('"').trim_end_matches('/') == own)
    }))
}

/// Deletes self-managed cluster `cluster` (EKS Anywhere's delete of a management cluster): a
/// bootstrap cluster, the providers there, Cluster API's objects moved back into it, the
/// cluster deleted from there (its machines with it), the bootstrap cluster deleted. Refused,
/// before anything changes, while the cluster manages other clusters. A re-run after a failure
/// continues: the move resumes, and once the bootstrap cluster holds the cluster (the cluster
/// itself may be gone) only the delete is left.
pub async fn delete(
    bootstrap: &impl BootstrapCluster,
    management: &KubeconfigSource,
    cluster: &str,
    opts: &DeleteOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<snow_lifecycle::Deleted, ProvisionError> {
    // The cluster may be half gone after an interrupted run: then it is only looked for.
    let own = match Management::connect(management).await {
        Ok(mgmt) if mgmt.ping().await.is_ok() => Some(mgmt),
        _ => None,
    };
    if let Some(own) = &own {
        let others = other_clusters(own, cluster).await?;
        if !others.is_empty() {
            return Err(ProvisionError::StillManages {
                cluster: cluster.to_owned(),
                others,
            });
        }
    }
    let fail = |what: &str, e: ProvisionError| ProvisionError::Interrupted {
        step: what.to_owned(),
        source: Box::new(e),
        left: format!(
            "The bootstrap cluster ({}) keeps what this run made so far. Run the same command again to resume from this step.",
            bootstrap.kubeconfig().display()
        ),
    };
    let what = "Creating new bootstrap cluster";
    step(on_event, what);
    let boot = bootstrap.create_or_find(on_event).await;
    let boot = boot.map_err(|e| fail(what, e.into()))?;
    let what = "Installing cluster-api providers on bootstrap cluster";
    step(on_event, what);
    init::init(&boot, &opts.components, &opts.init, on_event)
        .await
        .map_err(|e| fail(what, e.into()))?;
    // The move also finishes one that was interrupted after the cluster left itself (it
    // unpauses it on the bootstrap cluster); with the cluster on neither, there is nothing to
    // move and the delete below says so.
    let what = "Moving cluster management from workload to bootstrap cluster";
    let mut held = false;
    for mgmt in own.iter().chain([&boot]) {
        held |= holds_cluster(mgmt, cluster)
            .await
            .map_err(|e| fail(what, e.into()))?;
    }
    if let Some(own) = own.as_ref().filter(|_| held) {
        step(on_event, what);
        // The snowctl controller running on the cluster would apply the Cluster API objects
        // of its declared Cluster again once the move took them away: paused first, as EKS
        // Anywhere pauses its reconciler before a move.
        pause_declared(own, cluster)
            .await
            .map_err(|e| fail(what, e.into()))?;
        move_cluster(
            own,
            cluster,
            Destination::Cluster(&boot),
            &opts.moving,
            on_event,
        )
        .await
        .map_err(|e| fail(what, e.into()))?;
    }
    let what = "Deleting workload cluster";
    step(on_event, what);
    let deleted = snow_lifecycle::delete(&boot, cluster, &opts.delete, on_event)
        .await
        .map_err(|e| fail(what, e.into()))?;
    match opts.keep_bootstrap {
        true => on_event(Event::Note(format!(
            "Keeping the bootstrap cluster, as asked: {}",
            bootstrap.kubeconfig().display()
        ))),
        false => bootstrap
            .delete(on_event)
            .await
            .map_err(|e| fail("Deleting bootstrap cluster", e.into()))?,
    }
    Ok(deleted)
}

/// Puts the EKS Anywhere paused annotation on the declared Cluster `cluster` (any namespace),
/// if `mgmt` serves the kind and has it.
async fn pause_declared(mgmt: &Management, cluster: &str) -> Result<(), LifecycleError> {
    if mgmt.served(EKSA_API_VERSION).await?.is_none() {
        return Ok(());
    }
    let paused = serde_json::json!({"metadata": {"annotations": {snow_api::admission::PAUSED_ANNOTATION: "true"}}});
    for declared in mgmt.list(EKSA_API_VERSION, "Cluster", None, None).await? {
        if declared["metadata"]["name"] == cluster && !snow_api::admission::is_paused(&declared) {
            mgmt.patch_merge(&declared, &paused, snow_kube::FIELD_MANAGER)
                .await?;
        }
    }
    Ok(())
}

/// `namespace/name` of every Cluster API Cluster on `mgmt` but `cluster` itself.
pub(crate) async fn other_clusters(
    mgmt: &Management,
    cluster: &str,
) -> Result<Vec<String>, LifecycleError> {
    let (api_version, kind) = CAPI_CLUSTER;
    if mgmt.served(api_version).await?.is_none() {
        return Ok(Vec::new());
    }
    let all = mgmt.list(api_version, kind, None, None).await?;
    Ok(all
        .iter()
        .filter_map(|c| {
            let ns = c["metadata"]["namespace"].as_str().unwrap_or_default();
            let name = c["metadata"]["name"].as_str()?;
            let own = name == cluster && ns == capi_render::NAMESPACE;
            (!own).then(|| format!("{ns}/{name}"))
        })
        .collect())
}
