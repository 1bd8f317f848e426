//! What an existing cluster may not change (the EKS Anywhere Cluster webhook on update): the
//! management cluster, the datacenter, the control-plane endpoint, the pod and service CIDRs,
//! the node CIDR mask, the DNS resolv.conf, the proxy, the etcd topology and the external etcd
//! count, the GitOps reference (unless the cluster manages itself; then once it is set, and the
//! fields of its FluxConfig, in [`gitops_changes`]), the AWS IAM authenticator reference; and Kubernetes (of the cluster, and of each worker group that names its own) may
//! only go up, one minor at a time.
//!
//! The old values are [`Facts`]: read from a spec ([`Facts::of`]: the spec `snowctl upgrade` last
//! applied, or the Cluster an API server stores, for the admission webhook), or filled by the
//! caller from what it knows (snow-lifecycle reads the live Cluster API objects). A fact that is
//! not known is not compared.

use crate::{ClusterSpec, Finding, spec::object_id, validate::syntax::KubeVersion};

/// The immutable facts of a cluster, as far as they are known (`None`: not known, not compared).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The management cluster's name (the cluster's own name when it manages itself).
    pub management_cluster: Option<String>,
    /// The control-plane endpoint host.
    pub endpoint: Option<String>,
    /// The pod CIDR blocks.
    pub pods: Option<Vec<String>>,
    /// The service CIDR blocks.
    pub services: Option<Vec<String>>,
    /// The node CIDR mask size (`""` when unset).
    pub nodes: Option<String>,
    /// The DNS resolv.conf path (`""` when unset).
    pub dns: Option<String>,
    /// Whether etcd is external.
    pub external_etcd: Option<bool>,
    /// The external etcd machine count.
    pub etcd_count: Option<i64>,
    /// The datacenter's name.
    pub datacenter: Option<String>,
    /// The proxy configuration as JSON (`""` for none).
    pub proxy: Option<String>,
    /// The GitOps reference's name (`""` for none); `None` for a cluster that manages itself,
    /// whose reference may change (EKS Anywhere's rule).
    pub gitops: Option<String>,
    /// The AWSIamConfig reference's name (`""` for none).
    pub aws_iam: Option<String>,
    /// The Kubernetes version.
    pub version: Option<KubeVersion>,
    /// Each worker group's Kubernetes version (its own, else the cluster's), by group name.
    pub workers: Option<Vec<(String, KubeVersion)>>,
}

impl Facts {
    /// The facts `spec` states.
    pub fn of(spec: &ClusterSpec) -> Facts {
        let s = &spec.cluster.spec;
        let net = s.cluster_network.as_ref();
        let management = s
            .management_cluster
            .as_ref()
            .and_then(|m| m.name.as_deref())
            .filter(|n| !n.is_empty())
            .unwrap_or(spec.name());
        let self_managed = management == spec.name();
        let version = s.kubernetes_version.as_deref().and_then(KubeVersion::parse);
        let workers = s
            .worker_node_group_configurations
            .iter()
            .flatten()
            .filter_map(|g| {
                let own = g.kubernetes_version.as_deref().map(KubeVersion::parse);
                Some((g.name.clone().unwrap_or_default(), own.unwrap_or(version)?))
            })
            .collect();
        Facts {
            management_cluster: Some(management.to_owned()),
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
            nodes: Some(
                net.and_then(|n| n.nodes.as_ref())
                    .and_then(|n| n.cidr_mask_size)
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
            ),
            dns: Some(
                net.and_then(|n| n.dns.as_ref())
                    .and_then(|d| d.resolv_conf.as_ref())
                    .and_then(|r| r.path.clone())
                    .unwrap_or_default(),
            ),
            external_etcd: Some(s.external_etcd_configuration.is_some()),
            etcd_count: s.external_etcd_configuration.as_ref().and_then(|e| e.count),
            datacenter: s.datacenter_ref.as_ref().and_then(|r| r.name.clone()),
            proxy: Some(
                s.proxy_configuration
                    .as_ref()
                    .and_then(|p| serde_json::to_string(p).ok())
                    .unwrap_or_default(),
            ),
            gitops: (!self_managed).then(|| {
                s.git_ops_ref
                    .as_ref()
                    .map(|r| r.name().to_owned())
                    .unwrap_or_default()
            }),
            aws_iam: Some(
                (s.identity_provider_refs.iter().flatten())
                    .find(|r| r.kind() == "AWSIamConfig")
                    .map(|r| r.name().to_owned())
                    .unwrap_or_default(),
            ),
            version,
            workers: Some(workers),
        }
    }
}

/// `""` as people read it.
fn label(value: &str) -> String {
    if value.is_empty() {
        "none".to_owned()
    } else {
        value.to_owned()
    }
}

/// One finding per fact of `old` that `new` changes, each with its field path; `from` says
/// where the old value is (`in the spec last applied`). Not located: callers locate them in
/// `new`'s source ([`ClusterSpec::locate`]).
pub fn changes(old: &Facts, new: &ClusterSpec, from: &str) -> Vec<Finding> {
    let object = object_id("Cluster", new.name());
    let now = Facts::of(new);
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
    let strings: [(&str, &str, &Option<String>, &Option<String>); 7] = [
        (
            "spec.managementCluster.name",
            "the management cluster",
            &old.management_cluster,
            &now.management_cluster,
        ),
        (
            "spec.controlPlaneConfiguration.endpoint.host",
            "the control-plane endpoint",
            &old.endpoint,
            &now.endpoint,
        ),
        (
            "spec.clusterNetwork.nodes.cidrMaskSize",
            "the node CIDR mask size",
            &old.nodes,
            &now.nodes,
        ),
        (
            "spec.clusterNetwork.dns.resolvConf.path",
            "the DNS resolv.conf path",
            &old.dns,
            &now.dns,
        ),
        (
            "spec.datacenterRef.name",
            "the datacenter",
            &old.datacenter,
            &now.datacenter,
        ),
        (
            "spec.proxyConfiguration",
            "the proxy configuration",
            &old.proxy,
            &now.proxy,
        ),
        (
            "spec.identityProviderRefs",
            "the AWSIamConfig reference",
            &old.aws_iam,
            &now.aws_iam,
        ),
    ];
    for (field, what, was, is) in strings {
        if let (Some(was), Some(is)) = (was, is)
            && was != is
        {
            immutable(field, what, label(was), label(is));
        }
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
    // A cluster that manages itself may change its GitOps reference (EKS Anywhere's rule): its
    // `now` fact is absent only then, so the old fact decides.
    if let Some(was) = &old.gitops {
        let is = new
            .cluster
            .spec
            .git_ops_ref
            .as_ref()
            .map(|r| r.name().to_owned())
            .unwrap_or_default();
        if *was != is {
            immutable(
                "spec.gitOpsRef",
                "the GitOps reference",
                label(was),
                label(&is),
            );
        }
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
    } else if let (Some(was), Some(is)) = (old.etcd_count, now.etcd_count)
        && was != is
    {
        immutable(
            "spec.externalEtcdConfiguration.count",
            "the external etcd count",
            was.to_string(),
            is.to_string(),
        );
    }
    if let (Some(was), Some(is)) = (old.version, now.version) {
        findings.extend(version_skew(
            was,
            is,
            "Kubernetes",
            "spec.kubernetesVersion",
            from,
        ));
    }
    // A worker group's machines move from its old version to its new one: the same steps.
    if let (Some(old_groups), Some(is_cluster)) = (&old.workers, now.version) {
        for (i, group) in new
            .cluster
            .spec
            .worker_node_group_configurations
            .iter()
            .flatten()
            .enumerate()
        {
            let name = group.name.clone().unwrap_or_default();
            let Some(was) = (old_groups.iter())
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
            else {
                continue;
            };
            // A group that follows the cluster's version, then and now, moves with it: the
            // cluster's finding says it.
            if group.kubernetes_version.is_none() && Some(was) == old.version {
                continue;
            }
            let is = (group.kubernetes_version.as_deref())
                .and_then(KubeVersion::parse)
                .unwrap_or(is_cluster);
            let what = format!("worker group {name}'s Kubernetes");
            let field = format!("spec.workerNodeGroupConfigurations[{i}].kubernetesVersion");
            findings.extend(version_skew(was, is, &what, &field, from));
        }
    }
    findings.into_iter().map(|f| f.object(&object)).collect()
}

/// Never down, at most one minor up.
fn version_skew(
    was: KubeVersion,
    is: KubeVersion,
    what: &str,
    field: &str,
    from: &str,
) -> Option<Finding> {
    let finding = if is < was {
        Finding::error(
            "upgrade.version-skew",
            format!("{what} cannot be downgraded: it is {was} {from}, {is} in the spec"),
        )
        .hint(format!("keep it at {was} or higher"))
    } else if is.major == was.major && is.minor > was.minor + 1 {
        Finding::error(
            "upgrade.version-skew",
            format!(
                "{what} can go up one minor version at a time: {was} {from} to {is} skips {}",
                is.minor - was.minor - 1
            ),
        )
        .hint(format!(
            "upgrade to {}.{} first, then to {is}",
            was.major,
            was.minor + 1
        ))
    } else {
        return None;
    };
    Some(finding.field(field))
}

/// Every change from `old` (the spec last applied) to `new` that an existing cluster cannot
/// take, located in `new`'s source: [`changes`], and EKS Anywhere's GitOps rules of `upgrade`
/// ([`gitops_changes`]).
pub fn immutable_changes(old: &ClusterSpec, new: &ClusterSpec) -> Vec<Finding> {
    let from = "in the spec last applied";
    let mut findings = changes(&Facts::of(old), new, from);
    findings.extend(gitops_changes(old, new, from));
    new.locate(findings)
}

/// EKS Anywhere's GitOps rules of `upgrade` (`ValidateGitOpsImmutableFields`): GitOps may be
/// added to a cluster that manages itself, but once its `gitOpsRef` is set, the reference stays
/// (a workload cluster's is already one of [`changes`]) and no field of the FluxConfig it names
/// changes ([`crate::gitops::flux_config_changes`]).
pub fn gitops_changes(old: &ClusterSpec, new: &ClusterSpec, from: &str) -> Vec<Finding> {
    let Some(was) = &old.cluster.spec.git_ops_ref else {
        return Vec::new();
    };
    let is = new.cluster.spec.git_ops_ref.as_ref();
    let mut findings = Vec::new();
    if old.is_self_managed() && is != Some(was) {
        let show = |r: Option<&crate::types::NamedRef>| {
            r.map_or("none".to_owned(), |r| format!("{} {}", r.kind(), r.name()))
        };
        findings.push(
            Finding::error(
                "upgrade.immutable",
                format!(
                    "the GitOps reference cannot change once set: it is {} {from}, {} in the spec",
                    show(Some(was)),
                    show(is)
                ),
            )
            .object(object_id("Cluster", new.name()))
            .field("spec.gitOpsRef")
            .hint(format!("set it back to {}", show(Some(was)))),
        );
    }
    if let (Some(was_flux), Some(is_ref)) = (old.flux_configs.get(was.name()), is)
        && let Some(is_flux) = new.flux_configs.get(is_ref.name())
    {
        findings.extend(crate::gitops::flux_config_changes(
            &was_flux.spec,
            &is_flux.spec,
            &object_id("FluxConfig", is_ref.name()),
            from,
        ));
    }
    findings
}
