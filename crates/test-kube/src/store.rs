//! The object store: one global resourceVersion counter, metadata bookkeeping, finalizers,
//! garbage collection by ownerReferences, CustomResourceDefinition registration and the event
//! history watches replay from.

use super::apply::{self, Scope};
use super::clock;
use super::patch;
use super::registry::{Registry, ResourceType, split_api_version};
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

/// `(group, plural, namespace, name)`; the namespace is empty for cluster-scoped objects.
/// Versions of one resource share storage, as on a real server (no conversion is done: an
/// object is served under the version asked for with its fields as stored).
pub(crate) type Key = (String, String, String, String);

/// How many events watches can replay from.
const HISTORY: usize = 20_000;

/// One change, as watches see it.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) rv: u64,
    /// ADDED, MODIFIED or DELETED.
    pub(crate) kind: &'static str,
    pub(crate) key: Key,
    pub(crate) object: Value,
    /// The object before a MODIFIED (for selector transitions).
    pub(crate) old: Option<Value>,
}

/// Who writes, and how.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Write<'a> {
    pub(crate) manager: &'a str,
    /// The apiVersion of the request (managedFields entries).
    pub(crate) api_version: &'a str,
    pub(crate) dry_run: bool,
    /// A write to the `/status` subresource.
    pub(crate) status: bool,
    /// An in-process write (test hooks, simulated controllers): no subresource isolation and no
    /// namespace existence check.
    pub(crate) whole: bool,
    /// `force=true` for apply.
    pub(crate) force: bool,
}

/// The patch content types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Apply,
    Merge,
    Json,
}

/// What a DELETE did.
#[derive(Debug, Clone)]
pub(crate) enum Deletion {
    /// Finalizers hold it: it now has a deletionTimestamp.
    Terminating(Value),
    /// Removed.
    Gone(Value),
}

/// The store.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) registry: Registry,
    objects: BTreeMap<Key, Value>,
    rv: u64,
    history: VecDeque<Arc<Event>>,
    /// Watches can resume from any resourceVersion at or above this one.
    floor: u64,
    events: broadcast::Sender<Arc<Event>>,
    /// CustomResourceDefinitions that stay not Established (and unserved), as when the API
    /// server cannot serve them.
    pub(crate) never_established: std::collections::BTreeSet<String>,
    /// CustomResourceDefinitions Established only this long after they are created (unserved
    /// until then), as a real API server establishes a CRD some time after creating it.
    pub(crate) establish_delays: BTreeMap<String, std::time::Duration>,
    /// CustomResourceDefinitions waiting for their time, by name: when they become Established.
    establishing: BTreeMap<String, std::time::Instant>,
}

fn meta(object: &Value, field: &str) -> String {
    object["metadata"][field]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn is_crd(rt: &ResourceType) -> bool {
    rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions"
}

/// `object` without what a no-op write may change (resourceVersion, managedFields times).
fn comparable(object: &Value) -> Value {
    let mut v = object.clone();
    if let Some(m) = v["metadata"].as_object_mut() {
        m.remove("resourceVersion");
        if let Some(Value::Array(entries)) = m.get_mut("managedFields") {
            for e in entries {
                if let Some(e) = e.as_object_mut() {
                    e.remove("time");
                }
            }
        }
    }
    v
}

/// `object` without metadata and status: what bumps generation.
fn spec_of(object: &Value) -> Value {
    let mut v = object.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// What the API server's validation of a Deployment insists on: a selector that selects the
/// pod template, and at least one container.
fn validate_deployment(d: &Value) -> Result<(), ApiError> {
    let name = meta(d, "name");
    let invalid = |field: &str, why: &str| {
        ApiError::invalid(format!(
            "Deployment.apps \"{name}\" is invalid: {field}: {why}"
        ))
    };
    let spec = &d["spec"];
    let Some(selector) = spec["selector"]["matchLabels"].as_object() else {
        if spec["selector"]["matchExpressions"].is_array() {
            return Ok(());
        }
        return Err(invalid("spec.selector", "Required value"));
    };
    let labels = &spec["template"]["metadata"]["labels"];
    if selector.iter().any(|(k, v)| labels.get(k) != Some(v)) {
        return Err(invalid(
            "spec.template.metadata.labels",
            "Invalid value: `selector` does not match template `labels`",
        ));
    }
    if spec["template"]["spec"]["containers"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {
        return Err(invalid("spec.template.spec.containers", "Required value"));
    }
    Ok(())
}

impl Store {
    pub(crate) fn new() -> Store {
        let (events, _) = broadcast::channel(65_536);
        let mut store = Store {
            registry: Registry::builtin(),
            objects: BTreeMap::new(),
            rv: 0,
            history: VecDeque::new(),
            floor: 0,
            events,
            never_established: Default::default(),
            establish_delays: BTreeMap::new(),
            establishing: BTreeMap::new(),
        };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let _ = store.put(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                "kube-apiserver",
            );
        }
        store
    }

    /// The current resourceVersion.
    pub(crate) fn resource_version(&self) -> u64 {
        self.rv
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.events.subscribe()
    }

    /// Events after `rv`, or `None` when they are no longer kept (410 Gone).
    pub(crate) fn since(&self, rv: u64) -> Option<Vec<Arc<Event>>> {
        if rv < self.floor {
            return None;
        }
        Some(self.history.iter().filter(|e| e.rv > rv).cloned().collect())
    }

    /// Forgets the event history: watches from an older resourceVersion get 410 Gone.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.floor = self.rv;
    }

    pub(crate) fn key(rt: &ResourceType, namespace: Option<&str>, name: &str) -> Key {
        let ns = if rt.namespaced {
            namespace.unwrap_or("default")
        } else {
            ""
        };
        (
            rt.group.clone(),
            rt.plural.clone(),
            ns.to_owned(),
            name.to_owned(),
        )
    }

    /// `object` as served under `rt`'s version.
    pub(crate) fn serve(rt: &ResourceType, object: &Value) -> Value {
        let mut v = object.clone();
        v["apiVersion"] = json!(rt.api_version());
        v["kind"] = json!(rt.kind);
        v
    }

    pub(crate) fn get(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.objects
            .get(&Store::key(rt, namespace, name))
            .map(|o| Store::serve(rt, o))
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))
    }

    /// Objects of `rt` (in `namespace`, or all), filtered.
    pub(crate) fn list(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
    ) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|((g, p, ns, _), _)| {
                *g == rt.group
                    && *p == rt.plural
                    && namespace.is_none_or(|n| !rt.namespaced || n == ns)
            })
            .map(|(_, o)| Store::serve(rt, o))
            .filter(|o| labels.matches(o) && fields.matches(o))
            .collect()
    }

    /// Every stored object.
    pub(crate) fn all(&self) -> Vec<Value> {
        self.objects.values().cloned().collect()
    }

    fn emit(&mut self, kind: &'static str, key: Key, object: Value, old: Option<Value>) {
        let event = Arc::new(Event {
            rv: self.rv,
            kind,
            key,
            object,
            old,
        });
        self.history.push_back(event.clone());
        while self.history.len() > HISTORY {
            if let Some(e) = self.history.pop_front() {
                self.floor = e.rv;
            }
        }
        let _ = self.events.send(event);
    }

    fn check_namespace(&self, rt: &ResourceType, key: &Key, w: &Write<'_>) -> Result<(), ApiError> {
        if rt.namespaced
            && !w.whole
            && !self.objects.contains_key(&(
                String::new(),
                "namespaces".into(),
                String::new(),
                key.2.clone(),
            ))
        {
            return Err(ApiError::not_found("", "namespaces", &key.2));
        }
        Ok(())
    }

    /// Checks `apiVersion`/`kind` in a body against the resource addressed.
    fn check_type(rt: &ResourceType, body: &Value, required: bool) -> Result<(), ApiError> {
        let kind = body["kind"].as_str();
        let api_version = body["apiVersion"].as_str();
        if required && (kind.is_none() || api_version.is_none()) {
            return Err(ApiError::bad_request(
                "apiVersion and kind must be set in the applied configuration",
            ));
        }
        if let Some(kind) = kind
            && kind != rt.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                rt.kind
            )));
        }
        if let Some(av) = api_version
            && split_api_version(av).0 != rt.group
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({})",
                rt.api_version()
            )));
        }
        Ok(())
    }

    /// Create (POST).
    pub(crate) fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        body: Value,
        w: Write<'_>,
    ) -> Result<Value, ApiError> {
        Store::check_type(rt, &body, false)?;
        if !body.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        let mut name = meta(&body, "name");
        if name.is_empty() {
            let generate = meta(&body, "generateName");
            if generate.is_empty() {
                return Err(ApiError::invalid(format!(
                    "{} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                    rt.kind
                )));
            }
            name = format!("{generate}{}", clock::suffix(5));
        }
        let body_ns = meta(&body, "namespace");
        if rt.namespaced && !body_ns.is_empty() && namespace.is_some_and(|ns| ns != body_ns) {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let namespace = namespace.or((!body_ns.is_empty()).then_some(body_ns.as_str()));
        let key = Store::key(rt, namespace, &name);
        self.create_at(rt, key, body, None, w)
    }

    fn create_at(
        &mut self,
        rt: &ResourceType,
        key: Key,
        mut object: Value,
        applied_by: Option<(&Value, bool)>,
        w: Write<'_>,
    ) -> Result<Value, ApiError> {
        // RBAC objects only need a valid path segment (`system:controller:x` is a fine name).
        let rbac = rt.group == "rbac.authorization.k8s.io";
        let path_segment =
            !key.3.is_empty() && key.3 != "." && key.3 != ".." && !key.3.contains(['/', '%']);
        if (rbac && !path_segment) || (!rbac && !valid_name(&key.3)) {
            return Err(ApiError::invalid(format!(
                "{} \"{}\" is invalid: metadata.name: Invalid value: \"{}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                rt.kind, key.3, key.3
            )));
        }
        self.check_namespace(rt, &key, &w)?;
        if self.objects.contains_key(&key) {
            return Err(ApiError::already_exists(&rt.group, &rt.plural, &key.3));
        }
        if rt.status
            && !w.whole
            && let Some(m) = object.as_object_mut()
        {
            m.remove("status");
        }
        object["apiVersion"] = json!(rt.api_version());
        object["kind"] = json!(rt.kind);
        if !object["metadata"].is_object() {
            object["metadata"] = json!({});
        }
        let uid = clock::uid();
        if let Some(m) = object["metadata"].as_object_mut() {
            for field in [
                "resourceVersion",
                "uid",
                "generation",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "managedFields",
                "selfLink",
            ] {
                m.remove(field);
            }
            m.insert("name".into(), json!(key.3));
            if rt.namespaced {
                m.insert("namespace".into(), json!(key.2));
            } else {
                m.remove("namespace");
            }
            m.insert("uid".into(), json!(uid));
            m.insert("creationTimestamp".into(), json!(clock::now_rfc3339()));
        }
        if rt.group.is_empty() && rt.plural == "namespaces" {
            object["spec"] = json!({"finalizers": ["kubernetes"]});
            object["status"] = json!({"phase": "Active"});
        }
        let object = match applied_by {
            Some((config, force)) => {
                let scope = if w.status {
                    Scope::Status
                } else {
                    Scope::Main {
                        status_subresource: rt.status && !w.whole,
                    }
                };
                let mut skeleton = object.clone();
                if let Some(m) = skeleton.as_object_mut() {
                    m.retain(|k, _| k == "apiVersion" || k == "kind" || k == "metadata");
                }
                if let Some(m) = skeleton["metadata"].as_object_mut() {
                    m.retain(|k, _| {
                        matches!(
                            k.as_str(),
                            "name" | "namespace" | "uid" | "creationTimestamp"
                        )
                    });
                }
                apply::apply(&skeleton, config, w.manager, w.api_version, force, scope)?
            }
            None => {
                apply::record_update(
                    None,
                    &mut object,
                    w.manager,
                    w.api_version,
                    Scope::Main {
                        status_subresource: rt.status && !w.whole,
                    },
                );
                object
            }
        };
        self.commit(rt, key, None, object, w.dry_run)
    }

    /// Puts identity metadata back and isolates the subresource.
    fn settle(rt: &ResourceType, stored: &Value, new: &mut Value, w: &Write<'_>) {
        if w.status && !w.whole {
            let status = new.get("status").cloned();
            *new = stored.clone();
            match status {
                Some(s) => new["status"] = s,
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
            return;
        }
        if rt.status && !w.whole {
            match stored.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
        }
        if !new["metadata"].is_object() {
            new["metadata"] = json!({});
        }
        for field in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "managedFields",
        ] {
            match stored["metadata"].get(field) {
                Some(v) => new["metadata"][field] = v.clone(),
                None => {
                    if let Some(m) = new["metadata"].as_object_mut() {
                        m.remove(field);
                    }
                }
            }
        }
        new["apiVersion"] = json!(rt.api_version());
        new["kind"] = json!(rt.kind);
    }

    fn precondition(rt: &ResourceType, stored: &Value, body: &Value) -> Result<(), ApiError> {
        let wanted = meta(body, "resourceVersion");
        if !wanted.is_empty() && wanted != meta(stored, "resourceVersion") {
            return Err(ApiError::stale(
                &rt.group,
                &rt.plural,
                &meta(stored, "name"),
            ));
        }
        Ok(())
    }

    fn scope(rt: &ResourceType, w: &Write<'_>) -> Scope {
        if w.status && !w.whole {
            Scope::Status
        } else {
            Scope::Main {
                status_subresource: rt.status && !w.whole,
            }
        }
    }

    /// Replace (PUT).
    pub(crate) fn replace(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        w: Write<'_>,
    ) -> Result<Value, ApiError> {
        Store::check_type(rt, &body, false)?;
        if !body.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        let body_name = meta(&body, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(
                "the name of the object does not match the name on the URL",
            ));
        }
        let key = Store::key(rt, namespace, name);
        let stored = self
            .objects
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        Store::precondition(rt, &stored, &body)?;
        Store::settle(rt, &stored, &mut body, &w);
        apply::record_update(
            Some(&stored),
            &mut body,
            w.manager,
            w.api_version,
            Store::scope(rt, &w),
        );
        self.commit(rt, key, Some(stored), body, w.dry_run)
    }

    /// PATCH: server-side apply, merge (and strategic merge) or JSON patch.
    pub(crate) fn patch(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        body: Value,
        w: Write<'_>,
    ) -> Result<Value, ApiError> {
        let key = Store::key(rt, namespace, name);
        let stored = self.objects.get(&key).cloned();
        if kind == PatchKind::Apply {
            Store::check_type(rt, &body, true)?;
            let body_name = meta(&body, "name");
            if body_name != name {
                return Err(ApiError::bad_request(format!(
                    "metadata.name in the applied configuration ({body_name:?}) must match the name in the URL ({name:?})"
                )));
            }
            let body_ns = meta(&body, "namespace");
            if rt.namespaced && !body_ns.is_empty() && body_ns != key.2 {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            let Some(stored) = stored else {
                if w.status && !w.whole {
                    return Err(ApiError::not_found(&rt.group, &rt.plural, name));
                }
                return self.create_at(rt, key, json!({"metadata": {}}), Some((&body, w.force)), w);
            };
            let mut config = body;
            if let Some(m) = config["metadata"].as_object_mut() {
                m.remove("resourceVersion");
            }
            let mut new = apply::apply(
                &stored,
                &config,
                w.manager,
                w.api_version,
                w.force,
                Store::scope(rt, &w),
            )?;
            let entries = new["metadata"]["managedFields"].clone();
            Store::settle(rt, &stored, &mut new, &w);
            new["metadata"]["managedFields"] = entries;
            if new["metadata"]["managedFields"].is_null()
                && let Some(m) = new["metadata"].as_object_mut()
            {
                m.remove("managedFields");
            }
            return self.commit(rt, key, Some(stored), new, w.dry_run);
        }
        let stored = stored.ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        Store::precondition(rt, &stored, &body)?;
        let mut new = stored.clone();
        match kind {
            PatchKind::Json => patch::json_patch(&mut new, &body)?,
            _ => {
                if !body.is_object() {
                    return Err(ApiError::bad_request("a merge patch must be a JSON object"));
                }
                patch::merge(&mut new, &body);
            }
        }
        Store::settle(rt, &stored, &mut new, &w);
        apply::record_update(
            Some(&stored),
            &mut new,
            w.manager,
            w.api_version,
            Store::scope(rt, &w),
        );
        self.commit(rt, key, Some(stored), new, w.dry_run)
    }

    /// Stores `new` (old is the stored version, if any): generation, resourceVersion, no-op
    /// detection, finalizer completion, events, CRD registration.
    fn commit(
        &mut self,
        rt: &ResourceType,
        key: Key,
        old: Option<Value>,
        mut new: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if is_crd(rt) {
            let types = super::registry::crd_types(&new)?;
            if !new["status"].is_object() {
                new["status"] = json!({});
            }
            let now = clock::now_rfc3339();
            let old_conditions = old.as_ref().map(|o| o["status"]["conditions"].clone());
            new["status"]["acceptedNames"] = new["spec"]["names"].clone();
            let held = self.held(&key.3, old.as_ref());
            new["status"]["conditions"] = if held {
                json!([
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                    {"type": "Established", "status": "False", "reason": "Installing", "message": "the initial names have been accepted but the resource is not served yet", "lastTransitionTime": now},
                ])
            } else {
                old_conditions
                    .filter(|c| c.as_array().is_some_and(|list| list.iter().any(|c| c["type"] == "Established" && c["status"] == "True")))
                    .unwrap_or_else(|| json!([
                        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
                    ]))
            };
            let stored_versions: Vec<String> = new["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .filter_map(|v| v["name"].as_str().map(str::to_owned))
                .collect();
            new["status"]["storedVersions"] = json!(stored_versions);
            if types.is_empty() {
                return Err(ApiError::invalid(
                    "spec.versions: Invalid value: must have at least one served version",
                ));
            }
        }
        if rt.group == "apps" && rt.plural == "deployments" {
            validate_deployment(&new)?;
        }
        super::admission::validate_configuration(rt, &new)?;
        if let Some(m) = new["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let generation = match &old {
            None => 1,
            Some(o) => {
                let g = o["metadata"]["generation"].as_i64().unwrap_or(1);
                if spec_of(o) == spec_of(&new) {
                    g
                } else {
                    g + 1
                }
            }
        };
        new["metadata"]["generation"] = json!(generation);
        if let Some(o) = &old {
            let mut candidate = new.clone();
            candidate["metadata"]["resourceVersion"] = o["metadata"]["resourceVersion"].clone();
            if comparable(&candidate) == comparable(o) {
                return Ok(Store::serve(rt, o));
            }
        }
        if dry_run {
            new["metadata"]["resourceVersion"] = old
                .as_ref()
                .map(|o| o["metadata"]["resourceVersion"].clone())
                .unwrap_or(json!(""));
            return Ok(Store::serve(rt, &new));
        }
        let terminating = !new["metadata"]["deletionTimestamp"].is_null();
        let finalizers_empty = new["metadata"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty);
        if terminating && finalizers_empty {
            self.objects.insert(key.clone(), new);
            let gone = self.remove(&key).unwrap_or_default();
            return Ok(Store::serve(rt, &gone));
        }
        self.rv += 1;
        new["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.objects.insert(key.clone(), new.clone());
        if is_crd(rt) {
            if !self.held(&key.3, old.as_ref()) {
                self.registry.register_crd(&new)?;
            } else if let Some(delay) = self.establish_delays.get(&key.3) {
                let at = std::time::Instant::now() + *delay;
                self.establishing.entry(key.3.clone()).or_insert(at);
            }
        }
        let kind = if old.is_some() { "MODIFIED" } else { "ADDED" };
        self.emit(kind, key, new.clone(), old);
        Ok(Store::serve(rt, &new))
    }

    /// Stores what admission made of a write computed as a dry run (`computed`): the identity,
    /// bookkeeping and subresource isolation of `computed` are kept whatever the webhooks
    /// changed, as the API server's strategies reset them after mutating admission.
    pub(crate) fn commit_admitted(
        &mut self,
        rt: &ResourceType,
        computed: &Value,
        mut admitted: Value,
        w: Write<'_>,
    ) -> Result<Value, ApiError> {
        let namespace = meta(computed, "namespace");
        let namespace = (!namespace.is_empty()).then_some(namespace.as_str());
        let key = Store::key(rt, namespace, &meta(computed, "name"));
        let stored = self.objects.get(&key).cloned();
        Store::settle(rt, computed, &mut admitted, &w);
        self.commit(rt, key, stored, admitted, w.dry_run)
    }

    /// Whether the CustomResourceDefinition `name` (stored as `old`, if it is) stays not
    /// Established for now: never, or not yet (its delay has not passed since its creation).
    fn held(&self, name: &str, old: Option<&Value>) -> bool {
        let established = old.is_some_and(|o| {
            o["status"]["conditions"].as_array().is_some_and(|list| {
                list.iter()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
            })
        });
        self.never_established.contains(name)
            || (!established && self.establish_delays.contains_key(name))
    }

    /// Establishes the CustomResourceDefinitions whose delay has passed (their kinds served
    /// from now on, a MODIFIED event).
    pub(crate) fn establish_due(&mut self) {
        let now = std::time::Instant::now();
        let due: Vec<String> = (self.establishing.iter())
            .filter(|(_, at)| **at <= now)
            .map(|(name, _)| name.clone())
            .collect();
        for name in due {
            self.establishing.remove(&name);
            let key: Key = (
                "apiextensions.k8s.io".into(),
                "customresourcedefinitions".into(),
                String::new(),
                name,
            );
            let Some(old) = self.objects.get(&key).cloned() else {
                continue;
            };
            let mut new = old.clone();
            let now = clock::now_rfc3339();
            new["status"]["conditions"] = json!([
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
            ]);
            if self.registry.register_crd(&new).is_err() {
                continue;
            }
            self.rv += 1;
            new["metadata"]["resourceVersion"] = json!(self.rv.to_string());
            self.objects.insert(key.clone(), new.clone());
            self.emit("MODIFIED", key, new, Some(old));
        }
    }

    /// DELETE: a deletionTimestamp while finalizers remain, removal otherwise.
    pub(crate) fn delete(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        dry_run: bool,
    ) -> Result<Deletion, ApiError> {
        let key = Store::key(rt, namespace, name);
        let d = self
            .delete_key(&key, dry_run)
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        Ok(match d {
            Deletion::Terminating(o) => Deletion::Terminating(Store::serve(rt, &o)),
            Deletion::Gone(o) => Deletion::Gone(Store::serve(rt, &o)),
        })
    }

    pub(crate) fn delete_key(&mut self, key: &Key, dry_run: bool) -> Option<Deletion> {
        let object = self.objects.get(key)?.clone();
        let has_finalizers = object["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if dry_run {
            return Some(if has_finalizers {
                Deletion::Terminating(object)
            } else {
                Deletion::Gone(object)
            });
        }
        if !has_finalizers {
            return self.remove(key).map(Deletion::Gone);
        }
        if !object["metadata"]["deletionTimestamp"].is_null() {
            return Some(Deletion::Terminating(object));
        }
        let mut new = object.clone();
        new["metadata"]["deletionTimestamp"] = json!(clock::now_rfc3339());
        new["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        self.rv += 1;
        new["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.objects.insert(key.clone(), new.clone());
        self.emit("MODIFIED", key.clone(), new.clone(), Some(object));
        Some(Deletion::Terminating(new))
    }

    /// Removes an object for good, then what depends on it: objects it owns (background
    /// propagation), the objects of a CustomResourceDefinition, the contents of a Namespace.
    fn remove(&mut self, key: &Key) -> Option<Value> {
        let mut object = self.objects.remove(key)?;
        self.rv += 1;
        object["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.emit("DELETED", key.clone(), object.clone(), None);
        let uid = meta(&object, "uid");
        let dependents: Vec<Key> = self
            .objects
            .iter()
            .filter(|(_, o)| {
                o["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|refs| {
                        refs.iter().any(|r| r["uid"].as_str() == Some(uid.as_str()))
                    })
            })
            .map(|(k, _)| k.clone())
            .collect();
        for dep in dependents {
            self.delete_key(&dep, false);
        }
        if key.0 == "apiextensions.k8s.io"
            && key.1 == "customresourcedefinitions"
            && let Some((group, plural)) = self.registry.unregister_crd(&key.3)
        {
            let instances: Vec<Key> = self
                .objects
                .keys()
                .filter(|k| k.0 == group && k.1 == plural)
                .cloned()
                .collect();
            for k in instances {
                self.remove(&k);
            }
        }
        if key.0.is_empty() && key.1 == "namespaces" {
            let contents: Vec<Key> = self
                .objects
                .keys()
                .filter(|k| k.2 == key.3)
                .cloned()
                .collect();
            for k in contents {
                self.delete_key(&k, false);
            }
        }
        Some(object)
    }

    /// Creates or replaces `object` (its apiVersion and kind pick the resource) as `manager`,
    /// with no subresource isolation: the in-process write of tests and simulated controllers.
    pub(crate) fn put(&mut self, object: Value, manager: &str) -> Result<Value, ApiError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = object["kind"].as_str().unwrap_or_default();
        let rt = self
            .registry
            .by_kind(&api_version, kind)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    404,
                    "NotFound",
                    format!("no resource registered for {api_version} {kind}"),
                )
            })?;
        let name = meta(&object, "name");
        let ns = meta(&object, "namespace");
        let namespace = (!ns.is_empty()).then_some(ns.as_str());
        let w = Write {
            manager,
            api_version: &api_version,
            dry_run: false,
            status: false,
            whole: true,
            force: false,
        };
        if self
            .objects
            .contains_key(&Store::key(&rt, namespace, &name))
        {
            let mut body = object.clone();
            if let Some(m) = body["metadata"].as_object_mut() {
                m.remove("resourceVersion");
            }
            self.replace(&rt, namespace, &name, body, w)
        } else {
            self.create(&rt, namespace, object, w)
        }
    }

    /// Stores `object` as given (identity, generation, managedFields and status kept; a new
    /// resourceVersion), as a restore of the API server's storage would: no admission, no
    /// defaulting, no field ownership of its own. An object of the same key is refused.
    pub(crate) fn restore(&mut self, mut object: Value) -> Result<Value, ApiError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = object["kind"].as_str().unwrap_or_default();
        let rt = (self.registry.by_kind(&api_version, kind).cloned()).ok_or_else(|| {
            ApiError::new(
                404,
                "NotFound",
                format!("no resource registered for {api_version} {kind}"),
            )
        })?;
        let (name, ns) = (meta(&object, "name"), meta(&object, "namespace"));
        let key = Store::key(&rt, (!ns.is_empty()).then_some(ns.as_str()), &name);
        if meta(&object, "uid").is_empty() {
            return Err(ApiError::invalid(
                "metadata.uid: Required value: a restored object keeps its uid",
            ));
        }
        if self.objects.contains_key(&key) {
            return Err(ApiError::already_exists(&rt.group, &rt.plural, &key.3));
        }
        self.rv += 1;
        object["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.objects.insert(key.clone(), object.clone());
        self.emit("ADDED", key, object.clone(), None);
        Ok(Store::serve(&rt, &object))
    }

    /// The stored object at `key`.
    pub(crate) fn at(&self, key: &Key) -> Option<&Value> {
        self.objects.get(key)
    }

    /// Stored objects of `group`/`plural`, all namespaces, with their stored apiVersion.
    pub(crate) fn raw(&self, group: &str, plural: &str) -> Vec<(Key, Value)> {
        self.select(group, plural, |_| true)
    }

    /// The stored objects of `group`/`plural` that `pick` keeps; only those are copied (the
    /// simulated controllers look up a few objects among thousands on every step).
    pub(crate) fn select(
        &self,
        group: &str,
        plural: &str,
        mut pick: impl FnMut(&Value) -> bool,
    ) -> Vec<(Key, Value)> {
        let from: Key = (group.into(), plural.into(), String::new(), String::new());
        self.objects
            .range(from..)
            .take_while(|(k, _)| k.0 == group && k.1 == plural)
            .filter(|(_, v)| pick(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}
