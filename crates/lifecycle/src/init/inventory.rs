//! clusterctl's inventory: the `providers.clusterctl.cluster.x-k8s.io` CRD (v1alpha3, namespaced,
//! kind `Provider`) and one `Provider` per installed provider, named after its manifest label in
//! its namespace, with `providerName`, `type` and `version`. `clusterctl describe`, `move` and
//! `upgrade plan` read the installed providers from it.

use super::components::{CLUSTERCTL_LABEL, CORE_LABEL, Component, PROVIDER_LABEL};
use crate::{LifecycleError, Management};
use serde_json::{Value, json};

/// The inventory's apiVersion.
pub const API_VERSION: &str = "clusterctl.cluster.x-k8s.io/v1alpha3";
/// The inventory CRD's name.
pub const CRD_NAME: &str = "providers.clusterctl.cluster.x-k8s.io";

/// The inventory CRD, labelled `clusterctl.cluster.x-k8s.io/core: inventory` (so that move
/// leaves it alone).
pub fn crd() -> Value {
    let string = json!({"type": "string"});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": CRD_NAME,
            "labels": {CLUSTERCTL_LABEL: "", CORE_LABEL: "inventory"},
        },
        "spec": {
            "group": "clusterctl.cluster.x-k8s.io",
            "names": {"kind": "Provider", "listKind": "ProviderList", "plural": "providers", "singular": "provider"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1alpha3",
                "served": true,
                "storage": true,
                "additionalPrinterColumns": [
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    {"name": "Type", "type": "string", "jsonPath": ".type"},
                    {"name": "Provider", "type": "string", "jsonPath": ".providerName"},
                    {"name": "Version", "type": "string", "jsonPath": ".version"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": "A Cluster API provider installed on this cluster (clusterctl's inventory).",
                    "properties": {
                        "apiVersion": string, "kind": string, "metadata": {"type": "object"},
                        "providerName": string, "type": string, "version": string,
                        "watchedNamespace": string,
                    },
                }},
            }],
        },
    })
}

/// The inventory entry of a provider.
pub fn provider(component: Component, namespace: &str, version: &str) -> Option<Value> {
    let Component::Provider { name, kind } = component else {
        return None;
    };
    Some(json!({
        "apiVersion": API_VERSION,
        "kind": "Provider",
        "metadata": {
            "name": component.label(),
            "namespace": namespace,
            "labels": {
                CLUSTERCTL_LABEL: "",
                PROVIDER_LABEL: component.label(),
                CORE_LABEL: "inventory",
            },
        },
        "providerName": name,
        "type": kind.as_str(),
        "version": version,
    }))
}

/// An installed provider, as the inventory says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// `providerName`.
    pub name: String,
    /// `type`.
    pub kind: String,
    /// `version`.
    pub version: String,
    /// The namespace of the entry.
    pub namespace: String,
}

/// Every inventory entry (none when the CRD is not there).
pub async fn installed(mgmt: &Management) -> Result<Vec<Installed>, LifecycleError> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok(mgmt
        .list(API_VERSION, "Provider", None, None)
        .await?
        .iter()
        .map(|p| Installed {
            name: text(&p["providerName"]),
            kind: text(&p["type"]),
            version: text(&p["version"]),
            namespace: text(&p["metadata"]["namespace"]),
        })
        .collect())
}

impl Installed {
    /// Whether this entry is `component`.
    pub fn is(&self, component: Component) -> bool {
        matches!(component, Component::Provider { name, kind } if self.name == name && self.kind == kind.as_str())
    }
}
