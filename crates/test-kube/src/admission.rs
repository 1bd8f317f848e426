//! Admission webhooks, called as the API server's `MutatingAdmissionWebhook` and
//! `ValidatingAdmissionWebhook` plugins call them (k8s.io/apiserver
//! `pkg/admission/plugin/webhook`): for a create, update or delete over HTTP, every webhook of
//! every `admissionregistration.k8s.io/v1` configuration whose rules (operations, apiGroups,
//! apiVersions with matchPolicy, resources and subresources, scope), namespaceSelector and
//! objectSelector match gets an `admission.k8s.io/v1` AdmissionReview over HTTPS. Mutating
//! webhooks run first, one after another in configuration-name order, their JSON patches applied
//! in turn; then every validating webhook, at once, sees the result. A call that fails is
//! ignored under `failurePolicy: Ignore` and refuses the request otherwise (500, `Internal error
//! occurred: failed calling webhook "NAME": ...`); a denial refuses it with the webhook's
//! status, its code below 400 raised to 400 (`admission webhook "NAME" denied the request:
//! MESSAGE`). Webhook configurations themselves are never sent to webhooks.
//!
//! A webhook whose Service no test mapped ([`crate::KubeStandIn::map_service`]) belongs to a
//! simulated provider (cert-manager, Cluster API, CAPAS run no webhook servers here): it has
//! endpoints once a Deployment of the Service's namespace whose pods the Service selects is
//! Available, and then admits every request unchanged; before, it has none, and the call fails
//! as on a cluster (`no endpoints available for service "NAME"`).
//!
//! Not modelled: `reinvocationPolicy` (a mutating webhook is called once), conversion for
//! `matchPolicy: Equivalent` (the webhook is told the version it named, the object is sent as
//! stored), match conditions, the AdmissionReview v1beta1 (a webhook must list `v1`), warnings
//! and audit annotations (dropped), and admission policies (CEL).

use super::Shared;
use super::auth::User;
use super::clock;
use super::patch;
use super::registry::ResourceType;
use super::selector::LabelSelector;
use super::status::ApiError;
use super::store::Store;
use super::webhook_client::{self, Connect, Endpoint};
use base64::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const GROUP: &str = "admissionregistration.k8s.io";
const MUTATING: &str = "mutatingwebhookconfigurations";
const VALIDATING: &str = "validatingwebhookconfigurations";

/// The default and the largest `timeoutSeconds`.
const DEFAULT_TIMEOUT: u64 = 10;
const MAX_TIMEOUT: u64 = 30;

/// The operation a request is to admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }

    fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
        }
    }
}

/// What admission knows of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attributes<'a> {
    pub(crate) rt: &'a ResourceType,
    /// `status`, or empty.
    pub(crate) subresource: &'a str,
    pub(crate) operation: Operation,
    /// Empty for cluster-scoped objects other than Namespaces.
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
    pub(crate) dry_run: bool,
    pub(crate) user: &'a User,
    pub(crate) field_manager: &'a str,
}

/// One webhook of a configuration.
#[derive(Debug, Clone)]
struct Hook {
    mutating: bool,
    name: String,
    spec: Value,
}

impl Hook {
    fn ignores_failures(&self) -> bool {
        self.spec["failurePolicy"] == "Ignore"
    }

    fn timeout(&self) -> u64 {
        self.spec["timeoutSeconds"]
            .as_u64()
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(1, MAX_TIMEOUT)
    }
}

/// Whether any webhook configuration is stored (when none is, writes take no detour).
pub(crate) fn configured(store: &Store) -> bool {
    [MUTATING, VALIDATING]
        .iter()
        .any(|plural| !store.select(GROUP, plural, |_| true).is_empty())
}

/// Kinds never sent to webhooks, so that a broken webhook cannot lock its own configuration.
fn exempt(rt: &ResourceType) -> bool {
    rt.group == GROUP
        && matches!(
            rt.plural.as_str(),
            MUTATING
                | VALIDATING
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

/// Every webhook of the `plural` configurations, configurations in name order.
fn hooks(store: &Store, plural: &str) -> Vec<Hook> {
    store
        .select(GROUP, plural, |_| true)
        .into_iter()
        .flat_map(|(_, config)| {
            config["webhooks"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|spec| Hook {
                    mutating: plural == MUTATING,
                    name: spec["name"].as_str().unwrap_or_default().to_owned(),
                    spec,
                })
        })
        .collect()
}

fn listed(list: &Value, value: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|v| v == "*" || v == value))
}

/// The version a rule matches the request at: the request's own, or under `matchPolicy:
/// Equivalent` another served version of the same resource that the rule names.
fn rule_version(store: &Store, hook: &Hook, rule: &Value, a: &Attributes<'_>) -> Option<String> {
    let rt = a.rt;
    if !listed(&rule["operations"], a.operation.as_str()) || !listed(&rule["apiGroups"], &rt.group)
    {
        return None;
    }
    // The API server's rule matcher: "*" is every resource without a subresource, "pods/*"
    // pods and every subresource of it, "*/status" every status subresource.
    let resource_match = rule["resources"].as_array().is_some_and(|list| {
        list.iter().filter_map(Value::as_str).any(|r| {
            let (res, sub) = r.split_once('/').unwrap_or((r, ""));
            (res == "*" || res == rt.plural) && (sub == "*" || sub == a.subresource)
        })
    });
    let namespace_object = rt.group.is_empty() && rt.plural == "namespaces";
    let scope = match rule["scope"].as_str().unwrap_or("*") {
        "Namespaced" => !namespace_object && !a.namespace.is_empty(),
        "Cluster" => namespace_object || a.namespace.is_empty(),
        _ => true,
    };
    if !resource_match || !scope {
        return None;
    }
    if listed(&rule["apiVersions"], &rt.version) {
        return Some(rt.version.clone());
    }
    if hook.spec["matchPolicy"] == "Exact" {
        return None;
    }
    rule["apiVersions"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|v| store.registry.by_plural(&rt.group, v, &rt.plural).is_some())
        .map(str::to_owned)
}

fn selector(spec: &Value) -> Result<LabelSelector, ApiError> {
    if spec.is_null() {
        return Ok(LabelSelector::default());
    }
    LabelSelector::from_object(spec)
}

/// Whether `hook` is called for this request, and at which version of the resource.
fn matches(
    store: &Store,
    hook: &Hook,
    a: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<Option<String>, ApiError> {
    let Some(version) = hook.spec["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|rule| rule_version(store, hook, rule, a))
    else {
        return Ok(None);
    };
    let namespace_object = a.rt.group.is_empty() && a.rt.plural == "namespaces";
    let namespaces = selector(&hook.spec["namespaceSelector"])?;
    if !namespaces.is_empty() && (!a.namespace.is_empty() || namespace_object) {
        let labels_of = if namespace_object {
            object.or(old).cloned()
        } else {
            let rt = ResourceType::new("v1", "Namespace", "namespaces", false, true);
            Some(store.get(&rt, None, a.namespace)?)
        };
        if !labels_of.is_some_and(|ns| namespaces.matches(&ns)) {
            return Ok(None);
        }
    }
    let objects = selector(&hook.spec["objectSelector"])?;
    if !objects.is_empty()
        && !object.is_some_and(|o| objects.matches(o))
        && !old.is_some_and(|o| objects.matches(o))
    {
        return Ok(None);
    }
    Ok(Some(version))
}

/// How a call went wrong.
enum CallError {
    /// The webhook could not be called or answered nonsense: `failurePolicy` decides.
    Calling(String),
    /// The request is refused whatever the policy (a denial, a dry run the webhook cannot take).
    Refused(ApiError),
}

fn internal(message: String) -> ApiError {
    ApiError::new(
        500,
        "InternalError",
        format!("Internal error occurred: {message}"),
    )
}

/// `ToStatusErr`: the webhook's status, its code at least 400, its message prefixed.
fn denial(name: &str, status: &Value) -> ApiError {
    let denied = format!("admission webhook \"{name}\" denied the request");
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let message = status["message"].as_str().unwrap_or_default();
    let reason = status["reason"].as_str().unwrap_or_default();
    let message = if !message.is_empty() {
        format!("{denied}: {message}")
    } else if !reason.is_empty() {
        format!("{denied}: {reason}")
    } else {
        format!("{denied} without explanation")
    };
    ApiError::new(code, known_reason(reason), message)
}

/// `reason` if it is one of the `StatusReason`s Kubernetes defines, else empty.
fn known_reason(reason: &str) -> &'static str {
    const REASONS: [&str; 18] = [
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "ServiceUnavailable",
    ];
    REASONS
        .into_iter()
        .find(|r| *r == reason)
        .unwrap_or_default()
}

/// Where the webhook is, as the API server resolves `clientConfig`.
fn endpoint(shared: &Shared, hook: &Hook) -> Result<Target, String> {
    let config = &hook.spec["clientConfig"];
    let ca = match config["caBundle"].as_str() {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| format!("could not get REST client: caBundle: {e}"))?,
        None => Vec::new(),
    };
    let query = format!("?timeout={}s", hook.timeout());
    if let Some(url) = config["url"].as_str() {
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| format!("could not get REST client: {url}: not https"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|e| format!("could not get REST client: {url}: {e}"))?,
            ),
            None => (authority, 443),
        };
        let path = if path.is_empty() { "/" } else { path };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        return Ok(Target::Served(Endpoint {
            url: format!("https://{authority}{path}{query}"),
            connect: Connect::Host(host.to_owned(), port),
            server_name: host.to_owned(),
            path: format!("{path}{query}"),
            ca,
        }));
    }
    let service = &config["service"];
    let namespace = service["namespace"].as_str().unwrap_or_default();
    let name = service["name"].as_str().unwrap_or_default();
    let port = service["port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(443);
    let path = service["path"].as_str().unwrap_or("/");
    let host = format!("{name}.{namespace}.svc");
    let url = format!("https://{host}:{port}{path}{query}");
    let services = ResourceType::new("v1", "Service", "services", true, true);
    if shared.lock().get(&services, Some(namespace), name).is_err() {
        return Err(format!(
            "failed to call webhook: Post \"{url}\": service \"{name}\" not found"
        ));
    }
    let mapped = (shared.services.lock().ok()).and_then(|m| {
        m.get(&(namespace.to_owned(), name.to_owned(), port))
            .copied()
    });
    if let Some(addr) = mapped {
        return Ok(Target::Served(Endpoint {
            url,
            connect: Connect::Addr(addr),
            server_name: host,
            path: format!("{path}{query}"),
            ca,
        }));
    }
    if simulated_pods_ready(&shared.lock(), namespace, name) {
        return Ok(Target::Simulated);
    }
    Err(format!(
        "failed to call webhook: Post \"{url}\": no endpoints available for service \"{name}\""
    ))
}

/// Where a webhook call goes.
enum Target {
    /// A server the test runs (a `url`, or a Service the test mapped).
    Served(Endpoint),
    /// A Service no test mapped whose pods are ready: they belong to a simulated provider
    /// (cert-manager, Cluster API, CAPAS run no webhook servers here), which admits the request
    /// unchanged.
    Simulated,
}

/// Whether the Service `namespace/name` has ready endpoints in the simulation: a Deployment of
/// its namespace whose pod template carries every label of the Service's selector is Available
/// (the endpoints controller lists only ready pods; a Service without a selector has none).
fn simulated_pods_ready(store: &Store, namespace: &str, name: &str) -> bool {
    let services = ResourceType::new("v1", "Service", "services", true, true);
    let Ok(service) = store.get(&services, Some(namespace), name) else {
        return false;
    };
    let Some(selector) = service["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
    else {
        return false;
    };
    store
        .select("apps", "deployments", |d| {
            d["metadata"]["namespace"] == namespace
                && selector
                    .iter()
                    .all(|(k, v)| &d["spec"]["template"]["metadata"]["labels"][k] == v)
        })
        .iter()
        .any(|(_, d)| {
            (d["status"]["conditions"].as_array().into_iter().flatten())
                .any(|c| c["type"] == "Available" && c["status"] == "True")
        })
}

/// The AdmissionReview sent to `hook`.
fn review(
    a: &Attributes<'_>,
    uid: &str,
    version: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Value {
    let rt = a.rt;
    let kind = json!({"group": rt.group, "version": version, "kind": rt.kind});
    let resource = json!({"group": rt.group, "version": version, "resource": rt.plural});
    let mut request = json!({
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "requestKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "requestResource": {"group": rt.group, "version": rt.version, "resource": rt.plural},
        "name": a.name,
        "operation": a.operation.as_str(),
        "userInfo": a.user.info(),
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": a.dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": a.operation.options_kind()},
    });
    if a.operation != Operation::Delete && !a.field_manager.is_empty() {
        request["options"]["fieldManager"] = json!(a.field_manager);
    }
    if !a.namespace.is_empty() {
        request["namespace"] = json!(a.namespace);
    }
    if !a.subresource.is_empty() {
        request["subResource"] = json!(a.subresource);
        request["requestSubResource"] = json!(a.subresource);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// Calls `hook`; the JSON patch a mutating webhook returned, if any.
async fn call(
    shared: &Shared,
    hook: &Hook,
    a: &Attributes<'_>,
    version: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<Option<Value>, CallError> {
    if a.dry_run {
        match hook.spec["sideEffects"].as_str() {
            None => return Err(CallError::Calling("Webhook SideEffects is nil".into())),
            Some("None" | "NoneOnDryRun") => {}
            Some(_) => {
                return Err(CallError::Refused(ApiError::bad_request(format!(
                    "admission webhook \"{}\" does not support dry run",
                    hook.name
                ))));
            }
        }
    }
    let versions = &hook.spec["admissionReviewVersions"];
    let endpoint = match endpoint(shared, hook).map_err(CallError::Calling)? {
        // The API server speaks v1 and v1beta1 (CAPAS's webhooks list only v1beta1).
        Target::Simulated
            if listed_exactly(versions, "v1") || listed_exactly(versions, "v1beta1") =>
        {
            return Ok(None);
        }
        Target::Served(endpoint) if listed_exactly(versions, "v1") => endpoint,
        Target::Simulated => {
            return Err(CallError::Calling(
                "could not create admission objects: webhook does not accept known AdmissionReview versions".into(),
            ));
        }
        Target::Served(_) => {
            return Err(CallError::Calling(
                "could not create admission objects: webhook does not accept known AdmissionReview versions (the stand-in sends only v1)".into(),
            ));
        }
    };
    let uid = clock::uid();
    let body = review(a, &uid, version, object, old)
        .to_string()
        .into_bytes();
    let (code, answer) = webhook_client::post(&endpoint, body, Duration::from_secs(hook.timeout()))
        .await
        .map_err(|e| CallError::Calling(format!("failed to call webhook: {e}")))?;
    if !(200..300).contains(&code) {
        let status: Value = serde_json::from_slice(&answer).unwrap_or_default();
        let why = match status["message"].as_str() {
            Some(m) if status["kind"] == "Status" => m.to_owned(),
            _ => format!(
                "the server responded with the status code {code} but did not return more information"
            ),
        };
        return Err(CallError::Calling(format!("failed to call webhook: {why}")));
    }
    let invalid =
        |why: String| CallError::Calling(format!("received invalid webhook response: {why}"));
    let reviewed: Value = serde_json::from_slice(&answer)
        .map_err(|e| CallError::Calling(format!("failed to call webhook: {e}")))?;
    let response = &reviewed["response"];
    if !response.is_object() {
        return Err(invalid("webhook response was absent".into()));
    }
    if response["uid"].as_str() != Some(uid.as_str()) {
        return Err(invalid(format!(
            "expected response.uid={uid:?}, got {:?}",
            response["uid"].as_str().unwrap_or_default()
        )));
    }
    if reviewed["apiVersion"] != "admission.k8s.io/v1" || reviewed["kind"] != "AdmissionReview" {
        return Err(invalid(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}, Kind={}",
            reviewed["apiVersion"].as_str().unwrap_or_default(),
            reviewed["kind"].as_str().unwrap_or_default()
        )));
    }
    let patch = response["patch"].as_str().filter(|p| !p.is_empty());
    let patch_type = response["patchType"].as_str();
    if hook.mutating {
        match (patch, patch_type) {
            (Some(_), None) => {
                return Err(invalid(
                    "webhook returned response.patch but not response.patchType".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(invalid(
                    "webhook returned response.patchType but not response.patch".into(),
                ));
            }
            _ => {}
        }
    } else if patch.is_some() {
        return Err(invalid(
            "validating webhook may not return response.patch".into(),
        ));
    } else if patch_type.is_some() {
        return Err(invalid(
            "validating webhook may not return response.patchType".into(),
        ));
    }
    if response["allowed"] != true {
        return Err(CallError::Refused(denial(&hook.name, &response["status"])));
    }
    let Some(patch) = patch else {
        return Ok(None);
    };
    if a.operation == Operation::Delete {
        return Err(CallError::Refused(internal(format!(
            "admission webhook \"{}\" attempted to modify the object, which is not supported for this operation",
            hook.name
        ))));
    }
    if patch_type != Some("JSONPatch") {
        return Err(CallError::Calling(format!(
            "unsupported patch type {:?}",
            patch_type.unwrap_or_default()
        )));
    }
    let undecodable = |e: String| {
        CallError::Calling(format!(
            "received undecodable patch in webhook response: {e}"
        ))
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(patch)
        .map_err(|e| undecodable(e.to_string()))?;
    let ops: Value = serde_json::from_slice(&bytes).map_err(|e| undecodable(e.to_string()))?;
    Ok(Some(ops))
}

fn listed_exactly(list: &Value, value: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|v| v == value))
}

/// What a call's failure does to the request: nothing under `failurePolicy: Ignore`, else the
/// request is refused.
fn settle(
    hook: &Hook,
    outcome: Result<Option<Value>, CallError>,
) -> Result<Option<Value>, ApiError> {
    match outcome {
        Ok(patch) => Ok(patch),
        Err(CallError::Calling(_)) if hook.ignores_failures() => Ok(None),
        Err(CallError::Calling(why)) => Err(internal(format!(
            "failed calling webhook \"{}\": {why}",
            hook.name
        ))),
        Err(CallError::Refused(e)) => Err(e),
    }
}

/// Runs the request through the webhooks: mutating ones in turn, then validating ones at once.
/// Returns the object as mutated (`None` for a delete).
pub(crate) async fn admit(
    shared: &Arc<Shared>,
    a: &Attributes<'_>,
    object: Option<Value>,
    old: Option<&Value>,
) -> Result<Option<Value>, ApiError> {
    if exempt(a.rt) {
        return Ok(object);
    }
    let mut object = object;
    let mutating = hooks(&shared.lock(), MUTATING);
    for hook in &mutating {
        let version = matches(&shared.lock(), hook, a, object.as_ref(), old)?;
        let Some(version) = version else {
            continue;
        };
        let outcome = call(shared, hook, a, &version, object.as_ref(), old).await;
        if let (Some(ops), Some(o)) = (settle(hook, outcome)?, object.as_mut()) {
            let mut patched = o.clone();
            patch::json_patch(&mut patched, &ops).map_err(|e| internal(e.message))?;
            *o = patched;
        }
    }
    let validating: Vec<(Hook, String)> = {
        let store = shared.lock();
        let mut found = Vec::new();
        for hook in hooks(&store, VALIDATING) {
            if let Some(version) = matches(&store, &hook, a, object.as_ref(), old)? {
                found.push((hook, version));
            }
        }
        found
    };
    let calls = validating.iter().map(|(hook, version)| {
        let object = object.as_ref();
        async move {
            let outcome = call(shared, hook, a, version, object, old).await;
            settle(hook, outcome).map(|_| ())
        }
    });
    for outcome in futures_util::future::join_all(calls).await {
        outcome?;
    }
    Ok(object)
}

/// The API server's validation of a webhook configuration (admissionregistration v1), the
/// fields the calls depend on.
pub(crate) fn validate_configuration(rt: &ResourceType, config: &Value) -> Result<(), ApiError> {
    if rt.group != GROUP || (rt.plural != MUTATING && rt.plural != VALIDATING) {
        return Ok(());
    }
    let mut errors = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, hook) in config["webhooks"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("webhooks[{i}]");
        let name = hook["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.push(format!("{at}.name: Required value"));
        } else if name.split('.').filter(|s| !s.is_empty()).count() < 3 {
            errors.push(format!(
                "{at}.name: Invalid value: {name:?}: should be a domain with at least three segments separated by dots"
            ));
        } else if !names.insert(name) {
            errors.push(format!("{at}.name: Duplicate value: {name:?}"));
        }
        match hook["sideEffects"].as_str() {
            None => errors.push(format!(
                "{at}.sideEffects: Required value: must specify one of None, NoneOnDryRun"
            )),
            Some("None" | "NoneOnDryRun") => {}
            Some(other) => errors.push(format!(
                "{at}.sideEffects: Unsupported value: {other:?}: supported values: \"None\", \"NoneOnDryRun\""
            )),
        }
        match hook["admissionReviewVersions"].as_array() {
            None => errors.push(format!(
                "{at}.admissionReviewVersions: Required value: must specify one of v1, v1beta1"
            )),
            Some(list) if !list.iter().any(|v| v == "v1" || v == "v1beta1") => {
                errors.push(format!(
                    "{at}.admissionReviewVersions: Invalid value: {}: must include at least one of v1, v1beta1",
                    Value::Array(list.clone())
                ));
            }
            Some(_) => {}
        }
        if let Some(t) = hook.get("timeoutSeconds").filter(|t| !t.is_null())
            && !t.as_u64().is_some_and(|t| (1..=MAX_TIMEOUT).contains(&t))
        {
            errors.push(format!(
                "{at}.timeoutSeconds: Invalid value: {t}: the timeout value must be between 1 and 30 seconds"
            ));
        }
        if let Some(p) = hook["failurePolicy"].as_str()
            && p != "Fail"
            && p != "Ignore"
        {
            errors.push(format!(
                "{at}.failurePolicy: Unsupported value: {p:?}: supported values: \"Fail\", \"Ignore\""
            ));
        }
        let client = &hook["clientConfig"];
        match (client["url"].as_str(), client["service"].is_object()) {
            (Some(_), true) | (None, false) => errors.push(format!(
                "{at}.clientConfig: Required value: exactly one of url or service is required"
            )),
            (Some(url), false) if !url.starts_with("https://") => errors.push(format!(
                "{at}.clientConfig.url: Invalid value: {url:?}: 'https' is the only allowed URL scheme"
            )),
            _ => {}
        }
        if let Some(port) = client["service"].get("port").filter(|p| !p.is_null())
            && !port.as_u64().is_some_and(|p| (1..=65_535).contains(&p))
        {
            errors.push(format!(
                "{at}.clientConfig.service.port: Invalid value: {port}: port is not valid: must be between 1 and 65535, inclusive"
            ));
        }
        for field in ["namespaceSelector", "objectSelector"] {
            if let Err(e) = selector(&hook[field]) {
                errors.push(format!("{at}.{field}: Invalid value: {}", e.message));
            }
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    let list = if errors.len() == 1 {
        errors.remove(0)
    } else {
        format!("[{}]", errors.join(", "))
    };
    Err(ApiError::invalid(format!(
        "{}.{GROUP} \"{}\" is invalid: {list}",
        rt.kind,
        config["metadata"]["name"].as_str().unwrap_or_default()
    ))
    .about(
        GROUP,
        &rt.plural,
        config["metadata"]["name"].as_str().unwrap_or_default(),
    ))
}
