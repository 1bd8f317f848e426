//! Waiting for the control plane, etcd and worker groups to be ready, with progress and
//! per-stage timeouts (EKS Anywhere's `--control-plane-wait-timeout`,
//! `--external-etcd-wait-timeout`, `--per-machine-wait-timeout`).
//!
//! Readiness is judged from the objects' status alone (both contracts): the controller has seen
//! the latest spec (`observedGeneration`), every wanted replica is up to date and ready, no extra
//! replica is left from a rollout, and the object's own `Ready`/`Available` condition is not false.

use crate::{Event, KubeError, Management, Stage, live::cluster_selector};
use capi_render::Contract;
use capi_render::NAMESPACE;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long each stage may take; `None` waits forever (`--no-timeouts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Each control-plane wait (initialized, ready), the kubeconfig Secret, each CNI wait
    /// (agent DaemonSet, operator Deployment) and the Cluster.
    pub control_plane: Option<Duration>,
    /// The external etcd cluster.
    pub external_etcd: Option<Duration>,
    /// Per machine of a worker group (the group's timeout is this times its machine count).
    pub per_machine: Option<Duration>,
    /// The deletion of the cluster and its machines.
    pub deletion: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            control_plane: Some(Duration::from_secs(60 * 60)),
            external_etcd: Some(Duration::from_secs(60 * 60)),
            per_machine: Some(Duration::from_secs(10 * 60)),
            deletion: Some(Duration::from_secs(30 * 60)),
        }
    }
}

/// Timeouts and how often to look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// Per-stage timeouts.
    pub timeouts: Timeouts,
    /// The pause between two looks at an object.
    pub poll: Duration,
}

impl Default for WaitOptions {
    fn default() -> WaitOptions {
        WaitOptions {
            timeouts: Timeouts::default(),
            poll: Duration::from_secs(2),
        }
    }
}

/// What an object says about its readiness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    /// Ready so far.
    pub ready: u32,
    /// Wanted.
    pub total: u32,
    /// Whether the object is ready.
    pub done: bool,
    /// What the object says (counts, conditions).
    pub detail: String,
}

fn count(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// Cluster API v1beta2 conditions of negative polarity: healthy when False (a True one says
/// something is going on: a deletion, a pause, a rollout, a scale, a remediation).
pub const NEGATIVE_CONDITIONS: [&str; 6] = [
    "Deleting",
    "Paused",
    "RollingOut",
    "ScalingUp",
    "ScalingDown",
    "Remediating",
];

/// Whether a condition of an object served as `api_version` says something is wrong or going
/// on, as its contract means it: on `…/v1beta2` a negative-polarity condition when True and any
/// other when not True; on older contracts (every condition positive) when not True.
pub fn troubling(api_version: &str, kind: &str, status: &str) -> bool {
    if api_version.ends_with("/v1beta2") && NEGATIVE_CONDITIONS.contains(&kind) {
        status == "True"
    } else {
        status != "True"
    }
}

/// The conditions that mean trouble ([`troubling`]), as `Type=Status (reason: message)`.
fn unmet_conditions(object: &Value) -> Vec<String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            troubling(
                api_version,
                c["type"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
            )
        })
        .map(|c| {
            let mut text = format!(
                "{}={}",
                c["type"].as_str().unwrap_or("?"),
                c["status"].as_str().unwrap_or("?")
            );
            let why: Vec<&str> = [&c["reason"], &c["message"]]
                .into_iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .collect();
            if !why.is_empty() {
                text.push_str(&format!(" ({})", why.join(": ")));
            }
            text
        })
        .collect()
}

/// The named condition's status, when the object has it.
fn condition<'a>(status: &'a Value, kind: &str) -> Option<&'a str> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?["status"]
        .as_str()
}

/// Readiness of a replicated object (KubeadmControlPlane, MachineDeployment).
pub fn replicas_readiness(object: &Value) -> Readiness {
    let status = &object["status"];
    let want = count(&object["spec"]["replicas"]).unwrap_or(1);
    let ready = count(&status["readyReplicas"]).unwrap_or(0);
    let current = count(&status["replicas"]).unwrap_or(0);
    // v1beta2 says upToDate, v1beta1 updated; a status with neither has nothing to roll.
    let up_to_date = count(&status["upToDateReplicas"])
        .or_else(|| count(&status["updatedReplicas"]))
        .unwrap_or(ready);
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
    let observed = status["observedGeneration"].as_i64().unwrap_or(0) >= generation;
    // Whichever of the two the contract has must not be False.
    let condition_ok = ["Available", "Ready"]
        .iter()
        .all(|kind| condition(status, kind) != Some("False"));
    let done = observed && ready >= want && up_to_date >= want && current == want && condition_ok;
    let mut detail = vec![format!(
        "{ready} ready, {up_to_date} up to date, {current} running of {want}"
    )];
    if !observed {
        detail.push("the controller has not seen the latest spec yet".into());
    }
    detail.extend(unmet_conditions(object));
    Readiness {
        ready: ready.min(want),
        total: want,
        done,
        detail: detail.join("; "),
    }
}

/// Readiness of an EtcdadmCluster (`status.ready`).
pub fn etcd_readiness(etcd: &Value) -> Readiness {
    let status = &etcd["status"];
    let want = count(&etcd["spec"]["replicas"]).unwrap_or(1);
    let generation = etcd["metadata"]["generation"].as_i64().unwrap_or(0);
    let observed = status["observedGeneration"]
        .as_i64()
        .is_none_or(|g| g >= generation);
    let ready_flag = status["ready"].as_bool().unwrap_or(false);
    let done = ready_flag && observed;
    let ready = if done {
        want
    } else {
        count(&status["replicas"])
            .unwrap_or(0)
            .min(want.saturating_sub(1))
    };
    let mut detail = vec![format!("ready: {ready_flag}")];
    detail.extend(unmet_conditions(etcd));
    Readiness {
        ready,
        total: want,
        done,
        detail: detail.join("; "),
    }
}

/// Whether a KubeadmControlPlane is initialized: v1beta1 `status.initialized`, v1beta2
/// `status.initialization.controlPlaneInitialized`.
pub fn initialized_readiness(kcp: &Value) -> Readiness {
    let status = &kcp["status"];
    let done = status["initialized"] == true
        || status["initialization"]["controlPlaneInitialized"] == true;
    let mut detail = vec![format!(
        "{} machine(s), not initialized yet",
        count(&status["replicas"]).unwrap_or(0)
    )];
    detail.extend(unmet_conditions(kcp));
    Readiness {
        ready: u32::from(done),
        total: 1,
        done,
        detail: detail.join("; "),
    }
}

/// Whether a Cluster is ready: v1beta2 `Available`, v1beta1 `Ready`, True.
pub fn cluster_readiness(cluster: &Value) -> Readiness {
    let status = &cluster["status"];
    let wanted = if cluster["apiVersion"]
        .as_str()
        .is_some_and(|v| v.ends_with("/v1beta1"))
    {
        "Ready"
    } else {
        "Available"
    };
    let done = condition(status, wanted) == Some("True");
    let mut detail = vec![format!(
        "{wanted}: {}",
        condition(status, wanted).unwrap_or("not reported")
    )];
    detail.extend(unmet_conditions(cluster));
    Readiness {
        ready: u32::from(done),
        total: 1,
        done,
        detail: detail.join("; "),
    }
}

/// A count of a status, 0 when missing.
fn count0(v: &Value) -> u32 {
    count(v).unwrap_or(0)
}

/// Whether the object's controller has seen its latest spec.
fn observed(object: &Value) -> bool {
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
    object["status"]["observedGeneration"]
        .as_i64()
        .unwrap_or(-1)
        >= generation
}

/// EKS Anywhere's DaemonSet readiness (the controller has seen the latest spec and every
/// scheduled pod is ready), and the rollout finished (every pod of the current template).
pub fn daemonset_readiness(ds: &Value) -> Readiness {
    let st = &ds["status"];
    let desired = count0(&st["desiredNumberScheduled"]);
    let ready = count0(&st["numberReady"]);
    let updated = count0(&st["updatedNumberScheduled"]);
    let seen = observed(ds);
    let done = seen && desired > 0 && ready == desired && updated == desired;
    let mut detail = format!("{ready} ready, {updated} up to date of {desired} scheduled");
    if !seen {
        detail.push_str("; the controller has not seen the latest spec yet");
    }
    Readiness {
        ready,
        total: desired,
        done,
        detail,
    }
}

/// EKS Anywhere's Deployment readiness: the latest spec seen and every replica ready.
pub fn deployment_readiness(d: &Value) -> Readiness {
    let st = &d["status"];
    let want = d["spec"]["replicas"]
        .as_u64()
        .map_or(1, |_| count0(&d["spec"]["replicas"]));
    let ready = count0(&st["readyReplicas"]);
    let updated = count0(&st["updatedReplicas"]);
    let seen = observed(d);
    let done = seen && ready >= want && updated >= want;
    let mut detail = format!("{ready} ready, {updated} up to date of {want}");
    if !seen {
        detail.push_str("; the controller has not seen the latest spec yet");
    }
    Readiness {
        ready: ready.min(want),
        total: want,
        done,
        detail,
    }
}

/// What to wait for.
pub struct Target<'a> {
    /// What the events say is waited for.
    pub stage: Stage,
    /// The object's `apiVersion`.
    pub api_version: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// Its name.
    pub name: &'a str,
    /// The condition waited for, for the timeout's error.
    pub condition: &'a str,
    /// How readiness is read from the object.
    pub judge: fn(&Value) -> Readiness,
    /// How long to wait; `None` waits forever.
    pub timeout: Option<Duration>,
}

impl<'a> Target<'a> {
    /// The KubeadmControlPlane `name` with every machine ready and up to date: what create,
    /// upgrade and a certificate renewal wait for.
    pub fn control_plane(
        api_version: &'a str,
        name: &'a str,
        timeout: Option<Duration>,
    ) -> Target<'a> {
        Target {
            stage: Stage::ControlPlane,
            api_version,
            kind: "KubeadmControlPlane",
            name,
            condition: "every control-plane machine ready and up to date",
            judge: replicas_readiness,
            timeout,
        }
    }
}

/// `1h5m` style ([`snow_api::short_duration`]).
pub fn human(d: Duration) -> String {
    snow_api::short_duration(d)
}

/// Polls `target` in `eksa-system` until it is ready, reporting each change.
pub async fn wait_for(
    mgmt: &Management,
    target: Target<'_>,
    poll: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), KubeError> {
    wait_in(mgmt, NAMESPACE, target, poll, on_event).await
}

/// Polls `target` in `namespace` of the cluster `client` talks to until it is ready.
pub async fn wait_in(
    client: &Management,
    namespace: &str,
    target: Target<'_>,
    poll: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), KubeError> {
    let start = Instant::now();
    let object = format!("{} {namespace}/{}", target.kind, target.name);
    let mut last: Option<Readiness> = None;
    loop {
        let now = client
            .get(
                target.api_version,
                target.kind,
                Some(namespace),
                target.name,
            )
            .await?
            .map(|o| (target.judge)(&o))
            .unwrap_or(Readiness {
                ready: 0,
                total: 0,
                done: false,
                detail: "the object does not exist".into(),
            });
        if now.done {
            on_event(Event::Ready {
                stage: target.stage,
                ready: now.ready,
                total: now.total,
            });
            return Ok(());
        }
        if last.as_ref() != Some(&now) {
            on_event(Event::Waiting {
                stage: target.stage.clone(),
                ready: now.ready,
                total: now.total,
                detail: now.detail.clone(),
            });
        }
        if let Some(limit) = target.timeout
            && start.elapsed() >= limit
        {
            return Err(KubeError::Timeout {
                object,
                condition: target.condition.to_owned(),
                detail: now.detail,
                after: human(limit),
            });
        }
        last = Some(now);
        tokio::time::sleep(poll).await;
    }
}

/// Deletes the Cluster and waits until it and every machine labelled with it are gone.
pub async fn delete_cluster(
    mgmt: &Management,
    contract: Contract,
    cluster: &str,
    opts: &WaitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), KubeError> {
    let core = contract.api_version("cluster.x-k8s.io");
    on_event(Event::Step(format!(
        "Deleting Cluster {NAMESPACE}/{cluster}; Cluster API deletes its machines"
    )));
    mgmt.delete(&core, "Cluster", Some(NAMESPACE), cluster)
        .await?;
    let start = Instant::now();
    let selector = cluster_selector(cluster);
    let mut last = None;
    loop {
        let present = mgmt
            .get(&core, "Cluster", Some(NAMESPACE), cluster)
            .await?
            .is_some();
        let machines = mgmt
            .list(&core, "Machine", Some(NAMESPACE), Some(&selector))
            .await?
            .len();
        if !present && machines == 0 {
            on_event(Event::Ready {
                stage: Stage::Deletion,
                ready: 0,
                total: 0,
            });
            return Ok(());
        }
        let left = u32::try_from(machines).unwrap_or(u32::MAX) + u32::from(present);
        if last != Some(left) {
            on_event(Event::Waiting {
                stage: Stage::Deletion,
                ready: left,
                total: left,
                detail: format!("{machines} machine(s)"),
            });
            last = Some(left);
        }
        if let Some(limit) = opts.timeouts.deletion
            && start.elapsed() >= limit
        {
            return Err(KubeError::Timeout {
                object: format!("Cluster {NAMESPACE}/{cluster}"),
                condition: "the Cluster and its machines are deleted".into(),
                detail: format!(
                    "{machines} machine(s) left; the Cluster {}",
                    if present { "still exists" } else { "is gone" }
                ),
                after: human(limit),
            });
        }
        tokio::time::sleep(opts.poll).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_control_plane_is_ready_when_every_replica_is_ready_and_up_to_date() {
        let kcp = |ready: u32, up: u32, current: u32, observed: i64| {
            json!({
                "metadata": {"generation": 2},
                "spec": {"replicas": 3},
                "status": {"readyReplicas": ready, "upToDateReplicas": up, "replicas": current,
                           "observedGeneration": observed,
                           "conditions": [{"type": "Available", "status": "True"}]}
            })
        };
        assert!(replicas_readiness(&kcp(3, 3, 3, 2)).done);
        assert!(!replicas_readiness(&kcp(2, 3, 3, 2)).done);
        // A rollout: the old machine still runs, or not every machine is new yet.
        assert!(!replicas_readiness(&kcp(3, 3, 4, 2)).done);
        assert!(!replicas_readiness(&kcp(3, 2, 3, 2)).done);
        // The controller has not seen generation 2.
        let stale = replicas_readiness(&kcp(3, 3, 3, 1));
        assert!(!stale.done);
        assert!(stale.detail.contains("not seen the latest spec"));
    }

    #[test]
    fn a_false_condition_holds_readiness_and_is_named() {
        let md = json!({
            "metadata": {"generation": 1},
            "spec": {"replicas": 1},
            "status": {"readyReplicas": 1, "updatedReplicas": 1, "replicas": 1, "observedGeneration": 1,
                       "conditions": [{"type": "Ready", "status": "False", "reason": "WaitingForInfrastructure", "message": "AWSSnowMachine not ready"}]}
        });
        let r = replicas_readiness(&md);
        assert!(!r.done);
        assert!(
            r.detail
                .contains("Ready=False (WaitingForInfrastructure: AWSSnowMachine not ready)"),
            "{}",
            r.detail
        );
    }

    #[test]
    fn negative_polarity_conditions_are_healthy_when_false_on_v1beta2_only() {
        let conditions = json!([
            {"type": "Available", "status": "True"},
            {"type": "ScalingUp", "status": "False", "reason": "NotScalingUp"},
            {"type": "RollingOut", "status": "False"},
            {"type": "Deleting", "status": "False"},
            {"type": "Paused", "status": "False"},
            {"type": "Remediating", "status": "False"},
            {"type": "ScalingDown", "status": "True", "reason": "ScalingDown", "message": "Scaling down from 4 to 3 replicas"},
            {"type": "MachinesReady", "status": "False", "reason": "NotReady", "message": "Node NotReady"},
        ]);
        let kcp = |api: &str| {
            json!({"apiVersion": api, "metadata": {"generation": 1}, "spec": {"replicas": 3},
            "status": {"readyReplicas": 3, "upToDateReplicas": 3, "replicas": 4, "observedGeneration": 1, "conditions": conditions}})
        };
        let v2 = replicas_readiness(&kcp("controlplane.cluster.x-k8s.io/v1beta2"));
        assert_eq!(
            v2.detail,
            "3 ready, 3 up to date, 4 running of 3; ScalingDown=True (ScalingDown: Scaling down from 4 to 3 replicas); MachinesReady=False (NotReady: Node NotReady)"
        );
        // v1beta1 has only positive conditions: every non-True one is named.
        let v1 = replicas_readiness(&kcp("controlplane.cluster.x-k8s.io/v1beta1"));
        assert!(
            v1.detail.contains("ScalingUp=False (NotScalingUp)"),
            "{}",
            v1.detail
        );
        assert!(!v1.detail.contains("ScalingDown=True"), "{}", v1.detail);
        assert!(troubling("cluster.x-k8s.io/v1beta2", "Paused", "True"));
        assert!(!troubling("cluster.x-k8s.io/v1beta2", "Paused", "False"));
        assert!(troubling("cluster.x-k8s.io/v1beta1", "Paused", "False"));
    }

    #[test]
    fn initialized_and_cluster_readiness_read_either_contract() {
        assert!(initialized_readiness(&json!({"status": {"initialized": true}})).done);
        assert!(
            initialized_readiness(
                &json!({"status": {"initialization": {"controlPlaneInitialized": true}}})
            )
            .done
        );
        assert!(!initialized_readiness(&json!({"status": {}})).done);
        let cluster = |api: &str, kind: &str| json!({"apiVersion": api, "status": {"conditions": [{"type": kind, "status": "True"}]}});
        assert!(cluster_readiness(&cluster("cluster.x-k8s.io/v1beta2", "Available")).done);
        assert!(!cluster_readiness(&cluster("cluster.x-k8s.io/v1beta2", "Ready")).done);
        assert!(cluster_readiness(&cluster("cluster.x-k8s.io/v1beta1", "Ready")).done);
    }

    #[test]
    fn etcd_is_ready_on_its_flag() {
        let etcd = |ready: bool| json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"ready": ready, "replicas": 3, "observedGeneration": 1}});
        assert!(etcd_readiness(&etcd(true)).done);
        assert_eq!(etcd_readiness(&etcd(true)).ready, 3);
        assert!(!etcd_readiness(&etcd(false)).done);
        assert_eq!(etcd_readiness(&etcd(false)).ready, 2);
    }

    #[test]
    fn a_daemonset_is_ready_when_every_scheduled_agent_is_ready_and_current() {
        let ds = |desired: u32, ready: u32, updated: u32, observed: i64| {
            json!({"metadata": {"generation": 2}, "status": {"desiredNumberScheduled": desired,
                "numberReady": ready, "updatedNumberScheduled": updated, "observedGeneration": observed}})
        };
        assert!(daemonset_readiness(&ds(3, 3, 3, 2)).done);
        assert!(!daemonset_readiness(&ds(3, 2, 3, 2)).done);
        assert!(!daemonset_readiness(&ds(3, 3, 2, 2)).done, "rolling");
        assert!(!daemonset_readiness(&ds(3, 3, 3, 1)).done, "not observed");
        assert!(!daemonset_readiness(&ds(0, 0, 0, 2)).done, "no node yet");
        assert_eq!(
            daemonset_readiness(&ds(3, 2, 3, 2)).detail,
            "2 ready, 3 up to date of 3 scheduled"
        );
    }

    #[test]
    fn a_deployment_is_ready_when_every_replica_is() {
        let d = |ready: u32| json!({"metadata": {"generation": 1}, "spec": {"replicas": 2}, "status": {"readyReplicas": ready, "updatedReplicas": 2, "observedGeneration": 1}});
        assert!(deployment_readiness(&d(2)).done);
        assert!(!deployment_readiness(&d(1)).done);
    }
}
