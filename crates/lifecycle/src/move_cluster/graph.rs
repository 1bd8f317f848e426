//! The object graph of one cluster, as `clusterctl move` discovers it, and its ownership levels.
//!
//! Nodes are objects keyed by UID; an ownerReference is an edge from owner to owned. What moves:
//! every descendant of the Cluster (through ownerReferences, and the Secrets Cluster API makes
//! without them: `<cluster>-{kubeconfig,ca,etcd,sa,proxy}` belong to the Cluster), every
//! descendant of an object whose kind or labels carry `clusterctl.cluster.x-k8s.io/move-hierarchy`,
//! and every object whose kind or labels carry `clusterctl.cluster.x-k8s.io/move` (CAPAS's
//! identity Secret does), plus snowctl's inventory ConfigMap. Other Clusters of the namespace
//! and what they own stay.
//!
//! Level 0 holds the objects none of whose owners move; level k+1 the objects whose moving
//! owners are all in levels 0..=k. Creating level by level means every owner exists (and its
//! new UID is known) before the objects it owns.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Label on a CRD or object: move it whatever owns it.
pub const MOVE_LABEL: &str = snow_api::names::CLUSTERCTL_MOVE_LABEL;
/// Label on a CRD or object: move it and everything it owns.
pub const MOVE_HIERARCHY_LABEL: &str = snow_api::names::CLUSTERCTL_MOVE_HIERARCHY_LABEL;
/// Suffixes of the Secrets Cluster API makes for a Cluster, without ownerReferences in older
/// releases (clusterctl's "soft ownership").
const CLUSTER_SECRETS: [&str; 5] = ["kubeconfig", "ca", "etcd", "sa", "proxy"];

/// A kind that can be part of a move: how to reach it and whether it is forced along.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// `group/version` (the storage version of a CRD), or `v1`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// The resource name (lower-case plural).
    pub plural: String,
    /// Namespaced (a move only takes namespaced objects).
    pub namespaced: bool,
    /// Served with a `status` subresource: status is written through it.
    pub status: bool,
    /// Every object of the kind moves (`clusterctl.cluster.x-k8s.io/move` on the CRD).
    pub force: bool,
    /// Every object of the kind is a hierarchy root (`…/move-hierarchy` on the CRD).
    pub hierarchy: bool,
}

impl Kind {
    /// Secrets and ConfigMaps: part of a move only when owned or labelled.
    pub fn core(kind: &str) -> Kind {
        Kind {
            api_version: "v1".into(),
            kind: kind.into(),
            plural: crate::plural(kind),
            namespaced: true,
            status: false,
            force: false,
            hierarchy: false,
        }
    }

    /// The group of the kind (empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or_default()
    }
}

/// One object of the graph.
#[derive(Debug, Clone)]
pub struct Node {
    /// Index into [`Graph::kinds`].
    pub kind: usize,
    /// The object as read (status included).
    pub object: Value,
    /// Its UID on the side it was read from.
    pub uid: String,
    /// UIDs of the owners that move with it.
    pub owners: Vec<String>,
}

impl Node {
    /// The object's name.
    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or_default()
    }

    /// The object's namespace.
    pub fn namespace(&self) -> &str {
        self.object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
    }
}

/// The objects that move, by ownership level.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// The kinds the nodes refer to.
    pub kinds: Vec<Kind>,
    /// Level 0 first.
    pub levels: Vec<Vec<Node>>,
}

impl Graph {
    /// Every node, owners first.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.levels.iter().flatten()
    }

    /// How many objects move.
    pub fn len(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// Whether nothing moves.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `Kind namespace/name` of a node, for messages.
    pub fn describe(&self, node: &Node) -> String {
        format!(
            "{} {}/{}",
            self.kinds[node.kind].kind,
            node.namespace(),
            node.name()
        )
    }
}

fn labelled(object: &Value, label: &str) -> bool {
    object["metadata"]["labels"][label].is_string()
}

fn uid(object: &Value) -> String {
    object["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn owner_uids(object: &Value) -> Vec<String> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str().map(str::to_owned))
        .collect()
}

/// The graph of cluster `cluster` among `objects` (`(kind index, object)`, one namespace).
/// `extra` names objects that move as well (snowctl's inventory ConfigMap): `(kind, name)`.
/// `None` when the namespace holds no Cluster of that name.
pub fn discover(
    kinds: Vec<Kind>,
    objects: Vec<(usize, Value)>,
    cluster: &str,
    extra: &[(&str, String)],
) -> Option<Graph> {
    let is_cluster = |k: usize, o: &Value| {
        kinds[k].kind == "Cluster" && kinds[k].group() == "cluster.x-k8s.io" && {
            o["metadata"]["name"] == cluster
        }
    };
    let root = objects
        .iter()
        .find(|(k, o)| is_cluster(*k, o))
        .map(|(_, o)| uid(o))?;
    // Edges owner → owned, with the soft ownership of the Cluster's Secrets.
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, o) in &objects {
        let mut owners = owner_uids(o);
        if owners.is_empty() && kinds[*k].kind == "Secret" {
            let name = o["metadata"]["name"].as_str().unwrap_or_default();
            if name
                .rsplit_once('-')
                .is_some_and(|(c, s)| c == cluster && CLUSTER_SECRETS.contains(&s))
            {
                owners.push(root.clone());
            }
        }
        for owner in owners {
            children.entry(owner).or_default().push(uid(o));
        }
    }
    let mut moving: BTreeSet<String> = BTreeSet::new();
    let mut stack = vec![root.clone()];
    for (k, o) in &objects {
        let kind = &kinds[*k];
        let other_cluster = kind.kind == "Cluster" && !is_cluster(*k, o);
        if other_cluster {
            continue;
        }
        if kind.hierarchy || labelled(o, MOVE_HIERARCHY_LABEL) {
            stack.push(uid(o));
        } else if kind.force
            || labelled(o, MOVE_LABEL)
            || extra.iter().any(|(ek, en)| {
                kind.kind == *ek && kind.api_version == "v1" && o["metadata"]["name"] == *en
            })
        {
            moving.insert(uid(o));
        }
    }
    while let Some(next) = stack.pop() {
        if moving.insert(next.clone())
            && let Some(owned) = children.get(&next)
        {
            stack.extend(owned.iter().cloned());
        }
    }
    let nodes: Vec<Node> = objects
        .into_iter()
        .filter(|(_, o)| moving.contains(&uid(o)))
        .map(|(kind, object)| {
            let mut owners: Vec<String> = owner_uids(&object)
                .into_iter()
                .filter(|u| moving.contains(u))
                .collect();
            if owners.is_empty()
                && kinds[kind].kind == "Secret"
                && object["metadata"]["ownerReferences"].is_null()
                && children
                    .get(&root)
                    .is_some_and(|c| c.contains(&uid(&object)))
            {
                owners.push(root.clone());
            }
            Node {
                kind,
                uid: uid(&object),
                object,
                owners,
            }
        })
        .collect();
    Some(Graph {
        levels: levels(nodes),
        kinds,
    })
}

/// Sorts nodes into ownership levels; nodes in an ownership cycle (which no API server lets
/// exist with valid UIDs) go last, one level.
pub fn levels(nodes: Vec<Node>) -> Vec<Vec<Node>> {
    let mut placed: BTreeSet<String> = BTreeSet::new();
    let mut left = nodes;
    let mut levels = Vec::new();
    while !left.is_empty() {
        let (mut ready, rest): (Vec<Node>, Vec<Node>) = left
            .into_iter()
            .partition(|n| n.owners.iter().all(|o| placed.contains(o) || *o == n.uid));
        if ready.is_empty() {
            levels.push(rest);
            break;
        }
        // Stable order inside a level: by kind and name.
        ready.sort_by(|a, b| {
            (a.kind, a.namespace(), a.name()).cmp(&(b.kind, b.namespace(), b.name()))
        });
        placed.extend(ready.iter().map(|n| n.uid.clone()));
        levels.push(ready);
        left = rest;
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(kind: &str, api_version: &str) -> Kind {
        Kind {
            api_version: api_version.into(),
            kind: kind.into(),
            plural: crate::plural(kind),
            namespaced: true,
            status: true,
            force: false,
            hierarchy: false,
        }
    }

    fn object(kind: &str, name: &str, uid: &str, owners: &[&str]) -> Value {
        let mut o =
            json!({"kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": uid}});
        if !owners.is_empty() {
            o["metadata"]["ownerReferences"] = owners
                .iter()
                .map(|u| json!({"uid": u, "kind": "X", "name": "x", "apiVersion": "v1"}))
                .collect();
        }
        o
    }

    #[test]
    fn the_cluster_its_descendants_and_labelled_objects_move_in_levels() {
        let kinds = vec![
            crd("Cluster", "cluster.x-k8s.io/v1beta2"),
            crd(
                "KubeadmControlPlane",
                "controlplane.cluster.x-k8s.io/v1beta2",
            ),
            crd("Machine", "cluster.x-k8s.io/v1beta2"),
            Kind::core("Secret"),
            Kind::core("ConfigMap"),
        ];
        let mut identity = object("Secret", "edge-snow-credentials", "s2", &[]);
        identity["metadata"]["labels"] = json!({MOVE_LABEL: "true"});
        let objects = vec![
            (0, object("Cluster", "edge", "c", &[])),
            (0, object("Cluster", "other", "c2", &[])),
            (1, object("KubeadmControlPlane", "edge", "k", &["c"])),
            (1, object("KubeadmControlPlane", "other", "k2", &["c2"])),
            (2, object("Machine", "edge-1", "m", &["k"])),
            (3, object("Secret", "edge-kubeconfig", "s1", &[])),
            (3, identity),
            (3, object("Secret", "unrelated", "s3", &[])),
            (4, object("ConfigMap", "edge-snowctl", "cm", &[])),
            (4, object("ConfigMap", "edge-other", "cm2", &[])),
        ];
        let graph = discover(
            kinds,
            objects,
            "edge",
            &[("ConfigMap", "edge-snowctl".into())],
        )
        .expect("cluster found");
        let names: Vec<Vec<&str>> = graph
            .levels
            .iter()
            .map(|l| l.iter().map(Node::name).collect())
            .collect();
        assert_eq!(
            names,
            vec![
                vec!["edge", "edge-snow-credentials", "edge-snowctl"],
                vec!["edge", "edge-kubeconfig"],
                vec!["edge-1"],
            ]
        );
        assert!(
            discover(
                vec![crd("Cluster", "cluster.x-k8s.io/v1beta1")],
                vec![],
                "edge",
                &[]
            )
            .is_none()
        );
    }

    #[test]
    fn hierarchy_roots_bring_their_descendants() {
        let mut root_kind = crd("Widget", "example.io/v1");
        root_kind.hierarchy = true;
        let kinds = vec![
            crd("Cluster", "cluster.x-k8s.io/v1beta2"),
            root_kind,
            Kind::core("Secret"),
        ];
        let objects = vec![
            (0, object("Cluster", "edge", "c", &[])),
            (1, object("Widget", "w", "w", &[])),
            (2, object("Secret", "w-data", "wd", &["w"])),
        ];
        let graph = discover(kinds, objects, "edge", &[]).unwrap();
        assert_eq!(graph.len(), 3);
        assert_eq!(graph.levels[1][0].name(), "w-data");
    }
}
