//! `upgrade plan cluster`: each component's version now (read from the management cluster, its
//! clusterctl inventory and the workload cluster) and after an upgrade to the spec (rendered from
//! the catalog), and which machines roll and why, field by field. It reads only.

use super::{
    ClusterRequest, Event, LifecycleError, Management, apply,
    changes::{plan_against, removed_groups, version_rolls},
    init::{components::STACK, inventory},
    live::{Live, published_kubeconfig},
    providers::check_management,
};
use capi_render::{upgrade::Change, versions::component_versions};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

/// One component's versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentPlan {
    /// Which component.
    pub component: String,
    /// The version now; `None` when nothing says it.
    pub current: Option<String>,
    /// The version after the upgrade; `None` when the catalog or spec does not say it.
    pub new: Option<String>,
    /// Whether the two differ.
    pub changes: bool,
}

/// What `upgrade cluster` would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPlan {
    /// The cluster.
    pub cluster: String,
    /// Each component, the cluster's first (Kubernetes, etcd, CoreDNS, kube-vip, node AMI and
    /// OS, Cilium), then the management components (providers need `upgrade
    /// management-components`: `upgrade cluster` does not change them).
    pub components: Vec<ComponentPlan>,
    /// The templates that get a new name, the machines they roll and the fields that changed.
    pub rolls: Vec<Change>,
    /// Worker groups the spec no longer has.
    pub removed_groups: Vec<String>,
}

fn row(component: &str, current: Option<String>, new: Option<String>) -> ComponentPlan {
    ComponentPlan {
        component: component.to_owned(),
        changes: current != new,
        current,
        new,
    }
}

/// The version of Cilium on the workload cluster: its agent DaemonSet's first image's tag.
/// `None` when the workload cluster's kubeconfig is not published or Cilium is not there.
async fn cilium_now(mgmt: &Management, cluster: &str) -> Result<Option<String>, LifecycleError> {
    let Some(kubeconfig) = published_kubeconfig(mgmt, cluster).await? else {
        return Ok(None);
    };
    let workload = mgmt.workload(cluster, &kubeconfig).await?;
    let (daemonset, _) = crate::cni::install::installed(&workload, cluster).await?;
    Ok(daemonset.and_then(|ds| {
        let image = ds["spec"]["template"]["spec"]["containers"][0]["image"].as_str()?;
        snow_api::release::split_tag(image).1.map(str::to_owned)
    }))
}

/// Plans the upgrade of `req`'s cluster on `mgmt` and writes nothing.
pub async fn upgrade_plan(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<ClusterPlan, LifecycleError> {
    let cluster = req.spec.name().to_owned();
    let contract = check_management(mgmt, req, on_event).await?;
    let live = Live::read(mgmt, &cluster, contract).await?;
    if live.cluster.is_none() {
        return Err(LifecycleError::NotFound {
            what: format!("cluster {cluster}"),
        });
    }
    let plan = plan_against(req, &live)?;
    let rendered = apply::parse(&plan.objects)?;
    let mut now: Vec<Value> = live
        .control_plane
        .iter()
        .chain(&live.etcd)
        .cloned()
        .collect();
    now.extend(live.existing.objects().cloned());
    let mut components: Vec<ComponentPlan> = component_versions(&now)
        .into_iter()
        .zip(component_versions(&rendered))
        .map(|(old, new)| row(&old.component, old.version, new.version))
        .collect();
    let bundle = req.release.bundle;
    components.push(row(
        "Cilium",
        cilium_now(mgmt, &cluster).await?,
        bundle.cilium.as_ref().map(|c| c.version.clone()),
    ));
    let installed = inventory::installed(mgmt).await?;
    let assets = snow_api::release::management_components(bundle).unwrap_or_default();
    for component in STACK {
        let label = component.label();
        let Some(current) = installed.iter().find(|i| i.is(component)) else {
            continue;
        };
        let new = assets
            .iter()
            .find(|a| a.label == label)
            .map(|a| a.release_version().to_owned());
        components.push(row(&label, Some(current.version.clone()), new));
    }
    let mut rolls = plan.changes;
    rolls.extend(version_rolls(&live, &rendered));
    Ok(ClusterPlan {
        removed_groups: removed_groups(&live, &cluster, &plan.objects)
            .into_iter()
            .map(|(group, _)| group)
            .collect(),
        cluster,
        components,
        rolls,
    })
}

impl ClusterPlan {
    /// The plan as a table of components, then the machines that roll with each changed field.
    pub fn to_text(&self) -> String {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let width = |f: &dyn Fn(&ComponentPlan) -> usize, title: &str| {
            self.components
                .iter()
                .map(f)
                .max()
                .unwrap_or(0)
                .max(title.len())
        };
        let w0 = width(&|c| c.component.len(), "COMPONENT");
        let w1 = width(&|c| shown(&c.current).len(), "CURRENT");
        let w2 = width(&|c| shown(&c.new).len(), "NEW");
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:w0$}  {:w1$}  {:w2$}  CHANGES",
            "COMPONENT", "CURRENT", "NEW"
        );
        for c in &self.components {
            let changes = if c.changes { "yes" } else { "no" };
            let _ = writeln!(
                out,
                "{:w0$}  {:w1$}  {:w2$}  {changes}",
                c.component,
                shown(&c.current),
                shown(&c.new)
            );
        }
        out.push_str(
            "(the providers change only with an upgrade of the management components, not with a cluster upgrade)\n\n",
        );
        if self.rolls.is_empty() && self.removed_groups.is_empty() {
            out.push_str("No machine rolls.\n");
        }
        for roll in &self.rolls {
            let replaces = (roll.replaces.as_deref())
                .map(|r| format!(" (replaces {r})"))
                .unwrap_or_default();
            let _ = writeln!(out, "{}{replaces}: {}", roll.object, roll.reason);
            for field in &roll.fields {
                let _ = writeln!(out, "  {field}");
            }
        }
        for group in &self.removed_groups {
            let _ = writeln!(
                out,
                "worker group {group} is no longer in the spec: its machines will be removed"
            );
        }
        out
    }
}
