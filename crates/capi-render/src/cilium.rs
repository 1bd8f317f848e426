//! Cilium, the cluster's CNI, as EKS Anywhere renders it (its Cilium templater and Helm
//! executable): the Helm values computed from the spec's `clusterNetwork.cniConfig.cilium` and the
//! bundle's `cilium` section, and the exact `helm template` (and `helm registry login`) command
//! lines. Pure: running helm is `snow_lifecycle::cni::helm`.
//!
//! The command is
//! `helm template oci://<chart> --version <chart tag> --namespace kube-system --kube-version <maj.min> --insecure-skip-tls-verify -f -`
//! with the values as YAML on stdin and `HELM_EXPERIMENTAL_OCI=1` (plus the spec's proxy) in the
//! environment; no release name. With a registry mirror only the chart's registry host is replaced
//! (by the mirror's `host:port[/namespace]`); the image values keep their registry, because the
//! nodes' containerd mirrors the pulls. With `authenticate: true`, first
//! `helm registry login <host:port> --username <user> --password-stdin --insecure`.
//! EKS Anywhere always passes the insecure flags (its Helm client factory sets them).

use crate::{RenderError, objects::Mirror};
use serde_json::{Map, Value, json};
use snow_api::{
    ValidSpec,
    cni::{PolicyEnforcementMode, Routing},
    release::ClusterRelease,
};

/// The namespace Cilium is rendered into.
pub const NAMESPACE: &str = "kube-system";
/// The namespace of the Snow provider (CAPAS), allowed when policy enforcement is `always`.
const PROVIDER_NAMESPACE: &str = snow_credentials::encode::CAPAS_NAMESPACE;

/// Everything needed to run `helm template` for a cluster's Cilium.
#[derive(Debug, Clone, PartialEq)]
pub struct HelmTemplate {
    /// The chart, `oci://<registry>/<path>` (the mirror's registry when the spec has one).
    pub chart: String,
    /// The chart version: the tag of the bundle's `cilium.helmChart` URI.
    pub version: String,
    /// `<major>.<minor>` of the release's Kubernetes (its `kube-apiserver` image tag).
    pub kube_version: String,
    /// The Helm values.
    pub values: Map<String, Value>,
    /// The mirror registry (`host:port`) to log in to first, when the mirror authenticates.
    pub login: Option<String>,
    /// Environment for helm: `HELM_EXPERIMENTAL_OCI=1`, then the spec's proxy variables.
    pub env: Vec<(String, String)>,
    /// Objects appended to helm's output: allow-all NetworkPolicies when policy enforcement is
    /// `always`.
    pub append: Option<String>,
}

impl HelmTemplate {
    /// The arguments of `helm template` (the values come on stdin: `-f -`). For a chart file
    /// ([`HelmTemplate::with_chart_file`]) there is no `--version` and no registry flag.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["template", &self.chart];
        if self.chart.starts_with("oci://") {
            args.extend(["--version", &self.version]);
        }
        args.extend([
            "--namespace",
            NAMESPACE,
            "--kube-version",
            &self.kube_version,
        ]);
        if self.chart.starts_with("oci://") {
            args.push("--insecure-skip-tls-verify");
        }
        args.extend(["-f", "-"]);
        args.into_iter().map(str::to_owned).collect()
    }

    /// The same invocation with the chart read from a file (the `.tgz` of the bundle's chart,
    /// e.g. taken from an offline archive) instead of pulled from a registry: no registry, so no
    /// login either. The version stays, for what is said about the chart.
    pub fn with_chart_file(mut self, path: &std::path::Path) -> HelmTemplate {
        self.chart = path.display().to_string();
        self.login = None;
        self
    }

    /// The arguments of `helm registry login` for `username` (the password goes on stdin), when
    /// the mirror authenticates.
    pub fn login_args(&self, username: &str) -> Option<Vec<String>> {
        let registry = self.login.as_deref()?;
        Some(
            [
                "registry",
                "login",
                registry,
                "--username",
                username,
                "--password-stdin",
                "--insecure",
            ]
            .map(str::to_owned)
            .to_vec(),
        )
    }

    /// The values as YAML, as helm reads them on stdin.
    pub fn values_yaml(&self) -> String {
        crate::yaml::emit(&Value::Object(self.values.clone()), 0)
    }
}

/// The `helm template` invocation for the cluster's Cilium: chart, version, Kubernetes version,
/// values, mirror login, environment and appended objects.
pub fn helm_template(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
) -> Result<HelmTemplate, RenderError> {
    Ok(HelmTemplate {
        append: network_policies(spec),
        ..invocation(
            spec,
            &release.bundle.cilium()?.helm_chart,
            kube_version(release.distro)?,
            values(spec, release)?,
        )
    })
}

/// The `helm template` invocation of `chart` with these values, pulled as the spec says (its
/// registry mirror, the mirror's login, its proxy); nothing appended.
pub(crate) fn invocation(
    spec: &ValidSpec,
    chart: &snow_api::release::Image,
    kube_version: String,
    values: Map<String, Value>,
) -> HelmTemplate {
    let mirror = spec
        .cluster
        .spec
        .registry_mirror_configuration
        .as_ref()
        .map(Mirror::new);
    let chart_uri = format!("oci://{}", chart.repository());
    let chart_uri = match &mirror {
        Some(m) => m.rewrite(&chart_uri),
        None => chart_uri,
    };
    let login = spec
        .cluster
        .spec
        .registry_mirror_configuration
        .as_ref()
        .filter(|m| m.authenticate == Some(true))
        .and(mirror.as_ref())
        .map(|m| m.base().to_owned());
    HelmTemplate {
        chart: chart_uri,
        version: chart.tag().unwrap_or_default().to_owned(),
        kube_version,
        values,
        login,
        env: env(spec),
        append: None,
    }
}

/// EKS Anywhere's Helm values for Cilium. With `helmValues` they are exactly `helmValues` (no
/// default is added, not even the images). Otherwise: fixed settings, the bundle's images, one
/// operator replica for a one-machine cluster without workers, and the spec's settings.
pub fn values(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
) -> Result<Map<String, Value>, RenderError> {
    let s = &spec.cluster.spec;
    let no_workers = s
        .worker_node_group_configurations
        .as_ref()
        .is_none_or(Vec::is_empty);
    let one_control_plane = s
        .control_plane_configuration
        .as_ref()
        .and_then(|cp| cp.count)
        == Some(1);
    // Snow requires a worker group, so this holds only for specs other providers allow; kept so
    // the rule reads as EKS Anywhere's.
    let one_machine = no_workers && one_control_plane;
    Ok(values_of(
        spec.cilium(),
        one_machine,
        release.bundle.cilium()?,
    ))
}

/// [`values`] from the settings themselves: `one_machine` for a cluster of one control-plane
/// machine and no worker.
pub(crate) fn values_of(
    cilium: snow_api::cni::Cilium,
    one_machine: bool,
    bundle: &snow_api::release::CiliumBundle,
) -> Map<String, Value> {
    if let Some(values) = cilium.helm_values {
        return values;
    }
    let tag = |image: &snow_api::release::Image| image.tag().unwrap_or_default().to_owned();
    let mut operator = json!({
        "image": {
            // The chart appends the operator flavour ("-generic") to the repository itself.
            "repository": bundle.operator.repository().trim_end_matches("-generic"),
            "tag": tag(&bundle.operator),
        },
        "prometheus": {"enabled": true},
        "tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
            {"key": "node.cilium.io/agent-not-ready", "operator": "Exists"},
        ],
    });
    if one_machine {
        operator["replicas"] = json!(1);
    }
    let mut cni = json!({"chainingMode": "portmap"});
    if let Some(exclusive) = cilium.cni_exclusive {
        cni["exclusive"] = json!(exclusive);
    }
    let mut v = Map::new();
    for (key, value) in [
        ("cni", cni),
        ("ipam", json!({"mode": "kubernetes"})),
        ("identityAllocationMode", json!("crd")),
        ("prometheus", json!({"enabled": true})),
        ("rollOutCiliumPods", json!(true)),
        ("routingMode", json!("tunnel")),
        ("tunnelProtocol", json!("geneve")),
        (
            "image",
            json!({"repository": bundle.cilium.repository(), "tag": tag(&bundle.cilium)}),
        ),
        ("operator", operator),
        ("envoy", json!({"enabled": false})),
    ] {
        v.insert(key.to_owned(), value);
    }
    if let Some(mode) = cilium.policy_enforcement_mode {
        v.insert("policyEnforcementMode".into(), json!(mode.as_str()));
    }
    if let Some(interfaces) = cilium.egress_masquerade_interfaces {
        v.insert("egressMasqueradeInterfaces".into(), json!(interfaces));
    }
    if let Routing::Direct { ipv4, ipv6 } = cilium.routing {
        v.insert("routingMode".into(), json!("native"));
        // A string, as EKS Anywhere sets it.
        v.insert("autoDirectNodeRoutes".into(), json!("true"));
        v.remove("tunnelProtocol");
        v.insert("ipv4NativeRoutingCIDR".into(), json!(ipv4.to_string()));
        if let Some(ipv6) = ipv6 {
            v.insert("ipv6NativeRoutingCIDR".into(), json!(ipv6.to_string()));
        }
    }
    v
}

/// `<major>.<minor>` of the EKS-D release's Kubernetes version, from its `kube-apiserver` image tag
/// (`v1.30.14-eks-1-30-58` → `1.30`), as EKS Anywhere passes `--kube-version`.
pub(crate) fn kube_version(distro: &snow_api::release::KubeDistro) -> Result<String, RenderError> {
    let tag = &distro.kubernetes.tag;
    let mut parts = tag.trim_start_matches('v').split('.');
    let number = |p: Option<&str>| {
        p.map(|p| p.split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""))
            .filter(|n| !n.is_empty())
            .and_then(|n| n.parse::<u32>().ok())
    };
    match (number(parts.next()), number(parts.next())) {
        (Some(major), Some(minor)) => Ok(format!("{major}.{minor}")),
        _ => Err(RenderError::Spec(format!(
            "the Kubernetes image tag `{tag}` is not a version (vMAJOR.MINOR.PATCH)"
        ))),
    }
}

/// `HELM_EXPERIMENTAL_OCI=1`, then `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` when the spec has a
/// proxy (`NO_PROXY`: its `noProxy`, the pod and service CIDRs and the control-plane endpoint, as
/// EKS Anywhere's `ProxyConfiguration()` joins them).
fn env(spec: &ValidSpec) -> Vec<(String, String)> {
    let mut env = vec![("HELM_EXPERIMENTAL_OCI".to_owned(), "1".to_owned())];
    let s = &spec.cluster.spec;
    if let Some(proxy) = &s.proxy_configuration {
        let network = s.cluster_network.as_ref();
        let cidrs = |c: Option<&snow_api::types::cluster::CidrBlocks>| {
            c.and_then(|c| c.cidr_blocks.clone()).unwrap_or_default()
        };
        let mut no_proxy = proxy.no_proxy.clone().unwrap_or_default();
        no_proxy.extend(cidrs(network.and_then(|n| n.pods.as_ref())));
        no_proxy.extend(cidrs(network.and_then(|n| n.services.as_ref())));
        if let Some(host) = s
            .control_plane_configuration
            .as_ref()
            .and_then(|cp| cp.endpoint.as_ref())
            .map(|e| e.host.clone())
            .filter(|h| !h.is_empty())
        {
            no_proxy.push(host);
        }
        env.push((
            "HTTP_PROXY".into(),
            proxy.http_proxy.clone().unwrap_or_default(),
        ));
        env.push((
            "HTTPS_PROXY".into(),
            proxy.https_proxy.clone().unwrap_or_default(),
        ));
        env.push(("NO_PROXY".into(), no_proxy.join(",")));
    }
    env
}

/// Appends `extra` (YAML documents) to helm's output as another document.
pub fn append_documents(manifest: &mut String, extra: &str) {
    if !manifest.is_empty() && !manifest.ends_with('\n') {
        manifest.push('\n');
    }
    manifest.push_str("---\n");
    manifest.push_str(extra);
}

/// With policy enforcement `always` (the `helmValues` key when `helmValues` is set, else the
/// field), EKS Anywhere appends an allow-all NetworkPolicy for `kube-system`, and for a
/// self-managed cluster a Namespace and an allow-all policy for each of its own namespaces and
/// the provider's. (Its GitOps namespace is left out: snowctl does not read GitOpsConfig.)
pub fn network_policies(spec: &ValidSpec) -> Option<String> {
    let cilium = spec.cilium();
    let always = match &cilium.helm_values {
        Some(values) => {
            values.get("policyEnforcementMode").and_then(Value::as_str) == Some("always")
        }
        None => cilium.policy_enforcement_mode == Some(PolicyEnforcementMode::Always),
    };
    if !always {
        return None;
    }
    let policy = |ns: &str, name: &str| {
        format!(
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: allow-all-{name}\n  namespace: {ns}\nspec:\n  podSelector: {{}}\n  ingress:\n  - {{}}\n  egress:\n  - {{}}\n  policyTypes:\n  - Ingress\n  - Egress\n"
        )
    };
    let namespace =
        |ns: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n");
    let mut docs = vec![policy(NAMESPACE, NAMESPACE)];
    let self_managed = spec
        .cluster
        .spec
        .management_cluster
        .as_ref()
        .and_then(|m| m.name.as_deref())
        .is_none_or(|m| m.is_empty() || m == spec.name());
    if self_managed {
        use snow_api::names::SYSTEM_NAMESPACE;
        docs.push(namespace(SYSTEM_NAMESPACE));
        docs.push(policy(SYSTEM_NAMESPACE, SYSTEM_NAMESPACE));
        let own = [
            "capi-system",
            "cert-manager",
            "capi-kubeadm-bootstrap-system",
            "capi-kubeadm-control-plane-system",
            "etcdadm-bootstrap-provider-system",
            "etcdadm-controller-system",
        ];
        docs.extend(own.iter().map(|ns| namespace(ns)));
        docs.extend(own.iter().map(|ns| policy(ns, ns)));
        docs.push(namespace(PROVIDER_NAMESPACE));
        docs.push(policy(PROVIDER_NAMESPACE, PROVIDER_NAMESPACE));
    }
    Some(docs.join("---\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_replaces_only_a_mapped_registry_host() {
        let mirror = Mirror::new(&snow_api::types::cluster::RegistryMirrorConfiguration {
            endpoint: Some("10.0.0.5".into()),
            port: Some("5000".into()),
            ..Default::default()
        });
        assert_eq!(
            mirror.rewrite("oci://public.ecr.aws/eks/cilium/cilium"),
            "oci://10.0.0.5:5000/eks/cilium/cilium"
        );
        assert_eq!(
            mirror.rewrite("oci://quay.io/cilium/cilium"),
            "oci://quay.io/cilium/cilium"
        );
        assert_eq!(mirror.rewrite("public.ecr.aws/x:1"), "10.0.0.5:5000/x:1");
    }
}
