//! Level-based steps for controllers: one pass reads what is on the management cluster, writes
//! only what differs from the rendered objects, and says how far the cluster is; it never waits.
//! A controller calls [`pass`] again until the cluster is ready, and [`delete_pass`] until the
//! cluster is gone (the CLI's [`create`](crate::create) and [`upgrade`](crate::upgrade) wait
//! instead, over the same render, inventory and apply steps).

use crate::{
    ClusterRequest, Deleted, Inventory, LifecycleError, Management, ObjectRef, PAUSED,
    applied::up_to_date,
    apply::{self, object_ref},
    changes::plan_against,
    delete::{Located, cleanup, locate},
    live::Live,
    upgrade::{etcd_changes, group_leftovers},
    wait::{etcd_readiness, replicas_readiness},
};
use capi_render::{Contract, NAMESPACE};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// How far one part of the cluster is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Ready, and nothing was written for it in this pass.
    pub ready: bool,
    /// What it says (`3/3 ready`, or what it waits for).
    pub detail: String,
}

/// What one [`pass`] did and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// Objects written (applied, patched or deleted) in this pass; 0 for a cluster already as
    /// the spec says.
    pub writes: u32,
    /// The control plane.
    pub control_plane: Progress,
    /// The worker groups, together.
    pub workers: Progress,
    /// Whether the pass stopped before applying everything because external etcd is rolling
    /// (the control plane waits, paused, until it is ready).
    pub etcd_rolling: bool,
    /// `Kind/name` of every object applied in this pass.
    pub applied: Vec<String>,
    /// `Kind/name` of the removed objects of worker groups the spec no longer has.
    pub removed: Vec<String>,
}

impl Pass {
    /// The control plane and every worker group ready, and nothing written.
    pub fn settled(&self) -> bool {
        self.writes == 0 && self.control_plane.ready && self.workers.ready
    }
}

fn name_of(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// One step towards the cluster of `req`, as field manager `manager`: renders against the live
/// objects, records the inventory, rolls a changed external etcd first (control plane paused),
/// applies what differs, removes dropped worker groups, and reports readiness from what was
/// there before this pass's writes.
pub async fn pass(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
    manager: &str,
) -> Result<Pass, LifecycleError> {
    let name = req.spec.name().to_owned();
    let contract = req.release.contract;
    let live = Live::read(mgmt, &name, contract).await?;
    // A declared cluster of an imported one's name would take it over: never reconciled.
    crate::standing::refuse_live(live.cluster.as_ref(), &name, "reconcile")?;
    let plan = plan_against(req, &live)?;
    let objects = apply::parse(&plan.objects)?;
    let mut inventory = Inventory::load(mgmt, &name)
        .await?
        .unwrap_or_else(|| Inventory::new(&name));
    inventory.contract = contract.as_str().to_owned();
    inventory.spec = req.spec_text.to_owned();
    inventory.objects.extend(objects.iter().map(object_ref));

    let mut writes = 0;
    let mut applied = Vec::new();
    let kcp_paused = live
        .control_plane
        .as_ref()
        .is_some_and(|k| k["metadata"]["annotations"][PAUSED] == "true");
    if etcd_changes(&live, &objects) || (kcp_paused && live.etcd.is_some()) {
        let (wrote, etcd_ready) =
            etcd_step(mgmt, manager, &live, &objects, kcp_paused, &mut applied).await?;
        writes += wrote;
        if !etcd_ready {
            return Ok(Pass {
                writes,
                control_plane: Progress {
                    ready: false,
                    detail: "paused while external etcd rolls".into(),
                },
                workers: Progress {
                    ready: false,
                    detail: "waiting for the control plane".into(),
                },
                etcd_rolling: true,
                applied,
                removed: Vec::new(),
            });
        }
    }

    let mut all = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        inventory.to_object(),
    ];
    all.extend(objects.iter().cloned());
    let wrote = apply_changed(mgmt, manager, &live, &all, &mut applied).await?;
    writes += wrote;
    if kcp_paused && let Some(kcp) = &live.control_plane {
        mgmt.patch_merge(
            kcp,
            &json!({"metadata": {"annotations": {PAUSED: null}}}),
            manager,
        )
        .await?;
        writes += 1;
    }
    let removed = remove_dropped_groups(mgmt, contract, &live, &objects).await?;
    writes += u32::try_from(removed.len()).unwrap_or(u32::MAX);
    let settled = wrote == 0;
    Ok(Pass {
        writes,
        control_plane: control_plane_progress(&live, settled),
        workers: workers_progress(&live, &objects, settled),
        etcd_rolling: false,
        applied,
        removed,
    })
}

/// One step of the cluster's CNI for controllers (EKS Anywhere's `ReconcileCNI`), never
/// waiting: nothing before the control plane has published its kubeconfig; then Cilium from
/// `manifest` installed, or upgraded when the workload cluster runs other images (unless
/// `skip_upgrade`), as [`create`](crate::create) does; ready once the agent DaemonSet and the
/// operator Deployment are, with nothing applied in this step.
pub async fn cni_pass<F: FnMut(crate::Event)>(
    mgmt: &Management,
    cluster: &str,
    manifest: &crate::CniManifest,
    skip_upgrade: bool,
    on_event: &mut F,
) -> Result<Progress, LifecycleError> {
    use crate::cni::install::{apply_needed, installed, workload};
    use crate::wait::{daemonset_readiness, deployment_readiness};
    let secret = format!("{cluster}-kubeconfig");
    if mgmt
        .get("v1", "Secret", Some(NAMESPACE), &secret)
        .await?
        .is_none()
    {
        let detail = "waiting for the control plane to publish its kubeconfig".to_owned();
        return Ok(Progress {
            ready: false,
            detail,
        });
    }
    let wl = workload(mgmt, cluster, &crate::WaitOptions::default()).await?;
    if apply_needed(&wl, cluster, manifest, skip_upgrade, on_event).await? {
        let detail = "Cilium applied on the workload cluster".to_owned();
        return Ok(Progress {
            ready: false,
            detail,
        });
    }
    let (ds, op) = installed(&wl, cluster).await?;
    let (ds, op) = (ds.unwrap_or_default(), op.unwrap_or_default());
    let (agents, operator) = (daemonset_readiness(&ds), deployment_readiness(&op));
    let ready = agents.done && operator.done;
    let detail = format!(
        "Cilium agents {}/{} ready, operator {}/{} ready",
        agents.ready, agents.total, operator.ready, operator.total
    );
    Ok(Progress { ready, detail })
}

/// Pauses the control plane and applies the etcd objects that differ. Returns the writes and
/// whether etcd is ready with nothing written (then the rest may go on).
async fn etcd_step(
    mgmt: &Management,
    manager: &str,
    live: &Live,
    objects: &[Value],
    kcp_paused: bool,
    applied: &mut Vec<String>,
) -> Result<(u32, bool), LifecycleError> {
    let mut writes = 0;
    if !kcp_paused && let Some(kcp) = &live.control_plane {
        mgmt.patch_merge(
            kcp,
            &json!({"metadata": {"annotations": {PAUSED: "true"}}}),
            manager,
        )
        .await?;
        writes += 1;
    }
    let etcd_template = objects
        .iter()
        .find(|o| o["kind"] == "EtcdadmCluster")
        .and_then(|e| e["spec"]["infrastructureTemplate"]["name"].as_str());
    let etcd_objects: Vec<Value> = objects
        .iter()
        .filter(|o| {
            o["kind"] == "EtcdadmCluster"
                || (o["kind"] == "AWSSnowMachineTemplate"
                    && o["metadata"]["name"].as_str() == etcd_template)
        })
        .cloned()
        .collect();
    let wrote = apply_changed(mgmt, manager, live, &etcd_objects, applied).await?;
    writes += wrote;
    let ready = wrote == 0 && live.etcd.as_ref().is_some_and(|e| etcd_readiness(e).done);
    Ok((writes, ready))
}

/// Deletes the MachineDeployments (and their templates and health checks) of worker groups the
/// rendered objects no longer have. Returns what was removed.
async fn remove_dropped_groups(
    mgmt: &Management,
    contract: Contract,
    live: &Live,
    objects: &[Value],
) -> Result<Vec<String>, LifecycleError> {
    let mut removed = Vec::new();
    for md in &live.deployments {
        let md_name = name_of(md);
        if objects
            .iter()
            .any(|o| o["kind"] == "MachineDeployment" && name_of(o) == md_name)
        {
            continue;
        }
        let deployment = ObjectRef {
            api_version: contract.api_version("cluster.x-k8s.io"),
            kind: "MachineDeployment".into(),
            name: md_name.to_owned(),
        };
        for object in std::iter::once(deployment).chain(group_leftovers(contract, md)) {
            if mgmt.delete_object(&object).await? {
                removed.push(object.to_string());
            }
        }
    }
    Ok(removed)
}

/// The control plane's readiness as the live KCP says it.
fn control_plane_progress(live: &Live, settled: bool) -> Progress {
    match live.control_plane.as_ref().map(replicas_readiness) {
        Some(r) if r.done && settled => Progress {
            ready: true,
            detail: format!("{}/{} ready", r.ready, r.total),
        },
        Some(r) => Progress {
            ready: false,
            detail: r.detail,
        },
        None => Progress {
            ready: false,
            detail: "the control plane is being created".into(),
        },
    }
}

/// Every rendered worker group's readiness as its live MachineDeployment says it.
fn workers_progress(live: &Live, objects: &[Value], settled: bool) -> Progress {
    let mut waiting = Vec::new();
    for md in objects.iter().filter(|o| o["kind"] == "MachineDeployment") {
        let md_name = name_of(md);
        match live.deployments.iter().find(|l| name_of(l) == md_name) {
            Some(l) => {
                let r = replicas_readiness(l);
                if !r.done {
                    waiting.push(format!("{md_name}: {}", r.detail));
                }
            }
            None => waiting.push(format!("{md_name}: being created")),
        }
    }
    Progress {
        ready: waiting.is_empty() && settled,
        detail: if waiting.is_empty() {
            "every worker group is ready".into()
        } else {
            waiting.join("; ")
        },
    }
}

/// Applies the objects that differ from what is there (decided from the manager's
/// managedFields, see [`up_to_date`]); returns how many were written and adds them to `applied`.
async fn apply_changed(
    mgmt: &Management,
    manager: &str,
    live: &Live,
    objects: &[Value],
    applied: &mut Vec<String>,
) -> Result<u32, LifecycleError> {
    let known: BTreeMap<(&str, &str), &Value> = live
        .control_plane
        .iter()
        .chain(&live.etcd)
        .chain(&live.deployments)
        .chain(&live.cluster)
        .map(|o| ((o["kind"].as_str().unwrap_or_default(), name_of(o)), o))
        .collect();
    let mut writes = 0;
    for object in objects {
        let r = object_ref(object);
        let current = match known.get(&(r.kind.as_str(), r.name.as_str())) {
            Some(o) => Some((*o).clone()),
            None => {
                let ns = object["metadata"]["namespace"].as_str();
                mgmt.get(&r.api_version, &r.kind, ns, &r.name).await?
            }
        };
        if current
            .as_ref()
            .is_some_and(|c| up_to_date(object, c, manager))
        {
            continue;
        }
        mgmt.apply_as(object, manager).await?;
        writes += 1;
        applied.push(r.to_string());
    }
    Ok(writes)
}

/// What one [`delete_pass`] did.
#[derive(Debug, Clone)]
pub enum DeletePass {
    /// The Cluster API Cluster is still being deleted; `started` when this pass asked for it.
    Deleting {
        /// This pass deleted the Cluster (the first pass of a deletion).
        started: bool,
    },
    /// The Cluster is gone and every object the inventory lists was removed.
    Removed(Deleted),
}

/// One step of deleting cluster `cluster`: asks for the Cluster API Cluster's deletion and
/// returns while it is there; once it is gone, removes everything snowctl applied for it.
pub async fn delete_pass(mgmt: &Management, cluster: &str) -> Result<DeletePass, LifecycleError> {
    let Located {
        inventory,
        contract,
        cluster: live,
    } = locate(mgmt, cluster).await?;
    crate::standing::refuse_live(live.as_ref(), cluster, "delete (reconcile)")?;
    if let Some(capi) = live {
        let started = capi["metadata"]["deletionTimestamp"].is_null();
        if started {
            let core = contract.api_version("cluster.x-k8s.io");
            mgmt.delete(&core, "Cluster", Some(NAMESPACE), cluster)
                .await?;
        }
        return Ok(DeletePass::Deleting { started });
    }
    let contract = if inventory.as_ref().is_some_and(|i| i.contract == "v1beta1") {
        Contract::V1Beta1
    } else {
        contract
    };
    Ok(DeletePass::Removed(
        cleanup(mgmt, cluster, contract, inventory.as_ref()).await?,
    ))
}
