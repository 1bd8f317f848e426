//! The object list and the values of every object (EKS Anywhere's Snow builders, `pkg/providers/snow`). Templates only shape the YAML;
//! everything decided about a cluster is decided here.

use crate::{
    RenderError,
    contract::{Contract, ETCD_API_VERSION, INFRA_API_VERSION, Shape as _},
    names::Names,
};
use serde_json::{Map, Value, json};
use snow_api::{
    ClusterSpec, ValidSpec,
    release::{KubeDistro, VersionsBundle, split_tag},
    types::{
        cluster::{ProxyConfiguration, RegistryMirrorConfiguration, Taint},
        identity::{AWSIamConfig, OIDCConfig},
        snow::SnowMachineConfig,
    },
    validate::syntax::KubeVersion,
};
use std::collections::BTreeMap;

/// All CAPI objects live here.
pub const NAMESPACE: &str = snow_api::names::SYSTEM_NAMESPACE;
const TLS_CIPHER: &str = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
const PROVIDER_ID: &str = "aws-snow:////'{{ ds.meta_data.instance_id }}'";
const IAM_PROFILE: &str = "control-plane.cluster-api-provider-aws.sigs.k8s.io";
const BOOTSTRAP_SH: &str = "/etc/eks/bootstrap.sh";

/// One object to render: which template, and its values.
pub(crate) struct Planned {
    pub template: &'static str,
    pub api_version: String,
    pub kind: &'static str,
    pub name: String,
    pub context: Value,
}

/// What the builders share.
pub(crate) struct Ctx<'a> {
    pub spec: &'a ValidSpec,
    pub contract: Contract,
    pub bundle: &'a VersionsBundle,
    pub distro: &'a KubeDistro,
    pub names: &'a Names,
    pub version: KubeVersion,
    pub default_ssh_key_name: Option<&'a str>,
}

fn os_of(m: &SnowMachineConfig) -> &str {
    m.spec.os_family.as_deref().unwrap_or("ubuntu")
}

impl Ctx<'_> {
    fn cluster_name(&self) -> &str {
        self.spec.name()
    }

    fn labels(&self) -> Value {
        json!({
            "cluster.x-k8s.io/cluster-name": self.cluster_name(),
            "cluster.anywhere.eks.amazonaws.com/cluster-name": self.cluster_name(),
            "cluster.anywhere.eks.amazonaws.com/cluster-namespace": self.spec.namespace(),
        })
    }

    fn machine(&self, name: &str) -> Result<&SnowMachineConfig, RenderError> {
        self.spec
            .machine_configs
            .get(name)
            .ok_or_else(|| RenderError::Spec(format!("SnowMachineConfig {name} is missing")))
    }

    fn pods(&self) -> Vec<String> {
        let net = self.spec.cluster.spec.cluster_network.as_ref();
        net.and_then(|n| n.pods.as_ref())
            .and_then(|p| p.cidr_blocks.clone())
            .unwrap_or_default()
    }

    fn services(&self) -> Vec<String> {
        let net = self.spec.cluster.spec.cluster_network.as_ref();
        net.and_then(|n| n.services.as_ref())
            .and_then(|p| p.cidr_blocks.clone())
            .unwrap_or_default()
    }

    fn endpoint(&self) -> &str {
        self.spec
            .cluster
            .spec
            .control_plane_configuration
            .as_ref()
            .and_then(|cp| cp.endpoint.as_ref())
            .map_or("", |e| e.host.as_str())
    }

    fn list(&self, items: Vec<Value>) -> Option<Value> {
        if items.is_empty() && self.contract.omits_empty_lists() {
            None
        } else {
            Some(Value::Array(items))
        }
    }
}

/// Inserts `value` under `key` when present.
fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn strings(items: &[&str]) -> Vec<Value> {
    items
        .iter()
        .map(|s| Value::String((*s).to_owned()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Machine templates and IP pools

pub(crate) fn machine_template(ctx: &Ctx<'_>, name: &str, machine: &SnowMachineConfig) -> Planned {
    let s = &machine.spec;
    let mut spec = Map::new();
    spec.insert(
        "ami".into(),
        json!({"id": s.ami_id.clone().unwrap_or_default()}),
    );
    spec.insert(
        "cloudInit".into(),
        json!({"insecureSkipSecretsManager": true}),
    );
    if let Some(v) = &s.containers_volume {
        spec.insert("containersVolume".into(), volume(v));
    }
    spec.insert(
        "devices".into(),
        json!(s.devices.clone().unwrap_or_default()),
    );
    spec.insert("iamInstanceProfile".into(), json!(IAM_PROFILE));
    if os_of(machine) == "bottlerocket" {
        spec.insert("imageLookupBaseOS".into(), json!("bottlerocket"));
    }
    spec.insert(
        "instanceType".into(),
        json!(s.instance_type.clone().unwrap_or_default()),
    );
    let dnis: Vec<Value> = s
        .network
        .direct_network_interfaces
        .iter()
        .flatten()
        .map(|d| {
            let mut m = Map::new();
            put(&mut m, "dhcp", d.dhcp.map(Value::Bool));
            put(&mut m, "index", d.index.map(|i| json!(i)));
            put(
                &mut m,
                "ipPool",
                d.ip_pool_ref
                    .as_ref()
                    .map(|r| json!({"kind": "AWSSnowIPPool", "name": r.name()})),
            );
            put(&mut m, "primary", d.primary.map(Value::Bool));
            put(&mut m, "vlanID", d.vlan_id.map(|v| json!(v)));
            Value::Object(m)
        })
        .collect();
    spec.insert("network".into(), json!({"directNetworkInterfaces": dnis}));
    if let Some(vols) = s.non_root_volumes.as_ref().filter(|v| !v.is_empty()) {
        spec.insert(
            "nonRootVolumes".into(),
            Value::Array(vols.iter().map(volume).collect()),
        );
    }
    spec.insert("osFamily".into(), json!(os_of(machine)));
    spec.insert(
        "physicalNetworkConnectorType".into(),
        json!(s.physical_network_connector.clone().unwrap_or_default()),
    );
    spec.insert(
        "sshKeyName".into(),
        // An empty name is EKS Anywhere's "generate one": the generated name replaces it.
        json!(
            s.ssh_key_name
                .as_deref()
                .filter(|k| !k.trim().is_empty())
                .or(ctx.default_ssh_key_name)
                .unwrap_or_default()
        ),
    );
    Planned {
        template: "machine-template",
        api_version: INFRA_API_VERSION.into(),
        kind: "AWSSnowMachineTemplate",
        name: name.to_owned(),
        context: json!({"name": name, "namespace": NAMESPACE, "spec": spec}),
    }
}

fn volume(v: &snow_api::types::snow::Volume) -> Value {
    let mut m = Map::new();
    put(
        &mut m,
        "deviceName",
        v.device_name.clone().map(Value::String),
    );
    m.insert("size".into(), json!(v.size));
    put(
        &mut m,
        "type",
        v.type_.and_then(|t| serde_json::to_value(t).ok()),
    );
    Value::Object(m)
}

pub(crate) fn ip_pool(name: &str, spec: &ClusterSpec) -> Option<Planned> {
    let pool = spec.ip_pools.get(name)?;
    let pools: Vec<Value> = pool
        .spec
        .pools
        .iter()
        .flatten()
        .map(|p| json!({"gateway": p.gateway, "ipEnd": p.ip_end, "ipStart": p.ip_start, "subnet": p.subnet}))
        .collect();
    Some(Planned {
        template: "ip-pool",
        api_version: INFRA_API_VERSION.into(),
        kind: "AWSSnowIPPool",
        name: name.to_owned(),
        context: json!({"name": name, "namespace": NAMESPACE, "pools": pools}),
    })
}

/// IP pool names referenced by the DNIs of these machine configs, sorted, once each.
pub(crate) fn referenced_pools<'a>(
    machines: impl Iterator<Item = &'a SnowMachineConfig>,
) -> Vec<String> {
    let mut names: Vec<String> = machines
        .flat_map(|m| m.spec.network.direct_network_interfaces.iter().flatten())
        .filter_map(|d| d.ip_pool_ref.as_ref().map(|r| r.name().to_owned()))
        .collect();
    names.sort();
    names.dedup();
    names
}

// ---------------------------------------------------------------------------------------------
// Cluster, AWSSnowCluster

pub(crate) fn cluster(ctx: &Ctx<'_>) -> Planned {
    let c = ctx.contract;
    let name = ctx.cluster_name();
    let mut spec = Map::new();
    spec.insert(
        "clusterNetwork".into(),
        json!({"pods": {"cidrBlocks": ctx.pods()}, "services": {"cidrBlocks": ctx.services()}}),
    );
    spec.insert(
        "controlPlaneRef".into(),
        c.reference(
            &c.api_version("controlplane.cluster.x-k8s.io"),
            "KubeadmControlPlane",
            name,
        ),
    );
    spec.insert(
        "infrastructureRef".into(),
        c.reference(INFRA_API_VERSION, "AWSSnowCluster", name),
    );
    if ctx.spec.cluster.spec.external_etcd_configuration.is_some() {
        spec.insert(
            "managedExternalEtcdRef".into(),
            c.reference(ETCD_API_VERSION, "EtcdadmCluster", &ctx.names.etcd_cluster),
        );
    }
    Planned {
        template: "cluster",
        api_version: c.api_version("cluster.x-k8s.io"),
        kind: "Cluster",
        name: name.to_owned(),
        context: json!({"name": name, "namespace": NAMESPACE, "labels": ctx.labels(), "spec": spec}),
    }
}

pub(crate) fn snow_cluster(ctx: &Ctx<'_>) -> Planned {
    let name = ctx.cluster_name();
    Planned {
        template: "snow-cluster",
        api_version: INFRA_API_VERSION.into(),
        kind: "AWSSnowCluster",
        name: name.to_owned(),
        context: json!({
            "name": name,
            "namespace": NAMESPACE,
            "spec": {
                "controlPlaneEndpoint": {"host": ctx.endpoint(), "port": 6443},
                "identityRef": {"kind": "Secret", "name": snow_credentials::encode::capas_cluster_secret_name(name)},
                "region": "snow",
            },
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared kubeadm pieces

fn taints_value(taints: Option<&[Taint]>, default_control_plane: bool) -> Option<Value> {
    match taints {
        None if default_control_plane => {
            Some(json!([{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]))
        }
        None => None,
        Some(list) => Some(Value::Array(
            list.iter()
                .map(|t| {
                    let mut m = Map::new();
                    m.insert("effect".into(), json!(t.effect));
                    m.insert("key".into(), json!(t.key));
                    put(&mut m, "timeAdded", t.time_added.clone().map(Value::String));
                    put(&mut m, "value", t.value.clone().map(Value::String));
                    Value::Object(m)
                })
                .collect(),
        )),
    }
}

/// Sorted kubelet args (labels, optional cipher suites) with the provider id appended last.
fn kubelet_args(labels: Option<&BTreeMap<String, String>>, tls: bool) -> Vec<(String, String)> {
    let mut args = Vec::new();
    if let Some(labels) = labels.filter(|l| !l.is_empty()) {
        let joined: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        args.push(("node-labels".to_owned(), joined.join(",")));
    }
    if tls {
        args.push(("tls-cipher-suites".to_owned(), TLS_CIPHER.to_owned()));
    }
    args.sort();
    args.push(("provider-id".to_owned(), PROVIDER_ID.to_owned()));
    args
}

fn node_registration(
    ctx: &Ctx<'_>,
    args: &[(String, String)],
    taints: Option<Value>,
    ignore_preflight: bool,
) -> Value {
    let mut m = Map::new();
    if ignore_preflight {
        m.insert(
            "ignorePreflightErrors".into(),
            json!(["DirAvailable--etc-kubernetes-manifests"]),
        );
    }
    m.insert("kubeletExtraArgs".into(), ctx.contract.args(args));
    put(&mut m, "taints", taints);
    Value::Object(m)
}

/// `noProxy`: pod CIDRs, service CIDRs, user entries, localhost, 127.0.0.1, .svc, the endpoint.
fn no_proxy(ctx: &Ctx<'_>, proxy: &ProxyConfiguration) -> Vec<String> {
    no_proxy_list(ctx.spec, proxy)
}

/// EKS Anywhere's no-proxy list of a cluster: its pod and service CIDRs, the spec's `noProxy`,
/// `localhost`, `127.0.0.1`, `.svc` and the control-plane endpoint.
pub(crate) fn no_proxy_list(spec: &ValidSpec, proxy: &ProxyConfiguration) -> Vec<String> {
    let net = spec.cluster.spec.cluster_network.as_ref();
    let blocks = |b: Option<&Vec<String>>| b.cloned().unwrap_or_default();
    let mut list = blocks(
        net.and_then(|n| n.pods.as_ref())
            .and_then(|p| p.cidr_blocks.as_ref()),
    );
    list.extend(blocks(
        net.and_then(|n| n.services.as_ref())
            .and_then(|p| p.cidr_blocks.as_ref()),
    ));
    list.extend(proxy.no_proxy.clone().unwrap_or_default());
    list.extend(["localhost", "127.0.0.1", ".svc"].map(String::from));
    let endpoint = spec.cluster.spec.control_plane_configuration.as_ref();
    list.push(
        endpoint
            .and_then(|cp| cp.endpoint.as_ref())
            .map_or("", |e| e.host.as_str())
            .to_owned(),
    );
    list
}

fn proxy_file(ctx: &Ctx<'_>, proxy: &ProxyConfiguration) -> Value {
    let content = format!(
        "[Service]\nEnvironment=\"HTTP_PROXY={}\"\nEnvironment=\"HTTPS_PROXY={}\"\nEnvironment=\"NO_PROXY={}\"",
        proxy.http_proxy.as_deref().unwrap_or(""),
        proxy.https_proxy.as_deref().unwrap_or(""),
        no_proxy(ctx, proxy).join(",")
    );
    json!({"content": content, "owner": "root:root", "path": "/etc/systemd/system/containerd.service.d/http-proxy.conf"})
}

/// The registry mirror as rendered: base `host:port`, registry → endpoint map (sorted), and the
/// core (public.ecr.aws) API endpoint. Public (as `RegistryMirror`) for the kind bootstrap
/// cluster, whose containerd takes the same `hosts.toml` files and whose images are rewritten.
#[derive(Debug, Clone)]
pub struct Mirror {
    base: String,
    namespaces: BTreeMap<String, String>,
    ca: Option<String>,
    insecure: bool,
}

impl Mirror {
    /// The mirror of a spec's `registryMirrorConfiguration`: each `ociNamespaces` registry maps
    /// to `<endpoint>:<port>[/<namespace>]`; without namespaces, `public.ecr.aws` maps to the base.
    pub fn new(m: &RegistryMirrorConfiguration) -> Mirror {
        let base = format!(
            "{}:{}",
            m.endpoint.as_deref().unwrap_or(""),
            m.port.as_deref().unwrap_or("443")
        );
        let mut namespaces: BTreeMap<String, String> = m
            .oci_namespaces
            .iter()
            .flatten()
            .map(|ns| {
                (
                    ns.registry.clone(),
                    if ns.namespace.is_empty() {
                        base.clone()
                    } else {
                        format!("{base}/{}", ns.namespace)
                    },
                )
            })
            .collect();
        if namespaces.is_empty() {
            namespaces.insert("public.ecr.aws".into(), base.clone());
        }
        Mirror {
            base,
            namespaces,
            ca: m.ca_cert_content.clone().filter(|c| !c.is_empty()),
            insecure: m.insecure_skip_verify == Some(true),
        }
    }

    /// `<endpoint>:<port>`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The mirror's CA certificate (PEM), when the spec has one.
    pub fn ca(&self) -> Option<&str> {
        self.ca.as_deref()
    }

    /// One `(registry, hosts.toml)` per mirrored registry, registries sorted: containerd's
    /// `certs.d/<registry>/hosts.toml`.
    pub fn registry_hosts(&self) -> Vec<(String, String)> {
        self.namespaces
            .iter()
            .map(|(registry, mapped)| {
                (
                    registry.clone(),
                    self.hosts_toml(registry, &self.api_endpoint(mapped)),
                )
            })
            .collect()
    }

    /// An image URI or a URL (with or without a scheme, e.g. `oci://`) with its registry replaced
    /// by the mirror's (EKS Anywhere's `ReplaceRegistry`): `public.ecr.aws/eks-distro/etcd:v3`
    /// becomes `<base>[/<namespace>]/eks-distro/etcd:v3`; a registry that is not mirrored stays.
    pub fn rewrite(&self, uri: &str) -> String {
        let (scheme, rest) = match uri.split_once("://") {
            Some((scheme, rest)) => (format!("{scheme}://"), rest),
            None => (String::new(), uri),
        };
        let host = rest.split('/').next().unwrap_or(rest);
        match self.namespaces.get(host) {
            Some(mapped) => format!("{scheme}{mapped}{}", &rest[host.len()..]),
            None => uri.to_owned(),
        }
    }

    /// `host:port/v2[/namespace]`.
    fn api_endpoint(&self, mapped: &str) -> String {
        match mapped.strip_prefix(&self.base) {
            Some(rest) => format!("{}/v2{rest}", self.base),
            None => format!("{mapped}/v2"),
        }
    }

    fn core_endpoint(&self) -> String {
        self.api_endpoint(self.namespaces.get("public.ecr.aws").unwrap_or(&self.base))
    }

    fn hosts_toml(&self, server: &str, host: &str) -> String {
        let mut s = format!(
            "server = \"https://{server}\"\n\n[host.\"https://{host}\"]\n  capabilities = [\"pull\", \"resolve\"]\n  override_path = true\n"
        );
        if self.ca.is_some() {
            s.push_str(&format!(
                "  ca = \"/etc/containerd/certs.d/{}/ca.crt\"\n",
                self.base
            ));
        }
        if self.insecure {
            s.push_str("  skip_verify = true\n");
        }
        s
    }

    /// Ubuntu files, in a deterministic order (registries sorted).
    fn files(&self) -> Vec<Value> {
        let mut files = vec![json!({
            "content": "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n",
            "owner": "root:root",
            "path": "/etc/containerd/config_append.toml",
        })];
        if let Some(ca) = &self.ca {
            files.push(json!({"content": ca, "owner": "root:root", "path": format!("/etc/containerd/certs.d/{}/ca.crt", self.base)}));
        }
        files.push(json!({
            "content": self.hosts_toml(&self.base, &format!("{}/v2", self.base)),
            "owner": "root:root",
            "path": format!("/etc/containerd/certs.d/{}/hosts.toml", self.base),
        }));
        for (registry, content) in self.registry_hosts() {
            files.push(json!({
                "content": content,
                "owner": "root:root",
                "path": format!("/etc/containerd/certs.d/{registry}/hosts.toml"),
            }));
        }
        files
    }

    fn bottlerocket(&self) -> Value {
        let mut m = Map::new();
        put(&mut m, "caCert", self.ca.clone().map(Value::String));
        m.insert("endpoint".into(), json!(self.core_endpoint()));
        Value::Object(m)
    }
}

fn image_split(uri: &str) -> Value {
    let (repo, tag) = split_tag(uri);
    json!({"imageRepository": repo, "imageTag": tag.unwrap_or("")})
}

/// Bottlerocket additions for a cluster or join configuration.
fn bottlerocket_settings(
    ctx: &Ctx<'_>,
    machine: &SnowMachineConfig,
) -> Result<Map<String, Value>, RenderError> {
    let br = ctx
        .bundle
        .bottlerocket_host_containers
        .as_ref()
        .ok_or_else(|| {
            RenderError::Release(snow_api::release::ReleaseError::Missing {
                manifest: format!("Bundles {}", ctx.bundle.kube_version),
                item: "bottlerocketHostContainers".into(),
            })
        })?;
    let snow = ctx.bundle.snow()?;
    let mut m = Map::new();
    m.insert("bottlerocketAdmin".into(), image_split(&br.admin.uri));
    m.insert(
        "bottlerocketBootstrap".into(),
        image_split(&br.kubeadm_bootstrap.uri),
    );
    m.insert("bottlerocketControl".into(), image_split(&br.control.uri));
    let mut custom = obj(image_split(&snow.bottlerocket_bootstrap_snow.uri));
    custom.insert("mode".into(), json!("always"));
    custom.insert("name".into(), json!("bottlerocket-bootstrap-snow"));
    m.insert(
        "bottlerocketCustomBootstrapContainers".into(),
        json!([custom]),
    );
    m.insert(
        "pause".into(),
        json!({"imageRepository": ctx.distro.pause.repository, "imageTag": ctx.distro.pause.tag}),
    );
    if let Some(proxy) = &ctx.spec.cluster.spec.proxy_configuration {
        m.insert("proxy".into(), json!({"httpsProxy": proxy.https_proxy.clone().unwrap_or_default(), "noProxy": no_proxy(ctx, proxy)}));
    }
    if let Some(mirror) = &ctx.spec.cluster.spec.registry_mirror_configuration {
        m.insert("registryMirror".into(), Mirror::new(mirror).bottlerocket());
    }
    if let Some(settings) = bottlerocket_host_settings(machine) {
        m.insert("bottlerocket".into(), settings);
    }
    Ok(m)
}

/// `{kernel: {sysctlSettings}, boot: {bootKernelParameters}}` when the machine config sets them.
fn bottlerocket_host_settings(machine: &SnowMachineConfig) -> Option<Value> {
    let br = machine
        .spec
        .host_os_configuration
        .as_ref()?
        .bottlerocket_configuration
        .as_ref()?;
    let mut m = Map::new();
    if let Some(kernel) = &br.kernel {
        m.insert(
            "kernel".into(),
            json!({"sysctlSettings": kernel.sysctl_settings.clone().unwrap_or_default()}),
        );
    }
    if let Some(boot) = &br.boot {
        m.insert("boot".into(), json!({"bootKernelParameters": boot.boot_kernel_parameters.clone().unwrap_or_default()}));
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

// ---------------------------------------------------------------------------------------------
// KubeadmControlPlane

fn kube_vip_manifest(image: &str, address: &str) -> String {
    let env: Vec<(&str, &str)> = vec![
        ("vip_arp", "true"),
        ("port", "6443"),
        ("vip_cidr", "32"),
        ("cp_enable", "true"),
        ("cp_namespace", "kube-system"),
        ("vip_ddns", "false"),
        ("vip_leaderelection", "true"),
        ("vip_leaseduration", "15"),
        ("vip_renewdeadline", "10"),
        ("vip_retryperiod", "2"),
        ("address", address),
    ];
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "kube-vip", "namespace": "kube-system"},
        "spec": {
            "containers": [{
                "args": ["manager"],
                "env": env.iter().map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>(),
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "name": "kube-vip",
                "resources": {},
                "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}},
                "volumeMounts": [{"mountPath": "/etc/kubernetes/admin.conf", "name": "kubeconfig"}],
            }],
            "hostNetwork": true,
            "volumes": [{"hostPath": {"path": "/etc/kubernetes/admin.conf"}, "name": "kubeconfig"}],
        },
        "status": {},
    });
    crate::yaml::emit(&pod, 0)
}

/// The identity providers the Cluster references.
fn identity_providers<'a>(ctx: &Ctx<'a>) -> (Option<&'a OIDCConfig>, Option<&'a AWSIamConfig>) {
    let refs = ctx
        .spec
        .cluster
        .spec
        .identity_provider_refs
        .iter()
        .flatten();
    let mut oidc = None;
    let mut iam = None;
    for r in refs {
        match r.kind() {
            "OIDCConfig" => oidc = oidc.or_else(|| ctx.spec.oidc_configs.get(r.name())),
            "AWSIamConfig" => iam = iam.or_else(|| ctx.spec.aws_iam_configs.get(r.name())),
            _ => {}
        }
    }
    (oidc, iam)
}

const IAM_KUBECONFIG_PATH: &str = "/etc/kubernetes/aws-iam-authenticator/kubeconfig.yaml";
const IAM_KUBECONFIG: &str = "# clusters refers to the remote service.
clusters:
  - name: aws-iam-authenticator
    cluster:
      certificate-authority: /var/aws-iam-authenticator/cert.pem
      server: https://localhost:21362/authenticate
# users refers to the API Server's webhook configuration
# (we don't need to authenticate the API server).
users:
  - name: apiserver
# kubeconfig files require a context. Provide one for the API Server.
current-context: webhook
contexts:
- name: webhook
  context:
    cluster: aws-iam-authenticator
    user: apiserver
";

/// API server arguments in EKS-A's order: OIDC, AWS IAM, the user's (sorted), then the pod IAM
/// issuer merged into any user value.
fn api_server_args(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let s = &ctx.spec.cluster.spec;
    let (oidc, iam) = identity_providers(ctx);
    let mut args: Vec<(String, String)> = Vec::new();
    if let Some(o) = oidc {
        let o = &o.spec;
        let claim = o.required_claims.iter().flatten().next().and_then(|c| {
            let claim = c.claim.as_deref().filter(|c| !c.is_empty())?;
            Some(format!("{claim}={}", c.value.as_deref().unwrap_or("")))
        });
        for (name, value) in [
            ("oidc-client-id", o.client_id.clone()),
            ("oidc-groups-claim", o.groups_claim.clone()),
            ("oidc-groups-prefix", o.groups_prefix.clone()),
            ("oidc-issuer-url", o.issuer_url.clone()),
            ("oidc-required-claim", claim),
            ("oidc-username-claim", o.username_claim.clone()),
            ("oidc-username-prefix", o.username_prefix.clone()),
        ] {
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                args.push((name.to_owned(), v));
            }
        }
    }
    if iam.is_some() {
        args.push((
            "authentication-token-webhook-config-file".into(),
            IAM_KUBECONFIG_PATH.into(),
        ));
    }
    let cp = s.control_plane_configuration.as_ref();
    args.extend(
        cp.and_then(|c| c.api_server_extra_args.clone())
            .unwrap_or_default(),
    );
    if let Some(issuer) = s
        .pod_iam_config
        .as_ref()
        .map(|p| p.service_account_issuer.clone())
    {
        match args.iter_mut().find(|(k, _)| k == "service-account-issuer") {
            Some((_, v)) => *v = format!("{v},{issuer}"),
            None => args.push(("service-account-issuer".into(), issuer)),
        }
    }
    args
}

/// AWS IAM Authenticator: the webhook kubeconfig and the CA from the cluster's
/// `<cluster>-aws-iam-authenticator-ca` Secret (EKS-A renders a literal `test-cluster-…` name
/// here; an EKS Anywhere bug we do not copy), and the two host mounts for the API server.
fn aws_iam_files_and_volumes(ctx: &Ctx<'_>) -> (Vec<Value>, Vec<Value>) {
    let secret = format!("{}-aws-iam-authenticator-ca", ctx.cluster_name());
    let files = vec![
        json!({"content": IAM_KUBECONFIG, "owner": "root:root", "path": "/var/lib/kubeadm/aws-iam-authenticator/kubeconfig.yaml", "permissions": "0640"}),
        json!({"contentFrom": {"secret": {"key": "cert.pem", "name": secret}}, "owner": "10000:10000", "path": "/var/lib/kubeadm/aws-iam-authenticator/pki/cert.pem", "permissions": "0640"}),
        json!({"contentFrom": {"secret": {"key": "key.pem", "name": secret}}, "owner": "10000:10000", "path": "/var/lib/kubeadm/aws-iam-authenticator/pki/key.pem", "permissions": "0640"}),
    ];
    let volumes = vec![
        json!({"hostPath": "/var/lib/kubeadm/aws-iam-authenticator/", "mountPath": "/etc/kubernetes/aws-iam-authenticator/", "name": "authconfig", "readOnly": false}),
        json!({"hostPath": "/var/lib/kubeadm/aws-iam-authenticator/pki/", "mountPath": "/var/aws-iam-authenticator/", "name": "awsiamcert", "readOnly": false}),
    ];
    (files, volumes)
}

pub(crate) fn kubeadm_control_plane(ctx: &Ctx<'_>) -> Result<Planned, RenderError> {
    let c = ctx.contract;
    let s = &ctx.spec.cluster.spec;
    let cp = s.control_plane_configuration.clone().unwrap_or_default();
    let cp_machine = ctx.machine(cp.machine_group_ref.as_ref().map_or("", |r| r.name()))?;
    let bottlerocket = os_of(cp_machine) == "bottlerocket";
    let external = s.external_etcd_configuration.is_some();

    let (mut cc, iam_files) = cluster_configuration(ctx, bottlerocket, external);
    let (init, join) = init_and_join(ctx, &cp, cp_machine, bottlerocket, &mut cc)?;
    let (files, pre) = control_plane_files(ctx, iam_files, bottlerocket)?;
    let mut kcs = Map::new();
    kcs.insert("clusterConfiguration".into(), Value::Object(cc));
    put(&mut kcs, "files", ctx.list(files));
    if bottlerocket {
        kcs.insert("format".into(), json!("bottlerocket"));
    }
    kcs.insert("initConfiguration".into(), Value::Object(init));
    kcs.insert("joinConfiguration".into(), Value::Object(join));
    put(&mut kcs, "postKubeadmCommands", ctx.list(vec![]));
    put(&mut kcs, "preKubeadmCommands", ctx.list(pre));

    let mut annotations = Map::new();
    if external {
        annotations.insert(
            "cluster.x-k8s.io/skip-pause-cp-managed-etcd".into(),
            json!("true"),
        );
    }
    let name = ctx.cluster_name();
    Ok(Planned {
        template: "kubeadm-control-plane",
        api_version: c.api_version("controlplane.cluster.x-k8s.io"),
        kind: "KubeadmControlPlane",
        name: name.to_owned(),
        context: json!({"name": name, "namespace": NAMESPACE, "annotations": annotations, "spec": kcp_spec(ctx, &cp, kcs)}),
    })
}

/// The KCP's `spec` around its kubeadm config: machine template, replicas, rollout, version.
fn kcp_spec(
    ctx: &Ctx<'_>,
    cp: &snow_api::types::cluster::ControlPlaneConfiguration,
    kubeadm_config: Map<String, Value>,
) -> Map<String, Value> {
    let c = ctx.contract;
    let infra = c.reference(
        INFRA_API_VERSION,
        "AWSSnowMachineTemplate",
        &ctx.names.control_plane_template,
    );
    let labels = json!({"node-role.kubernetes.io/control-plane": ""});
    let mut spec = Map::new();
    spec.insert("kubeadmConfigSpec".into(), Value::Object(kubeadm_config));
    match c {
        Contract::V1Beta1 => spec.insert(
            "machineTemplate".into(),
            json!({"infrastructureRef": infra, "metadata": {"labels": labels}}),
        ),
        Contract::V1Beta2 => spec.insert(
            "machineTemplate".into(),
            json!({"metadata": {"labels": labels}, "spec": {"infrastructureRef": infra}}),
        ),
    };
    spec.insert("replicas".into(), json!(cp.count.unwrap_or(1)));
    let before = json!({"certificatesExpiryDays": CERTIFICATES_EXPIRY_DAYS});
    let strategy = cp
        .upgrade_rollout_strategy
        .as_ref()
        .and_then(|r| r.rolling_update.as_ref())
        .map(|ru| json!({"rollingUpdate": {"maxSurge": ru.max_surge}, "type": "RollingUpdate"}));
    match c {
        Contract::V1Beta1 => {
            spec.insert("rolloutBefore".into(), before);
            if let Some(strategy) = strategy {
                spec.insert("rolloutStrategy".into(), strategy);
            }
        }
        Contract::V1Beta2 => {
            let mut rollout = Map::new();
            rollout.insert("before".into(), before);
            if let Some(strategy) = strategy {
                rollout.insert("strategy".into(), strategy);
            }
            spec.insert("rollout".into(), Value::Object(rollout));
        }
    }
    spec.insert("version".into(), json!(ctx.distro.kubernetes.tag));
    spec
}

/// The days before a control-plane machine's certificates expire at which its
/// KubeadmControlPlane replaces it (`rolloutBefore.certificatesExpiryDays` in v1beta1,
/// `rollout.before.certificatesExpiryDays` in v1beta2). EKS Anywhere's Cluster has no field for
/// it, so it is fixed: kubeadm's certificates last one year, and 30 days leaves a month in
/// which a failed roll (a device down, no capacity for the surge machine) can be seen and fixed
/// by hand before the API server's certificate lapses. Cluster API's webhook requires at least 7.
pub const CERTIFICATES_EXPIRY_DAYS: u32 = 30;

/// A JSON object being built.
type Object = Map<String, Value>;

/// kubeadm's `clusterConfiguration` of the control plane (API server, controller manager,
/// scheduler, DNS, etcd, images), and the AWS IAM authenticator files it needs.
fn cluster_configuration(
    ctx: &Ctx<'_>,
    bottlerocket: bool,
    external: bool,
) -> (Map<String, Value>, Vec<Value>) {
    let c = ctx.contract;
    let s = &ctx.spec.cluster.spec;
    let cp = s.control_plane_configuration.clone().unwrap_or_default();
    let mut cc = Map::new();
    let mut api_server = Map::new();
    put(
        &mut api_server,
        "certSANs",
        cp.cert_sans
            .clone()
            .filter(|v| !v.is_empty())
            .map(|v| json!(v)),
    );
    let api_args = api_server_args(ctx);
    if !api_args.is_empty() {
        api_server.insert("extraArgs".into(), c.args(&api_args));
    }
    let aws_iam = identity_providers(ctx).1.is_some();
    let (iam_files, iam_volumes) = if aws_iam {
        aws_iam_files_and_volumes(ctx)
    } else {
        (vec![], vec![])
    };
    if !iam_volumes.is_empty() {
        api_server.insert("extraVolumes".into(), Value::Array(iam_volumes));
    }
    if !api_server.is_empty() {
        cc.insert("apiServer".into(), Value::Object(api_server));
    }
    if bottlerocket {
        cc.insert("certificatesDir".into(), json!("/var/lib/kubeadm/pki"));
    }
    let mut cm_args = vec![("tls-cipher-suites".to_owned(), TLS_CIPHER.to_owned())];
    if let Some(mask) = s
        .cluster_network
        .as_ref()
        .and_then(|n| n.nodes.as_ref())
        .and_then(|n| n.cidr_mask_size)
    {
        cm_args.push(("node-cidr-mask-size".into(), mask.to_string()));
    }
    let mut controller_manager = obj(json!({"extraArgs": c.args(&cm_args)}));
    let mut scheduler = Map::new();
    if bottlerocket {
        let vol = |component: &str| {
            json!([{
                "hostPath": format!("/var/lib/kubeadm/{component}.conf"),
                "mountPath": format!("/etc/kubernetes/{component}.conf"),
                "name": "kubeconfig",
                "pathType": "File",
                "readOnly": true,
            }])
        };
        controller_manager.insert("extraVolumes".into(), vol("controller-manager"));
        scheduler.insert("extraVolumes".into(), vol("scheduler"));
    }
    cc.insert(
        "controllerManager".into(),
        Value::Object(controller_manager),
    );
    cc.insert("dns".into(), json!({"imageRepository": ctx.distro.core_dns.repository, "imageTag": ctx.distro.core_dns.tag}));
    cc.insert(
        "etcd".into(),
        etcd_configuration(ctx, bottlerocket, external),
    );
    if (29..33).contains(&ctx.version.minor) {
        cc.insert("featureGates".into(), json!({"EtcdLearnerMode": false}));
    }
    cc.insert(
        "imageRepository".into(),
        json!(ctx.distro.kubernetes.repository),
    );
    if !scheduler.is_empty() {
        cc.insert("scheduler".into(), Value::Object(scheduler));
    }
    (cc, iam_files)
}

/// kubeadm's etcd: the external cluster's client certificates, or local etcd's arguments and
/// image.
fn etcd_configuration(ctx: &Ctx<'_>, bottlerocket: bool, external: bool) -> Value {
    if external {
        let (ca, cert, key) = if bottlerocket {
            (
                "/var/lib/kubeadm/pki/etcd/ca.crt",
                "/var/lib/kubeadm/pki/server-etcd-client.crt",
                "/var/lib/kubeadm/pki/apiserver-etcd-client.key",
            )
        } else {
            (
                "/etc/kubernetes/pki/etcd/ca.crt",
                "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                "/etc/kubernetes/pki/apiserver-etcd-client.key",
            )
        };
        return json!({"external": {"caFile": ca, "certFile": cert, "endpoints": ["https://placeholder:2379"], "keyFile": key}});
    }
    let etcd_args = [
        ("cipher-suites", TLS_CIPHER),
        ("listen-peer-urls", "https://0.0.0.0:2380"),
        ("listen-client-urls", "https://0.0.0.0:2379"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    json!({"local": {"extraArgs": ctx.contract.args(&etcd_args), "imageRepository": ctx.distro.etcd.repository, "imageTag": ctx.distro.etcd.tag}})
}

/// `initConfiguration` and `joinConfiguration`: node registration, and on Bottlerocket its
/// settings (which go into `clusterConfiguration` too).
fn init_and_join(
    ctx: &Ctx<'_>,
    cp: &snow_api::types::cluster::ControlPlaneConfiguration,
    cp_machine: &SnowMachineConfig,
    bottlerocket: bool,
    cc: &mut Map<String, Value>,
) -> Result<(Object, Object), RenderError> {
    let kubelet = kubelet_args(cp.labels.as_ref(), true);
    let taints = taints_value(cp.taints.as_deref(), true);
    let mut init = Map::new();
    init.insert(
        "nodeRegistration".into(),
        node_registration(ctx, &kubelet, taints.clone(), false),
    );
    let mut join = Map::new();
    join.insert(
        "nodeRegistration".into(),
        node_registration(ctx, &kubelet, taints, !bottlerocket),
    );
    if bottlerocket {
        let br = bottlerocket_settings(ctx, cp_machine)?;
        for (k, v) in &br {
            cc.insert(k.clone(), v.clone());
            join.insert(k.clone(), v.clone());
        }
    }
    Ok((init, join))
}

/// The control plane's files (kube-vip's static Pod, AWS IAM authenticator's) and
/// pre-kubeadm commands (the bootstrap script, kube-vip's super-admin edit, proxy and mirror).
fn control_plane_files(
    ctx: &Ctx<'_>,
    iam_files: Vec<Value>,
    bottlerocket: bool,
) -> Result<(Vec<Value>, Vec<Value>), RenderError> {
    let snow = ctx.bundle.snow()?;
    let mut files = vec![json!({
        "content": kube_vip_manifest(&snow.kube_vip.uri, ctx.endpoint()),
        "owner": "root:root",
        "path": "/etc/kubernetes/manifests/kube-vip.yaml",
    })];
    files.extend(iam_files);
    let mut pre: Vec<Value> = Vec::new();
    if !bottlerocket {
        pre.extend(strings(&[BOOTSTRAP_SH]));
        if ctx.version.minor >= 29 {
            pre.push(json!("if [ -f /run/kubeadm/kubeadm.yaml ]; then sed -i 's#path: /etc/kubernetes/admin.conf#path: /etc/kubernetes/super-admin.conf#' /etc/kubernetes/manifests/kube-vip.yaml; fi"));
        }
        let (f, p) = ubuntu_proxy_and_mirror(ctx);
        files.extend(f);
        pre.extend(p);
    }
    Ok((files, pre))
}

/// Ubuntu files and pre-kubeadm commands for proxy and registry mirror (after the bootstrap
/// script and, on the control plane, the super-admin edit).
fn ubuntu_proxy_and_mirror(ctx: &Ctx<'_>) -> (Vec<Value>, Vec<Value>) {
    let s = &ctx.spec.cluster.spec;
    let mut files = Vec::new();
    let mut pre = Vec::new();
    if let Some(proxy) = &s.proxy_configuration {
        files.push(proxy_file(ctx, proxy));
    }
    if let Some(mirror) = &s.registry_mirror_configuration {
        files.extend(Mirror::new(mirror).files());
        pre.push(json!(
            "cat /etc/containerd/config_append.toml >> /etc/containerd/config.toml"
        ));
    }
    if s.proxy_configuration.is_some() || s.registry_mirror_configuration.is_some() {
        pre.extend(strings(&[
            "sudo systemctl daemon-reload",
            "sudo systemctl restart containerd",
        ]));
    }
    (files, pre)
}

// ---------------------------------------------------------------------------------------------
// External etcd

pub(crate) fn etcdadm_cluster(
    ctx: &Ctx<'_>,
    machine: &SnowMachineConfig,
    count: i64,
) -> Result<Planned, RenderError> {
    let s = &ctx.spec.cluster.spec;
    let mut cfg = Map::new();
    cfg.insert("cipherSuites".into(), json!(TLS_CIPHER));
    cfg.insert("etcdadmBuiltin".into(), json!(true));
    if let Some(proxy) = &s.proxy_configuration {
        cfg.insert(
            "proxy".into(),
            json!({"httpProxy": proxy.http_proxy.clone().unwrap_or_default(), "httpsProxy": proxy.https_proxy.clone().unwrap_or_default(), "noProxy": no_proxy(ctx, proxy)}),
        );
    }
    if let Some(mirror) = &s.registry_mirror_configuration {
        cfg.insert("registryMirror".into(), Mirror::new(mirror).bottlerocket());
    }
    if os_of(machine) == "bottlerocket" {
        let br = ctx
            .bundle
            .bottlerocket_host_containers
            .clone()
            .unwrap_or_default();
        let snow = ctx.bundle.snow()?;
        let mut brc = Map::new();
        brc.insert("adminImage".into(), json!(br.admin.uri));
        if let Some(settings) = bottlerocket_host_settings(machine) {
            for (k, v) in obj(settings) {
                brc.insert(k, v);
            }
        }
        brc.insert("bootstrapImage".into(), json!(br.kubeadm_bootstrap.uri));
        brc.insert("controlImage".into(), json!(br.control.uri));
        brc.insert(
            "customBootstrapContainers".into(),
            json!([{"essential": false, "image": snow.bottlerocket_bootstrap_snow.uri, "mode": "always", "name": "bottlerocket-bootstrap-snow"}]),
        );
        brc.insert("etcdImage".into(), json!(ctx.distro.etcd_image));
        brc.insert(
            "pauseImage".into(),
            json!(format!(
                "{}/pause:{}",
                ctx.distro.pause.repository, ctx.distro.pause.tag
            )),
        );
        cfg.insert("bottlerocketConfig".into(), Value::Object(brc));
        cfg.insert("format".into(), json!("bottlerocket"));
        cfg.insert("preEtcdadmCommands".into(), json!([]));
    } else {
        let mut init = obj(json!({"installDir": "/usr/bin", "version": ctx.distro.etcd_version}));
        if eksa_version_at_least_0_19(s.eksa_version.as_deref()) {
            init.insert("etcdReleaseURL".into(), json!(ctx.distro.etcd_url));
        }
        cfg.insert("cloudInitConfig".into(), Value::Object(init));
        cfg.insert("format".into(), json!("cloud-config"));
        cfg.insert("preEtcdadmCommands".into(), json!([BOOTSTRAP_SH]));
    }
    let name = ctx.names.etcd_cluster.clone();
    Ok(Planned {
        template: "etcdadm-cluster",
        api_version: ETCD_API_VERSION.into(),
        kind: "EtcdadmCluster",
        name: name.clone(),
        context: json!({
            "name": name,
            "namespace": NAMESPACE,
            "spec": {
                "etcdadmConfigSpec": cfg,
                "infrastructureTemplate": {"apiVersion": INFRA_API_VERSION, "kind": "AWSSnowMachineTemplate", "name": ctx.names.etcd_template},
                "replicas": count,
            },
        }),
    })
}

fn eksa_version_at_least_0_19(version: Option<&str>) -> bool {
    let Some(v) = version else { return false };
    let mut parts = v
        .trim_start_matches('v')
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    major > 0 || minor >= 19
}

// ---------------------------------------------------------------------------------------------
// Workers

pub(crate) struct WorkerNames {
    pub deployment: String,
    pub config_template: String,
    pub machine_template: String,
}

pub(crate) fn kubeadm_config_template(
    ctx: &Ctx<'_>,
    group: &snow_api::types::cluster::WorkerNodeGroupConfiguration,
    machine: &SnowMachineConfig,
    names: &WorkerNames,
) -> Result<Planned, RenderError> {
    let c = ctx.contract;
    let bottlerocket = os_of(machine) == "bottlerocket";
    let cp = ctx
        .spec
        .cluster
        .spec
        .control_plane_configuration
        .clone()
        .unwrap_or_default();
    let mut cc = Map::new();
    if let Some(sans) = cp.cert_sans.clone().filter(|v| !v.is_empty()) {
        cc.insert("apiServer".into(), json!({"certSANs": sans}));
    }
    let kubelet = kubelet_args(group.labels.as_ref(), false);
    let mut join = Map::new();
    join.insert(
        "nodeRegistration".into(),
        node_registration(
            ctx,
            &kubelet,
            taints_value(group.taints.as_deref(), false),
            false,
        ),
    );
    if bottlerocket {
        for (k, v) in bottlerocket_settings(ctx, machine)? {
            join.insert(k, v);
        }
    }
    let mut files = Vec::new();
    let mut pre = Vec::new();
    if !bottlerocket {
        pre.extend(strings(&[BOOTSTRAP_SH]));
        let (f, p) = ubuntu_proxy_and_mirror(ctx);
        files.extend(f);
        pre.extend(p);
    }
    let mut tspec = Map::new();
    if !cc.is_empty() {
        tspec.insert("clusterConfiguration".into(), Value::Object(cc));
    }
    put(&mut tspec, "files", ctx.list(files));
    if bottlerocket {
        tspec.insert("format".into(), json!("bottlerocket"));
    }
    tspec.insert("joinConfiguration".into(), Value::Object(join));
    put(&mut tspec, "postKubeadmCommands", ctx.list(vec![]));
    put(&mut tspec, "preKubeadmCommands", ctx.list(pre));
    Ok(Planned {
        template: "kubeadm-config-template",
        api_version: c.api_version("bootstrap.cluster.x-k8s.io"),
        kind: "KubeadmConfigTemplate",
        name: names.config_template.clone(),
        context: json!({"name": names.config_template, "namespace": NAMESPACE, "spec": {"template": {"spec": tspec}}}),
    })
}

pub(crate) fn machine_deployment(
    ctx: &Ctx<'_>,
    group: &snow_api::types::cluster::WorkerNodeGroupConfiguration,
    kube_tag: &str,
    names: &WorkerNames,
) -> Planned {
    let c = ctx.contract;
    let cluster = ctx.cluster_name();
    let mut annotations = Map::new();
    if let Some(auto) = &group.autoscaling_configuration {
        annotations.insert(
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size".into(),
            json!(auto.max_count.unwrap_or(0).to_string()),
        );
        annotations.insert(
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size".into(),
            json!(auto.min_count.unwrap_or(0).to_string()),
        );
    }
    let mut spec = Map::new();
    spec.insert("clusterName".into(), json!(cluster));
    spec.insert("replicas".into(), json!(group.count.unwrap_or(1)));
    if let Some(ru) = group
        .upgrade_rollout_strategy
        .as_ref()
        .and_then(|r| r.rolling_update.as_ref())
    {
        let strategy = json!({"rollingUpdate": {"maxSurge": ru.max_surge, "maxUnavailable": ru.max_unavailable}, "type": "RollingUpdate"});
        match c {
            Contract::V1Beta1 => spec.insert("strategy".into(), strategy),
            Contract::V1Beta2 => spec.insert("rollout".into(), json!({"strategy": strategy})),
        };
    }
    spec.insert("selector".into(), json!({"matchLabels": {}}));
    spec.insert(
        "template".into(),
        json!({
            "metadata": {"labels": {"cluster.x-k8s.io/cluster-name": cluster}},
            "spec": {
                "bootstrap": {"configRef": c.reference(&c.api_version("bootstrap.cluster.x-k8s.io"), "KubeadmConfigTemplate", &names.config_template)},
                "clusterName": cluster,
                "infrastructureRef": c.reference(INFRA_API_VERSION, "AWSSnowMachineTemplate", &names.machine_template),
                "version": kube_tag,
            },
        }),
    );
    Planned {
        template: "machine-deployment",
        api_version: c.api_version("cluster.x-k8s.io"),
        kind: "MachineDeployment",
        name: names.deployment.clone(),
        context: json!({"name": names.deployment, "namespace": NAMESPACE, "labels": ctx.labels(), "annotations": annotations, "spec": spec}),
    }
}

// ---------------------------------------------------------------------------------------------
// MachineHealthChecks (EKS-A's generic controller defaults: startup 10m, unhealthy 5m)

/// A MachineHealthCheck timeout in whole seconds, exactly (v1beta2 takes `int32` seconds). A
/// `ValidSpec` only holds timeouts that have such a value (snow-api's machine-health-check rule);
/// anything else is an error here, never rounded or replaced by a default.
fn seconds(field: &str, duration: &str) -> Result<i64, RenderError> {
    duration
        .parse::<snow_api::GoDuration>()
        .ok()
        .and_then(|d| d.whole_seconds())
        .and_then(|s| i32::try_from(s).ok())
        .map(i64::from)
        .ok_or_else(|| {
            RenderError::Spec(format!(
                "{field} `{duration}` is not a whole number of seconds Cluster API can take"
            ))
        })
}

pub(crate) fn machine_health_check(
    ctx: &Ctx<'_>,
    name: String,
    selector: Value,
    mhc: Option<&snow_api::types::cluster::MachineHealthCheck>,
    default_max_unhealthy: &str,
) -> Result<Planned, RenderError> {
    let c = ctx.contract;
    let global = ctx.spec.cluster.spec.machine_health_check.as_ref();
    let pick = |f: fn(&snow_api::types::cluster::MachineHealthCheck) -> Option<String>,
                default: &str| {
        mhc.and_then(f)
            .or_else(|| global.and_then(f))
            .unwrap_or_else(|| default.to_owned())
    };
    let startup = pick(|m| m.node_startup_timeout.clone(), "10m0s");
    let unhealthy = pick(|m| m.unhealthy_machine_timeout.clone(), "5m0s");
    let max_unhealthy = mhc
        .and_then(|m| m.max_unhealthy.clone())
        .or_else(|| global.and_then(|m| m.max_unhealthy.clone()))
        .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
        .unwrap_or_else(|| json!(default_max_unhealthy));
    let conditions = ["Ready"]
        .iter()
        .flat_map(|t| ["Unknown", "False"].map(|s| (*t, s)))
        .collect::<Vec<_>>();
    let spec = match c {
        Contract::V1Beta1 => json!({
            "clusterName": ctx.cluster_name(),
            "maxUnhealthy": max_unhealthy,
            "nodeStartupTimeout": startup,
            "selector": {"matchLabels": selector},
            "unhealthyConditions": conditions.iter().map(|(t, s)| json!({"status": s, "timeout": unhealthy, "type": t})).collect::<Vec<_>>(),
        }),
        Contract::V1Beta2 => {
            let unhealthy_s = seconds("unhealthyMachineTimeout", &unhealthy)?;
            json!({
                "checks": {
                    "nodeStartupTimeoutSeconds": seconds("nodeStartupTimeout", &startup)?,
                    "unhealthyNodeConditions": conditions.iter().map(|(t, s)| json!({"status": s, "timeoutSeconds": unhealthy_s, "type": t})).collect::<Vec<_>>(),
                },
                "clusterName": ctx.cluster_name(),
                "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": max_unhealthy}},
                "selector": {"matchLabels": selector},
            })
        }
    };
    Ok(Planned {
        template: "machine-health-check",
        api_version: c.api_version("cluster.x-k8s.io"),
        kind: "MachineHealthCheck",
        name: name.clone(),
        context: json!({"name": name, "namespace": NAMESPACE, "labels": ctx.labels(), "spec": spec}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_to_seconds() {
        assert_eq!(seconds("f", "10m0s").ok(), Some(600));
        assert_eq!(seconds("f", "1h30m").ok(), Some(5400));
        assert_eq!(seconds("f", "420000000us").ok(), Some(420));
        for bad in ["x", "-5m", "1500ms", "3000000000s"] {
            assert!(seconds("f", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn eksa_version_gate() {
        assert!(!eksa_version_at_least_0_19(None));
        assert!(!eksa_version_at_least_0_19(Some("v0.18.5")));
        assert!(eksa_version_at_least_0_19(Some("v0.19.0")));
        assert!(eksa_version_at_least_0_19(Some("v1.0.0")));
    }
}
