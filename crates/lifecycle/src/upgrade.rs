//! `upgrade`: refuse what cannot change, rename changed templates (EKS Anywhere's template-name bumping), apply, remove
//! the worker groups the spec dropped, and wait for the rollout.
//!
//! With external etcd, a changed etcd cluster rolls first while the control plane is paused
//! (as EKS Anywhere's Snow reconciler does), so the API servers never point at an etcd that is being replaced.

use super::{
    ClusterRequest, Event, Inventory, LifecycleError, Management, ObjectRef, PAUSED, WaitOptions,
    apply,
    changes::{plan_against, removed_groups, version_rolls},
    create::{self, converge, wait_ready},
    immutable,
    live::{Live, deployment_templates},
    providers::check_management,
    wait,
};
use capi_render::{
    Contract, NAMESPACE, RenderedObject,
    contract::INFRA_API_VERSION,
    upgrade::{Change, derivative},
};
use serde_json::{Value, json};
use snow_kube::KubeError;
use std::time::Instant;

/// How [`upgrade`] runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpgradeOptions {
    /// Per-stage timeouts and the poll interval.
    pub wait: WaitOptions,
    /// Say what would change, apply nothing.
    pub dry_run: bool,
    /// The rendered Cilium manifest: applied again when the workload cluster runs other images
    /// (unless the spec's `skipUpgrade`). Required unless `dry_run`
    /// ([`LifecycleError::NoCniManifest`], before anything is applied).
    pub cni: Option<crate::cni::CniManifest>,
    /// Back the cluster up first ([`crate::backup_before_upgrade`]) into a new directory under
    /// `<this>/<cluster>/`, after the refusals and before anything is applied; `None` skips it.
    pub backup: Option<std::path::PathBuf>,
}

/// What an upgrade did, or would do (`dry_run`).
#[derive(Debug, Clone)]
pub struct UpgradeOutcome {
    /// The cluster.
    pub cluster: String,
    /// Template renames and version changes, and the machines they roll.
    pub changes: Vec<Change>,
    /// Every object of the cluster as applied (or to be applied).
    pub objects: Vec<RenderedObject>,
    /// Worker groups whose MachineDeployment (and templates) are removed.
    pub removed_groups: Vec<String>,
    /// Whether anything was applied.
    pub applied: bool,
    /// The backup written before anything was applied.
    pub backup: Option<crate::Backup>,
}

impl UpgradeOutcome {
    /// The plan as lines: each template change with the machines it rolls, each removed group.
    pub fn plan_lines(&self) -> Vec<String> {
        let mut lines = capi_render::upgrade::change_lines(&self.changes);
        for group in &self.removed_groups {
            lines.push(format!(
                "upgrade: worker group {group} is no longer in the spec: its MachineDeployment, machines and templates will be removed"
            ));
        }
        lines
    }
}

/// Deletes an object and waits until it is gone.
async fn delete_and_wait(
    mgmt: &Management,
    object: &ObjectRef,
    timeout: Option<std::time::Duration>,
    opts: &WaitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    if !mgmt.delete_object(object).await? {
        return Ok(());
    }
    on_event(Event::Deleted {
        object: object.to_string(),
    });
    let start = Instant::now();
    while mgmt
        .get(
            &object.api_version,
            &object.kind,
            Some(NAMESPACE),
            &object.name,
        )
        .await?
        .is_some()
    {
        if let Some(limit) = timeout
            && start.elapsed() >= limit
        {
            return Err(KubeError::Timeout {
                object: format!("{} {NAMESPACE}/{}", object.kind, object.name),
                condition: "the object is deleted".into(),
                detail: "it still exists (its machines are being deleted)".into(),
                after: wait::human(limit),
            }
            .into());
        }
        tokio::time::sleep(opts.poll).await;
    }
    Ok(())
}

/// What a dropped worker group leaves once its MachineDeployment is gone: its health check and
/// its two templates.
pub(crate) fn group_leftovers(contract: Contract, md: &Value) -> Vec<ObjectRef> {
    let name = md["metadata"]["name"].as_str().unwrap_or_default();
    let (machine_template, config_template) = deployment_templates(md);
    let mut objects = vec![ObjectRef {
        api_version: contract.api_version("cluster.x-k8s.io"),
        kind: "MachineHealthCheck".into(),
        name: format!("{name}-worker-unhealthy"),
    }];
    objects.extend(machine_template.map(|t| ObjectRef {
        api_version: INFRA_API_VERSION.into(),
        kind: "AWSSnowMachineTemplate".into(),
        name: t.to_owned(),
    }));
    objects.extend(config_template.map(|t| ObjectRef {
        api_version: contract.api_version("bootstrap.cluster.x-k8s.io"),
        kind: "KubeadmConfigTemplate".into(),
        name: t.to_owned(),
    }));
    objects
}

/// Removes a dropped worker group: its MachineDeployment (waiting for its machines), then its
/// templates and health check.
async fn remove_group(
    mgmt: &Management,
    contract: Contract,
    md: &Value,
    opts: &WaitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    let core = contract.api_version("cluster.x-k8s.io");
    let name = md["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let machines = md["spec"]["replicas"].as_u64().unwrap_or(1).max(1);
    let timeout = opts
        .timeouts
        .per_machine
        .map(|t| t.saturating_mul(u32::try_from(machines).unwrap_or(u32::MAX)));
    delete_and_wait(
        mgmt,
        &ObjectRef {
            api_version: core.clone(),
            kind: "MachineDeployment".into(),
            name: name.clone(),
        },
        timeout,
        opts,
        on_event,
    )
    .await?;
    // Its machines go with it (garbage collection); the templates stay until they are gone.
    let selector = format!("cluster.x-k8s.io/deployment-name={name}");
    let start = Instant::now();
    loop {
        let left = mgmt
            .list(&core, "Machine", Some(NAMESPACE), Some(&selector))
            .await?
            .len();
        if left == 0 {
            break;
        }
        if let Some(limit) = timeout
            && start.elapsed() >= limit
        {
            return Err(KubeError::Timeout {
                object: format!("MachineDeployment {NAMESPACE}/{name}"),
                condition: "its machines are deleted".into(),
                detail: format!("{left} machine(s) left"),
                after: wait::human(limit),
            }
            .into());
        }
        tokio::time::sleep(opts.poll).await;
    }
    for object in &group_leftovers(contract, md) {
        if mgmt.delete_object(object).await? {
            on_event(Event::Deleted {
                object: object.to_string(),
            });
        }
    }
    Ok(())
}

/// Whether the rendered EtcdadmCluster differs from the live one.
pub(crate) fn etcd_changes(live: &Live, objects: &[Value]) -> bool {
    let (Some(old), Some(new)) = (
        &live.etcd,
        objects.iter().find(|o| o["kind"] == "EtcdadmCluster"),
    ) else {
        return false;
    };
    !derivative(&new["spec"], &old["spec"])
}

/// Rolls external etcd alone, with the control plane paused: the etcd template and cluster
/// first, a wait for etcd, and the pause lifted when the rest is applied.
async fn roll_etcd_first(
    mgmt: &Management,
    contract: Contract,
    cluster: &str,
    objects: &[Value],
    opts: &WaitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    let kcp = json!({
        "apiVersion": contract.api_version("controlplane.cluster.x-k8s.io"),
        "kind": "KubeadmControlPlane",
        "metadata": {"name": cluster, "namespace": NAMESPACE},
    });
    on_event(Event::Step(
        "External etcd changes: pausing the control plane while etcd rolls".into(),
    ));
    mgmt.patch_merge(
        &kcp,
        &json!({"metadata": {"annotations": {PAUSED: "true"}}}),
        super::FIELD_MANAGER,
    )
    .await?;
    let etcd_template = objects
        .iter()
        .find(|o| o["kind"] == "EtcdadmCluster")
        .and_then(|e| e["spec"]["infrastructureTemplate"]["name"].as_str());
    for object in objects.iter().filter(|o| {
        o["kind"] == "EtcdadmCluster"
            || (o["kind"] == "AWSSnowMachineTemplate"
                && o["metadata"]["name"].as_str() == etcd_template)
    }) {
        mgmt.apply(object).await?;
        on_event(Event::Applied {
            object: apply::object_ref(object).to_string(),
        });
    }
    create::wait_for_etcd(mgmt, cluster, opts, on_event).await
}

/// Lifts the pause [`roll_etcd_first`] set.
async fn unpause(
    mgmt: &Management,
    contract: Contract,
    cluster: &str,
) -> Result<(), LifecycleError> {
    let kcp = json!({
        "apiVersion": contract.api_version("controlplane.cluster.x-k8s.io"),
        "kind": "KubeadmControlPlane",
        "metadata": {"name": cluster, "namespace": NAMESPACE},
    });
    mgmt.patch_merge(
        &kcp,
        &json!({"metadata": {"annotations": {PAUSED: null}}}),
        super::FIELD_MANAGER,
    )
    .await?;
    Ok(())
}

/// Upgrades the cluster of `req` on the management cluster (or, with `dry_run`, says what it
/// would do and applies nothing).
pub async fn upgrade(
    mgmt: &Management,
    req: &ClusterRequest<'_>,
    opts: &UpgradeOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<UpgradeOutcome, LifecycleError> {
    let (dry_run, cni, backup) = (opts.dry_run, opts.cni.as_ref(), opts.backup.as_deref());
    let opts = &opts.wait;
    let cni = match (cni, dry_run) {
        (Some(manifest), _) => Some(create::CniStep {
            manifest,
            skip_upgrade: req.spec.cilium().skip_upgrade,
        }),
        (None, true) => None,
        (None, false) => return Err(LifecycleError::NoCniManifest),
    };
    let cluster = req.spec.name().to_owned();
    let contract = check_management(mgmt, req, on_event).await?;
    let external_etcd = req.spec.cluster.spec.external_etcd_configuration.is_some();
    let live = Live::read(mgmt, &cluster, contract).await?;
    crate::standing::refuse_live(live.cluster.as_ref(), &cluster, "upgrade cluster")?;
    if live.cluster.is_none() {
        return Err(LifecycleError::Rejected {
            cluster: cluster.clone(),
            findings: vec![
                snow_api::Finding::error(
                    "upgrade.missing",
                    format!("cluster {cluster} is not on the management cluster ({NAMESPACE})"),
                )
                .object(format!("Cluster/{cluster}"))
                .hint("create it first, or check that this is the management cluster that has it"),
            ],
        });
    }
    let mut findings = Vec::new();
    if let Some(old) = Inventory::load(mgmt, &cluster)
        .await?
        .and_then(|inv| snow_api::check(&inv.spec).ok())
        .and_then(|report| report.spec)
    {
        findings.extend(snow_api::immutable::immutable_changes(&old, req.spec));
    }
    let more = immutable::live_changes(&live, req.spec, &findings);
    findings.extend(more);
    if !findings.is_empty() {
        return Err(LifecycleError::Rejected { cluster, findings });
    }
    let plan = plan_against(req, &live)?;
    let removed = removed_groups(&live, &cluster, &plan.objects);
    let objects = apply::parse(&plan.objects)?;
    // A new Kubernetes version rolls machines without renaming a template: said as well.
    let mut changes = plan.changes.clone();
    changes.extend(version_rolls(&live, &objects));
    let mut outcome = UpgradeOutcome {
        cluster: cluster.clone(),
        changes,
        objects: plan.objects.clone(),
        removed_groups: removed.iter().map(|(g, _)| g.clone()).collect(),
        applied: false,
        backup: None,
    };
    // The plan is said before anything is applied, so a failed rollout still shows it.
    for line in outcome.plan_lines() {
        on_event(Event::Note(line));
    }
    let Some(cni) = cni.filter(|_| !dry_run) else {
        return Ok(outcome);
    };
    if let Some(root) = backup {
        let moving = crate::MoveOptions::default();
        let written = crate::backup_before_upgrade(mgmt, &cluster, root, &moving, on_event).await?;
        on_event(Event::Note(format!(
            "Backup of cluster {cluster} written to {} ({} objects)",
            written.dir.display(),
            written.moved.objects
        )));
        outcome.backup = Some(written);
    }
    let etcd_first = external_etcd && etcd_changes(&live, &objects);
    // A pause left by an interrupted etcd-first upgrade is lifted too.
    let was_paused = live
        .control_plane
        .as_ref()
        .is_some_and(|k| k["metadata"]["annotations"][PAUSED] == "true");
    if etcd_first {
        roll_etcd_first(mgmt, contract, &cluster, &objects, opts, on_event).await?;
    }
    converge(mgmt, req, contract, &plan.objects, on_event).await?;
    if etcd_first || was_paused {
        unpause(mgmt, contract, &cluster).await?;
        on_event(Event::Note("Control plane resumed".into()));
    }
    outcome.applied = true;
    for (group, md) in &removed {
        on_event(Event::Step(format!(
            "Removing worker group {group} (no longer in the spec)"
        )));
        remove_group(mgmt, contract, md, opts, on_event).await?;
    }
    wait_ready(mgmt, req.spec, contract, opts, cni, on_event).await?;
    Ok(outcome)
}
