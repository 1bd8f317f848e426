//! The EKS Anywhere kinds snowctl reads, as Rust types with kube's `CustomResource` derive, so the
//! same types give the CRDs (`crate::crd`).

pub mod cluster;
pub mod flux;
pub mod identity;
pub mod snow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The API group and version of every EKS Anywhere kind.
pub const API_VERSION: &str = "anywhere.eks.amazonaws.com/v1alpha1";

/// A reference to another object by kind and name (same namespace).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct NamedRef {
    /// The referenced kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The referenced name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl NamedRef {
    /// A reference to `kind/name`.
    pub fn new(kind: &str, name: &str) -> Self {
        NamedRef {
            kind: Some(kind.to_owned()),
            name: Some(name.to_owned()),
        }
    }

    /// The kind, or "" when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }

    /// The name, or "" when absent.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
}

/// Free-form content: any YAML is kept as is.
pub(crate) fn preserve_unknown_fields(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// A free-form object.
pub(crate) fn preserve_unknown_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
}

/// An RFC 3339 timestamp.
pub(crate) fn date_time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "format": "date-time" })
}
