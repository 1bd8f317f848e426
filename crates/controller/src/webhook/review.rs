//! One AdmissionReview in, one out: a pure function of the request body, which never panics and
//! answers every body (a body that is no AdmissionReview gets a `400` answer, as
//! controller-runtime's webhooks give).

use super::Hook;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use snow_api::{Finding, admission, finding_text::one_line};

/// The API group and version of the kinds the webhooks review.
const GROUP: &str = "anywhere.eks.amazonaws.com";
const VERSION: &str = "v1alpha1";
/// The AdmissionReview versions answered (EKS Anywhere's webhooks accept both).
const REVIEW_VERSIONS: [&str; 2] = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"];
/// The most findings a denial lists (the rest are counted), and the most warnings returned.
pub const MAX_LISTED: usize = 50;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review {
    api_version: String,
    kind: String,
    request: Option<Request>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    uid: String,
    kind: GroupVersionKind,
    operation: String,
    #[serde(default)]
    object: Value,
    #[serde(default)]
    old_object: Value,
}

#[derive(Deserialize)]
struct GroupVersionKind {
    #[serde(default)]
    group: String,
    version: String,
    kind: String,
}

/// The AdmissionReview answering `body` (an AdmissionReview `admission.k8s.io/v1` or `v1beta1`)
/// for `hook`: allowed, denied (`403 Forbidden`, every error finding in the message, one a
/// line, as `snowctl validate` words it), or a request that cannot be reviewed (`400`, why).
/// Warnings go back as the response's warnings; the defaulting hook answers with a JSONPatch.
pub fn review(hook: Hook, body: &[u8]) -> Value {
    let review: Review = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return errored(None, "", format!("the body is not an AdmissionReview: {e}")),
    };
    let version = review.api_version.as_str();
    if !REVIEW_VERSIONS.contains(&version) || review.kind != "AdmissionReview" {
        let why = format!(
            "`{}` `{}` is not an AdmissionReview of {}",
            snow_api::finding::shorten(version),
            snow_api::finding::shorten(&review.kind),
            REVIEW_VERSIONS.join(" or ")
        );
        return errored(None, "", why);
    }
    let Some(request) = review.request else {
        return errored(
            Some(version),
            "",
            "the AdmissionReview has no request".into(),
        );
    };
    let uid = request.uid.as_str();
    let expected = hook.kind().as_str();
    let gvk = &request.kind;
    if gvk.group != GROUP || gvk.version != VERSION || gvk.kind != expected {
        let why = format!(
            "{} reviews {expected} of {GROUP}/{VERSION}, not `{}` of `{}/{}`",
            hook.path(),
            snow_api::finding::shorten(&gvk.kind),
            snow_api::finding::shorten(&gvk.group),
            snow_api::finding::shorten(&gvk.version)
        );
        return errored(Some(version), uid, why);
    }
    let old = match request.operation.as_str() {
        "CREATE" => None,
        "UPDATE" if request.old_object.is_object() => Some(&request.old_object),
        "UPDATE" => {
            let why = "an UPDATE request without oldObject".to_owned();
            return errored(Some(version), uid, why);
        }
        // Deletes and connects are not the webhooks' (EKS Anywhere's allow them).
        _ => return answer(version, allowed(uid)),
    };
    let object = &request.object;
    if object["kind"] != expected || !object["metadata"].is_object() {
        let why = format!("the request's object is not a {expected} with metadata");
        return errored(Some(version), uid, why);
    }
    if hook.is_mutating() {
        return answer(version, defaulted(uid, object));
    }
    let findings = admission::review(object, old);
    answer(version, verdict(uid, &findings))
}

fn answer(api_version: &str, response: Value) -> Value {
    json!({"apiVersion": api_version, "kind": "AdmissionReview", "response": response})
}

fn allowed(uid: &str) -> Value {
    json!({"uid": uid, "allowed": true})
}

/// A request that cannot be reviewed: controller-runtime's `Errored(400, …)`.
fn errored(api_version: Option<&str>, uid: &str, message: String) -> Value {
    let response = json!({"uid": uid, "allowed": false,
        "status": {"code": 400, "message": message}});
    answer(api_version.unwrap_or(REVIEW_VERSIONS[0]), response)
}

/// Up to [`MAX_LISTED`] lines, then how many more there are.
fn listed<'a>(findings: impl Iterator<Item = &'a Finding>) -> Vec<String> {
    let all: Vec<&Finding> = findings.collect();
    let mut lines: Vec<String> = all.iter().take(MAX_LISTED).map(|f| one_line(f)).collect();
    if all.len() > MAX_LISTED {
        lines.push(format!("… and {} more", all.len() - MAX_LISTED));
    }
    lines
}

/// Denied when a finding is an error (controller-runtime's `Denied`: `403`, reason `Forbidden`).
fn verdict(uid: &str, findings: &[Finding]) -> Value {
    let errors = listed(findings.iter().filter(|f| f.is_error()));
    let warnings = listed(findings.iter().filter(|f| !f.is_error()));
    let mut response = allowed(uid);
    if !errors.is_empty() {
        response["allowed"] = false.into();
        response["status"] = json!({"code": 403, "reason": "Forbidden",
            "message": errors.join("\n")});
    }
    if !warnings.is_empty() {
        response["warnings"] = warnings.into();
    }
    response
}

/// `spec.instanceType` → `/spec/instanceType` (RFC 6901).
fn pointer(field: &str) -> String {
    field
        .split('.')
        .map(|part| format!("/{}", part.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The defaulting hook: a JSONPatch setting what is empty (EKS Anywhere's mutating webhook for
/// SnowMachineConfig). A config without a `spec` object is left for the validating hook.
fn defaulted(uid: &str, object: &Value) -> Value {
    let defaults = admission::machine_config_defaults(object);
    if defaults.is_empty() || !object["spec"].is_object() {
        return allowed(uid);
    }
    let patch: Vec<Value> = defaults
        .into_iter()
        .map(|(field, value)| json!({"op": "add", "path": pointer(&field), "value": value}))
        .collect();
    let bytes = serde_json::to_vec(&patch).unwrap_or_default();
    let mut response = allowed(uid);
    response["patchType"] = "JSONPatch".into();
    response["patch"] = base64::engine::general_purpose::STANDARD
        .encode(bytes)
        .into();
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_become_json_pointers() {
        assert_eq!(pointer("spec.instanceType"), "/spec/instanceType");
        assert_eq!(pointer("a/b.c~d"), "/a~1b/c~0d");
    }

    #[test]
    fn a_long_list_is_cut_with_a_count() {
        let findings: Vec<Finding> = (0..MAX_LISTED + 3)
            .map(|i| Finding::error("x", format!("m{i}")))
            .collect();
        let lines = listed(findings.iter());
        assert_eq!(lines.len(), MAX_LISTED + 1);
        assert_eq!(lines.last().map(String::as_str), Some("… and 3 more"));
    }
}
