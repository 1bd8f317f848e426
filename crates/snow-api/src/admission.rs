//! What an admission webhook decides about one object of a Snow cluster (EKS Anywhere's
//! `anywhere.eks.amazonaws.com/v1alpha1` webhooks for Cluster, SnowMachineConfig,
//! SnowDatacenterConfig, SnowIPPool and FluxConfig), as findings: the same rules as `snowctl
//! validate --offline`, and on update EKS Anywhere's update rules ([`crate::immutable`], a
//! SnowIPPool's pools, a FluxConfig's spec).
//!
//! An API server hands a webhook one object at a time, in whatever order `kubectl apply` or a
//! GitOps tool writes them: a Cluster may arrive before its SnowMachineConfigs. So each object is
//! checked alone, with the rules that concern it alone, as EKS Anywhere's webhooks do: it is read
//! as `snowctl validate` reads a file, beside placeholder objects for what it references (so no
//! rule says a referenced object is missing), and only the findings about the object itself
//! count, except `document.unreferenced`. The rules across objects (a reference to an object
//! that does not exist, a namespace that differs from the Cluster's, overlapping pools of two
//! SnowIPPools, the control-plane endpoint inside a pool, the capacity of a machine config
//! shared by several roles, the etcd machines' static addresses) are the controller's: it reads
//! the whole cluster and reports them in the Cluster's status.

use crate::{
    Finding, Report, check,
    crd::Kind,
    finding::shorten,
    gitops::flux_config_changes,
    immutable::{Facts, changes},
    spec::{ClusterSpec, DEFAULT_NAMESPACE, object_id},
    types::{API_VERSION, flux::FluxConfigSpec},
};
use serde_json::{Map, Value, json};

/// The annotation that pauses a Cluster: its reconciliation, and the update rules of the
/// Cluster webhook while the stored Cluster carries it with the value `"true"`.
pub const PAUSED_ANNOTATION: &str = "anywhere.eks.amazonaws.com/paused";

/// The name of the Cluster placed beside an object that is not one (it never shows: only the
/// object's own findings are kept).
const CONTEXT: &str = "admission-context";

/// Only what a user declares of an object the API server stores: apiVersion, kind, name,
/// namespace, labels, annotations (without kubectl's last-applied copy) and spec.
pub fn declared(object: &Value) -> Value {
    let meta = &object["metadata"];
    let mut metadata = Map::new();
    for key in ["name", "namespace", "labels", "annotations"] {
        if !meta[key].is_null() {
            metadata.insert(key.into(), meta[key].clone());
        }
    }
    if let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    let mut out = json!({
        "apiVersion": object["apiVersion"],
        "kind": object["kind"],
        "metadata": metadata,
    });
    if !object["spec"].is_null() {
        out["spec"] = object["spec"].clone();
    }
    out
}

/// Whether a Cluster carries [`PAUSED_ANNOTATION`]` = "true"`.
pub fn is_paused(cluster: &Value) -> bool {
    cluster["metadata"]["annotations"][PAUSED_ANNOTATION] == "true"
}

/// Every finding (errors and warnings) an admission webhook has about `object`: created when
/// `old` is `None`, else updated from `old`. An update that leaves `spec` as it was (a
/// finalizer, a label, the paused annotation) and a write to an object being deleted are not
/// checked, so an object stored before the webhook existed can still be paused and deleted.
pub fn review(object: &Value, old: Option<&Value>) -> Vec<Finding> {
    let Some(old) = old else {
        return object_findings(object);
    };
    if !object["metadata"]["deletionTimestamp"].is_null() {
        return Vec::new();
    }
    let mut findings = update_findings(old, object);
    if object["spec"] != old["spec"] {
        findings.extend(object_findings(object));
    }
    findings
}

/// The kind and `Kind/name` of an object.
fn identity(object: &Value) -> (Option<Kind>, String) {
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    (Kind::from_name(kind), object_id(kind, name))
}

fn named(value: &Value) -> Option<&str> {
    value["name"].as_str().filter(|n| !n.is_empty())
}

/// A placeholder object of `kind` named `name` in `namespace`.
fn placeholder(kind: Kind, name: &str, namespace: &str, spec: Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": kind.as_str(),
        "metadata": {"name": name, "namespace": namespace}, "spec": spec})
}

/// The objects `object` references, as placeholders, or for an object that is not a Cluster, a
/// Cluster that uses it (the rules of a machine config, datacenter or pool run on a spec).
fn context(object: &Value, kind: Kind) -> Vec<Value> {
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or(DEFAULT_NAMESPACE);
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let spec = &object["spec"];
    let mut out = Vec::new();
    let mut reference = |r: &Value, kind: Kind, spec: Value| {
        if r["kind"] == kind.as_str()
            && let Some(name) = named(r)
        {
            let stub = placeholder(kind, name, namespace, spec);
            if !out.contains(&stub) {
                out.push(stub);
            }
        }
    };
    match kind {
        Kind::Cluster => {
            reference(
                &spec["datacenterRef"],
                Kind::SnowDatacenterConfig,
                json!({}),
            );
            let groups = spec["workerNodeGroupConfigurations"].as_array();
            let machine_refs = [
                &spec["controlPlaneConfiguration"]["machineGroupRef"],
                &spec["externalEtcdConfiguration"]["machineGroupRef"],
            ]
            .into_iter()
            .chain(groups.into_iter().flatten().map(|g| &g["machineGroupRef"]));
            for r in machine_refs {
                reference(r, Kind::SnowMachineConfig, json!({}));
            }
            for r in spec["identityProviderRefs"]
                .as_array()
                .into_iter()
                .flatten()
            {
                reference(r, Kind::OIDCConfig, json!({}));
                reference(r, Kind::AWSIamConfig, json!({}));
            }
            reference(&spec["gitOpsRef"], Kind::FluxConfig, json!({}));
        }
        Kind::SnowMachineConfig => {
            let dnis = spec["network"]["directNetworkInterfaces"].as_array();
            for dni in dnis.into_iter().flatten() {
                reference(&dni["ipPoolRef"], Kind::SnowIPPool, json!({}));
            }
            // The control plane's single machine: a config's capacity is checked for one machine.
            let uses =
                json!({"count": 1, "machineGroupRef": {"kind": kind.as_str(), "name": name}});
            let cluster = json!({"controlPlaneConfiguration": uses,
                "datacenterRef": {"kind": Kind::SnowDatacenterConfig.as_str(), "name": CONTEXT}});
            out.push(placeholder(Kind::Cluster, CONTEXT, namespace, cluster));
            out.push(placeholder(
                Kind::SnowDatacenterConfig,
                CONTEXT,
                namespace,
                json!({}),
            ));
        }
        Kind::SnowDatacenterConfig => {
            let cluster = json!({"datacenterRef": {"kind": kind.as_str(), "name": name}});
            out.push(placeholder(Kind::Cluster, CONTEXT, namespace, cluster));
        }
        Kind::SnowIPPool | Kind::OIDCConfig | Kind::AWSIamConfig | Kind::FluxConfig => {
            out.push(placeholder(Kind::Cluster, CONTEXT, namespace, json!({})));
        }
    }
    out
}

/// `object` read as `snowctl validate` reads a file, beside its [`context`]; the report and the
/// object's `Kind/name`. `None` for an object of no Snow kind.
fn lone(object: &Value) -> Option<(Result<Report, Finding>, String)> {
    let (kind, id) = identity(object);
    let kind = kind?;
    let documents = std::iter::once(declared(object)).chain(context(object, kind));
    let text = documents
        .map(|d| serde_json::to_string_pretty(&d).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n---\n");
    Some((check(&text).map_err(|e| e.to_finding(&id)), id))
}

/// The static findings about `object` alone (see the module's documentation for what that
/// leaves out), plus EKS Anywhere's webhook rule that a SnowMachineConfig names its SSH key
/// (`machine-config.ssh-key-name`: on this path no default key is generated). An object of
/// another kind has none.
pub fn object_findings(object: &Value) -> Vec<Finding> {
    let Some((report, id)) = lone(object) else {
        return Vec::new();
    };
    let mut findings: Vec<Finding> = match report {
        Err(finding) => return vec![finding],
        Ok(report) => report
            .findings
            .into_iter()
            .filter(|f| f.object.as_deref() == Some(id.as_str()))
            .filter(|f| f.check != "document.unreferenced")
            .collect(),
    };
    if object["kind"] == Kind::SnowMachineConfig.as_str()
        && object["spec"]["sshKeyName"]
            .as_str()
            .is_none_or(|k| k.trim().is_empty())
    {
        findings.push(
            Finding::error(
                "machine-config.ssh-key-name",
                "SnowMachineConfig SshKeyName must not be empty",
            )
            .object(&id)
            .field("spec.sshKeyName")
            .hint("name a key pair that is on every device: objects applied to a management cluster get no generated key (only a create from a spec file makes one)"),
        );
    }
    findings
}

/// The defaults `snowctl validate` fills in a SnowMachineConfig (instance type, network
/// connector: EKS Anywhere's mutating webhook sets the same two), as `(field path, value)`.
pub fn machine_config_defaults(object: &Value) -> Vec<(String, String)> {
    if object["kind"] != Kind::SnowMachineConfig.as_str() {
        return Vec::new();
    }
    let Some((Ok(report), id)) = lone(object) else {
        return Vec::new();
    };
    report
        .defaults
        .into_iter()
        .filter(|d| d.object == id && d.field.starts_with("spec."))
        .map(|d| (d.field, d.value))
        .collect()
}

/// The findings of EKS Anywhere's update rules, from `old` (the stored object) to `new`: a
/// Cluster's [`crate::immutable`] rules, none while the stored Cluster is paused
/// ([`is_paused`]); a SnowIPPool's pools, which may not change (in any order); a FluxConfig's
/// spec, no field of which may change ([`flux_config_changes`], defaults filled).
pub fn update_findings(old: &Value, new: &Value) -> Vec<Finding> {
    match identity(new).0 {
        Some(Kind::Cluster) if !is_paused(old) => {
            let spec = |object: &Value| -> Option<ClusterSpec> { lone(object)?.0.ok()?.spec };
            // A stored Cluster that cannot be read any more (written before these rules) gives
            // no old facts: the static rules still apply to the new one.
            let (Some(was), Some(is)) = (spec(old), spec(new)) else {
                return Vec::new();
            };
            changes(&Facts::of(&was), &is, "in the stored Cluster")
        }
        Some(Kind::SnowIPPool) => pool_changes(old, new),
        Some(Kind::FluxConfig) => {
            let spec = |object: &Value| {
                serde_json::from_value::<FluxConfigSpec>(object["spec"].clone()).ok()
            };
            let (Some(was), Some(is)) = (spec(old), spec(new)) else {
                return Vec::new();
            };
            flux_config_changes(&was, &is, &identity(new).1, "in the stored FluxConfig")
        }
        _ => Vec::new(),
    }
}

/// Each pool as `ipStart-ipEnd (subnet, gateway)` (each value cut as messages cut it), sorted:
/// the pools compared as a multiset.
fn pools(object: &Value) -> Vec<String> {
    let mut out: Vec<String> = (object["spec"]["pools"].as_array().into_iter().flatten())
        .map(|p| {
            let field = |k: &str| shorten(p[k].as_str().unwrap_or_default()).into_owned();
            format!(
                "{}-{} ({}, {})",
                field("ipStart"),
                field("ipEnd"),
                field("subnet"),
                field("gateway")
            )
        })
        .collect();
    out.sort();
    out
}

/// The pools listed in a message, then how many more.
const POOLS_SHOWN: usize = 4;

/// What `a` holds more of than `b` (both sorted), shown.
fn beyond(a: &[String], b: &[String]) -> String {
    let mut rest = b.to_vec();
    let mut extra = Vec::new();
    for p in a {
        match rest.iter().position(|r| r == p) {
            Some(i) => {
                rest.remove(i);
            }
            None => extra.push(p.as_str()),
        }
    }
    let mut shown = extra
        .iter()
        .take(POOLS_SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if extra.len() > POOLS_SHOWN {
        shown.push_str(&format!(" and {} more", extra.len() - POOLS_SHOWN));
    }
    if shown.is_empty() {
        "none".into()
    } else {
        shown
    }
}

fn pool_changes(old: &Value, new: &Value) -> Vec<Finding> {
    let (was, is) = (pools(old), pools(new));
    if was == is {
        return Vec::new();
    }
    vec![
        Finding::error(
            "ip-pool.immutable",
            format!(
                "the pools of an existing SnowIPPool cannot change: the spec drops {} and adds {}",
                beyond(&was, &is),
                beyond(&is, &was)
            ),
        )
        .object(identity(new).1)
        .field("spec.pools")
        .hint("set them back as the stored SnowIPPool has them; for other addresses, create another SnowIPPool and point the machine configs' DNIs at it"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Value {
        json!({"apiVersion": API_VERSION, "kind": "Cluster",
            "metadata": {"name": "edge", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"kubernetesVersion": "1.33",
                "managementCluster": {"name": "mgmt"},
                "clusterNetwork": {"cniConfig": {"cilium": {}},
                    "pods": {"cidrBlocks": ["10.244.0.0/16"]},
                    "services": {"cidrBlocks": ["10.96.0.0/12"]}},
                "controlPlaneConfiguration": {"count": 3, "endpoint": {"host": "192.168.1.100"},
                    "machineGroupRef": {"kind": "SnowMachineConfig", "name": "edge-cp"}},
                "datacenterRef": {"kind": "SnowDatacenterConfig", "name": "edge"},
                "identityProviderRefs": [{"kind": "AWSIamConfig", "name": "iam"}],
                "workerNodeGroupConfigurations": [{"name": "md-0", "count": 1,
                    "machineGroupRef": {"kind": "SnowMachineConfig", "name": "edge"}}]},
            "status": {"failureReason": "x"}})
    }

    fn machine_config() -> Value {
        json!({"apiVersion": API_VERSION, "kind": "SnowMachineConfig",
            "metadata": {"name": "edge", "namespace": "default"},
            "spec": {"devices": ["192.168.1.11"], "instanceType": "sbe-c.large", "osFamily": "ubuntu",
                "sshKeyName": "edge-key", "physicalNetworkConnector": "SFP_PLUS",
                "network": {"directNetworkInterfaces": [{"index": 1, "primary": true,
                    "ipPoolRef": {"kind": "SnowIPPool", "name": "pool"}}]}}})
    }

    fn pool() -> Value {
        json!({"apiVersion": API_VERSION, "kind": "SnowIPPool",
            "metadata": {"name": "pool", "namespace": "default"},
            "spec": {"pools": [
                {"ipStart": "192.168.1.20", "ipEnd": "192.168.1.40", "subnet": "192.168.1.0/24", "gateway": "192.168.1.1"},
                {"ipStart": "192.168.2.20", "ipEnd": "192.168.2.40", "subnet": "192.168.2.0/24", "gateway": "192.168.2.1"}]}})
    }

    fn datacenter() -> Value {
        json!({"apiVersion": API_VERSION, "kind": "SnowDatacenterConfig",
            "metadata": {"name": "edge", "namespace": "default"},
            "spec": {"identityRef": {"kind": "Secret", "name": "edge-snow-credentials"}}})
    }

    /// `(check, field, message)` of each finding.
    fn said(findings: &[Finding]) -> Vec<(String, String, String)> {
        findings
            .iter()
            .map(|f| {
                let field = f.field.clone().unwrap_or_default();
                (f.check.clone(), field, f.message.clone())
            })
            .collect()
    }

    #[test]
    fn an_object_alone_is_checked_without_the_objects_it_references() {
        // The Cluster names a datacenter, two machine configs and an AWSIamConfig, none given;
        // the machine config names a pool that is not given either.
        for object in [cluster(), machine_config(), pool(), datacenter()] {
            assert_eq!(said(&review(&object, None)), [], "{object:#}");
        }
        // A datacenter without identityRef is defaulted, as `snowctl validate` does.
        let mut bare = datacenter();
        bare["spec"] = json!({});
        assert_eq!(said(&review(&bare, None)), []);
    }

    #[test]
    fn static_rules_are_said_with_their_field_path_and_message() {
        let mut c = cluster();
        c["spec"]["controlPlaneConfiguration"]["endpoint"]["host"] = "api.example.com".into();
        c["spec"]["datacenterRef"]["kind"] = "VSphereDatacenterConfig".into();
        let mut m = machine_config();
        m["spec"]["instanceType"] = "sbe-x.large".into();
        m["spec"]["sshKeyName"] = "".into();
        let mut d = datacenter();
        d["spec"]["identityRef"]["kind"] = "ConfigMap".into();
        let mut p = pool();
        p["spec"]["pools"][1]["ipStart"] = "not-an-ip".into();
        p["spec"]["pools"][0]["ipEnd"] = "192.168.1.250".into();
        let copy = p["spec"]["pools"][0].clone();
        p["spec"]["pools"].as_array_mut().unwrap().push(copy);
        let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
        assert_eq!(
            said(&review(&c, None)),
            [
                s(
                    "cluster.datacenter-ref",
                    "spec.datacenterRef.kind",
                    "datacenterRef kind `VSphereDatacenterConfig` is not SnowDatacenterConfig: snowctl manages Snow clusters only"
                ),
                s(
                    "control-plane.endpoint",
                    "spec.controlPlaneConfiguration.endpoint.host",
                    "control plane endpoint api.example.com is invalid: it must be an IP address"
                ),
            ]
        );
        assert_eq!(
            said(&review(&m, None)),
            [
                s(
                    "machine-config.instance-type",
                    "spec.instanceType",
                    "SnowMachineConfig InstanceType sbe-x.large is not supported"
                ),
                s(
                    "machine-config.ssh-key-name",
                    "spec.sshKeyName",
                    "SnowMachineConfig SshKeyName must not be empty"
                ),
            ]
        );
        assert_eq!(
            said(&review(&d, None)),
            [s(
                "datacenter.identity-ref",
                "spec.identityRef.kind",
                "SnowDatacenterConfig IdentityRef kind ConfigMap is invalid, the only supported kind is Secret"
            )]
        );
        let findings = said(&review(&p, None));
        assert_eq!(
            findings
                .iter()
                .map(|f| (f.0.as_str(), f.1.as_str()))
                .collect::<Vec<_>>(),
            [
                ("ip-pool.address", "spec.pools[1].ipStart"),
                ("ip-pool.overlap", "spec.pools[2]"),
            ],
            "{findings:?}"
        );
    }

    /// One update rule: the change, then `(check, field, message)`.
    type Case = (fn(&mut Value), &'static str, &'static str, &'static str);

    #[test]
    fn every_update_rule_of_a_cluster_is_said_with_its_field_path_and_message() {
        let cases: [Case; 15] = [
            (
                |c| c["spec"]["managementCluster"]["name"] = "other".into(),
                "upgrade.immutable",
                "spec.managementCluster.name",
                "the management cluster cannot change on an existing cluster: it is mgmt in the stored Cluster, other in the spec",
            ),
            (
                |c| c["spec"]["datacenterRef"]["name"] = "other".into(),
                "upgrade.immutable",
                "spec.datacenterRef.name",
                "the datacenter cannot change on an existing cluster: it is edge in the stored Cluster, other in the spec",
            ),
            (
                |c| {
                    c["spec"]["controlPlaneConfiguration"]["endpoint"]["host"] =
                        "192.168.1.101".into()
                },
                "upgrade.immutable",
                "spec.controlPlaneConfiguration.endpoint.host",
                "the control-plane endpoint cannot change on an existing cluster: it is 192.168.1.100 in the stored Cluster, 192.168.1.101 in the spec",
            ),
            (
                |c| c["spec"]["clusterNetwork"]["pods"]["cidrBlocks"][0] = "10.245.0.0/16".into(),
                "upgrade.immutable",
                "spec.clusterNetwork.pods.cidrBlocks",
                "the pod CIDR cannot change on an existing cluster: it is 10.244.0.0/16 in the stored Cluster, 10.245.0.0/16 in the spec",
            ),
            (
                |c| {
                    c["spec"]["clusterNetwork"]["services"]["cidrBlocks"][0] = "10.97.0.0/16".into()
                },
                "upgrade.immutable",
                "spec.clusterNetwork.services.cidrBlocks",
                "the service CIDR cannot change on an existing cluster: it is 10.96.0.0/12 in the stored Cluster, 10.97.0.0/16 in the spec",
            ),
            (
                |c| c["spec"]["clusterNetwork"]["nodes"] = json!({"cidrMaskSize": 25}),
                "upgrade.immutable",
                "spec.clusterNetwork.nodes.cidrMaskSize",
                "the node CIDR mask size cannot change on an existing cluster: it is none in the stored Cluster, 25 in the spec",
            ),
            (
                |c| {
                    c["spec"]["clusterNetwork"]["dns"] =
                        json!({"resolvConf": {"path": "/etc/my.conf"}})
                },
                "upgrade.immutable",
                "spec.clusterNetwork.dns.resolvConf.path",
                "the DNS resolv.conf path cannot change on an existing cluster: it is none in the stored Cluster, /etc/my.conf in the spec",
            ),
            (
                |c| {
                    c["spec"]["proxyConfiguration"] =
                        json!({"httpProxy": "10.0.0.5:3128", "httpsProxy": "10.0.0.5:3128"})
                },
                "upgrade.immutable",
                "spec.proxyConfiguration",
                "the proxy configuration cannot change on an existing cluster: it is none in the stored Cluster, {\"httpProxy\":\"10.0.0.5:3128\",\"httpsProxy\":\"10.0.0.5:3128\"} in the spec",
            ),
            (
                |c| c["spec"]["externalEtcdConfiguration"] = json!({"count": 3, "machineGroupRef": {"kind": "SnowMachineConfig", "name": "etcd"}}),
                "upgrade.immutable",
                "spec.externalEtcdConfiguration",
                "switching from stacked to external etcd is not supported",
            ),
            (
                |c| c["spec"]["gitOpsRef"] = json!({"kind": "FluxConfig", "name": "flux"}),
                "upgrade.immutable",
                "spec.gitOpsRef",
                "the GitOps reference cannot change on an existing cluster: it is none in the stored Cluster, flux in the spec",
            ),
            (
                |c| c["spec"]["identityProviderRefs"][0]["name"] = "iam2".into(),
                "upgrade.immutable",
                "spec.identityProviderRefs",
                "the AWSIamConfig reference cannot change on an existing cluster: it is iam in the stored Cluster, iam2 in the spec",
            ),
            (
                |c| c["spec"]["kubernetesVersion"] = "1.32".into(),
                "upgrade.version-skew",
                "spec.kubernetesVersion",
                "Kubernetes cannot be downgraded: it is 1.33 in the stored Cluster, 1.32 in the spec",
            ),
            (
                |c| c["spec"]["kubernetesVersion"] = "1.35".into(),
                "upgrade.version-skew",
                "spec.kubernetesVersion",
                "Kubernetes can go up one minor version at a time: 1.33 in the stored Cluster to 1.35 skips 1",
            ),
            // The group followed the cluster (1.33); naming 1.32 now moves its machines down.
            (
                |c| {
                    c["spec"]["workerNodeGroupConfigurations"][0]["kubernetesVersion"] =
                        "1.32".into()
                },
                "upgrade.version-skew",
                "spec.workerNodeGroupConfigurations[0].kubernetesVersion",
                "worker group md-0's Kubernetes cannot be downgraded: it is 1.33 in the stored Cluster, 1.32 in the spec",
            ),
            // Worker version skew within one Cluster: the static rule, on update too.
            (
                |c| {
                    c["spec"]["kubernetesVersion"] = "1.34".into();
                    c["spec"]["workerNodeGroupConfigurations"][0]["kubernetesVersion"] =
                        "1.35".into();
                },
                "workers.kubernetes-version",
                "spec.workerNodeGroupConfigurations[0].kubernetesVersion",
                "worker version 1.35 must not be newer than the cluster version 1.34 nor more than 2 minor versions older",
            ),
        ];
        for (change, check, field, message) in cases {
            let old = cluster();
            let mut new = old.clone();
            change(&mut new);
            let findings = review(&new, Some(&old));
            let found = said(&findings);
            assert!(
                found.contains(&(check.into(), field.into(), message.into())),
                "{check} {field}: {found:#?}"
            );
            assert!(
                findings
                    .iter()
                    .all(|f| f.object.as_deref() == Some("Cluster/edge"))
            );
            // Each change is refused by its own rule: the rest of the spec is still fine, and
            // the rule says nothing on create.
            let others: Vec<_> = found
                .iter()
                .filter(|f| f.0 != check && f.0 != "workers.kubernetes-version")
                .collect();
            assert!(
                others.is_empty() || check == "workers.kubernetes-version",
                "{others:#?}"
            );
            let (mut paused_old, mut paused_new) = (old.clone(), new.clone());
            paused_old["metadata"]["annotations"][PAUSED_ANNOTATION] = "true".into();
            paused_new["metadata"]["annotations"][PAUSED_ANNOTATION] = "true".into();
            assert_eq!(
                said(&update_findings(&paused_old, &paused_new)),
                [],
                "{check} {field} while paused"
            );
        }
    }

    #[test]
    fn what_the_update_rules_let_through() {
        let old = cluster();
        // One minor up, the workers following; counts; a new group with its own version.
        let mut new = old.clone();
        new["spec"]["kubernetesVersion"] = "1.34".into();
        new["spec"]["controlPlaneConfiguration"]["count"] = 5.into();
        new["spec"]["workerNodeGroupConfigurations"][0]["kubernetesVersion"] = "1.33".into();
        new["spec"]["workerNodeGroupConfigurations"]
            .as_array_mut()
            .unwrap()
            .push(json!({
            "name": "md-1", "count": 1, "kubernetesVersion": "1.32",
            "machineGroupRef": {"kind": "SnowMachineConfig", "name": "edge"}}));
        assert_eq!(said(&review(&new, Some(&old))), []);
        // A cluster that manages itself may change its GitOps reference (EKS Anywhere's rule).
        let mut own = old.clone();
        own["spec"]["managementCluster"]["name"] = "edge".into();
        let mut moved = own.clone();
        moved["spec"]["gitOpsRef"] = json!({"kind": "FluxConfig", "name": "flux"});
        assert_eq!(said(&review(&moved, Some(&own))), []);
        // An empty management cluster name is the cluster itself.
        let mut empty = own.clone();
        empty["spec"]["managementCluster"]["name"] = "".into();
        assert_eq!(said(&review(&empty, Some(&own))), []);
    }

    #[test]
    fn a_write_that_leaves_the_spec_is_not_checked() {
        // Stored before the webhook existed: invalid, and its endpoint differs from nothing.
        let mut old = cluster();
        old["spec"]["controlPlaneConfiguration"]["endpoint"]["host"] = "api.example.com".into();
        let mut finalized = old.clone();
        finalized["metadata"]["finalizers"] =
            json!(["clusters.anywhere.eks.amazonaws.com/finalizer"]);
        assert_eq!(said(&review(&finalized, Some(&old))), []);
        // A change to an object being deleted is not checked either.
        let mut deleting = old.clone();
        deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z".into();
        deleting["spec"]["kubernetesVersion"] = "1.20".into();
        assert_eq!(said(&review(&deleting, Some(&old))), []);
        // But a spec change is: the static rules and the update rules together.
        let mut changed = old.clone();
        changed["spec"]["kubernetesVersion"] = "1.35".into();
        let checks: Vec<String> = review(&changed, Some(&old))
            .into_iter()
            .map(|f| f.check)
            .collect();
        assert_eq!(checks, ["upgrade.version-skew", "control-plane.endpoint"]);
    }

    #[test]
    fn a_pools_change_is_refused_in_any_order_but_a_reorder_is_not() {
        let old = pool();
        let mut reordered = old.clone();
        reordered["spec"]["pools"].as_array_mut().unwrap().reverse();
        assert_eq!(said(&review(&reordered, Some(&old))), []);
        let mut changed = old.clone();
        changed["spec"]["pools"][1]["ipEnd"] = "192.168.2.41".into();
        assert_eq!(
            said(&review(&changed, Some(&old))),
            [(
                "ip-pool.immutable".to_owned(),
                "spec.pools".to_owned(),
                "the pools of an existing SnowIPPool cannot change: the spec drops 192.168.2.20-192.168.2.40 (192.168.2.0/24, 192.168.2.1) and adds 192.168.2.20-192.168.2.41 (192.168.2.0/24, 192.168.2.1)".to_owned()
            )]
        );
        // Many pools added: listed up to a bound.
        let mut grown = old.clone();
        for i in 0..10 {
            let pool = json!({"ipStart": format!("10.0.{i}.1"), "ipEnd": format!("10.0.{i}.9"),
                "subnet": format!("10.0.{i}.0/24"), "gateway": format!("10.0.{i}.254")});
            grown["spec"]["pools"].as_array_mut().unwrap().push(pool);
        }
        let message = &review(&grown, Some(&old))[0].message;
        assert!(
            message.contains("the spec drops none and adds 10.0.0.1-10.0.0.9"),
            "{message}"
        );
        assert!(message.ends_with(" and 6 more"), "{message}");
    }

    #[test]
    fn a_machine_config_gets_the_defaults_of_validate() {
        let mut m = machine_config();
        m["spec"]["instanceType"] = "".into();
        m["spec"]
            .as_object_mut()
            .unwrap()
            .remove("physicalNetworkConnector");
        assert_eq!(
            machine_config_defaults(&m),
            [
                ("spec.instanceType".to_owned(), "sbe-c.large".to_owned()),
                (
                    "spec.physicalNetworkConnector".to_owned(),
                    "SFP_PLUS".to_owned()
                )
            ]
        );
        assert_eq!(machine_config_defaults(&machine_config()), []);
        assert_eq!(machine_config_defaults(&pool()), []);
    }

    #[test]
    fn an_object_too_deep_to_read_is_one_finding_and_another_kind_none() {
        let mut deep = json!("leaf");
        for _ in 0..100 {
            deep = json!([deep]);
        }
        let mut c = cluster();
        c["spec"]["clusterNetwork"]["cniConfig"]["cilium"]["helmValues"] = deep;
        let found = said(&review(&c, None));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "yaml.budget");
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        assert_eq!(said(&review(&other, None)), []);
    }

    #[test]
    fn only_what_a_user_declares_is_kept() {
        let live = json!({
            "apiVersion": API_VERSION, "kind": "SnowIPPool",
            "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "3",
                "managedFields": [], "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"pools": []}, "status": {}
        });
        assert_eq!(
            declared(&live),
            json!({"apiVersion": API_VERSION, "kind": "SnowIPPool",
                "metadata": {"name": "p", "namespace": "default"}, "spec": {"pools": []}})
        );
    }
}
