//! The snowctl controller as a management component (EKS Anywhere's `eksa-components`: the
//! `eksa-controller-manager` Deployment and what it needs), as objects: pure and deterministic.
//!
//! [`objects`] gives, in apply order: the Namespace `eksa-system`; the ServiceAccount; the
//! ClusterRole and ClusterRoleBinding of [`cluster_rules`]; the Role and RoleBinding of
//! [`leader_election_rules`] in `eksa-system`; the ConfigMap [`RELEASE_CONFIGMAP`] of the
//! release catalog the Deployment mounts; the Service of the webhooks (443 → 9443); the
//! Deployment; a cert-manager self-signed Issuer and the Certificate of the Service's names,
//! into the Secret [`CERT_SECRET`] the Deployment mounts; the Validating- and
//! MutatingWebhookConfiguration (last: no object is refused for want of a webhook), whose
//! `caBundle` cert-manager's cainjector fills from the Certificate
//! (`cert-manager.io/inject-ca-from`).
//!
//! Every object but the Namespace carries [`LABEL`]`=`[`NAME`], the selector an upgrade prunes
//! by (the Namespace is shared with the clusters' objects: never labelled, never pruned).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use snow_api::ValidSpec;

/// The component's namespace (EKS Anywhere's, where the clusters' Cluster API objects live).
pub const NAMESPACE: &str = snow_api::names::SYSTEM_NAMESPACE;
/// The Deployment's, ServiceAccount's, roles' and Lease's name.
pub const NAME: &str = "snowctl-controller";
/// The label on every object of the component but the Namespace (value [`NAME`]).
pub const LABEL: &str = "app.kubernetes.io/name";
/// The webhooks' Service.
pub const WEBHOOK_SERVICE: &str = "snowctl-controller-webhook";
/// The Certificate of the webhooks' serving certificate.
pub const CERTIFICATE: &str = "snowctl-controller-serving-cert";
/// The Secret cert-manager writes the Certificate to (`tls.crt`, `tls.key`, `ca.crt`).
pub const CERT_SECRET: &str = "snowctl-controller-webhook-cert";
/// The self-signed Issuer of the Certificate.
pub const ISSUER: &str = "snowctl-controller-selfsigned-issuer";
/// Where the Secret is mounted, given to `--webhook-cert-dir`.
pub const CERT_DIR: &str = "/etc/snowctl/webhook-certs";
/// The port of `/healthz` and `/readyz` (`--health-addr`).
pub const HEALTH_PORT: u16 = 8081;
/// The port the webhooks listen on (`--webhook-addr`).
pub const WEBHOOK_PORT: u16 = 9443;
/// The non-root user the container runs as (the image's).
pub const RUN_AS_USER: u32 = 65532;
/// The ConfigMap holding the release catalog the controller reads (`bundles.yaml` and
/// `eksd-<n>.yaml`): the one `init` installed with, so the controller needs no network to find
/// its release (its default, EKS Anywhere's published Release manifest, is fetched).
pub const RELEASE_CONFIGMAP: &str = "snowctl-controller-release";
/// Where [`RELEASE_CONFIGMAP`] is mounted.
pub const RELEASE_DIR: &str = "/etc/snowctl/release";
/// The most bytes of the release catalog: a ConfigMap holds at most 1 MiB.
pub const MAX_RELEASE_BYTES: usize = 1_000_000;
/// The Deployment's pod-template annotation holding [`ReleaseFiles::digest`]: the controller
/// reads the release files once, at start, so a new catalog must start new pods, and a change
/// of this annotation is what rolls a Deployment.
pub const RELEASE_DIGEST_ANNOTATION: &str = "snowctl.anywhere.eks.amazonaws.com/release-sha256";

/// One webhook the controller serves: its configuration's name, path, the kind's plural and
/// whether it mutates. The paths are the controller's (`snow_controller::webhook::Hook::path`;
/// a test there checks both lists agree).
pub const WEBHOOKS: [(&str, &str, &str, bool); 6] = [
    (
        "validation.cluster.anywhere.amazonaws.com",
        "/validate-anywhere-eks-amazonaws-com-v1alpha1-cluster",
        "clusters",
        false,
    ),
    (
        "validation.snowmachineconfig.anywhere.amazonaws.com",
        "/validate-anywhere-eks-amazonaws-com-v1alpha1-snowmachineconfig",
        "snowmachineconfigs",
        false,
    ),
    (
        "mutation.snowmachineconfig.anywhere.amazonaws.com",
        "/mutate-anywhere-eks-amazonaws-com-v1alpha1-snowmachineconfig",
        "snowmachineconfigs",
        true,
    ),
    (
        "validation.snowdatacenterconfig.anywhere.amazonaws.com",
        "/validate-anywhere-eks-amazonaws-com-v1alpha1-snowdatacenterconfig",
        "snowdatacenterconfigs",
        false,
    ),
    (
        "validation.snowippool.anywhere.amazonaws.com",
        "/validate-anywhere-eks-amazonaws-com-v1alpha1-snowippool",
        "snowippools",
        false,
    ),
    (
        "validation.fluxconfig.anywhere.amazonaws.com",
        "/validate-anywhere-eks-amazonaws-com-v1alpha1-fluxconfig",
        "fluxconfigs",
        false,
    ),
];

/// The proxy settings given to the controller (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    /// `HTTP_PROXY`.
    pub http: String,
    /// `HTTPS_PROXY`.
    pub https: String,
    /// `NO_PROXY`, joined with commas.
    pub no_proxy: Vec<String>,
}

impl Proxy {
    /// The cluster spec's proxy configuration, with EKS Anywhere's no-proxy list (its pod and
    /// service CIDRs, `noProxy`, `localhost`, `127.0.0.1`, `.svc`, the control-plane endpoint);
    /// `None` without one.
    pub fn of(spec: &ValidSpec) -> Option<Proxy> {
        let proxy = spec.cluster.spec.proxy_configuration.as_ref()?;
        Some(Proxy {
            http: proxy.http_proxy.clone().unwrap_or_default(),
            https: proxy.https_proxy.clone().unwrap_or_default(),
            no_proxy: crate::objects::no_proxy_list(spec, proxy),
        })
    }
}

/// What the component is rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerComponent {
    /// The controller image (`snow_api::release::controller_image`).
    pub image: String,
    /// The proxy settings, from the cluster spec.
    pub proxy: Option<Proxy>,
    /// The release catalog the component was installed with.
    pub release: ReleaseFiles,
}

/// The release catalog given to the controller: a Bundles manifest and EKS-D Release
/// manifests, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseFiles {
    /// The Bundles manifest.
    pub bundles: String,
    /// EKS-D Release manifests.
    pub eksd: Vec<String>,
}

impl ReleaseFiles {
    /// The ConfigMap's data: `bundles.yaml`, then `eksd-<n>.yaml` in the given order.
    fn data(&self) -> Vec<(String, &str)> {
        let mut data = vec![("bundles.yaml".to_owned(), self.bundles.as_str())];
        for (i, text) in self.eksd.iter().enumerate() {
            data.push((format!("eksd-{i}.yaml"), text.as_str()));
        }
        data
    }

    /// The SHA-256 (hex) of the ConfigMap's data, key by key in order.
    pub fn digest(&self) -> String {
        let mut hash = Sha256::new();
        for (key, text) in self.data() {
            // Lengths first, so no two different data hash the same bytes.
            hash.update((key.len() as u64).to_be_bytes());
            hash.update(key.as_bytes());
            hash.update((text.len() as u64).to_be_bytes());
            hash.update(text.as_bytes());
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Their size in bytes, which must be at most [`MAX_RELEASE_BYTES`].
    pub fn size(&self) -> usize {
        self.data().iter().map(|(k, v)| k.len() + v.len()).sum()
    }
}

fn labels() -> Value {
    json!({LABEL: NAME})
}

fn meta(name: &str, namespaced: bool) -> Value {
    let mut m = json!({"name": name, "labels": labels()});
    if namespaced {
        m["namespace"] = json!(NAMESPACE);
    }
    m
}

/// One RBAC rule.
fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// What the controller calls on the management cluster, everywhere (the ClusterRole). Each
/// rule from the code that makes the call (the clients of the workload clusters are the
/// clusters' own kubeconfigs, not this account):
///
/// - the EKS Anywhere kinds: get (`Sources::read`, FluxConfig the one a Cluster's `gitOpsRef`
///   names), list and watch (the controllers' watches, `resync`); Clusters also patch (the finalizer, a merge patch), and the status of Clusters
///   and SnowMachineConfigs patch (`patch_status`);
/// - the Cluster API and CAPAS kinds `snow_lifecycle::reconcile` reads and applies
///   (`Live::read`: get, and list of MachineDeployments by label; `apply_changed`: a
///   server-side apply, which is patch and, for a new object, create; `remove_dropped_groups`
///   and `delete_pass`: delete; the cleanup after a delete lists the cluster's Machines);
/// - Secrets: get (the devices' credentials, the clusters' identity and kubeconfig Secrets),
///   create, patch and delete (those a cluster's render holds, applied and cleaned up as its
///   other objects);
/// - ConfigMaps: the cluster's inventory ConfigMap (list by label, get, create, patch, delete)
///   and the stored Cilium manifests (`--cni-stored`: get);
/// - the Namespace `eksa-system`, applied by each pass (get, create, patch);
/// - list and watch of everything the controller's caches hold (`snow_controller::Caches`:
///   the Cluster API and CAPAS kinds, Secrets, ConfigMaps, the `eksa-system` Namespace);
/// - Events about Clusters: create and patch (a server-side apply).
pub fn cluster_rules() -> Vec<Value> {
    const APPLY: [&str; 6] = ["get", "list", "watch", "create", "patch", "delete"];
    vec![
        rule(
            &["anywhere.eks.amazonaws.com"],
            &[
                "clusters",
                "snowmachineconfigs",
                "snowdatacenterconfigs",
                "snowippools",
                "fluxconfigs",
            ],
            &["get", "list", "watch"],
        ),
        rule(&["anywhere.eks.amazonaws.com"], &["clusters"], &["patch"]),
        rule(
            &["anywhere.eks.amazonaws.com"],
            &["clusters/status", "snowmachineconfigs/status"],
            &["patch"],
        ),
        rule(
            &["cluster.x-k8s.io"],
            &["clusters", "machinedeployments", "machinehealthchecks"],
            &APPLY,
        ),
        rule(&["cluster.x-k8s.io"], &["machines"], &["list"]),
        rule(
            &["controlplane.cluster.x-k8s.io"],
            &["kubeadmcontrolplanes"],
            &APPLY,
        ),
        rule(
            &["bootstrap.cluster.x-k8s.io"],
            &["kubeadmconfigtemplates"],
            &APPLY,
        ),
        rule(
            &["etcdcluster.cluster.x-k8s.io"],
            &["etcdadmclusters"],
            &APPLY,
        ),
        rule(
            &["infrastructure.cluster.x-k8s.io"],
            &[
                "awssnowclusters",
                "awssnowmachinetemplates",
                "awssnowippools",
            ],
            &APPLY,
        ),
        rule(&[""], &["secrets", "configmaps"], &APPLY),
        rule(
            &[""],
            &["namespaces"],
            &["get", "list", "watch", "create", "patch"],
        ),
        rule(&[""], &["events"], &["create", "patch"]),
    ]
}

/// What the leader election calls in `eksa-system` (the Role): the Lease [`NAME`] read,
/// created, and replaced to renew, take over or release it. The election writes no Events.
pub fn leader_election_rules() -> Vec<Value> {
    vec![rule(
        &["coordination.k8s.io"],
        &["leases"],
        &["get", "create", "update"],
    )]
}

/// The container's arguments (after the image's `snowctl` entrypoint): JSON logs, the Lease in
/// `eksa-system`, health and webhooks on every address of the pod, the certificate from the
/// mounted Secret, and Cilium from the manifests stored on the cluster (`--cni-stored`: the
/// image has no helm and the site may have no network; `snowctl create`/`upgrade cluster` and
/// `snowctl store cilium` store them).
pub fn args(component: &ControllerComponent) -> Vec<String> {
    let mut args: Vec<String> = [
        "controller",
        "--log-format",
        "json",
        "--leader-election-namespace",
        NAMESPACE,
        "--health-addr",
        &format!("0.0.0.0:{HEALTH_PORT}"),
        "--webhook-addr",
        &format!("0.0.0.0:{WEBHOOK_PORT}"),
        "--webhook-cert-dir",
        CERT_DIR,
        "--cni-stored",
    ]
    .map(String::from)
    .to_vec();
    // The release catalog from the mounted ConfigMap, never fetched.
    for (key, _) in component.release.data() {
        let flag = if key == "bundles.yaml" {
            "--bundles"
        } else {
            "--eksd-release"
        };
        args.extend([flag.to_owned(), format!("{RELEASE_DIR}/{key}")]);
    }
    args
}

fn deployment(component: &ControllerComponent) -> Value {
    let mut env = Vec::new();
    if let Some(proxy) = &component.proxy {
        env.extend([
            json!({"name": "HTTP_PROXY", "value": proxy.http}),
            json!({"name": "HTTPS_PROXY", "value": proxy.https}),
            json!({"name": "NO_PROXY", "value": proxy.no_proxy.join(",")}),
        ]);
    }
    let probe = |path: &str, delay: u32| json!({"httpGet": {"path": path, "port": "health"}, "initialDelaySeconds": delay, "periodSeconds": 10});
    let mut container = json!({
        "name": "controller",
        "image": component.image,
        "imagePullPolicy": "IfNotPresent",
        "args": args(component),
        "ports": [
            {"name": "health", "containerPort": HEALTH_PORT, "protocol": "TCP"},
            {"name": "webhook", "containerPort": WEBHOOK_PORT, "protocol": "TCP"},
        ],
        "livenessProbe": probe("/healthz", 15),
        "readinessProbe": probe("/readyz", 5),
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "readOnlyRootFilesystem": true,
            "runAsNonRoot": true,
            "runAsUser": RUN_AS_USER,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "webhook-certs", "mountPath": CERT_DIR, "readOnly": true},
            {"name": "release", "mountPath": RELEASE_DIR, "readOnly": true},
        ],
    });
    if !env.is_empty() {
        container["env"] = json!(env);
    }
    let toleration = |key: &str| json!({"key": key, "effect": "NoSchedule"});
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(NAME, true),
        "spec": {
            // One replica: the Lease keeps an old and a new pod of a rolling update from both
            // reconciling (leader election stays on).
            "replicas": 1,
            "selector": {"matchLabels": labels()},
            "template": {
                "metadata": {
                    "labels": labels(),
                    "annotations": {RELEASE_DIGEST_ANNOTATION: component.release.digest()},
                },
                "spec": {
                    "serviceAccountName": NAME,
                    "securityContext": {
                        "runAsNonRoot": true,
                        "runAsUser": RUN_AS_USER,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "terminationGracePeriodSeconds": 30,
                    "tolerations": [
                        toleration("node-role.kubernetes.io/control-plane"),
                        toleration("node-role.kubernetes.io/master"),
                    ],
                    "containers": [container],
                    "volumes": [
                        {"name": "tmp", "emptyDir": {}},
                        {"name": "webhook-certs", "secret": {"secretName": CERT_SECRET, "defaultMode": 420}},
                        {"name": "release", "configMap": {"name": RELEASE_CONFIGMAP, "defaultMode": 420}},
                    ],
                },
            },
        },
    })
}

fn release_config_map(component: &ControllerComponent) -> Value {
    let data: serde_json::Map<String, Value> = (component.release.data().into_iter())
        .map(|(k, v)| (k, json!(v)))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(RELEASE_CONFIGMAP, true), "data": data})
}

fn webhook_configuration(mutating: bool) -> Value {
    let hooks: Vec<Value> = WEBHOOKS
        .iter()
        .filter(|(_, _, _, m)| *m == mutating)
        .map(|(name, path, plural, _)| {
            json!({
                "name": name,
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": WEBHOOK_SERVICE, "namespace": NAMESPACE, "path": path, "port": 443}},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "timeoutSeconds": 10,
                "rules": [{
                    "apiGroups": ["anywhere.eks.amazonaws.com"],
                    "apiVersions": ["v1alpha1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": [plural],
                }],
            })
        })
        .collect();
    let mut metadata = meta(NAME, false);
    metadata["annotations"] =
        json!({"cert-manager.io/inject-ca-from": format!("{NAMESPACE}/{CERTIFICATE}")});
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": if mutating { "MutatingWebhookConfiguration" } else { "ValidatingWebhookConfiguration" },
        "metadata": metadata,
        "webhooks": hooks,
    })
}

/// Every object of the component, in apply order (see the module documentation).
pub fn objects(component: &ControllerComponent) -> Vec<Value> {
    let subject = json!([{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]);
    let role_ref = |kind: &str, name: &str| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name});
    let leader = format!("{NAME}-leader-election");
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(NAME, true)}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": meta(NAME, false), "rules": cluster_rules()}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": meta(NAME, false), "roleRef": role_ref("ClusterRole", NAME), "subjects": subject}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": meta(&leader, true), "rules": leader_election_rules()}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": meta(&leader, true), "roleRef": role_ref("Role", &leader), "subjects": subject}),
        release_config_map(component),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(WEBHOOK_SERVICE, true),
            "spec": {"selector": labels(), "ports": [{"name": "webhook", "port": 443, "targetPort": WEBHOOK_PORT, "protocol": "TCP"}]}}),
        deployment(component),
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": meta(ISSUER, true),
            "spec": {"selfSigned": {}}}),
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": meta(CERTIFICATE, true),
        "spec": {
            "dnsNames": [
                format!("{WEBHOOK_SERVICE}.{NAMESPACE}.svc"),
                format!("{WEBHOOK_SERVICE}.{NAMESPACE}.svc.cluster.local"),
            ],
            "issuerRef": {"kind": "Issuer", "name": ISSUER},
            "secretName": CERT_SECRET,
        }}),
        webhook_configuration(false),
        webhook_configuration(true),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_settings_become_the_containers_environment() {
        let component = ControllerComponent {
            image: "registry.local:5000/snowctl/controller:v0.1.0".into(),
            proxy: Some(Proxy {
                http: "http://proxy:3128".into(),
                https: "http://proxy:3128".into(),
                no_proxy: vec!["10.96.0.0/12".into(), ".svc".into()],
            }),
            release: ReleaseFiles::default(),
        };
        let d = deployment(&component);
        let env = &d["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(
            env[2],
            json!({"name": "NO_PROXY", "value": "10.96.0.0/12,.svc"})
        );
        let plain = ControllerComponent {
            proxy: None,
            ..component
        };
        assert!(deployment(&plain)["spec"]["template"]["spec"]["containers"][0]["env"].is_null());
    }

    #[test]
    fn the_release_catalog_is_mounted_and_named_in_the_args() {
        let component = ControllerComponent {
            image: "mirror:5000/snowctl/controller:v1".into(),
            proxy: None,
            release: ReleaseFiles {
                bundles: "kind: Bundles\n".into(),
                eksd: vec!["kind: Release\n".into(), "kind: Release\n".into()],
            },
        };
        let args = args(&component).join(" ");
        assert!(
            args.ends_with(&format!(
                "--bundles {RELEASE_DIR}/bundles.yaml --eksd-release {RELEASE_DIR}/eksd-0.yaml --eksd-release {RELEASE_DIR}/eksd-1.yaml"
            )),
            "{args}"
        );
        let all = objects(&component);
        let config_map = all
            .iter()
            .find(|o| o["metadata"]["name"] == RELEASE_CONFIGMAP)
            .unwrap();
        assert_eq!(config_map["data"]["eksd-1.yaml"], "kind: Release\n");
        let deployment = all.iter().find(|o| o["kind"] == "Deployment").unwrap();
        let volumes = &deployment["spec"]["template"]["spec"]["volumes"];
        assert!(
            (volumes.as_array().unwrap().iter())
                .any(|v| v["configMap"]["name"] == RELEASE_CONFIGMAP)
        );
        // The ConfigMap is applied before the Deployment that mounts it.
        let position = |kind: &str| all.iter().position(|o| o["kind"] == kind).unwrap();
        assert!(position("ConfigMap") < position("Deployment"));
        assert_eq!(
            component.release.size(),
            "bundles.yaml".len() + 14 + 2 * ("eksd-0.yaml".len() + 14)
        );
    }
}
