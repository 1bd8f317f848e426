//! How each Cluster API contract shapes an object.
//!
//! v1beta1 (CAPAS 0.1/0.2): references carry `apiVersion`, `extraArgs` are maps. v1beta2 (CAPAS
//! 0.3): references carry `apiGroup`, `extraArgs` are `{name, value}` lists, and empty lists are
//! left out (the schema requires at least one item). Which contract a cluster follows is decided
//! when the release is resolved ([`snow_api::release::Release`]).

use serde_json::{Map, Value, json};
pub use snow_api::release::{Contract, ETCD_API_VERSION, INFRA_API_VERSION};

/// The object shapes of a contract.
pub(crate) trait Shape {
    /// An object reference to a CAPI or CAPAS object.
    fn reference(self, api_version: &str, kind: &str, name: &str) -> Value;
    /// Ordered `(name, value)` arguments as the contract writes them.
    fn args(self, args: &[(String, String)]) -> Value;
    /// Whether empty lists must be left out (v1beta2 schemas require at least one item).
    fn omits_empty_lists(self) -> bool;
}

impl Shape for Contract {
    fn reference(self, api_version: &str, kind: &str, name: &str) -> Value {
        match self {
            Contract::V1Beta1 => json!({"apiVersion": api_version, "kind": kind, "name": name}),
            Contract::V1Beta2 => {
                let group = api_version.split('/').next().unwrap_or(api_version);
                json!({"apiGroup": group, "kind": kind, "name": name})
            }
        }
    }

    fn args(self, args: &[(String, String)]) -> Value {
        match self {
            Contract::V1Beta1 => Value::Object(
                args.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect::<Map<_, _>>(),
            ),
            Contract::V1Beta2 => Value::Array(
                args.iter()
                    .map(|(k, v)| json!({"name": k, "value": v}))
                    .collect(),
            ),
        }
    }

    fn omits_empty_lists(self) -> bool {
        self == Contract::V1Beta2
    }
}
