//! The cluster part (facts §7): from a declared EKS Anywhere Cluster to its Cluster API objects,
//! level-based and idempotent. Each pass reads what is there, writes only what differs, and
//! says in the Cluster's status (and in Events, on changes) what it found.

use super::{Context, DeviceSource, FINALIZER, Outcome, PAUSED_ANNOTATION, applied, sources};
use crate::lifecycle::{
    Inventory, LifecycleError, Management,
    apply::{self, object_ref},
    delete::{cleanup, find_cluster},
    live::Live,
    upgrade::{PAUSED, etcd_changes, group_leftovers},
    wait::{etcd_readiness, replicas_readiness},
};
use capi_render::{Contract, NAMESPACE, RenderOptions, SecretInputs};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use snow_validate::plan::SKIP_IP_CHECK_ANNOTATION;
use std::{collections::BTreeMap, net::SocketAddr, time::Duration};

/// Why a pass stopped short; it becomes `status.failureReason`.
struct Failure {
    reason: &'static str,
    message: String,
    retry: Option<Duration>,
}

fn fail(reason: &'static str, message: impl Into<String>, retry: Option<Duration>) -> Failure {
    Failure {
        reason,
        message: message.into(),
        retry,
    }
}

/// What the pass found, for the status.
#[derive(Default)]
struct Observed {
    failure: Option<(String, String)>,
    control_plane: Option<(bool, String)>,
    workers: Option<(bool, String)>,
}

fn name_of(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// Reconciles one EKS Anywhere Cluster.
pub async fn reconcile<S: DeviceSource>(
    ctx: &Context<S>,
    cluster: &Value,
) -> Result<Outcome, LifecycleError> {
    let mut out = Outcome::default();
    if cluster["spec"]["datacenterRef"]["kind"] != "SnowDatacenterConfig" {
        return Ok(out);
    }
    if cluster["metadata"]["annotations"][PAUSED_ANNOTATION] == "true" {
        tracing::debug!(cluster = name_of(cluster), "paused");
        return Ok(out);
    }
    if !cluster["metadata"]["deletionTimestamp"].is_null() {
        return delete_step(ctx, cluster).await;
    }
    let has_finalizer = cluster["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|v| v == FINALIZER));
    if !has_finalizer {
        let mut finalizers: Vec<Value> = cluster["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        finalizers.push(json!(FINALIZER));
        ctx.mgmt
            .patch_merge(
                cluster,
                &json!({"metadata": {"finalizers": finalizers}}),
                &ctx.manager,
            )
            .await?;
        out.writes += 1;
    }
    let mut observed = Observed::default();
    match converge(ctx, cluster, &mut out, &mut observed).await? {
        Ok(()) => {}
        Err(failure) => {
            out.requeue_after = failure.retry;
            observed.failure = Some((failure.reason.to_owned(), failure.message));
        }
    }
    write_status(&ctx.mgmt, &ctx.manager, cluster, &observed, &mut out).await?;
    Ok(out)
}

/// Builds, checks, renders and applies; `Ok(Err(..))` is a failure to report, `Err` an API error.
async fn converge<S: DeviceSource>(
    ctx: &Context<S>,
    cluster: &Value,
    out: &mut Outcome,
    observed: &mut Observed,
) -> Result<Result<(), Failure>, LifecycleError> {
    let mgmt = &ctx.mgmt;
    let name = name_of(cluster).to_owned();
    let sources = sources::Sources::read(mgmt, cluster).await?;
    if !sources.missing.is_empty() {
        return Ok(Err(fail(
            "MissingObjects",
            format!(
                "not found in the Cluster's namespace: {}",
                sources.missing.join(", ")
            ),
            Some(Duration::from_secs(30)),
        )));
    }
    let text = sources.spec_text();
    let report = match snow_api::check(&text) {
        Ok(report) => report,
        Err(e) => return Ok(Err(fail("SpecInvalid", e.to_string(), None))),
    };
    let errors: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.is_error())
        .map(|f| {
            let at = [f.object.as_deref(), f.field.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            format!("{at}: {}", f.message)
        })
        .collect();
    let Some(spec) = report.spec.filter(|_| errors.is_empty()) else {
        return Ok(Err(fail("SpecInvalid", errors.join("; "), None)));
    };
    let (credentials, bundle) = match sources.credentials() {
        Ok(c) => c,
        Err(why) => {
            return Ok(Err(fail(
                "MissingCredentials",
                why,
                Some(Duration::from_secs(60)),
            )));
        }
    };
    let opts = RenderOptions {
        contract: None,
        secrets: Some(SecretInputs {
            credentials: &credentials,
            ca_bundle: &bundle,
        }),
        names: None,
    };
    let contract = match capi_render::contract_for(&spec, &ctx.inputs, None) {
        Ok(c) => c,
        Err(e) => return Ok(Err(fail("SpecInvalid", e.to_string(), None))),
    };
    let live = Live::read(mgmt, &name, contract).await?;

    // A new cluster's endpoint must be free (skipped with the annotation, as the CLI flag).
    if live.cluster.is_none()
        && cluster["metadata"]["annotations"][SKIP_IP_CHECK_ANNOTATION] != "true"
        && let Some(ip) = spec
            .cluster
            .spec
            .control_plane_configuration
            .as_ref()
            .and_then(|c| c.endpoint.as_ref())
            .and_then(|e| e.host.parse::<std::net::IpAddr>().ok())
        && snow_validate::preflight::endpoint_in_use(
            SocketAddr::new(ip, 80),
            Duration::from_millis(500),
        )
        .await
    {
        return Ok(Err(fail(
            "UnavailableControlPlaneIP",
            format!("the control-plane endpoint {ip} is already in use"),
            Some(Duration::from_secs(60)),
        )));
    }

    // The machine-config part must have passed every config.
    for config in sources
        .objects
        .iter()
        .filter(|o| o["kind"] == "SnowMachineConfig")
    {
        let status = &config["status"];
        if status["specValid"] != true {
            return Ok(Err(match status["failureMessage"].as_str() {
                Some(msg) if !msg.is_empty() => fail(
                    "MachineConfigInvalid",
                    format!("Invalid {} SnowMachineConfig: {msg}", name_of(config)),
                    None,
                ),
                _ => fail(
                    "MachineConfigPending",
                    format!(
                        "SnowMachineConfig {} has not been validated yet",
                        name_of(config)
                    ),
                    Some(Duration::from_secs(5)),
                ),
            }));
        }
    }

    let plan = match capi_render::upgrade::plan(&spec, &ctx.inputs, &opts, &live.existing) {
        Ok(plan) => plan,
        Err(e) => return Ok(Err(fail("RenderFailed", e.to_string(), None))),
    };
    let objects = apply::parse(&plan.objects)?;
    let mut inventory = Inventory::load(mgmt, &name)
        .await?
        .unwrap_or_else(|| Inventory {
            cluster: name.clone(),
            contract: String::new(),
            spec: String::new(),
            objects: Default::default(),
        });
    inventory.contract = contract.as_str().to_owned();
    inventory.spec = text.clone();
    inventory.objects.extend(objects.iter().map(object_ref));

    // External etcd rolls alone, with the control plane paused (facts §7 step 5).
    let kcp_paused = live
        .control_plane
        .as_ref()
        .is_some_and(|k| k["metadata"]["annotations"][PAUSED] == "true");
    if etcd_changes(&live, &objects) || (kcp_paused && live.etcd.is_some()) {
        if !kcp_paused && let Some(kcp) = &live.control_plane {
            mgmt.patch_merge(
                kcp,
                &json!({"metadata": {"annotations": {PAUSED: "true"}}}),
                &ctx.manager,
            )
            .await?;
            out.writes += 1;
        }
        let etcd_template = objects
            .iter()
            .find(|o| o["kind"] == "EtcdadmCluster")
            .and_then(|e| e["spec"]["infrastructureTemplate"]["name"].as_str())
            .map(str::to_owned);
        let etcd_objects: Vec<Value> = objects
            .iter()
            .filter(|o| {
                o["kind"] == "EtcdadmCluster"
                    || (o["kind"] == "AWSSnowMachineTemplate"
                        && o["metadata"]["name"].as_str() == etcd_template.as_deref())
            })
            .cloned()
            .collect();
        let wrote = apply_changed(mgmt, &ctx.manager, &live, &etcd_objects).await?;
        out.writes += wrote;
        let etcd_ready = wrote == 0 && live.etcd.as_ref().is_some_and(|e| etcd_readiness(e).done);
        if !etcd_ready {
            observed.control_plane = Some((false, "paused while external etcd rolls".into()));
            return Ok(Err(fail(
                "EtcdUpgradeInProgress",
                "external etcd is rolling; the control plane waits",
                Some(Duration::from_secs(10)),
            )));
        }
    }

    let mut all = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        inventory.to_object(),
    ];
    all.extend(objects.iter().cloned());
    let wrote = apply_changed(mgmt, &ctx.manager, &live, &all).await?;
    out.writes += wrote;
    if kcp_paused && let Some(kcp) = &live.control_plane {
        mgmt.patch_merge(
            kcp,
            &json!({"metadata": {"annotations": {PAUSED: null}}}),
            &ctx.manager,
        )
        .await?;
        out.writes += 1;
    }

    // Worker groups the spec no longer has.
    for md in &live.deployments {
        let md_name = name_of(md);
        if objects
            .iter()
            .any(|o| o["kind"] == "MachineDeployment" && name_of(o) == md_name)
        {
            continue;
        }
        let deployment = crate::lifecycle::ObjectRef {
            api_version: contract.api_version("cluster.x-k8s.io"),
            kind: "MachineDeployment".into(),
            name: md_name.to_owned(),
        };
        for object in std::iter::once(deployment).chain(group_leftovers(contract, md)) {
            if mgmt.delete_object(&object).await? {
                out.writes += 1;
                tracing::info!(cluster = %name, object = %object, "removed a dropped worker group's object");
            }
        }
    }

    // Readiness, from what was there before this pass's writes.
    let settled = wrote == 0;
    let cp = live.control_plane.as_ref().map(replicas_readiness);
    observed.control_plane = Some(match &cp {
        Some(r) if r.done && settled => (true, format!("{}/{} ready", r.ready, r.total)),
        Some(r) => (false, r.detail.clone()),
        None => (false, "the control plane is being created".into()),
    });
    let mut workers_ready = true;
    let mut worker_detail = Vec::new();
    for md in objects.iter().filter(|o| o["kind"] == "MachineDeployment") {
        let md_name = name_of(md);
        match live.deployments.iter().find(|l| name_of(l) == md_name) {
            Some(l) => {
                let r = replicas_readiness(l);
                if !r.done {
                    workers_ready = false;
                    worker_detail.push(format!("{md_name}: {}", r.detail));
                }
            }
            None => {
                workers_ready = false;
                worker_detail.push(format!("{md_name}: being created"));
            }
        }
    }
    workers_ready &= settled;
    observed.workers = Some((
        workers_ready,
        if worker_detail.is_empty() {
            "every worker group is ready".into()
        } else {
            worker_detail.join("; ")
        },
    ));
    if !(workers_ready && observed.control_plane.as_ref().is_some_and(|c| c.0)) {
        out.requeue_after = Some(if settled {
            Duration::from_secs(30)
        } else {
            Duration::from_secs(5)
        });
    }
    Ok(Ok(()))
}

/// Applies the objects that differ from what is there; returns how many were written.
async fn apply_changed(
    mgmt: &Management,
    manager: &str,
    live: &Live,
    objects: &[Value],
) -> Result<u32, LifecycleError> {
    let known: BTreeMap<(String, String), &Value> = live
        .control_plane
        .iter()
        .chain(&live.etcd)
        .chain(&live.deployments)
        .chain(&live.cluster)
        .map(|o| {
            (
                (
                    o["kind"].as_str().unwrap_or_default().to_owned(),
                    name_of(o).to_owned(),
                ),
                o,
            )
        })
        .collect();
    let mut writes = 0;
    for object in objects {
        let r = object_ref(object);
        let current = match known.get(&(r.kind.clone(), r.name.clone())) {
            Some(o) => Some((*o).clone()),
            None => {
                let ns = object["metadata"]["namespace"].as_str();
                mgmt.get(&r.api_version, &r.kind, ns, &r.name).await?
            }
        };
        if current
            .as_ref()
            .is_some_and(|c| applied::up_to_date(object, c, manager))
        {
            continue;
        }
        mgmt.apply_as(object, manager).await?;
        writes += 1;
        tracing::info!(kind = %r.kind, name = %r.name, "applied");
    }
    Ok(writes)
}

/// Deletion through the finalizer: delete the CAPI Cluster, wait for it (requeue), remove what
/// was created, then the finalizer.
async fn delete_step<S: DeviceSource>(
    ctx: &Context<S>,
    cluster: &Value,
) -> Result<Outcome, LifecycleError> {
    let mut out = Outcome::default();
    let finalizers: Vec<Value> = cluster["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == FINALIZER) {
        return Ok(out);
    }
    let name = name_of(cluster);
    let inventory = Inventory::load(&ctx.mgmt, name).await?;
    let (contract, live) = find_cluster(
        &ctx.mgmt,
        name,
        inventory.as_ref().map(|i| i.contract.as_str()),
    )
    .await?;
    if let Some(capi) = live {
        if capi["metadata"]["deletionTimestamp"].is_null() {
            let core = contract.api_version("cluster.x-k8s.io");
            ctx.mgmt
                .delete(&core, "Cluster", Some(NAMESPACE), name)
                .await?;
            out.writes += 1;
            emit(
                &ctx.mgmt,
                &ctx.manager,
                cluster,
                "Normal",
                "Deleting",
                "deleting the Cluster API cluster and its machines",
            )
            .await?;
            out.writes += 1;
        }
        out.requeue_after = Some(Duration::from_secs(5));
        return Ok(out);
    }
    let contract = if inventory.as_ref().is_some_and(|i| i.contract == "v1beta1") {
        Contract::V1Beta1
    } else {
        contract
    };
    let removed = cleanup(&ctx.mgmt, name, contract, inventory.as_ref()).await?;
    out.writes += u32::try_from(removed.removed.len()).unwrap_or(u32::MAX) + 1;
    let rest: Vec<Value> = finalizers.into_iter().filter(|f| f != FINALIZER).collect();
    ctx.mgmt
        .patch_merge(
            cluster,
            &json!({"metadata": {"finalizers": rest}}),
            &ctx.manager,
        )
        .await?;
    out.writes += 1;
    Ok(out)
}

/// A Kubernetes Event about the Cluster (only on changes, so a steady state writes none).
async fn emit(
    mgmt: &Management,
    manager: &str,
    cluster: &Value,
    kind: &str,
    reason: &str,
    message: &str,
) -> Result<(), LifecycleError> {
    let name = name_of(cluster);
    let ns = cluster["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default");
    let now = Timestamp::now().to_string();
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": format!("{name}.{}", reason.to_ascii_lowercase()), "namespace": ns},
        "involvedObject": {
            "apiVersion": cluster["apiVersion"], "kind": "Cluster", "name": name,
            "namespace": ns, "uid": cluster["metadata"]["uid"],
        },
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": manager},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    mgmt.apply_as(&event, manager).await.map(|_| ())
}

fn condition(kind: &str, ok: bool, detail: &str, previous: &Value) -> Value {
    let status = if ok { "True" } else { "False" };
    let before = previous["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind));
    let time = match before {
        Some(b) if b["status"] == status => b["lastTransitionTime"].clone(),
        _ => json!(Timestamp::now().to_string()),
    };
    let mut c = json!({"type": kind, "status": status, "lastTransitionTime": time});
    if !ok {
        c["reason"] = json!(format!("{}NotReady", kind.trim_end_matches("Ready")));
        c["severity"] = json!("Info");
        c["message"] = json!(detail);
    }
    c
}

/// Writes the status when it differs from what is there, and an Event when the failure or the
/// readiness changed.
async fn write_status(
    mgmt: &Management,
    manager: &str,
    cluster: &Value,
    observed: &Observed,
    out: &mut Outcome,
) -> Result<(), LifecycleError> {
    let previous = &cluster["status"];
    let generation = cluster["metadata"]["generation"].clone();
    let mut conditions = Vec::new();
    if let Some((ok, detail)) = &observed.control_plane {
        conditions.push(condition("ControlPlaneReady", *ok, detail, previous));
    }
    if let Some((ok, detail)) = &observed.workers {
        conditions.push(condition("WorkersReady", *ok, detail, previous));
    }
    let ready = observed.failure.is_none()
        && observed.control_plane.as_ref().is_some_and(|c| c.0)
        && observed.workers.as_ref().is_some_and(|w| w.0);
    let ready_detail = match &observed.failure {
        Some((reason, message)) => format!("{reason}: {message}"),
        None => "waiting for the control plane and workers".into(),
    };
    conditions.push(condition("Ready", ready, &ready_detail, previous));
    let (reason, message) = match &observed.failure {
        Some((r, m)) => (json!(r), json!(m)),
        None => (Value::Null, Value::Null),
    };
    let status = json!({
        "conditions": conditions,
        "failureReason": reason,
        "failureMessage": message,
        "observedGeneration": generation,
    });
    let strip = |cs: &Value| -> Vec<Value> {
        cs.as_array()
            .into_iter()
            .flatten()
            .map(|c| json!([c["type"], c["status"], c["reason"], c["message"]]))
            .collect()
    };
    let same = strip(&previous["conditions"]) == strip(&status["conditions"])
        && previous["failureReason"] == status["failureReason"]
        && previous["failureMessage"] == status["failureMessage"]
        && previous["observedGeneration"] == status["observedGeneration"];
    if same {
        return Ok(());
    }
    mgmt.patch_status(cluster, &status, manager).await?;
    out.writes += 1;
    let was_ready = previous["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    if previous["failureReason"] != status["failureReason"]
        && let Some((reason, message)) = &observed.failure
    {
        tracing::warn!(cluster = name_of(cluster), %reason, %message, "reconcile failed");
        emit(mgmt, manager, cluster, "Warning", reason, message).await?;
        out.writes += 1;
    }
    if ready && !was_ready {
        tracing::info!(cluster = name_of(cluster), "ready");
        emit(
            mgmt,
            manager,
            cluster,
            "Normal",
            "Ready",
            "the control plane and every worker group are ready",
        )
        .await?;
        out.writes += 1;
    }
    Ok(())
}
