//! What an upgrade may not change (the EKS Anywhere Cluster webhook): the
//! control-plane endpoint, the pod and service CIDRs, the datacenter, the proxy, the etcd
//! topology; and the Kubernetes version may only go up, one minor at a time.
//!
//! The old values come from the spec snowctl last applied (the inventory) and from the live
//! Cluster API objects, so a cluster made by another tool is checked too.

use super::live::Live;
use snow_api::{ClusterSpec, Finding, validate::syntax::KubeVersion};

/// The immutable facts of a cluster, as far as they are known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Facts {
    endpoint: Option<String>,
    pods: Option<Vec<String>>,
    services: Option<Vec<String>>,
    external_etcd: Option<bool>,
    datacenter: Option<String>,
    proxy: Option<String>,
    version: Option<KubeVersion>,
}

fn from_spec(spec: &ClusterSpec) -> Facts {
    let s = &spec.cluster.spec;
    let net = s.cluster_network.as_ref();
    Facts {
        endpoint: s
            .control_plane_configuration
            .as_ref()
            .and_then(|c| c.endpoint.as_ref())
            .map(|e| e.host.clone()),
        pods: net
            .and_then(|n| n.pods.as_ref())
            .and_then(|p| p.cidr_blocks.clone()),
        services: net
            .and_then(|n| n.services.as_ref())
            .and_then(|p| p.cidr_blocks.clone()),
        external_etcd: Some(s.external_etcd_configuration.is_some()),
        datacenter: s.datacenter_ref.as_ref().and_then(|r| r.name.clone()),
        proxy: Some(
            s.proxy_configuration
                .as_ref()
                .and_then(|p| serde_json::to_string(p).ok())
                .unwrap_or_default(),
        ),
        version: s.kubernetes_version.as_deref().and_then(KubeVersion::parse),
    }
}

/// `v1.33.1-eks-1-33-5` → 1.33.
fn version_of_tag(tag: &str) -> Option<KubeVersion> {
    let mut parts = tag.trim_start_matches('v').split(['.', '-']);
    KubeVersion::parse(&format!("{}.{}", parts.next()?, parts.next()?))
}

fn from_live(live: &Live) -> Facts {
    let strings = |v: &serde_json::Value| {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        })
    };
    let Some(cluster) = &live.cluster else {
        return Facts::default();
    };
    let spec = &cluster["spec"];
    Facts {
        endpoint: spec["controlPlaneEndpoint"]["host"]
            .as_str()
            .filter(|h| !h.is_empty())
            .map(str::to_owned),
        pods: strings(&spec["clusterNetwork"]["pods"]["cidrBlocks"]),
        services: strings(&spec["clusterNetwork"]["services"]["cidrBlocks"]),
        external_etcd: Some(!spec["managedExternalEtcdRef"].is_null()),
        datacenter: None,
        proxy: None,
        version: live
            .control_plane
            .as_ref()
            .and_then(|kcp| kcp["spec"]["version"].as_str())
            .and_then(version_of_tag),
    }
}

fn compare(old: &Facts, new: &ClusterSpec, from: &str) -> Vec<Finding> {
    let object = format!("Cluster/{}", new.name());
    let now = from_spec(new);
    let mut findings = Vec::new();
    let mut immutable = |field: &str, what: &str, was: String, is: String| {
        findings.push(
            Finding::error(
                "upgrade.immutable",
                format!("{what} cannot change on an existing cluster: it is {was} {from}, {is} in the spec"),
            )
            .object(&object)
            .field(field)
            .hint(format!("set it back to {was}; a different value needs a new cluster")),
        );
    };
    let show = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.join(", ")).unwrap_or_default();
    if let (Some(was), Some(is)) = (&old.endpoint, &now.endpoint)
        && was != is
    {
        immutable(
            "spec.controlPlaneConfiguration.endpoint.host",
            "the control-plane endpoint",
            was.clone(),
            is.clone(),
        );
    }
    if old.pods.is_some() && old.pods != now.pods {
        immutable(
            "spec.clusterNetwork.pods.cidrBlocks",
            "the pod CIDR",
            show(&old.pods),
            show(&now.pods),
        );
    }
    if old.services.is_some() && old.services != now.services {
        immutable(
            "spec.clusterNetwork.services.cidrBlocks",
            "the service CIDR",
            show(&old.services),
            show(&now.services),
        );
    }
    if let (Some(was), Some(is)) = (&old.datacenter, &now.datacenter)
        && was != is
    {
        immutable(
            "spec.datacenterRef.name",
            "the datacenter",
            was.clone(),
            is.clone(),
        );
    }
    if let (Some(was), Some(is)) = (&old.proxy, &now.proxy)
        && was != is
    {
        let label = |p: &str| {
            if p.is_empty() {
                "none".to_owned()
            } else {
                p.to_owned()
            }
        };
        immutable(
            "spec.proxyConfiguration",
            "the proxy configuration",
            label(was),
            label(is),
        );
    }
    if let (Some(was), Some(is)) = (old.external_etcd, now.external_etcd)
        && was != is
    {
        let label = |external: bool| if external { "external" } else { "stacked" };
        findings.push(
            Finding::error(
                "upgrade.immutable",
                format!(
                    "switching from {} to {} etcd is not supported",
                    label(was),
                    label(is)
                ),
            )
            .object(&object)
            .field("spec.externalEtcdConfiguration")
            .hint(format!(
                "keep the {} etcd topology; a different one needs a new cluster",
                label(was)
            )),
        );
    }
    if let (Some(was), Some(is)) = (old.version, now.version) {
        let field = "spec.kubernetesVersion";
        if (is.major, is.minor) < (was.major, was.minor) {
            findings.push(
                Finding::error(
                    "upgrade.version-skew",
                    format!(
                        "Kubernetes cannot be downgraded: the cluster runs {}.{} {from}, the spec says {}.{}",
                        was.major, was.minor, is.major, is.minor
                    ),
                )
                .object(&object)
                .field(field)
                .hint(format!("keep kubernetesVersion at {}.{} or higher", was.major, was.minor)),
            );
        } else if is.major == was.major && is.minor > was.minor + 1 {
            findings.push(
                Finding::error(
                    "upgrade.version-skew",
                    format!(
                        "Kubernetes can go up one minor version at a time: {}.{} {from} to {}.{} skips {}",
                        was.major,
                        was.minor,
                        is.major,
                        is.minor,
                        is.minor - was.minor - 1
                    ),
                )
                .object(&object)
                .field(field)
                .hint(format!(
                    "upgrade to {}.{} first, then to {}.{}",
                    was.major,
                    was.minor + 1,
                    is.major,
                    is.minor
                )),
            );
        }
    }
    findings
}

/// Every change from `old` (the spec last applied) to `new` that an existing cluster cannot
/// take, located in `new`'s source.
pub fn immutable_changes(old: &ClusterSpec, new: &ClusterSpec) -> Vec<Finding> {
    new.locate(compare(&from_spec(old), new, "in the spec last applied"))
}

/// The same against the live Cluster API objects; a finding already made from the last spec
/// is not repeated.
pub(crate) fn live_changes(live: &Live, new: &ClusterSpec, known: &[Finding]) -> Vec<Finding> {
    let findings = compare(&from_live(live), new, "on the management cluster");
    new.locate(
        findings
            .into_iter()
            .filter(|f| {
                !known
                    .iter()
                    .any(|k| k.check == f.check && k.field == f.field)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_tags_read_as_versions() {
        assert_eq!(
            version_of_tag("v1.33.1-eks-1-33-5"),
            Some(KubeVersion {
                major: 1,
                minor: 33
            })
        );
        assert_eq!(version_of_tag("garbage"), None);
    }
}
