//! `create`: check the management cluster, apply the rendered objects, wait until the cluster
//! is ready, and hand back its kubeconfig. Run again after an interruption, it converges.

use super::{
    ClusterRequest, Event, Inventory, LifecycleError, Management, ObjectRef, Stage, WaitOptions,
    apply,
    changes::plan_against,
    live::{Live, workload_kubeconfig},
    providers::check_management,
    wait::{self, Target},
};
use crate::cni::{self, CniManifest};
use capi_render::{Contract, NAMESPACE, RenderedObject, contract::ETCD_API_VERSION};
use snow_api::ClusterSpec;

/// How [`create`] runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateOptions {
    /// Per-stage timeouts and the poll interval.
    pub wait: WaitOptions,
    /// The rendered Cilium manifest installed on the workload cluster. `None` (the default) makes
    /// [`create`] fail before applying anything ([`LifecycleError::NoCniManifest`]): Cluster API
    /// installs no CNI, and without one no node becomes ready.
    pub cni: Option<CniManifest>,
}

/// A created (or converged) cluster. Its `Debug` leaves the kubeconfig out (it holds the
/// cluster's admin credentials).
#[derive(Clone)]
pub struct Created {
    /// The cluster name.
    pub cluster: String,
    /// Whether the cluster was already there (a re-run).
    pub existed: bool,
    /// What was applied.
    pub objects: Vec<ObjectRef>,
    /// The workload cluster's kubeconfig (from `<cluster>-kubeconfig`).
    pub kubeconfig: String,
}

impl std::fmt::Debug for Created {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Created")
            .field("cluster", &self.cluster)
            .field("existed", &self.existed)
            .field("objects", &self.objects)
            .field(
                "kubeconfig",
                &format!("<redacted: {} bytes>", self.kubeconfig.len()),
            )
            .finish()
    }
}

/// Does the management cluster have the identity Secret, when the request brings none?
async fn require_identity(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
) -> Result<(), LifecycleError> {
    if req.secrets.is_some() {
        return Ok(());
    }
    let name = snow_credentials::encode::capas_cluster_secret_name(req.spec.name());
    if mgmt
        .get("v1", "Secret", Some(NAMESPACE), &name)
        .await?
        .is_some()
    {
        return Ok(());
    }
    Err(LifecycleError::NoIdentity {
        namespace: NAMESPACE.to_owned(),
        name,
    })
}

/// Applies `rendered` after recording them (with what earlier runs applied) in the inventory.
pub(crate) async fn converge(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
    contract: Contract,
    rendered: &[RenderedObject],
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<ObjectRef>, LifecycleError> {
    let cluster = req.spec.name();
    let objects = apply::parse(rendered)?;
    let refs: Vec<ObjectRef> = objects.iter().map(apply::object_ref).collect();
    let mut inventory = Inventory::load(mgmt, cluster)
        .await?
        .unwrap_or_else(|| Inventory::new(cluster));
    inventory.contract = contract.as_str().to_owned();
    inventory.spec = req.spec_text.to_owned();
    inventory.objects.extend(refs.iter().cloned());
    if let Some(name) = req.default_ssh_key_name {
        inventory.ssh_key_name = Some(name.to_owned());
    }
    on_event(Event::Step(format!(
        "Applying {} objects of cluster {cluster} (server-side, field manager {})",
        objects.len(),
        super::FIELD_MANAGER
    )));
    apply::apply_all(mgmt, &inventory, &objects, on_event).await?;
    Ok(refs)
}

/// Waits for the EtcdadmCluster `<cluster>-etcd` to be ready.
pub(crate) async fn wait_for_etcd(
    mgmt: &Management,
    cluster: &str,
    opts: &WaitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    let etcd_name = format!("{cluster}-etcd");
    wait::wait_for(
        mgmt,
        Target {
            stage: Stage::Etcd,
            api_version: ETCD_API_VERSION,
            kind: "EtcdadmCluster",
            name: &etcd_name,
            condition: "status.ready",
            judge: wait::etcd_readiness,
            timeout: opts.timeouts.external_etcd,
        },
        opts.poll,
        on_event,
    )
    .await?;
    Ok(())
}

/// The CNI to install or upgrade in [`wait_ready`], and whether the spec skips upgrades.
#[derive(Clone, Copy)]
pub(crate) struct CniStep<'a> {
    pub manifest: &'a CniManifest,
    pub skip_upgrade: bool,
}

/// Waits in EKS Anywhere's order: external etcd, the control plane initialized, the CNI
/// installed (or upgraded) and ready on the workload cluster, the control plane ready, every
/// worker group of `spec`, the Cluster Ready.
pub(crate) async fn wait_ready(
    mgmt: &Management,
    spec: &ClusterSpec,
    contract: Contract,
    opts: &WaitOptions,
    cni: CniStep<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    let cluster = spec.name();
    let s = &spec.cluster.spec;
    if s.external_etcd_configuration.is_some() {
        on_event(Event::Step("Waiting for external etcd to be ready".into()));
        wait_for_etcd(mgmt, cluster, opts, on_event).await?;
    }
    let cp_api = contract.api_version("controlplane.cluster.x-k8s.io");
    on_event(Event::Step(
        "Waiting for the control plane to be initialized".into(),
    ));
    wait::wait_for(
        mgmt,
        Target {
            stage: Stage::ControlPlaneInitialized,
            api_version: &cp_api,
            kind: "KubeadmControlPlane",
            name: cluster,
            condition: "the control plane is initialized (its first API server answers)",
            judge: wait::initialized_readiness,
            timeout: opts.timeouts.control_plane,
        },
        opts.poll,
        on_event,
    )
    .await?;
    cni::install::ensure(
        mgmt,
        cluster,
        cni.manifest,
        cni.skip_upgrade,
        opts,
        on_event,
    )
    .await?;
    on_event(Event::Step(
        "Waiting for the control plane to be ready".into(),
    ));
    wait::wait_for(
        mgmt,
        Target::control_plane(&cp_api, cluster, opts.timeouts.control_plane),
        opts.poll,
        on_event,
    )
    .await?;
    let core = contract.api_version("cluster.x-k8s.io");
    for group in s.worker_node_group_configurations.iter().flatten() {
        let gname = group.name.clone().unwrap_or_default();
        let machines = group.count.unwrap_or(1).max(1);
        let md = format!("{cluster}-{gname}");
        on_event(Event::Step(format!(
            "Waiting for worker group {gname} to be ready"
        )));
        wait::wait_for(
            mgmt,
            Target {
                stage: Stage::Workers(gname.clone()),
                api_version: &core,
                kind: "MachineDeployment",
                name: &md,
                condition: "every machine of the deployment ready and up to date",
                judge: wait::replicas_readiness,
                timeout: opts
                    .timeouts
                    .per_machine
                    .map(|t| t.saturating_mul(u32::try_from(machines).unwrap_or(u32::MAX))),
            },
            opts.poll,
            on_event,
        )
        .await?;
    }
    on_event(Event::Step("Waiting for the cluster to be ready".into()));
    wait::wait_for(
        mgmt,
        Target {
            stage: Stage::Cluster,
            api_version: &core,
            kind: "Cluster",
            name: cluster,
            condition: "the Cluster is ready",
            judge: wait::cluster_readiness,
            timeout: opts.timeouts.control_plane,
        },
        opts.poll,
        on_event,
    )
    .await?;
    Ok(())
}

/// Creates the cluster of `req` on the management cluster, or converges one that an earlier,
/// interrupted run started. Refuses a cluster that exists with other templates (that is an
/// upgrade).
pub async fn create(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
    opts: &CreateOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Created, LifecycleError> {
    let cluster = req.spec.name().to_owned();
    let contract = check_management(mgmt, req, on_event).await?;
    let Some(manifest) = &opts.cni else {
        return Err(LifecycleError::NoCniManifest);
    };
    let cni = CniStep {
        manifest,
        skip_upgrade: req.spec.cilium().skip_upgrade,
    };
    let opts = &opts.wait;
    require_identity(mgmt, req).await?;
    let live = Live::read(mgmt, &cluster, contract).await?;
    crate::standing::refuse_live(live.cluster.as_ref(), &cluster, "create cluster")?;
    let plan = plan_against(req, &live)?;
    if !plan.changes.is_empty() {
        return Err(LifecycleError::ExistsDiffers {
            cluster,
            changes: plan
                .changes
                .iter()
                .map(|c| format!("{}: {}", c.object, c.reason))
                .collect(),
        });
    }
    let existed = live.cluster.is_some();
    if existed {
        on_event(Event::Note(format!(
            "Cluster {cluster} is already on the management cluster; converging it to the spec"
        )));
    }
    let objects = converge(mgmt, req, contract, &plan.objects, on_event).await?;
    wait_ready(mgmt, req.spec, contract, opts, cni, on_event).await?;
    let kubeconfig = workload_kubeconfig(mgmt, &cluster, opts)
        .await?
        .text()
        .to_owned();
    Ok(Created {
        cluster,
        existed,
        objects,
        kubeconfig,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_leaves_the_kubeconfig_and_secrets_out() {
        let created = Created {
            cluster: "edge".into(),
            existed: false,
            objects: Vec::new(),
            kubeconfig: "client-key-data: SECRETKEY".into(),
        };
        assert!(!format!("{created:?}").contains("SECRETKEY"));
        let secret = RenderedObject {
            api_version: "v1".into(),
            kind: "Secret".into(),
            name: "edge-snow-credentials".into(),
            yaml: "data:\n  credentials: SECRETCREDS\n".into(),
        };
        let shown = format!("{secret:?}");
        assert!(!shown.contains("SECRETCREDS") && shown.contains("edge-snow-credentials"));
    }
}
