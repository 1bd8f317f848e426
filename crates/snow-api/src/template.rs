//! The commented starting spec that `snowctl generate clusterconfig` prints (EKS Anywhere's CLI flow), with the
//! values operators otherwise patch in with sed.

use crate::OsFamily;
use crate::types::API_VERSION;
use crate::validate::syntax::NEWEST_KUBE_MINOR;
use std::fmt::Write as _;

/// The Kubernetes version a generated spec gets when none is asked for.
pub const DEFAULT_KUBERNETES_VERSION: &str = "1.36";

/// What to fill into the generated spec. Empty values leave the field for the user.
#[derive(Debug, Clone, Default)]
pub struct TemplateOptions {
    /// Cluster name.
    pub name: String,
    /// Device IPs.
    pub devices: Vec<String>,
    /// Control-plane endpoint IP.
    pub endpoint: Option<String>,
    /// Kubernetes version (`1.NN`).
    pub kubernetes_version: Option<String>,
    /// Node OS.
    pub os: OsFamily,
    /// Instance type for all machine configs.
    pub instance_type: Option<String>,
    /// SSH key pair name.
    pub ssh_key_name: Option<String>,
    /// The GitOps repository's URL (`ssh://` or `https://`): adds a FluxConfig of that
    /// repository, named after the cluster, and the Cluster's `gitOpsRef` to it.
    pub gitops_url: Option<String>,
    /// The registry mirror the nodes pull from: written as the Cluster's
    /// `registryMirrorConfiguration` (endpoint, port, `caCertContent`, `ociNamespaces`).
    pub registry_mirror: Option<crate::types::cluster::RegistryMirrorConfiguration>,
}

/// The cluster name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cluster name `{name}` is invalid: {reason}")]
pub struct InvalidClusterName {
    /// The name given.
    pub name: String,
    /// Why.
    pub reason: &'static str,
}

/// Checks a cluster name as EKS Anywhere does: `^[a-zA-Z][a-zA-Z0-9-]+$`, at most 35 characters.
pub fn check_cluster_name(name: &str) -> Result<(), InvalidClusterName> {
    let mut chars = name.chars();
    let reason = if name.len() < 2 {
        Some("it needs at least 2 characters")
    } else if name.len() > 35 {
        Some("it must have at most 35 characters")
    } else if !chars.next().is_some_and(|c| c.is_ascii_alphabetic()) {
        Some("it must start with a letter")
    } else if !chars.all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Some("use letters, digits and '-' only")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(InvalidClusterName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

impl TemplateOptions {
    /// Every value that cannot go into a spec, as `(option, problem)`: the name first, then
    /// devices, endpoint, Kubernetes version and instance type. Empty when all are usable.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        if let Err(err) = check_cluster_name(&self.name) {
            problems.push(("name", err.to_string()));
        }
        let not_ip = |value: &str| value.parse::<std::net::IpAddr>().is_err();
        for device in self.devices.iter().filter(|d| not_ip(d)) {
            problems.push(("devices", format!("`{device}` is not an IP address")));
        }
        if let Some(endpoint) = self.endpoint.as_deref().filter(|e| not_ip(e)) {
            problems.push(("endpoint", format!("`{endpoint}` is not an IP address")));
        }
        if let Some(v) = self.kubernetes_version.as_deref()
            && crate::validate::syntax::KubeVersion::parse(v).is_none()
        {
            problems.push((
                "kubernetes-version",
                format!("`{v}` is not of the form 1.NN (e.g. 1.33)"),
            ));
        }
        if let Some(t) = self.instance_type.as_deref()
            && !crate::validate::syntax::is_snow_instance_type(t)
        {
            problems.push((
                "instance-type",
                format!("`{t}` is not a Snow instance type (e.g. sbe-c.large, sbe-c.xlarge)"),
            ));
        }
        if let Some(url) = self.gitops_url.as_deref()
            && let Err(err) = crate::gitops::GitUrl::parse(url)
        {
            problems.push(("gitops-url", format!("{err}; {}", err.hint())));
        }
        problems
    }
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Renders the starting spec: Cluster, SnowDatacenterConfig, and SnowMachineConfigs for the
/// control plane (`<name>-cp`) and the workers (`<name>`).
pub fn cluster_config(opts: &TemplateOptions) -> Result<String, InvalidClusterName> {
    check_cluster_name(&opts.name)?;
    let name = opts.name.as_str();
    let version = opts
        .kubernetes_version
        .as_deref()
        .unwrap_or(DEFAULT_KUBERNETES_VERSION);
    let endpoint = opts.endpoint.as_deref().unwrap_or("");
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "apiVersion: {API_VERSION}");
    let _ = writeln!(w, "kind: Cluster");
    let _ = writeln!(w, "metadata:");
    let _ = writeln!(w, "  name: {name}");
    let _ = writeln!(w, "spec:");
    let _ = writeln!(w, "  clusterNetwork:");
    let _ = writeln!(w, "    cniConfig:");
    let _ = writeln!(w, "      cilium: {{}}");
    let (pods, services) = cluster_cidrs(opts);
    let _ = writeln!(
        w,
        "    # Pod and service CIDRs must not contain the endpoint or any node address."
    );
    let _ = writeln!(w, "    pods:");
    let _ = writeln!(w, "      cidrBlocks:");
    let _ = writeln!(w, "      - {pods}");
    let _ = writeln!(w, "    services:");
    let _ = writeln!(w, "      cidrBlocks:");
    let _ = writeln!(w, "      - {services}");
    let _ = writeln!(w, "  controlPlaneConfiguration:");
    let _ = writeln!(w, "    count: 3");
    let _ = writeln!(w, "    endpoint:");
    let _ = writeln!(
        w,
        "      # The API server address held by kube-vip: a free IP on the devices' network,"
    );
    let _ = writeln!(
        w,
        "      # outside the pod and service CIDRs and outside any SnowIPPool range."
    );
    if endpoint.is_empty() {
        let _ = writeln!(w, "      host: \"\" # FILL IN");
    } else {
        let _ = writeln!(w, "      host: {}", quoted(endpoint));
    }
    let _ = writeln!(w, "    machineGroupRef:");
    let _ = writeln!(w, "      kind: SnowMachineConfig");
    let _ = writeln!(w, "      name: {name}-cp");
    let _ = writeln!(w, "  datacenterRef:");
    let _ = writeln!(w, "    kind: SnowDatacenterConfig");
    let _ = writeln!(w, "    name: {name}");
    if opts.gitops_url.is_some() {
        let _ = writeln!(w, "  gitOpsRef:");
        let _ = writeln!(w, "    kind: FluxConfig");
        let _ = writeln!(w, "    name: {name}");
    }
    let _ = writeln!(
        w,
        "  # 1.NN, quoted. The release bundle decides which versions are available."
    );
    let _ = writeln!(w, "  kubernetesVersion: {}", quoted(version));
    let _ = writeln!(w, "  managementCluster:");
    let _ = writeln!(w, "    name: {name}");
    if let Some(mirror) = &opts.registry_mirror {
        registry_mirror(w, mirror);
    }
    let _ = writeln!(w, "  workerNodeGroupConfigurations:");
    let _ = writeln!(w, "  - count: 3");
    let _ = writeln!(w, "    machineGroupRef:");
    let _ = writeln!(w, "      kind: SnowMachineConfig");
    let _ = writeln!(w, "      name: {name}");
    let _ = writeln!(w, "    name: md-0");
    let _ = writeln!(w, "---");
    let _ = writeln!(w, "apiVersion: {API_VERSION}");
    let _ = writeln!(w, "kind: SnowDatacenterConfig");
    let _ = writeln!(w, "metadata:");
    let _ = writeln!(w, "  name: {name}");
    let _ = writeln!(
        w,
        "# identityRef defaults to the Secret {name}-snow-credentials, which snowctl creates from"
    );
    let _ = writeln!(w, "# the devices' credentials file and CA bundle.");
    let _ = writeln!(w, "spec: {{}}");
    for machine in [format!("{name}-cp"), name.to_owned()] {
        let _ = writeln!(w, "---");
        machine_config(w, &machine, opts);
    }
    if let Some(url) = &opts.gitops_url {
        let _ = writeln!(w, "---");
        flux_config(w, name, url);
    }
    Ok(out)
}

/// EKS Anywhere's default CIDRs, unless the endpoint or a device lies in them (Snow devices often
/// sit on 192.168.x.x): then the first alternative that holds none of them.
fn cluster_cidrs(opts: &TemplateOptions) -> (&'static str, &'static str) {
    const PODS: [&str; 3] = ["192.168.0.0/16", "10.244.0.0/16", "172.20.0.0/16"];
    const SERVICES: [&str; 3] = ["10.96.0.0/12", "172.30.0.0/16", "10.255.0.0/16"];
    let taken: Vec<std::net::IpAddr> = opts
        .endpoint
        .iter()
        .chain(&opts.devices)
        .filter_map(|ip| ip.parse().ok())
        .collect();
    let free = |cidrs: [&'static str; 3]| {
        cidrs
            .into_iter()
            .find(|c| {
                c.parse::<ipnet::IpNet>()
                    .is_ok_and(|net| !taken.iter().any(|ip| net.contains(ip)))
            })
            .unwrap_or(cidrs[0])
    };
    (free(PODS), free(SERVICES))
}

/// The Cluster's `registryMirrorConfiguration`, keys in the template's (alphabetical) order.
fn registry_mirror(w: &mut String, m: &crate::types::cluster::RegistryMirrorConfiguration) {
    let _ = writeln!(
        w,
        "  # The registry the nodes pull every image from: its certificate must be signed by"
    );
    let _ = writeln!(
        w,
        "  # caCertContent and name the endpoint (an IP endpoint needs an IP SAN)."
    );
    let _ = writeln!(w, "  registryMirrorConfiguration:");
    if let Some(ca) = m
        .ca_cert_content
        .as_deref()
        .filter(|c| !c.trim().is_empty())
    {
        let _ = writeln!(w, "    caCertContent: |");
        for line in ca.trim_end().lines() {
            let _ = writeln!(w, "      {}", line.trim_end());
        }
    }
    let _ = writeln!(
        w,
        "    endpoint: {}",
        quoted(m.endpoint.as_deref().unwrap_or_default())
    );
    if let Some(namespaces) = m.oci_namespaces.as_deref().filter(|n| !n.is_empty()) {
        let _ = writeln!(w, "    ociNamespaces:");
        for ns in namespaces {
            let _ = writeln!(w, "    - namespace: {}", quoted(&ns.namespace));
            let _ = writeln!(w, "      registry: {}", quoted(&ns.registry));
        }
    }
    if let Some(port) = &m.port {
        let _ = writeln!(w, "    port: {}", quoted(port));
    }
}

/// The FluxConfig of `--gitops-url`: the repository, the defaults written as comments.
fn flux_config(w: &mut String, name: &str, url: &str) {
    let _ = writeln!(w, "apiVersion: {API_VERSION}");
    let _ = writeln!(w, "kind: FluxConfig");
    let _ = writeln!(w, "metadata:");
    let _ = writeln!(w, "  name: {name}");
    let _ = writeln!(w, "spec:");
    let _ = writeln!(
        w,
        "  # Defaults: branch {}, clusterConfigPath clusters/{name}, systemNamespace {}.",
        crate::gitops::DEFAULT_BRANCH,
        crate::gitops::DEFAULT_SYSTEM_NAMESPACE
    );
    let _ = writeln!(w, "  git:");
    let _ = writeln!(w, "    repositoryUrl: {}", quoted(url));
    if !url.starts_with("https://") {
        let _ = writeln!(w, "    # rsa, ecdsa (the default) or ed25519.");
        let _ = writeln!(w, "    sshKeyAlgorithm: ecdsa");
    }
}

fn machine_config(w: &mut String, name: &str, opts: &TemplateOptions) {
    let _ = writeln!(w, "apiVersion: {API_VERSION}");
    let _ = writeln!(w, "kind: SnowMachineConfig");
    let _ = writeln!(w, "metadata:");
    let _ = writeln!(w, "  name: {name}");
    let _ = writeln!(w, "spec:");
    let _ = writeln!(
        w,
        "  # Empty: use the AMI tagged for the Kubernetes version and OS on each device."
    );
    let _ = writeln!(w, "  amiID: \"\"");
    if opts.os == OsFamily::Bottlerocket {
        let _ = writeln!(
            w,
            "  # Bottlerocket keeps container data on its own volume (at least 25 GiB)."
        );
        let _ = writeln!(w, "  containersVolume:");
        let _ = writeln!(w, "    size: 25");
    }
    let _ = writeln!(
        w,
        "  # The IPs of the Snow devices these machines may run on."
    );
    let _ = writeln!(w, "  devices:");
    if opts.devices.is_empty() {
        let _ = writeln!(w, "  - \"\" # FILL IN");
    }
    for device in &opts.devices {
        let _ = writeln!(w, "  - {}", quoted(device));
    }
    let _ = writeln!(
        w,
        "  instanceType: {}",
        quoted(opts.instance_type.as_deref().unwrap_or("sbe-c.large"))
    );
    let _ = writeln!(w, "  network:");
    let _ = writeln!(w, "    directNetworkInterfaces:");
    let _ = writeln!(w, "    - dhcp: true");
    let _ = writeln!(w, "      index: 1");
    let _ = writeln!(w, "      primary: true");
    let _ = writeln!(w, "  osFamily: {}", opts.os.as_str());
    let _ = writeln!(w, "  physicalNetworkConnector: SFP_PLUS");
    let _ = writeln!(
        w,
        "  # Empty: create generates an RSA-4096 key pair once (./<cluster>/eks-a-id_rsa), names it\n  # eksa-default-<cluster>-<uuid4> and imports it on each of these devices that lacks it."
    );
    let _ = writeln!(
        w,
        "  sshKeyName: {}",
        quoted(opts.ssh_key_name.as_deref().unwrap_or(""))
    );
}

/// The newest Kubernetes minor version EKS Anywhere knows, as `1.NN`.
pub fn newest_kubernetes_version() -> String {
    format!("1.{NEWEST_KUBE_MINOR}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_template_validates_clean() {
        let opts = TemplateOptions {
            name: "edge".into(),
            devices: vec!["192.168.1.10".into(), "192.168.1.11".into()],
            endpoint: Some("192.168.1.100".into()),
            ..Default::default()
        };
        let report = crate::check(&cluster_config(&opts).unwrap()).unwrap();
        assert!(report.findings.is_empty(), "{:#?}", report.findings);
    }

    #[test]
    fn gitops_template_validates_clean_and_names_its_flux_config() {
        for url in [
            "ssh://git@192.168.1.5/fleet/edge.git",
            "https://git.example/fleet.git",
        ] {
            let opts = TemplateOptions {
                name: "edge".into(),
                devices: vec!["192.168.1.10".into()],
                endpoint: Some("192.168.1.100".into()),
                gitops_url: Some(url.into()),
                ..Default::default()
            };
            assert!(opts.problems().is_empty());
            let report = crate::check(&cluster_config(&opts).unwrap()).unwrap();
            assert!(report.findings.is_empty(), "{:#?}", report.findings);
            let spec = report.into_valid().unwrap();
            let gitops = spec.gitops().expect("the FluxConfig is referenced");
            assert_eq!(gitops.name(), "edge");
            assert_eq!(gitops.repository_url(), url);
            assert_eq!(gitops.cluster_config_path().as_str(), "clusters/edge");
        }
        let opts = TemplateOptions {
            name: "edge".into(),
            gitops_url: Some("git@github.com:acme/fleet.git".into()),
            ..Default::default()
        };
        let problems = opts.problems();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].0, "gitops-url");
        assert!(
            problems[0]
                .1
                .contains("ssh://git@github.com/acme/fleet.git"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_mirror_template_validates_clean_and_keeps_the_ca_byte_for_byte() {
        use crate::types::cluster::{OciNamespace, RegistryMirrorConfiguration};
        let ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let opts = TemplateOptions {
            name: "edge".into(),
            devices: vec!["192.168.1.10".into()],
            endpoint: Some("192.168.1.100".into()),
            registry_mirror: Some(RegistryMirrorConfiguration {
                endpoint: Some("10.0.0.5".into()),
                port: Some("5000".into()),
                ca_cert_content: Some(ca.into()),
                oci_namespaces: Some(vec![OciNamespace {
                    registry: "public.ecr.aws".into(),
                    namespace: "eks".into(),
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let report = crate::check(&cluster_config(&opts).unwrap()).unwrap();
        assert!(report.findings.is_empty(), "{:#?}", report.findings);
        let spec = report.into_valid().unwrap();
        let mirror = spec
            .cluster
            .spec
            .registry_mirror_configuration
            .clone()
            .unwrap();
        assert_eq!(mirror, opts.registry_mirror.unwrap());
    }

    #[test]
    fn bottlerocket_template_validates_clean() {
        let opts = TemplateOptions {
            name: "edge".into(),
            devices: vec!["10.0.0.1".into()],
            endpoint: Some("10.0.0.100".into()),
            os: OsFamily::Bottlerocket,
            kubernetes_version: Some("1.33".into()),
            instance_type: Some("sbe-c.xlarge".into()),
            ssh_key_name: Some("my-key".into()),
            gitops_url: None,
            registry_mirror: None,
        };
        let report = crate::check(&cluster_config(&opts).unwrap()).unwrap();
        assert!(report.findings.is_empty(), "{:#?}", report.findings);
        let spec = report.spec.unwrap();
        assert_eq!(
            spec.machine_configs["edge"].spec.ssh_key_name.as_deref(),
            Some("my-key")
        );
    }

    #[test]
    fn unfilled_template_reports_exactly_what_to_fill() {
        let opts = TemplateOptions {
            name: "edge".into(),
            ..Default::default()
        };
        let report = crate::check(&cluster_config(&opts).unwrap()).unwrap();
        let got: Vec<(String, String)> = report
            .findings
            .iter()
            .map(|f| {
                (
                    f.object.clone().unwrap_or_default(),
                    f.field.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "Cluster/edge".to_owned(),
                    "spec.controlPlaneConfiguration.endpoint.host".to_owned()
                ),
                (
                    "SnowMachineConfig/edge".to_owned(),
                    "spec.devices[0]".to_owned()
                ),
                (
                    "SnowMachineConfig/edge-cp".to_owned(),
                    "spec.devices[0]".to_owned()
                ),
            ]
        );
        assert!(report.findings.iter().all(|f| f.line.is_some()));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_cluster_name("a").is_err());
        assert!(check_cluster_name("1abc").is_err());
        assert!(check_cluster_name("abc_d").is_err());
        assert!(check_cluster_name(&"a".repeat(36)).is_err());
        assert!(check_cluster_name("edge-1").is_ok());
    }
}
