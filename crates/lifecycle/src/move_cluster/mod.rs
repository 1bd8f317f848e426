//! `move`: a cluster's Cluster API objects from one management cluster to another, or to and from
//! a directory (backup and restore), with `clusterctl move` semantics and these differences:
//! objects of one ownership level are written concurrently; status is carried (through the
//! status subresource); annotations are kept (no replace-all patch before deleting); an object
//! being deleted is a refusal; and an interrupted move, run again, completes.
//!
//! The steps: discover the graph ([`graph`]) in the Cluster's namespace; refuse with every reason
//! at once (Cluster not provisioned, a Machine without a node, an object being deleted, the
//! Cluster paused by someone else, a provider of the source missing on the target or of another
//! version, a kind not served on the target, a different Cluster of that name on the target);
//! pause the Cluster (`spec.paused: true` and the annotation `cluster.x-k8s.io/paused:
//! snowctl-move`, read by both contracts); wait until the source controllers have stopped acting
//! (every resourceVersion of the namespace's graph kinds unchanged over [`MoveOptions::settle`]);
//! create the objects on the target level by level, ownerReferences rewritten to the target's
//! UIDs, status written through the status subresource; remove finalizers and delete the objects
//! on the source, leaves first; unpause the Cluster on the target.
//!
//! Resuming: the pause annotation's value `snowctl-move` marks a pause this module made, so a
//! re-run does not take it for a user's pause; an object already on the target (same kind,
//! namespace and name) is replaced with the source's content and keeps its target UID; a Cluster
//! gone from the source but paused by a move on the target is unpaused.
//!
//! The directory format: one YAML file per object, `<Kind>_<namespace>_<name>.yaml` (clusterctl's
//! names), mode 0600 (Secrets are in it), holding the object as read from the paused source
//! (uid, ownerReferences and status included; resourceVersion and managedFields left out). A
//! restore reads every `*.yaml` file of the directory, rebuilds the levels from the files' UIDs
//! and ownerReferences, creates (or matches) the objects, writes their status and unpauses the
//! Cluster. A backup unpauses the source when the files are written.

mod backup;
pub mod graph;

use backup::write_directory;
pub use backup::{Backup, backup_all_before_upgrade, backup_before_upgrade, restore};
use snow_kube::KubeError;

use crate::{
    Event, FIELD_MANAGER, LifecycleError, Management, PAUSED, init::components, init::inventory,
    inventory::Inventory,
};
use futures_util::{StreamExt, future, stream};
use graph::{Graph, Kind, Node};
use kube::{
    Api,
    api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams, PropagationPolicy},
    core::ApiResource,
};
use serde_json::{Value, json};
use snow_api::names::condition_true;
use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    time::{Duration, Instant},
};

/// The value of the pause annotation a move sets: a pause this module made (and may undo).
pub use crate::standing::MOVE_PAUSE;

/// How a move runs.
#[derive(Debug, Clone)]
pub struct MoveOptions {
    /// The Cluster's namespace.
    pub namespace: String,
    /// Objects written at once within one level; 1 writes one object at a time.
    pub concurrency: usize,
    /// How long every resourceVersion must stay unchanged after pausing before the source
    /// controllers count as stopped.
    pub settle: Duration,
    /// How long to wait for that.
    pub settle_timeout: Duration,
}

impl Default for MoveOptions {
    fn default() -> Self {
        MoveOptions {
            namespace: capi_render::NAMESPACE.into(),
            concurrency: 16,
            settle: Duration::from_secs(3),
            settle_timeout: Duration::from_secs(120),
        }
    }
}

/// Where the objects go.
#[derive(Debug, Clone, Copy)]
pub enum Destination<'a> {
    /// Another management cluster: a move.
    Cluster(&'a Management),
    /// A directory: a backup (the source keeps its objects).
    Directory(&'a Path),
}

/// What a move, backup or restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moved {
    /// Objects written (to the target or to files).
    pub objects: usize,
    /// Ownership levels.
    pub levels: usize,
    /// Objects the target already had (an interrupted run's), matched by kind, namespace, name.
    pub matched: usize,
    /// Objects deleted from the source.
    pub deleted: usize,
}

fn object_name(node: &Node, graph: &Graph) -> String {
    format!("{}/{}", graph.kinds[node.kind].kind, node.name())
}

fn api(mgmt: &Management, kind: &Kind, namespace: &str) -> Api<DynamicObject> {
    let (group, version) = kind
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &kind.api_version));
    let resource = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: kind.api_version.clone(),
        kind: kind.kind.clone(),
        plural: kind.plural.clone(),
    };
    Api::namespaced_with(mgmt.client().clone(), namespace, &resource)
}

fn to_json(object: DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

fn labelled(object: &Value, label: &str) -> bool {
    object["metadata"]["labels"][label].is_string()
}

/// The kinds a move looks at on `mgmt`: the namespaced kinds of the CRDs labelled
/// `clusterctl.cluster.x-k8s.io` (their storage version; not clusterctl's inventory nor
/// cert-manager), Secrets and ConfigMaps.
async fn move_kinds(mgmt: &Management) -> Result<Vec<Kind>, LifecycleError> {
    let crds = list_crds(mgmt, Some(components::CLUSTERCTL_LABEL)).await?;
    let mut kinds: Vec<Kind> = crds
        .iter()
        .filter(|crd| !labelled(crd, components::CORE_LABEL))
        .filter_map(|crd| kind_of(crd, None))
        .filter(|k| k.namespaced)
        .collect();
    kinds.sort_by(|a, b| (&a.api_version, &a.kind).cmp(&(&b.api_version, &b.kind)));
    kinds.push(Kind::core("Secret"));
    kinds.push(Kind::core("ConfigMap"));
    Ok(kinds)
}

/// The fields of a CustomResourceDefinition a move reads. Provider CRDs carry megabytes of
/// OpenAPI schema a move never looks at; reading lists into these types skips them instead of
/// building a JSON tree of every schema (most of the discovery step's CPU otherwise).
#[derive(serde::Deserialize)]
struct CrdList {
    #[serde(default)]
    items: Vec<Crd>,
}

#[derive(serde::Deserialize)]
struct Crd {
    #[serde(default)]
    metadata: CrdMeta,
    spec: CrdSpec,
}

#[derive(serde::Deserialize, Default)]
struct CrdMeta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(serde::Deserialize)]
struct CrdSpec {
    group: String,
    names: CrdNames,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    versions: Vec<CrdVersion>,
}

#[derive(serde::Deserialize)]
struct CrdNames {
    kind: String,
    plural: String,
}

#[derive(serde::Deserialize)]
struct CrdVersion {
    name: String,
    #[serde(default)]
    served: bool,
    #[serde(default)]
    storage: bool,
    #[serde(default)]
    subresources: Option<CrdSubresources>,
}

#[derive(serde::Deserialize)]
struct CrdSubresources {
    #[serde(default)]
    status: Option<serde::de::IgnoredAny>,
}

impl Crd {
    /// The CRD as JSON with only the fields read (what [`kind_of`] and the filters look at).
    fn to_json(&self) -> Value {
        let versions: Vec<Value> = self
            .spec
            .versions
            .iter()
            .map(|v| {
                let status = v.subresources.as_ref().is_some_and(|s| s.status.is_some());
                let subresources = if status {
                    json!({"status": {}})
                } else {
                    json!({})
                };
                json!({"name": v.name, "served": v.served, "storage": v.storage, "subresources": subresources})
            })
            .collect();
        json!({
            "metadata": {"name": self.metadata.name, "labels": self.metadata.labels},
            "spec": {
                "group": self.spec.group,
                "names": {"kind": self.spec.names.kind, "plural": self.spec.names.plural},
                "scope": self.spec.scope,
                "versions": versions,
            },
        })
    }
}

/// The CustomResourceDefinitions of `mgmt` (with the label selector), as [`Crd::to_json`].
async fn list_crds(
    mgmt: &Management,
    selector: Option<&str>,
) -> Result<Vec<Value>, LifecycleError> {
    let mut params = kube::api::ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    let request =
        kube::core::Request::new("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            .list(&params)
            .map_err(|e| KubeError::Api {
                action: "list",
                object: "customresourcedefinitions".into(),
                code: 0,
                message: e.to_string(),
            })?;
    match mgmt.client().request::<CrdList>(request).await {
        Ok(list) => Ok(list.items.iter().map(Crd::to_json).collect()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
        Err(err) => Err(mgmt
            .error("list", "customresourcedefinitions".into(), err)
            .into()),
    }
}

/// The kind a CRD serves at `version` (its storage version when `None`).
fn kind_of(crd: &Value, version: Option<&str>) -> Option<Kind> {
    let spec = &crd["spec"];
    let group = spec["group"].as_str()?;
    let served = spec["versions"]
        .as_array()?
        .iter()
        .find(|v| match version {
            Some(name) => v["name"] == name && v["served"] == json!(true),
            None => v["storage"] == json!(true),
        })?;
    Some(Kind {
        api_version: format!("{group}/{}", served["name"].as_str()?),
        kind: spec["names"]["kind"].as_str()?.to_owned(),
        plural: spec["names"]["plural"].as_str()?.to_owned(),
        namespaced: spec["scope"] == "Namespaced",
        status: served["subresources"]["status"].is_object(),
        force: labelled(crd, graph::MOVE_LABEL),
        hierarchy: labelled(crd, graph::MOVE_HIERARCHY_LABEL),
    })
}

/// The target's view of `wanted` kinds (`(apiVersion, kind)`): served there, with its plural and
/// status subresource; the missing ones as reasons.
async fn target_kinds(
    to: &Management,
    wanted: &BTreeSet<(String, String)>,
) -> Result<(TargetKinds, Vec<String>), LifecycleError> {
    let crds = list_crds(to, None).await?;
    let mut found = BTreeMap::new();
    let mut missing = Vec::new();
    for (api_version, kind) in wanted {
        if api_version == "v1" {
            found.insert((api_version.clone(), kind.clone()), Kind::core(kind));
            continue;
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let served = crds
            .iter()
            .filter(|crd| crd["spec"]["group"] == group && crd["spec"]["names"]["kind"] == **kind)
            .find_map(|crd| kind_of(crd, Some(version)));
        match served {
            Some(k) => {
                found.insert((api_version.clone(), kind.clone()), k);
            }
            None => missing.push(format!(
                "the target does not serve {kind} ({api_version}): install its provider there"
            )),
        }
    }
    Ok((found, missing))
}

/// Every object of `kinds` in `namespace`, as `(kind index, object)`: one list per kind,
/// `concurrency` at a time (a move lists some thirty kinds three times; one after another they
/// would cost as many round trips as a level of objects).
async fn list_all(
    mgmt: &Management,
    kinds: &[Kind],
    namespace: &str,
    concurrency: usize,
) -> Result<Vec<(usize, Value)>, LifecycleError> {
    let lists: Vec<Result<Vec<(usize, Value)>, LifecycleError>> =
        stream::iter(kinds.iter().enumerate().map(|(i, kind)| async move {
            match api(mgmt, kind, namespace).list(&Default::default()).await {
                Ok(list) => Ok(list.items.into_iter().map(|o| (i, to_json(o))).collect()),
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
                Err(err) => Err(mgmt.error("list", kind.plural.clone(), err).into()),
            }
        }))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut out = Vec::new();
    for list in lists {
        out.extend(list?);
    }
    Ok(out)
}

async fn discover(
    mgmt: &Management,
    name: &str,
    options: &MoveOptions,
) -> Result<Option<Graph>, LifecycleError> {
    let kinds = move_kinds(mgmt).await?;
    let objects = list_all(mgmt, &kinds, &options.namespace, options.concurrency).await?;
    Ok(graph::discover(
        kinds,
        objects,
        name,
        &[("ConfigMap", Inventory::name_for(name))],
    ))
}

fn the_cluster<'g>(graph: &'g Graph, name: &str) -> Option<&'g Node> {
    graph
        .nodes()
        .find(|n| graph.kinds[n.kind].kind == "Cluster" && n.name() == name)
}

fn paused_by_move(object: &Value) -> bool {
    object["metadata"]["annotations"][PAUSED] == MOVE_PAUSE
}

/// Why the source graph cannot move (empty when it can).
fn source_reasons(graph: &Graph, name: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    if let Some(cluster) = the_cluster(graph, name) {
        let c = &cluster.object;
        let v1beta1 = graph.kinds[cluster.kind].api_version.ends_with("/v1beta1");
        let infrastructure = if v1beta1 {
            c["status"]["infrastructureReady"] == json!(true)
        } else {
            c["status"]["initialization"]["infrastructureProvisioned"] == json!(true)
        };
        if !infrastructure {
            reasons.push(format!(
                "Cluster {name}: the infrastructure is not provisioned yet"
            ));
        }
        let control_plane = condition_true(c, "ControlPlaneInitialized")
            || (v1beta1 && c["status"]["controlPlaneReady"] == json!(true));
        if !control_plane {
            reasons.push(format!(
                "Cluster {name}: the control plane is not initialized yet"
            ));
        }
        if crate::standing::paused_by_someone(c).is_some() {
            reasons.push(format!(
                "Cluster {name} is paused (spec.paused or the {PAUSED} annotation): unpause it first, a move must not take over someone else's pause"
            ));
        }
    }
    for node in graph.nodes() {
        let kind = &graph.kinds[node.kind];
        if kind.kind == "Machine"
            && node.object["status"]["nodeRef"]["name"]
                .as_str()
                .is_none_or(str::is_empty)
        {
            reasons.push(format!("Machine {} has no node yet", node.name()));
        }
        if !node.object["metadata"]["deletionTimestamp"].is_null() {
            reasons.push(format!(
                "{} is being deleted: wait until it is gone",
                graph.describe(node)
            ));
        }
    }
    reasons
}

/// Every provider of the source's clusterctl inventory must be on the target, same version.
async fn provider_reasons(
    from: &Management,
    to: &Management,
) -> Result<Vec<String>, LifecycleError> {
    let (source, target) =
        future::try_join(inventory::installed(from), inventory::installed(to)).await?;
    let mut reasons = Vec::new();
    for p in &source {
        match target
            .iter()
            .find(|t| t.name == p.name && t.kind == p.kind)
        {
            None => reasons.push(format!(
                "provider {} ({}) {} is not installed on the target",
                p.name, p.kind, p.version
            )),
            Some(t) if t.version != p.version => reasons.push(format!(
                "provider {} ({}) is {} on the target but {} on the source: install the same version",
                p.name, p.kind, t.version, p.version
            )),
            Some(_) => {}
        }
    }
    reasons.sort();
    Ok(reasons)
}

fn kind_keys(graph: &Graph) -> BTreeSet<(String, String)> {
    graph
        .nodes()
        .map(|n| {
            let k = &graph.kinds[n.kind];
            (k.api_version.clone(), k.kind.clone())
        })
        .collect()
}

/// The kinds of the target by `(apiVersion, kind)`.
type TargetKinds = BTreeMap<(String, String), Kind>;

/// Why the target cannot take the graph (providers, kinds, a different Cluster of the name),
/// and the target's kinds.
async fn target_reasons(
    from: &Management,
    to: &Management,
    graph: &Graph,
    name: &str,
    namespace: &str,
) -> Result<(Vec<String>, TargetKinds), LifecycleError> {
    let wanted = kind_keys(graph);
    let (mut reasons, (found, missing)) =
        future::try_join(provider_reasons(from, to), target_kinds(to, &wanted)).await?;
    reasons.extend(missing);
    if let Some(cluster) = the_cluster(graph, name) {
        let kind = &graph.kinds[cluster.kind];
        if let Some(k) = found.get(&(kind.api_version.clone(), kind.kind.clone()))
            && let Some(there) = get(to, k, namespace, name).await?
            && !paused_by_move(&there)
        {
            reasons.push(format!(
                "the target already has a Cluster {namespace}/{name} that no move of this one made: delete it there or move another cluster"
            ));
        }
    }
    Ok((reasons, found))
}

async fn get(
    mgmt: &Management,
    kind: &Kind,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, LifecycleError> {
    match api(mgmt, kind, namespace).get_opt(name).await {
        Ok(found) => Ok(found.map(to_json)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(err) => Err(mgmt
            .error("get", format!("{}/{name}", kind.kind), err)
            .into()),
    }
}

async fn patch(
    mgmt: &Management,
    kind: &Kind,
    namespace: &str,
    name: &str,
    body: &Value,
) -> Result<bool, LifecycleError> {
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    match api(mgmt, kind, namespace)
        .patch(name, &params, &Patch::Merge(body))
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(err) => Err(mgmt
            .error("patch", format!("{}/{name}", kind.kind), err)
            .into()),
    }
}

fn pause_patch() -> Value {
    json!({"metadata": {"annotations": {PAUSED: MOVE_PAUSE}}, "spec": {"paused": true}})
}

/// Undoes [`pause_patch`] on `paused` (the Cluster as paused): annotations that held only the
/// pause go away entirely, as they were.
fn unpause_patch(paused: &Value) -> Value {
    let others = paused["metadata"]["annotations"]
        .as_object()
        .is_some_and(|a| a.keys().any(|k| k != PAUSED));
    let annotations = if others {
        json!({PAUSED: null})
    } else {
        Value::Null
    };
    json!({"metadata": {"annotations": annotations}, "spec": {"paused": null}})
}

/// `(uid, resourceVersion)` of everything of `kinds` in the namespace.
fn fingerprint(objects: &[(usize, Value)]) -> BTreeSet<(String, String)> {
    objects
        .iter()
        .map(|(_, o)| {
            let meta = |k: &str| o["metadata"][k].as_str().unwrap_or_default().to_owned();
            (meta("uid"), meta("resourceVersion"))
        })
        .collect()
}

/// Waits until no object of the graph's kinds in the namespace changes for `settle`; returns
/// the graph as it is then.
async fn settle(
    from: &Management,
    name: &str,
    kinds: Vec<Kind>,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Graph, LifecycleError> {
    let start = Instant::now();
    let mut last = list_all(from, &kinds, &options.namespace, options.concurrency).await?;
    loop {
        tokio::time::sleep(options.settle).await;
        let now = list_all(from, &kinds, &options.namespace, options.concurrency).await?;
        if fingerprint(&now) == fingerprint(&last) {
            on_event(Event::Note(format!(
                "The source controllers have stopped acting on cluster {name}"
            )));
            return graph::discover(
                kinds,
                now,
                name,
                &[("ConfigMap", Inventory::name_for(name))],
            )
            .ok_or_else(|| LifecycleError::NotFound {
                what: format!("cluster {name}"),
            });
        }
        if start.elapsed() > options.settle_timeout {
            return Err(KubeError::Timeout {
                object: format!("Cluster {name}"),
                condition: "the source controllers stop acting after the pause".into(),
                detail: "objects of the cluster's namespace keep changing; the cluster stays paused, run the move again".into(),
                after: format!("{:?}", options.settle_timeout),
            }.into());
        }
        last = now;
    }
}

/// Moves cluster `name` (the Cluster API Cluster in [`MoveOptions::namespace`]) from `from` to
/// `to`: to another management cluster, or to a directory (a backup).
pub async fn move_cluster(
    from: &Management,
    name: &str,
    to: Destination<'_>,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Moved, LifecycleError> {
    let ns = options.namespace.as_str();
    crate::import::refuse_imported(from, name, "move cluster").await?;
    on_event(Event::Step(format!(
        "Discovering the objects of cluster {name}"
    )));
    let Some(graph) = discover(from, name, options).await? else {
        refuse_unlabelled(from, name, &options.namespace).await?;
        return finish_elsewhere(name, to, options, on_event).await;
    };
    let mut reasons = source_reasons(&graph, name);
    let mut found = TargetKinds::new();
    if let Destination::Cluster(target) = to {
        let (more, kinds) = target_reasons(from, target, &graph, name, ns).await?;
        reasons.extend(more);
        found = kinds;
    }
    if !reasons.is_empty() {
        return Err(LifecycleError::MoveRefused {
            cluster: name.into(),
            reasons,
        });
    }
    let Some(cluster) = the_cluster(&graph, name) else {
        return Err(LifecycleError::NotFound {
            what: format!("cluster {name}"),
        });
    };
    let cluster_kind = graph.kinds[cluster.kind].clone();
    if paused_by_move(&cluster.object) {
        on_event(Event::Note(format!(
            "Cluster {name} is paused by an earlier move: resuming it"
        )));
    } else {
        on_event(Event::Step(format!("Pausing cluster {name}")));
        patch(from, &cluster_kind, ns, name, &pause_patch()).await?;
    }
    let graph = settle(from, name, graph.kinds.clone(), options, on_event).await?;
    let unpause = the_cluster(&graph, name)
        .map(|c| unpause_patch(&c.object))
        .unwrap_or_else(|| unpause_patch(&Value::Null));
    match to {
        Destination::Directory(dir) => {
            on_event(Event::Step(format!(
                "Writing {} objects of cluster {name} to {}",
                graph.len(),
                dir.display()
            )));
            let written = write_directory(&graph, dir, on_event)?;
            on_event(Event::Step(format!("Unpausing cluster {name}")));
            patch(from, &cluster_kind, ns, name, &unpause).await?;
            Ok(Moved {
                objects: written,
                levels: graph.levels.len(),
                ..Moved::default()
            })
        }
        Destination::Cluster(target) => {
            // Kinds that appeared in the namespace while pausing (none, usually).
            let missing: Vec<String> = kind_keys(&graph)
                .into_iter()
                .filter(|key| !found.contains_key(key))
                .map(|(api_version, kind)| format!("the target does not serve {kind} ({api_version}): install its provider there"))
                .collect();
            if !missing.is_empty() {
                return Err(LifecycleError::MoveRefused {
                    cluster: name.into(),
                    reasons: missing,
                });
            }
            on_event(Event::Step(format!(
                "Creating {} objects of cluster {name} on the target ({} levels)",
                graph.len(),
                graph.levels.len()
            )));
            let mut moved = copy(target, &graph, &found, options, on_event).await?;
            on_event(Event::Step(format!(
                "Deleting the objects of cluster {name} from the source"
            )));
            moved.deleted = delete_source(from, &graph, options, on_event).await?;
            on_event(Event::Step(format!(
                "Unpausing cluster {name} on the target"
            )));
            if let Some(k) =
                found.get(&(cluster_kind.api_version.clone(), cluster_kind.kind.clone()))
            {
                patch(target, k, ns, name, &unpause).await?;
            }
            Ok(moved)
        }
    }
}

/// Discovery found no Cluster `name`: when the Cluster CRD lacks clusterctl's label (Cluster API
/// installed by something other than clusterctl, `snowctl init` or EKS Anywhere) and the Cluster
/// is there all the same, [`LifecycleError::UnlabelledCrds`] naming every Cluster API CRD
/// (groups `cluster.x-k8s.io` and `*.cluster.x-k8s.io` but clusterctl's own) without it, rather
/// than a cluster that is not there. The CRDs are read through the narrow [`CrdList`].
async fn refuse_unlabelled(
    mgmt: &Management,
    name: &str,
    namespace: &str,
) -> Result<(), LifecycleError> {
    let crds = list_crds(mgmt, None).await?;
    let Some(crds) = unlabelled_capi_crds(&crds) else {
        return Ok(());
    };
    for contract in [
        capi_render::Contract::V1Beta2,
        capi_render::Contract::V1Beta1,
    ] {
        let core = contract.api_version("cluster.x-k8s.io");
        if mgmt
            .get(&core, "Cluster", Some(namespace), name)
            .await?
            .is_some()
        {
            return Err(LifecycleError::UnlabelledCrds {
                cluster: name.into(),
                crds,
            });
        }
    }
    Ok(())
}

/// The names of the Cluster API CRDs (groups `cluster.x-k8s.io` and `*.cluster.x-k8s.io`, not
/// clusterctl's own `clusterctl.cluster.x-k8s.io`) without clusterctl's label, sorted, when the
/// Cluster CRD is among them (a move then finds no Cluster); `None` otherwise.
fn unlabelled_capi_crds(crds: &[Value]) -> Option<Vec<String>> {
    let capi = |crd: &&Value| {
        crd["spec"]["group"].as_str().is_some_and(|g| {
            (g == "cluster.x-k8s.io" || g.ends_with(".cluster.x-k8s.io"))
                && g != "clusterctl.cluster.x-k8s.io"
        })
    };
    let unlabelled: Vec<&Value> = crds
        .iter()
        .filter(capi)
        .filter(|crd| !labelled(crd, components::CLUSTERCTL_LABEL))
        .collect();
    let cluster = unlabelled.iter().any(|crd| {
        crd["spec"]["group"] == "cluster.x-k8s.io" && crd["spec"]["names"]["kind"] == "Cluster"
    });
    let mut names: Vec<String> = unlabelled
        .iter()
        .filter_map(|crd| crd["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    cluster.then_some(names)
}

/// The source has no Cluster `name`: a move that deleted it already may still have to unpause
/// it on the target.
async fn finish_elsewhere(
    name: &str,
    to: Destination<'_>,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Moved, LifecycleError> {
    let not_found = || LifecycleError::NotFound {
        what: format!("cluster {name}"),
    };
    let Destination::Cluster(target) = to else {
        return Err(not_found());
    };
    let clusters = target_clusters(target, &options.namespace, name).await?;
    let Some((kind, cluster)) = clusters else {
        return Err(not_found());
    };
    if paused_by_move(&cluster) {
        on_event(Event::Step(format!(
            "Unpausing cluster {name} on the target"
        )));
        patch(
            target,
            &kind,
            &options.namespace,
            name,
            &unpause_patch(&cluster),
        )
        .await?;
    } else {
        on_event(Event::Note(format!(
            "Cluster {name} is on the target already and not on the source: nothing to move"
        )));
    }
    Ok(Moved::default())
}

/// The Cluster `name` on `mgmt`, under whichever Cluster API version is the CRD's storage one.
async fn target_clusters(
    mgmt: &Management,
    namespace: &str,
    name: &str,
) -> Result<Option<(Kind, Value)>, LifecycleError> {
    for kind in move_kinds(mgmt).await? {
        if kind.kind == "Cluster"
            && kind.group() == "cluster.x-k8s.io"
            && let Some(found) = get(mgmt, &kind, namespace, name).await?
        {
            return Ok(Some((kind, found)));
        }
    }
    Ok(None)
}

/// The object to write on the target: server-set metadata left out, owners' UIDs replaced by
/// the target's (owners that do not move are dropped: their UIDs mean nothing there), status
/// separate when the kind has a status subresource.
fn for_target(node: &Node, kind: &Kind, uids: &BTreeMap<String, String>) -> (Value, Option<Value>) {
    let mut body = node.object.clone();
    let status = if kind.status {
        body.as_object_mut().and_then(|o| o.remove("status"))
    } else {
        None
    };
    if let Some(meta) = body["metadata"].as_object_mut() {
        for field in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
            "selfLink",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            meta.remove(field);
        }
        let refs: Vec<Value> = meta
            .get("ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| {
                let new = uids.get(r["uid"].as_str()?)?;
                let mut r = r.clone();
                r["uid"] = json!(new);
                Some(r)
            })
            .collect();
        if refs.is_empty() {
            meta.remove("ownerReferences");
        } else {
            meta.insert("ownerReferences".into(), Value::Array(refs));
        }
    }
    (body, status.filter(|s| !s.is_null()))
}

/// An object's UID on the target, and whether it was there already.
type Placed = (String, bool);

/// Creates (or matches) one object on the target; returns its target UID and whether it was
/// there already.
async fn create_one(
    to: &Management,
    kind: &Kind,
    node: &Node,
    uids: &BTreeMap<String, String>,
) -> Result<Placed, LifecycleError> {
    let (mut body, status) = for_target(node, kind, uids);
    let name = node.name();
    let what = || format!("{}/{name}", kind.kind);
    let api = api(to, kind, node.namespace());
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    let dynamic = |body: Value, action: &'static str| {
        serde_json::from_value::<DynamicObject>(body).map_err(|e| KubeError::Api {
            action,
            object: what(),
            code: 0,
            message: e.to_string(),
        })
    };
    // Create first (one request for the usual case); an object already there (an interrupted
    // run's) is matched by kind, namespace and name and replaced, keeping its target UID.
    let (stored, matched) = match api.create(&params, &dynamic(body.clone(), "create")?).await {
        Ok(stored) => (stored, false),
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let there = get(to, kind, node.namespace(), name)
                .await?
                .ok_or_else(|| KubeError::Api {
                    action: "create",
                    object: what(),
                    code: 409,
                    message: status.message.clone(),
                })?;
            body["metadata"]["uid"] = there["metadata"]["uid"].clone();
            body["metadata"]["resourceVersion"] = there["metadata"]["resourceVersion"].clone();
            let stored = api
                .replace(name, &params, &dynamic(body, "replace")?)
                .await
                .map_err(|e| to.error("replace", what(), e))?;
            (stored, true)
        }
        Err(err) => return Err(to.error("create", what(), err).into()),
    };
    if let Some(status) = status {
        let patch_params = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PatchParams::default()
        };
        api.patch_status(
            name,
            &patch_params,
            &Patch::Merge(json!({"status": status})),
        )
        .await
        .map_err(|e| to.error("patch status of", what(), e))?;
    }
    let uid = stored.metadata.uid.unwrap_or_default();
    Ok((uid, matched))
}

async fn ensure_namespaces(to: &Management, graph: &Graph) -> Result<(), LifecycleError> {
    let namespaces: BTreeSet<&str> = graph.nodes().map(Node::namespace).collect();
    for ns in namespaces {
        if to.get("v1", "Namespace", None, ns).await?.is_none() {
            to.apply(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
                .await?;
        }
    }
    Ok(())
}

/// Creates the graph on `to`, level by level, `options.concurrency` objects at a time.
async fn copy(
    to: &Management,
    graph: &Graph,
    kinds: &TargetKinds,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Moved, LifecycleError> {
    ensure_namespaces(to, graph).await?;
    let mut uids: BTreeMap<String, String> = BTreeMap::new();
    let mut moved = Moved {
        levels: graph.levels.len(),
        ..Moved::default()
    };
    for level in &graph.levels {
        let uids_now = &uids;
        let results: Vec<(&Node, Result<Placed, LifecycleError>)> =
            stream::iter(level.iter().map(|node| async move {
                let source = &graph.kinds[node.kind];
                let result = match kinds.get(&(source.api_version.clone(), source.kind.clone())) {
                    Some(kind) => create_one(to, kind, node, uids_now).await,
                    None => Err(LifecycleError::NotFound {
                        what: format!("{} ({}) on the target", source.kind, source.api_version),
                    }),
                };
                (node, result)
            }))
            .buffer_unordered(options.concurrency.max(1))
            .collect()
            .await;
        let mut first_error = None;
        for (node, result) in results {
            match result {
                Ok((uid, matched)) => {
                    uids.insert(node.uid.clone(), uid);
                    moved.objects += 1;
                    moved.matched += usize::from(matched);
                    on_event(Event::Applied {
                        object: object_name(node, graph),
                    });
                }
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        if let Some(err) = first_error {
            return Err(err);
        }
    }
    if moved.matched > 0 {
        on_event(Event::Note(format!(
            "{} object(s) were on the target already (an earlier move's) and were matched",
            moved.matched
        )));
    }
    Ok(moved)
}

/// Removes finalizers and deletes the graph on the source, the last level first.
async fn delete_source(
    from: &Management,
    graph: &Graph,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<usize, LifecycleError> {
    let mut deleted = 0;
    for level in graph.levels.iter().rev() {
        let results: Vec<(&Node, Result<bool, LifecycleError>)> =
            stream::iter(level.iter().map(|node| async move {
                (node, delete_one(from, &graph.kinds[node.kind], node).await)
            }))
            .buffer_unordered(options.concurrency.max(1))
            .collect()
            .await;
        let mut first_error = None;
        for (node, result) in results {
            match result {
                Ok(gone) => {
                    deleted += usize::from(gone);
                    on_event(Event::Deleted {
                        object: object_name(node, graph),
                    });
                }
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        if let Some(err) = first_error {
            return Err(err);
        }
    }
    Ok(deleted)
}

async fn delete_one(from: &Management, kind: &Kind, node: &Node) -> Result<bool, LifecycleError> {
    let name = node.name();
    let ns = node.namespace();
    let has_finalizers = node.object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if has_finalizers
        && !patch(
            from,
            kind,
            ns,
            name,
            &json!({"metadata": {"finalizers": null}}),
        )
        .await?
    {
        return Ok(false);
    }
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    match api(from, kind, ns).delete(name, &params).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(err) => Err(from
            .error("delete", format!("{}/{name}", kind.kind), err)
            .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CRD as a server returns it: the narrow reading keeps every field a move uses, so the
    /// kind it serves (storage or a named version, status subresource, labels) is the same as
    /// from the whole object, schema and all.
    #[test]
    fn the_narrow_crd_reading_gives_the_same_kinds_as_the_whole_object() {
        let full = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "machines.cluster.x-k8s.io", "uid": "u1",
                "labels": {"clusterctl.cluster.x-k8s.io": "", graph::MOVE_HIERARCHY_LABEL: ""},
                "annotations": {"a": "b"}},
            "spec": {
                "group": "cluster.x-k8s.io",
                "names": {"kind": "Machine", "plural": "machines", "singular": "machine", "listKind": "MachineList"},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}},
                    {"name": "v1beta2", "served": true, "storage": true, "subresources": {"status": {}},
                     "additionalPrinterColumns": [{"name": "Phase", "type": "string", "jsonPath": ".status.phase"}],
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                ],
            },
            "status": {"storedVersions": ["v1beta2"]},
        });
        let list = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinitionList", "metadata": {}, "items": [full.clone()]});
        let narrow: CrdList = serde_json::from_value(list).unwrap();
        let narrow = narrow.items[0].to_json();
        for version in [None, Some("v1beta1"), Some("v1beta2"), Some("v1")] {
            assert_eq!(
                kind_of(&narrow, version),
                kind_of(&full, version),
                "{version:?}"
            );
        }
        let storage = kind_of(&narrow, None).unwrap();
        assert_eq!(storage.api_version, "cluster.x-k8s.io/v1beta2");
        assert!(storage.status && storage.hierarchy && !storage.force && storage.namespaced);
        assert!(!kind_of(&narrow, Some("v1beta1")).unwrap().status);
        assert!(labelled(&narrow, components::CLUSTERCTL_LABEL));
    }

    fn crd(name: &str, group: &str, kind: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "spec": {"group": group, "names": {"kind": kind, "plural": name.split('.').next().unwrap()}, "scope": "Namespaced", "versions": []}})
    }

    /// Cluster API installed without clusterctl: its CRDs lack the label a move finds kinds by,
    /// so the names to label are every Cluster API CRD without it; clusterctl's own inventory
    /// CRD and other groups are not among them, and a labelled Cluster CRD is no such case.
    #[test]
    fn the_unlabelled_cluster_api_crds_are_named_when_the_cluster_crd_is_one() {
        let label = json!({components::CLUSTERCTL_LABEL: ""});
        let crds = [
            crd(
                "machines.cluster.x-k8s.io",
                "cluster.x-k8s.io",
                "Machine",
                json!({}),
            ),
            crd(
                "clusters.cluster.x-k8s.io",
                "cluster.x-k8s.io",
                "Cluster",
                json!({}),
            ),
            crd(
                "awssnowclusters.infrastructure.cluster.x-k8s.io",
                "infrastructure.cluster.x-k8s.io",
                "AWSSnowCluster",
                json!({components::PROVIDER_LABEL: "infrastructure-snow"}),
            ),
            crd(
                "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
                "controlplane.cluster.x-k8s.io",
                "KubeadmControlPlane",
                label.clone(),
            ),
            crd(
                "providers.clusterctl.cluster.x-k8s.io",
                "clusterctl.cluster.x-k8s.io",
                "Provider",
                json!({}),
            ),
            crd(
                "certificates.cert-manager.io",
                "cert-manager.io",
                "Certificate",
                json!({}),
            ),
            crd(
                "clusters.anywhere.eks.amazonaws.com",
                "anywhere.eks.amazonaws.com",
                "Cluster",
                json!({}),
            ),
        ];
        assert_eq!(
            unlabelled_capi_crds(&crds),
            Some(vec![
                "awssnowclusters.infrastructure.cluster.x-k8s.io".to_owned(),
                "clusters.cluster.x-k8s.io".to_owned(),
                "machines.cluster.x-k8s.io".to_owned(),
            ])
        );
        let mut labelled_cluster = crds.to_vec();
        labelled_cluster[1] = crd(
            "clusters.cluster.x-k8s.io",
            "cluster.x-k8s.io",
            "Cluster",
            label,
        );
        assert_eq!(unlabelled_capi_crds(&labelled_cluster), None);
        let err = LifecycleError::UnlabelledCrds {
            cluster: "edge".into(),
            crds: unlabelled_capi_crds(&crds).unwrap(),
        }
        .to_string();
        assert!(
            err.ends_with("kubectl label crd awssnowclusters.infrastructure.cluster.x-k8s.io clusters.cluster.x-k8s.io machines.cluster.x-k8s.io clusterctl.cluster.x-k8s.io="),
            "{err}"
        );
        assert!(!err.contains("is not on the management cluster"), "{err}");
    }
}
