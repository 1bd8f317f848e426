//! What an upgrade may not change, checked against the live Cluster API objects as well as the
//! spec last applied (the rules themselves are `snow_api::immutable`), so a cluster made by
//! another tool is checked too.

use super::live::Live;
use snow_api::{
    ClusterSpec, Finding,
    immutable::{Facts, changes},
    validate::syntax::KubeVersion,
};

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
        version: live
            .control_plane
            .as_ref()
            .and_then(|kcp| kcp["spec"]["version"].as_str())
            .and_then(version_of_tag),
        ..Facts::default()
    }
}

/// The same against the live Cluster API objects; a finding already made from the last spec
/// is not repeated.
pub(crate) fn live_changes(live: &Live, new: &ClusterSpec, known: &[Finding]) -> Vec<Finding> {
    let findings = changes(&from_live(live), new, "on the management cluster");
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
