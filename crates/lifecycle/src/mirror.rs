//! `mirror`: the registry mirror a cluster's nodes pull from, read from the management cluster:
//! the `spec.registryMirrorConfiguration` of the EKS Anywhere Cluster declared there (the kubectl
//! and GitOps path), else that of the spec snowctl last applied for it (its inventory
//! ConfigMap). Whether the mirror answers is not read here: a caller that asks it (snow-provision,
//! through `snow_images::probe`) fills [`RegistryMirror::answer`].

use super::{LifecycleError, Management, inventory::Inventory};
use serde::Serialize;
use serde_json::Value;
use snow_api::{
    defaults::DEFAULT_REGISTRY_MIRROR_PORT,
    mirror::MirrorAnswer,
    types::cluster::{OciNamespace, RegistryMirrorConfiguration},
};
use std::collections::BTreeMap;

/// The registry mirror of a cluster's spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryMirror {
    /// The mirror's host (`endpoint`).
    pub endpoint: String,
    /// Its port (`port`; 443 when the spec has none).
    pub port: String,
    /// `ociNamespaces`: the registries it mirrors under a namespace each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oci_namespaces: Vec<OciNamespace>,
    /// `insecureSkipVerify`.
    pub insecure_skip_verify: bool,
    /// `caCertContent`, the CA the nodes check its certificate against (left out of JSON and
    /// YAML: the spec holds it).
    #[serde(skip)]
    pub ca_cert_content: Option<String>,
    /// Where it was read: `Cluster NAMESPACE/NAME` (the declared Cluster) or
    /// `ConfigMap eksa-system/NAME-snowctl` (the spec snowctl applied).
    pub source: String,
    /// Whether it answers, when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<MirrorAnswer>,
}

// Every field's equality is total (`OciNamespace` derives only `PartialEq`, over two strings).
impl Eq for RegistryMirror {}

impl RegistryMirror {
    /// The mirror of `configuration`, read from `source`; `None` when it names no endpoint.
    pub fn new(configuration: &RegistryMirrorConfiguration, source: String) -> Option<Self> {
        let endpoint = configuration
            .endpoint
            .as_deref()
            .filter(|e| !e.is_empty())?;
        Some(RegistryMirror {
            endpoint: endpoint.to_owned(),
            port: configuration
                .port
                .as_deref()
                .filter(|p| !p.is_empty())
                .unwrap_or(DEFAULT_REGISTRY_MIRROR_PORT)
                .to_owned(),
            oci_namespaces: configuration.oci_namespaces.clone().unwrap_or_default(),
            insecure_skip_verify: configuration.insecure_skip_verify == Some(true),
            ca_cert_content: configuration
                .ca_cert_content
                .clone()
                .filter(|c| !c.trim().is_empty()),
            source,
            answer: None,
        })
    }

    /// The mirror of a declared EKS Anywhere Cluster (JSON), if its spec has one.
    pub fn of_declared(declared: &Value) -> Option<Self> {
        let configuration: RegistryMirrorConfiguration =
            serde_json::from_value(declared["spec"]["registryMirrorConfiguration"].clone()).ok()?;
        let meta = &declared["metadata"];
        let source = format!(
            "Cluster {}/{}",
            meta["namespace"].as_str().unwrap_or("default"),
            meta["name"].as_str().unwrap_or_default()
        );
        Self::new(&configuration, source)
    }

    /// The mirror of the spec an inventory recorded, if it has one.
    pub fn of_inventory(inventory: &Inventory) -> Option<Self> {
        let spec = snow_api::check(&inventory.spec).ok()?.spec?;
        let configuration = spec.cluster.spec.registry_mirror_configuration?;
        let source = format!(
            "ConfigMap {}/{}",
            capi_render::NAMESPACE,
            Inventory::name_for(&inventory.cluster)
        );
        Self::new(&configuration, source)
    }
}

/// Every EKS Anywhere Cluster declared on the management cluster (none when the kind is not
/// served).
async fn declared(mgmt: &Management) -> Result<Vec<Value>, LifecycleError> {
    if mgmt
        .served(snow_api::names::EKSA_API_VERSION)
        .await?
        .is_none()
    {
        return Ok(Vec::new());
    }
    Ok(mgmt
        .list(snow_api::names::EKSA_API_VERSION, "Cluster", None, None)
        .await?)
}

/// The mirror cluster `cluster` uses: its declared Cluster's (`declared`, when one is), else
/// that of the spec snowctl applied for it; `None` when neither names one.
pub async fn in_use(
    mgmt: &Management,
    cluster: &str,
    declared: Option<&Value>,
) -> Result<Option<RegistryMirror>, LifecycleError> {
    if let Some(declared) = declared {
        return Ok(RegistryMirror::of_declared(declared));
    }
    Ok(Inventory::load(mgmt, cluster)
        .await?
        .as_ref()
        .and_then(RegistryMirror::of_inventory))
}

/// The mirror of every cluster that has one, by cluster name, read as [`in_use`] reads one.
pub async fn all(mgmt: &Management) -> Result<BTreeMap<String, RegistryMirror>, LifecycleError> {
    let mut found = BTreeMap::new();
    let declared = declared(mgmt).await?;
    for inventory in Inventory::load_all(mgmt).await? {
        let mine = declared
            .iter()
            .any(|d| d["metadata"]["name"] == inventory.cluster.as_str());
        if !mine && let Some(mirror) = RegistryMirror::of_inventory(&inventory) {
            found.insert(inventory.cluster.clone(), mirror);
        }
    }
    for d in &declared {
        if let (Some(name), Some(mirror)) = (
            d["metadata"]["name"].as_str(),
            RegistryMirror::of_declared(d),
        ) {
            found.insert(name.to_owned(), mirror);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_declared_mirror_is_read_with_the_default_port_and_its_namespaces() {
        let declared = json!({"metadata": {"name": "edge", "namespace": "default"},
            "spec": {"registryMirrorConfiguration": {"endpoint": "10.0.0.5",
                "caCertContent": "PEM", "ociNamespaces": [{"registry": "public.ecr.aws", "namespace": "eks"}]}}});
        let mirror = RegistryMirror::of_declared(&declared).unwrap();
        assert_eq!(mirror.endpoint, "10.0.0.5");
        assert_eq!(mirror.port, "443");
        assert_eq!(mirror.oci_namespaces[0].namespace, "eks");
        assert_eq!(mirror.ca_cert_content.as_deref(), Some("PEM"));
        assert_eq!(mirror.source, "Cluster default/edge");
        // The CA stays out of the structured view.
        let shown = serde_json::to_string(&mirror).unwrap();
        assert!(!shown.contains("PEM"), "{shown}");
        assert_eq!(
            RegistryMirror::of_declared(&json!({"spec": {}})),
            None,
            "no mirror"
        );
    }
}
