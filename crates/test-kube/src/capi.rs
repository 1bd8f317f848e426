//! Simulated Cluster API controllers (core CAPI, KubeadmControlPlane, etcdadm, CAPAS), acting
//! on the store directly as field manager `capi-controller` (Update operations), so that a
//! client applying Cluster API objects sees them converge as on a real management cluster.
//!
//! Every `step` the controllers take one pass; in a pass each KubeadmControlPlane,
//! MachineDeployment and EtcdadmCluster creates or deletes **at most one** Machine, so progress
//! (1/3, 2/3, 3/3) and rollouts (one machine replaced at a time, surge 1) are observable.
//! Both contracts are read: `cluster.x-k8s.io/v1beta1` (refs with `apiVersion`) and `v1beta2`
//! (refs with `apiGroup`); Machines are written in the contract of their owner. MachineSets are
//! not simulated (MachineDeployments own their Machines directly).
//!
//! Order of a create: Cluster gets its finalizer and owns its infrastructure cluster and
//! control plane; the AWSSnowCluster becomes ready; the EtcdadmCluster (if any) creates its
//! Machines and becomes ready; the KubeadmControlPlane then creates its Machines. After the
//! first, the cluster's **workload cluster** comes up: a second [`KubeStandIn`] on loopback
//! (started by the simulation, or the one given in [`CapiOptions::workload`]) running the
//! simulated kubelets and DaemonSet controller of [`crate::nodes`] and the deployment controller
//! of [`crate::workloads`]; the `<cluster>-kubeconfig` Secret (key `value`) then points at it
//! and the control plane is *initialized* (`status.initialized`, v1beta2
//! `initialization.controlPlaneInitialized` and condition `Initialized`). Every control-plane
//! and worker Machine gets a Node there, named after it, and `status.nodeRef` once it exists.
//! A Node is Ready only when a CNI runs on it (see [`crate::nodes`]); a Machine is ready only
//! when its Node is, and the ready counts follow as Cluster API computes them: v1beta1
//! `readyReplicas` and v1beta2 `readyReplicas`/`availableReplicas` count machines whose Node is
//! Ready, `upToDateReplicas`/`updatedReplicas` those of the current template. Without a CNI a
//! control plane is initialized and `Available` (its API servers answer) but never ready.
//! MachineDeployments start once the control plane is initialized; the Cluster is
//! `Provisioned` and `Ready` once infrastructure, control plane and every MachineDeployment are
//! ready. v1beta2 objects also carry the negative-polarity conditions (`RollingOut`,
//! `ScalingUp`, `ScalingDown`, `Remediating`, `Deleting`, `Paused`), False when healthy.
//! Deleting a Cluster deletes its Machines (and their Nodes) one per step, then its
//! MachineDeployments, control plane, etcd cluster and infrastructure cluster, then drops the
//! finalizer.
//!
//! Externally managed infrastructure is honoured as Cluster API's contract has it
//! (kubernetes-sigs/cluster-api `docs/book/src/developer/providers/contracts/infra-cluster.md`,
//! `util/annotations.IsExternallyManaged`, `core/reconcilers/cluster`): an AWSSnowCluster with
//! the `cluster.x-k8s.io/managed-by` annotation (any value) is never written by the simulated
//! CAPAS; the Cluster controller still owns it and reads its `status.ready` (or v1beta2
//! `status.initialization.provisioned`) set by the external system. A Cluster without
//! `controlPlaneRef` has no control plane to wait for: `ControlPlaneInitialized` stays False (Cluster
//! API takes it from control-plane Machines with a `nodeRef`, and such a cluster has none here),
//! and its phase is `Provisioned` once the infrastructure is and the endpoint is set (Cluster
//! API's `setPhase`). Cluster API would then write `<cluster>-kubeconfig` from a `<cluster>-ca`
//! Secret when no kubeconfig Secret exists; that is not simulated (no such cluster here has a CA
//! Secret: an import writes the kubeconfig Secret itself and no CA Secret, so Cluster API leaves
//! it alone).
//!
//! Pause is honoured as Cluster API does: a Cluster with `spec.paused: true` or the
//! `cluster.x-k8s.io/paused` annotation, and everything of that cluster (and any object carrying
//! the annotation), is left alone. Like Cluster API's MachineDeployment, KubeadmControlPlane and
//! MachineHealthCheck controllers, the Cluster becomes a (non-controller) owner of the machine
//! templates its control plane, etcd cluster and MachineDeployments use and of its
//! MachineHealthChecks, which is how `clusterctl move` finds them.

use super::apply::get_path;
use super::clock;
use super::nodes::{self, NodesHandle, node_ready};
use super::registry::split_api_version;
use super::store::{Key, Store, Write};
use super::workloads::{WorkloadHandle, WorkloadOptions};
use super::{KubeStandIn, Shared};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The annotation that pauses reconciliation of an object (and, on a Cluster, of its objects).
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

/// Cluster API's externally-managed annotation: the infrastructure provider leaves the object
/// alone.
pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";

/// The field manager of the simulated controllers.
pub const MANAGER: &str = "capi-controller";
/// The finalizer the Cluster controller adds.
pub const CLUSTER_FINALIZER: &str = "cluster.cluster.x-k8s.io";
/// Label: the cluster an object belongs to.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Annotation on simulated Machines: `<infrastructure template>|<bootstrap template>|<version>`
/// they were made from (what a rollout compares).
pub const TEMPLATE_ANNOTATION: &str = "snow-test-support/machine-template";

const CLUSTER_GROUP: &str = "cluster.x-k8s.io";

/// Options of the simulation.
#[derive(Debug, Clone)]
pub struct CapiOptions {
    /// Time between passes of the controllers (one Machine per owner per pass). Default 50 ms.
    pub step: Duration,
    /// `(kind, name)` of objects that never become ready (a Cluster never Provisioned, an
    /// AWSSnowCluster never ready, a KubeadmControlPlane, MachineDeployment or EtcdadmCluster
    /// that creates no Machine): to test wait timeouts.
    pub stall: Vec<(String, String)>,
    /// The workload cluster of every Cluster; `None` starts one stand-in per Cluster when its
    /// control plane is first initialized. It may be the stand-in these controllers run on: a
    /// self-managed cluster, whose machines are Nodes of its own API server.
    pub workload: Option<Arc<KubeStandIn>>,
    /// Act only once the core Cluster API Deployment (`capi-system/capi-controller-manager`)
    /// is Available, as on a cluster where the providers are installed by `clusterctl init`
    /// (or `snowctl init`) rather than preloaded with [`KubeStandIn::install_capi`].
    pub require_providers: bool,
    /// With [`CapiOptions::workload`]: the one Cluster (by name) whose workload cluster it is
    /// (a self-managed cluster); every other Cluster gets a stand-in of its own, as clusters it
    /// manages have. `None`: every Cluster's.
    pub workload_of: Option<String>,
}

impl Default for CapiOptions {
    fn default() -> Self {
        CapiOptions {
            step: Duration::from_millis(50),
            stall: Vec::new(),
            workload: None,
            require_providers: false,
            workload_of: None,
        }
    }
}

/// A Cluster's workload cluster: its API server and the controllers simulated on it.
#[derive(Debug)]
pub(crate) struct Workload {
    api: Arc<KubeStandIn>,
    _deployments: WorkloadHandle,
    _nodes: NodesHandle,
}

impl Workload {
    /// The simulated kubelets and deployment controller of `api`: one set per stand-in, shared
    /// by every simulation that uses it as a workload cluster (a bootstrap cluster's and, once
    /// the cluster manages itself, its own), running while any of them holds it.
    fn shared(api: Arc<KubeStandIn>, step: Duration) -> Arc<Workload> {
        let mut running = api
            .shared
            .workload_sims
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(workload) = running.upgrade() {
            return workload;
        }
        let workload = Arc::new(Workload {
            _deployments: api.start_workloads(WorkloadOptions {
                step,
                ..WorkloadOptions::default()
            }),
            _nodes: nodes::start(api.shared.clone(), step),
            api: api.clone(),
        });
        *running = Arc::downgrade(&workload);
        workload
    }
}

#[derive(Debug)]
struct Control {
    stall: Mutex<Vec<(String, String)>>,
    paused: AtomicBool,
    /// `namespace/cluster` → its workload cluster.
    workloads: Mutex<BTreeMap<String, Arc<Workload>>>,
}

/// The running controllers; they stop when this drops.
#[derive(Debug)]
pub struct CapiHandle {
    control: Arc<Control>,
    task: tokio::task::JoinHandle<()>,
}

impl CapiHandle {
    /// Replaces the stalled objects (`(kind, name)`); an object no longer stalled resumes.
    pub fn set_stall(&self, stall: Vec<(String, String)>) {
        if let Ok(mut s) = self.control.stall.lock() {
            *s = stall;
        }
    }

    /// Stops acting until [`CapiHandle::resume`].
    pub fn pause(&self) {
        self.control.paused.store(true, Ordering::SeqCst);
    }

    /// Acts again after [`CapiHandle::pause`].
    pub fn resume(&self) {
        self.control.paused.store(false, Ordering::SeqCst);
    }

    /// The workload cluster of Cluster `cluster` (any namespace), once its control plane is
    /// initialized.
    pub fn workload(&self, cluster: &str) -> Option<Arc<KubeStandIn>> {
        let workloads = self.control.workloads.lock().ok()?;
        workloads
            .iter()
            .find(|(k, _)| k.rsplit_once('/').is_some_and(|(_, n)| n == cluster))
            .map(|(_, w)| w.api.clone())
    }
}

impl Drop for CapiHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) fn start(shared: Arc<Shared>, options: CapiOptions) -> CapiHandle {
    let control = Arc::new(Control {
        stall: Mutex::new(options.stall),
        paused: AtomicBool::new(false),
        workloads: Mutex::new(BTreeMap::new()),
    });
    let running = control.clone();
    let step = options.step;
    // A workload cluster given by the test runs its controllers once, whatever the clusters.
    let supplied = options.workload.map(|api| Workload::shared(api, step));
    let require_providers = options.require_providers;
    let workload_of = options.workload_of;
    let task = tokio::spawn(async move {
        loop {
            let acting = !running.paused.load(Ordering::SeqCst)
                && (!require_providers || providers_available(&shared.lock()));
            if acting {
                let stall = running.stall.lock().map(|s| s.clone()).unwrap_or_default();
                let workloads = running
                    .workloads
                    .lock()
                    .map(|w| w.clone())
                    .unwrap_or_default();
                let (needed, gone) = {
                    let mut store = shared.lock();
                    let mut pass = Pass {
                        own: &shared,
                        store: &mut store,
                        stall: &stall,
                        workloads: &workloads,
                        needed: Vec::new(),
                        gone: Vec::new(),
                    };
                    pass.run();
                    (pass.needed, pass.gone)
                };
                // Started outside the store's lock: binding a port is async.
                for key in needed {
                    let supplied = supplied.as_ref().filter(|_| {
                        workload_of.as_ref().is_none_or(|only| {
                            key.rsplit_once('/').is_some_and(|(_, name)| name == only)
                        })
                    });
                    let workload = match supplied {
                        Some(w) => w.clone(),
                        None => match KubeStandIn::start().await {
                            Ok(api) => Workload::shared(Arc::new(api), step),
                            Err(_) => continue,
                        },
                    };
                    if let Ok(mut w) = running.workloads.lock() {
                        w.insert(key, workload);
                    }
                }
                if let Ok(mut w) = running.workloads.lock() {
                    for key in gone {
                        w.remove(&key);
                    }
                }
            }
            tokio::time::sleep(step).await;
        }
    });
    CapiHandle { control, task }
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn group_of(api_version: &str) -> &str {
    split_api_version(api_version).0
}

/// `(group, kind, name)` of a v1beta1 (`apiVersion`) or v1beta2 (`apiGroup`) reference.
fn reference(r: &Value) -> Option<(String, String, String)> {
    let kind = r["kind"].as_str()?;
    let name = r["name"].as_str()?;
    let group = r["apiGroup"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| group_of(r["apiVersion"].as_str().unwrap_or_default()).to_owned());
    Some((group, kind.to_owned(), name.to_owned()))
}

fn is_v1beta1(object: &Value) -> bool {
    s(object, &["apiVersion"]).ends_with("/v1beta1")
}

fn owner_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

fn owned_by(object: &Value, uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["uid"].as_str() == Some(uid)))
}

/// Whether an object carries the pause annotation (or, for a Cluster, `spec.paused: true`).
/// Cluster API's `IsExternallyManaged`: the `cluster.x-k8s.io/managed-by` annotation is there
/// (its value is not looked at).
fn externally_managed(object: &Value) -> bool {
    object["metadata"]["annotations"][MANAGED_BY_ANNOTATION].is_string()
}

fn paused(object: &Value) -> bool {
    object["metadata"]["annotations"][PAUSED_ANNOTATION].is_string()
        || (s(object, &["kind"]) == "Cluster" && object["spec"]["paused"] == json!(true))
}

fn terminating(object: &Value) -> bool {
    !object["metadata"]["deletionTimestamp"].is_null()
}

/// Conditions in the shape of the object's contract, keeping transition times that did not
/// change.
fn conditions(object: &Value, wanted: &[(&str, bool)]) -> Value {
    conditions_with(object, wanted, &[])
}

/// v1beta2's negative-polarity conditions of an object that is not being deleted: False when
/// healthy; `active` names those that are True now.
fn negatives(object: &Value, active: &[(&'static str, bool)]) -> Vec<(&'static str, bool)> {
    if is_v1beta1(object) {
        return Vec::new();
    }
    let paused = object["metadata"]["annotations"][PAUSED_ANNOTATION].is_string();
    let mut list = vec![
        ("Deleting", false),
        ("Paused", paused),
        ("Remediating", false),
    ];
    list.extend(active.iter().copied());
    list
}

/// As [`conditions`], with negative-polarity conditions (`(type, true now)`) after them.
fn conditions_with(object: &Value, wanted: &[(&str, bool)], negative: &[(&str, bool)]) -> Value {
    let previous = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let generation = object["metadata"]["generation"].clone();
    let v1beta1 = is_v1beta1(object);
    let mut list: Vec<Value> = negative
        .iter()
        .map(|(kind, on)| {
            let status = if *on { "True" } else { "False" };
            let time = previous
                .iter()
                .find(|c| c["type"] == *kind && c["status"] == status)
                .map(|c| c["lastTransitionTime"].clone())
                .unwrap_or_else(|| json!(clock::now_rfc3339()));
            json!({
                "type": kind,
                "status": status,
                "reason": if *on { (*kind).to_owned() } else { format!("Not{kind}") },
                "message": "",
                "lastTransitionTime": time,
                "observedGeneration": generation,
            })
        })
        .collect();
    let positive: Vec<Value> = wanted
        .iter()
        .map(|(kind, ok)| {
            let status = if *ok { "True" } else { "False" };
            let time = previous
                .iter()
                .find(|c| c["type"] == *kind && c["status"] == status)
                .map(|c| c["lastTransitionTime"].clone())
                .unwrap_or_else(|| json!(clock::now_rfc3339()));
            if v1beta1 {
                let mut c = json!({"type": kind, "status": status, "lastTransitionTime": time});
                if !ok {
                    c["reason"] = json!("WaitingForProvisioning");
                    c["severity"] = json!("Info");
                }
                c
            } else {
                json!({
                    "type": kind,
                    "status": status,
                    "reason": if *ok { *kind } else { "NotReady" },
                    "message": "",
                    "lastTransitionTime": time,
                    "observedGeneration": generation,
                })
            }
        })
        .collect();
    let mut all = positive;
    all.append(&mut list);
    Value::Array(all)
}

struct Pass<'a> {
    /// The stand-in these controllers run on (a self-managed cluster's workload cluster).
    own: &'a Arc<Shared>,
    store: &'a mut Store,
    stall: &'a [(String, String)],
    workloads: &'a BTreeMap<String, Arc<Workload>>,
    /// `namespace/cluster` of control planes that need their workload cluster started.
    needed: Vec<String>,
    /// `namespace/cluster` of deleted Clusters whose workload cluster can go.
    gone: Vec<String>,
}

/// Every running Machine of `machines` gets its Node in `wl` (a Node whose Machine is gone or
/// going is deleted); the Nodes by Machine name.
fn put_nodes(wl: &mut Store, machines: &[Value]) -> BTreeMap<String, Value> {
    let mut found: BTreeMap<String, Value> = BTreeMap::new();
    let existing: BTreeMap<String, (Key, Value)> = wl
        .raw("", "nodes")
        .into_iter()
        .map(|(k, n)| (s(&n, &["metadata", "name"]).to_owned(), (k, n)))
        .collect();
    for (node, (key, _)) in &existing {
        if !machines
            .iter()
            .any(|m| s(m, &["metadata", "name"]) == node && !terminating(m))
        {
            wl.delete_key(key, false);
        }
    }
    for m in machines.iter().filter(|m| !terminating(m)) {
        let machine = s(m, &["metadata", "name"]).to_owned();
        if let Some((_, node)) = existing.get(&machine) {
            found.insert(machine, node.clone());
            continue;
        }
        let mut labels = json!({"kubernetes.io/hostname": machine, "kubernetes.io/os": "linux"});
        if !m["metadata"]["labels"]["cluster.x-k8s.io/control-plane"].is_null() {
            labels["node-role.kubernetes.io/control-plane"] = json!("");
        }
        let node = json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": machine, "labels": labels},
            "spec": {"providerID": format!("aws-snow:///simulated/{machine}")},
            "status": {
                "nodeInfo": {"kubeletVersion": m["spec"]["version"]},
                "conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                    "message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
                    "lastTransitionTime": clock::now_rfc3339()}],
            },
        });
        if let Ok(stored) = wl.put(node, "kubelet") {
            found.insert(machine, stored);
        }
    }
    found
}

/// Whether the core Cluster API Deployment is Available (`require_providers`).
fn providers_available(store: &Store) -> bool {
    store.raw("apps", "deployments").iter().any(|(_, d)| {
        s(d, &["metadata", "namespace"]) == "capi-system"
            && s(d, &["metadata", "name"]) == "capi-controller-manager"
            && d["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Available" && c["status"] == "True")
    })
}

fn cluster_key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Whether a Machine's `Ready` condition is True.
fn machine_ready(machine: &Value) -> bool {
    machine["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// What a machine owner wants.
struct Desired {
    replicas: usize,
    template: String,
    infrastructure_ref: Value,
    bootstrap_ref: Option<Value>,
    version: Value,
    labels: Value,
    machine_api_version: String,
    cluster: String,
    create: bool,
    /// A KubeadmControlPlane's `rolloutAfter` (v1beta1) / `rollout.after` (v1beta2), as
    /// `YYYY-MM-DDTHH:MM:SSZ`: once it has passed, a Machine created before it is outdated.
    rollout_after: Option<String>,
}

/// A KubeadmControlPlane's `rolloutAfter` (v1beta1) or `rollout.after` (v1beta2) as the
/// stand-in's clock writes times (`YYYY-MM-DDTHH:MM:SSZ`, so they compare as text): a fraction
/// of a second is dropped, as Kubernetes' `metav1.Time` keeps whole seconds; any other form is
/// ignored.
fn rollout_after(kcp: &Value) -> Option<String> {
    let after = if is_v1beta1(kcp) {
        &kcp["spec"]["rolloutAfter"]
    } else {
        &kcp["spec"]["rollout"]["after"]
    };
    let text = after.as_str()?;
    let whole = text.get(..19)?;
    let rest = &text[19..];
    let fraction_then_z = rest
        .strip_prefix('.')
        .and_then(|r| r.strip_suffix('Z'))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    let shape = whole.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 => b == b'-',
        10 => b == b'T',
        13 | 16 => b == b':',
        _ => b.is_ascii_digit(),
    });
    (shape && (rest == "Z" || fraction_then_z)).then(|| format!("{whole}Z"))
}

/// Machine counts after a pass.
struct Counts {
    replicas: usize,
    updated: usize,
    /// Machines whose Node is Ready.
    ready: usize,
}

impl Pass<'_> {
    fn stalled(&self, object: &Value) -> bool {
        let kind = s(object, &["kind"]);
        let name = s(object, &["metadata", "name"]);
        self.stall.iter().any(|(k, n)| k == kind && n == name)
    }

    fn all(&self, plural: &str, group: &str) -> Vec<(Key, Value)> {
        self.store.raw(group, plural)
    }

    /// The objects of `plural` that `pick` keeps (only those copied).
    fn select(
        &self,
        plural: &str,
        group: &str,
        pick: impl FnMut(&Value) -> bool,
    ) -> Vec<(Key, Value)> {
        self.store.select(group, plural, pick)
    }

    fn find(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<(Key, Value)> {
        let rt = self.store.registry.by_group_kind(group, kind)?;
        let key = Store::key(rt, Some(namespace), name);
        self.store.at(&key).map(|v| (key, v.clone()))
    }

    fn find_ref(&self, r: &Value, namespace: &str) -> Option<(Key, Value)> {
        let (group, kind, name) = reference(r)?;
        self.find(&group, &kind, namespace, &name)
    }

    /// Replaces `status` (through the status subresource when there is one).
    fn set_status(&mut self, object: &Value, status: Value) {
        if object["status"] == status {
            return;
        }
        let api_version = s(object, &["apiVersion"]).to_owned();
        let Some(rt) = self
            .store
            .registry
            .by_kind(&api_version, s(object, &["kind"]))
            .cloned()
        else {
            return;
        };
        let mut new = object.clone();
        new["status"] = status;
        if let Some(m) = new["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let w = Write {
            manager: MANAGER,
            api_version: &api_version,
            dry_run: false,
            status: rt.status,
            whole: !rt.status,
            force: false,
        };
        let ns = s(object, &["metadata", "namespace"]).to_owned();
        let _ = self
            .store
            .replace(&rt, Some(&ns), s(object, &["metadata", "name"]), new, w);
    }

    /// Writes `object` (main resource: metadata and spec).
    fn update(&mut self, object: Value) -> Option<Value> {
        let api_version = s(&object, &["apiVersion"]).to_owned();
        let rt = self
            .store
            .registry
            .by_kind(&api_version, s(&object, &["kind"]))
            .cloned()?;
        let mut new = object.clone();
        if let Some(m) = new["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let w = Write {
            manager: MANAGER,
            api_version: &api_version,
            dry_run: false,
            status: false,
            whole: false,
            force: false,
        };
        let ns = s(&object, &["metadata", "namespace"]).to_owned();
        self.store
            .replace(&rt, Some(&ns), s(&object, &["metadata", "name"]), new, w)
            .ok()
    }

    /// Makes `owner` a controller owner of `object` if it is not yet.
    fn adopt(&mut self, object: &Value, owner: &Value) {
        self.own(object, owner, true);
    }

    /// Makes the Cluster an owner (not the controller) of the template `r` refers to.
    fn adopt_template(&mut self, r: &Value, namespace: &str, cluster: &Value) {
        if let Some((_, template)) = self.find_ref(r, namespace) {
            self.own(&template, cluster, false);
        }
    }

    fn own(&mut self, object: &Value, owner: &Value, controller: bool) {
        let uid = s(owner, &["metadata", "uid"]);
        if owned_by(object, uid) {
            return;
        }
        let mut new = object.clone();
        let mut refs = new["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut r = owner_ref(owner);
        if !controller {
            r["controller"] = json!(false);
        }
        refs.push(r);
        new["metadata"]["ownerReferences"] = Value::Array(refs);
        self.update(new);
    }

    fn run(&mut self) {
        let clusters = self.all("clusters", CLUSTER_GROUP);
        // `(namespace, name)` of the paused Clusters: their objects are left alone too.
        let held: Vec<(String, String)> = clusters
            .iter()
            .filter(|(_, c)| paused(c))
            .map(|(_, c)| {
                let meta = |k| s(c, &["metadata", k]).to_owned();
                (meta("namespace"), meta("name"))
            })
            .collect();
        // As Cluster API's controllers find an object's Cluster: its label, its
        // `spec.clusterName`, else its owner Cluster (a KubeadmControlPlane has only that).
        let leave = |o: &Value| {
            let ns = s(o, &["metadata", "namespace"]);
            let owner = o["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| {
                    r["kind"] == "Cluster" && group_of(s(r, &["apiVersion"])) == CLUSTER_GROUP
                })
                .map(|r| s(r, &["name"]))
                .unwrap_or_default();
            let cluster = [
                s(o, &["metadata", "labels", CLUSTER_NAME_LABEL]),
                s(o, &["spec", "clusterName"]),
                owner,
            ]
            .into_iter()
            .find(|c| !c.is_empty())
            .unwrap_or_default();
            paused(o) || held.iter().any(|(n, c)| n == ns && c == cluster)
        };
        for (_, cluster) in &clusters {
            if !paused(cluster) {
                self.cluster(cluster);
            }
        }
        for (_, etcd) in self.all("etcdadmclusters", "etcdcluster.cluster.x-k8s.io") {
            if !leave(&etcd) {
                self.etcd(&etcd);
            }
        }
        for (_, kcp) in self.all("kubeadmcontrolplanes", "controlplane.cluster.x-k8s.io") {
            if !leave(&kcp) {
                self.control_plane(&kcp);
            }
        }
        for (_, md) in self.all("machinedeployments", CLUSTER_GROUP) {
            if !leave(&md) {
                self.machine_deployment(&md);
            }
        }
        for (_, cluster) in self.all("clusters", CLUSTER_GROUP) {
            self.sync_nodes(&cluster);
        }
    }

    /// Every control-plane and worker Machine of `cluster` gets a Node on its workload cluster
    /// (and a Machine gone, its Node deleted); each Machine's `nodeRef`, phase and readiness
    /// follow its Node.
    fn sync_nodes(&mut self, cluster: &Value) {
        let ns = s(cluster, &["metadata", "namespace"]).to_owned();
        let name = s(cluster, &["metadata", "name"]).to_owned();
        let Some(workload) = self.workloads.get(&cluster_key(&ns, &name)).cloned() else {
            return;
        };
        // etcdadm's machines run etcd only: no kubelet, no Node.
        let machines: Vec<Value> = self
            .select("machines", CLUSTER_GROUP, |m| {
                s(m, &["metadata", "namespace"]) == ns
                    && s(m, &["metadata", "labels", CLUSTER_NAME_LABEL]) == name
                    && m["metadata"]["labels"]["cluster.x-k8s.io/etcd-cluster"].is_null()
            })
            .into_iter()
            .map(|(_, m)| m)
            .collect();
        // A self-managed cluster's Nodes are in the store this pass holds already.
        let found = match Arc::ptr_eq(&workload.api.shared, self.own) {
            true => put_nodes(self.store, &machines),
            false => put_nodes(&mut workload.api.shared.lock(), &machines),
        };
        for m in machines.iter().filter(|m| !terminating(m)) {
            let node = found.get(s(m, &["metadata", "name"]));
            let ready = node.is_some_and(node_ready);
            let mut status = m["status"].clone();
            if !status.is_object() {
                status = json!({});
            }
            match node {
                Some(n) if is_v1beta1(m) => {
                    status["nodeRef"] = json!({"apiVersion": "v1", "kind": "Node", "name": n["metadata"]["name"], "uid": n["metadata"]["uid"]});
                }
                Some(n) => status["nodeRef"] = json!({"name": n["metadata"]["name"]}),
                None => {}
            }
            status["phase"] = json!(if node.is_some() {
                "Running"
            } else {
                "Provisioned"
            });
            status["conditions"] = conditions_with(
                m,
                &[
                    ("Ready", ready),
                    ("BootstrapReady", true),
                    ("InfrastructureReady", true),
                    ("NodeHealthy", ready),
                ],
                &negatives(m, &[]),
            );
            self.set_status(m, status);
        }
    }

    fn cluster_by(&self, namespace: &str, pick: impl Fn(&Value) -> bool) -> Option<Value> {
        let mut found = false;
        self.select("clusters", CLUSTER_GROUP, |c| {
            let hit = !found && s(c, &["metadata", "namespace"]) == namespace && pick(c);
            found |= hit;
            hit
        })
        .into_iter()
        .map(|(_, c)| c)
        .next()
    }

    fn cluster(&mut self, cluster: &Value) {
        let ns = s(cluster, &["metadata", "namespace"]).to_owned();
        let name = s(cluster, &["metadata", "name"]).to_owned();
        if terminating(cluster) {
            self.delete_cluster(cluster, &ns, &name);
            return;
        }
        let finalizers = cluster["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut cluster = cluster.clone();
        if !finalizers.iter().any(|f| f == CLUSTER_FINALIZER) {
            let mut new = cluster.clone();
            let mut list = finalizers;
            list.push(json!(CLUSTER_FINALIZER));
            new["metadata"]["finalizers"] = Value::Array(list);
            match self.update(new) {
                Some(updated) => cluster = updated,
                None => return,
            }
        }
        let infra = self.find_ref(&cluster["spec"]["infrastructureRef"], &ns);
        let mut infra_ready = false;
        if let Some((_, infra)) = &infra {
            self.adopt(infra, &cluster);
            if externally_managed(infra) {
                let st = &infra["status"];
                infra_ready = st["ready"] == json!(true)
                    || st["initialization"]["provisioned"] == json!(true);
            } else if !self.stalled(infra) {
                let mut status = infra["status"].clone();
                if !status.is_object() {
                    status = json!({});
                }
                status["ready"] = json!(true);
                status["conditions"] = conditions(infra, &[("Ready", true)]);
                self.set_status(infra, status);
                infra_ready = true;
            }
            let endpoint = &infra["spec"]["controlPlaneEndpoint"];
            if endpoint.is_object()
                && cluster["spec"]["controlPlaneEndpoint"]["host"]
                    .as_str()
                    .is_none_or(str::is_empty)
            {
                let mut new = cluster.clone();
                new["spec"]["controlPlaneEndpoint"] = endpoint.clone();
                if let Some(updated) = self.update(new) {
                    cluster = updated;
                }
            }
        }
        // Cluster API's MachineHealthCheck controller makes the Cluster an owner of its checks.
        let checks = self.select("machinehealthchecks", CLUSTER_GROUP, |mhc| {
            s(mhc, &["metadata", "namespace"]) == ns && s(mhc, &["spec", "clusterName"]) == name
        });
        for (_, mhc) in checks {
            self.own(&mhc, &cluster, false);
        }
        if let Some((_, etcd)) = self.find_ref(&cluster["spec"]["managedExternalEtcdRef"], &ns) {
            self.adopt(&etcd, &cluster);
            self.adopt_template(&etcd["spec"]["infrastructureTemplate"], &ns, &cluster);
        }
        let cp = self.find_ref(&cluster["spec"]["controlPlaneRef"], &ns);
        let (cp_initialized, cp_ready) = match &cp {
            Some((_, kcp)) => {
                self.adopt(kcp, &cluster);
                let template = if is_v1beta1(kcp) {
                    &kcp["spec"]["machineTemplate"]["infrastructureRef"]
                } else {
                    &kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]
                };
                self.adopt_template(template, &ns, &cluster);
                let st = &kcp["status"];
                (
                    st["initialized"] == json!(true),
                    st["ready"] == json!(true)
                        && st["readyReplicas"] == kcp["spec"]["replicas"]
                        && st["updatedReplicas"] == kcp["spec"]["replicas"],
                )
            }
            None => (false, false),
        };
        let deployments: Vec<Value> = self
            .all("machinedeployments", CLUSTER_GROUP)
            .into_iter()
            .map(|(_, md)| md)
            .filter(|md| {
                s(md, &["metadata", "namespace"]) == ns && s(md, &["spec", "clusterName"]) == name
            })
            .collect();
        let workers_ready = deployments.iter().all(|md| {
            let want = md["spec"]["replicas"].as_u64().unwrap_or(1);
            md["status"]["readyReplicas"].as_u64() == Some(want)
                && md["status"]["updatedReplicas"].as_u64() == Some(want)
                && md["status"]["replicas"].as_u64() == Some(want)
        });
        let ready = infra_ready && cp_ready && workers_ready && !self.stalled(&cluster);
        let mut status = cluster["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        let no_control_plane = reference(&cluster["spec"]["controlPlaneRef"]).is_none();
        let endpoint_set = !s(&cluster, &["spec", "controlPlaneEndpoint", "host"]).is_empty();
        status["phase"] = json!(
            if ready || (no_control_plane && infra_ready && endpoint_set) {
                "Provisioned"
            } else if infra_ready {
                "Provisioning"
            } else {
                "Pending"
            }
        );
        status["infrastructureReady"] = json!(infra_ready);
        status["controlPlaneReady"] = json!(cp_ready);
        status["observedGeneration"] = cluster["metadata"]["generation"].clone();
        let mut wanted = vec![
            ("Ready", ready),
            ("ControlPlaneReady", cp_ready),
            ("InfrastructureReady", infra_ready),
        ];
        if !is_v1beta1(&cluster) {
            status["initialization"] = json!({"infrastructureProvisioned": infra_ready, "controlPlaneInitialized": cp_initialized});
            wanted.extend([
                ("Available", ready),
                ("ControlPlaneAvailable", cp_ready),
                ("ControlPlaneInitialized", cp_initialized),
                ("WorkersAvailable", workers_ready),
            ]);
        }
        let negative = negatives(
            &cluster,
            &[
                ("RollingOut", false),
                ("ScalingUp", false),
                ("ScalingDown", false),
            ],
        );
        status["conditions"] = conditions_with(&cluster, &wanted, &negative);
        self.set_status(&cluster, status);
    }

    fn delete_cluster(&mut self, cluster: &Value, ns: &str, name: &str) {
        let belongs = |o: &Value| {
            s(o, &["metadata", "namespace"]) == ns
                && (s(o, &["metadata", "labels", CLUSTER_NAME_LABEL]) == name
                    || s(o, &["spec", "clusterName"]) == name
                    || owned_by(o, s(cluster, &["metadata", "uid"])))
        };
        // Machines first, one per step.
        if let Some((key, _)) = self
            .all("machines", CLUSTER_GROUP)
            .into_iter()
            .find(|(_, m)| belongs(m))
        {
            self.store.delete_key(&key, false);
            return;
        }
        let mut remaining = false;
        let mut doomed: Vec<Key> = self
            .all("machinedeployments", CLUSTER_GROUP)
            .into_iter()
            .filter(|(_, md)| belongs(md))
            .map(|(k, _)| k)
            .collect();
        for r in [
            "controlPlaneRef",
            "managedExternalEtcdRef",
            "infrastructureRef",
        ] {
            if let Some((key, _)) = self.find_ref(&cluster["spec"][r], ns) {
                doomed.push(key);
            }
        }
        for key in doomed {
            remaining = true;
            self.store.delete_key(&key, false);
        }
        if remaining {
            return;
        }
        let mut new = cluster.clone();
        let list: Vec<Value> = cluster["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f != CLUSTER_FINALIZER)
            .collect();
        new["metadata"]["finalizers"] = Value::Array(list);
        self.update(new);
        self.gone.push(cluster_key(ns, name));
    }

    /// Creates or deletes at most one Machine of `owner` toward `desired`; returns the counts.
    fn machines(&mut self, owner: &Value, desired: &Desired) -> Counts {
        let uid = s(owner, &["metadata", "uid"]).to_owned();
        let ns = s(owner, &["metadata", "namespace"]).to_owned();
        let mut mine: Vec<(Key, Value)> = self.select("machines", CLUSTER_GROUP, |m| {
            owned_by(m, &uid) && !terminating(m)
        });
        mine.sort_by(|a, b| {
            s(&a.1, &["metadata", "creationTimestamp"])
                .cmp(s(&b.1, &["metadata", "creationTimestamp"]))
                .then(
                    a.1["metadata"]["resourceVersion"]
                        .as_str()
                        .and_then(|v| v.parse::<u64>().ok())
                        .cmp(
                            &b.1["metadata"]["resourceVersion"]
                                .as_str()
                                .and_then(|v| v.parse::<u64>().ok()),
                        ),
                )
        });
        let now = clock::now_rfc3339();
        // Cluster API's rule: rolloutAfter in the past and the machine created before it.
        let due = |m: &Value| {
            desired.rollout_after.as_deref().is_some_and(|after| {
                after <= now.as_str() && s(m, &["metadata", "creationTimestamp"]) < after
            })
        };
        let current = |m: &Value| {
            s(m, &["metadata", "annotations", TEMPLATE_ANNOTATION]) == desired.template && !due(m)
        };
        let outdated: Vec<Key> = mine
            .iter()
            .filter(|(_, m)| !current(m))
            .map(|(k, _)| k.clone())
            .collect();
        let count = mine.len();
        let updated = count - outdated.len();
        let ready = mine.iter().filter(|(_, m)| machine_ready(m)).count();
        if !desired.create {
            return Counts {
                replicas: count,
                updated,
                ready,
            };
        }
        if count < desired.replicas || (!outdated.is_empty() && count == desired.replicas) {
            let name = format!("{}-{}", s(owner, &["metadata", "name"]), clock::suffix(5));
            let mut spec = json!({
                "clusterName": desired.cluster,
                "infrastructureRef": desired.infrastructure_ref,
            });
            if !desired.version.is_null() {
                spec["version"] = desired.version.clone();
            }
            let mut bootstrap = json!({"dataSecretName": name});
            if let Some(r) = &desired.bootstrap_ref {
                bootstrap["configRef"] = r.clone();
            }
            spec["bootstrap"] = bootstrap;
            let machine = json!({
                "apiVersion": desired.machine_api_version,
                "kind": "Machine",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": desired.labels,
                    "annotations": {TEMPLATE_ANNOTATION: desired.template, "cluster.x-k8s.io/cloned-from-name": s(&desired.infrastructure_ref, &["name"])},
                    "ownerReferences": [owner_ref(owner)],
                },
                "spec": spec,
                // A control-plane or worker Machine is ready once its Node is (see sync_nodes);
                // an etcd Machine has no Node and is ready once provisioned.
                "status": {
                    "phase": if desired.bootstrap_ref.is_some() { "Provisioned" } else { "Running" },
                    "bootstrapReady": true,
                    "infrastructureReady": true,
                    "conditions": [{"type": "Ready", "status": if desired.bootstrap_ref.is_some() { "False" } else { "True" },
                        "reason": if desired.bootstrap_ref.is_some() { "WaitingForNodeRef" } else { "Ready" },
                        "lastTransitionTime": clock::now_rfc3339()}],
                },
            });
            if self.store.put(machine, MANAGER).is_ok() {
                return Counts {
                    replicas: count + 1,
                    updated: updated + 1,
                    ready,
                };
            }
        } else if let Some(key) = outdated
            .first()
            .cloned()
            .or_else(|| (count > desired.replicas).then(|| mine[count - 1].0.clone()))
        {
            let was_ready = mine.iter().any(|(k, m)| *k == key && machine_ready(m));
            self.store.delete_key(&key, false);
            let was_outdated = outdated.contains(&key);
            return Counts {
                replicas: count - 1,
                updated: if was_outdated { updated } else { updated - 1 },
                ready: if was_ready { ready - 1 } else { ready },
            };
        }
        Counts {
            replicas: count,
            updated,
            ready,
        }
    }

    fn machine_api_version(cluster: Option<&Value>, owner: &Value) -> String {
        let owner_av = s(owner, &["apiVersion"]);
        let contract = if group_of(owner_av) == CLUSTER_GROUP
            || group_of(owner_av) == "controlplane.cluster.x-k8s.io"
        {
            split_api_version(owner_av).1.to_owned()
        } else {
            cluster
                .map(|c| split_api_version(s(c, &["apiVersion"])).1.to_owned())
                .unwrap_or_else(|| "v1beta1".into())
        };
        format!("{CLUSTER_GROUP}/{contract}")
    }

    fn etcd(&mut self, etcd: &Value) {
        let ns = s(etcd, &["metadata", "namespace"]).to_owned();
        let name = s(etcd, &["metadata", "name"]).to_owned();
        let cluster = self.cluster_by(&ns, |c| {
            s(c, &["spec", "managedExternalEtcdRef", "name"]) == name
        });
        let cluster_name = cluster
            .as_ref()
            .map(|c| s(c, &["metadata", "name"]).to_owned())
            .unwrap_or_else(|| s(etcd, &["metadata", "labels", CLUSTER_NAME_LABEL]).to_owned());
        let replicas = etcd["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
        let template = &etcd["spec"]["infrastructureTemplate"];
        let version = etcd["spec"]["etcdadmConfigSpec"]["etcdadmBuiltin"].clone();
        let etcd_version = s(
            etcd,
            &[
                "spec",
                "etcdadmConfigSpec",
                "bottlerocketConfig",
                "etcdImage",
            ],
        )
        .to_owned()
            + s(
                etcd,
                &["spec", "etcdadmConfigSpec", "cloudInitConfig", "version"],
            );
        let _ = version;
        let desired = Desired {
            replicas,
            template: format!("{}||{etcd_version}", s(template, &["name"])),
            infrastructure_ref: template.clone(),
            bootstrap_ref: None,
            version: Value::Null,
            labels: json!({CLUSTER_NAME_LABEL: cluster_name, "cluster.x-k8s.io/etcd-cluster": name}),
            machine_api_version: Pass::machine_api_version(cluster.as_ref(), etcd),
            cluster: cluster_name.clone(),
            create: cluster.is_some()
                && !self.stalled(etcd)
                && !cluster.as_ref().is_some_and(terminating)
                && !terminating(etcd),
            // The EtcdadmCluster has no rollout field: only a template change rolls it.
            rollout_after: None,
        };
        let counts = self.machines(etcd, &desired);
        let ready = counts.replicas == replicas && counts.updated == replicas && desired.create;
        let mut status = etcd["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        status["readyReplicas"] = json!(counts.replicas);
        status["ready"] = json!(ready);
        status["initializedEtcdCluster"] = json!(counts.replicas > 0);
        status["creationComplete"] = json!(ready);
        status["observedGeneration"] = etcd["metadata"]["generation"].clone();
        status["conditions"] = conditions(
            etcd,
            &[("Ready", ready), ("EtcdClusterResizeCompleted", ready)],
        );
        self.set_status(etcd, status);
    }

    fn control_plane(&mut self, kcp: &Value) {
        let ns = s(kcp, &["metadata", "namespace"]).to_owned();
        let name = s(kcp, &["metadata", "name"]).to_owned();
        let cluster = self.cluster_by(&ns, |c| s(c, &["spec", "controlPlaneRef", "name"]) == name);
        let cluster_name = cluster
            .as_ref()
            .map(|c| s(c, &["metadata", "name"]).to_owned())
            .unwrap_or_else(|| s(kcp, &["metadata", "labels", CLUSTER_NAME_LABEL]).to_owned());
        let etcd_ready = match cluster
            .as_ref()
            .map(|c| &c["spec"]["managedExternalEtcdRef"])
        {
            Some(r) if r.is_object() => self
                .find_ref(r, &ns)
                .is_some_and(|(_, e)| e["status"]["ready"] == json!(true)),
            _ => true,
        };
        let infrastructure_ref = if is_v1beta1(kcp) {
            kcp["spec"]["machineTemplate"]["infrastructureRef"].clone()
        } else {
            kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"].clone()
        };
        let replicas = kcp["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
        let version = kcp["spec"]["version"].clone();
        let bootstrap_ref = if is_v1beta1(kcp) {
            json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig", "name": ""})
        } else {
            json!({"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": ""})
        };
        let desired = Desired {
            replicas,
            template: format!(
                "{}||{}",
                s(&infrastructure_ref, &["name"]),
                version.as_str().unwrap_or_default()
            ),
            infrastructure_ref,
            bootstrap_ref: Some(bootstrap_ref),
            version: version.clone(),
            labels: json!({CLUSTER_NAME_LABEL: cluster_name, "cluster.x-k8s.io/control-plane": ""}),
            machine_api_version: Pass::machine_api_version(cluster.as_ref(), kcp),
            cluster: cluster_name.clone(),
            // Cluster API acts on a control plane only once its Cluster is there.
            create: etcd_ready
                && cluster.is_some()
                && !self.stalled(kcp)
                && !cluster.as_ref().is_some_and(terminating)
                && !terminating(kcp),
            rollout_after: rollout_after(kcp),
        };
        let counts = self.machines(kcp, &desired);
        // Initialized once the first machine's API server answers: its workload cluster is up
        // and the kubeconfig published.
        let mut initialized = kcp["status"]["initialized"] == json!(true);
        if counts.replicas > 0
            && let Some(cluster) = &cluster
        {
            initialized |= self.kubeconfig_secret(cluster);
        }
        let ready = counts.ready == replicas
            && counts.replicas == replicas
            && counts.updated == replicas
            && desired.create;
        let mut status = kcp["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        status["replicas"] = json!(counts.replicas);
        status["readyReplicas"] = json!(counts.ready);
        status["availableReplicas"] = json!(counts.ready);
        status["updatedReplicas"] = json!(counts.updated);
        status["upToDateReplicas"] = json!(counts.updated);
        status["unavailableReplicas"] = json!(counts.replicas - counts.ready);
        // v1beta1: true once an API server is ready, and it stays so.
        status["ready"] = json!(counts.ready > 0 || kcp["status"]["ready"] == json!(true));
        status["initialized"] = json!(initialized);
        status["version"] = version;
        status["observedGeneration"] = kcp["metadata"]["generation"].clone();
        status["selector"] = json!(format!(
            "{CLUSTER_NAME_LABEL}={cluster_name},cluster.x-k8s.io/control-plane"
        ));
        if !is_v1beta1(kcp) {
            status["initialization"] = json!({"controlPlaneInitialized": initialized});
        }
        let all_ready = counts.ready == counts.replicas && counts.replicas > 0;
        let v1beta1 = is_v1beta1(kcp);
        // v1beta1: Available once the API server answers, Ready and MachinesReady summarise the
        // machines. v1beta2: Available (API servers and etcd answer), Initialized,
        // MachinesReady, MachinesUpToDate; no Ready.
        let mut wanted = vec![
            (
                "Available",
                initialized && counts.replicas > 0 && desired.create,
            ),
            ("MachinesReady", all_ready),
        ];
        if v1beta1 {
            wanted.push(("Ready", ready));
        } else {
            wanted.push(("Initialized", initialized));
            wanted.push(("MachinesUpToDate", counts.updated == counts.replicas));
        }
        status["conditions"] = conditions_with(
            kcp,
            &wanted,
            &negatives(
                kcp,
                &[
                    ("RollingOut", counts.updated < counts.replicas),
                    ("ScalingUp", counts.replicas < replicas),
                    ("ScalingDown", counts.replicas > replicas),
                ],
            ),
        );
        self.set_status(kcp, status);
    }

    /// Publishes `<cluster>-kubeconfig` pointing at the cluster's workload cluster, asking for
    /// one first when it is not running yet; whether the Secret is there.
    fn kubeconfig_secret(&mut self, cluster: &Value) -> bool {
        let ns = s(cluster, &["metadata", "namespace"]);
        let name = s(cluster, &["metadata", "name"]);
        let secret_name = format!("{name}-kubeconfig");
        let Some(workload) = self.workloads.get(&cluster_key(ns, name)).cloned() else {
            self.needed.push(cluster_key(ns, name));
            return false;
        };
        if self.find("", "Secret", ns, &secret_name).is_some() {
            return true;
        }
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let kubeconfig = workload.api.kubeconfig_as(name, &format!("{name}-admin"));
        let secret = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "cluster.x-k8s.io/secret",
            "metadata": {
                "name": secret_name,
                "namespace": ns,
                "labels": {CLUSTER_NAME_LABEL: name},
                "ownerReferences": [owner_ref(cluster)],
            },
            "data": {"value": b64(&kubeconfig)},
        });
        self.store.put(secret, MANAGER).is_ok()
    }

    fn machine_deployment(&mut self, md: &Value) {
        let ns = s(md, &["metadata", "namespace"]).to_owned();
        let name = s(md, &["metadata", "name"]).to_owned();
        let cluster_name = s(md, &["spec", "clusterName"]).to_owned();
        let cluster = self.cluster_by(&ns, |c| s(c, &["metadata", "name"]) == cluster_name);
        let cp_initialized = cluster
            .as_ref()
            .and_then(|c| self.find_ref(&c["spec"]["controlPlaneRef"], &ns))
            .is_some_and(|(_, kcp)| kcp["status"]["initialized"] == json!(true));
        let spec = &md["spec"]["template"]["spec"];
        if let Some(c) = &cluster {
            self.adopt(md, c);
            self.adopt_template(&spec["infrastructureRef"], &ns, c);
            self.adopt_template(&spec["bootstrap"]["configRef"], &ns, c);
        }
        let infrastructure_ref = spec["infrastructureRef"].clone();
        let bootstrap_ref = spec["bootstrap"]["configRef"].clone();
        let version = spec["version"].clone();
        let replicas = md["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
        let desired = Desired {
            replicas,
            template: format!(
                "{}|{}|{}",
                s(&infrastructure_ref, &["name"]),
                s(&bootstrap_ref, &["name"]),
                version.as_str().unwrap_or_default()
            ),
            infrastructure_ref,
            bootstrap_ref: Some(bootstrap_ref),
            version,
            labels: json!({CLUSTER_NAME_LABEL: cluster_name, "cluster.x-k8s.io/deployment-name": name}),
            machine_api_version: Pass::machine_api_version(cluster.as_ref(), md),
            cluster: cluster_name.clone(),
            create: cp_initialized
                && !self.stalled(md)
                && !cluster.as_ref().is_some_and(terminating)
                && !terminating(md),
            // Not simulated for MachineDeployments.
            rollout_after: None,
        };
        let counts = self.machines(md, &desired);
        let ready = counts.ready == replicas
            && counts.replicas == replicas
            && counts.updated == replicas
            && desired.create;
        let mut status = md["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        status["replicas"] = json!(counts.replicas);
        status["readyReplicas"] = json!(counts.ready);
        status["availableReplicas"] = json!(counts.ready);
        status["updatedReplicas"] = json!(counts.updated);
        status["upToDateReplicas"] = json!(counts.updated);
        status["unavailableReplicas"] = json!(counts.replicas.saturating_sub(counts.ready));
        status["observedGeneration"] = md["metadata"]["generation"].clone();
        status["selector"] = json!(format!(
            "{CLUSTER_NAME_LABEL}={cluster_name},cluster.x-k8s.io/deployment-name={name}"
        ));
        status["phase"] = json!(if ready {
            "Running"
        } else if counts.replicas < replicas {
            "ScalingUp"
        } else if counts.replicas > replicas {
            "ScalingDown"
        } else {
            "Running"
        });
        let all_ready = counts.ready == counts.replicas;
        let mut wanted = vec![("Available", ready), ("MachinesReady", all_ready)];
        if is_v1beta1(md) {
            wanted.extend([("Ready", ready), ("MachineSetReady", ready)]);
        } else {
            wanted.push(("MachinesUpToDate", counts.updated == counts.replicas));
        }
        status["conditions"] = conditions_with(
            md,
            &wanted,
            &negatives(
                md,
                &[
                    ("RollingOut", counts.updated < counts.replicas),
                    ("ScalingUp", counts.replicas < replicas),
                    ("ScalingDown", counts.replicas > replicas),
                ],
            ),
        );
        self.set_status(md, status);
    }
}

/// The value at a dotted path of a JSON object (`spec.replicas`): a convenience for tests.
pub fn field<'a>(object: &'a Value, dotted: &str) -> Option<&'a Value> {
    let path: Vec<String> = dotted.split('.').map(str::to_owned).collect();
    get_path(object, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_after_is_read_per_contract_in_whole_seconds() {
        let v1 = |t: &str| json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "spec": {"rolloutAfter": t}});
        let v2 = |t: &str| json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "spec": {"rollout": {"after": t}}});
        assert_eq!(
            rollout_after(&v1("2026-11-27T06:10:01Z")).as_deref(),
            Some("2026-11-27T06:10:01Z")
        );
        assert_eq!(
            rollout_after(&v2("2026-11-27T06:10:01.25Z")).as_deref(),
            Some("2026-11-27T06:10:01Z")
        );
        // The other contract's field, or a time in another form, is not a rollout time.
        let mut wrong = v2("2026-11-27T06:10:01Z");
        wrong["apiVersion"] = json!("controlplane.cluster.x-k8s.io/v1beta1");
        assert_eq!(rollout_after(&wrong), None);
        assert_eq!(rollout_after(&v2("2026-11-27T06:10:01+02:00")), None);
        assert_eq!(rollout_after(&v2("2026-11-27 06:10:01Z")), None);
        assert_eq!(rollout_after(&v2("soon")), None);
    }
}
