//! What an upgrade of a cluster changes, rendered against its live objects: the template names
//! and every object rendered with them ([`plan_against`]), the worker groups the spec dropped
//! ([`removed_groups`]) and the rolls a new version makes without renaming a template
//! ([`version_rolls`]). `create`, `upgrade` and `reconcile` make these changes; `plan` only
//! shows them, so they live here, apart from both.

use super::{ClusterRequest, LifecycleError, live::Live};
use capi_render::{
    RenderedObject,
    upgrade::{self as plan, Change, UpgradePlan},
};
use serde_json::{Value, json};

/// The template names against the live objects, and every object rendered with them.
pub(crate) fn plan_against(
    req: &ClusterRequest<'_>,
    live: &Live,
) -> Result<UpgradePlan, LifecycleError> {
    plan::plan(req.spec, req.release, &req.render_options(), &live.existing)
        .map_err(LifecycleError::UpgradePlan)
}

/// The worker groups on the cluster that the spec no longer has, as `(group, MachineDeployment)`.
pub(crate) fn removed_groups(
    live: &Live,
    cluster: &str,
    objects: &[RenderedObject],
) -> Vec<(String, Value)> {
    let prefix = format!("{cluster}-");
    live.deployments
        .iter()
        .filter_map(|md| {
            let name = md["metadata"]["name"].as_str()?;
            let wanted = objects
                .iter()
                .any(|o| o.kind == "MachineDeployment" && o.name == name);
            let group = name.strip_prefix(&prefix).unwrap_or(name);
            (!wanted).then(|| (group.to_owned(), md.clone()))
        })
        .collect()
}

/// The rolls a new Kubernetes version makes without renaming a template: the KubeadmControlPlane's
/// and each MachineDeployment's `version` (Cluster API replaces their machines when it changes),
/// and a changed EtcdadmCluster spec (the etcdadm controller replaces the etcd machines).
pub(crate) fn version_rolls(live: &Live, rendered: &[Value]) -> Vec<Change> {
    let find = |kind: &str, name: &str| {
        rendered
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    };
    let mut rolls = Vec::new();
    let mut roll = |kind: &str, old: &Value, new: &Value, path: &str, machines: String| {
        let fields = capi_render::diff::field_changes(new, old)
            .into_iter()
            .map(|mut f| {
                f.path = format!("{path}.{}", f.path)
                    .trim_end_matches(".")
                    .to_owned();
                f
            })
            .collect::<Vec<_>>();
        if fields.is_empty() {
            return;
        }
        rolls.push(Change {
            object: kind.to_owned(),
            replaces: None,
            reason: format!(
                "{} changed: {machines} will roll",
                fields
                    .iter()
                    .map(|f| f.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            fields,
        });
    };
    if let Some(kcp) = &live.control_plane {
        let name = kcp["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(new) = find("KubeadmControlPlane", name) {
            roll(
                &format!("KubeadmControlPlane/{name}"),
                &json!({"version": kcp["spec"]["version"]}),
                &json!({"version": new["spec"]["version"]}),
                "spec",
                "the control plane machines".into(),
            );
        }
    }
    for md in &live.deployments {
        let name = md["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(new) = find("MachineDeployment", name) {
            roll(
                &format!("MachineDeployment/{name}"),
                &json!({"version": md["spec"]["template"]["spec"]["version"]}),
                &json!({"version": new["spec"]["template"]["spec"]["version"]}),
                "spec.template.spec",
                format!("the machines of {name}"),
            );
        }
    }
    if let Some(etcd) = &live.etcd {
        let name = etcd["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(new) = find("EtcdadmCluster", name) {
            roll(
                &format!("EtcdadmCluster/{name}"),
                &etcd["spec"]["etcdadmConfigSpec"],
                &new["spec"]["etcdadmConfigSpec"],
                "spec.etcdadmConfigSpec",
                "the etcd machines".into(),
            );
        }
    }
    rolls
}
