//! Kubernetes `Status` errors, the shape kube parses into `kube::Error::Api`.

use serde_json::{Value, json};

/// A failed request, answered as a Kubernetes `Status` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code (`code` in the Status).
    pub code: u16,
    /// `reason`: NotFound, AlreadyExists, Conflict, BadRequest, Invalid, Unauthorized,
    /// Forbidden, Gone, MethodNotAllowed, UnsupportedMediaType, InternalError, or the reason of
    /// an admission webhook's denial (empty when it gave none, or none Kubernetes defines).
    pub reason: &'static str,
    /// Human-readable `message`, worded like the real server's.
    pub message: String,
    /// `details.name`.
    pub name: String,
    /// `details.group`.
    pub group: String,
    /// `details.kind` (the resource's plural, as the real server puts it).
    pub kind: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// An error without details.
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            name: String::new(),
            group: String::new(),
            kind: String::new(),
        }
    }

    /// With `details` naming the object.
    pub(crate) fn about(mut self, group: &str, plural: &str, name: &str) -> ApiError {
        self.group = group.to_owned();
        self.kind = plural.to_owned();
        self.name = name.to_owned();
        self
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(422, "Invalid", message)
    }

    /// `<plural>.<group> "name" not found`.
    pub(crate) fn not_found(group: &str, plural: &str, name: &str) -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(group, plural)),
        )
        .about(group, plural, name)
    }

    /// The resource itself is not served.
    pub(crate) fn no_resource() -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    pub(crate) fn already_exists(group: &str, plural: &str, name: &str) -> ApiError {
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(group, plural)),
        )
        .about(group, plural, name)
    }

    /// A stale resourceVersion.
    pub(crate) fn stale(group: &str, plural: &str, name: &str) -> ApiError {
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                qualified(group, plural)
            ),
        )
        .about(group, plural, name)
    }

    /// The Status JSON.
    pub fn to_json(&self) -> Value {
        let mut details = serde_json::Map::new();
        if !self.name.is_empty() {
            details.insert("name".into(), json!(self.name));
        }
        if !self.group.is_empty() {
            details.insert("group".into(), json!(self.group));
        }
        if !self.kind.is_empty() {
            details.insert("kind".into(), json!(self.kind));
        }
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        });
        if !self.reason.is_empty() {
            status["reason"] = json!(self.reason);
        }
        if !details.is_empty() {
            status["details"] = Value::Object(details);
        }
        status
    }
}

/// `plural.group`, or `plural` for the core group.
pub(crate) fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    }
}
