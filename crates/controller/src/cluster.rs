//! The cluster part (EKS Anywhere's ClusterReconciler): from a declared EKS Anywhere Cluster to
//! its Cluster API objects, level-based and idempotent. Each pass reads what is there, writes only what differs, and
//! says in the Cluster's status (and in Events, on changes) what it found.

use super::{Context, DeviceSource, FINALIZER, Outcome, sources};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use snow_api::ValidSpec;
use snow_api::redact::redact_userinfo;
use snow_kube::{KubeError, Management};
use snow_lifecycle::{
    ClusterRequest, LifecycleError, SecretInputs,
    cni::{CniPlan, HelmRun},
    locate,
    reconcile::{self, DeletePass},
};
use snow_validate::plan::SKIP_IP_CHECK_ANNOTATION;
use std::{net::SocketAddr, time::Duration};

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

/// Whether the Cluster's status says a pass found it Ready, at its current generation, with
/// nothing left to do: a Snow cluster, not paused nor being deleted, carrying the finalizer.
pub(crate) fn settled(cluster: &Value) -> bool {
    let status = &cluster["status"];
    let meta = &cluster["metadata"];
    cluster["spec"]["datacenterRef"]["kind"] == "SnowDatacenterConfig"
        && !snow_api::admission::is_paused(cluster)
        && meta["deletionTimestamp"].is_null()
        && meta["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|v| v == FINALIZER))
        && status["failureReason"].is_null()
        && !meta["generation"].is_null()
        && status["observedGeneration"] == meta["generation"]
        && status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
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
    if snow_api::admission::is_paused(cluster) {
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

/// Builds and checks the spec, waits for valid machine configs, then makes one
/// [`reconcile::pass`]; `Ok(Err(..))` is a failure to report, `Err` an API error.
async fn converge<S: DeviceSource>(
    ctx: &Context<S>,
    cluster: &Value,
    out: &mut Outcome,
    observed: &mut Observed,
) -> Result<Result<(), Failure>, LifecycleError> {
    let mgmt = &ctx.mgmt;
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
    let spec = match checked_spec(&text) {
        Ok(spec) => spec,
        Err(failure) => return Ok(Err(failure)),
    };
    // EKS Anywhere's webhook: on the kubectl/GitOps path no key is generated, so a machine config
    // must name one.
    if let Some((name, _)) = (spec.machine_configs.iter()).find(|(_, m)| {
        m.spec
            .ssh_key_name
            .as_deref()
            .is_none_or(|k| k.trim().is_empty())
    }) {
        let why = format!(
            "SnowMachineConfig {name}: SshKeyName must not be empty (the controller imports no default key: name a key pair that is on every device)"
        );
        return Ok(Err(fail("SpecInvalid", why, None)));
    }
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
    let release = match ctx.inputs.resolve(&spec, None) {
        Ok(release) => release,
        Err(e) => return Ok(Err(fail("SpecInvalid", e.to_string(), None))),
    };
    if let Some(failure) = endpoint_taken(mgmt, cluster, &spec).await? {
        return Ok(Err(failure));
    }
    if let Some(failure) = machine_configs_pending(&sources.objects) {
        return Ok(Err(failure));
    }
    let request = ClusterRequest {
        spec: &spec,
        spec_text: &text,
        release: &release,
        secrets: Some(SecretInputs {
            credentials: &credentials,
            ca_bundle: &bundle,
        }),
        // No default key and no mirror login here: this path renders sshKeyName as declared.
        default_ssh_key_name: None,
        registry_credentials: None,
    };
    let pass = match reconcile::pass(mgmt, &request, &ctx.manager).await {
        Ok(pass) => pass,
        // A cluster of this name was imported observe-only: said on the Cluster, never taken over.
        Err(e @ LifecycleError::Imported { .. }) => {
            return Ok(Err(fail("ImportedCluster", e.to_string(), None)));
        }
        Err(e) => return Err(e),
    };
    out.writes += pass.writes;
    for object in &pass.applied {
        tracing::info!(cluster = spec.name(), %object, "applied");
    }
    for object in &pass.removed {
        tracing::info!(cluster = spec.name(), %object, "removed a dropped worker group's object");
    }
    observed.control_plane = Some((pass.control_plane.ready, pass.control_plane.detail.clone()));
    if pass.etcd_rolling {
        return Ok(Err(fail(
            "EtcdUpgradeInProgress",
            "external etcd is rolling; the control plane waits",
            Some(Duration::from_secs(10)),
        )));
    }
    observed.workers = Some((pass.workers.ready, pass.workers.detail.clone()));
    // The CNI, as EKS Anywhere's ReconcileCNI: without it no Node becomes Ready. Where the
    // manifest comes from is resolved as a create resolves it (`CniSource::plan`).
    let manifest = match ctx.cni.plan(&spec, &release) {
        Err(e) => Err(("CniRenderFailed", e.to_string())),
        Ok(CniPlan::Stored) => stored_cni_manifest(mgmt, &spec, &release).await?,
        Ok(CniPlan::Manifest(manifest)) => Ok(manifest),
        Ok(CniPlan::Helm(run)) => helm_cni_manifest(ctx, run)
            .await
            .map_err(|why| ("CniRenderFailed", why)),
    };
    let manifest = match manifest {
        Ok(manifest) => manifest,
        Err((reason, why)) => {
            return Ok(Err(fail(reason, why, Some(Duration::from_secs(60)))));
        }
    };
    let skip = spec.cilium().skip_upgrade;
    let mut note = |e: snow_kube::Event| tracing::info!(cluster = spec.name(), "{e}");
    let cni = match reconcile::cni_pass(mgmt, spec.name(), &manifest, skip, &mut note).await {
        Ok(cni) => cni,
        // Whoever wrote the Secret chose what is in it: said on the Cluster, never used.
        Err(e @ LifecycleError::Kube(KubeError::SecretKubeconfig { .. })) => {
            let retry = Some(Duration::from_secs(60));
            return Ok(Err(fail("KubeconfigRefused", e.to_string(), retry)));
        }
        Err(e) => return Err(e),
    };
    if !cni.ready {
        observed.workers = Some((false, cni.detail));
        out.requeue_after = Some(Duration::from_secs(5));
        return Ok(Ok(()));
    }
    if !(pass.control_plane.ready && pass.workers.ready) {
        // Soon after writes, at the resync pace once the cluster only has to come up.
        out.requeue_after = Some(Duration::from_secs(if pass.writes == 0 { 30 } else { 5 }));
    }
    Ok(Ok(()))
}

/// The Cilium manifest `helm template` renders for this cluster (helm in the controller's
/// image), of the bundle's chart pulled or read from this cluster's chart file; the mirror's
/// login read from the management cluster when the chart is pulled through an authenticating
/// mirror and none was given.
async fn helm_cni_manifest<S: DeviceSource>(
    ctx: &Context<S>,
    mut run: Box<HelmRun>,
) -> Result<snow_lifecycle::CniManifest, String> {
    if run.login_wanted().is_some() {
        run.options.login = Some(mirror_login(&ctx.mgmt).await?);
    }
    let rendered = run.render().await.map_err(|e| e.to_string())?;
    Ok(rendered.manifest)
}

/// The manifest stored on the management cluster for this cluster's Cilium key (one GET), with
/// EKS Anywhere's NetworkPolicies appended; `Err` is the status reason and message.
async fn stored_cni_manifest(
    mgmt: &Management,
    spec: &ValidSpec,
    release: &snow_api::release::ClusterRelease<'_>,
) -> Result<Result<snow_lifecycle::CniManifest, (&'static str, String)>, LifecycleError> {
    use capi_render::stored_cilium::{NAMESPACE, StoredCilium};
    use snow_lifecycle::cni::stored::{Lookup, load};
    let stored = match StoredCilium::for_cluster(spec, release) {
        Ok(stored) => stored,
        Err(e) => return Ok(Err(("CniRenderFailed", e.to_string()))),
    };
    // A status message has no CLI in between to translate it: it names the command that stores
    // the manifest, and no flags.
    let store = "store it with snowctl's `store cilium` command, given this cluster's spec file and this management cluster, where helm or the offline archive is at hand; it is looked for again every minute";
    let mut manifest = match load(mgmt, &stored).await? {
        Lookup::Found(manifest) => manifest,
        Lookup::Missing => {
            return Ok(Err((
                "CiliumManifestNotStored",
                format!(
                    "no Cilium manifest is stored for this cluster's Cilium settings (chart {}, Kubernetes {}; ConfigMap {NAMESPACE}/{}): {store}",
                    stored.chart,
                    stored.kube_version,
                    stored.name()
                ),
            )));
        }
        Lookup::Unusable(e) => {
            return Ok(Err(("CiliumManifestNotStored", format!("{e}: {store}"))));
        }
    };
    if let Some(extra) = capi_render::cilium::network_policies(spec) {
        capi_render::cilium::append_documents(&mut manifest, &extra);
    }
    Ok(snow_lifecycle::CniManifest::parse(&manifest).map_err(|e| {
        (
            "CiliumManifestNotStored",
            format!(
                "the Cilium manifest stored in ConfigMap {NAMESPACE}/{} cannot be used ({e}): {store}",
                stored.name()
            ),
        )
    }))
}

/// The registry mirror's login for an authenticating mirror, from the Secret snowctl's create
/// applies (`eksa-system/registry-credentials`, `username` and `password`), as EKS Anywhere's
/// controller reads it.
async fn mirror_login(
    mgmt: &snow_kube::Management,
) -> Result<snow_credentials::RegistryCredentials, String> {
    use base64::Engine as _;
    use snow_api::names::SYSTEM_NAMESPACE as NAMESPACE;
    use snow_credentials::registry::SECRET_NAME;
    let where_ = format!("the Secret {NAMESPACE}/{SECRET_NAME} (the registry mirror's login)");
    let secret = mgmt
        .get("v1", "Secret", Some(NAMESPACE), SECRET_NAME)
        .await
        .map_err(|e| format!("reading {where_}: {e}"))?
        .ok_or_else(|| {
            format!("{where_} is missing: create it with the keys username and password")
        })?;
    let field = |key: &str| {
        let data = secret["data"][key].as_str().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD.decode(data);
        match bytes.ok().and_then(|b| String::from_utf8(b).ok()) {
            Some(value) if !value.is_empty() => Ok(value),
            _ => Err(format!("{where_} has no {key}")),
        }
    };
    let username = field("username")?;
    let password = snow_credentials::SecretString::new(field("password")?);
    Ok(snow_credentials::RegistryCredentials::new(
        username, password,
    ))
}

/// The spec of the declared objects, checked as `snowctl validate` checks a file.
fn checked_spec(text: &str) -> Result<ValidSpec, Failure> {
    let report = snow_api::check(text).map_err(|e| fail("SpecInvalid", e.to_string(), None))?;
    report.into_valid().map_err(|report| {
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
        fail("SpecInvalid", errors.join("; "), None)
    })
}

/// A new cluster's endpoint must be free (skipped with the annotation, as the CLI flag skips it).
async fn endpoint_taken(
    mgmt: &Management,
    cluster: &Value,
    spec: &ValidSpec,
) -> Result<Option<Failure>, LifecycleError> {
    if cluster["metadata"]["annotations"][SKIP_IP_CHECK_ANNOTATION] == "true" {
        return Ok(None);
    }
    let Some(ip) = spec
        .cluster
        .spec
        .control_plane_configuration
        .as_ref()
        .and_then(|c| c.endpoint.as_ref())
        .and_then(|e| e.host.parse::<std::net::IpAddr>().ok())
    else {
        return Ok(None);
    };
    if locate(mgmt, spec.name()).await?.cluster.is_some()
        || !snow_validate::preflight::endpoint_in_use(
            SocketAddr::new(ip, 80),
            Duration::from_millis(500),
        )
        .await
    {
        return Ok(None);
    }
    Ok(Some(fail(
        "UnavailableControlPlaneIP",
        format!("the control-plane endpoint {ip} is already in use"),
        Some(Duration::from_secs(60)),
    )))
}

/// The machine-config part must have passed every SnowMachineConfig of the cluster.
fn machine_configs_pending(objects: &[Value]) -> Option<Failure> {
    let config = objects
        .iter()
        .filter(|o| o["kind"] == "SnowMachineConfig")
        .find(|c| c["status"]["specValid"] != true)?;
    Some(match config["status"]["failureMessage"].as_str() {
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
    })
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
    match reconcile::delete_pass(&ctx.mgmt, name_of(cluster)).await? {
        DeletePass::Deleting { started } => {
            if started {
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
        DeletePass::Removed(removed) => {
            out.writes += u32::try_from(removed.removed.len()).unwrap_or(u32::MAX) + 1;
        }
    }
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
        "message": redact_userinfo(message),
        "type": kind,
        "source": {"component": manager},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    mgmt.apply_as(&event, manager).await?;
    Ok(())
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
        c["message"] = json!(redact_userinfo(detail));
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
        Some((r, m)) => (json!(r), json!(redact_userinfo(m))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_never_carries_a_url_password() {
        let detail = "cannot reach https://admin:hunter2@10.0.0.1:6443/version";
        let written = condition("Ready", false, detail, &Value::Null);
        let message = written["message"].as_str().unwrap();
        assert_eq!(
            message,
            "cannot reach https://<redacted>@10.0.0.1:6443/version"
        );
    }
}
