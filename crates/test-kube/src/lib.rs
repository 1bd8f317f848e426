//! A Kubernetes API server stand-in with real wire semantics for what a kube-rs client does.
//!
//! [`KubeStandIn`] serves HTTPS on `127.0.0.1` (a [`TestCa`] certificate, bearer-token
//! authentication) from an in-memory store:
//!
//! - the admin token ([`KubeStandIn::token`]) may do everything; ServiceAccount tokens (the
//!   TokenRequest subresource `POST .../serviceaccounts/NAME/token`,
//!   [`KubeStandIn::service_account_kubeconfig`]) are authorized by RBAC as the API server's
//!   RBAC authorizer does (`rbac`), a denial answered with its 403 and words, and
//!   SelfSubjectAccessReview (`kubectl auth can-i`) answers from the same rules;
//! - once a Validating- or MutatingWebhookConfiguration is stored, every create, update and
//!   delete over HTTP goes through the webhooks it configures, called over HTTPS as the API
//!   server calls them (`admission`); a Service a webhook names is reached at the address
//!   [`KubeStandIn::map_service`] gives it. Writes made in process ([`KubeStandIn::put`],
//!   [`KubeStandIn::delete`], the simulated controllers, garbage collection) pass neither RBAC
//!   nor admission: in a real cluster the controllers are clients whose writes would be
//!   admitted, but the simulations write what Cluster API's and the kubelets' own controllers
//!   write (status, Machines, Nodes, Secrets), which a test's webhooks have no business
//!   refusing, and they write it under the store's lock;
//!
//! - discovery (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/{group}/{version}`, plain and
//!   aggregated v2) built from the registered resources;
//! - built-in resources (namespaces, secrets, configmaps, events, serviceaccounts, services, pods
//!   (stored as given: no controller makes them; their `pods/log` serves what a test set,
//!   `pod_log`),
//!   deployments, daemonsets, nodes, RBAC roles and bindings, admission webhook configurations, leases,
//!   events.k8s.io events, customresourcedefinitions) and every served version of each
//!   CustomResourceDefinition stored (registered once Established, unregistered on delete;
//!   Established at once, or a set time after creation: [`KubeStandIn::establish_after`]);
//! - Deployments validated as the API server does (a selector that selects the pod template, a
//!   container); [`workloads`] simulates the deployment controller that makes them Available;
//! - GET, LIST (label and field selectors), WATCH (history replay, 410 Gone, bookmarks), POST,
//!   PUT (optimistic concurrency), PATCH (server-side apply with field ownership and pruning,
//!   merge, strategic merge treated as merge, JSON patch), DELETE (finalizers, garbage collection
//!   by ownerReferences), `dryRun=All`, the `status` subresource;
//! - `Status` errors kube parses into `kube::Error::Api`;
//! - an opt-in delay of every answer ([`KubeStandIn::set_latency`], off by default), for
//!   benchmarks that must count round trips as a real API server makes a client pay them.
//!
//! Not done: schema validation, defaulting and pruning of unknown fields, conversion between
//! versions (an object keeps its stored fields whatever version it is read through), the
//! limits of `admission` and `rbac` stated there, anonymous requests (no token: 401),
//! pagination (`limit` is ignored, lists are complete), foreground/orphan
//! deletion propagation (always background), and associative lists in apply (lists are atomic).
//! [`capi`] simulates the Cluster API controllers of a management cluster, each Cluster's
//! workload cluster being another stand-in where [`nodes`] simulates the kubelets (a Node is
//! Ready only with a CNI) and the DaemonSet controller. [`flux`] simulates Flux's
//! source-controller and kustomize-controller with the real `git` and `kubectl kustomize`, its
//! applies going through RBAC and admission as a client's do.

mod admission;
mod apply;
mod auth;
pub mod capi;
pub mod cert_manager;
mod clock;
pub mod components;
pub mod declared;
mod discovery;
pub mod edge_spec;
pub mod flux;
mod http;
pub mod kind;
pub mod nodes;
mod patch;
mod pod_log;
pub mod probe;
mod rbac;
mod registry;
mod selector;
mod status;
mod store;
mod watch;
mod webhook_client;
pub mod workloads;

pub use capi::{CapiHandle, CapiOptions};
pub use flux::{FluxHandle, FluxOptions};
pub use status::ApiError;
pub use workloads::{WorkloadHandle, WorkloadOptions};

use registry::ResourceType;
use selector::{FieldSelector, LabelSelector};
use serde_json::{Value, json};
use snow_test_devices::TestCa;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use store::Store;

/// The field manager of in-process writes ([`KubeStandIn::put`]).
pub const TEST_MANAGER: &str = "test";

/// Starting the stand-in (or installing CRDs into it) failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeStandInError {
    /// Binding failed.
    #[error("binding the Kubernetes API stand-in: {0}")]
    Io(#[from] std::io::Error),
    /// The certificate could not be made or used.
    #[error("TLS setup of the Kubernetes API stand-in: {0}")]
    Tls(String),
    /// A CRD file could not be read or parsed.
    #[error("reading CRDs: {0}")]
    Crds(String),
    /// The store refused an object.
    #[error("storing an object: {0}")]
    Api(#[from] ApiError),
}

/// State shared by the HTTP side, watches and the simulated controllers.
#[derive(Debug)]
pub(crate) struct Shared {
    store: Mutex<Store>,
    token: String,
    /// ServiceAccount tokens issued.
    tokens: auth::Tokens,
    /// Where a Service's port is reached (`namespace`, `name`, `port`): [`KubeStandIn::map_service`].
    services: Mutex<HashMap<(String, String, u16), SocketAddr>>,
    addr: SocketAddr,
    requests: Mutex<Vec<String>>,
    /// Requests received by authorization verb ([`KubeStandIn::request_counts`]).
    verbs: Mutex<std::collections::BTreeMap<String, u64>>,
    writes: AtomicU64,
    /// Added to every request's answer, in nanoseconds (0: none); see [`KubeStandIn::set_latency`].
    latency: AtomicU64,
    /// Whether the task of [`KubeStandIn::establish_after`] runs.
    establisher: std::sync::atomic::AtomicBool,
    /// Bumped to end every open watch.
    epoch: tokio::sync::watch::Sender<u64>,
    /// The simulated kubelets and deployment controller when this stand-in is some cluster's
    /// workload cluster (weak: the simulations that use it hold it).
    workload_sims: Mutex<std::sync::Weak<capi::Workload>>,
    /// What each pod's containers wrote ([`KubeStandIn::set_pod_log`]).
    logs: Mutex<pod_log::Logs>,
}

impl Shared {
    /// The store, locked (a poisoned lock is taken over: the store stays consistent between
    /// operations).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running Kubernetes API server stand-in; stops when dropped (or on [`KubeStandIn::stop`]).
pub struct KubeStandIn {
    shared: Arc<Shared>,
    ca: TestCa,
    certificate: String,
    task: Mutex<Option<snow_test_devices::https::Serving>>,
}

impl std::fmt::Debug for KubeStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeStandIn")
            .field("addr", &self.shared.addr)
            .finish_non_exhaustive()
    }
}

/// The CRD files of the reference data (`../shared/data/crds` beside the workspace).
pub fn crd_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/crds")
}

impl KubeStandIn {
    /// Starts serving on `127.0.0.1` at a free port (inside a tokio runtime).
    pub async fn start() -> Result<KubeStandIn, KubeStandInError> {
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let ca =
            TestCa::new("kube-stand-in CA").map_err(|e| KubeStandInError::Tls(e.to_string()))?;
        let certificate = ca
            .server_certificate(ip)
            .map_err(|e| KubeStandInError::Tls(e.to_string()))?;
        let acceptor =
            snow_test_devices::https::acceptor(&certificate).map_err(KubeStandInError::Tls)?;
        let listener = tokio::net::TcpListener::bind((ip, 0)).await?;
        let addr = listener.local_addr()?;
        let (epoch, _) = tokio::sync::watch::channel(0);
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::new()),
            token: clock::token(),
            tokens: auth::Tokens::default(),
            services: Mutex::new(HashMap::new()),
            addr,
            requests: Mutex::new(Vec::new()),
            verbs: Mutex::default(),
            writes: AtomicU64::new(0),
            latency: AtomicU64::new(0),
            establisher: Default::default(),
            epoch,
            workload_sims: Mutex::new(std::sync::Weak::new()),
            logs: Mutex::default(),
        });
        let serving = shared.clone();
        let task = snow_test_devices::https::serve(listener, acceptor, move |req| {
            http::handle(serving.clone(), req)
        });
        Ok(KubeStandIn {
            shared,
            ca,
            certificate: certificate.cert_pem.clone(),
            task: Mutex::new(Some(task)),
        })
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// The serving certificate it presents in every TLS handshake, PEM (issued by
    /// [`KubeStandIn::ca_pem`]).
    pub fn certificate_pem(&self) -> &str {
        &self.certificate
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.shared.addr)
    }

    /// The bearer token clients must send.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// The CA certificate (PEM) the server certificate chains to.
    pub fn ca_pem(&self) -> &str {
        self.ca.pem()
    }

    /// A kubeconfig for this server: cluster and user `stand-in` (bearer token), context
    /// `stand-in` (current).
    pub fn kubeconfig(&self) -> String {
        self.kubeconfig_as("stand-in", "stand-in")
    }

    /// A kubeconfig for this server with cluster `cluster`, user `user` (bearer token) and
    /// context `<user>@<cluster>` (current), or `stand-in` when both are `stand-in`.
    pub fn kubeconfig_as(&self, cluster: &str, user: &str) -> String {
        self.kubeconfig_with(cluster, user, &self.shared.token)
    }

    /// A new token of the ServiceAccount `namespace/name` (which must exist), valid for an hour,
    /// as the TokenRequest subresource issues it: requests with it are
    /// `system:serviceaccount:NAMESPACE:NAME` and RBAC decides what they may do. It stops working
    /// when the ServiceAccount is deleted.
    pub fn service_account_token(&self, namespace: &str, name: &str) -> Result<String, ApiError> {
        let store = self.shared.lock();
        let (token, _) = self.shared.tokens.issue(&store, namespace, name, 3600)?;
        Ok(token)
    }

    /// A kubeconfig for this server holding a new token of the ServiceAccount
    /// `namespace/name` ([`KubeStandIn::service_account_token`]): cluster `stand-in`, user
    /// `system:serviceaccount:NAMESPACE:NAME`.
    pub fn service_account_kubeconfig(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        let token = self.service_account_token(namespace, name)?;
        let user = format!("system:serviceaccount:{namespace}:{name}");
        Ok(self.kubeconfig_with("stand-in", &user, &token))
    }

    /// Routes the webhook calls to the Service `namespace/name` on `port` to `addr` (the
    /// certificate is still checked for `NAME.NAMESPACE.svc`): what the cluster's Service
    /// network does. The Service object must exist too; without this mapping a call to it
    /// fails as one to a Service without endpoints. Webhooks are called only once a test has
    /// mapped a Service: the simulated providers serve none, so the webhook configurations of
    /// their real components are not called before that.
    pub fn map_service(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        if let Ok(mut services) = self.shared.services.lock() {
            services.insert((namespace.to_owned(), name.to_owned(), port), addr);
        }
    }

    fn kubeconfig_with(&self, cluster: &str, user: &str, token: &str) -> String {
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca.pem());
        let context = if cluster == user {
            cluster.to_owned()
        } else {
            format!("{user}@{cluster}")
        };
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\nusers:\n- name: {user}\n  user:\n    token: {}\ncontexts:\n- name: {context}\n  context:\n    cluster: {cluster}\n    user: {user}\ncurrent-context: {context}\n",
            self.url(),
            token
        )
    }

    /// Writes [`KubeStandIn::kubeconfig`] to `dir/kubeconfig`; returns the path.
    pub fn write_kubeconfig(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join("kubeconfig");
        std::fs::write(&path, self.kubeconfig())?;
        Ok(path)
    }

    fn resource(&self, api_version: &str, kind: &str) -> Option<ResourceType> {
        self.shared
            .lock()
            .registry
            .by_kind(api_version, kind)
            .cloned()
    }

    /// The object `kind` `namespace/name` as served under `api_version`, if stored.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let rt = self.resource(api_version, kind)?;
        self.shared.lock().get(&rt, namespace, name).ok()
    }

    /// Every `kind` object (in `namespace`, or in all namespaces), as served under `api_version`.
    pub fn list(&self, api_version: &str, kind: &str, namespace: Option<&str>) -> Vec<Value> {
        let Some(rt) = self.resource(api_version, kind) else {
            return Vec::new();
        };
        self.shared.lock().list(
            &rt,
            namespace,
            &LabelSelector::default(),
            &FieldSelector::default(),
        )
    }

    /// Everything stored (CRDs and the preloaded namespaces included).
    pub fn objects(&self) -> Vec<Value> {
        self.shared.lock().all()
    }

    /// Creates or replaces `object` as manager [`TEST_MANAGER`] (status included, no
    /// resourceVersion check); returns it as stored.
    pub fn put(&self, object: Value) -> Result<Value, ApiError> {
        self.shared.lock().put(object, TEST_MANAGER)
    }

    /// Stores `object` exactly as given (its uid, generation, managedFields and status; a new
    /// resourceVersion and a watch event), as a restore of the API server's storage would:
    /// for seeding many copies of objects a converged run made (the controller benchmark).
    /// Refused when the key is taken or the object has no uid.
    pub fn restore(&self, object: Value) -> Result<Value, ApiError> {
        self.shared.lock().restore(object)
    }

    /// Sets what container `container` of pod `namespace/name` wrote, as `pods/log` serves it
    /// (the pod itself is stored with [`KubeStandIn::put`]; no simulated controller makes pods).
    pub fn set_pod_log(&self, namespace: &str, name: &str, container: &str, text: &str) {
        let key = (namespace.to_owned(), name.to_owned(), container.to_owned());
        self.shared
            .logs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, text.to_owned());
    }

    /// Deletes an object as a DELETE would (finalizers honoured, dependents collected).
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<(), ApiError> {
        let rt = self
            .resource(api_version, kind)
            .ok_or_else(ApiError::no_resource)?;
        self.shared
            .lock()
            .delete(&rt, namespace, name, false)
            .map(|_| ())
    }

    /// Registers a resource programmatically (no CRD object): `namespaced`, with or without a
    /// status subresource; `plural` is the lower-case resource name.
    pub fn register(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        status: bool,
    ) {
        self.shared.lock().registry.register(ResourceType::new(
            api_version,
            kind,
            plural,
            namespaced,
            status,
        ));
    }

    /// The current resourceVersion of the store.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().resource_version()
    }

    /// Mutating HTTP requests received (POST, PUT, PATCH, DELETE; dry runs excluded, failures
    /// included).
    pub fn writes(&self) -> u64 {
        self.shared.writes.load(Ordering::SeqCst)
    }

    /// Delays every later answer by `latency` (zero, the default, turns it off), without
    /// holding the store: what a real API server costs a client per request (a network round
    /// trip, and for a write an etcd commit), so a benchmark can measure how many requests a
    /// client makes one after another rather than how fast this in-process stand-in runs.
    /// Requests in flight at once are delayed at once, as on a real server.
    pub fn set_latency(&self, latency: std::time::Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.shared.latency.store(nanos, Ordering::SeqCst);
    }

    /// How many requests were received, by the verb authorization sees in each (`get`, `list`,
    /// `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; a non-resource path's
    /// method in lower case): a list and a watch are told apart, which `METHOD /path` is not.
    pub fn request_counts(&self) -> std::collections::BTreeMap<String, u64> {
        self.shared
            .verbs
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// Every HTTP request received, as `METHOD /path` (no query), in order.
    pub fn requests(&self) -> Vec<String> {
        self.shared
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Ends every open watch stream, as when an API server restarts.
    pub fn drop_watches(&self) {
        self.shared.epoch.send_modify(|e| *e += 1);
    }

    /// Forgets the event history: a watch from an older resourceVersion gets 410 Gone.
    pub fn compact_history(&self) {
        self.shared.lock().compact();
    }

    /// Registers every CustomResourceDefinition of a multi-document YAML (other documents are
    /// ignored); returns how many.
    pub fn install_crds(&self, yaml: &str) -> Result<usize, KubeStandInError> {
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(yaml).map_err(|e| KubeStandInError::Crds(e.to_string()))?;
        let mut n = 0;
        for doc in docs {
            if doc["kind"] == "CustomResourceDefinition"
                && doc["apiVersion"] == "apiextensions.k8s.io/v1"
            {
                self.put(doc)?;
                n += 1;
            }
        }
        Ok(n)
    }

    fn install_crd_files(&self, filter: impl Fn(&str) -> bool) -> Result<usize, KubeStandInError> {
        let dir = crd_dir();
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| KubeStandInError::Crds(format!("{}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&filter))
            .collect();
        names.sort();
        let mut n = 0;
        for path in names {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| KubeStandInError::Crds(format!("{}: {e}", path.display())))?;
            n += self.install_crds(&text)?;
        }
        Ok(n)
    }

    /// Installs what a management cluster with Cluster API, CAPAS and etcdadm has: the CRDs of
    /// the reference data (not the EKS Anywhere ones), Machine and MachineSet
    /// (`cluster.x-k8s.io` v1beta1 and v1beta2), namespace `capas-system` and an available
    /// Deployment `capas-system/capas-controller-manager`.
    pub fn install_capi(&self) -> Result<usize, KubeStandInError> {
        let n = self.install_crd_files(|name| {
            name.ends_with(".yaml") && !name.starts_with("anywhere.eks.amazonaws.com_")
        })?;
        for version in ["v1beta1", "v1beta2"] {
            let api_version = format!("cluster.x-k8s.io/{version}");
            self.register(&api_version, "Machine", "machines", true, true);
            self.register(&api_version, "MachineSet", "machinesets", true, true);
        }
        self.put(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "capas-system"}}),
        )?;
        self.put(json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "capas-controller-manager", "namespace": "capas-system", "labels": {"control-plane": "controller-manager", "cluster.x-k8s.io/provider": "infrastructure-snow"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"control-plane": "controller-manager"}}, "template": {"metadata": {"labels": {"control-plane": "controller-manager"}}, "spec": {"containers": [{"name": "manager", "image": "public.ecr.aws/l0g8r8j6/aws/cluster-api-provider-aws-snow/manager:v0.2.8"}]}}},
            "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1, "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.", "lastTransitionTime": clock::now_rfc3339(), "lastUpdateTime": clock::now_rfc3339()}
            ]}
        }))?;
        Ok(n)
    }

    /// Installs the four `anywhere.eks.amazonaws.com` CRDs of the reference data.
    pub fn install_eksa_crds(&self) -> Result<usize, KubeStandInError> {
        self.install_crd_files(|name| {
            name.starts_with("anywhere.eks.amazonaws.com_") && name.ends_with(".yaml")
        })
    }

    /// Starts the simulated Cluster API controllers (see [`capi`]); they stop when the handle drops.
    pub fn start_capi(&self, options: CapiOptions) -> CapiHandle {
        capi::start(self.shared.clone(), options)
    }

    /// Starts the simulated deployment controller (see [`workloads`]); it stops when the handle
    /// drops.
    pub fn start_workloads(&self, options: WorkloadOptions) -> WorkloadHandle {
        workloads::start(self.shared.clone(), options)
    }

    /// Starts the simulated Flux source-controller and kustomize-controller (see [`flux`]); they
    /// act once Flux is installed and stop when the handle drops. Fails only when its artifact
    /// storage (a temporary directory) cannot be made.
    pub fn start_flux(&self, options: FluxOptions) -> std::io::Result<FluxHandle> {
        flux::start(self.shared.clone(), options)
    }

    /// The CustomResourceDefinition `name`, when created or updated from now on, stays
    /// `Established=False` and its kinds unserved.
    pub fn never_establish(&self, name: &str) {
        self.shared.lock().never_established.insert(name.to_owned());
    }

    /// The CustomResourceDefinition `name`, each time it is created from now on, becomes
    /// Established only `delay` later (`Established=False` and its kinds unserved until then:
    /// an object of its kind gets 404), as a real API server establishes a CRD a moment after
    /// creating it. Call inside a tokio runtime: a task looks every 10 ms.
    pub fn establish_after(&self, name: &str, delay: std::time::Duration) {
        self.shared
            .lock()
            .establish_delays
            .insert(name.to_owned(), delay);
        if self.shared.establisher.swap(true, Ordering::SeqCst) {
            return;
        }
        let shared = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                shared.lock().establish_due();
            }
        });
    }

    /// Stops listening and cuts every connection: clients then fail to connect.
    pub fn stop(&self) {
        if let Some(task) = self.task.lock().ok().and_then(|mut t| t.take()) {
            task.stop();
        }
        self.drop_watches();
    }

    /// Whether [`KubeStandIn::stop`] has not been called.
    pub fn is_running(&self) -> bool {
        self.task.lock().map(|t| t.is_some()).unwrap_or(false)
    }
}

impl Drop for KubeStandIn {
    fn drop(&mut self) {
        self.stop();
    }
}
