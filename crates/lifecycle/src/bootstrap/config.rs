//! The files of a kind bootstrap cluster, generated without IO: the kind configuration
//! (`kind_tmp.yaml`), the API server's audit policy and, with a registry mirror, containerd's
//! `certs.d` (one `hosts.toml` per mirrored registry and the mirror's CA).
//!
//! This is the configuration EKS Anywhere gives kind: the spec's first pod and service CIDRs; a
//! kubeadm `ClusterConfiguration` patch with the EKS Distro CoreDNS, etcd and Kubernetes
//! repositories and tags (mirror-rewritten) and the Kubernetes version; API server auditing with
//! the policy mounted from the host; `fail-cgroupv1: "false"` for the kubelet from Kubernetes 1.31
//! on (EKS-D kubelets otherwise refuse cgroup v1 hosts); one control-plane node; and, with a
//! mirror, `certs.d` mounted at `/etc/containerd/certs.d` and containerd pointed at it.

use capi_render::RegistryMirror;
use snow_api::{ValidSpec, release::ClusterRelease};
use std::path::{Path, PathBuf};

/// Where the node reads the audit policy (the API server's `audit-policy-file`).
const AUDIT_POLICY_IN_NODE: &str = "/etc/kubernetes/policies/audit-policy.yaml";

/// The audit policy of the bootstrap cluster. Secrets, tokens and the CAPAS identity pass through
/// it, so no rule logs a request or response body: metadata of every request, minus the
/// health probes and the node and kube-proxy polling that would drown the log.
pub const AUDIT_POLICY: &str = "\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: None
  nonResourceURLs:
  - /healthz*
  - /livez*
  - /readyz*
  - /version
- level: None
  users:
  - system:kube-proxy
  verbs:
  - watch
- level: None
  userGroups:
  - system:nodes
  verbs:
  - get
  resources:
  - group: \"\"
    resources:
    - nodes
    - nodes/status
- level: Metadata
";

/// The generated files, paths relative to the cluster's `generated` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindFiles {
    /// `kind_tmp.yaml`.
    pub config: String,
    /// `kubernetes/audit-policy.yaml`.
    pub audit_policy: String,
    /// With a mirror: `certs.d/<registry>/hosts.toml` per mirrored registry, and
    /// `certs.d/<endpoint>:<port>/ca.crt` when the spec has the mirror's CA.
    pub certs: Vec<(PathBuf, String)>,
}

/// The kind config file's name in the generated directory.
pub const CONFIG_FILE: &str = "kind_tmp.yaml";
/// The audit policy's path in the generated directory.
pub const AUDIT_POLICY_FILE: &str = "kubernetes/audit-policy.yaml";
/// containerd's hosts directory in the generated directory.
pub const CERTS_DIR: &str = "certs.d";

/// The registry mirror of a spec, if it has one.
pub(super) fn mirror(spec: &ValidSpec) -> Option<RegistryMirror> {
    spec.cluster
        .spec
        .registry_mirror_configuration
        .as_ref()
        .map(RegistryMirror::new)
}

/// The Kubernetes minor version of `1.NN`.
fn minor(version: &str) -> u32 {
    version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// A YAML double-quoted scalar (JSON's string syntax is valid YAML).
fn q(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

fn first_cidr(blocks: Option<&snow_api::types::cluster::CidrBlocks>) -> Option<&str> {
    blocks?.cidr_blocks.as_ref()?.first().map(String::as_str)
}

/// The kind configuration and the files it mounts, for a spec and its release. `generated` is
/// the directory the files will be written to (the mounts' host paths point into it; pass an
/// absolute path, kind resolves a relative one against its own working directory).
pub fn kind_files(spec: &ValidSpec, release: &ClusterRelease<'_>, generated: &Path) -> KindFiles {
    let mirror = mirror(spec);
    let rewrite = |repo: &str| match &mirror {
        Some(m) => m.rewrite(repo),
        None => repo.to_owned(),
    };
    let distro = release.distro;
    let mut c = String::from("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n");

    let network = spec.cluster.spec.cluster_network.as_ref();
    let pods = first_cidr(network.and_then(|n| n.pods.as_ref()));
    let services = first_cidr(network.and_then(|n| n.services.as_ref()));
    if pods.is_some() || services.is_some() {
        c.push_str("networking:\n");
        if let Some(pods) = pods {
            c.push_str(&format!("  podSubnet: {}\n", q(pods)));
        }
        if let Some(services) = services {
            c.push_str(&format!("  serviceSubnet: {}\n", q(services)));
        }
    }

    c.push_str("kubeadmConfigPatches:\n  - |\n    kind: ClusterConfiguration\n");
    c.push_str(&format!(
        "    dns:\n      imageRepository: {}\n      imageTag: {}\n",
        q(&rewrite(&distro.core_dns.repository)),
        q(&distro.core_dns.tag)
    ));
    c.push_str(&format!(
        "    etcd:\n      local:\n        imageRepository: {}\n        imageTag: {}\n",
        q(&rewrite(&distro.etcd.repository)),
        q(&distro.etcd.tag)
    ));
    c.push_str(&format!(
        "    imageRepository: {}\n    kubernetesVersion: {}\n",
        q(&rewrite(&distro.kubernetes.repository)),
        q(&distro.kubernetes.tag)
    ));
    c.push_str(&format!(
        "    apiServer:
      extraArgs:
        audit-log-maxage: \"30\"
        audit-log-maxbackup: \"10\"
        audit-log-maxsize: \"512\"
        audit-log-path: /var/log/kubernetes/api-audit.log
        audit-policy-file: {AUDIT_POLICY_IN_NODE}
      extraVolumes:
      - name: audit-policy
        hostPath: {AUDIT_POLICY_IN_NODE}
        mountPath: {AUDIT_POLICY_IN_NODE}
        readOnly: true
        pathType: File
      - name: audit-logs
        hostPath: /var/log/kubernetes
        mountPath: /var/log/kubernetes
        readOnly: false
        pathType: DirectoryOrCreate
"
    ));
    if minor(spec.kubernetes_version()) >= 31 {
        for kind in ["InitConfiguration", "JoinConfiguration"] {
            c.push_str(&format!(
                "  - |\n    kind: {kind}\n    nodeRegistration:\n      kubeletExtraArgs:\n        fail-cgroupv1: \"false\"\n"
            ));
        }
    }
    if mirror.is_some() {
        c.push_str(
            "containerdConfigPatches:\n  - |\n    [plugins.\"io.containerd.grpc.v1.cri\".registry]\n      config_path = \"/etc/containerd/certs.d\"\n",
        );
    }
    c.push_str("nodes:\n- role: control-plane\n  extraMounts:\n");
    c.push_str(&format!(
        "  - hostPath: {}\n    containerPath: {AUDIT_POLICY_IN_NODE}\n    readOnly: true\n",
        q(&generated.join(AUDIT_POLICY_FILE).to_string_lossy())
    ));

    let mut certs = Vec::new();
    if let Some(m) = &mirror {
        c.push_str(&format!(
            "  - hostPath: {}\n    containerPath: /etc/containerd/certs.d\n    readOnly: true\n",
            q(&generated.join(CERTS_DIR).to_string_lossy())
        ));
        for (registry, hosts) in m.registry_hosts() {
            certs.push((
                Path::new(CERTS_DIR).join(registry).join("hosts.toml"),
                hosts,
            ));
        }
        if let Some(ca) = m.ca() {
            let mut ca = ca.to_owned();
            if !ca.ends_with('\n') {
                ca.push('\n');
            }
            certs.push((Path::new(CERTS_DIR).join(m.base()).join("ca.crt"), ca));
        }
    }
    KindFiles {
        config: c,
        audit_policy: AUDIT_POLICY.to_owned(),
        certs,
    }
}

/// The kind node image of the cluster's Kubernetes version (the bundle's `eksD.kindNode`),
/// mirror-rewritten when the spec has a registry mirror.
pub fn kind_node_image(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
) -> Result<String, snow_api::release::ReleaseError> {
    let uri = &release.bundle.kind_node()?.uri;
    Ok(match mirror(spec) {
        Some(m) => m.rewrite(uri),
        None => uri.clone(),
    })
}
