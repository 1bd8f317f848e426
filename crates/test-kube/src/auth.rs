//! Authentication: who a request is. The admin bearer token is `kubernetes-admin` in
//! `system:masters` (every request allowed); a ServiceAccount token, issued by the TokenRequest
//! subresource or [`crate::KubeStandIn::service_account_kubeconfig`], is
//! `system:serviceaccount:NS:NAME` in the ServiceAccount groups, authorized by RBAC. A token is
//! bound to the ServiceAccount's uid: once that ServiceAccount is deleted (or recreated) or the
//! token expires, the token is refused (401), as a real API server refuses a bound token.

use super::clock;
use super::registry::ResourceType;
use super::status::ApiError;
use super::store::Store;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The admin's user name (kubeadm's and kind's admin kubeconfig user).
pub(crate) const ADMIN: &str = "kubernetes-admin";

/// TokenRequest's default lifetime, and the least it accepts (the API server's bounds).
const DEFAULT_EXPIRATION: u64 = 3600;
const MIN_EXPIRATION: u64 = 600;

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) groups: Vec<String>,
}

impl User {
    /// The holder of the admin token.
    pub(crate) fn admin() -> User {
        User {
            name: ADMIN.to_owned(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        }
    }

    /// A ServiceAccount, as the API server's token authenticator names it.
    pub(crate) fn service_account(namespace: &str, name: &str, uid: &str) -> User {
        User {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            uid: uid.to_owned(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
        }
    }

    /// `system:masters` bypasses authorization, as in a real API server.
    pub(crate) fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == "system:masters")
    }

    /// AdmissionReview's `userInfo`.
    pub(crate) fn info(&self) -> Value {
        let mut info = json!({"username": self.name, "groups": self.groups});
        if !self.uid.is_empty() {
            info["uid"] = json!(self.uid);
        }
        info
    }
}

/// A token issued for a ServiceAccount.
#[derive(Clone)]
struct Issued {
    namespace: String,
    name: String,
    uid: String,
    expires: SystemTime,
}

/// The ServiceAccount tokens issued (their values never shown by `Debug`).
#[derive(Default)]
pub(crate) struct Tokens(Mutex<HashMap<String, Issued>>);

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|t| t.len()).unwrap_or_default();
        write!(f, "Tokens({n} issued)")
    }
}

fn service_accounts() -> ResourceType {
    ResourceType::new("v1", "ServiceAccount", "serviceaccounts", true, false)
}

impl Tokens {
    /// A new token for the ServiceAccount `namespace/name`, which must exist; valid for
    /// `seconds`. Returns the token and when it expires.
    pub(crate) fn issue(
        &self,
        store: &Store,
        namespace: &str,
        name: &str,
        seconds: u64,
    ) -> Result<(String, SystemTime), ApiError> {
        let sa = store.get(&service_accounts(), Some(namespace), name)?;
        let token = clock::token();
        let expires = SystemTime::now() + Duration::from_secs(seconds);
        let issued = Issued {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            uid: sa["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            expires,
        };
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(token.clone(), issued);
        Ok((token, expires))
    }

    /// The ServiceAccount `token` stands for, while it is unexpired and its ServiceAccount (the
    /// same uid) exists.
    pub(crate) fn user(&self, store: &Store, token: &str) -> Option<User> {
        let issued = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(token)
            .cloned()?;
        if issued.expires <= SystemTime::now() {
            return None;
        }
        let sa = store
            .get(&service_accounts(), Some(&issued.namespace), &issued.name)
            .ok()?;
        (sa["metadata"]["uid"].as_str() == Some(issued.uid.as_str()))
            .then(|| User::service_account(&issued.namespace, &issued.name, &issued.uid))
    }
}

/// `POST .../serviceaccounts/NAME/token`: a TokenRequest answered with a token.
pub(crate) fn token_request(
    tokens: &Tokens,
    store: &Store,
    namespace: &str,
    name: &str,
    body: &Value,
) -> Result<Value, ApiError> {
    let requested = &body["spec"]["expirationSeconds"];
    let seconds = if requested.is_null() {
        DEFAULT_EXPIRATION
    } else {
        match requested.as_u64() {
            Some(s) if s >= MIN_EXPIRATION => s,
            _ => {
                return Err(ApiError::invalid(format!(
                    "TokenRequest.authentication.k8s.io \"{name}\" is invalid: spec.expirationSeconds: Invalid value: {requested}: may not specify a duration less than 10 minutes"
                )));
            }
        }
    };
    let (token, expires) = tokens.issue(store, namespace, name, seconds)?;
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": clock::now_rfc3339()},
        "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": seconds},
        "status": {"token": token, "expirationTimestamp": clock::rfc3339(expires)},
    }))
}
