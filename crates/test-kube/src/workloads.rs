//! A simulated deployment controller (kube-controller-manager's part that matters to installers):
//! each `step`, every Deployment whose status does not describe its current spec gets one that
//! does, written through the status subresource as field manager `kube-controller-manager`:
//! `observedGeneration`, the replica counts and the `Available` and `Progressing` conditions.
//! A stalled Deployment (see [`WorkloadOptions::stall`]), or one whose pods mount a Secret that
//! does not exist (not `optional`), reports its replicas unavailable (`Available=False`,
//! `MinimumReplicasUnavailable`), as one whose pods never start. Each pass also runs the
//! simulated cert-manager ([`crate::cert_manager`]), which issues such Secrets.

use super::Shared;
use super::clock;
use super::store::{Store, Write};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The field manager of the simulated deployment controller.
pub const MANAGER: &str = "kube-controller-manager";

/// Options of the simulated deployment controller.
#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// Time between passes. Default 20 ms.
    pub step: Duration,
    /// `(namespace, name)` of Deployments that never become Available.
    pub stall: Vec<(String, String)>,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            step: Duration::from_millis(20),
            stall: Vec::new(),
        }
    }
}

/// The running controller; it stops when this drops.
#[derive(Debug)]
pub struct WorkloadHandle {
    stall: Arc<Mutex<Vec<(String, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl WorkloadHandle {
    /// Replaces the stalled Deployments; one no longer stalled becomes Available.
    pub fn set_stall(&self, stall: Vec<(String, String)>) {
        if let Ok(mut s) = self.stall.lock() {
            *s = stall;
        }
    }
}

impl Drop for WorkloadHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) fn start(shared: Arc<Shared>, options: WorkloadOptions) -> WorkloadHandle {
    let stall = Arc::new(Mutex::new(options.stall));
    let running = stall.clone();
    let task = tokio::spawn(async move {
        loop {
            let stalled = running.lock().map(|s| s.clone()).unwrap_or_default();
            pass(&mut shared.lock(), &stalled);
            tokio::time::sleep(options.step).await;
        }
    });
    WorkloadHandle { stall, task }
}

fn condition(previous: &Value, kind: &str, ok: bool, reason: &str, message: &str) -> Value {
    let status = if ok { "True" } else { "False" };
    let same = previous["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind && c["status"] == status);
    let time = same
        .map(|c| c["lastTransitionTime"].clone())
        .unwrap_or_else(|| json!(clock::now_rfc3339()));
    json!({"type": kind, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": time, "lastUpdateTime": time})
}

/// The status a Deployment should report now.
fn desired_status(deployment: &Value, stalled: bool) -> Value {
    let previous = &deployment["status"];
    let replicas = deployment["spec"]["replicas"].as_u64().unwrap_or(1);
    let name = deployment["metadata"]["name"].as_str().unwrap_or_default();
    let available = if stalled { 0 } else { replicas };
    let mut status = json!({
        "observedGeneration": deployment["metadata"]["generation"],
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": available,
        "availableReplicas": available,
        "conditions": [
            if stalled {
                condition(previous, "Available", false, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
            } else {
                condition(previous, "Available", true, "MinimumReplicasAvailable", "Deployment has minimum availability.")
            },
            condition(previous, "Progressing", true, "NewReplicaSetAvailable",
                &format!("ReplicaSet \"{name}\" has successfully progressed.")),
        ],
    });
    if stalled {
        status["unavailableReplicas"] = json!(replicas);
    }
    status
}

/// Whether the pod template mounts a Secret (not `optional`) that is not in `namespace`: the
/// kubelet cannot set up the volume, so no pod starts (`MountVolume.SetUp failed`).
fn missing_secret(store: &Store, namespace: &str, deployment: &Value) -> bool {
    let volumes = &deployment["spec"]["template"]["spec"]["volumes"];
    volumes.as_array().into_iter().flatten().any(|v| {
        let Some(name) = v["secret"]["secretName"].as_str() else {
            return false;
        };
        v["secret"]["optional"] != true
            && store
                .select("", "secrets", |s| {
                    s["metadata"]["namespace"] == namespace && s["metadata"]["name"] == name
                })
                .is_empty()
    })
}

fn pass(store: &mut Store, stalled: &[(String, String)]) {
    super::cert_manager::pass(store);
    let Some(rt) = store.registry.by_kind("apps/v1", "Deployment").cloned() else {
        return;
    };
    for (key, deployment) in store.raw("apps", "deployments") {
        if !deployment["metadata"]["deletionTimestamp"].is_null() {
            continue;
        }
        let stall = stalled.iter().any(|(ns, n)| *ns == key.2 && *n == key.3)
            || missing_secret(store, &key.2, &deployment);
        let status = desired_status(&deployment, stall);
        if deployment["status"] == status {
            continue;
        }
        let mut new = deployment.clone();
        new["status"] = status;
        if let Some(m) = new["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let w = Write {
            manager: MANAGER,
            api_version: "apps/v1",
            dry_run: false,
            status: true,
            whole: false,
            force: false,
        };
        let _ = store.replace(&rt, Some(&key.2), &key.3, new, w);
    }
}
