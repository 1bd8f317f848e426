//! A support bundle: what the people who help need when a cluster at a disconnected site is in
//! trouble, read from the management cluster and the workload cluster, with an analysis on top.
//!
//! [`collect`] reads, for one cluster: its EKS Anywhere objects, its Cluster API, kubeadm, CAPAS
//! and etcdadm objects (status included), the Secrets beside them as name, type and key names
//! only, the events of those namespaces, the pods and the last lines of the logs of the provider
//! namespaces ([`PROVIDER_NAMESPACES`]), of the snowctl controller and of Flux (with its
//! GitRepositories and Kustomizations, when Flux is installed); then, through the
//! kubeconfig Cluster API publishes, the workload cluster's Nodes, its `kube-system` pods,
//! events, Deployments, Secrets (names only) and logs, and Cilium's DaemonSet and operator.
//!
//! Never collected: a Secret's data, a container's environment values and a bootstrap file's
//! content (replaced by [`REDACTED`]), the user information of a URL in an object,
//! `managedFields` and the last-applied annotation (a copy of what was applied). Logs are kept
//! as the containers wrote them.
//!
//! Bounded ([`BundleOptions`]): the last [`BundleOptions::log_tail_lines`] lines and at most
//! [`BundleOptions::log_limit_bytes`] of each container's log, the logs of at most
//! [`BundleOptions::max_pods_per_namespace`] pods a namespace, at most
//! [`BundleOptions::max_bytes`] in all (what would pass it is left out and said in the
//! summary), each request within [`BundleOptions::request_timeout`] and the whole within
//! [`BundleOptions::deadline`]. What could not be read is said in the summary, not an error:
//! only a management cluster that does not answer at all is.

use crate::{LifecycleError, Management, wait::troubling};
use capi_render::NAMESPACE;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::{Value, json};
use snow_api::release::{ETCD_API_VERSION, INFRA_API_VERSION};
use snow_kube::KubeError;
use std::{
    collections::BTreeSet,
    fmt::Write as _,
    time::{Duration, Instant},
};

/// What replaces a value the bundle never holds.
pub const REDACTED: &str = "<redacted>";

/// The namespaces of the management components whose pods and logs are collected (Cluster
/// API, its kubeadm providers, etcdadm's, CAPAS, cert-manager).
pub const PROVIDER_NAMESPACES: [&str; 7] = [
    "capi-system",
    "capi-kubeadm-bootstrap-system",
    "capi-kubeadm-control-plane-system",
    "etcdadm-bootstrap-provider-system",
    "etcdadm-controller-system",
    "capas-system",
    "cert-manager",
];

/// The EKS Anywhere API version of the declared objects.
const EKSA_API_VERSION: &str = snow_api::names::EKSA_API_VERSION;

/// A machine in another phase than `Running` for longer than this is stuck (a Snow instance
/// boots and joins in a few minutes; EKS Anywhere waits up to an hour for a whole control plane).
pub const STUCK_AFTER: Duration = Duration::from_secs(15 * 60);

/// The bounds of a bundle.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    /// The last lines of each container's log (`tailLines`).
    pub log_tail_lines: i64,
    /// At most this many bytes of each container's log (`limitBytes`).
    pub log_limit_bytes: i64,
    /// The logs of at most this many pods of a namespace (their objects are all kept).
    pub max_pods_per_namespace: usize,
    /// At most this many bytes of files in all, before compression.
    pub max_bytes: usize,
    /// Each request's limit.
    pub request_timeout: Duration,
    /// The whole collection's limit: what is not read by then is left out.
    pub deadline: Duration,
    /// snowctl's version, written as `snowctl/version.txt` (default: this library's, which is
    /// the workspace's and so the snowctl binary's).
    pub snowctl_version: String,
    /// The release catalog in use, as text, written as `snowctl/catalog.txt` when given.
    pub catalog: Option<String>,
}

impl Default for BundleOptions {
    /// 500 lines and 256 KiB a container, 50 pods a namespace, 64 MiB in all, 15 s a request,
    /// 2 minutes in all; this library's version.
    fn default() -> Self {
        BundleOptions {
            log_tail_lines: 500,
            log_limit_bytes: 256 * 1024,
            max_pods_per_namespace: 50,
            max_bytes: 64 * 1024 * 1024,
            request_timeout: Duration::from_secs(15),
            deadline: Duration::from_secs(120),
            snowctl_version: format!("snowctl {}", env!("CARGO_PKG_VERSION")),
            catalog: None,
        }
    }
}

/// Where a problem was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The management cluster.
    Management,
    /// The workload cluster.
    Workload,
    /// A Snowball Edge device.
    Device,
}

/// What kind of problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// A Deployment is not Available.
    DeploymentUnavailable,
    /// A Node is not Ready.
    NodeNotReady,
    /// A Machine has been in a phase other than `Running` for longer than [`STUCK_AFTER`], or
    /// failed.
    MachineStuck,
    /// A condition that means trouble (as `describe` reads it).
    Condition,
    /// A device did not answer.
    DeviceUnreachable,
    /// The API server's serving certificate expires within
    /// [`capi_render::CERTIFICATES_EXPIRY_DAYS`] days (the control plane should have rolled), or
    /// has expired.
    CertificateExpiring,
}

/// One finding of the analysis.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    /// What kind.
    pub kind: ProblemKind,
    /// Where.
    pub side: Side,
    /// The object, as `Kind namespace/name`.
    pub object: String,
    /// What is wrong, with the reason when there is one.
    pub detail: String,
}

/// The analysis at the top of the bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The cluster.
    pub cluster: String,
    /// The findings, sorted.
    pub problems: Vec<Problem>,
    /// What was not collected or not checked, and why.
    pub notes: Vec<String>,
}

impl Summary {
    /// The summary as text: findings first, then the notes.
    pub fn to_text(&self) -> String {
        let mut out = format!("Support bundle of cluster {}\n\n", self.cluster);
        if self.problems.is_empty() {
            out.push_str("No problem found.\n");
        } else {
            let _ = writeln!(out, "{} problem(s):", self.problems.len());
            for p in &self.problems {
                let kind = serde_json::to_value(p.kind).unwrap_or_default();
                let side = serde_json::to_value(p.side).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "- [{}] {} ({}): {}",
                    kind.as_str().unwrap_or_default(),
                    p.object,
                    side.as_str().unwrap_or_default(),
                    p.detail
                );
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\nNotes:\n");
            for n in &self.notes {
                let _ = writeln!(out, "- {n}");
            }
        }
        out
    }
}

/// What a device said, for [`SupportBundle::add_devices`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceStatus {
    /// The device's address.
    pub device: String,
    /// Whether any call was answered.
    pub reachable: bool,
    /// The failed calls.
    pub errors: Vec<String>,
}

/// A collected bundle: its files (summary first) and its analysis.
#[derive(Debug, Clone)]
pub struct SupportBundle {
    files: Vec<(String, Vec<u8>)>,
    bytes: usize,
    max_bytes: usize,
    devices: BTreeSet<String>,
    /// The analysis.
    pub summary: Summary,
}

impl SupportBundle {
    /// The files, `summary.txt` and `summary.json` first, each path relative and plain.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let json = serde_json::to_vec_pretty(&self.summary).unwrap_or_default();
        let mut all = vec![
            (
                "summary.txt".to_owned(),
                self.summary.to_text().into_bytes(),
            ),
            ("summary.json".to_owned(), json),
        ];
        all.extend(self.files.iter().cloned());
        all
    }

    /// The devices the cluster's SnowMachineConfigs and AWSSnowMachineTemplates name, for a
    /// device inventory.
    pub fn devices(&self) -> Vec<String> {
        self.devices.iter().cloned().collect()
    }

    /// Adds the device inventory (`devices/inventory.json`, from Describe calls only) and a
    /// problem for each device that did not answer.
    pub fn add_devices(&mut self, inventory_json: String, devices: &[DeviceStatus]) {
        self.add("devices/inventory.json", inventory_json.into_bytes());
        for d in devices.iter().filter(|d| !d.reachable) {
            self.summary.problems.push(Problem {
                kind: ProblemKind::DeviceUnreachable,
                side: Side::Device,
                object: format!("device {}", d.device),
                detail: match d.errors.first() {
                    Some(e) => e.clone(),
                    None => "no call was answered".into(),
                },
            });
        }
        self.summary.problems.sort();
    }

    /// Adds a file unless it would pass the size limit (then says so in the notes).
    fn add(&mut self, path: &str, bytes: Vec<u8>) {
        if self.bytes + bytes.len() > self.max_bytes {
            self.summary.notes.push(format!(
                "{path} left out: the bundle's {} byte limit",
                self.max_bytes
            ));
            return;
        }
        self.bytes += bytes.len();
        self.files.push((path.to_owned(), bytes));
    }

    /// Adds `value` as pretty JSON, the user information of every URL in it (a GitRepository's
    /// `https://user:token@…`) replaced by `<redacted>`.
    fn add_json(&mut self, path: &str, value: &Value) {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        let mut bytes = snow_api::redact::redact_userinfo(&text)
            .into_owned()
            .into_bytes();
        bytes.push(b'\n');
        self.add(path, bytes);
    }
}

/// The collection's state: the bundle so far, the clock and the bounds.
struct Collector<'a> {
    bundle: SupportBundle,
    opts: &'a BundleOptions,
    start: Instant,
    out_of_time: bool,
    /// The `systemNamespace` of the declared Cluster's FluxConfig, when it names one.
    flux_namespace: Option<String>,
}

impl Collector<'_> {
    /// Runs one request within the request timeout and what is left of the deadline; `None`
    /// (and a note) when it fails or runs out of time.
    async fn bounded<T>(
        &mut self,
        what: &str,
        request: impl Future<Output = Result<T, impl std::fmt::Display>>,
    ) -> Option<T> {
        let left = self.opts.deadline.saturating_sub(self.start.elapsed());
        if left.is_zero() {
            if !self.out_of_time {
                self.out_of_time = true;
                self.note(format!(
                    "the collection stopped at its {} s limit: what was not read by then is left out",
                    self.opts.deadline.as_secs()
                ));
            }
            return None;
        }
        match tokio::time::timeout(left.min(self.opts.request_timeout), request).await {
            Ok(Ok(value)) => Some(value),
            Ok(Err(e)) => {
                self.note(format!("{what}: {e}"));
                None
            }
            Err(_) => {
                self.note(format!("{what}: no answer within the time limit"));
                None
            }
        }
    }

    fn note(&mut self, note: String) {
        self.bundle.summary.notes.push(note);
    }

    fn problem(&mut self, kind: ProblemKind, side: Side, object: String, detail: String) {
        self.bundle.summary.problems.push(Problem {
            kind,
            side,
            object,
            detail,
        });
    }
}

/// Collects the support bundle of `cluster` from the management cluster `mgmt` (and its
/// workload cluster, reached through the kubeconfig Cluster API publishes). An error only when
/// the management cluster does not answer; everything else left out is said in the summary.
pub async fn collect(
    mgmt: &Management,
    cluster: &str,
    opts: &BundleOptions,
) -> Result<SupportBundle, LifecycleError> {
    tokio::time::timeout(opts.request_timeout, mgmt.ping())
        .await
        .map_err(|_| KubeError::Unreachable {
            server: mgmt.server().to_owned(),
            reason: "no answer within the time limit".into(),
        })??;
    let mut c = Collector {
        bundle: SupportBundle {
            files: Vec::new(),
            bytes: 0,
            max_bytes: opts.max_bytes,
            devices: BTreeSet::new(),
            summary: Summary {
                cluster: cluster.to_owned(),
                ..Summary::default()
            },
        },
        opts,
        start: Instant::now(),
        out_of_time: false,
        flux_namespace: None,
    };
    let mut version = opts.snowctl_version.clone();
    version.push('\n');
    c.bundle.add("snowctl/version.txt", version.into_bytes());
    if let Some(catalog) = &opts.catalog {
        c.bundle
            .add("snowctl/catalog.txt", catalog.clone().into_bytes());
    }
    catalog_and_inventory(&mut c, mgmt, cluster).await;
    let (names, declared_ns) = management_objects(&mut c, mgmt, cluster).await;
    management_secrets(&mut c, mgmt, cluster, declared_ns.as_deref()).await;
    events(&mut c, mgmt, Side::Management, NAMESPACE, Some(&names)).await;
    for ns in PROVIDER_NAMESPACES {
        pods_and_logs(&mut c, mgmt, Side::Management, ns, None).await;
        deployments(&mut c, mgmt, Side::Management, ns).await;
        events(&mut c, mgmt, Side::Management, ns, None).await;
    }
    let controller = format!(
        "{}={}",
        capi_render::controller::LABEL,
        capi_render::controller::NAME
    );
    pods_and_logs(&mut c, mgmt, Side::Management, NAMESPACE, Some(&controller)).await;
    deployments(&mut c, mgmt, Side::Management, NAMESPACE).await;
    flux(&mut c, mgmt).await;
    workload(&mut c, mgmt, cluster).await;
    certificate(&mut c, mgmt, cluster).await;
    c.bundle.summary.problems.sort();
    c.bundle.summary.problems.dedup();
    Ok(c.bundle)
}

/// The workload API server's serving certificate, read from a TLS handshake with the server
/// of the published kubeconfig (`crate::certificates`): a problem when it expires within the
/// days the rendered control plane rolls before (`capi_render::CERTIFICATES_EXPIRY_DAYS`), so
/// a roll that did not happen is seen. The other control-plane certificates (etcd, the
/// front proxy) are on the machines, out of reach of a bundle.
async fn certificate(c: &mut Collector<'_>, mgmt: &Management, cluster: &str) {
    let what = format!("the API server certificate of cluster {cluster}");
    let Some(Some(kubeconfig)) = c
        .bounded(&what, crate::live::published_kubeconfig(mgmt, cluster))
        .await
    else {
        return;
    };
    let read = crate::certificates::serving_certificate(cluster, &kubeconfig);
    let Some(certificate) = c.bounded(&what, read).await else {
        return;
    };
    if certificate.days_left < i64::from(capi_render::CERTIFICATES_EXPIRY_DAYS) {
        c.problem(
            ProblemKind::CertificateExpiring,
            Side::Workload,
            format!("the API server of cluster {cluster}"),
            format!("its serving certificate {certificate}"),
        );
    }
    c.bundle.add(
        "workload/api-server-certificate.txt",
        format!("{certificate}\n").into_bytes(),
    );
}

/// Flux's API versions of the objects collected: (API version, kind).
const FLUX_KINDS: [(&str, &str); 2] = [
    ("source.toolkit.fluxcd.io/v1", "GitRepository"),
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
];

/// Flux on the management cluster (EKS Anywhere's GitOps), when its kinds are served: in its
/// namespace (the FluxConfig's `systemNamespace`, else `flux-system`), the GitRepositories and
/// Kustomizations with their statuses, written and analysed (a Kustomization a webhook refused
/// is not Ready, with the refusal as its message), the Secrets as names and keys only (the
/// source Secret holds the repository's key), the controllers' pods, logs, Deployments and
/// events.
async fn flux(c: &mut Collector<'_>, mgmt: &Management) {
    let ns = c
        .flux_namespace
        .clone()
        .unwrap_or_else(|| snow_api::gitops::DEFAULT_SYSTEM_NAMESPACE.to_owned());
    let mut names = BTreeSet::new();
    let mut any = false;
    for (api_version, kind) in FLUX_KINDS {
        let what = format!("whether {api_version} is served");
        if !matches!(
            c.bounded(&what, mgmt.served(api_version)).await,
            Some(Some(_))
        ) {
            continue;
        }
        any = true;
        let what = format!("{kind}s in {ns}");
        let listed = c
            .bounded(&what, mgmt.list(api_version, kind, Some(&ns), None))
            .await
            .unwrap_or_default();
        for o in &listed {
            keep_object(c, Side::Management, "management/flux", o, &mut names);
        }
    }
    if !any {
        return;
    }
    let what = format!("Secrets in {ns}");
    let secrets = c
        .bounded(&what, mgmt.list("v1", "Secret", Some(&ns), None))
        .await
        .unwrap_or_default();
    let shapes: Vec<Value> = secrets.iter().map(secret_shape).collect();
    c.bundle
        .add_json("management/flux/secrets.json", &Value::Array(shapes));
    pods_and_logs(c, mgmt, Side::Management, &ns, None).await;
    deployments(c, mgmt, Side::Management, &ns).await;
    events(c, mgmt, Side::Management, &ns, None).await;
}

/// The release catalog the snowctl controller was installed with (its ConfigMap, when there)
/// and the cluster's snowctl inventory (the spec it was made from, the objects it had).
async fn catalog_and_inventory(c: &mut Collector<'_>, mgmt: &Management, cluster: &str) {
    let inventory = crate::Inventory::name_for(cluster);
    for (name, dir) in [
        (
            capi_render::controller::RELEASE_CONFIGMAP,
            "snowctl/catalog",
        ),
        (inventory.as_str(), "snowctl/inventory"),
    ] {
        let what = format!("ConfigMap {NAMESPACE}/{name}");
        let Some(Some(cm)) = c
            .bounded(&what, mgmt.get("v1", "ConfigMap", Some(NAMESPACE), name))
            .await
        else {
            continue;
        };
        for (key, value) in cm["data"].as_object().into_iter().flatten() {
            let text = value.as_str().unwrap_or_default().as_bytes().to_vec();
            c.bundle.add(&format!("{dir}/{}", plain(key)), text);
        }
    }
}

/// The kinds collected from `eksa-system`: (API group or full version, kind).
fn capi_kinds(contract: snow_api::release::Contract) -> Vec<(String, &'static str)> {
    let core = contract.api_version("cluster.x-k8s.io");
    let bootstrap = contract.api_version("bootstrap.cluster.x-k8s.io");
    let control_plane = contract.api_version("controlplane.cluster.x-k8s.io");
    vec![
        (core.clone(), "Cluster"),
        (core.clone(), "MachineDeployment"),
        (core.clone(), "MachineSet"),
        (core.clone(), "Machine"),
        (core, "MachineHealthCheck"),
        (control_plane, "KubeadmControlPlane"),
        (bootstrap.clone(), "KubeadmConfig"),
        (bootstrap, "KubeadmConfigTemplate"),
        (INFRA_API_VERSION.to_owned(), "AWSSnowCluster"),
        (INFRA_API_VERSION.to_owned(), "AWSSnowMachine"),
        (INFRA_API_VERSION.to_owned(), "AWSSnowMachineTemplate"),
        (INFRA_API_VERSION.to_owned(), "AWSSnowIPPool"),
        (ETCD_API_VERSION.to_owned(), "EtcdadmCluster"),
    ]
}

/// Whether `object` belongs to `cluster`: labelled with it, or named after it (`<cluster>` or
/// `<cluster>-…`, as every object snowctl renders is).
fn of_cluster(object: &Value, cluster: &str) -> bool {
    let meta = &object["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    meta["labels"]["cluster.x-k8s.io/cluster-name"] == cluster
        || name == cluster
        || name.starts_with(&format!("{cluster}-"))
}

/// `Kind namespace/name`.
fn shown(object: &Value) -> String {
    let meta = &object["metadata"];
    let kind = object["kind"].as_str().unwrap_or("?");
    let name = meta["name"].as_str().unwrap_or("?");
    match meta["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The management cluster's objects of `cluster`, written and analysed; returns their names
/// (for the events).
async fn management_objects(
    c: &mut Collector<'_>,
    mgmt: &Management,
    cluster: &str,
) -> (BTreeSet<String>, Option<String>) {
    let mut names = BTreeSet::new();
    // EKS Anywhere's objects: the Cluster and what it names, in its namespace.
    let declared = c
        .bounded(
            "EKS Anywhere Clusters",
            mgmt.list(EKSA_API_VERSION, "Cluster", None, None),
        )
        .await
        .unwrap_or_default();
    let declared = declared
        .into_iter()
        .find(|o| o["metadata"]["name"] == cluster);
    let declared_ns = declared
        .as_ref()
        .and_then(|o| o["metadata"]["namespace"].as_str().map(str::to_owned));
    if let Some(root) = &declared {
        let ns = declared_ns.clone();
        let mut wanted = BTreeSet::new();
        referenced_names(&root["spec"], false, &mut wanted);
        let mut eksa = vec![root.clone()];
        for kind in [
            "SnowDatacenterConfig",
            "SnowMachineConfig",
            "SnowIPPool",
            "FluxConfig",
        ] {
            let what = format!("EKS Anywhere {kind}s");
            let listed = c
                .bounded(
                    &what,
                    mgmt.list(EKSA_API_VERSION, kind, ns.as_deref(), None),
                )
                .await
                .unwrap_or_default();
            for o in listed {
                let name = o["metadata"]["name"].as_str().unwrap_or_default();
                if wanted.contains(name) {
                    // A machine config names its IP pools.
                    referenced_names(&o["spec"], false, &mut wanted);
                    if kind == "FluxConfig" {
                        c.flux_namespace = o["spec"]["systemNamespace"]
                            .as_str()
                            .filter(|n| !n.is_empty())
                            .map(str::to_owned);
                    }
                    if kind == "SnowMachineConfig" {
                        for d in o["spec"]["devices"].as_array().into_iter().flatten() {
                            if let Some(d) = d.as_str() {
                                c.bundle.devices.insert(d.to_owned());
                            }
                        }
                    }
                    eksa.push(o);
                }
            }
        }
        for o in eksa {
            keep_object(c, Side::Management, "management/eksa", &o, &mut names);
        }
    } else {
        c.note(format!(
            "no EKS Anywhere Cluster {cluster} on the management cluster"
        ));
    }
    let contract = c
        .bounded(
            "the Cluster API Cluster",
            crate::live::find_cluster(mgmt, cluster, None),
        )
        .await;
    let Some((contract, found)) = contract else {
        return (names, declared_ns);
    };
    if found.is_none() {
        c.note(format!(
            "no Cluster API Cluster {cluster} on the management cluster"
        ));
    }
    for (api_version, kind) in capi_kinds(contract) {
        let what = format!("{kind}s in {NAMESPACE}");
        let listed = c
            .bounded(&what, mgmt.list(&api_version, kind, Some(NAMESPACE), None))
            .await
            .unwrap_or_default();
        for o in listed.iter().filter(|o| of_cluster(o, cluster)) {
            // The devices CAPAS places the machines on (also when no EKS Anywhere Cluster is
            // declared).
            if kind == "AWSSnowMachineTemplate" {
                let devices = o["spec"]["template"]["spec"]["devices"].as_array();
                for d in devices.into_iter().flatten().filter_map(Value::as_str) {
                    c.bundle.devices.insert(d.to_owned());
                }
            }
            keep_object(c, Side::Management, "management/capi", o, &mut names);
        }
    }
    (names, declared_ns)
}

/// Every `name` under a key ending in `Ref` (or `Refs`) in `value`.
fn referenced_names(value: &Value, in_ref: bool, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if in_ref && k == "name" {
                    if let Some(name) = v.as_str() {
                        out.insert(name.to_owned());
                    }
                } else {
                    referenced_names(v, k.ends_with("Ref") || k.ends_with("Refs"), out);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                referenced_names(v, in_ref, out);
            }
        }
        _ => {}
    }
}

/// Writes a redacted object under `dir/<Kind>/<name>.json` and analyses it.
fn keep_object(
    c: &mut Collector<'_>,
    side: Side,
    dir: &str,
    object: &Value,
    names: &mut BTreeSet<String>,
) {
    let kind = object["kind"].as_str().unwrap_or("Unknown");
    let name = object["metadata"]["name"].as_str().unwrap_or("unnamed");
    names.insert(name.to_owned());
    analyse(c, side, object);
    let clean = redacted(object);
    c.bundle
        .add_json(&format!("{dir}/{kind}/{}.json", plain(name)), &clean);
}

/// A name safe as one path component.
fn plain(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|ch| match ch {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => ch,
            _ => '_',
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".into(),
        _ => cleaned,
    }
}

/// The findings of one object: conditions that mean trouble, a machine stuck, a Deployment not
/// Available, a Node not Ready.
fn analyse(c: &mut Collector<'_>, side: Side, object: &Value) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let status = &object["status"];
    for cond in status["conditions"].as_array().into_iter().flatten() {
        let ctype = cond["type"].as_str().unwrap_or_default();
        let cstatus = cond["status"].as_str().unwrap_or_default();
        if !troubling(api_version, ctype, cstatus) {
            continue;
        }
        let why: Vec<&str> = [&cond["reason"], &cond["message"]]
            .into_iter()
            .filter_map(Value::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        let mut detail = format!("{ctype}={cstatus}");
        if !why.is_empty() {
            let _ = write!(detail, " ({})", why.join(": "));
        }
        let problem = match (kind, ctype) {
            ("Node", "Ready") => ProblemKind::NodeNotReady,
            ("Deployment", "Available") => ProblemKind::DeploymentUnavailable,
            _ => ProblemKind::Condition,
        };
        c.problem(problem, side, shown(object), detail);
    }
    if kind == "Machine" {
        let phase = status["phase"].as_str().unwrap_or("Pending");
        let since = status["lastUpdated"]
            .as_str()
            .or(object["metadata"]["creationTimestamp"].as_str())
            .and_then(|t| t.parse::<Timestamp>().ok());
        let age = since.map(|t| Timestamp::now().duration_since(t));
        let stuck = match age {
            Some(age) => age.as_secs() >= STUCK_AFTER.as_secs() as i64,
            None => true,
        };
        if phase == "Failed" || (phase != "Running" && stuck) {
            let mut detail = format!("phase {phase}");
            if let Some(since) = since {
                let _ = write!(detail, " since {since}");
            }
            if let Some(reason) = status["failureReason"].as_str() {
                let _ = write!(detail, " ({reason}: {})", status["failureMessage"]);
            }
            c.problem(ProblemKind::MachineStuck, side, shown(object), detail);
        }
    }
    if kind == "Deployment" && status["conditions"].as_array().is_none_or(Vec::is_empty) {
        let readiness = crate::wait::deployment_readiness(object);
        if !readiness.done {
            c.problem(
                ProblemKind::DeploymentUnavailable,
                side,
                shown(object),
                readiness.detail,
            );
        }
    }
    if kind == "Node"
        && !status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready")
    {
        c.problem(
            ProblemKind::NodeNotReady,
            side,
            shown(object),
            "no Ready condition".into(),
        );
    }
}

/// `object` without what a bundle never holds: `managedFields`, the last-applied annotation,
/// containers' environment values and bootstrap files' content ([`REDACTED`]). Secrets are not
/// passed here: see [`secret_shape`].
pub fn redacted(object: &Value) -> Value {
    let mut o = object.clone();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    scrub(&mut o);
    o
}

/// Replaces `env[].value` and `files[].content` anywhere in `value`.
fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let field = match k.as_str() {
                    "env" => Some("value"),
                    "files" => Some("content"),
                    _ => None,
                };
                if let (Some(field), Some(items)) = (field, v.as_array_mut()) {
                    for item in items.iter_mut() {
                        if let Some(x) = item.get_mut(field) {
                            *x = Value::String(REDACTED.into());
                        }
                    }
                }
                scrub(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        _ => {}
    }
}

/// A Secret as the bundle holds it: its name, namespace, type and the names of its keys.
pub fn secret_shape(secret: &Value) -> Value {
    let meta = &secret["metadata"];
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for field in ["data", "stringData"] {
        if let Some(map) = secret[field].as_object() {
            keys.extend(map.keys().map(String::as_str));
        }
    }
    json!({
        "name": meta["name"],
        "namespace": meta["namespace"],
        "type": secret["type"],
        "keys": keys,
    })
}

/// The Secrets of `eksa-system` and of the EKS Anywhere Cluster's namespace that belong to
/// `cluster`, as [`secret_shape`]s.
async fn management_secrets(
    c: &mut Collector<'_>,
    mgmt: &Management,
    cluster: &str,
    declared_ns: Option<&str>,
) {
    let mut namespaces = BTreeSet::from([NAMESPACE]);
    namespaces.extend(declared_ns);
    let mut shapes = Vec::new();
    for ns in namespaces {
        let what = format!("Secrets in {ns}");
        let listed = c
            .bounded(&what, mgmt.list("v1", "Secret", Some(ns), None))
            .await
            .unwrap_or_default();
        shapes.extend(
            listed
                .iter()
                .filter(|s| of_cluster(s, cluster))
                .map(secret_shape),
        );
    }
    c.bundle
        .add_json("management/secrets.json", &Value::Array(shapes));
}

/// The events of `ns` (those about `names` only, when given).
async fn events(
    c: &mut Collector<'_>,
    cluster: &Management,
    side: Side,
    ns: &str,
    names: Option<&BTreeSet<String>>,
) {
    let what = format!("events in {ns}");
    let Some(mut listed) = c
        .bounded(&what, cluster.list("v1", "Event", Some(ns), None))
        .await
    else {
        return;
    };
    if let Some(names) = names {
        listed.retain(|e| {
            e["involvedObject"]["name"]
                .as_str()
                .is_some_and(|n| names.contains(n))
        });
    }
    if listed.is_empty() {
        return;
    }
    let listed: Vec<Value> = listed.iter().map(redacted).collect();
    c.bundle.add_json(
        &format!("{}/events/{ns}.json", dir(side)),
        &Value::Array(listed),
    );
}

fn dir(side: Side) -> &'static str {
    match side {
        Side::Management => "management",
        Side::Workload => "workload",
        Side::Device => "devices",
    }
}

/// The Deployments of `ns`, written and analysed.
async fn deployments(c: &mut Collector<'_>, cluster: &Management, side: Side, ns: &str) {
    let what = format!("Deployments in {ns}");
    let listed = c
        .bounded(&what, cluster.list("apps/v1", "Deployment", Some(ns), None))
        .await
        .unwrap_or_default();
    let mut names = BTreeSet::new();
    for d in &listed {
        keep_object(c, side, &format!("{}/{ns}", dir(side)), d, &mut names);
    }
}

/// The pods of `ns` (by `selector`, when given), redacted, and the last lines of their
/// containers' logs.
async fn pods_and_logs(
    c: &mut Collector<'_>,
    cluster: &Management,
    side: Side,
    ns: &str,
    selector: Option<&str>,
) {
    let what = format!("pods in {ns}");
    let listed = c
        .bounded(&what, cluster.list("v1", "Pod", Some(ns), selector))
        .await
        .unwrap_or_default();
    let mut names = BTreeSet::new();
    let base = format!("{}/{ns}", dir(side));
    for (i, pod) in listed.iter().enumerate() {
        keep_object(c, side, &base, pod, &mut names);
        if i >= c.opts.max_pods_per_namespace {
            if i == c.opts.max_pods_per_namespace {
                let max = c.opts.max_pods_per_namespace;
                c.note(format!(
                    "logs of {ns}: only the first {max} of {} pods",
                    listed.len()
                ));
            }
            continue;
        }
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        for container in pod["spec"]["containers"].as_array().into_iter().flatten() {
            let Some(container) = container["name"].as_str() else {
                continue;
            };
            let what = format!("the log of {ns}/{name} container {container}");
            if let Some(text) = c
                .bounded(&what, pod_log(cluster, ns, name, container, c.opts))
                .await
            {
                let path = format!("{base}/logs/{}/{}.log", plain(name), plain(container));
                c.bundle.add(&path, text.into_bytes());
            }
        }
    }
}

/// The last lines of one container's log.
async fn pod_log(
    cluster: &Management,
    ns: &str,
    pod: &str,
    container: &str,
    opts: &BundleOptions,
) -> Result<String, LifecycleError> {
    use k8s_openapi::api::core::v1::Pod;
    let params = kube::api::LogParams {
        container: Some(container.to_owned()),
        tail_lines: Some(opts.log_tail_lines),
        limit_bytes: Some(opts.log_limit_bytes),
        ..kube::api::LogParams::default()
    };
    let pods: kube::Api<Pod> = kube::Api::namespaced(cluster.client().clone(), ns);
    pods.logs(pod, &params)
        .await
        .map_err(|e| cluster.error("get", format!("pods/{pod}/log"), e).into())
}

/// The workload cluster's side, through the kubeconfig Cluster API publishes.
async fn workload(c: &mut Collector<'_>, mgmt: &Management, cluster: &str) {
    let published = c
        .bounded(
            "the workload kubeconfig",
            crate::live::published_kubeconfig(mgmt, cluster),
        )
        .await;
    let Some(Some(published)) = published else {
        c.note(format!(
            "workload cluster: not collected (Secret {NAMESPACE}/{cluster}-kubeconfig is not there)"
        ));
        return;
    };
    let Some(wl) = c
        .bounded("the workload cluster", mgmt.workload(cluster, &published))
        .await
    else {
        return;
    };
    let nodes = c
        .bounded("Nodes", wl.list("v1", "Node", None, None))
        .await
        .unwrap_or_default();
    let mut names = BTreeSet::new();
    for n in &nodes {
        keep_object(c, Side::Workload, "workload/nodes", n, &mut names);
    }
    let ns = "kube-system";
    pods_and_logs(c, &wl, Side::Workload, ns, None).await;
    deployments(c, &wl, Side::Workload, ns).await;
    events(c, &wl, Side::Workload, ns, None).await;
    let ds = c
        .bounded(
            "Cilium's DaemonSet",
            wl.get(
                "apps/v1",
                "DaemonSet",
                Some(crate::cni::CNI_NAMESPACE),
                crate::cni::AGENT_DAEMONSET,
            ),
        )
        .await;
    match ds {
        Some(Some(ds)) => {
            keep_object(c, Side::Workload, "workload/cni", &ds, &mut names);
            let readiness = crate::wait::daemonset_readiness(&ds);
            if !readiness.done {
                c.problem(
                    ProblemKind::Condition,
                    Side::Workload,
                    shown(&ds),
                    format!("not ready: {}", readiness.detail),
                );
            }
        }
        Some(None) => c.problem(
            ProblemKind::Condition,
            Side::Workload,
            format!(
                "DaemonSet {}/{}",
                crate::cni::CNI_NAMESPACE,
                crate::cni::AGENT_DAEMONSET
            ),
            "Cilium is not installed".into(),
        ),
        None => {}
    }
    let secrets = c
        .bounded(
            "Secrets in kube-system",
            wl.list("v1", "Secret", Some(ns), None),
        )
        .await
        .unwrap_or_default();
    let shapes: Vec<Value> = secrets.iter().map(secret_shape).collect();
    c.bundle
        .add_json("workload/secrets.json", &Value::Array(shapes));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_values_and_file_contents_are_replaced() {
        let pod = json!({"metadata": {"name": "p", "managedFields": [{"manager": "x"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"s\":1}", "a": "b"}},
            "spec": {"containers": [{"name": "c", "env": [{"name": "TOKEN", "value": "s3cret"},
                {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k"}}}]}],
                "files": [{"path": "/etc/x", "content": "s3cret"}]}});
        let clean = redacted(&pod);
        let text = clean.to_string();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(!text.contains("managedFields"), "{text}");
        assert!(!text.contains("last-applied"), "{text}");
        assert_eq!(clean["spec"]["containers"][0]["env"][0]["name"], "TOKEN");
        assert_eq!(
            clean["spec"]["containers"][0]["env"][1]["valueFrom"]["secretKeyRef"]["key"],
            "k"
        );
        assert_eq!(clean["spec"]["files"][0]["path"], "/etc/x");
    }

    #[test]
    fn a_secret_is_its_name_type_and_key_names() {
        let s = json!({"metadata": {"name": "s", "namespace": "n"}, "type": "Opaque",
            "data": {"b": "czNjcmV0", "a": "eA=="}, "stringData": {"c": "s3cret"}});
        assert_eq!(
            secret_shape(&s),
            json!({"name": "s", "namespace": "n", "type": "Opaque", "keys": ["a", "b", "c"]})
        );
    }

    #[test]
    fn references_are_followed_by_name() {
        let spec = json!({"datacenterRef": {"kind": "SnowDatacenterConfig", "name": "dc"},
            "controlPlaneConfiguration": {"machineGroupRef": {"name": "cp"}, "count": 1},
            "workerNodeGroupConfigurations": [{"name": "md-0", "machineGroupRef": {"name": "w"}}],
            "network": {"directNetworkInterfaces": [{"ipPoolRef": {"name": "pool"}}]}});
        let mut out = BTreeSet::new();
        referenced_names(&spec, false, &mut out);
        assert_eq!(out, ["cp", "dc", "pool", "w"].map(String::from).into());
    }

    #[test]
    fn names_become_plain_path_components() {
        assert_eq!(plain("a/../b"), "a_.._b");
        assert_eq!(plain(".."), "_");
        assert_eq!(plain("ok-1.x"), "ok-1.x");
    }
}
