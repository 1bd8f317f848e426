//! The simulated kustomize-controller: one Kustomization built with the real `kubectl
//! kustomize` and applied server-side through the stand-in's own write path.

use super::{
    KUSTOMIZE_API_VERSION, KUSTOMIZE_MANAGER, REQUESTED_AT, Running, Sim, condition, text,
    write_status,
};
use crate::Shared;
use crate::http;
use crate::registry::{ResourceType, split_api_version};
use crate::status::ApiError;
use crate::store::{Key, Store};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The labels kustomize-controller puts on every object it applies.
pub(crate) const NAME_LABEL: &str = "kustomize.toolkit.fluxcd.io/name";
/// See [`NAME_LABEL`].
pub(crate) const NAMESPACE_LABEL: &str = "kustomize.toolkit.fluxcd.io/namespace";
const RECONCILE: &str = "kustomize.toolkit.fluxcd.io/reconcile";
const SSA: &str = "kustomize.toolkit.fluxcd.io/ssa";
const PRUNE: &str = "kustomize.toolkit.fluxcd.io/prune";
/// kustomize-controller's `--requeue-dependency` default, in its messages.
const REQUEUE_DEPENDENCY: &str = "30s";
/// How long the first stage's CRDs may take to be Established (ssa's default wait timeout).
const WAIT: Duration = Duration::from_secs(60);

const ARTIFACT_FAILED: &str = "ArtifactFailed";
const BUILD_FAILED: &str = "BuildFailed";
const RECONCILIATION_FAILED: &str = "ReconciliationFailed";
const PRUNE_FAILED: &str = "PruneFailed";

/// The source a Kustomization names: `(namespace, name)` of a GitRepository, or why not.
fn source_ref(key: &Key, kustomization: &Value) -> Result<(String, String), String> {
    let source = &kustomization["spec"]["sourceRef"];
    let kind = text(source, &["kind"]);
    let name = text(source, &["name"]).to_owned();
    let namespace = match text(source, &["namespace"]) {
        "" => key.2.clone(),
        ns => ns.to_owned(),
    };
    if kind != "GitRepository" {
        return Err(format!(
            "source '{kind}/{namespace}/{name}': the stand-in's kustomize-controller reads GitRepository sources only"
        ));
    }
    Ok((namespace, name))
}

fn git_repository(store: &Store, namespace: &str, name: &str) -> Option<Value> {
    store
        .select("source.toolkit.fluxcd.io", "gitrepositories", |r| {
            text(r, &["metadata", "namespace"]) == namespace
                && text(r, &["metadata", "name"]) == name
        })
        .into_iter()
        .next()
        .map(|(_, r)| r)
}

/// The revision of the Kustomization's source's artifact ("" when there is none): a change of
/// it is a reason to reconcile.
pub(super) fn source_revision(store: &Store, key: &Key, kustomization: &Value) -> String {
    let Ok((namespace, name)) = source_ref(key, kustomization) else {
        return String::new();
    };
    git_repository(store, &namespace, &name)
        .map(|r| text(&r, &["status", "artifact", "revision"]).to_owned())
        .unwrap_or_default()
}

/// `root` joined with `path` without leaving it (`..` stops at the root), as Flux's
/// `securejoin` does.
fn secure_join(root: &Path, path: &str) -> PathBuf {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.iter().fold(root.to_owned(), |p, part| p.join(part))
}

/// Copies the artifact's tree (directories and regular files; links are not followed).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

fn kustomization_file(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// What Flux's generator lists under `base` (relative paths, sorted): every directory holding a
/// kustomization file (not descended into) and every `.yaml`/`.yml` file of Kubernetes objects.
fn scan(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let relative = |p: &Path| {
        p.strip_prefix(base)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    for path in entries {
        if path.is_dir() {
            if kustomization_file(&path).is_some() {
                out.push(relative(&path));
            } else {
                scan(base, &path, out)?;
            }
            continue;
        }
        let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if !yaml {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| {
            format!(
                "failed to decode Kubernetes YAML from {}: {e}",
                path.display()
            )
        })?;
        if docs
            .iter()
            .filter(|d| !d.is_null())
            .any(|d| d["kind"].as_str().is_none() || d["apiVersion"].as_str().is_none())
        {
            return Err(format!(
                "failed to decode Kubernetes YAML from {}: missing Resource metadata",
                path.display()
            ));
        }
        out.push(relative(&path));
    }
    Ok(())
}

/// Writes the kustomization file Flux would build from: the one there (with `targetNamespace`
/// as its `namespace`), else one generated.
fn generate(dir: &Path, target_namespace: &str) -> Result<(), String> {
    let (path, mut kustomization) = match kustomization_file(dir) {
        Some(path) => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let value: Value = serde_saphyr::from_str(&text)
                .map_err(|e| format!("failed to decode {}: {e}", path.display()))?;
            if target_namespace.is_empty() {
                return Ok(());
            }
            (path, value)
        }
        None => {
            let mut resources = Vec::new();
            scan(dir, dir, &mut resources)?;
            (
                dir.join("kustomization.yaml"),
                json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}),
            )
        }
    };
    if !target_namespace.is_empty() {
        kustomization["namespace"] = json!(target_namespace);
    }
    // JSON is YAML: kustomize reads it as written.
    std::fs::write(&path, kustomization.to_string()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Why a build failed: the reason and message kustomize-controller gives, and whether the
/// revision counts as attempted.
#[derive(Debug)]
pub(crate) struct BuildError {
    reason: &'static str,
    message: String,
    attempted: bool,
}

/// Builds `spec.path` of the artifact tree `artifact` as kustomize-controller does: the tree
/// copied to a temporary directory, the path checked, the kustomization generated, `kubectl
/// kustomize` run; the objects built (blocking: runs kubectl).
pub(crate) fn build(
    artifact: &Path,
    path: &str,
    target_namespace: &str,
    timeout: Duration,
) -> Result<Vec<Value>, BuildError> {
    let fail = |reason, message: String, attempted| BuildError {
        reason,
        message,
        attempted,
    };
    let tmp = tempfile::Builder::new()
        .prefix("kustomization-")
        .tempdir()
        .map_err(|e| fail("DirCreationFailed", format!("tmp dir error: {e}"), false))?;
    copy_tree(artifact, tmp.path()).map_err(|e| fail(ARTIFACT_FAILED, e.to_string(), false))?;
    let dir = secure_join(tmp.path(), path);
    if let Err(e) = std::fs::metadata(&dir) {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
            _ => e.to_string(),
        };
        return Err(fail(
            ARTIFACT_FAILED,
            format!(
                "kustomization path not found: stat {}: {why}",
                dir.display()
            ),
            false,
        ));
    }
    generate(&dir, target_namespace).map_err(|m| fail(BUILD_FAILED, m, true))?;
    let args: Vec<OsString> = vec![
        "kustomize".into(),
        "--load-restrictor=LoadRestrictionsNone".into(),
        dir.clone().into_os_string(),
    ];
    let run = snow_io::process::Run {
        program: Path::new("kubectl"),
        args: &args,
        env: &[],
        stdin: snow_io::process::Stdin::Null,
        timeout,
        max_stdout: 64 << 20,
        redact: &snow_io::process::no_secrets,
    };
    let out = run.run().map_err(|failure| {
        let why = match failure.kind {
            snow_io::process::FailureKind::NotFound => {
                "the kubectl program is not on PATH".to_owned()
            }
            snow_io::process::FailureKind::TimedOut => format!("timed out after {timeout:?}"),
            _ => kubectl_error(&failure.stderr),
        };
        fail(BUILD_FAILED, format!("kustomize build failed: {why}"), true)
    })?;
    let text = String::from_utf8_lossy(&out);
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| {
        fail(
            BUILD_FAILED,
            format!("failed to decode the build output: {e}"),
            true,
        )
    })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// kustomize's error in kubectl's stderr: the `err="…"` of its log line, or the text after
/// `error: `.
fn kubectl_error(stderr: &str) -> String {
    match stderr.split_once(" err=\"") {
        Some((_, quoted)) => quoted
            .trim_end()
            .trim_end_matches('"')
            .replace("\\\"", "\""),
        None => stderr.trim_start_matches("error: ").to_owned(),
    }
}

/// One object's line of the change set.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// `<namespace>_<name>_<group>_<kind>`.
    pub(crate) id: String,
    /// The version applied.
    pub(crate) version: String,
    /// `<Kind>/<namespace>/<name>` (no namespace for cluster-scoped objects).
    pub(crate) subject: String,
    /// created, configured, unchanged, skipped, deleted.
    pub(crate) action: &'static str,
}

fn meta<'a>(o: &'a Value, field: &str) -> &'a str {
    text(o, &["metadata", field])
}

fn subject(o: &Value) -> String {
    let kind = o["kind"].as_str().unwrap_or_default();
    match meta(o, "namespace") {
        "" => format!("{kind}/{}", meta(o, "name")),
        ns => format!("{kind}/{ns}/{}", meta(o, "name")),
    }
}

fn entry(o: &Value, action: &'static str) -> Entry {
    let (group, version) = split_api_version(o["apiVersion"].as_str().unwrap_or_default());
    Entry {
        id: format!(
            "{}_{}_{group}_{}",
            meta(o, "namespace"),
            meta(o, "name"),
            o["kind"].as_str().unwrap_or_default()
        ),
        version: version.to_owned(),
        subject: subject(o),
        action,
    }
}

/// ssa's `ReconcileOrder`: these kinds first, in this order, then the rest, then webhooks.
const FIRST: [&str; 23] = [
    "CustomResourceDefinition",
    "Namespace",
    "ClusterRole",
    "ClusterClass",
    "RuntimeClass",
    "PriorityClass",
    "StorageClass",
    "VolumeSnapshotClass",
    "IngressClass",
    "GatewayClass",
    "ClusterRoleBinding",
    "ResourceQuota",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ConfigMap",
    "Secret",
    "Service",
    "LimitRange",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
const LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn order(o: &Value) -> (i64, String, String, String, String) {
    let kind = o["kind"].as_str().unwrap_or_default();
    let index = FIRST
        .iter()
        .position(|k| *k == kind)
        .map(|i| i as i64 - FIRST.len() as i64)
        .or_else(|| LAST.iter().position(|k| *k == kind).map(|i| i as i64 + 1))
        .unwrap_or(0);
    let group = split_api_version(o["apiVersion"].as_str().unwrap_or_default()).0;
    (
        index,
        group.to_owned(),
        kind.to_owned(),
        meta(o, "namespace").to_owned(),
        meta(o, "name").to_owned(),
    )
}

fn is_cluster_definition(o: &Value) -> bool {
    let av = o["apiVersion"].as_str().unwrap_or_default();
    match o["kind"].as_str().unwrap_or_default() {
        "CustomResourceDefinition" => av.starts_with("apiextensions.k8s.io/"),
        "Namespace" => av == "v1",
        "ClusterRole" => av.starts_with("rbac.authorization.k8s.io/"),
        _ => false,
    }
}

fn is_class_definition(o: &Value) -> bool {
    o["kind"].as_str().is_some_and(|k| k.ends_with("Class"))
}

/// Whether the object's labels or annotations have `key: value`.
fn marked(o: &Value, key: &str, value: &str) -> bool {
    o["metadata"]["annotations"][key] == value || o["metadata"]["labels"][key] == value
}

/// `object` without what a no-op apply changes.
fn comparable(o: &Value) -> Value {
    let mut v = o.clone();
    if let Some(m) = v["metadata"].as_object_mut() {
        m.remove("resourceVersion");
        m.remove("managedFields");
    }
    v
}

/// What the API server's error makes of a dry run, in ssa's `DryRunErr` words.
fn dry_run_error(o: &Value, e: &ApiError) -> String {
    let subject = subject(o);
    if e.reason == "NotFound" {
        if meta(o, "namespace").is_empty() {
            return format!("{subject} namespace not specified: {}", e.message);
        }
        return format!("{subject} not found: {}", e.message);
    }
    match e.reason {
        "" => format!("{subject} dry-run failed: {}", e.message),
        reason => format!("{subject} dry-run failed ({reason}): {}", e.message),
    }
}

/// ssa's `ApplyAll`: every object dry-run first (the first failure ends it, nothing applied),
/// then those that drifted applied.
async fn apply_all(
    shared: &Arc<Shared>,
    user: &crate::auth::User,
    mut objects: Vec<Value>,
) -> Result<Vec<Entry>, String> {
    objects.sort_by_key(order);
    let mut entries = Vec::new();
    let mut to_apply = Vec::new();
    for object in &objects {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        let rt: Option<ResourceType> = shared.lock().registry.by_kind(api_version, kind).cloned();
        let Some(rt) = rt else {
            return Err(format!(
                "{} dry-run failed: no matches for kind \"{kind}\" in version \"{api_version}\"",
                subject(object)
            ));
        };
        if rt.namespaced && meta(object, "namespace").is_empty() {
            return Err(format!(
                "{} namespace not specified: the server could not find the requested resource",
                subject(object)
            ));
        }
        let ns = meta(object, "namespace");
        let existing = shared
            .lock()
            .get(&rt, (!ns.is_empty()).then_some(ns), meta(object, "name"))
            .ok();
        let excluded = |o: &Value| marked(o, RECONCILE, "disabled") || marked(o, SSA, "Ignore");
        if excluded(object) || existing.as_ref().is_some_and(excluded) {
            entries.push(entry(object, "skipped"));
            continue;
        }
        let dry = http::apply_as(shared, user, &rt, object, KUSTOMIZE_MANAGER, true)
            .await
            .map_err(|e| dry_run_error(object, &e))?;
        match &existing {
            Some(existing) if comparable(existing) == comparable(&dry) => {
                entries.push(entry(object, "unchanged"));
            }
            Some(_) => {
                entries.push(entry(object, "configured"));
                to_apply.push((rt, object));
            }
            None => {
                entries.push(entry(object, "created"));
                to_apply.push((rt, object));
            }
        }
    }
    for (rt, object) in to_apply {
        http::apply_as(shared, user, &rt, object, KUSTOMIZE_MANAGER, false)
            .await
            .map_err(|e| format!("{} apply failed: {}", subject(object), e.message))?;
    }
    Ok(entries)
}

/// Whether the first stage's objects are ready: CRDs Established, Namespaces there.
fn stage_ready(store: &Store, objects: &[Value]) -> Result<(), String> {
    let mut waiting = Vec::new();
    for o in objects {
        let ready = match o["kind"].as_str().unwrap_or_default() {
            "CustomResourceDefinition" => store
                .select("apiextensions.k8s.io", "customresourcedefinitions", |c| {
                    meta(c, "name") == meta(o, "name")
                })
                .iter()
                .any(|(_, c)| {
                    c["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "Established" && c["status"] == "True")
                }),
            _ => true,
        };
        if !ready {
            waiting.push(format!("{} status: 'InProgress'", subject(o)));
        }
    }
    match waiting.is_empty() {
        true => Ok(()),
        false => Err(format!("timeout waiting for: [{}]", waiting.join(", "))),
    }
}

/// ssa's `ApplyAllStaged`: cluster definitions (waited for), class definitions, the rest. On a
/// failure, the error and the change set of the stages applied before it.
pub(crate) async fn apply_staged(
    shared: &Arc<Shared>,
    user: &crate::auth::User,
    objects: Vec<Value>,
) -> Result<Vec<Entry>, (String, Vec<Entry>)> {
    let (definitions, rest): (Vec<Value>, Vec<Value>) =
        objects.into_iter().partition(is_cluster_definition);
    let (classes, rest): (Vec<Value>, Vec<Value>) = rest.into_iter().partition(is_class_definition);
    let mut entries = Vec::new();
    for (stage, wait) in [(definitions, true), (classes, false), (rest, false)] {
        if stage.is_empty() {
            continue;
        }
        match apply_all(shared, user, stage.clone()).await {
            Ok(done) => entries.extend(done),
            Err(e) => return Err((e, entries)),
        }
        if wait {
            let start = Instant::now();
            loop {
                let ready = stage_ready(&shared.lock(), &stage);
                match ready {
                    Ok(()) => break,
                    Err(e) if start.elapsed() >= WAIT => return Err((e, entries)),
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
        }
    }
    Ok(entries)
}

/// The object of an inventory id, if its kind is served.
fn inventory_object(
    store: &Store,
    id: &str,
    version: &str,
) -> Option<(ResourceType, Option<String>, String)> {
    let mut parts = id.splitn(4, '_');
    let (ns, name, group, kind) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let rt = store.registry.by_kind(&api_version, kind)?.clone();
    Some((rt, (!ns.is_empty()).then(|| ns.to_owned()), name.to_owned()))
}

/// Deletes the stale objects that carry this Kustomization's labels; the first failure.
async fn prune(
    shared: &Arc<Shared>,
    user: &crate::auth::User,
    key: &Key,
    stale: &[(String, String)],
) -> Result<(), String> {
    for (id, version) in stale {
        let found = {
            let store = shared.lock();
            inventory_object(&store, id, version).and_then(|(rt, ns, name)| {
                store
                    .get(&rt, ns.as_deref(), &name)
                    .ok()
                    .map(|o| (rt, ns, name, o))
            })
        };
        let Some((rt, ns, name, object)) = found else {
            continue;
        };
        let ours = object["metadata"]["labels"][NAME_LABEL] == key.3.as_str()
            && object["metadata"]["labels"][NAMESPACE_LABEL] == key.2.as_str();
        if !ours
            || marked(&object, PRUNE, "disabled")
            || !object["metadata"]["deletionTimestamp"].is_null()
        {
            continue;
        }
        if let Err(e) = http::delete_as(shared, user, &rt, ns.as_deref(), &name).await {
            return Err(format!("{} delete failed: {}", subject(&object), e.message));
        }
    }
    Ok(())
}

/// The Ready condition a reconcile ends with: whether it is True, its reason and message.
type Verdict = (bool, &'static str, String);

/// Reconciles one Kustomization and writes its status.
pub(super) async fn reconcile(sim: &mut Sim, run: &Running, key: &Key, kustomization: &Value) {
    let generation = kustomization["metadata"]["generation"]
        .as_i64()
        .unwrap_or(0);
    let previous = &kustomization["status"];
    let mut status = match previous {
        Value::Object(_) => previous.clone(),
        _ => json!({}),
    };
    status["observedGeneration"] = json!(generation);
    let requested = text(kustomization, &["metadata", "annotations", REQUESTED_AT]);
    if !requested.is_empty() {
        status["lastHandledReconcileAt"] = json!(requested);
    }
    let (ok, reason, message) = attempt(sim, run, key, kustomization, &mut status).await;
    status["conditions"] = json!([condition(
        previous, "Ready", ok, reason, &message, generation
    )]);
    write_status(
        &sim.shared,
        KUSTOMIZE_API_VERSION,
        "Kustomization",
        key,
        status,
        KUSTOMIZE_MANAGER,
    );
}

/// kustomize-controller's reconcile of one Kustomization: the status fields it sets in
/// `status`, and how it ends.
async fn attempt(
    sim: &Sim,
    run: &Running,
    key: &Key,
    kustomization: &Value,
    status: &mut Value,
) -> Verdict {
    let failed = |reason: &'static str, message: String| (false, reason, message);
    let source = source_ref(key, kustomization).and_then(|(ns, name)| {
        git_repository(&sim.shared.lock(), &ns, &name)
            .map(|r| (ns.clone(), name.clone(), r))
            .ok_or_else(|| {
                format!(
                    "unable to get source '{ns}/{name}': gitrepositories.source.toolkit.fluxcd.io \"{name}\" not found"
                )
            })
    });
    let (source_ns, source_name, repository) = match source {
        Ok(found) => found,
        Err(message) => return failed(ARTIFACT_FAILED, message),
    };
    let revision = text(&repository, &["status", "artifact", "revision"]).to_owned();
    if revision.is_empty() {
        return failed(
            ARTIFACT_FAILED,
            format!("Source artifact not found, retrying in {REQUEUE_DEPENDENCY}"),
        );
    }
    let Some(artifact) = sim
        .artifacts
        .get(&(source_ns, source_name, revision.clone()))
        .cloned()
    else {
        return failed(
            ARTIFACT_FAILED,
            format!("Source is not ready, artifact not found, retrying in {REQUEUE_DEPENDENCY}"),
        );
    };
    let path = text(kustomization, &["spec", "path"]).to_owned();
    let target_namespace = text(kustomization, &["spec", "targetNamespace"]).to_owned();
    let timeout = sim.options.timeout;
    let built =
        tokio::task::spawn_blocking(move || build(&artifact, &path, &target_namespace, timeout))
            .await
            .unwrap_or_else(|e| {
                Err(BuildError {
                    reason: BUILD_FAILED,
                    message: format!("kustomize build failed: {e}"),
                    attempted: true,
                })
            });
    let mut objects = match built {
        Ok(objects) => objects,
        Err(e) => {
            if e.attempted {
                status["lastAttemptedRevision"] = json!(revision);
            }
            return failed(e.reason, e.message);
        }
    };
    status["lastAttemptedRevision"] = json!(revision);
    for o in &mut objects {
        if !o["metadata"]["labels"].is_object() {
            o["metadata"]["labels"] = json!({});
        }
        o["metadata"]["labels"][NAME_LABEL] = json!(key.3);
        o["metadata"]["labels"][NAMESPACE_LABEL] = json!(key.2);
    }
    let entries = match apply_staged(&sim.shared, &run.kustomizer, objects).await {
        Ok(entries) => entries,
        Err((error, applied)) => {
            // As kustomize-controller words a partial apply: the error, then what was changed.
            let log: String = applied
                .iter()
                .filter(|e| matches!(e.action, "created" | "configured"))
                .map(|e| format!("{} {}\n", e.subject, e.action))
                .collect();
            return failed(RECONCILIATION_FAILED, format!("{error}\n{log}"));
        }
    };
    let stale: Vec<(String, String)> = status["inventory"]["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| (text(e, &["id"]).to_owned(), text(e, &["v"]).to_owned()))
        .filter(|(id, _)| !entries.iter().any(|e| e.id == *id))
        .collect();
    status["inventory"] = json!({"entries": entries.iter().map(|e| json!({"id": e.id, "v": e.version})).collect::<Vec<_>>()});
    if kustomization["spec"]["prune"] == true
        && let Err(message) = prune(&sim.shared, &run.kustomizer, key, &stale).await
    {
        // The objects not deleted stay in the inventory, for the next reconcile to retry.
        if let Some(list) = status["inventory"]["entries"].as_array_mut() {
            list.extend(stale.iter().map(|(id, v)| json!({"id": id, "v": v})));
        }
        return failed(PRUNE_FAILED, message);
    }
    status["lastAppliedRevision"] = json!(revision);
    (
        true,
        "ReconciliationSucceeded",
        format!("Applied revision: {revision}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kustomize_s_error_is_taken_out_of_kubectl_s_log_line() {
        let stderr = "E1207 19:35:16.215583    9955 run.go:72] \"command failed\" err=\"accumulating resources: 'x': \\\"y\\\" missing\"";
        assert_eq!(
            kubectl_error(stderr),
            "accumulating resources: 'x': \"y\" missing"
        );
        assert_eq!(kubectl_error("error: no such dir"), "no such dir");
    }

    #[test]
    fn secure_join_stays_under_the_root() {
        let root = Path::new("/tmp/k");
        assert_eq!(
            secure_join(root, "./clusters/edge"),
            root.join("clusters/edge")
        );
        assert_eq!(secure_join(root, "../../etc"), root.join("etc"));
        assert_eq!(secure_join(root, "./"), root.to_owned());
    }

    #[test]
    fn objects_are_ordered_as_ssa_orders_them() {
        let o = |kind: &str, name: &str| json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name}});
        let mut objects = [
            o("Pod", "a"),
            o("ConfigMap", "b"),
            o("Namespace", "c"),
            o("ValidatingWebhookConfiguration", "d"),
        ];
        objects.sort_by_key(order);
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "ConfigMap",
                "Pod",
                "ValidatingWebhookConfiguration"
            ]
        );
    }

    #[test]
    fn inventory_ids_are_flux_s() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}});
        assert_eq!(entry(&cm, "created").id, "ns_a__ConfigMap");
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x.y"}});
        let e = entry(&crd, "created");
        assert_eq!(
            (e.id.as_str(), e.version.as_str(), e.subject.as_str()),
            (
                "_x.y_apiextensions.k8s.io_CustomResourceDefinition",
                "v1",
                "CustomResourceDefinition/x.y"
            )
        );
    }
}
