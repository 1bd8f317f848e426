//! The record of what snowctl applied for a cluster: a ConfigMap `eksa-system/<cluster>-snowctl`
//! with the spec and every object ever applied (templates renamed by upgrades included), so that
//! delete removes exactly what snowctl made and upgrade can compare with the spec it came from.
//!
//! It is written before the objects it lists, so an interrupted create can still be deleted.

use super::{LifecycleError, Management};
use capi_render::NAMESPACE;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// `<cluster>` + this is the inventory ConfigMap's name.
pub const INVENTORY_SUFFIX: &str = "-snowctl";
/// The label every snowctl inventory carries.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "snowctl");

/// One object in namespace `eksa-system` (snow-kube's type).
pub use snow_kube::ObjectRef;

/// What snowctl applied for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// The cluster.
    pub cluster: String,
    /// The Cluster API contract the objects follow.
    pub contract: String,
    /// The spec last applied, as the user wrote it.
    pub spec: String,
    /// Every object applied so far.
    pub objects: BTreeSet<ObjectRef>,
    /// The generated default key pair name (`eksa-default-<cluster>-<uuid4>`), kept so re-runs
    /// and upgrades render and import the same key.
    pub ssh_key_name: Option<String>,
}

impl Inventory {
    /// An empty inventory for a cluster none was recorded for yet.
    pub fn new(cluster: &str) -> Inventory {
        Inventory {
            cluster: cluster.to_owned(),
            contract: String::new(),
            spec: String::new(),
            objects: BTreeSet::new(),
            ssh_key_name: None,
        }
    }

    /// The ConfigMap name for a cluster.
    pub fn name_for(cluster: &str) -> String {
        format!("{cluster}{INVENTORY_SUFFIX}")
    }

    /// The ConfigMap.
    pub fn to_object(&self) -> Value {
        let objects: Vec<&ObjectRef> = self.objects.iter().collect();
        let mut object = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": Inventory::name_for(&self.cluster),
                "namespace": NAMESPACE,
                "labels": {
                    MANAGED_BY.0: MANAGED_BY.1,
                    "cluster.x-k8s.io/cluster-name": self.cluster,
                },
            },
            "data": {
                "cluster": self.cluster,
                "contract": self.contract,
                "spec.yaml": self.spec,
                "objects": serde_json::to_string_pretty(&objects).unwrap_or_default(),
            },
        });
        if let Some(name) = &self.ssh_key_name {
            object["data"]["sshKeyName"] = json!(name);
        }
        object
    }

    /// Reads the ConfigMap; `None` when it is not an inventory.
    pub fn from_object(object: &Value) -> Option<Inventory> {
        let data = &object["data"];
        let objects: Vec<ObjectRef> = serde_json::from_str(data["objects"].as_str()?).ok()?;
        Some(Inventory {
            cluster: data["cluster"].as_str()?.to_owned(),
            contract: data["contract"].as_str().unwrap_or_default().to_owned(),
            spec: data["spec.yaml"].as_str().unwrap_or_default().to_owned(),
            objects: objects.into_iter().collect(),
            ssh_key_name: data["sshKeyName"].as_str().map(str::to_owned),
        })
    }

    /// The cluster's inventory on the management cluster, if any.
    pub async fn load(
        mgmt: &Management,
        cluster: &str,
    ) -> Result<Option<Inventory>, LifecycleError> {
        let found = mgmt
            .get(
                "v1",
                "ConfigMap",
                Some(NAMESPACE),
                &Inventory::name_for(cluster),
            )
            .await?;
        Ok(found.as_ref().and_then(Inventory::from_object))
    }

    /// Every snowctl inventory in `eksa-system` (to find objects other clusters share).
    pub async fn load_all(mgmt: &Management) -> Result<Vec<Inventory>, LifecycleError> {
        let selector = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
        let found = mgmt
            .list("v1", "ConfigMap", Some(NAMESPACE), Some(&selector))
            .await?;
        Ok(found.iter().filter_map(Inventory::from_object).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inventory_survives_its_config_map() {
        let inventory = Inventory {
            cluster: "edge".into(),
            contract: "v1beta2".into(),
            spec: "kind: Cluster\n".into(),
            objects: [ObjectRef {
                api_version: "infrastructure.cluster.x-k8s.io/v1beta1".into(),
                kind: "AWSSnowIPPool".into(),
                name: "pool-1".into(),
            }]
            .into_iter()
            .collect(),
            ssh_key_name: Some("eksa-default-edge-1".into()),
        };
        let object = inventory.to_object();
        assert_eq!(object["metadata"]["name"], "edge-snowctl");
        assert_eq!(Inventory::from_object(&object), Some(inventory));
        assert_eq!(Inventory::from_object(&json!({"data": {}})), None);
    }
}
