//! Rules on the Cluster object (the EKS Anywhere Cluster webhook and its static Snow validation).

use super::{
    Findings,
    syntax::{
        KubeVersion, NEWEST_KUBE_MINOR, OLDEST_KUBE_MINOR, RegistryHost, is_domain_name, is_host,
        is_label_value, is_qualified_name, proxy_problem,
    },
};
use crate::{
    GoDuration,
    cni::{self, CILIUM_FIELD},
    crd::Kind,
    finding::{Finding, shorten},
    spec::{ClusterSpec, object_id},
    types::{
        NamedRef,
        cluster::{CiliumConfig, MachineHealthCheck, Taint},
    },
};
use ipnet::IpNet;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::{collections::BTreeMap, collections::HashMap, net::IpAddr};

const CURATED_PACKAGES_REGISTRY: &str = "783794618700.dkr.ecr.us-west-2.amazonaws.com";
/// CAPI replicas are int32.
const MAX_REPLICAS: i64 = i32::MAX as i64;

pub(super) fn validate(spec: &ClusterSpec) -> Vec<Finding> {
    let name = spec.name();
    let mut f = Findings::new(object_id("Cluster", name));
    let s = &spec.cluster.spec;

    cluster_name(name, &mut f);
    let version = kubernetes_version(
        s.kubernetes_version.as_deref(),
        "spec.kubernetesVersion",
        &mut f,
        true,
    );
    datacenter_ref(spec, &mut f);
    let (pods, services) = cluster_network(spec, &mut f);
    control_plane(spec, pods, services, &mut f);
    workers(spec, version, &mut f);
    external_etcd(spec, &mut f);
    proxy(spec, &mut f);
    registry_mirror(spec, &mut f);
    if let Some(mhc) = &s.machine_health_check {
        machine_health_check(mhc, "spec.machineHealthCheck", &mut f);
    }
    if s.etcd_encryption.as_ref().is_some_and(|e| !e.is_empty()) {
        f.error(
            "cluster.etcd-encryption",
            "spec.etcdEncryption",
            "etcdEncryption is not supported for Snow (only cloudstack, vsphere and nutanix)",
            "remove spec.etcdEncryption",
        );
    }
    identity_provider_refs(spec, &mut f);
    super::gitops::gitops_ref(spec, &mut f);
    f.out
}

fn cluster_name(name: &str, f: &mut Findings) {
    if name.is_empty() {
        return; // reported when the document was read
    }
    let mut chars = name.chars();
    let pattern_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !pattern_ok {
        f.error(
            "cluster.name",
            "metadata.name",
            format!("cluster name `{name}` is invalid: it must match ^[a-zA-Z][a-zA-Z0-9-]+$"),
            "start with a letter; use letters, digits and '-' only; at least 2 characters",
        );
    }
    if name.len() > 35 {
        f.error(
            "cluster.name",
            "metadata.name",
            format!("number of characters in {name} should be less than 36"),
            "shorten the name to 35 characters or fewer: object names are derived from it",
        );
    }
}

/// Checks a `1.NN` version; returns it when it is usable.
pub(super) fn kubernetes_version(
    version: Option<&str>,
    field: &str,
    f: &mut Findings,
    required: bool,
) -> Option<KubeVersion> {
    let Some(text) = version.filter(|v| !v.is_empty()) else {
        if required {
            f.error(
                "cluster.kubernetes-version",
                field,
                "kubernetesVersion is not set",
                format!("set a version such as \"1.{}\"", NEWEST_KUBE_MINOR - 3),
            );
        }
        return None;
    };
    let Some(parsed) = KubeVersion::parse(text) else {
        f.error(
            "cluster.kubernetes-version",
            field,
            format!("kubernetesVersion `{text}` is not of the form 1.NN"),
            "write the minor version only, quoted, e.g. \"1.33\"",
        );
        return None;
    };
    if parsed.major != 1 || !(OLDEST_KUBE_MINOR..=NEWEST_KUBE_MINOR).contains(&parsed.minor) {
        f.error(
            "cluster.kubernetes-version",
            field,
            format!("kubernetesVersion {text} is not supported"),
            format!("use a version from 1.{OLDEST_KUBE_MINOR} to 1.{NEWEST_KUBE_MINOR} that your release bundle provides"),
        );
        return None;
    }
    Some(parsed)
}

fn datacenter_ref(spec: &ClusterSpec, f: &mut Findings) {
    let Some(r) = &spec.cluster.spec.datacenter_ref else {
        f.error(
            "cluster.datacenter-ref",
            "spec.datacenterRef",
            "datacenterRef is not set",
            "add `datacenterRef: {kind: SnowDatacenterConfig, name: <name>}`",
        );
        return;
    };
    if r.kind() != Kind::SnowDatacenterConfig.as_str() {
        f.error(
            "cluster.datacenter-ref",
            "spec.datacenterRef.kind",
            format!("datacenterRef kind `{}` is not SnowDatacenterConfig: snowctl manages Snow clusters only", r.kind()),
            "write `kind: SnowDatacenterConfig`",
        );
    } else if r.name().is_empty() {
        f.error(
            "cluster.datacenter-ref",
            "spec.datacenterRef.name",
            "datacenterRef name is empty",
            "name the SnowDatacenterConfig of this cluster",
        );
    } else if spec.datacenter.is_none() {
        f.error(
            "cluster.datacenter-ref",
            "spec.datacenterRef.name",
            format!("unable to find SnowDatacenterConfig {}", r.name()),
            format!("add a SnowDatacenterConfig named {} to the file", r.name()),
        );
    }
}

/// Checks the networking block; returns the pod and service CIDRs when valid.
fn cluster_network(spec: &ClusterSpec, f: &mut Findings) -> (Option<IpNet>, Option<IpNet>) {
    let Some(net) = &spec.cluster.spec.cluster_network else {
        f.error(
            "cluster.network",
            "spec.clusterNetwork",
            "clusterNetwork is not set",
            "add pods and services CIDR blocks and `cniConfig: {cilium: {}}`",
        );
        return (None, None);
    };
    let mut cidr = |which: &str, blocks: Option<&Vec<String>>| -> Option<IpNet> {
        let field = format!("spec.clusterNetwork.{which}.cidrBlocks");
        let blocks = blocks.map(Vec::as_slice).unwrap_or_default();
        match blocks {
            [one] => match one.parse::<IpNet>() {
                Ok(net) => Some(net),
                Err(_) => {
                    f.error(
                        "cluster.network-cidr",
                        &format!("{field}[0]"),
                        format!("{which} CIDR block `{one}` is not a valid CIDR"),
                        "write a block such as 192.168.0.0/16",
                    );
                    None
                }
            },
            [] => {
                f.error(
                    "cluster.network-cidr",
                    &field,
                    format!("{which} CIDR block is not set"),
                    if which == "pods" {
                        "add e.g. 192.168.0.0/16"
                    } else {
                        "add e.g. 10.96.0.0/12"
                    },
                );
                None
            }
            _ => {
                f.error(
                    "cluster.network-cidr",
                    &field,
                    format!(
                        "{which} has {} CIDR blocks; exactly one is supported",
                        blocks.len()
                    ),
                    "keep one block",
                );
                None
            }
        }
    };
    let pods = cidr(
        "pods",
        net.pods.as_ref().and_then(|p| p.cidr_blocks.as_ref()),
    );
    let services = cidr(
        "services",
        net.services.as_ref().and_then(|p| p.cidr_blocks.as_ref()),
    );
    if let (Some(p), Some(s)) = (pods, services)
        && (p.contains(&s.network()) || s.contains(&p.network()))
    {
        f.error(
            "cluster.network-cidr",
            "spec.clusterNetwork.services.cidrBlocks[0]",
            format!("the service CIDR {s} overlaps the pod CIDR {p}"),
            "use disjoint ranges, e.g. pods 192.168.0.0/16 and services 10.96.0.0/12",
        );
    }
    if let Some(pods) = pods {
        let explicit = net.nodes.as_ref().and_then(|n| n.cidr_mask_size);
        let node_mask = explicit.unwrap_or(24);
        let pod_mask = i64::from(pods.prefix_len());
        if !(node_mask > pod_mask && node_mask <= pod_mask + 16) {
            f.error(
                "cluster.node-cidr-mask",
                if explicit.is_some() { "spec.clusterNetwork.nodes.cidrMaskSize" } else { "spec.clusterNetwork.pods.cidrBlocks[0]" },
                format!("node CIDR mask size {node_mask} must be larger than the pod CIDR mask {pod_mask} and at most {}", pod_mask + 16),
                "widen the pod CIDR or set spec.clusterNetwork.nodes.cidrMaskSize accordingly",
            );
        }
    }
    let cilium = net
        .cni_config
        .as_ref()
        .and_then(|c| c.cilium.as_ref())
        .is_some();
    if net
        .cni_config
        .as_ref()
        .and_then(|c| c.kindnetd.as_ref())
        .is_some()
    {
        f.error(
            "cluster.cni",
            "spec.clusterNetwork.cniConfig.kindnetd",
            "kindnetd is only supported by the Docker provider",
            "use `cniConfig: {cilium: {}}`",
        );
    }
    if let Some(config) = net.cni_config.as_ref() {
        if config.cilium.is_some() && config.kindnetd.is_some() {
            f.error(
                "cluster.cni",
                "spec.clusterNetwork.cniConfig",
                "cannot specify more than one cni plugins",
                "keep only `cilium`",
            );
        }
        if let Some(cilium) = &config.cilium {
            cilium_settings(cilium, f);
        }
    }
    match net.cni.as_deref() {
        Some(_) if net.cni_config.is_some() => f.error(
            "cluster.cni",
            "spec.clusterNetwork.cni",
            "cni and cniConfig are both set",
            "remove the deprecated `cni` field",
        ),
        Some("cilium") => f.warning(
            "cluster.cni",
            "spec.clusterNetwork.cni",
            "`cni` is deprecated",
            "write `cniConfig: {cilium: {}}` instead",
        ),
        Some(other) => f.error(
            "cluster.cni",
            "spec.clusterNetwork.cni",
            format!("cni `{other}` is not supported for Snow"),
            "write `cniConfig: {cilium: {}}`",
        ),
        None if !cilium
            && net
                .cni_config
                .as_ref()
                .and_then(|c| c.kindnetd.as_ref())
                .is_none() =>
        {
            f.error(
                "cluster.cni",
                "spec.clusterNetwork.cniConfig",
                "no CNI is configured",
                "add `cniConfig: {cilium: {}}`",
            )
        }
        None => {}
    }
    (pods, services)
}

/// The problems of reading `cniConfig.cilium` (`crate::cni` holds the rules).
fn cilium_settings(cilium: &CiliumConfig, f: &mut Findings) {
    for p in cni::read(cilium).1 {
        let field = format!("{CILIUM_FIELD}.{}", p.field);
        match p.level {
            cni::Level::Error => f.error("cluster.cni", &field, p.message, p.hint),
            cni::Level::Warning => f.warning("cluster.cni", &field, p.message, p.hint),
        }
    }
}

fn control_plane(
    spec: &ClusterSpec,
    pods: Option<IpNet>,
    services: Option<IpNet>,
    f: &mut Findings,
) {
    let Some(cp) = &spec.cluster.spec.control_plane_configuration else {
        f.error(
            "control-plane.missing",
            "spec.controlPlaneConfiguration",
            "controlPlaneConfiguration is not set",
            "add count, endpoint.host and machineGroupRef",
        );
        return;
    };
    let stacked = spec.cluster.spec.external_etcd_configuration.is_none();
    match cp.count {
        None | Some(..=0) => f.error(
            "control-plane.count",
            "spec.controlPlaneConfiguration.count",
            format!(
                "control plane count must be greater than 0, got {}",
                cp.count.unwrap_or(0)
            ),
            "use 3 (or 5) for high availability, 1 for a test cluster",
        ),
        Some(n) if n > MAX_REPLICAS => f.error(
            "control-plane.count",
            "spec.controlPlaneConfiguration.count",
            format!("control plane count {n} is beyond what Cluster API can represent"),
            "use 3 or 5",
        ),
        Some(n) if stacked && n % 2 == 0 => f.error(
            "control-plane.count",
            "spec.controlPlaneConfiguration.count",
            format!("control plane count {n} is even; with stacked etcd it must be odd"),
            "use 1, 3 or 5 so etcd keeps quorum",
        ),
        Some(n) if n != 3 && n != 5 => f.warning(
            "control-plane.count",
            "spec.controlPlaneConfiguration.count",
            format!("control plane count {n}: 3 or 5 is recommended for high availability"),
            "",
        ),
        Some(_) => {}
    }

    let host = cp.endpoint.as_ref().map(|e| e.host.as_str()).unwrap_or("");
    if host.is_empty() {
        f.error(
            "control-plane.endpoint",
            "spec.controlPlaneConfiguration.endpoint.host",
            "cluster controlPlaneConfiguration.Endpoint.Host is not set or is empty",
            "set it to a free IP on the devices' network: kube-vip will hold it",
        );
    } else {
        match host.parse::<IpAddr>() {
            Err(_) => f.error(
                "control-plane.endpoint",
                "spec.controlPlaneConfiguration.endpoint.host",
                format!("control plane endpoint {host} is invalid: it must be an IP address"),
                "use an IP address, not a host name, for Snow",
            ),
            Ok(ip) => {
                for (net, which) in [(pods, "pods"), (services, "services")] {
                    if net.is_some_and(|n| n.contains(&ip)) {
                        f.error(
                            "control-plane.endpoint",
                            "spec.controlPlaneConfiguration.endpoint.host",
                            format!(
                                "control plane endpoint {host} conflicts with {which} CIDR block"
                            ),
                            "pick an endpoint outside the pod and service CIDRs",
                        );
                    }
                }
            }
        }
    }
    machine_ref(
        spec,
        cp.machine_group_ref.as_ref(),
        "spec.controlPlaneConfiguration.machineGroupRef",
        "control plane",
        f,
    );
    taints(
        cp.taints.as_deref(),
        "spec.controlPlaneConfiguration.taints",
        f,
    );
    labels(
        cp.labels.as_ref(),
        "spec.controlPlaneConfiguration.labels",
        f,
    );
    if let Some(strategy) = &cp.upgrade_rollout_strategy {
        let field = "spec.controlPlaneConfiguration.upgradeRolloutStrategy";
        rollout_type(strategy.type_.as_deref(), field, f);
        if let Some(ru) = &strategy.rolling_update
            && !(0..=1).contains(&ru.max_surge)
        {
            f.error(
                "control-plane.rollout",
                &format!("{field}.rollingUpdate.maxSurge"),
                format!(
                    "maxSurge {} is invalid for the control plane: it must be 0 or 1",
                    ru.max_surge
                ),
                "use 1 to add a machine before removing one, 0 to replace in place of one",
            );
        }
    }
    for (i, san) in cp.cert_sans.iter().flatten().enumerate() {
        if san.parse::<IpAddr>().is_err() && !is_domain_name(san) {
            f.error(
                "control-plane.cert-sans",
                &format!("spec.controlPlaneConfiguration.certSans[{i}]"),
                format!("certSans entry `{san}` is neither an IP address nor a domain name"),
                "write an IP address or a DNS name",
            );
        }
    }
    if let Some(args) = &cp.api_server_extra_args {
        let oidc = spec
            .cluster
            .spec
            .identity_provider_refs
            .iter()
            .flatten()
            .any(|r| r.kind() == "OIDCConfig");
        for key in args.keys() {
            if oidc && key.starts_with("oidc-") {
                f.error(
                    "control-plane.api-server-extra-args",
                    &format!("spec.controlPlaneConfiguration.apiServerExtraArgs.{key}"),
                    format!("apiServerExtraArgs `{key}` conflicts with the referenced OIDCConfig"),
                    "set OIDC flags through the OIDCConfig, or remove the reference",
                );
            }
        }
    }
    if let Some(mhc) = &cp.machine_health_check {
        machine_health_check(mhc, "spec.controlPlaneConfiguration.machineHealthCheck", f);
    }
}

fn rollout_type(kind: Option<&str>, field: &str, f: &mut Findings) {
    match kind {
        None | Some("") | Some("RollingUpdate") => {}
        Some("InPlace") => f.error(
            "rollout.in-place",
            &format!("{field}.type"),
            "upgradeRolloutStrategy InPlace is only supported on Bare Metal",
            "use `type: RollingUpdate` for Snow",
        ),
        Some(other) => f.error(
            "rollout.type",
            &format!("{field}.type"),
            format!("upgradeRolloutStrategy type `{other}` is invalid"),
            "use `type: RollingUpdate`",
        ),
    }
}

/// A machine group reference must name an existing SnowMachineConfig.
fn machine_ref(
    spec: &ClusterSpec,
    r: Option<&NamedRef>,
    field: &str,
    role: &str,
    f: &mut Findings,
) {
    let Some(r) = r.filter(|r| !r.name().is_empty()) else {
        f.error(
            "machine-group-ref",
            field,
            format!("must specify machineGroupRef for the {role} machines"),
            "add `machineGroupRef: {kind: SnowMachineConfig, name: <name>}`",
        );
        return;
    };
    if r.kind() != Kind::SnowMachineConfig.as_str() {
        f.error(
            "machine-group-ref",
            &format!("{field}.kind"),
            format!("machineGroupRef kind `{}` is invalid for Snow", r.kind()),
            "write `kind: SnowMachineConfig`",
        );
    } else if !spec.machine_configs.contains_key(r.name()) {
        let known: Vec<&str> = spec.machine_configs.keys().map(String::as_str).collect();
        f.error(
            "machine-group-ref",
            &format!("{field}.name"),
            format!("unable to find SnowMachineConfig {}", r.name()),
            if known.is_empty() {
                format!("add a SnowMachineConfig named {}", r.name())
            } else {
                format!(
                    "add a SnowMachineConfig named {}, or use one of: {}",
                    r.name(),
                    known.join(", ")
                )
            },
        );
    }
}

fn taints(taints: Option<&[Taint]>, field: &str, f: &mut Findings) {
    for (i, t) in taints.unwrap_or_default().iter().enumerate() {
        if !is_qualified_name(&t.key) {
            f.error(
                "taint",
                &format!("{field}[{i}].key"),
                format!("taint key `{}` is invalid", t.key),
                "use a qualified name such as example.com/dedicated",
            );
        }
        if !matches!(
            t.effect.as_str(),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute"
        ) {
            f.error(
                "taint",
                &format!("{field}[{i}].effect"),
                format!("taint effect `{}` is invalid", t.effect),
                "use NoSchedule, PreferNoSchedule or NoExecute",
            );
        }
        if let Some(value) = t.value.as_deref().filter(|v| !is_label_value(v)) {
            f.error(
                "taint",
                &format!("{field}[{i}].value"),
                format!("taint value `{value}` is invalid"),
                "use at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric",
            );
        }
    }
}

fn labels(labels: Option<&BTreeMap<String, String>>, field: &str, f: &mut Findings) {
    for (key, value) in labels.into_iter().flatten() {
        let path = crate::typing::child_path(field, key);
        if !is_qualified_name(key) {
            f.error(
                "label",
                &path,
                format!("label key `{key}` is invalid"),
                "use [prefix/]name: name at most 63 characters of letters, digits, '-', '_', '.'",
            );
        }
        if !is_label_value(value) {
            f.error(
                "label",
                &path,
                format!("label value `{value}` of `{key}` is invalid"),
                "use at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric",
            );
        }
    }
}

fn machine_health_check(mhc: &MachineHealthCheck, field: &str, f: &mut Findings) {
    for (value, name) in [
        (&mhc.node_startup_timeout, "nodeStartupTimeout"),
        (&mhc.unhealthy_machine_timeout, "unhealthyMachineTimeout"),
    ] {
        let Some(v) = value.as_deref() else { continue };
        let path = format!("{field}.{name}");
        match mhc_timeout(v, name == "nodeStartupTimeout") {
            Ok(()) => {}
            Err(problem) => f.error(
                "machine-health-check",
                &path,
                format!("{name} `{v}` {problem}"),
                "write a whole number of seconds as a duration, such as 10m0s, 5m or 90s",
            ),
        }
    }
    let bad = match &mhc.max_unhealthy {
        Some(IntOrString::Int(n)) => *n < 0,
        Some(IntOrString::String(s)) => s
            .strip_suffix('%')
            .and_then(|p| p.parse::<u32>().ok())
            .is_none_or(|p| p > 100),
        None => false,
    };
    if bad {
        f.error(
            "machine-health-check",
            &format!("{field}.maxUnhealthy"),
            "maxUnhealthy must be a non-negative number or a percentage from 0% to 100%",
            "e.g. 40% or 2",
        );
    }
}

/// Cluster API's own MachineHealthCheck webhook refuses a node startup timeout under 30 s (0
/// turns the check off).
const MIN_NODE_STARTUP_SECONDS: u64 = 30;

/// Why a MachineHealthCheck timeout cannot be rendered exactly, if it cannot. Cluster API v1beta2
/// takes these as `int32` seconds, so a fraction of a second or more than `i32::MAX` seconds has
/// no exact rendering; render never rounds or replaces a value.
fn mhc_timeout(text: &str, node_startup: bool) -> Result<(), String> {
    let d: GoDuration = text
        .parse()
        .map_err(|e| format!("is not a duration: {e}"))?;
    let secs = d
        .whole_seconds()
        .ok_or("is not a whole number of seconds (Cluster API v1beta2 takes seconds)")?;
    if secs > i32::MAX as u64 {
        return Err(format!(
            "is longer than Cluster API's limit of {} seconds",
            i32::MAX
        ));
    }
    if node_startup && secs != 0 && secs < MIN_NODE_STARTUP_SECONDS {
        return Err(format!(
            "is under {MIN_NODE_STARTUP_SECONDS}s, which Cluster API refuses (0 turns the check off)"
        ));
    }
    Ok(())
}

fn workers(spec: &ClusterSpec, cluster_version: Option<KubeVersion>, f: &mut Findings) {
    let groups = spec
        .cluster
        .spec
        .worker_node_group_configurations
        .as_deref()
        .unwrap_or_default();
    if groups.is_empty() {
        f.error(
            "workers.empty",
            "spec.workerNodeGroupConfigurations",
            "WorkerNodeGroupConfigs cannot be empty for SnowDatacenterConfig",
            "add at least one worker node group",
        );
        return;
    }
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        let field = format!("spec.workerNodeGroupConfigurations[{i}]");
        let name = g.name.as_deref().unwrap_or("");
        if name.is_empty() {
            f.error(
                "workers.name",
                &format!("{field}.name"),
                "worker node group name must not be empty",
                "give every worker group a unique name, e.g. md-1",
            );
        } else if let Some(first) = names.insert(name, i) {
            f.error(
                "workers.name",
                &format!("{field}.name"),
                format!("worker node group name `{name}` is used twice (also by group {first})"),
                "give every worker group a unique name",
            );
        } else if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        {
            f.error(
                "workers.name",
                &format!("{field}.name"),
                format!(
                    "worker node group name `{name}` cannot be part of a Kubernetes object name"
                ),
                "use letters, digits and '-'",
            );
        }
        match g.count {
            Some(n) if n < 0 => f.error(
                "workers.count",
                &format!("{field}.count"),
                format!("worker node group count {n} must not be negative"),
                "use 0 or more",
            ),
            Some(n) if n > MAX_REPLICAS => f.error(
                "workers.count",
                &format!("{field}.count"),
                format!("worker node group count {n} is beyond what Cluster API can represent"),
                "use a realistic count",
            ),
            _ => {}
        }
        if let Some(auto) = &g.autoscaling_configuration {
            let min = auto.min_count.unwrap_or(0);
            let max = auto.max_count.unwrap_or(0);
            let count = g.count.unwrap_or(min);
            if min < 0 || max < min {
                f.error(
                    "workers.autoscaling",
                    &format!("{field}.autoscalingConfiguration"),
                    format!("autoscaling minCount {min} and maxCount {max}: need 0 ≤ minCount ≤ maxCount"),
                    "set minCount ≤ maxCount",
                );
            } else if count < min || count > max {
                f.error(
                    "workers.autoscaling",
                    &format!("{field}.count"),
                    format!("worker node group count {count} must be between minCount {min} and maxCount {max}"),
                    "set count within the autoscaling bounds",
                );
            }
        }
        machine_ref(
            spec,
            g.machine_group_ref.as_ref(),
            &format!("{field}.machineGroupRef"),
            "worker",
            f,
        );
        taints(g.taints.as_deref(), &format!("{field}.taints"), f);
        labels(g.labels.as_ref(), &format!("{field}.labels"), f);
        if let Some(v) = kubernetes_version(
            g.kubernetes_version.as_deref(),
            &format!("{field}.kubernetesVersion"),
            f,
            false,
        ) && let Some(cv) = cluster_version
            && (v > cv || cv.minor.saturating_sub(v.minor) > 2)
        {
            f.error(
                        "workers.kubernetes-version",
                        &format!("{field}.kubernetesVersion"),
                        format!("worker version {v} must not be newer than the cluster version {cv} nor more than 2 minor versions older"),
                        format!("use a version from 1.{} to {cv}", cv.minor.saturating_sub(2)),
                    );
        }
        if let Some(strategy) = &g.upgrade_rollout_strategy {
            let sfield = format!("{field}.upgradeRolloutStrategy");
            rollout_type(strategy.type_.as_deref(), &sfield, f);
            match &strategy.rolling_update {
                None if strategy.type_.as_deref() != Some("InPlace") => f.error(
                    "workers.rollout",
                    &format!("{sfield}.rollingUpdate"),
                    "upgradeRolloutStrategy needs rollingUpdate with maxSurge and maxUnavailable",
                    "add `rollingUpdate: {maxSurge: 1, maxUnavailable: 0}`",
                ),
                None => {}
                Some(ru) => {
                    if ru.max_surge < 0 || ru.max_unavailable < 0 {
                        f.error(
                            "workers.rollout",
                            &format!("{sfield}.rollingUpdate"),
                            "maxSurge and maxUnavailable must not be negative",
                            "use e.g. maxSurge 1, maxUnavailable 0",
                        );
                    } else if ru.max_surge == 0 && ru.max_unavailable == 0 {
                        f.error(
                            "workers.rollout",
                            &format!("{sfield}.rollingUpdate"),
                            "maxSurge and maxUnavailable cannot both be 0: the rollout could never progress",
                            "use e.g. maxSurge 1, maxUnavailable 0",
                        );
                    }
                }
            }
        }
        if let Some(mhc) = &g.machine_health_check {
            machine_health_check(mhc, &format!("{field}.machineHealthCheck"), f);
        }
    }
    let self_managed = spec
        .cluster
        .spec
        .management_cluster
        .as_ref()
        .and_then(|m| m.name.as_deref())
        .is_none_or(|m| m.is_empty() || m == spec.name());
    let all_tainted = groups.iter().all(|g| {
        g.taints
            .iter()
            .flatten()
            .any(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute"))
    });
    if self_managed && all_tainted {
        f.error(
            "workers.taints",
            "spec.workerNodeGroupConfigurations",
            "every worker node group has a NoSchedule or NoExecute taint: system pods of a management cluster could not run",
            "leave at least one worker node group without NoSchedule/NoExecute taints",
        );
    }
}

fn external_etcd(spec: &ClusterSpec, f: &mut Findings) {
    let Some(etcd) = &spec.cluster.spec.external_etcd_configuration else {
        return;
    };
    let field = "spec.externalEtcdConfiguration";
    match etcd.count {
        None | Some(..=0) => f.error(
            "etcd.count",
            &format!("{field}.count"),
            format!(
                "external etcd count must be greater than 0, got {}",
                etcd.count.unwrap_or(0)
            ),
            "use 3 (or 5)",
        ),
        Some(n) if n % 2 == 0 || n > MAX_REPLICAS => f.error(
            "etcd.count",
            &format!("{field}.count"),
            format!("external etcd count {n} must be odd"),
            "use 1, 3 or 5 so etcd keeps quorum",
        ),
        Some(n) if n != 3 && n != 5 => f.warning(
            "etcd.count",
            &format!("{field}.count"),
            format!("external etcd count {n}: 3 or 5 is recommended"),
            "",
        ),
        Some(_) => {}
    }
    machine_ref(
        spec,
        etcd.machine_group_ref.as_ref(),
        &format!("{field}.machineGroupRef"),
        "etcd",
        f,
    );
}

fn proxy(spec: &ClusterSpec, f: &mut Findings) {
    let Some(proxy) = &spec.cluster.spec.proxy_configuration else {
        return;
    };
    for (value, name) in [
        (&proxy.http_proxy, "httpProxy"),
        (&proxy.https_proxy, "httpsProxy"),
    ] {
        let field = format!("spec.proxyConfiguration.{name}");
        match value.as_deref() {
            None | Some("") => f.error(
                "proxy",
                &field,
                format!("{name} is not set"),
                "set both httpProxy and httpsProxy, e.g. http://10.0.0.5:3128",
            ),
            Some(v) => {
                if let Some(problem) = proxy_problem(v) {
                    f.error(
                        "proxy",
                        &field,
                        format!("{name} `{v}` {problem}"),
                        "write http://host:port or host:port",
                    );
                }
            }
        }
    }
}

fn registry_mirror(spec: &ClusterSpec, f: &mut Findings) {
    let Some(mirror) = &spec.cluster.spec.registry_mirror_configuration else {
        return;
    };
    let field = "spec.registryMirrorConfiguration";
    match mirror.endpoint.as_deref() {
        None | Some("") => f.error(
            "registry-mirror",
            &format!("{field}.endpoint"),
            "registry mirror endpoint is not set",
            "set the mirror's IP address or host name",
        ),
        Some(e) if !is_host(e) => f.error(
            "registry-mirror",
            &format!("{field}.endpoint"),
            format!("registry mirror endpoint `{e}` is not an IP address or host name"),
            "write the host only; the port goes in `port`",
        ),
        Some(_) => {}
    }
    if let Some(port) = mirror.port.as_deref().filter(|p| !p.is_empty())
        && !port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
    {
        f.error(
            "registry-mirror",
            &format!("{field}.port"),
            format!("registry mirror port `{port}` is invalid"),
            "use a port from 1 to 65535",
        );
    }
    let mut curated = 0;
    for (i, ns) in mirror.oci_namespaces.iter().flatten().enumerate() {
        if ns.registry.trim().is_empty() {
            f.error(
                "registry-mirror",
                &format!("{field}.ociNamespaces[{i}].registry"),
                "ociNamespaces registry must not be empty",
                "name the upstream registry, e.g. public.ecr.aws",
            );
        } else if let Err(problem) = ns.registry.parse::<RegistryHost>() {
            f.error(
                "registry-mirror",
                &format!("{field}.ociNamespaces[{i}].registry"),
                format!(
                    "ociNamespaces registry `{}` {problem}",
                    shorten(&ns.registry).escape_debug()
                ),
                "name the upstream registry as host[:port], e.g. public.ecr.aws or 10.0.0.5:5000",
            );
        }
        if ns.registry == CURATED_PACKAGES_REGISTRY {
            curated += 1;
        }
    }
    if curated > 1 {
        f.error(
            "registry-mirror",
            &format!("{field}.ociNamespaces"),
            "only one namespace may mirror the curated packages registry",
            "keep one ociNamespaces entry for the curated packages registry",
        );
    }
    if mirror.insecure_skip_verify == Some(true) {
        let bottlerocket = spec
            .machine_configs
            .values()
            .any(|m| m.spec.os_family.as_deref() == Some("bottlerocket"));
        if bottlerocket {
            f.error(
                "registry-mirror",
                &format!("{field}.insecureSkipVerify"),
                "InsecureSkipVerify is not supported for bottlerocket",
                "give the mirror a certificate and set caCertContent instead",
            );
        }
    }
}

/// Each reference names an OIDCConfig or AWSIamConfig in the file; one of each at most.
fn identity_provider_refs(spec: &ClusterSpec, f: &mut Findings) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, r) in spec
        .cluster
        .spec
        .identity_provider_refs
        .iter()
        .flatten()
        .enumerate()
    {
        let field = format!("spec.identityProviderRefs[{i}]");
        let exists = match r.kind() {
            "OIDCConfig" => spec.oidc_configs.contains_key(r.name()),
            "AWSIamConfig" => spec.aws_iam_configs.contains_key(r.name()),
            other => {
                f.error(
                    "cluster.identity-provider-ref",
                    &format!("{field}.kind"),
                    format!("identity provider kind `{other}` is not supported"),
                    "use OIDCConfig or AWSIamConfig",
                );
                continue;
            }
        };
        if let Some(first) = seen.insert(r.kind(), i) {
            f.error(
                "cluster.identity-provider-ref",
                &field,
                format!(
                    "a second {} reference (the first is identityProviderRefs[{first}])",
                    r.kind()
                ),
                format!("reference one {} only", r.kind()),
            );
        }
        if !exists {
            f.error(
                "cluster.identity-provider-ref",
                &format!("{field}.name"),
                format!("unable to find {} {}", r.kind(), r.name()),
                format!("add a {} named {} to the file", r.kind(), r.name()),
            );
        }
    }
}
