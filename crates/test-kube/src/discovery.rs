//! Discovery documents built from the registry: `/version`, `/api`, `/apis`, `/api/v1`,
//! `/apis/{group}/{version}`, plain and aggregated (`apidiscovery.k8s.io/v2`).

use super::registry::{Registry, ResourceType, version_priority};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const STATUS_VERBS: [&str; 3] = ["get", "patch", "update"];

/// The media type of aggregated discovery.
pub(crate) const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// `/version`.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.0-snow-test-support",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// `/api`.
pub(crate) fn api_versions(server: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server}]
    })
}

/// Versions of every non-core group, best first.
fn groups(registry: &Registry) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in registry.types().iter().filter(|t| !t.group.is_empty()) {
        let versions = groups.entry(t.group.clone()).or_default();
        if !versions.contains(&t.version) {
            versions.push(t.version.clone());
        }
    }
    for versions in groups.values_mut() {
        versions.sort_by_key(|v| version_priority(v));
    }
    groups
}

/// `/apis`.
pub(crate) fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = groups(registry)
        .into_iter()
        .map(|(group, versions)| {
            let gv = |v: &String| json!({"groupVersion": format!("{group}/{v}"), "version": v});
            json!({
                "name": group,
                "versions": versions.iter().map(gv).collect::<Vec<_>>(),
                "preferredVersion": gv(&versions[0]),
            })
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn in_version<'a>(registry: &'a Registry, group: &str, version: &str) -> Vec<&'a ResourceType> {
    let mut types: Vec<&ResourceType> = registry
        .types()
        .iter()
        .filter(|t| t.group == group && t.version == version)
        .collect();
    types.sort_by(|a, b| a.plural.cmp(&b.plural));
    types
}

/// `/api/v1` or `/apis/{group}/{version}`; `None` when nothing is served there.
pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = in_version(registry, group, version);
    if types.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for t in types {
        let mut r = json!({
            "name": t.plural,
            "singularName": t.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": VERBS,
        });
        if !t.short_names.is_empty() {
            r["shortNames"] = json!(t.short_names);
        }
        if !t.categories.is_empty() {
            r["categories"] = json!(t.categories);
        }
        resources.push(r);
        if t.status {
            resources.push(json!({
                "name": format!("{}/status", t.plural),
                "singularName": "",
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": STATUS_VERBS,
            }));
        }
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") },
        "resources": resources,
    }))
}

fn discovery_version(registry: &Registry, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = in_version(registry, group, version)
        .into_iter()
        .map(|t| {
            let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
            let mut r = json!({
                "resource": t.plural,
                "responseKind": gvk,
                "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
                "singularResource": t.singular,
                "verbs": VERBS,
                "shortNames": t.short_names,
                "categories": t.categories,
            });
            if t.status {
                r["subresources"] =
                    json!([{"subresource": "status", "responseKind": gvk, "verbs": STATUS_VERBS}]);
            }
            r
        })
        .collect();
    json!({"version": version, "resources": resources, "freshness": "Current"})
}

/// Aggregated discovery of `/api` (`core`) or `/apis`.
pub(crate) fn aggregated(registry: &Registry, core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![json!({"metadata": {"name": ""}, "versions": [discovery_version(registry, "", "v1")]})]
    } else {
        groups(registry)
            .into_iter()
            .map(|(group, versions)| {
                json!({
                    "metadata": {"name": group},
                    "versions": versions.iter().map(|v| discovery_version(registry, &group, v)).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}
