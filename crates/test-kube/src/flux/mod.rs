//! A simulated Flux (its source-controller and kustomize-controller), acting only once Flux is
//! installed as Flux installs itself: the `GitRepository` (`source.toolkit.fluxcd.io/v1`) and
//! `Kustomization` (`kustomize.toolkit.fluxcd.io/v1`) CRDs Established and the Deployments
//! `source-controller` and `kustomize-controller` Available in one namespace (`flux-system` in
//! Flux's manifests), with kustomize-controller's ServiceAccount there. Before that, those
//! objects get no status, as on a cluster without the controllers.
//!
//! - source-controller ([`source`]): each GitRepository is fetched with the real `git` program
//!   (`git clone --depth 1 --branch REF`): `ssh://` with the Secret's `identity` and
//!   `known_hosts` (files 0600 in a temporary directory, `StrictHostKeyChecking=yes`, a host key
//!   not in `known_hosts` refused), `http(s)://` with `username`/`password` or `bearerToken` and
//!   `ca.crt`. Its status says what source-controller's does: `artifact.revision`
//!   `<branch>@sha1:<commit>`, `Ready` and `ArtifactInStorage` `Succeeded` with `stored artifact
//!   for revision '…'`; a missing Secret or key `AuthenticationFailed`, a clone that fails
//!   `GitOperationFailed` (`failed to checkout and determine revision: unable to clone 'URL': …`,
//!   the cause from git's and ssh's own error lines), each also as `FetchFailed`. Never a key,
//!   password or token in a message.
//! - kustomize-controller ([`kustomize`]): each Kustomization whose source has an artifact gets
//!   that revision's tree copied to a temporary directory, its `spec.path` checked (`kustomization
//!   path not found: …`, `ArtifactFailed`), a `kustomization.yaml` generated where there is none
//!   (every sub-directory holding one, and every YAML file, as Flux generates it) with
//!   `targetNamespace` as its `namespace`, then the real `kubectl kustomize` (`kustomize build
//!   failed: …`, `BuildFailed`). Every object gets the labels `kustomize.toolkit.fluxcd.io/name`
//!   and `/namespace` and is applied server-side (force, field manager `kustomize-controller`) as
//!   kustomize-controller's ServiceAccount, through RBAC, the admission webhooks and the store's
//!   validation, in Flux's stages (CRDs, Namespaces and ClusterRoles first and waited for, then
//!   `*Class` kinds, then the rest), each stage dry-run in full before any of it is applied: a
//!   denial leaves `Ready=False` `ReconciliationFailed` with `<Kind>/<namespace>/<name> dry-run
//!   failed (<reason>): <the API server's message>` and the earlier stages' changes, the inventory
//!   unchanged. Objects annotated `kustomize.toolkit.fluxcd.io/reconcile: disabled` are skipped.
//!   With `spec.prune`, objects of the previous inventory missing from the new one are deleted
//!   when they carry this Kustomization's labels (and not `kustomize.toolkit.fluxcd.io/prune:
//!   disabled`). Success: `status.inventory.entries` (`<namespace>_<name>_<group>_<kind>`, `v`),
//!   `lastAppliedRevision`, `lastAttemptedRevision`, `Ready=True` `ReconciliationSucceeded`
//!   `Applied revision: …`.
//!
//! An object with `spec.suspend: true` is left alone. Each object is reconciled again after its
//! `spec.interval`, when its generation changes, when
//! its `reconcile.fluxcd.io/requestedAt` annotation changes (`status.lastHandledReconcileAt`), a
//! Kustomization also when its source's revision changes, and everything at
//! [`FluxHandle::reconcile_now`].
//!
//! Not simulated: other source kinds (OCIRepository, Bucket, HelmRepository), `ref.commit`,
//! `ref.semver` and `ref.name`, SOPS decryption, post-build substitution, health checks and
//! `wait`, `dependsOn`, impersonation (`serviceAccountName`), remote kustomize bases
//! (there is no network), finalizers (a deleted Kustomization prunes nothing), and the CRDs'
//! schema (the stand-in validates no schema: a URL the CRD's pattern refuses is stored, and
//! source-controller's own check answers it).

mod kustomize;
mod source;

use super::Shared;
use super::auth::User;
use super::cert_manager::available;
pub(crate) use super::cert_manager::text;
use super::clock;
use super::store::{Key, Store, Write};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The field manager of the simulated source-controller's status writes.
pub const SOURCE_MANAGER: &str = "source-controller";
/// The field manager of the simulated kustomize-controller's applies and status writes.
pub const KUSTOMIZE_MANAGER: &str = "kustomize-controller";
/// `source.toolkit.fluxcd.io/v1`.
pub const SOURCE_API_VERSION: &str = "source.toolkit.fluxcd.io/v1";
/// `kustomize.toolkit.fluxcd.io/v1`.
pub const KUSTOMIZE_API_VERSION: &str = "kustomize.toolkit.fluxcd.io/v1";
/// The annotation that asks Flux to reconcile an object now.
pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";

/// Flux's install manifest for tests: capi-render's fixture (source-controller and
/// kustomize-controller, trimmed from Flux's `install.yaml`; see its SOURCES.md) with bare
/// Deployments of the two other default controllers, as Flux's `install.yaml` has all four (a
/// repository's `flux-system/kustomization.yaml` patches each).
pub fn install_manifest() -> String {
    let mut text = include_str!("../../../capi-render/tests/data/flux/install.yaml").to_owned();
    for controller in ["helm-controller", "notification-controller"] {
        text.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {controller}\n  namespace: flux-system\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: {controller}}}\n  template:\n    metadata:\n      labels: {{app: {controller}}}\n    spec:\n      containers:\n      - name: manager\n        image: ghcr.io/fluxcd/{controller}:v1.0.0\n"
        ));
    }
    text
}

/// Options of the simulated Flux.
#[derive(Debug, Clone)]
pub struct FluxOptions {
    /// Time between passes. Default 50 ms.
    pub step: Duration,
    /// The longest one `git` or `kubectl` run may take. Default 60 s.
    pub timeout: Duration,
}

impl Default for FluxOptions {
    fn default() -> Self {
        FluxOptions {
            step: Duration::from_millis(50),
            timeout: Duration::from_secs(60),
        }
    }
}

/// The running simulation; it stops when this drops.
#[derive(Debug)]
pub struct FluxHandle {
    trigger: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl FluxHandle {
    /// Reconciles every GitRepository and Kustomization on the next pass, whatever their
    /// intervals (what `flux reconcile` asks through the `requestedAt` annotation, for all).
    pub fn reconcile_now(&self) {
        self.trigger.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for FluxHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Flux as installed: where its controllers run and who kustomize-controller is.
#[derive(Debug, Clone)]
struct Running {
    namespace: String,
    kustomizer: User,
}

/// Whether Flux runs: both CRDs served (Established) and both Deployments Available in one
/// namespace, kustomize-controller's ServiceAccount there.
fn running(store: &Store) -> Option<Running> {
    store
        .registry
        .by_kind(SOURCE_API_VERSION, "GitRepository")?;
    store
        .registry
        .by_kind(KUSTOMIZE_API_VERSION, "Kustomization")?;
    let deployments = store.select("apps", "deployments", |d| {
        matches!(
            text(d, &["metadata", "name"]),
            "source-controller" | "kustomize-controller"
        ) && available(d)
            && d["metadata"]["deletionTimestamp"].is_null()
    });
    let (_, kustomize) = deployments.iter().find(|(k, _)| {
        k.3 == "kustomize-controller"
            && deployments
                .iter()
                .any(|(s, _)| s.3 == "source-controller" && s.2 == k.2)
    })?;
    let namespace = text(kustomize, &["metadata", "namespace"]).to_owned();
    let account = match text(
        kustomize,
        &["spec", "template", "spec", "serviceAccountName"],
    ) {
        "" => "default",
        name => name,
    };
    let (_, sa) = store
        .select("", "serviceaccounts", |s| {
            text(s, &["metadata", "namespace"]) == namespace
                && text(s, &["metadata", "name"]) == account
        })
        .into_iter()
        .next()?;
    let kustomizer = User::service_account(&namespace, account, text(&sa, &["metadata", "uid"]));
    Some(Running {
        namespace,
        kustomizer,
    })
}

/// When an object was last reconciled, and on what.
#[derive(Debug, Clone)]
struct Memo {
    at: Instant,
    generation: i64,
    requested: String,
    trigger: u64,
    /// What it was reconciled from (a Kustomization: its source's revision).
    input: String,
}

/// A Go duration (`1m`, `10m0s`, `1h30m`, `500ms`), as Flux's intervals are written.
pub(crate) fn go_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(number * seconds);
    }
    Some(total)
}

/// The simulation's state between passes.
struct Sim {
    shared: Arc<Shared>,
    options: FluxOptions,
    trigger: Arc<AtomicU64>,
    /// Where artifacts are kept: `<storage>/gitrepository/<ns>/<name>/<commit>/`.
    storage: tempfile::TempDir,
    memos: HashMap<(&'static str, Key), Memo>,
    /// The tree of each GitRepository's revision: `(namespace, name, revision)`.
    artifacts: HashMap<(String, String, String), PathBuf>,
}

impl Sim {
    /// Whether `object` is due for a reconcile, and the memo to record if it is.
    fn due(&self, kind: &'static str, key: &Key, object: &Value, input: &str) -> Option<Memo> {
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
        let requested = text(object, &["metadata", "annotations", REQUESTED_AT]).to_owned();
        let trigger = self.trigger.load(Ordering::SeqCst);
        let interval =
            go_duration(text(object, &["spec", "interval"])).unwrap_or(Duration::from_secs(60));
        let memo = Memo {
            at: Instant::now(),
            generation,
            requested,
            trigger,
            input: input.to_owned(),
        };
        let due = match self.memos.get(&(kind, key.clone())) {
            None => true,
            Some(last) => {
                last.generation != memo.generation
                    || last.requested != memo.requested
                    || last.trigger != memo.trigger
                    || last.input != memo.input
                    || last.at.elapsed() >= interval
            }
        };
        due.then_some(memo)
    }
}

/// A condition, its `lastTransitionTime` kept from `previous` (the object's status) when its
/// status did not change.
fn condition(
    previous: &Value,
    kind: &str,
    ok: bool,
    reason: &str,
    message: &str,
    generation: i64,
) -> Value {
    let status = if ok { "True" } else { "False" };
    let time = previous["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind && c["status"] == status)
        .map(|c| c["lastTransitionTime"].clone())
        .unwrap_or_else(|| json!(clock::now_rfc3339()));
    json!({"type": kind, "status": status, "reason": reason, "message": message,
        "observedGeneration": generation, "lastTransitionTime": time})
}

/// Writes `status` on the object at `key` through its status subresource, unless it says that
/// already.
fn write_status(
    shared: &Shared,
    api_version: &str,
    kind: &str,
    key: &Key,
    status: Value,
    manager: &str,
) {
    let mut store = shared.lock();
    let Some(rt) = store.registry.by_kind(api_version, kind).cloned() else {
        return;
    };
    let Some(current) = store.at(key).cloned() else {
        return;
    };
    if current["status"] == status {
        return;
    }
    let mut new = current;
    new["status"] = status;
    if let Some(m) = new["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    let w = Write {
        manager,
        api_version,
        dry_run: false,
        status: true,
        whole: false,
        force: false,
    };
    let ns = (!key.2.is_empty()).then_some(key.2.as_str());
    let _ = store.replace(&rt, ns, &key.3, new, w);
}

pub(crate) fn start(shared: Arc<Shared>, options: FluxOptions) -> std::io::Result<FluxHandle> {
    let trigger = Arc::new(AtomicU64::new(0));
    let mut sim = Sim {
        shared,
        options,
        trigger: trigger.clone(),
        storage: tempfile::Builder::new().prefix("flux-storage-").tempdir()?,
        memos: HashMap::new(),
        artifacts: HashMap::new(),
    };
    let task = tokio::spawn(async move {
        loop {
            pass(&mut sim).await;
            tokio::time::sleep(sim.options.step).await;
        }
    });
    Ok(FluxHandle { trigger, task })
}

async fn pass(sim: &mut Sim) {
    let Some(run) = running(&sim.shared.lock()) else {
        return;
    };
    let repositories = sim
        .shared
        .lock()
        .raw("source.toolkit.fluxcd.io", "gitrepositories");
    for (key, repository) in repositories {
        // Suspended objects are left alone, as Flux leaves them.
        if !repository["metadata"]["deletionTimestamp"].is_null()
            || repository["spec"]["suspend"] == true
        {
            continue;
        }
        if let Some(memo) = sim.due("GitRepository", &key, &repository, "") {
            sim.memos.insert(("GitRepository", key.clone()), memo);
            source::reconcile(sim, &run, &key, &repository).await;
        }
    }
    let kustomizations = sim
        .shared
        .lock()
        .raw("kustomize.toolkit.fluxcd.io", "kustomizations");
    for (key, kustomization) in kustomizations {
        if !kustomization["metadata"]["deletionTimestamp"].is_null()
            || kustomization["spec"]["suspend"] == true
        {
            continue;
        }
        let input = kustomize::source_revision(&sim.shared.lock(), &key, &kustomization);
        if let Some(memo) = sim.due("Kustomization", &key, &kustomization, &input) {
            sim.memos.insert(("Kustomization", key.clone()), memo);
            kustomize::reconcile(sim, &run, &key, &kustomization).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_read_as_flux_writes_them() {
        assert_eq!(go_duration("1m"), Some(Duration::from_secs(60)));
        assert_eq!(go_duration("10m0s"), Some(Duration::from_secs(600)));
        assert_eq!(go_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(go_duration(""), None);
        assert_eq!(go_duration("5 minutes"), None);
    }
}
