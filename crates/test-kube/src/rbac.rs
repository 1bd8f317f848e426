//! Authorization as the API server's RBAC authorizer does it (k8s.io/kubernetes
//! `plugin/pkg/auth/authorizer/rbac`): a request's attributes read from its path as the
//! API server's request-info resolver reads them (verb, API group, resource, subresource,
//! namespace, name, or a non-resource path), allowed when a rule of a Role or ClusterRole bound
//! to the user allows it. ClusterRoleBindings apply everywhere, RoleBindings in their
//! namespace (a ServiceAccount subject without a namespace means the binding's). Members of
//! `system:masters` (the admin token) are allowed everything.
//!
//! Every authenticated user also has what the API server's bootstrap ClusterRoles
//! `system:discovery`, `system:basic-user` and `system:public-info-viewer` grant
//! `system:authenticated`; they are built in here rather than stored, so the stand-in's objects
//! stay as they were. The bootstrap ClusterRole `cluster-admin` (every verb on every resource and
//! path) is built in likewise, for bindings to it (Flux's `cluster-reconciler` binds
//! kustomize-controller to it) while no ClusterRole of that name is stored. Not modelled:
//! `aggregationRule` (a ClusterRole's own rules only), the other bootstrap roles (`view`, `edit`,
//! ... are not there to bind), and the escalation check on writes of roles and bindings (a
//! ServiceAccount allowed to write them can grant more than it holds).

use super::auth::User;
use super::registry::ResourceType;
use super::status::{ApiError, qualified};
use super::store::Store;
use serde_json::{Value, json};
use std::collections::HashMap;

const RBAC: &str = "rbac.authorization.k8s.io";

/// A resource request's attributes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Resource {
    pub(crate) group: String,
    pub(crate) resource: String,
    pub(crate) subresource: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

/// What authorization sees of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributes {
    pub(crate) verb: String,
    /// `None` for a non-resource path.
    pub(crate) resource: Option<Resource>,
    pub(crate) path: String,
}

impl Attributes {
    /// The attributes of `method path?query`, as the request-info resolver reads them.
    pub(crate) fn of(method: &str, path: &str, params: &HashMap<String, String>) -> Attributes {
        let non_resource = || Attributes {
            verb: method.to_ascii_lowercase(),
            resource: None,
            path: path.to_owned(),
        };
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if parts.len() < 3 || !matches!(parts[0], "api" | "apis") {
            return non_resource();
        }
        let mut rest = &parts[1..];
        let mut group = "";
        if parts[0] == "apis" {
            if rest.len() < 3 {
                return non_resource();
            }
            group = rest[0];
            rest = &rest[1..];
        }
        rest = &rest[1..];
        let mut verb = match method {
            "POST" => "create",
            "GET" | "HEAD" => "get",
            "PUT" => "update",
            "PATCH" => "patch",
            "DELETE" => "delete",
            _ => "",
        };
        if rest.first() == Some(&"watch") {
            verb = "watch";
            rest = &rest[1..];
        }
        let mut namespace = "";
        if rest.first() == Some(&"namespaces")
            && let Some(ns) = rest.get(1)
        {
            namespace = ns;
            if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
                rest = &rest[2..];
            }
        }
        let mut name = rest.get(1).copied().unwrap_or_default().to_owned();
        if name.is_empty() && verb == "get" {
            let watching = params
                .get("watch")
                .is_some_and(|w| !matches!(w.to_ascii_lowercase().as_str(), "0" | "false"));
            verb = if watching { "watch" } else { "list" };
            // A list or watch of one name by field selector is authorized as for that name.
            if let Some(only) = params.get("fieldSelector").and_then(|s| exact_name(s)) {
                name = only;
            }
        }
        if name.is_empty() && verb == "delete" {
            verb = "deletecollection";
        }
        Attributes {
            verb: verb.to_owned(),
            resource: Some(Resource {
                group: group.to_owned(),
                resource: rest.first().copied().unwrap_or_default().to_owned(),
                subresource: rest.get(2).copied().unwrap_or_default().to_owned(),
                namespace: namespace.to_owned(),
                name,
            }),
            path: path.to_owned(),
        }
    }

    /// The same request with another verb (an apply that creates is also a create).
    pub(crate) fn with_verb(&self, verb: &str) -> Attributes {
        Attributes {
            verb: verb.to_owned(),
            ..self.clone()
        }
    }
}

/// `metadata.name=X` (or `==`) in a field selector, when it requires exactly that.
fn exact_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let (k, v) = term.split_once("==").or_else(|| term.split_once('='))?;
        (k.trim() == "metadata.name").then(|| v.trim().to_owned())
    })
}

/// The rules the bootstrap policy grants every authenticated user.
fn authenticated_rules() -> Value {
    json!([
        // system:discovery and system:public-info-viewer.
        {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]},
        // system:basic-user.
        {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
        {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
    ])
}

fn listed(list: &Value, value: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|v| v == "*" || v == value))
}

/// One PolicyRule against the request.
fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    if !listed(&rule["verbs"], &a.verb) {
        return false;
    }
    let Some(r) = &a.resource else {
        return rule["nonResourceURLs"].as_array().is_some_and(|urls| {
            urls.iter().filter_map(Value::as_str).any(|u| {
                u == "*"
                    || u == a.path
                    || u.strip_suffix('*').is_some_and(|p| a.path.starts_with(p))
            })
        });
    };
    if !listed(&rule["apiGroups"], &r.group) {
        return false;
    }
    let combined = if r.subresource.is_empty() {
        r.resource.clone()
    } else {
        format!("{}/{}", r.resource, r.subresource)
    };
    let resource = rule["resources"].as_array().is_some_and(|list| {
        list.iter().filter_map(Value::as_str).any(|x| {
            x == "*"
                || x == combined
                || (!r.subresource.is_empty() && x.strip_prefix("*/") == Some(&r.subresource))
        })
    });
    // resourceNames allow only requests that name an object (not a create, or a list without
    // a name selector).
    let names = match rule["resourceNames"].as_array() {
        None => true,
        Some(names) if names.is_empty() => true,
        Some(names) => names.iter().any(|n| n == r.name.as_str()),
    };
    resource && names
}

/// Whether `subject` of a binding in `namespace` ("" for a ClusterRoleBinding) is `user`.
fn subject_is(subject: &Value, user: &User, namespace: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or_default();
    match subject["kind"].as_str().unwrap_or_default() {
        "User" => name == user.name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = subject["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(namespace);
            !ns.is_empty() && format!("system:serviceaccount:{ns}:{name}") == user.name
        }
        _ => false,
    }
}

fn rbac(kind: &str, plural: &str, namespaced: bool) -> ResourceType {
    ResourceType::new(&format!("{RBAC}/v1"), kind, plural, namespaced, false)
}

/// The rules of a binding's roleRef (none when the role does not exist).
fn role_rules(store: &Store, binding: &Value, namespace: &str) -> Vec<Value> {
    let role_ref = &binding["roleRef"];
    let name = role_ref["name"].as_str().unwrap_or_default();
    let role = match role_ref["kind"].as_str() {
        Some("ClusterRole") => store
            .get(&rbac("ClusterRole", "clusterroles", false), None, name)
            .ok(),
        Some("Role") if !namespace.is_empty() => store
            .get(&rbac("Role", "roles", true), Some(namespace), name)
            .ok(),
        _ => None,
    };
    match role {
        Some(r) => r["rules"].as_array().cloned().unwrap_or_default(),
        None if role_ref["kind"] == "ClusterRole" && name == "cluster-admin" => vec![
            json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
            json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
        ],
        None => Vec::new(),
    }
}

/// Whether RBAC allows `user` the request.
pub(crate) fn allowed(store: &Store, user: &User, a: &Attributes) -> bool {
    if user.is_master() {
        return true;
    }
    let authenticated = user.groups.iter().any(|g| g == "system:authenticated");
    if authenticated
        && authenticated_rules()
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| rule_allows(r, a))
    {
        return true;
    }
    let binds = |binding: &Value, namespace: &str| {
        binding["subjects"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| subject_is(s, user, namespace)))
    };
    let granted = |bindings: Vec<(super::store::Key, Value)>, namespace: &str| {
        bindings.iter().any(|(_, b)| {
            binds(b, namespace)
                && role_rules(store, b, namespace)
                    .iter()
                    .any(|r| rule_allows(r, a))
        })
    };
    if granted(store.select(RBAC, "clusterrolebindings", |_| true), "") {
        return true;
    }
    let namespace = a
        .resource
        .as_ref()
        .map(|r| r.namespace.as_str())
        .unwrap_or_default();
    !namespace.is_empty()
        && granted(
            store.select(RBAC, "rolebindings", |b| {
                b["metadata"]["namespace"].as_str() == Some(namespace)
            }),
            namespace,
        )
}

/// The 403 the API server answers a denied request with, in its words.
pub(crate) fn forbidden(user: &User, a: &Attributes) -> ApiError {
    let Some(r) = &a.resource else {
        return ApiError::new(
            403,
            "Forbidden",
            format!(
                "forbidden: User {:?} cannot {} path {:?}",
                user.name, a.verb, a.path
            ),
        );
    };
    let resource = if r.subresource.is_empty() {
        r.resource.clone()
    } else {
        format!("{}/{}", r.resource, r.subresource)
    };
    let why = if r.namespace.is_empty() {
        format!(
            "User {:?} cannot {} resource {resource:?} in API group {:?} at the cluster scope",
            user.name, a.verb, r.group
        )
    } else {
        format!(
            "User {:?} cannot {} resource {resource:?} in API group {:?} in the namespace {:?}",
            user.name, a.verb, r.group, r.namespace
        )
    };
    let qualified = qualified(&r.group, &r.resource);
    let message = if r.name.is_empty() {
        format!("{qualified} is forbidden: {why}")
    } else {
        format!("{qualified} {:?} is forbidden: {why}", r.name)
    };
    ApiError::new(403, "Forbidden", message).about(&r.group, &r.resource, &r.name)
}

/// `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`: whether the caller may do
/// what the review's spec says (`kubectl auth can-i`).
pub(crate) fn self_subject_access_review(store: &Store, user: &User, review: &Value) -> Value {
    let spec = &review["spec"];
    let attributes = if let Some(r) = spec["resourceAttributes"].as_object() {
        let field = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Attributes {
            verb: field("verb"),
            resource: Some(Resource {
                group: field("group"),
                resource: field("resource"),
                subresource: field("subresource"),
                namespace: field("namespace"),
                name: field("name"),
            }),
            path: String::new(),
        }
    } else {
        let n = &spec["nonResourceAttributes"];
        Attributes {
            verb: n["verb"].as_str().unwrap_or_default().to_owned(),
            resource: None,
            path: n["path"].as_str().unwrap_or_default().to_owned(),
        }
    };
    let allowed = allowed(store, user, &attributes);
    let mut answer = review.clone();
    answer["apiVersion"] = json!("authorization.k8s.io/v1");
    answer["kind"] = json!("SelfSubjectAccessReview");
    answer["status"] = json!({"allowed": allowed});
    answer
}

/// The fields of one protobuf message: each length-delimited field's bytes by number (other
/// wire types skipped); `None` when the bytes are not a message.
fn protobuf_fields(mut bytes: &[u8]) -> Option<HashMap<u64, &[u8]>> {
    fn varint(bytes: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = bytes.split_first()?;
            *bytes = rest;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut fields = HashMap::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        match key & 7 {
            0 => {
                varint(&mut bytes)?;
            }
            1 => bytes = bytes.get(8..)?,
            5 => bytes = bytes.get(4..)?,
            2 => {
                let len = usize::try_from(varint(&mut bytes)?).ok()?;
                fields.insert(key >> 3, bytes.get(..len)?);
                bytes = bytes.get(len..)?;
            }
            _ => return None,
        }
    }
    Some(fields)
}

/// A SelfSubjectAccessReview sent as Kubernetes protobuf (`k8s\0` and the `runtime.Unknown`
/// envelope; kubectl's typed clients send it so), as the JSON it stands for.
pub(crate) fn review_from_protobuf(body: &[u8]) -> Option<Value> {
    let envelope = protobuf_fields(body.strip_prefix(b"k8s\0")?)?;
    let review = protobuf_fields(envelope.get(&2)?)?;
    let spec = protobuf_fields(review.get(&2).copied().unwrap_or_default())?;
    let strings = |message: &[u8], names: &[&str]| -> Option<Value> {
        let fields = protobuf_fields(message)?;
        let mut out = serde_json::Map::new();
        for (i, name) in names.iter().enumerate() {
            if let Some(v) = fields.get(&(i as u64 + 1)) {
                out.insert((*name).to_owned(), json!(String::from_utf8_lossy(v)));
            }
        }
        Some(Value::Object(out))
    };
    let mut answer = json!({"spec": {}});
    if let Some(r) = spec.get(&1) {
        answer["spec"]["resourceAttributes"] = strings(
            r,
            &[
                "namespace",
                "verb",
                "group",
                "version",
                "resource",
                "subresource",
                "name",
            ],
        )?;
    } else if let Some(n) = spec.get(&2) {
        answer["spec"]["nonResourceAttributes"] = strings(n, &["path", "verb"])?;
    }
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: &str, path: &str, query: &[(&str, &str)]) -> Attributes {
        let params = query
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Attributes::of(method, path, &params)
    }

    fn resource(verb: &str, group: &str, res: &str, sub: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource: Some(Resource {
                group: group.into(),
                resource: res.into(),
                subresource: sub.into(),
                namespace: ns.into(),
                name: name.into(),
            }),
            path: String::new(),
        }
    }

    #[test]
    fn request_info_reads_paths_as_the_api_server_does() {
        let a = of("GET", "/api/v1/namespaces/ns/secrets/s", &[]);
        assert_eq!(a.verb, "get");
        assert_eq!(
            a.resource,
            resource("get", "", "secrets", "", "ns", "s").resource
        );
        assert_eq!(of("GET", "/api/v1/namespaces/ns/secrets", &[]).verb, "list");
        let w = of(
            "GET",
            "/apis/apps/v1/namespaces/ns/deployments",
            &[("watch", "true"), ("fieldSelector", "metadata.name=d")],
        );
        assert_eq!(
            w.resource,
            resource("watch", "apps", "deployments", "", "ns", "d").resource
        );
        assert_eq!(w.verb, "watch");
        let status = of(
            "PUT",
            "/apis/apps/v1/namespaces/ns/deployments/d/status",
            &[],
        );
        assert_eq!(status.verb, "update");
        assert_eq!(
            status.resource.map(|r| r.subresource),
            Some("status".into())
        );
        let ns = of("GET", "/api/v1/namespaces/foo", &[]);
        assert_eq!(
            ns.resource,
            resource("get", "", "namespaces", "", "foo", "foo").resource
        );
        assert_eq!(
            of("DELETE", "/api/v1/namespaces/ns/configmaps", &[]).verb,
            "deletecollection"
        );
        assert_eq!(
            of("POST", "/api/v1/namespaces/ns/configmaps", &[]).verb,
            "create"
        );
        for path in [
            "/api",
            "/apis",
            "/api/v1",
            "/apis/apps/v1",
            "/version",
            "/openapi/v2",
        ] {
            let a = of("GET", path, &[]);
            assert_eq!(
                (a.verb.as_str(), a.resource.is_none()),
                ("get", true),
                "{path}"
            );
        }
    }

    #[test]
    fn rules_match_verbs_groups_resources_subresources_and_names() {
        let rule = json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"], "resourceNames": ["p"]});
        assert!(rule_allows(
            &rule,
            &resource("get", "", "pods", "", "ns", "p")
        ));
        assert!(rule_allows(
            &rule,
            &resource("get", "", "pods", "log", "ns", "p")
        ));
        assert!(!rule_allows(
            &rule,
            &resource("get", "", "pods", "", "ns", "q")
        ));
        assert!(!rule_allows(
            &rule,
            &resource("list", "", "pods", "", "ns", "")
        ));
        assert!(!rule_allows(
            &rule,
            &resource("delete", "", "pods", "", "ns", "p")
        ));
        assert!(!rule_allows(
            &rule,
            &resource("get", "apps", "pods", "", "ns", "p")
        ));
        assert!(!rule_allows(
            &rule,
            &resource("get", "", "pods", "exec", "ns", "p")
        ));
        let wild = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*/status"]});
        assert!(rule_allows(
            &wild,
            &resource("update", "apps", "deployments", "status", "ns", "d")
        ));
        assert!(!rule_allows(
            &wild,
            &resource("update", "apps", "deployments", "", "ns", "d")
        ));
        let all = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]});
        assert!(rule_allows(
            &all,
            &resource("update", "apps", "deployments", "status", "ns", "d")
        ));
        let urls = json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics/*"]});
        let path = |p: &str| Attributes {
            verb: "get".into(),
            resource: None,
            path: p.into(),
        };
        assert!(rule_allows(&urls, &path("/healthz")));
        assert!(rule_allows(&urls, &path("/metrics/x")));
        assert!(!rule_allows(&urls, &path("/metrics")));
        assert!(!rule_allows(
            &urls,
            &resource("get", "", "healthz", "", "", "")
        ));
    }

    #[test]
    fn forbidden_is_worded_as_the_api_server_words_it() {
        let user = User::service_account("ns", "sa", "u");
        let e = forbidden(&user, &resource("get", "", "secrets", "", "ns", "s"));
        assert_eq!(
            e.message,
            "secrets \"s\" is forbidden: User \"system:serviceaccount:ns:sa\" cannot get resource \"secrets\" in API group \"\" in the namespace \"ns\""
        );
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        let e = forbidden(
            &user,
            &resource("list", "apps", "deployments", "status", "", ""),
        );
        assert_eq!(
            e.message,
            "deployments.apps is forbidden: User \"system:serviceaccount:ns:sa\" cannot list resource \"deployments/status\" in API group \"apps\" at the cluster scope"
        );
        let e = forbidden(
            &user,
            &Attributes {
                verb: "get".into(),
                resource: None,
                path: "/metrics".into(),
            },
        );
        assert_eq!(
            e.message,
            "forbidden: User \"system:serviceaccount:ns:sa\" cannot get path \"/metrics\""
        );
    }
}
