//! The HTTP side: bearer authentication (the admin token, ServiceAccount tokens), RBAC,
//! routing of Kubernetes API paths, query parameters, content types, admission of writes, and
//! answers (objects, lists, `Status` errors).

use super::Shared;
use super::admission::{self, Operation};
use super::auth::{self, User};
use super::discovery;
use super::pod_log;
use super::rbac;
use super::registry::ResourceType;
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::store::{Deletion, PatchKind, Store, Write};
use super::watch::{self, WatchRequest};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The response body type of every answer.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

fn respond(code: u16, content_type: &str, body: Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed_unsync());
    *response.status_mut() =
        hyper::StatusCode::from_u16(code).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, v);
    }
    response
}

fn ok(code: u16, body: Value) -> Response<Body> {
    respond(code, "application/json", body)
}

fn failure(e: &ApiError) -> Response<Body> {
    ok(e.code, e.to_json())
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn query(uri: &hyper::Uri) -> HashMap<String, String> {
    uri.query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|v| v == "true" || v == "1")
}

/// A parsed resource path.
#[derive(Debug)]
struct Target {
    group: String,
    version: String,
    plural: String,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
    watch_path: bool,
}

fn target(segments: &[&str]) -> Option<Target> {
    let (group, version, mut rest) = match segments {
        ["api", v, rest @ ..] => (String::new(), (*v).to_owned(), rest),
        ["apis", g, v, rest @ ..] => ((*g).to_owned(), (*v).to_owned(), rest),
        _ => return None,
    };
    let mut watch_path = false;
    if rest.first() == Some(&"watch") {
        watch_path = true;
        rest = &rest[1..];
    }
    let s = |x: &&str| (*x).to_owned();
    let t = match rest {
        ["namespaces", ns, plural, more @ ..]
            if !(group.is_empty() && matches!(*plural, "status" | "finalize")) =>
        {
            if more.len() > 2 {
                return None;
            }
            Target {
                group,
                version,
                plural: s(plural),
                namespace: Some(s(ns)),
                name: more.first().map(s),
                subresource: more.get(1).map(s),
                watch_path,
            }
        }
        [plural, more @ ..] if more.len() <= 2 => Target {
            group,
            version,
            plural: s(plural),
            namespace: None,
            name: more.first().map(s),
            subresource: more.get(1).map(s),
            watch_path,
        },
        _ => return None,
    };
    Some(t)
}

fn decode(bytes: &[u8], yaml: bool) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => Ok(v),
        Err(e) if !yaml => Err(ApiError::bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))),
        Err(_) => {
            let text =
                std::str::from_utf8(bytes).map_err(|e| ApiError::bad_request(e.to_string()))?;
            serde_saphyr::from_str::<Value>(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
        }
    }
}

/// Answers one request.
pub(crate) async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_owned();
    if let Ok(mut log) = shared.requests.lock() {
        log.push(format!("{} {path}", parts.method));
    }
    let bearer = parts
        .headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let user = match bearer {
        Some(token) if token == shared.token => User::admin(),
        Some(token) => match shared.tokens.user(&shared.lock(), token) {
            Some(user) => user,
            None => return failure(&ApiError::new(401, "Unauthorized", "Unauthorized")),
        },
        None => return failure(&ApiError::new(401, "Unauthorized", "Unauthorized")),
    };
    let params = query(&parts.uri);
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return failure(&ApiError::bad_request(e.to_string())),
    };
    let latency = shared.latency.load(Ordering::SeqCst);
    if latency > 0 {
        tokio::time::sleep(Duration::from_nanos(latency)).await;
    }
    let mutating = matches!(
        parts.method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let body_dry_run = parts.method == Method::DELETE
        && serde_json::from_slice::<Value>(&body)
            .is_ok_and(|v| v["dryRun"].as_array().is_some_and(|a| !a.is_empty()));
    if mutating && !params.contains_key("dryRun") && !body_dry_run {
        shared.writes.fetch_add(1, Ordering::SeqCst);
    }
    let attributes = rbac::Attributes::of(parts.method.as_str(), &path, &params);
    if let Ok(mut verbs) = shared.verbs.lock() {
        *verbs.entry(attributes.verb.clone()).or_default() += 1;
    }
    if !rbac::allowed(&shared.lock(), &user, &attributes) {
        return failure(&rbac::forbidden(&user, &attributes));
    }
    let request = Caller {
        user: &user,
        attributes: &attributes,
    };
    match route(&shared, &parts, &params, &body, request).await {
        Ok(response) => response,
        Err(e) => failure(&e),
    }
}

/// Who asks, and what RBAC allowed them.
#[derive(Debug, Clone, Copy)]
struct Caller<'a> {
    user: &'a User,
    attributes: &'a rbac::Attributes,
}

async fn route(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    params: &HashMap<String, String>,
    body: &[u8],
    caller: Caller<'_>,
) -> Result<Response<Body>, ApiError> {
    let segments: Vec<&str> = parts
        .uri
        .path()
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(answer) = discovery_route(shared, parts, &segments) {
        return answer;
    }
    if parts.method == Method::POST
        && segments
            == [
                "apis",
                "authorization.k8s.io",
                "v1",
                "selfsubjectaccessreviews",
            ]
    {
        let review = match rbac::review_from_protobuf(body) {
            Some(review) => review,
            None => decode(body, true)?,
        };
        let answer = rbac::self_subject_access_review(&shared.lock(), caller.user, &review);
        return Ok(ok(201, answer));
    }
    let t = target(&segments).ok_or_else(ApiError::no_resource)?;
    let rt = shared
        .lock()
        .registry
        .by_plural(&t.group, &t.version, &t.plural)
        .cloned()
        .ok_or_else(ApiError::no_resource)?;
    if (t.namespace.is_some() && !rt.namespaced)
        || (t.namespace.is_none() && rt.namespaced && t.name.is_some())
    {
        return Err(ApiError::no_resource());
    }
    let ns = t.namespace.as_deref();
    if let (&Method::POST, Some(name), Some("token")) =
        (&parts.method, t.name.as_deref(), t.subresource.as_deref())
        && rt.group.is_empty()
        && rt.plural == "serviceaccounts"
    {
        let request = decode(body, true)?;
        let store = shared.lock();
        let answer = auth::token_request(
            &shared.tokens,
            &store,
            ns.unwrap_or("default"),
            name,
            &request,
        )?;
        return Ok(ok(201, answer));
    }
    if let (&Method::GET, Some(name), Some(ns), Some("log")) = (
        &parts.method,
        t.name.as_deref(),
        ns,
        t.subresource.as_deref(),
    ) && rt.group.is_empty()
        && rt.plural == "pods"
    {
        let logs = shared
            .logs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        return pod_log::answer(&shared.lock(), &logs, &rt, ns, name, params);
    }
    let status = match t.subresource.as_deref() {
        None => false,
        Some("status") if rt.status => true,
        Some(_) => return Err(ApiError::no_resource()),
    };
    let (dry_run, manager) = write_parameters(parts, params)?;
    let api_version = rt.api_version();
    let w = Write {
        manager,
        api_version: &api_version,
        dry_run,
        status,
        whole: false,
        force: truthy(params.get("force")),
    };
    let watch = t.watch_path || truthy(params.get("watch"));
    match (&parts.method, t.name.as_deref()) {
        (&Method::GET, Some(name)) if !watch => Ok(ok(200, shared.lock().get(&rt, ns, name)?)),
        (&Method::GET, name) => {
            let labels = LabelSelector::parse(
                params
                    .get("labelSelector")
                    .map(String::as_str)
                    .unwrap_or_default(),
            )?;
            let mut field_selector = params.get("fieldSelector").cloned().unwrap_or_default();
            if let Some(name) = name {
                if !field_selector.is_empty() {
                    field_selector.push(',');
                }
                field_selector.push_str(&format!("metadata.name={name}"));
            }
            let fields = FieldSelector::parse(&field_selector)?;
            if watch {
                let request = WatchRequest {
                    rt,
                    namespace: t.namespace.clone(),
                    resource_version: params.get("resourceVersion").cloned().unwrap_or_default(),
                    labels,
                    fields,
                    bookmarks: truthy(params.get("allowWatchBookmarks")),
                    timeout: params
                        .get("timeoutSeconds")
                        .and_then(|s| s.parse::<u64>().ok())
                        .map(Duration::from_secs),
                };
                let body = watch::start(shared, request)?;
                let mut response = Response::new(body.boxed_unsync());
                response.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("application/json"),
                );
                return Ok(response);
            }
            let store = shared.lock();
            let items = store.list(&rt, ns, &labels, &fields);
            Ok(ok(
                200,
                json!({
                    "apiVersion": rt.api_version(),
                    "kind": format!("{}List", rt.kind),
                    "metadata": {"resourceVersion": store.resource_version().to_string()},
                    "items": items,
                }),
            ))
        }
        (&Method::POST, None) if !status => {
            if ns.is_none() && rt.namespaced {
                return Err(method_not_allowed(&rt));
            }
            let object = decode(body, true)?;
            let created = admitted(shared, caller.user, &rt, w, |store, w| {
                store.create(&rt, ns, object.clone(), w)
            })
            .await?;
            Ok(ok(201, created))
        }
        (&Method::PUT, Some(name)) => {
            let object = decode(body, true)?;
            let replaced = admitted(shared, caller.user, &rt, w, |store, w| {
                store.replace(&rt, ns, name, object.clone(), w)
            })
            .await?;
            Ok(ok(200, replaced))
        }
        (&Method::PATCH, Some(name)) => {
            patch_object(shared, parts, params, body, (&rt, ns, name), w, caller).await
        }
        (&Method::DELETE, Some(name)) if !status => {
            delete_object(shared, body, (&rt, ns, name), dry_run, caller.user).await
        }
        (&Method::DELETE, None) if !status => {
            let labels = LabelSelector::parse(
                params
                    .get("labelSelector")
                    .map(String::as_str)
                    .unwrap_or_default(),
            )?;
            let fields = FieldSelector::parse(
                params
                    .get("fieldSelector")
                    .map(String::as_str)
                    .unwrap_or_default(),
            )?;
            let listed = shared.lock().list(&rt, ns, &labels, &fields);
            let mut items = Vec::new();
            for o in listed {
                let name = o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let ns = o["metadata"]["namespace"].as_str().map(str::to_owned);
                admit_delete(shared, caller.user, &rt, &o, dry_run).await?;
                if let Ok(d) = shared.lock().delete(&rt, ns.as_deref(), &name, dry_run) {
                    items.push(match d {
                        Deletion::Terminating(o) | Deletion::Gone(o) => o,
                    });
                }
            }
            let store = shared.lock();
            Ok(ok(
                200,
                json!({
                    "apiVersion": rt.api_version(),
                    "kind": format!("{}List", rt.kind),
                    "metadata": {"resourceVersion": store.resource_version().to_string()},
                    "items": items,
                }),
            ))
        }
        _ => Err(method_not_allowed(&rt)),
    }
}

/// Discovery: `/version`, `/api`, `/apis` (plain and aggregated) and the resource lists; `None`
/// for any other path.
fn discovery_route(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    segments: &[&str],
) -> Option<Result<Response<Body>, ApiError>> {
    let aggregated = parts
        .headers
        .get(hyper::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("as=APIGroupDiscoveryList"));
    let get = parts.method == Method::GET;
    Some(match segments {
        ["version"] if get => Ok(ok(200, discovery::version())),
        ["api"] if get && aggregated => Ok(respond(
            200,
            discovery::AGGREGATED,
            discovery::aggregated(&shared.lock().registry, true),
        )),
        ["api"] if get => Ok(ok(200, discovery::api_versions(&shared.addr.to_string()))),
        ["apis"] if get && aggregated => Ok(respond(
            200,
            discovery::AGGREGATED,
            discovery::aggregated(&shared.lock().registry, false),
        )),
        ["apis"] if get => Ok(ok(200, discovery::group_list(&shared.lock().registry))),
        ["api", v] if get => discovery::resource_list(&shared.lock().registry, "", v)
            .map(|l| ok(200, l))
            .ok_or_else(ApiError::no_resource),
        ["apis", g, v] if get => discovery::resource_list(&shared.lock().registry, g, v)
            .map(|l| ok(200, l))
            .ok_or_else(ApiError::no_resource),
        _ => return None,
    })
}

/// The write parameters every request may carry: `dryRun=All` and the field manager (the
/// `fieldManager` parameter, else the client's user agent, as a real server takes it).
fn write_parameters<'a>(
    parts: &'a http::request::Parts,
    params: &'a HashMap<String, String>,
) -> Result<(bool, &'a str), ApiError> {
    let dry_run = match params.get("dryRun").map(String::as_str) {
        None => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Invalid dryRun value {other:?}: supported values: \"All\""
            )));
        }
    };
    let user_agent = parts
        .headers
        .get(hyper::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .and_then(|ua| ua.split('/').next())
        .filter(|m| !m.is_empty())
        .unwrap_or("unknown");
    let manager = params
        .get("fieldManager")
        .map(String::as_str)
        .unwrap_or(user_agent);
    if manager.len() > 128 {
        return Err(ApiError::invalid(
            "fieldManager: Too long: may not be longer than 128",
        ));
    }
    Ok((dry_run, manager))
}

/// PATCH: server-side apply, merge (strategic merge treated as merge) or JSON patch, by the
/// body's media type.
async fn patch_object(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    params: &HashMap<String, String>,
    body: &[u8],
    target: (&ResourceType, Option<&str>, &str),
    w: Write<'_>,
    caller: Caller<'_>,
) -> Result<Response<Body>, ApiError> {
    let (rt, ns, name) = target;
    let dry_run = w.dry_run;
    let content_type = parts
        .headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    let kind = match media {
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => PatchKind::Apply,
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            PatchKind::Merge
        }
        "application/json-patch+json" => PatchKind::Json,
        other => {
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {other:?})"
                ),
            ));
        }
    };
    if kind == PatchKind::Apply && !params.contains_key("fieldManager") {
        return Err(ApiError::bad_request(
            "PATCH: fieldManager is required for apply requests",
        ));
    }
    let patch = decode(body, kind == PatchKind::Apply)?;
    let existed = shared.lock().get(rt, ns, name).is_ok();
    // An apply that creates needs `create` as well as `patch`, as the API server checks.
    if !existed && kind == PatchKind::Apply {
        let create = caller.attributes.with_verb("create");
        if !rbac::allowed(&shared.lock(), caller.user, &create) {
            return Err(rbac::forbidden(caller.user, &create));
        }
    }
    let object = admitted(shared, caller.user, rt, w, |store, w| {
        store.patch(rt, ns, name, kind, patch.clone(), w)
    })
    .await?;
    Ok(ok(if existed || dry_run { 200 } else { 201 }, object))
}

/// How many times a write admitted by webhooks is computed again when the object changed while
/// the webhooks were called (the API server's update loop retries likewise).
const ADMISSION_ATTEMPTS: usize = 5;

fn meta<'a>(object: &'a Value, field: &str) -> &'a str {
    object["metadata"][field].as_str().unwrap_or_default()
}

/// The namespace admission sees: the object's, or a Namespace's own name.
fn admission_namespace<'a>(rt: &ResourceType, object: &'a Value) -> &'a str {
    if rt.namespaced {
        meta(object, "namespace")
    } else if rt.group.is_empty() && rt.plural == "namespaces" {
        meta(object, "name")
    } else {
        ""
    }
}

/// A create, update or patch: done at once when no webhook is configured; otherwise computed
/// as a dry run, sent through the webhooks, and the admitted object stored if the object did
/// not change meanwhile (else computed again).
async fn admitted(
    shared: &Arc<Shared>,
    user: &User,
    rt: &ResourceType,
    w: Write<'_>,
    op: impl Fn(&mut Store, Write<'_>) -> Result<Value, ApiError>,
) -> Result<Value, ApiError> {
    if !webhooks_served(shared) {
        return op(&mut shared.lock(), w);
    }
    let version = |o: Option<&Value>| o.map(|o| meta(o, "resourceVersion").to_owned());
    let mut name = String::new();
    for _ in 0..ADMISSION_ATTEMPTS {
        let (old, computed) = {
            let mut store = shared.lock();
            let computed = op(&mut store, Write { dry_run: true, ..w })?;
            let ns = meta(&computed, "namespace");
            let old = store
                .get(rt, (!ns.is_empty()).then_some(ns), meta(&computed, "name"))
                .ok();
            (old, computed)
        };
        name = meta(&computed, "name").to_owned();
        let attributes = admission::Attributes {
            rt,
            subresource: if w.status { "status" } else { "" },
            operation: if old.is_some() {
                Operation::Update
            } else {
                Operation::Create
            },
            namespace: admission_namespace(rt, &computed),
            name: &name,
            dry_run: w.dry_run,
            user,
            field_manager: w.manager,
        };
        let object = admission::admit(shared, &attributes, Some(computed.clone()), old.as_ref())
            .await?
            .unwrap_or_else(|| computed.clone());
        let mut store = shared.lock();
        let ns = meta(&computed, "namespace");
        let current = store.get(rt, (!ns.is_empty()).then_some(ns), &name).ok();
        if version(current.as_ref()) != version(old.as_ref()) {
            continue;
        }
        return store.commit_admitted(rt, &computed, object, w);
    }
    Err(ApiError::stale(&rt.group, &rt.plural, &name))
}

/// Sends the deletion of `object` through the webhooks (when any is configured).
async fn admit_delete(
    shared: &Arc<Shared>,
    user: &User,
    rt: &ResourceType,
    object: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    if !webhooks_served(shared) {
        return Ok(());
    }
    let attributes = admission::Attributes {
        rt,
        subresource: "",
        operation: Operation::Delete,
        namespace: admission_namespace(rt, object),
        name: meta(object, "name"),
        dry_run,
        user,
        field_manager: "",
    };
    admission::admit(shared, &attributes, None, Some(object)).await?;
    Ok(())
}

/// DELETE of one object: preconditions (uid, resourceVersion), admission, finalizers, dry run.
async fn delete_object(
    shared: &Arc<Shared>,
    body: &[u8],
    target: (&ResourceType, Option<&str>, &str),
    dry_run: bool,
    user: &User,
) -> Result<Response<Body>, ApiError> {
    let (rt, ns, name) = target;
    let options = decode(body, false)?;
    let dry_run = dry_run || options["dryRun"].as_array().is_some_and(|a| !a.is_empty());
    let current = shared.lock().get(rt, ns, name)?;
    admit_delete(shared, user, rt, &current, dry_run).await?;
    let mut store = shared.lock();
    let current = store.get(rt, ns, name)?;
    let pre = &options["preconditions"];
    if pre["uid"]
        .as_str()
        .is_some_and(|u| Some(u) != current["metadata"]["uid"].as_str())
    {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!(
                "Precondition failed: UID in precondition: {}, UID in object meta: {}",
                pre["uid"], current["metadata"]["uid"]
            ),
        )
        .about(&rt.group, &rt.plural, name));
    }
    if pre["resourceVersion"]
        .as_str()
        .is_some_and(|v| Some(v) != current["metadata"]["resourceVersion"].as_str())
    {
        return Err(ApiError::stale(&rt.group, &rt.plural, name));
    }
    match store.delete(rt, ns, name, dry_run)? {
        Deletion::Terminating(o) => Ok(ok(200, o)),
        Deletion::Gone(o) if rt.crd.is_some() => Ok(ok(200, o)),
        Deletion::Gone(o) => Ok(ok(
            200,
            json!({
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {"name": name, "group": rt.group, "kind": rt.plural, "uid": o["metadata"]["uid"]},
            }),
        )),
    }
}

fn method_not_allowed(rt: &ResourceType) -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    .about(&rt.group, &rt.plural, "")
}

/// Whether writes go through admission: some webhook configuration is stored. A webhook whose
/// Service a test mapped ([`crate::KubeStandIn::map_service`]) is called there; one whose
/// Service is not mapped is answered by the simulated provider's pods once its Deployment is
/// Available, and otherwise has no endpoints, as on a cluster (`admission`).
fn webhooks_served(shared: &Shared) -> bool {
    admission::configured(&shared.lock())
}

/// The path of one object of `rt`, as a client addresses it (for authorization's attributes).
fn object_path(rt: &ResourceType, namespace: Option<&str>, name: &str) -> String {
    let base = if rt.group.is_empty() {
        format!("/api/{}", rt.version)
    } else {
        format!("/apis/{}/{}", rt.group, rt.version)
    };
    match namespace {
        Some(ns) if rt.namespaced => format!("{base}/namespaces/{ns}/{}/{name}", rt.plural),
        _ => format!("{base}/{}/{name}", rt.plural),
    }
}

/// A server-side apply (`force=true`) of `object` by an in-cluster controller running as
/// `user`, through what a PATCH over HTTP goes through: RBAC (`patch`, and `create` when the
/// object is new), the admission webhooks, the store's validation and field ownership.
pub(crate) async fn apply_as(
    shared: &Arc<Shared>,
    user: &User,
    rt: &ResourceType,
    object: &Value,
    manager: &str,
    dry_run: bool,
) -> Result<Value, ApiError> {
    let name = meta(object, "name").to_owned();
    let ns = meta(object, "namespace");
    let ns = (rt.namespaced && !ns.is_empty()).then_some(ns);
    let params = HashMap::new();
    let attributes = rbac::Attributes::of("PATCH", &object_path(rt, ns, &name), &params);
    let existed = shared.lock().get(rt, ns, &name).is_ok();
    for a in [
        Some(attributes.clone()),
        (!existed).then(|| attributes.with_verb("create")),
    ]
    .into_iter()
    .flatten()
    {
        if !rbac::allowed(&shared.lock(), user, &a) {
            return Err(rbac::forbidden(user, &a));
        }
    }
    let api_version = rt.api_version();
    let w = Write {
        manager,
        api_version: &api_version,
        dry_run,
        status: false,
        whole: false,
        force: true,
    };
    admitted(shared, user, rt, w, |store, w| {
        store.patch(rt, ns, &name, PatchKind::Apply, object.clone(), w)
    })
    .await
}

/// A DELETE of one object by an in-cluster controller running as `user`: RBAC, admission,
/// finalizers.
pub(crate) async fn delete_as(
    shared: &Arc<Shared>,
    user: &User,
    rt: &ResourceType,
    namespace: Option<&str>,
    name: &str,
) -> Result<(), ApiError> {
    let params = HashMap::new();
    let attributes = rbac::Attributes::of("DELETE", &object_path(rt, namespace, name), &params);
    if !rbac::allowed(&shared.lock(), user, &attributes) {
        return Err(rbac::forbidden(user, &attributes));
    }
    let current = shared.lock().get(rt, namespace, name)?;
    admit_delete(shared, user, rt, &current, false).await?;
    shared.lock().delete(rt, namespace, name, false).map(|_| ())
}
