//! `renew certificates`: every control-plane machine replaced, so kubeadm issues each one new
//! certificates (a replaced machine joins with certificates valid a year from then).
//!
//! Cluster API rolls a KubeadmControlPlane once `spec.rolloutAfter` (v1beta1) /
//! `spec.rollout.after` (v1beta2) has passed, replacing each Machine created before that time,
//! one at a time. The EtcdadmCluster has no such field, so external etcd machines are renewed
//! only by a change of their template (`upgrade cluster`); [`Renewed::external_etcd`] says when
//! the cluster has them.

use crate::{
    Event, LifecycleError, Management, WaitOptions,
    live::cluster_selector,
    live::find_cluster,
    wait::{self, Target},
};
use capi_render::NAMESPACE;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use snow_kube::KubeError;
use std::time::Instant;

/// The field manager of the rollout time: not snowctl's own, so a later `upgrade cluster`
/// (server-side apply as snowctl) neither removes nor fights over it.
pub const RENEW_FIELD_MANAGER: &str = "snowctl-renew-certificates";

/// How `renew_certificates` waits.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenewOptions {
    /// Timeouts (the control-plane one bounds the whole roll) and poll interval.
    pub wait: WaitOptions,
}

/// What a renewal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renewed {
    /// The rollout time set on the KubeadmControlPlane (RFC 3339).
    pub rollout_after: String,
    /// The control-plane Machines before, by name.
    pub replaced: Vec<String>,
    /// The control-plane Machines after, by name (each made after `rollout_after`).
    pub machines: Vec<String>,
    /// Whether the cluster has external etcd, whose machines this did not roll.
    pub external_etcd: bool,
}

/// The control-plane Machines of `cluster` (name, creationTimestamp).
async fn control_plane_machines(
    mgmt: &Management,
    core: &str,
    cluster: &str,
) -> Result<Vec<(String, String)>, LifecycleError> {
    let selector = format!(
        "{},cluster.x-k8s.io/control-plane",
        cluster_selector(cluster)
    );
    let mut machines: Vec<(String, String)> = mgmt
        .list(core, "Machine", Some(NAMESPACE), Some(&selector))
        .await?
        .iter()
        .filter(|m| m["metadata"]["deletionTimestamp"].is_null())
        .map(|m| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&m["metadata"]["name"]),
                text(&m["metadata"]["creationTimestamp"]),
            )
        })
        .collect();
    machines.sort();
    Ok(machines)
}

/// The next whole second: every Machine there is now was created (whole seconds) before it,
/// and Cluster API acts on it within a second.
fn next_whole_second(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second().saturating_add(1)).unwrap_or(now)
}

/// Rolls the control plane of `cluster`: sets the KubeadmControlPlane's rollout time to the
/// next second, then waits, as an upgrade does, until the KubeadmControlPlane is ready with
/// every replica up to date and no control-plane Machine created before that time is left.
/// Refuses an imported cluster and a cluster that is not there.
pub async fn renew_certificates(
    mgmt: &Management,
    cluster: &str,
    opts: &RenewOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Renewed, LifecycleError> {
    let (contract, found) = find_cluster(mgmt, cluster, None).await?;
    let Some(live) = found else {
        return Err(LifecycleError::NotFound {
            what: format!("cluster {cluster}"),
        });
    };
    crate::standing::refuse_live(Some(&live), cluster, "renew certificates")?;
    let cp_api = contract.api_version("controlplane.cluster.x-k8s.io");
    let core = contract.api_version("cluster.x-k8s.io");
    let Some(kcp) = mgmt
        .get(&cp_api, "KubeadmControlPlane", Some(NAMESPACE), cluster)
        .await?
    else {
        return Err(LifecycleError::NotFound {
            what: format!("KubeadmControlPlane {NAMESPACE}/{cluster}"),
        });
    };
    let external_etcd = live["spec"]["managedExternalEtcdRef"].is_object();
    let before = control_plane_machines(mgmt, &core, cluster).await?;
    let after = next_whole_second(Timestamp::now());
    let after_text = after.to_string();
    let patch = match contract {
        capi_render::Contract::V1Beta1 => json!({"spec": {"rolloutAfter": after_text}}),
        capi_render::Contract::V1Beta2 => json!({"spec": {"rollout": {"after": after_text}}}),
    };
    mgmt.patch_merge(&kcp, &patch, RENEW_FIELD_MANAGER).await?;
    on_event(Event::Step(format!(
        "Rolling the control plane: every machine created before {after_text} is replaced"
    )));
    let start = Instant::now();
    let limit = opts.wait.timeouts.control_plane;
    loop {
        wait::wait_for(
            mgmt,
            Target::control_plane(
                &cp_api,
                cluster,
                limit.map(|l| l.saturating_sub(start.elapsed())),
            ),
            opts.wait.poll,
            on_event,
        )
        .await?;
        let now = control_plane_machines(mgmt, &core, cluster).await?;
        let old: Vec<&str> = now
            .iter()
            .filter(|(_, created)| {
                created
                    .parse::<Timestamp>()
                    .ok()
                    .is_none_or(|created| created < after)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        if old.is_empty() && !now.is_empty() {
            return Ok(Renewed {
                rollout_after: after_text,
                replaced: before.into_iter().map(|(name, _)| name).collect(),
                machines: now.into_iter().map(|(name, _)| name).collect(),
                external_etcd,
            });
        }
        if let Some(limit) = limit
            && start.elapsed() >= limit
        {
            return Err(KubeError::Timeout {
                object: format!("KubeadmControlPlane {NAMESPACE}/{cluster}"),
                condition: format!("every control-plane machine created after {after_text}"),
                detail: format!("still there: {}", old.join(", ")),
                after: wait::human(limit),
            }
            .into());
        }
        tokio::time::sleep(opts.wait.poll).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rollout_time_is_the_next_whole_second() {
        let now: Timestamp = "2026-11-27T06:10:00.250Z".parse().unwrap();
        assert_eq!(next_whole_second(now).to_string(), "2026-11-27T06:10:01Z");
        let whole: Timestamp = "2026-11-27T06:10:00Z".parse().unwrap();
        assert_eq!(next_whole_second(whole).to_string(), "2026-11-27T06:10:01Z");
    }
}
