//! Reflector-backed caches (kube-runtime watches and stores) of everything a reconcile reads on
//! the management cluster, so that a resync of unchanged, Ready objects makes no request.
//!
//! A reconcile's inputs are fingerprinted from the caches: the resourceVersion of every object
//! the pass reads (the EKS Anywhere Cluster and the objects it references, the identity Secret,
//! the inventory and every object it lists, the live Cluster API objects, the kubeconfig and
//! mirror Secrets, the `eksa-system` Namespace). When the fingerprint equals the one of the last
//! pass that found the object Ready and wrote nothing, the pass is skipped; any change of any
//! input, an object the caches do not hold (an identity provider's kind, a kind the API server
//! does not serve), a failed or writing pass, or a pass older than [`FULL_PASS_EVERY`] runs it.
//! The pass itself still reads with GETs: it only runs when something changed.
//!
//! What lies outside the management cluster is not watched: the devices the SnowMachineConfig
//! check asks and the workload cluster's Cilium. [`FULL_PASS_EVERY`] bounds how long a change
//! there goes unseen on a Ready object.
//!
//! Held per object: metadata without `managedFields`; the EKS Anywhere objects' `spec` and
//! `status` (references are followed through them); the inventory ConfigMaps' data (the object
//! lists). Secrets are held without their data.

use crate::{EKSA_API_VERSION, Outcome, metrics};
use capi_render::NAMESPACE;
use futures_util::{StreamExt, TryStreamExt};
use kube::{
    Api, Client,
    api::DynamicObject,
    core::{ApiResource, GroupVersionKind},
    runtime::{
        WatchStreamExt,
        reflector::{ObjectRef, Store, store::Writer},
        watcher,
    },
};
use serde_json::Value;
use snow_lifecycle::{Inventory, LifecycleError, MANAGED_BY};
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    hash::{DefaultHasher, Hash, Hasher},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

/// How long a skipped object may go without a full pass: what is not on the management cluster
/// (a device's AMIs, the workload cluster's Cilium) is looked at again at least this often.
pub const FULL_PASS_EVERY: Duration = Duration::from_secs(3600);

/// The Cluster API and CAPAS kinds a pass reads or applies, by API group; each is watched in
/// `eksa-system` at the version the API server prefers.
const CAPI_KINDS: &[(&str, &[&str])] = &[
    (
        "cluster.x-k8s.io",
        &["Cluster", "MachineDeployment", "MachineHealthCheck"],
    ),
    ("controlplane.cluster.x-k8s.io", &["KubeadmControlPlane"]),
    ("bootstrap.cluster.x-k8s.io", &["KubeadmConfigTemplate"]),
    ("etcdcluster.cluster.x-k8s.io", &["EtcdadmCluster"]),
    (
        "infrastructure.cluster.x-k8s.io",
        &["AWSSnowCluster", "AWSSnowMachineTemplate", "AWSSnowIPPool"],
    ),
];

/// The EKS Anywhere kinds a pass reads.
const EKSA_KINDS: &[&str] = &[
    "Cluster",
    "SnowDatacenterConfig",
    "SnowMachineConfig",
    "SnowIPPool",
];

const EKSA_GROUP: &str = "anywhere.eks.amazonaws.com";

/// One watched kind in one scope.
struct Cached {
    resource: ApiResource,
    store: Store<DynamicObject>,
    /// Watched with a selector: an object not found may still be there.
    partial: bool,
    /// The namespace watched; `None` for all (or a cluster-scoped kind).
    namespace: Option<String>,
    /// Listed once: until then an object not found may be there.
    listed: Arc<AtomicBool>,
}

/// The last pass that found an object Ready and wrote nothing.
#[derive(Debug, Clone, Copy)]
struct Settled {
    fingerprint: u64,
    at: Instant,
}

/// The caches, their watch tasks, and what the last settled pass of each object saw.
pub struct Caches {
    /// By `(API group, kind)`; Secrets may be watched in several namespaces.
    stores: BTreeMap<(String, String), Vec<Cached>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    settled: Mutex<HashMap<(&'static str, String, String), Settled>>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches")
            .field("kinds", &self.stores.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Drop for Caches {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, kind),
        &snow_kube::plural(kind),
    )
}

/// What is kept of an object: enough to follow references and tell versions apart.
fn strip(keep_body: bool) -> impl FnMut(&mut DynamicObject) + Send + 'static {
    move |o: &mut DynamicObject| {
        o.metadata.managed_fields = None;
        if !keep_body {
            o.data = Value::Object(serde_json::Map::new());
        }
    }
}

impl Caches {
    /// Starts the watches: the EKS Anywhere kinds in `namespace` (all namespaces for `None`),
    /// the Cluster API and CAPAS kinds the API server serves and snowctl's inventories in
    /// `eksa-system`, the Secrets of `namespace`, `eksa-system` and `capas-system` (all
    /// namespaces for `None`), and the `eksa-system` Namespace. Wait with [`Caches::ready`].
    pub async fn start(client: &Client, namespace: Option<&str>) -> Caches {
        let mut caches = Caches {
            stores: BTreeMap::new(),
            tasks: Vec::new(),
            settled: Mutex::default(),
        };
        for kind in EKSA_KINDS {
            let r = gvk(EKSA_GROUP, "v1alpha1", kind);
            caches.watch(client, r, namespace, watcher::Config::default(), true);
        }
        for (group, kinds) in CAPI_KINDS {
            // A group the API server does not serve is not cached: a cluster whose inventory
            // lists its kinds has no fingerprint and is always reconciled.
            let Ok(served) = kube::discovery::group(client, group).await else {
                tracing::warn!(%group, "not served: its kinds are not cached");
                continue;
            };
            for kind in *kinds {
                if let Some((r, _)) = served.recommended_kind(kind) {
                    caches.watch(
                        client,
                        r,
                        Some(NAMESPACE),
                        watcher::Config::default(),
                        false,
                    );
                }
            }
        }
        let inventories =
            watcher::Config::default().labels(&format!("{}={}", MANAGED_BY.0, MANAGED_BY.1));
        caches.watch(
            client,
            gvk("", "v1", "ConfigMap"),
            Some(NAMESPACE),
            inventories,
            true,
        );
        let secret_namespaces: Vec<Option<&str>> = match namespace {
            None => vec![None],
            Some(ns) => [ns, NAMESPACE, snow_lifecycle::CAPAS_NAMESPACE]
                .into_iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .map(Some)
                .collect(),
        };
        for ns in secret_namespaces {
            caches.watch(
                client,
                gvk("", "v1", "Secret"),
                ns,
                watcher::Config::default(),
                false,
            );
        }
        let only = watcher::Config::default().fields(&format!("metadata.name={NAMESPACE}"));
        caches.watch(client, gvk("", "v1", "Namespace"), None, only, false);
        caches
    }

    fn watch(
        &mut self,
        client: &Client,
        resource: ApiResource,
        namespace: Option<&str>,
        config: watcher::Config,
        keep_body: bool,
    ) {
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        let partial = config.label_selector.is_some();
        let writer = Writer::new(resource.clone());
        let store = writer.as_reader();
        let mut strip = strip(keep_body);
        let kind = resource.kind.clone();
        let listed = Arc::new(AtomicBool::new(false));
        let done = listed.clone();
        let stream = watcher(api, config)
            .default_backoff()
            .map_ok(move |event| event.modify(&mut strip))
            .reflect(writer);
        self.tasks.push(tokio::spawn(async move {
            stream
                .for_each(|event| {
                    match event {
                        Ok(watcher::Event::InitDone) => done.store(true, Ordering::SeqCst),
                        Ok(_) => {}
                        Err(e) => {
                            tracing::debug!(%kind, error = %e, "cache watch failed; retrying")
                        }
                    }
                    futures_util::future::ready(())
                })
                .await;
        }));
        self.stores
            .entry((resource.group.clone(), resource.kind.clone()))
            .or_default()
            .push(Cached {
                resource,
                store,
                partial,
                namespace: namespace.map(str::to_owned),
                listed,
            });
    }

    /// Waits until every cache has listed once (each watch retries on its own until it does).
    pub async fn ready(&self) {
        for cached in self.stores.values().flatten() {
            let _ = cached.store.wait_until_ready().await;
        }
    }

    /// Objects cached of every kind, for the benchmark's memory figure.
    pub fn len(&self) -> usize {
        self.stores
            .values()
            .flatten()
            .map(|c| c.store.state().len())
            .sum()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every cached EKS Anywhere object of `kind`, as JSON.
    pub fn eksa(&self, kind: &str) -> Vec<Value> {
        let mut all: Vec<Value> = self
            .stores
            .get(&(EKSA_GROUP.to_owned(), kind.to_owned()))
            .into_iter()
            .flatten()
            .flat_map(|c| c.store.state())
            .map(|o| {
                let mut v = serde_json::to_value(o.as_ref()).unwrap_or_default();
                v["apiVersion"] = Value::String(EKSA_API_VERSION.to_owned());
                v["kind"] = Value::String(kind.to_owned());
                v
            })
            .collect();
        all.sort_by_key(key_of);
        all
    }

    /// `None` when the kind is not cached; `Some(None)` when the object is not there.
    fn find(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Option<Arc<DynamicObject>>> {
        let all = self.stores.get(&(group.to_owned(), kind.to_owned()))?;
        let cached: Vec<&Cached> = all
            .iter()
            .filter(|c| c.namespace.is_none() || c.namespace.as_deref() == namespace)
            .collect();
        if cached.is_empty() || cached.iter().any(|c| !c.listed.load(Ordering::SeqCst)) {
            return None;
        }
        let found = cached.iter().find_map(|c| {
            let mut key = ObjectRef::new_with(name, c.resource.clone());
            if let Some(ns) = namespace {
                key = key.within(ns);
            }
            c.store.get(&key)
        });
        if found.is_none() && cached.iter().any(|c| c.partial) {
            return None;
        }
        Some(found)
    }

    /// The cached MachineDeployments by their `cluster.x-k8s.io/cluster-name` label, each
    /// cluster's by name: what a pass over every cluster looks up, found in one scan (a scan per
    /// cluster made a resync of 1,000 clusters cost seconds). `None` when they are not cached.
    pub fn machine_deployments(&self) -> Option<MachineDeployments> {
        let all = self.stores.get(&(
            "cluster.x-k8s.io".to_owned(),
            "MachineDeployment".to_owned(),
        ))?;
        let mut by_cluster: HashMap<String, Vec<Arc<DynamicObject>>> = HashMap::new();
        for md in all.iter().flat_map(|c| c.store.state()) {
            let cluster = (md.metadata.labels.as_ref())
                .and_then(|l| l.get("cluster.x-k8s.io/cluster-name"))
                .cloned();
            if let Some(cluster) = cluster {
                by_cluster.entry(cluster).or_default().push(md);
            }
        }
        for mds in by_cluster.values_mut() {
            mds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        }
        Some(MachineDeployments(by_cluster))
    }

    /// The fingerprint of what a pass of the EKS Anywhere Cluster `cluster` reads; `None` when
    /// some of it is not cached.
    pub fn cluster_fingerprint(&self, cluster: &Value) -> Option<u64> {
        self.cluster_fingerprint_in(cluster, &self.machine_deployments()?)
    }

    /// [`Caches::cluster_fingerprint`] with the MachineDeployments found already (one
    /// [`Caches::machine_deployments`] for a whole resync).
    pub fn cluster_fingerprint_in(
        &self,
        cluster: &Value,
        deployments: &MachineDeployments,
    ) -> Option<u64> {
        let mut f = Fingerprint::default();
        f.object(cluster);
        let ns = cluster["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default");
        let name = cluster["metadata"]["name"].as_str().unwrap_or_default();
        let refs = snow_api::walk::cluster_refs(cluster);
        let eksa = |kind: &str, n: &str| self.find(EKSA_GROUP, kind, Some(ns), n);
        // No datacenter named: no fingerprint (the pass reports the missing reference).
        let datacenter = f.add(eksa("SnowDatacenterConfig", refs.datacenter.as_deref()?)?);
        let mut pools = BTreeSet::new();
        for m in &refs.machine_configs {
            if let Some(config) = f.add(eksa("SnowMachineConfig", m)?) {
                pools.extend(snow_api::walk::ip_pools(&config.data).map(str::to_owned));
            }
        }
        for pool in pools {
            f.add(eksa("SnowIPPool", &pool)?);
        }
        if cluster["spec"]["identityProviderRefs"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            return None; // their kinds are not cached
        }
        if refs.flux_config.is_some() {
            return None; // FluxConfigs are not cached: a pass reads the one named
        }
        if let Some(d) = datacenter {
            let secret = snow_api::walk::identity_secret(&identity_view(&d));
            f.add(self.find("", "Secret", Some(ns), &secret)?);
        }
        let system = Some(NAMESPACE);
        f.add(self.find("", "Namespace", None, NAMESPACE)?);
        for secret in [
            format!("{name}-kubeconfig"),
            snow_credentials::registry::SECRET_NAME.to_owned(),
        ] {
            f.add(self.find("", "Secret", system, &secret)?);
        }
        let inventory = f.add(self.find("", "ConfigMap", system, &Inventory::name_for(name))?);
        if let Some(inventory) = inventory {
            let value = serde_json::to_value(inventory.as_ref()).ok()?;
            for object in Inventory::from_object(&value)?.objects {
                let group = object.api_version.rsplit_once('/').map_or("", |(g, _)| g);
                f.add(self.find(group, &object.kind, system, &object.name)?);
            }
        }
        // The live objects a pass reads besides the inventory's: a worker group's
        // MachineDeployment not (or no longer) rendered is removed by the pass.
        for (group, kind, object) in [
            ("cluster.x-k8s.io", "Cluster", name.to_owned()),
            (
                "controlplane.cluster.x-k8s.io",
                "KubeadmControlPlane",
                name.to_owned(),
            ),
            (
                "etcdcluster.cluster.x-k8s.io",
                "EtcdadmCluster",
                format!("{name}-etcd"),
            ),
        ] {
            f.add(self.find(group, kind, system, &object)?);
        }
        for md in deployments.0.get(name).into_iter().flatten() {
            f.add(Some(md.clone()));
        }
        Some(f.finish())
    }

    /// The fingerprint of what a SnowMachineConfig's check reads on the management cluster: the
    /// config and the CAPAS bootstrap credentials Secret.
    pub fn machine_config_fingerprint(&self, config: &Value) -> Option<u64> {
        let mut f = Fingerprint::default();
        f.object(config);
        let (ns, name) = crate::BOOTSTRAP_SECRET;
        f.add(self.find("", "Secret", Some(ns), name)?);
        Some(f.finish())
    }

    /// Runs `pass` for `object` of `kind` unless its fingerprint equals the one of its last
    /// pass that found it `settled` (Ready) and wrote nothing, within [`FULL_PASS_EVERY`];
    /// records the reconcile in `metrics`.
    pub(crate) async fn reconcile<F>(
        &self,
        metrics: &metrics::Metrics,
        kind: &'static str,
        object: &Value,
        fingerprint: Option<u64>,
        settled: bool,
        pass: F,
    ) -> Result<Outcome, LifecycleError>
    where
        F: Future<Output = Result<Outcome, LifecycleError>>,
    {
        let started = Instant::now();
        let key = (kind, key_of(object).0, key_of(object).1);
        let unchanged = settled
            && fingerprint.is_some_and(|fp| {
                self.settled.lock().is_ok_and(|s| {
                    s.get(&key).is_some_and(|last| {
                        last.fingerprint == fp && last.at.elapsed() < FULL_PASS_EVERY
                    })
                })
            });
        if unchanged {
            metrics.record(kind, metrics::Ended::Unchanged, started.elapsed(), 0);
            return Ok(Outcome::default());
        }
        let result = pass.await;
        let record = match (&result, fingerprint) {
            (Ok(o), Some(fp)) if settled && o.writes == 0 && o.requeue_after.is_none() => Some(fp),
            _ => None,
        };
        if let Ok(mut s) = self.settled.lock() {
            match record {
                Some(fingerprint) => {
                    let at = Instant::now();
                    s.insert(key, Settled { fingerprint, at });
                }
                None => {
                    s.remove(&key);
                }
            }
        }
        let (ended, writes) = match &result {
            Ok(o) => (metrics::Ended::Success, o.writes),
            Err(_) => (metrics::Ended::Error, 0),
        };
        metrics.record(kind, ended, started.elapsed(), writes);
        result
    }
}

/// The cached MachineDeployments by cluster name ([`Caches::machine_deployments`]).
#[derive(Debug, Default)]
pub struct MachineDeployments(HashMap<String, Vec<Arc<DynamicObject>>>);

fn key_of(o: &Value) -> (String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&o["metadata"]["namespace"]),
        text(&o["metadata"]["name"]),
    )
}

/// What [`snow_api::walk::identity_secret`] reads of a cached datacenter: its name and spec.
fn identity_view(d: &DynamicObject) -> Value {
    serde_json::json!({
        "metadata": {"name": d.metadata.name},
        "spec": d.data["spec"],
    })
}

/// The resourceVersions (and uids) of the objects a pass reads, in the order it reads them.
#[derive(Default)]
struct Fingerprint(DefaultHasher);

impl Fingerprint {
    fn object(&mut self, o: &Value) {
        let m = &o["metadata"];
        (m["uid"].as_str(), m["resourceVersion"].as_str()).hash(&mut self.0);
    }

    /// Adds a cached object, or its absence; returns it.
    fn add(&mut self, found: Option<Arc<DynamicObject>>) -> Option<Arc<DynamicObject>> {
        match &found {
            Some(o) => (
                1u8,
                o.metadata.namespace.as_deref(),
                o.metadata.name.as_deref(),
                o.metadata.uid.as_deref(),
                o.metadata.resource_version.as_deref(),
            )
                .hash(&mut self.0),
            None => 0u8.hash(&mut self.0),
        }
        found
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::AtomicU32;

    fn empty() -> Caches {
        Caches {
            stores: BTreeMap::new(),
            tasks: Vec::new(),
            settled: Mutex::default(),
        }
    }

    /// Runs one reconcile through `caches`; returns whether the pass ran.
    async fn once(
        caches: &Caches,
        metrics: &metrics::Metrics,
        fingerprint: Option<u64>,
        settled: bool,
        result: Result<Outcome, LifecycleError>,
    ) -> bool {
        let ran = AtomicU32::new(0);
        let object = json!({"metadata": {"namespace": "default", "name": "edge"}});
        let pass = async {
            ran.fetch_add(1, Ordering::SeqCst);
            result
        };
        let _ = (caches.reconcile(metrics, "Cluster", &object, fingerprint, settled, pass)).await;
        ran.load(Ordering::SeqCst) == 1
    }

    #[tokio::test]
    async fn only_a_settled_pass_with_the_same_inputs_is_skipped_and_a_failure_is_retried() {
        let (caches, metrics) = (empty(), metrics::Metrics::default());
        let ok = || Ok(Outcome::default());
        let wrote = Outcome {
            writes: 1,
            ..Outcome::default()
        };
        let failed = || {
            Err(LifecycleError::NotFound {
                what: "edge".into(),
            })
        };
        assert!(
            once(&caches, &metrics, Some(1), true, ok()).await,
            "first pass"
        );
        assert!(
            !once(&caches, &metrics, Some(1), true, ok()).await,
            "unchanged"
        );
        assert!(
            once(&caches, &metrics, Some(2), true, ok()).await,
            "an input changed"
        );
        assert!(!once(&caches, &metrics, Some(2), true, ok()).await);
        assert!(
            once(&caches, &metrics, Some(2), false, ok()).await,
            "not Ready"
        );
        // The pass that found it not Ready forgot the fingerprint: it runs until settled again.
        assert!(
            once(&caches, &metrics, Some(2), true, failed()).await,
            "not Ready before"
        );
        assert!(
            once(&caches, &metrics, Some(2), true, failed()).await,
            "a failure is retried"
        );
        assert!(once(&caches, &metrics, Some(2), true, Ok(wrote)).await);
        assert!(
            once(&caches, &metrics, Some(2), true, ok()).await,
            "a pass that wrote"
        );
        assert!(!once(&caches, &metrics, Some(2), true, ok()).await);
        assert!(
            once(&caches, &metrics, None, true, ok()).await,
            "inputs not cached"
        );
        assert!(once(&caches, &metrics, None, true, ok()).await);
        let (skipped, errors) = (
            metrics.reconciles("Cluster", metrics::Ended::Unchanged),
            metrics.reconciles("Cluster", metrics::Ended::Error),
        );
        assert_eq!((skipped, errors), (3, 2));
    }
}
