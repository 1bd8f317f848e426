//! The Snow provider stack and what clusterctl does to a components manifest before applying it:
//! split into objects, namespaced into the provider's namespace, labelled, ordered.

use super::envsubst::{self, Substituted, Values};
use super::redact::Redactor;
use crate::LifecycleError;
use serde_json::{Value, json};
use std::fmt;

/// `clusterctl.cluster.x-k8s.io: ""` is on every object clusterctl installs.
pub const CLUSTERCTL_LABEL: &str = snow_api::names::CLUSTERCTL_LABEL;
/// The provider an object belongs to (`cluster-api`, `bootstrap-kubeadm`, …).
pub const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";
/// `clusterctl.cluster.x-k8s.io/core`: `cert-manager` on cert-manager, `inventory` on the
/// inventory.
pub const CORE_LABEL: &str = snow_api::names::CLUSTERCTL_CORE_LABEL;
/// The cert-manager version clusterctl records on each cert-manager object.
pub const CERT_MANAGER_VERSION_ANNOTATION: &str =
    "cert-manager.clusterctl.cluster.x-k8s.io/version";

/// The type of a Cluster API provider, as the inventory writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProviderType {
    /// Cluster API core.
    Core,
    /// A bootstrap provider.
    Bootstrap,
    /// A control-plane provider.
    ControlPlane,
    /// An infrastructure provider.
    Infrastructure,
}

impl ProviderType {
    /// `CoreProvider`, `BootstrapProvider`, …
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderType::Core => "CoreProvider",
            ProviderType::Bootstrap => "BootstrapProvider",
            ProviderType::ControlPlane => "ControlPlaneProvider",
            ProviderType::Infrastructure => "InfrastructureProvider",
        }
    }

    fn label_prefix(self) -> &'static str {
        match self {
            ProviderType::Core => "",
            ProviderType::Bootstrap => "bootstrap-",
            ProviderType::ControlPlane => "control-plane-",
            ProviderType::Infrastructure => "infrastructure-",
        }
    }
}

/// One component of the stack: cert-manager, or a provider by clusterctl name and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    /// cert-manager (no inventory entry; its own labels).
    CertManager,
    /// A Cluster API provider.
    Provider {
        /// clusterctl's name (`cluster-api`, `kubeadm`, `etcdadm-bootstrap`, `snow`).
        name: &'static str,
        /// Its type.
        kind: ProviderType,
    },
    /// The snowctl controller (rendered by `capi_render::controller`, recorded by
    /// [`super::controller`], not in clusterctl's inventory).
    Controller,
}

/// The stack `snowctl init` installs, in install order (EKS Anywhere's `clusterctl init` line
/// for Snow, plus cert-manager first).
pub const STACK: [Component; 7] = [
    Component::CertManager,
    Component::Provider {
        name: "cluster-api",
        kind: ProviderType::Core,
    },
    Component::Provider {
        name: "kubeadm",
        kind: ProviderType::Bootstrap,
    },
    Component::Provider {
        name: "kubeadm",
        kind: ProviderType::ControlPlane,
    },
    Component::Provider {
        name: "etcdadm-bootstrap",
        kind: ProviderType::Bootstrap,
    },
    Component::Provider {
        name: "etcdadm-controller",
        kind: ProviderType::Bootstrap,
    },
    Component::Provider {
        name: "snow",
        kind: ProviderType::Infrastructure,
    },
];

impl Component {
    /// clusterctl's manifest label: `cluster-api`, `bootstrap-kubeadm`, `infrastructure-snow`,
    /// or `cert-manager`.
    pub fn label(self) -> String {
        match self {
            Component::CertManager => "cert-manager".into(),
            Component::Controller => capi_render::controller::NAME.into(),
            Component::Provider {
                name: "cluster-api",
                kind: ProviderType::Core,
            } => "cluster-api".into(),
            Component::Provider { name, kind } => format!("{}{name}", kind.label_prefix()),
        }
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// One component's manifests as read, before substitution.
#[derive(Debug, Clone)]
pub struct ComponentSource {
    /// Which component.
    pub component: Component,
    /// Its version (the inventory's `version`).
    pub version: String,
    /// Where the components manifest came from (a path or URI), for messages.
    pub origin: String,
    /// The components manifest.
    pub components: String,
}

/// One component ready to apply: its objects in apply order.
#[derive(Debug, Clone)]
pub struct ComponentObjects {
    /// Which component.
    pub component: Component,
    /// Its version.
    pub version: String,
    /// The namespace its objects live in (the manifest's Namespace).
    pub namespace: String,
    /// The objects, labelled and namespaced, in apply order.
    pub objects: Vec<Value>,
    /// What secret variables put into them, to hide where they are printed.
    pub secrets: Redactor,
}

impl ComponentObjects {
    /// `(namespace, name)` of every Deployment.
    pub fn deployments(&self) -> Vec<(String, String)> {
        self.objects
            .iter()
            .filter(|o| o["kind"] == "Deployment")
            .map(|o| {
                (
                    o["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    o["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect()
    }
}

/// Kinds clusterctl treats as cluster-scoped (every other kind gets the provider's namespace).
pub use snow_kube::cluster_scoped;

fn is_webhook(kind: &str) -> bool {
    matches!(
        kind,
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"
    )
}

/// Apply order: namespaces, CRDs, built-in objects, custom resources, webhook configurations.
pub(crate) fn rank(object: &Value) -> u8 {
    let kind = object["kind"].as_str().unwrap_or_default();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    match kind {
        "Namespace" => 0,
        "CustomResourceDefinition" => 1,
        _ if is_webhook(kind) => 4,
        _ if is_custom(api_version) => 3,
        _ => 2,
    }
}

/// Whether an apiVersion is served by a CustomResourceDefinition rather than built in.
pub fn is_custom(api_version: &str) -> bool {
    match api_version.rsplit_once('/') {
        None => false,
        Some((group, _)) => !group.ends_with(".k8s.io") && group.contains('.'),
    }
}

fn unreadable(source: &ComponentSource, reason: String) -> LifecycleError {
    LifecycleError::Components {
        component: source.component.label(),
        version: source.version.clone(),
        origin: source.origin.clone(),
        reason,
    }
}

/// The variables of a manifest that have neither a value nor a default.
pub fn missing_variables(
    source: &ComponentSource,
    values: &Values,
) -> Result<Vec<String>, LifecycleError> {
    // cert-manager's manifest is applied as is (clusterctl does not substitute it).
    if source.component == Component::CertManager {
        return Ok(Vec::new());
    }
    envsubst::missing(&source.components, values)
        .map_err(|e| unreadable(source, format!("variable at {e}")))
}

/// The byte offset of 1-based `line` and `column` (in characters) of `text`.
fn byte_offset(text: &str, line: u64, column: u64) -> usize {
    let start = match line {
        0 | 1 => 0,
        n => text
            .match_indices('\n')
            .nth(usize::try_from(n - 2).unwrap_or(usize::MAX))
            .map_or(text.len(), |(i, _)| i + 1),
    };
    let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    text[start..]
        .char_indices()
        .nth(skip)
        .map_or(text.len(), |(i, _)| start + i)
}

/// `not YAML …` for a manifest whose variables were substituted. The parser's own excerpt would
/// quote the substituted line, secret values and all: the position and the line are the
/// manifest's as written instead, and the parser's message has every secret hidden.
fn not_yaml(
    err: &serde_saphyr::Error,
    source: &ComponentSource,
    values: &Values,
    substituted: &Substituted,
) -> String {
    let plain = err.without_snippet().to_string();
    let Some(location) = err.location() else {
        return format!("not YAML: {}", substituted.secrets.redact(&plain));
    };
    let suffix = format!(" at line {}, column {}", location.line(), location.column());
    let message = substituted
        .secrets
        .redact(plain.strip_suffix(&suffix).unwrap_or(&plain))
        .into_owned();
    let offset = byte_offset(&substituted.text, location.line(), location.column());
    let text = source.components.as_str();
    let at = envsubst::source_offset(text, values, offset).unwrap_or(0);
    let (line, column) = envsubst::line_column(text, at);
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let (shown, _) = snow_api::finding::excerpt(&text[start..end], column);
    format!("not YAML at line {line}, column {column}: {message}\n  {line} | {shown}")
}

/// Substitutes, splits, namespaces, labels and orders one component's manifest.
pub fn process(
    source: &ComponentSource,
    values: &Values,
) -> Result<ComponentObjects, LifecycleError> {
    let docs: Vec<Value>;
    let secrets = match source.component {
        Component::Controller => {
            return Err(unreadable(
                source,
                "the snowctl controller is rendered, never read from a manifest".into(),
            ));
        }
        // cert-manager's manifest is applied as is: the parser's excerpt is its own text.
        Component::CertManager => {
            docs = serde_saphyr::from_multiple(&source.components)
                .map_err(|e| unreadable(source, format!("not YAML: {e}")))?;
            Redactor::default()
        }
        Component::Provider { .. } => {
            let substituted = envsubst::substitute(&source.components, values)
                .map_err(|e| unreadable(source, format!("variable at {e}")))?;
            docs = serde_saphyr::from_multiple(&substituted.text)
                .map_err(|e| unreadable(source, not_yaml(&e, source, values, &substituted)))?;
            substituted.secrets
        }
    };
    let mut objects: Vec<Value> = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        match doc {
            Value::Null => continue,
            Value::Object(_)
                if doc["kind"].is_string()
                    && doc["apiVersion"].is_string()
                    && doc["metadata"]["name"].is_string() =>
            {
                objects.push(doc);
            }
            _ => {
                return Err(unreadable(
                    source,
                    format!(
                        "document {} is not a Kubernetes object (apiVersion, kind and metadata.name are required)",
                        i + 1
                    ),
                ));
            }
        }
    }
    let namespaces: Vec<String> = objects
        .iter()
        .filter(|o| o["kind"] == "Namespace")
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    let namespace = match (source.component, namespaces.as_slice()) {
        (_, [one]) => one.clone(),
        (Component::CertManager, _) => "cert-manager".to_owned(),
        (_, []) => {
            return Err(unreadable(
                source,
                "it has no Namespace, so the provider's namespace cannot be known".into(),
            ));
        }
        (_, more) => {
            return Err(unreadable(
                source,
                format!(
                    "it has {} Namespaces ({}); a provider has one",
                    more.len(),
                    secrets.redact(&more.join(", "))
                ),
            ));
        }
    };
    let label = source.component.label();
    for object in &mut objects {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let meta = &mut object["metadata"];
        if let Some(m) = meta.as_object_mut() {
            // Server-set fields a manifest may carry (`creationTimestamp: null`).
            m.remove("creationTimestamp");
        }
        if let Some(m) = object.as_object_mut() {
            m.remove("status");
        }
        let meta = &mut object["metadata"];
        match source.component {
            Component::CertManager => {
                meta["labels"][CLUSTERCTL_LABEL] = json!("");
                meta["labels"][CORE_LABEL] = json!("cert-manager");
                meta["annotations"][CERT_MANAGER_VERSION_ANNOTATION] = json!(source.version);
            }
            Component::Provider { .. } | Component::Controller => {
                if cluster_scoped(&kind) {
                    if let Some(m) = meta.as_object_mut() {
                        m.remove("namespace");
                    }
                } else {
                    meta["namespace"] = json!(namespace);
                }
                meta["labels"][CLUSTERCTL_LABEL] = json!("");
                meta["labels"][PROVIDER_LABEL] = json!(label);
            }
        }
    }
    // Stable: the manifest's order within a rank.
    objects.sort_by_key(rank);
    Ok(ComponentObjects {
        component: source.component,
        version: source.version.clone(),
        namespace,
        objects,
        secrets,
    })
}

/// `Kind namespace/name` or `Kind name`.
pub fn describe(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The object with the values of every Secret's `data` and `stringData` replaced.
pub fn redacted(object: &Value) -> Value {
    let mut copy = object.clone();
    if copy["kind"] == "Secret" && copy["apiVersion"] == "v1" {
        for field in ["data", "stringData"] {
            if let Some(map) = copy[field].as_object_mut() {
                for value in map.values_mut() {
                    *value = json!("<redacted>");
                }
            }
        }
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(component: Component, text: &str) -> ComponentSource {
        ComponentSource {
            component,
            version: "v1.0.0".into(),
            origin: "test.yaml".into(),
            components: text.into(),
        }
    }

    const PROVIDER: &str = "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: elsewhere}
spec: {template: {spec: {containers: [{name: manager, image: \"${IMG}\"}]}}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: i}
---
apiVersion: v1
kind: Namespace
metadata: {name: p-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: xs.example.com, creationTimestamp: null}
status: {storedVersions: []}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
";

    #[test]
    fn objects_are_labelled_namespaced_and_ordered() {
        let snow = Component::Provider {
            name: "snow",
            kind: ProviderType::Infrastructure,
        };
        let mut values = Values::default();
        values.set("IMG", "repo/img:v1");
        let done = process(&source(snow, PROVIDER), &values).unwrap();
        let order: Vec<String> = done.objects.iter().map(describe).collect();
        assert_eq!(
            order,
            [
                "Namespace p-system",
                "CustomResourceDefinition xs.example.com",
                "Deployment p-system/d",
                "ClusterRole r",
                "Issuer p-system/i",
                "ValidatingWebhookConfiguration v",
            ]
        );
        for o in &done.objects {
            assert_eq!(
                o["metadata"]["labels"][PROVIDER_LABEL],
                "infrastructure-snow"
            );
            assert_eq!(o["metadata"]["labels"][CLUSTERCTL_LABEL], "");
            assert!(o["status"].is_null());
            assert!(o["metadata"].get("creationTimestamp").is_none());
        }
        assert_eq!(
            done.objects[2]["spec"]["template"]["spec"]["containers"][0]["image"],
            "repo/img:v1"
        );
        assert_eq!(done.deployments(), [("p-system".into(), "d".into())]);
    }

    #[test]
    fn labels_follow_clusterctl() {
        let labels: Vec<String> = STACK.iter().map(|c| c.label()).collect();
        assert_eq!(
            labels,
            [
                "cert-manager",
                "cluster-api",
                "bootstrap-kubeadm",
                "control-plane-kubeadm",
                "bootstrap-etcdadm-bootstrap",
                "bootstrap-etcdadm-controller",
                "infrastructure-snow",
            ]
        );
    }

    #[test]
    fn bad_manifests_name_the_component() {
        let core = STACK[1];
        for text in ["a: [", "- 1\n- 2\n", "kind: X\n"] {
            let err = process(&source(core, text), &Values::default()).unwrap_err();
            assert!(err.to_string().contains("cluster-api v1.0.0"), "{err}");
        }
        let two = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n";
        assert!(process(&source(core, two), &Values::default()).is_err());
    }

    #[test]
    fn secrets_are_redacted() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"credentials": "c2VjcmV0"}});
        assert_eq!(redacted(&secret)["data"]["credentials"], "<redacted>");
    }
}
