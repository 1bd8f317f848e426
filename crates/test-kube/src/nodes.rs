//! A simulated workload cluster's kubelets and DaemonSet controller: what makes a Node Ready.
//!
//! Each `step`:
//! - every DaemonSet gets one pod per Node (pods are not stored: the controller keeps them in
//!   memory); a pod created in a pass is ready in the next one; when the pod template changes,
//!   one pod per pass is replaced (a rolling update); the status (`desiredNumberScheduled`,
//!   `currentNumberScheduled`, `numberReady`, `updatedNumberScheduled`, `numberAvailable`,
//!   `numberUnavailable`, `observedGeneration`) describes that, written through the status
//!   subresource as `kube-controller-manager`;
//! - a Node is `Ready` only once a **CNI DaemonSet** has a ready pod on it, as a kubelet reports
//!   `NetworkReady=false` until a CNI plugin writes its configuration. A CNI DaemonSet is what a
//!   real CNI ships: a DaemonSet in `kube-system` whose pod template mounts the host path
//!   `/etc/cni/net.d` (Cilium's `etc-cni-netd` volume). The configuration stays on the node while
//!   the agent's pod is replaced, so a rolling update keeps the Node Ready; with no CNI DaemonSet
//!   left, the Node is NotReady again.

use super::Shared;
use super::clock;
use super::store::{Store, Write};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// The field manager of the simulated kubelets and DaemonSet controller.
pub const MANAGER: &str = "kube-controller-manager";

/// The host path a CNI plugin's configuration lives in.
pub const CNI_CONFIG_DIR: &str = "/etc/cni/net.d";

/// The running simulation; it stops when this drops.
#[derive(Debug)]
pub struct NodesHandle {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for NodesHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A pod of a DaemonSet on one node: the template it was made from, and whether it is ready.
#[derive(Debug, Clone)]
struct Pod {
    template: String,
    ready: bool,
}

/// What the simulation remembers between passes.
#[derive(Debug, Default)]
struct State {
    /// `(namespace, name)` of a DaemonSet → its pods by node.
    pods: BTreeMap<(String, String), BTreeMap<String, Pod>>,
    /// Nodes a CNI plugin has configured.
    configured: BTreeSet<String>,
}

pub(crate) fn start(shared: Arc<Shared>, step: Duration) -> NodesHandle {
    let task = tokio::spawn(async move {
        let mut state = State::default();
        loop {
            pass(&mut shared.lock(), &mut state);
            tokio::time::sleep(step).await;
        }
    });
    NodesHandle { task }
}

/// Whether a DaemonSet is a CNI's: in `kube-system`, mounting `/etc/cni/net.d` from the host.
pub fn is_cni(daemonset: &Value) -> bool {
    daemonset["metadata"]["namespace"] == "kube-system"
        && daemonset["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["hostPath"]["path"].as_str())
            .any(|p| p.trim_end_matches('/') == CNI_CONFIG_DIR)
}

fn write(store: &mut Store, kind: &str, object: &Value, status: Value) {
    if object["status"] == status {
        return;
    }
    let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
    let Some(rt) = store.registry.by_kind(&api_version, kind).cloned() else {
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
        status: true,
        whole: false,
        force: false,
    };
    let ns = object["metadata"]["namespace"].as_str().map(str::to_owned);
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let _ = store.replace(&rt, ns.as_deref(), &name, new, w);
}

fn pass(store: &mut Store, state: &mut State) {
    let nodes: Vec<Value> = store.raw("", "nodes").into_iter().map(|(_, n)| n).collect();
    let node_names: BTreeSet<String> = nodes
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    let daemonsets: Vec<Value> = store
        .raw("apps", "daemonsets")
        .into_iter()
        .map(|(_, d)| d)
        .filter(|d| d["metadata"]["deletionTimestamp"].is_null())
        .collect();
    let keys: BTreeSet<(String, String)> = daemonsets.iter().map(key).collect();
    state.pods.retain(|k, _| keys.contains(k));
    let mut cni_ready_on = BTreeSet::new();
    let mut any_cni = false;
    for ds in &daemonsets {
        let template = serde_json::to_string(&ds["spec"]["template"]).unwrap_or_default();
        let pods = state.pods.entry(key(ds)).or_default();
        pods.retain(|node, _| node_names.contains(node));
        // Pods made in the last pass are running now.
        for pod in pods.values_mut() {
            pod.ready = true;
        }
        for node in &node_names {
            pods.entry(node.clone()).or_insert_with(|| Pod {
                template: template.clone(),
                ready: false,
            });
        }
        // A rolling update: one outdated pod replaced per pass, once the others are ready.
        if pods.values().all(|p| p.ready)
            && let Some(pod) = pods.values_mut().find(|p| p.template != template)
        {
            *pod = Pod {
                template: template.clone(),
                ready: false,
            };
        }
        let ready = pods.values().filter(|p| p.ready).count();
        let updated = pods.values().filter(|p| p.template == template).count();
        let desired = node_names.len();
        if is_cni(ds) {
            any_cni = true;
            cni_ready_on.extend(pods.iter().filter(|(_, p)| p.ready).map(|(n, _)| n.clone()));
        }
        let status = json!({
            "observedGeneration": ds["metadata"]["generation"],
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": pods.len(),
            "numberMisscheduled": 0,
            "numberReady": ready,
            "updatedNumberScheduled": updated,
            "numberAvailable": ready,
            "numberUnavailable": desired.saturating_sub(ready),
        });
        write(store, "DaemonSet", ds, status);
    }
    if any_cni {
        state.configured.extend(cni_ready_on);
        state.configured.retain(|n| node_names.contains(n));
    } else {
        state.configured.clear();
    }
    for node in &nodes {
        let name = node["metadata"]["name"].as_str().unwrap_or_default();
        let ready = state.configured.contains(name);
        let previous = node["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready")
            .cloned();
        let status_text = if ready { "True" } else { "False" };
        let time = previous
            .filter(|c| c["status"] == status_text)
            .map(|c| c["lastTransitionTime"].clone())
            .unwrap_or_else(|| json!(clock::now_rfc3339()));
        let condition = if ready {
            json!({"type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status", "lastTransitionTime": time, "lastHeartbeatTime": time})
        } else {
            json!({"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                "message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
                "lastTransitionTime": time, "lastHeartbeatTime": time})
        };
        let mut status = node["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        status["conditions"] = json!([condition]);
        write(store, "Node", node, status);
    }
}

fn key(object: &Value) -> (String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&object["metadata"]["namespace"]),
        text(&object["metadata"]["name"]),
    )
}

/// Whether a Node's `Ready` condition is True.
pub fn node_ready(node: &Value) -> bool {
    node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// The smallest CNI DaemonSet ([`is_cni`]): `kube-system/test-cni`, mounting the host's
/// `/etc/cni/net.d`, for tests that play the part of whoever installs the CNI.
pub fn cni_daemonset() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "test-cni", "namespace": "kube-system", "labels": {"k8s-app": "test-cni"}},
        "spec": {
            "selector": {"matchLabels": {"k8s-app": "test-cni"}},
            "template": {
                "metadata": {"labels": {"k8s-app": "test-cni"}},
                "spec": {
                    "hostNetwork": true,
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "agent", "image": "registry.local/test-cni:v1"}],
                    "volumes": [{"name": "etc-cni-netd", "hostPath": {"path": CNI_CONFIG_DIR, "type": "DirectoryOrCreate"}}],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cni_daemonset_mounts_the_cni_configuration_from_the_host_in_kube_system() {
        let ds = |ns: &str, path: &str| {
            json!({"metadata": {"namespace": ns, "name": "x"}, "spec": {"template": {"spec": {"volumes": [
                {"name": "etc-cni-netd", "hostPath": {"path": path, "type": "DirectoryOrCreate"}}]}}}})
        };
        assert!(is_cni(&ds("kube-system", "/etc/cni/net.d")));
        assert!(is_cni(&ds("kube-system", "/etc/cni/net.d/")));
        assert!(!is_cni(&ds("default", "/etc/cni/net.d")));
        assert!(!is_cni(&ds("kube-system", "/var/log")));
    }
}
