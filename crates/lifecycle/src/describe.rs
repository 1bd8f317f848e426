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
    let controller = declared_cluster(mgmt, cluster)
        .await?
        .as_ref()
        .map(Reconciled::of);
    let Some(root) = found else {
        return Ok(Described {
            cluster: cluster.to_owned(),
            root: None,
            cni: None,
            api_server_certificate: None,
            controller,
            observed: None,
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
    Ok(Described {
        cluster: cluster.to_owned(),
        root: Some(node(&root, children)),
        cni,
        api_server_certificate,
        controller,
        observed,
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
