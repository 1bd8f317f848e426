//! `describe`: the cluster's objects as a tree with their readiness and conditions, like
//! `clusterctl describe cluster`.

use super::{
    LifecycleError, Management,
    live::{cluster_selector, find_cluster, published_kubeconfig},
};
use crate::certificates::CertificateState;
use capi_render::{NAMESPACE, contract::ETCD_API_VERSION};
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

/// One condition of an object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    /// `Ready`, `Available`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// `True`, `False`, `Unknown`.
    pub status: String,
    /// Why, machine-readable.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Why, for people.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Whether it means trouble as the object's contract reads it (a v1beta2 negative-polarity
    /// condition when True, any other when not True).
    pub trouble: bool,
}

/// One object in the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Ready, when the object says.
    pub ready: Option<bool>,
    /// A one-line summary (`3/3 ready`, a phase).
    pub summary: String,
    /// Its conditions.
    pub conditions: Vec<Condition>,
    /// What belongs to it.
    pub children: Vec<Node>,
}

/// A described cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Described {
    /// The cluster.
    pub cluster: String,
    /// The tree; `None` when the cluster is not there.
    pub root: Option<Node>,
    /// The CNI on the workload cluster (installed images, agents ready), or why it is unknown.
    pub cni: Option<String>,
    /// The workload API server's serving certificate (from a TLS handshake), or why it is
    /// unknown; `None` when the cluster is not there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_server_certificate: Option<crate::certificates::CertificateState>,
    /// What the controller recorded on the EKS Anywhere Cluster of this name, when one is
    /// declared on the management cluster (the kubectl and GitOps path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<Reconciled>,
    /// For an imported cluster: what its last import observed (not a desired state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<crate::import::Observation>,
    /// Where the declared Cluster's spec comes from, when it names a FluxConfig
    /// (`spec.gitOpsRef`): the repository and what Flux last applied of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gitops: Option<GitOpsSource>,
    /// The registry mirror its nodes pull from (`crate::mirror::in_use`), when its spec names
    /// one; whether it answers is filled by a caller that asks it (`answer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_mirror: Option<crate::mirror::RegistryMirror>,
}

/// The GitOps source of a declared Cluster: its FluxConfig (defaults filled as EKS Anywhere
/// fills them) and Flux's Kustomization of that repository on the management cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GitOpsSource {
    /// The FluxConfig, `namespace/name`.
    pub flux_config: String,
    /// The repository's URL with any user information replaced by `<redacted>`; `None` when
    /// the FluxConfig is not found.
    pub url: Option<String>,
    /// The branch Flux syncs from.
    pub branch: String,
    /// The folder of the management cluster's files in the repository.
    pub path: String,
    /// The Kustomization Flux builds that folder with (EKS Anywhere's: named after Flux's
    /// namespace, in it), or why it cannot be read.
    pub kustomization: SyncState,
}

/// What `describe` says of Flux's Kustomization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// Read.
    Read(FluxSync),
    /// Why it could not be read (no FluxConfig, Flux not installed, no Kustomization).
    Unknown(String),
}

/// What Flux's Kustomization says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FluxSync {
    /// `namespace/name`.
    pub name: String,
    /// `status.lastAppliedRevision` (`<branch>@sha1:<commit>`).
    pub last_applied_revision: Option<String>,
    /// `status.lastAttemptedRevision`, when it differs from the applied one.
    pub last_attempted_revision: Option<String>,
    /// Its `Ready` condition.
    pub ready: Option<Condition>,
}

/// Flux's Kustomization API.
const KUSTOMIZE_API_VERSION: &str = "kustomize.toolkit.fluxcd.io/v1";

impl GitOpsSource {
    /// The GitOps source of `declared` (an EKS Anywhere Cluster); `None` when it names no
    /// FluxConfig.
    async fn of(mgmt: &Management, declared: &Value) -> Result<Option<Self>, LifecycleError> {
        let reference = &declared["spec"]["gitOpsRef"];
        let Some(name) = reference["name"].as_str().filter(|n| !n.is_empty()) else {
            return Ok(None);
        };
        if reference["kind"] != "FluxConfig" {
            return Ok(None);
        }
        let ns = declared["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default");
        let found = mgmt
            .get(
                snow_api::names::EKSA_API_VERSION,
                "FluxConfig",
                Some(ns),
                name,
            )
            .await?;
        let spec = found.as_ref().map(|f| &f["spec"]);
        let text = |field: &str| {
            spec.and_then(|s| s[field].as_str())
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        // The defaults of `snow_api::gitops` (EKS Anywhere's).
        let own = declared["metadata"]["name"].as_str().unwrap_or_default();
        let management = declared["spec"]["managementCluster"]["name"]
            .as_str()
            .filter(|m| !m.is_empty())
            .unwrap_or(own);
        let url = spec.map(|s| match s["git"]["repositoryUrl"].as_str() {
            Some(url) => snow_api::redact::redact_userinfo(url).into_owned(),
            None => format!(
                "ssh://git@github.com/{}/{}",
                s["github"]["owner"].as_str().unwrap_or_default(),
                s["github"]["repository"].as_str().unwrap_or_default()
            ),
        });
        let system = text("systemNamespace")
            .unwrap_or_else(|| snow_api::gitops::DEFAULT_SYSTEM_NAMESPACE.to_owned());
        let kustomization = match found {
            None => SyncState::Unknown(format!(
                "FluxConfig {ns}/{name} is not on the management cluster"
            )),
            Some(_) if mgmt.served(KUSTOMIZE_API_VERSION).await?.is_none() => SyncState::Unknown(
                format!("{KUSTOMIZE_API_VERSION} is not served: Flux is not installed"),
            ),
            Some(_) => match mgmt
                .get(
                    KUSTOMIZE_API_VERSION,
                    "Kustomization",
                    Some(&system),
                    &system,
                )
                .await?
            {
                None => SyncState::Unknown(format!("Kustomization {system}/{system} not found")),
                Some(k) => SyncState::Read(FluxSync::of(&k)),
            },
        };
        Ok(Some(GitOpsSource {
            flux_config: format!("{ns}/{name}"),
            url,
            branch: text("branch").unwrap_or_else(|| snow_api::gitops::DEFAULT_BRANCH.to_owned()),
            path: text("clusterConfigPath")
                .unwrap_or_else(|| snow_api::gitops::default_cluster_config_path(management)),
            kustomization,
        }))
    }

    fn to_text(&self) -> String {
        let mut out = format!(
            "GitOps: FluxConfig {}: {} branch {}, path {}\n",
            self.flux_config,
            self.url.as_deref().unwrap_or("(not found)"),
            self.branch,
            self.path
        );
        match &self.kustomization {
            SyncState::Unknown(why) => {
                let _ = writeln!(out, "    Kustomization unknown: {why}");
            }
            SyncState::Read(sync) => {
                let _ = write!(
                    out,
                    "    Kustomization {}: last applied {}",
                    sync.name,
                    sync.last_applied_revision
                        .as_deref()
                        .unwrap_or("nothing yet")
                );
                if let Some(attempted) = &sync.last_attempted_revision {
                    let _ = write!(out, ", last attempted {attempted}");
                }
                match &sync.ready {
                    Some(c) => {
                        let why = [c.reason.as_str(), c.message.trim_end()]
                            .into_iter()
                            .filter(|s| !s.is_empty())
                            .collect::<Vec<_>>()
                            .join(": ");
                        let _ = writeln!(out, ", Ready={} {why}", c.status);
                    }
                    None => out.push_str(", no Ready condition yet\n"),
                }
            }
        }
        out
    }
}

impl FluxSync {
    fn of(kustomization: &Value) -> FluxSync {
        let status = &kustomization["status"];
        let revision = |field: &str| status[field].as_str().map(str::to_owned);
        let applied = revision("lastAppliedRevision");
        let attempted = revision("lastAttemptedRevision").filter(|a| Some(a) != applied.as_ref());
        let meta = &kustomization["metadata"];
        FluxSync {
            name: format!(
                "{}/{}",
                meta["namespace"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default()
            ),
            last_applied_revision: applied,
            last_attempted_revision: attempted,
            ready: conditions(kustomization)
                .into_iter()
                .find(|c| c.kind == "Ready"),
        }
    }
}

/// What a controller last recorded in an EKS Anywhere Cluster's status. A reconcile that finds
/// nothing changed writes nothing, so the time is that of the last reconcile that changed the
/// status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reconciled {
    /// The Cluster's namespace.
    pub namespace: String,
    /// Who last wrote the status (its field manager) and when (RFC 3339), from the Cluster's
    /// `managedFields`.
    pub last_written: Option<(String, String)>,
    /// The generation of the spec the status describes, and the current one.
    pub observed_generation: Option<i64>,
    /// The Cluster's current generation.
    pub generation: Option<i64>,
    /// The `Ready` condition's status.
    pub ready: Option<String>,
    /// `status.failureReason` and `status.failureMessage`, when the last reconcile failed.
    pub failure: Option<(String, String)>,
}

impl Reconciled {
    /// What the status of EKS Anywhere Cluster `cluster` says.
    pub fn of(cluster: &Value) -> Reconciled {
        let meta = &cluster["metadata"];
        let status = &cluster["status"];
        let last_written = meta["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["subresource"] == "status")
            .filter_map(|e| Some((e["manager"].as_str()?, e["time"].as_str()?)))
            .max_by(|a, b| a.1.cmp(b.1))
            .map(|(m, t)| (m.to_owned(), t.to_owned()));
        let ready = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Ready")
            .and_then(|c| c["status"].as_str().map(str::to_owned));
        let failure = status["failureReason"].as_str().map(|r| {
            let message = status["failureMessage"].as_str().unwrap_or_default();
            (r.to_owned(), message.to_owned())
        });
        Reconciled {
            namespace: meta["namespace"].as_str().unwrap_or_default().to_owned(),
            last_written,
            observed_generation: status["observedGeneration"].as_i64(),
            generation: meta["generation"].as_i64(),
            ready,
            failure,
        }
    }

    fn to_text(&self) -> String {
        let mut out = format!("Controller ({} Cluster): ", self.namespace);
        match &self.last_written {
            Some((manager, time)) => {
                let _ = write!(out, "status last changed {time} by {manager}");
            }
            None => out.push_str("no status written yet"),
        }
        if let (Some(observed), Some(generation)) = (self.observed_generation, self.generation) {
            let _ = write!(out, ", generation {observed} of {generation} observed");
        }
        if let Some(ready) = &self.ready {
            let _ = write!(out, ", Ready={ready}");
        }
        out.push('\n');
        if let Some((reason, message)) = &self.failure {
            let _ = writeln!(out, "    failure: {reason}: {message}");
        }
        out
    }
}

/// The EKS Anywhere Cluster named `cluster` in any namespace, if its kind is served.
async fn declared_cluster(
    mgmt: &Management,
    cluster: &str,
) -> Result<Option<Value>, LifecycleError> {
    let all = mgmt
        .list(snow_api::names::EKSA_API_VERSION, "Cluster", None, None)
        .await?;
    Ok(all.into_iter().find(|c| c["metadata"]["name"] == cluster))
}

fn conditions(object: &Value) -> Vec<Condition> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| Condition {
            kind: text(&c["type"]),
            status: text(&c["status"]),
            reason: text(&c["reason"]),
            message: text(&c["message"]),
            trouble: crate::wait::troubling(
                api_version,
                c["type"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
            ),
        })
        .collect()
}

fn node(object: &Value, children: Vec<Node>) -> Node {
    let status = &object["status"];
    let conditions = conditions(object);
    let by_condition = conditions
        .iter()
        .find(|c| c.kind == "Ready" || c.kind == "Available")
        .map(|c| c.status == "True");
    let kind = object["kind"].as_str().unwrap_or_default().to_owned();
    let all_replicas = object["spec"]["replicas"]
        .as_u64()
        .map(|want| status["readyReplicas"].as_u64().unwrap_or(0) >= want);
    let ready = match kind.as_str() {
        "Machine" => conditions
            .iter()
            .find(|c| c.kind == "Ready")
            .map(|c| c.status == "True")
            .or_else(|| status["phase"].as_str().map(|p| p == "Running")),
        "AWSSnowCluster" | "EtcdadmCluster" => status["ready"].as_bool().or(by_condition),
        // Available alone says the API servers answer; ready means every machine's Node is.
        "KubeadmControlPlane" | "MachineDeployment" => match (all_replicas, by_condition) {
            (Some(all), Some(c)) => Some(all && c),
            (all, c) => all.or(c),
        },
        _ => by_condition,
    };
    let mut summary = Vec::new();
    if let Some(want) = object["spec"]["replicas"].as_u64() {
        let ready_replicas = status["readyReplicas"].as_u64().unwrap_or(0);
        summary.push(format!("{ready_replicas}/{want} ready"));
    }
    if let Some(phase) = status["phase"].as_str() {
        summary.push(phase.to_owned());
    }
    if let Some(version) = object["spec"]["version"]
        .as_str()
        .or(object["spec"]["template"]["spec"]["version"].as_str())
    {
        summary.push(version.to_owned());
    }
    if kind == "Machine"
        && let Some(age) = object["metadata"]["creationTimestamp"]
            .as_str()
            .and_then(|t| crate::certificates::age(t, Timestamp::now()))
    {
        summary.push(format!("age {age}"));
    }
    Node {
        kind,
        name: object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        ready,
        summary: summary.join(", "),
        conditions,
        children,
    }
}

/// Describes cluster `cluster`; `root` is `None` when it is not on the management cluster.
pub async fn describe(mgmt: &Management, cluster: &str) -> Result<Described, LifecycleError> {
    let (contract, found) = find_cluster(mgmt, cluster, None).await?;
    let declared = declared_cluster(mgmt, cluster).await?;
    let controller = declared.as_ref().map(Reconciled::of);
    let gitops = match &declared {
        Some(d) => GitOpsSource::of(mgmt, d).await?,
        None => None,
    };
    let Some(root) = found else {
        return Ok(Described {
            cluster: cluster.to_owned(),
            root: None,
            cni: None,
            api_server_certificate: None,
            controller,
            observed: None,
            gitops,
            registry_mirror: None,
        });
    };
    let ns = Some(NAMESPACE);
    let core = contract.api_version("cluster.x-k8s.io");
    let selector = cluster_selector(cluster);
    let mut machines = mgmt.list(&core, "Machine", ns, Some(&selector)).await?;
    machines.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let mut take = |pred: &dyn Fn(&Value) -> bool| -> Vec<Node> {
        let (mine, rest): (Vec<Value>, Vec<Value>) = machines.drain(..).partition(|m| pred(m));
        machines = rest;
        mine.iter().map(|m| node(m, Vec::new())).collect()
    };
    let label = |m: &Value, key: &str| m["metadata"]["labels"][key].as_str().map(str::to_owned);
    let mut children = Vec::new();
    if let Some(infra) = root["spec"]["infrastructureRef"]["name"].as_str()
        && let Some(o) = mgmt
            .get(
                capi_render::contract::INFRA_API_VERSION,
                "AWSSnowCluster",
                ns,
                infra,
            )
            .await?
    {
        children.push(node(&o, Vec::new()));
    }
    if let Some(kcp) = mgmt
        .get(
            &contract.api_version("controlplane.cluster.x-k8s.io"),
            "KubeadmControlPlane",
            ns,
            cluster,
        )
        .await?
    {
        let cp = take(&|m| label(m, "cluster.x-k8s.io/control-plane").is_some());
        children.push(node(&kcp, cp));
    }
    if let Some(etcd) = mgmt
        .get(
            ETCD_API_VERSION,
            "EtcdadmCluster",
            ns,
            &format!("{cluster}-etcd"),
        )
        .await?
    {
        let etcd_machines = take(&|m| {
            label(m, "cluster.x-k8s.io/etcd-cluster").is_some()
                || label(m, "cluster.x-k8s.io/deployment-name").is_none()
        });
        children.push(node(&etcd, etcd_machines));
    }
    let mut deployments = mgmt
        .list(&core, "MachineDeployment", ns, Some(&selector))
        .await?;
    deployments.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    for md in &deployments {
        let name = md["metadata"]["name"].as_str().map(str::to_owned);
        let mine = take(&|m| label(m, "cluster.x-k8s.io/deployment-name") == name);
        children.push(node(md, mine));
    }
    // Machines no group claimed (rare: being deleted, or made by hand).
    let rest = take(&|_| true);
    children.extend(rest);
    // The workload cluster may not answer from here: that is said, not a failure of describe.
    let cni = match crate::cni::cni_state(mgmt, cluster).await {
        Ok(Some(state)) => Some(state.to_string()),
        Ok(None) => Some("the workload cluster's kubeconfig is not published yet".into()),
        Err(e) => Some(format!("unknown: {e}")),
    };
    let api_server_certificate = Some(match published_kubeconfig(mgmt, cluster).await {
        Ok(Some(kubeconfig)) => {
            match crate::certificates::serving_certificate(cluster, &kubeconfig).await {
                Ok(read) => CertificateState::Read(read),
                Err(e) => CertificateState::Unknown(e.to_string()),
            }
        }
        Ok(None) => CertificateState::Unknown(
            "the workload cluster's kubeconfig is not published yet".into(),
        ),
        Err(e) => CertificateState::Unknown(e.to_string()),
    });
    let observed = match crate::import::is_imported(&root) {
        true => crate::import::observed(mgmt, cluster).await?,
        false => None,
    };
    let registry_mirror = crate::mirror::in_use(mgmt, cluster, declared.as_ref()).await?;
    Ok(Described {
        cluster: cluster.to_owned(),
        root: Some(node(&root, children)),
        cni,
        api_server_certificate,
        controller,
        observed,
        gitops,
        registry_mirror,
    })
}

impl Described {
    /// The tree as text, one object a line, with the conditions that are not true.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        match &self.root {
            None => {
                let _ = writeln!(
                    out,
                    "cluster {} is not on the management cluster",
                    self.cluster
                );
            }
            Some(root) => write_node(&mut out, root, "", "", true),
        }
        if let Some(cni) = &self.cni {
            let _ = writeln!(out, "CNI: {cni}");
        }
        if let Some(certificate) = &self.api_server_certificate {
            let _ = writeln!(out, "API server certificate: {certificate}");
        }
        if let Some(controller) = &self.controller {
            out.push_str(&controller.to_text());
        }
        if let Some(gitops) = &self.gitops {
            out.push_str(&gitops.to_text());
        }
        if let Some(o) = &self.observed {
            let _ = writeln!(
                out,
                "Imported observe-only; observed (not desired): endpoint {}:{}, {} node(s)",
                o.endpoint.host,
                o.endpoint.port,
                o.nodes.len()
            );
            for n in &o.nodes {
                let role = if n.is_control_plane() {
                    "control-plane"
                } else {
                    "worker"
                };
                let place = n.instance.as_ref().map_or_else(
                    || "no instance found".to_owned(),
                    |i| {
                        format!(
                            "{} {} {} {}",
                            i.device,
                            i.id,
                            i.instance_type,
                            i.image_id.as_deref().unwrap_or("-")
                        )
                    },
                );
                let ready = if n.ready { "Ready" } else { "NotReady" };
                let _ = writeln!(
                    out,
                    "  {} {role} {} {ready} on {place}",
                    n.name, n.kubelet_version
                );
            }
        }
        out
    }
}

fn write_node(out: &mut String, node: &Node, lead: &str, child_lead: &str, root: bool) {
    let mark = match node.ready {
        Some(true) => "✓",
        Some(false) => "✗",
        None => "·",
    };
    let summary = if node.summary.is_empty() {
        String::new()
    } else {
        format!("  {}", node.summary)
    };
    let _ = writeln!(out, "{lead}{mark} {}/{}{summary}", node.kind, node.name);
    let pad = if root { "" } else { child_lead };
    for c in node.conditions.iter().filter(|c| c.trouble) {
        let why = [c.reason.as_str(), c.message.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        let _ = writeln!(out, "{pad}    {}={} {why}", c.kind, c.status);
    }
    let count = node.children.len();
    for (i, child) in node.children.iter().enumerate() {
        let last = i + 1 == count;
        let (branch, next) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        write_node(
            out,
            child,
            &format!("{pad}{branch}"),
            &format!("{pad}{next}"),
            false,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kcp(api: &str) -> Value {
        json!({"apiVersion": api, "kind": "KubeadmControlPlane", "metadata": {"name": "edge"},
        "spec": {"replicas": 3, "version": "v1.33.1"},
        "status": {"readyReplicas": 3, "conditions": [
            {"type": "Available", "status": "True"},
            {"type": "RollingOut", "status": "False", "reason": "NotRollingOut"},
            {"type": "ScalingUp", "status": "False", "reason": "NotScalingUp"},
            {"type": "Paused", "status": "False"},
            {"type": "Deleting", "status": "True", "reason": "Deleting", "message": "drain"},
        ]}})
    }

    #[test]
    fn only_conditions_that_mean_trouble_are_shown_per_contract() {
        let text = |api: &str| {
            Described {
                cluster: "edge".into(),
                root: Some(node(&kcp(api), Vec::new())),
                cni: None,
                api_server_certificate: None,
                controller: None,
                observed: None,
                gitops: None,
                registry_mirror: None,
            }
            .to_text()
        };
        let v2 = text("controlplane.cluster.x-k8s.io/v1beta2");
        assert_eq!(
            v2,
            "✓ KubeadmControlPlane/edge  3/3 ready, v1.33.1\n    Deleting=True Deleting: drain\n"
        );
        // On v1beta1 every condition is positive: False ones are named, a True Deleting is not.
        let v1 = text("controlplane.cluster.x-k8s.io/v1beta1");
        assert!(v1.contains("RollingOut=False NotRollingOut"), "{v1}");
        assert!(!v1.contains("Deleting=True"), "{v1}");
    }

    #[test]
    fn the_controller_line_says_the_last_status_write_and_the_failure() {
        let cluster = json!({"metadata": {"name": "edge", "namespace": "default", "generation": 2,
            "managedFields": [
                {"manager": "kubectl", "operation": "Update", "time": "2026-01-01T00:00:00Z"},
                {"manager": "snowctl-controller", "operation": "Update", "subresource": "status", "time": "2026-01-02T00:00:00Z"},
                {"manager": "other", "operation": "Update", "subresource": "status", "time": "2026-01-01T12:00:00Z"}]},
            "status": {"observedGeneration": 2, "failureReason": "MachineConfigInvalid",
                "failureMessage": "Invalid edge SnowMachineConfig: AMI ami-x is not on device 192.168.1.11",
                "conditions": [{"type": "Ready", "status": "False"}]}});
        assert_eq!(
            Reconciled::of(&cluster).to_text(),
            "Controller (default Cluster): status last changed 2026-01-02T00:00:00Z by snowctl-controller, generation 2 of 2 observed, Ready=False\n    failure: MachineConfigInvalid: Invalid edge SnowMachineConfig: AMI ami-x is not on device 192.168.1.11\n"
        );
    }

    #[test]
    fn a_control_plane_with_machines_not_ready_is_not_ready_though_available() {
        let mut o = kcp("controlplane.cluster.x-k8s.io/v1beta2");
        o["status"]["readyReplicas"] = json!(1);
        assert_eq!(node(&o, Vec::new()).ready, Some(false));
    }
}
