//! Installing or upgrading Cilium on the workload cluster, and waiting for it.

use super::{AGENT_DAEMONSET, CNI_NAMESPACE, CniManifest, OPERATOR_DEPLOYMENT, installed_images};
use crate::{
    Event, LifecycleError, Management, Stage, WaitOptions,
    live::workload_kubeconfig,
    wait::{self, Readiness, Target, daemonset_readiness, deployment_readiness},
};
use serde::Serialize;
use serde_json::Value;
use snow_kube::KubeError;

fn count(v: &Value) -> u32 {
    v.as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or(0)
}

/// A workload-cluster failure, said as one (the management client's errors name the management
/// cluster).
fn on_workload(cluster: &str, err: impl Into<LifecycleError>) -> LifecycleError {
    let reason = match err.into() {
        LifecycleError::Kube(KubeError::Api {
            action,
            object,
            code,
            message,
        }) => format!("{action} {object} failed: {message} (HTTP {code})"),
        LifecycleError::Kube(KubeError::Unreachable { server, reason }) => {
            format!("cannot reach its API server at {server}: {reason}")
        }
        LifecycleError::Kube(KubeError::Kubeconfig { reason, .. }) => {
            format!("its kubeconfig (Secret {cluster}-kubeconfig) cannot be used: {reason}")
        }
        timeout @ LifecycleError::Kube(KubeError::Timeout { .. }) => return timeout,
        other => other.to_string(),
    };
    LifecycleError::Workload {
        cluster: cluster.to_owned(),
        reason,
    }
}

/// The workload cluster's client, from the kubeconfig Cluster API publishes.
pub(crate) async fn workload(
    mgmt: &Management,
    cluster: &str,
    opts: &WaitOptions,
) -> Result<crate::WorkloadCluster, LifecycleError> {
    let kubeconfig = workload_kubeconfig(mgmt, cluster, opts).await?;
    mgmt.workload(cluster, &kubeconfig)
        .await
        .map_err(|e| on_workload(cluster, e))
}

/// The agent DaemonSet and the operator Deployment on the workload cluster `wl`, when there.
pub(crate) async fn installed(
    wl: &Management,
    cluster: &str,
) -> Result<(Option<Value>, Option<Value>), LifecycleError> {
    let get = |kind, name| wl.get("apps/v1", kind, Some(CNI_NAMESPACE), name);
    let err = |e| on_workload(cluster, e);
    let ds = get("DaemonSet", AGENT_DAEMONSET).await.map_err(err)?;
    let operator = get("Deployment", OPERATOR_DEPLOYMENT).await.map_err(err)?;
    Ok((ds, operator))
}

/// Applies `manifest` on the workload cluster `wl` when Cilium is not there, or runs other
/// images (unless `skip_upgrade`; a first install ignores it, as EKS Anywhere does). Returns
/// whether it applied.
pub(crate) async fn apply_needed<F: FnMut(Event) + ?Sized>(
    wl: &Management,
    cluster: &str,
    manifest: &CniManifest,
    skip_upgrade: bool,
    on_event: &mut F,
) -> Result<bool, LifecycleError> {
    let (ds, operator) = installed(wl, cluster).await?;
    let apply = match (&ds, &operator) {
        (Some(ds), Some(operator)) => {
            let (agent, op) = installed_images(ds, operator);
            let differs = agent.iter().any(|i| i != manifest.agent_image())
                || op.as_deref() != Some(manifest.operator_image());
            let installed = format!(
                "{}, operator {}",
                agent.first().map_or("no agent image", String::as_str),
                op.as_deref().unwrap_or("no operator image")
            );
            if !differs {
                on_event(Event::Note(format!(
                    "Cilium is installed with the manifest's images ({installed})"
                )));
                false
            } else if skip_upgrade {
                on_event(Event::Note(format!(
                    "Cilium upgrade skipped (clusterNetwork.cniConfig.cilium.skipUpgrade: true); it keeps {installed}"
                )));
                false
            } else {
                on_event(Event::Step(format!(
                    "Upgrading Cilium on the workload cluster: {installed} → {}, operator {}",
                    manifest.agent_image(),
                    manifest.operator_image()
                )));
                true
            }
        }
        // A first install ignores skipUpgrade, as EKS Anywhere does.
        _ => {
            on_event(Event::Step(format!(
                "Installing Cilium on the workload cluster ({} objects, server-side; {})",
                manifest.objects().len(),
                manifest.agent_image()
            )));
            true
        }
    };
    if apply {
        for object in manifest.objects() {
            wl.apply(object)
                .await
                .map_err(|e| on_workload(cluster, e))?;
            on_event(Event::Applied {
                object: format!(
                    "{}/{}",
                    object["kind"].as_str().unwrap_or_default(),
                    object["metadata"]["name"].as_str().unwrap_or_default()
                ),
            });
        }
    }
    Ok(apply)
}

/// Installs Cilium from `manifest` on the workload cluster of `cluster` when it is not there,
/// upgrades it when its images differ (unless `skip_upgrade`), then waits for the agent
/// DaemonSet and the operator Deployment to be ready.
pub(crate) async fn ensure(
    mgmt: &Management,
    cluster: &str,
    manifest: &CniManifest,
    skip_upgrade: bool,
    opts: &WaitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    let wl = workload(mgmt, cluster, opts).await?;
    let err = |e| on_workload(cluster, e);
    apply_needed(&wl, cluster, manifest, skip_upgrade, on_event).await?;
    for (kind, name, judge, condition) in [
        (
            "DaemonSet",
            AGENT_DAEMONSET,
            daemonset_readiness as fn(&Value) -> Readiness,
            "every scheduled Cilium agent ready and up to date",
        ),
        (
            "Deployment",
            OPERATOR_DEPLOYMENT,
            deployment_readiness as fn(&Value) -> Readiness,
            "every Cilium operator replica ready",
        ),
    ] {
        wait::wait_in(
            &wl,
            CNI_NAMESPACE,
            Target {
                stage: Stage::Cni(format!("{kind} {CNI_NAMESPACE}/{name}")),
                api_version: "apps/v1",
                kind,
                name,
                condition,
                judge,
                timeout: opts.timeouts.control_plane,
            },
            opts.poll,
            on_event,
        )
        .await
        .map_err(err)?;
    }
    Ok(())
}

/// Cilium as installed on a workload cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CniState {
    /// The images of the agent DaemonSet (containers and init containers), empty when absent.
    pub agent_images: Vec<String>,
    /// The operator Deployment's image, when it is there.
    pub operator_image: Option<String>,
    /// Agents ready.
    pub ready: u32,
    /// Agents scheduled (one per node).
    pub desired: u32,
}

impl std::fmt::Display for CniState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.agent_images.is_empty() {
            return f.write_str("Cilium is not installed (no DaemonSet kube-system/cilium)");
        }
        let mut agents = self.agent_images.clone();
        agents.dedup();
        write!(
            f,
            "Cilium DaemonSet kube-system/cilium {}/{} ready ({}); operator {}",
            self.ready,
            self.desired,
            agents.join(", "),
            self.operator_image.as_deref().unwrap_or("missing")
        )
    }
}

/// Cilium on the workload cluster of `cluster`; `None` when Cluster API has not published its
/// kubeconfig yet.
pub async fn cni_state(
    mgmt: &Management,
    cluster: &str,
) -> Result<Option<CniState>, LifecycleError> {
    let secret = format!("{cluster}-kubeconfig");
    if mgmt
        .get("v1", "Secret", Some(capi_render::NAMESPACE), &secret)
        .await?
        .is_none()
    {
        return Ok(None);
    }
    let no_wait = WaitOptions::default();
    let wl = workload(mgmt, cluster, &no_wait).await?;
    let (ds, operator) = installed(&wl, cluster).await?;
    let ds = ds.unwrap_or(Value::Null);
    let operator = operator.unwrap_or(Value::Null);
    let (agent_images, operator_image) = installed_images(&ds, &operator);
    Ok(Some(CniState {
        agent_images,
        operator_image,
        ready: count(&ds["status"]["numberReady"]),
        desired: count(&ds["status"]["desiredNumberScheduled"]),
    }))
}
