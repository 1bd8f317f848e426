//! The resources served: built-ins preloaded, custom resources registered from
//! CustomResourceDefinition objects (every served version) and unregistered when those go.

use super::status::ApiError;
use serde_json::Value;

/// One served resource of one group version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceType {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) namespaced: bool,
    pub(crate) status: bool,
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    /// The CustomResourceDefinition that registered it (`None` for built-ins and
    /// programmatically registered kinds).
    pub(crate) crd: Option<String>,
}

impl ResourceType {
    /// `group/version`, or `version` for the core group.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub(crate) fn new(
        api_version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        status: bool,
    ) -> ResourceType {
        let (group, version) = split_api_version(api_version);
        ResourceType {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: kind.to_ascii_lowercase(),
            namespaced,
            status,
            short_names: Vec::new(),
            categories: Vec::new(),
            crd: None,
        }
    }
}

/// `("apps", "v1")` from `apps/v1`, `("", "v1")` from `v1`.
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Every resource served.
#[derive(Debug, Clone)]
pub(crate) struct Registry {
    types: Vec<ResourceType>,
}

impl Registry {
    /// The built-ins of a bare API server that matter here.
    pub(crate) fn builtin() -> Registry {
        let mut types = vec![
            ResourceType::new("v1", "Namespace", "namespaces", false, true),
            ResourceType::new("v1", "Secret", "secrets", true, false),
            ResourceType::new("v1", "ConfigMap", "configmaps", true, false),
            // Served by every API server; Flux's install manifest holds one of each.
            ResourceType::new("v1", "ResourceQuota", "resourcequotas", true, true),
            ResourceType::new(
                "networking.k8s.io/v1",
                "NetworkPolicy",
                "networkpolicies",
                true,
                false,
            ),
            ResourceType::new("v1", "Event", "events", true, false),
            ResourceType::new("v1", "ServiceAccount", "serviceaccounts", true, false),
            ResourceType::new("v1", "Service", "services", true, true),
            ResourceType::new("apps/v1", "Deployment", "deployments", true, true),
            ResourceType::new("apps/v1", "DaemonSet", "daemonsets", true, true),
            ResourceType::new("v1", "Node", "nodes", false, true),
            ResourceType::new("v1", "Pod", "pods", true, true),
            ResourceType::new("rbac.authorization.k8s.io/v1", "Role", "roles", true, false),
            ResourceType::new(
                "rbac.authorization.k8s.io/v1",
                "RoleBinding",
                "rolebindings",
                true,
                false,
            ),
            ResourceType::new(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                "clusterroles",
                false,
                false,
            ),
            ResourceType::new(
                "rbac.authorization.k8s.io/v1",
                "ClusterRoleBinding",
                "clusterrolebindings",
                false,
                false,
            ),
            ResourceType::new(
                "admissionregistration.k8s.io/v1",
                "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations",
                false,
                false,
            ),
            ResourceType::new(
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations",
                false,
                false,
            ),
            ResourceType::new("coordination.k8s.io/v1", "Lease", "leases", true, false),
            ResourceType::new("events.k8s.io/v1", "Event", "events", true, false),
            ResourceType::new(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "customresourcedefinitions",
                false,
                true,
            ),
        ];
        for (plural, short) in [
            ("namespaces", "ns"),
            ("configmaps", "cm"),
            ("serviceaccounts", "sa"),
            ("services", "svc"),
            ("deployments", "deploy"),
            ("daemonsets", "ds"),
            ("nodes", "no"),
            ("pods", "po"),
            ("customresourcedefinitions", "crd"),
        ] {
            if let Some(t) = types.iter_mut().find(|t| t.plural == plural) {
                t.short_names.push(short.to_owned());
            }
        }
        Registry { types }
    }

    pub(crate) fn types(&self) -> &[ResourceType] {
        &self.types
    }

    pub(crate) fn by_plural(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
    }

    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceType> {
        let (group, version) = split_api_version(api_version);
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.kind == kind)
    }

    /// Any served version of `group`'s `kind` (storage is shared between versions).
    pub(crate) fn by_group_kind(&self, group: &str, kind: &str) -> Option<&ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.kind == kind)
    }

    /// Registers (or replaces) one resource type.
    pub(crate) fn register(&mut self, t: ResourceType) {
        self.types
            .retain(|x| !(x.group == t.group && x.version == t.version && x.plural == t.plural));
        self.types.push(t);
    }

    /// Registers every served version of a CustomResourceDefinition object; returns the types.
    pub(crate) fn register_crd(&mut self, crd: &Value) -> Result<Vec<ResourceType>, ApiError> {
        let types = crd_types(crd)?;
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        self.types.retain(|t| t.crd.as_deref() != Some(name));
        for t in &types {
            self.register(t.clone());
        }
        Ok(types)
    }

    /// Drops the types a CustomResourceDefinition registered; returns `(group, plural)` if any.
    pub(crate) fn unregister_crd(&mut self, name: &str) -> Option<(String, String)> {
        let gone = self
            .types
            .iter()
            .find(|t| t.crd.as_deref() == Some(name))
            .map(|t| (t.group.clone(), t.plural.clone()));
        self.types.retain(|t| t.crd.as_deref() != Some(name));
        gone
    }
}

/// The resource types a CustomResourceDefinition object declares (served versions only).
pub(crate) fn crd_types(crd: &Value) -> Result<Vec<ResourceType>, ApiError> {
    let spec = &crd["spec"];
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let group = spec["group"].as_str().unwrap_or_default();
    let names = &spec["names"];
    let kind = names["kind"].as_str().unwrap_or_default();
    let plural = names["plural"].as_str().unwrap_or_default();
    if group.is_empty() || kind.is_empty() || plural.is_empty() {
        return Err(ApiError::invalid(format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"{name}\" is invalid: spec.group, spec.names.kind and spec.names.plural are required"
        )));
    }
    if name != format!("{plural}.{group}") {
        return Err(ApiError::invalid(format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"{name}\" is invalid: metadata.name: Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
        )));
    }
    let singular = names["singular"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut types = Vec::new();
    for version in spec["versions"].as_array().into_iter().flatten() {
        if version["served"].as_bool() == Some(false) {
            continue;
        }
        let Some(v) = version["name"].as_str() else {
            continue;
        };
        types.push(ResourceType {
            group: group.to_owned(),
            version: v.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: singular.clone(),
            namespaced,
            status: version["subresources"]["status"].is_object(),
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            crd: Some(name.to_owned()),
        });
    }
    Ok(types)
}

/// Kubernetes version priority: GA before beta before alpha, then higher numbers first;
/// the smaller key sorts first.
pub(crate) fn version_priority(version: &str) -> (u8, i64, i64, String) {
    let Some(rest) = version.strip_prefix('v') else {
        return (3, 0, 0, version.to_owned());
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<i64>() else {
        return (3, 0, 0, version.to_owned());
    };
    let tail = &rest[digits.len()..];
    let (level, minor) = if tail.is_empty() {
        (0, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (1, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (2, n.parse().unwrap_or(0))
    } else {
        return (3, 0, 0, version.to_owned());
    };
    (level, -major, -minor, String::new())
}
