//! The shared vocabulary of the Kubernetes objects snowctl reads and writes: the namespace, API
//! versions, annotations and labels every crate names, defined once here, and the two readings
//! of an object's JSON every crate makes ([`condition_true`], [`ref_name`]).
//!
//! The other crates' constants of the same meaning (`capi_render::NAMESPACE`,
//! `snow_lifecycle::PAUSED`, …) are these values under their older names.

use serde_json::Value;

/// EKS Anywhere's namespace for its own objects, where every cluster's Cluster API and CAPAS
/// objects live.
pub const SYSTEM_NAMESPACE: &str = "eksa-system";

/// The API group and version of every EKS Anywhere kind (the same as
/// [`crate::types::API_VERSION`]).
pub const EKSA_API_VERSION: &str = crate::types::API_VERSION;

/// Cluster API's annotation that pauses reconciliation of an object.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

/// Cluster API's externally-managed annotation (on the infrastructure cluster): its provider
/// leaves an object so annotated to the system it names.
pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";

/// clusterctl's label on everything of a provider it installed, and on the CRDs a move finds
/// its kinds by.
pub const CLUSTERCTL_LABEL: &str = "clusterctl.cluster.x-k8s.io";

/// clusterctl's label on the core components (cert-manager, Cluster API itself).
pub const CLUSTERCTL_CORE_LABEL: &str = "clusterctl.cluster.x-k8s.io/core";

/// The label that makes `clusterctl move` carry an object along.
pub const CLUSTERCTL_MOVE_LABEL: &str = "clusterctl.cluster.x-k8s.io/move";

/// The label that makes `clusterctl move` carry an object and everything it owns.
pub const CLUSTERCTL_MOVE_HIERARCHY_LABEL: &str = "clusterctl.cluster.x-k8s.io/move-hierarchy";

/// Whether `object`'s `status.conditions` has a condition of type `kind` with status `"True"`.
pub fn condition_true(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// The name an object reference (`{kind?, name}`) points at; `None` when absent or empty.
pub fn ref_name(reference: &Value) -> Option<&str> {
    reference["name"].as_str().filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_condition_is_true_only_with_status_true() {
        let o = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "Available", "status": "False"},
        ]}});
        assert!(condition_true(&o, "Ready"));
        assert!(!condition_true(&o, "Available"));
        assert!(!condition_true(&o, "Missing"));
        assert!(!condition_true(&json!({}), "Ready"));
    }

    #[test]
    fn an_empty_or_missing_reference_names_nothing() {
        assert_eq!(ref_name(&json!({"kind": "K", "name": "a"})), Some("a"));
        assert_eq!(ref_name(&json!({"name": ""})), None);
        assert_eq!(ref_name(&json!({})), None);
        assert_eq!(ref_name(&Value::Null), None);
    }

    #[test]
    fn the_eksa_api_version_is_the_types_one() {
        assert_eq!(EKSA_API_VERSION, "anywhere.eks.amazonaws.com/v1alpha1");
    }
}
