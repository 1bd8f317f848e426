//! The CRDs of the four EKS Anywhere Snow kinds, generated from the Rust types.

use crate::types::{
    cluster::Cluster,
    identity::{AWSIamConfig, OIDCConfig},
    snow::{SnowDatacenterConfig, SnowIPPool, SnowMachineConfig},
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube::CustomResourceExt;
use std::sync::LazyLock;

/// The kinds snowctl reads from a cluster spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `Cluster`.
    Cluster,
    /// `SnowDatacenterConfig`.
    SnowDatacenterConfig,
    /// `SnowMachineConfig`.
    SnowMachineConfig,
    /// `SnowIPPool`.
    SnowIPPool,
    /// `OIDCConfig` (an identity provider the Cluster may reference).
    OIDCConfig,
    /// `AWSIamConfig` (an identity provider the Cluster may reference).
    AWSIamConfig,
}

impl Kind {
    /// Every kind a Snow cluster spec may hold, in the order documents are usually written.
    pub const ALL: [Kind; 6] = [
        Kind::Cluster,
        Kind::SnowDatacenterConfig,
        Kind::SnowMachineConfig,
        Kind::SnowIPPool,
        Kind::OIDCConfig,
        Kind::AWSIamConfig,
    ];

    /// The four kinds of the Snow provider, whose CRDs snowctl serves (`snowctl crds`).
    pub const SNOW: [Kind; 4] = [
        Kind::Cluster,
        Kind::SnowDatacenterConfig,
        Kind::SnowMachineConfig,
        Kind::SnowIPPool,
    ];

    /// The `kind` string.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Cluster => "Cluster",
            Kind::SnowDatacenterConfig => "SnowDatacenterConfig",
            Kind::SnowMachineConfig => "SnowMachineConfig",
            Kind::SnowIPPool => "SnowIPPool",
            Kind::OIDCConfig => "OIDCConfig",
            Kind::AWSIamConfig => "AWSIamConfig",
        }
    }

    /// The kind named by a `kind` string.
    pub fn from_name(kind: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == kind)
    }

    /// The CRD of this kind.
    pub fn crd(self) -> CustomResourceDefinition {
        let mut crd = match self {
            Kind::Cluster => Cluster::crd(),
            Kind::SnowDatacenterConfig => SnowDatacenterConfig::crd(),
            Kind::SnowMachineConfig => SnowMachineConfig::crd(),
            Kind::SnowIPPool => SnowIPPool::crd(),
            Kind::OIDCConfig => OIDCConfig::crd(),
            Kind::AWSIamConfig => AWSIamConfig::crd(),
        };
        add_object_meta_fields(&mut crd);
        crd
    }

    /// The OpenAPI v3 schema of this kind, as JSON (built once).
    pub fn schema(self) -> &'static serde_json::Value {
        static SCHEMAS: LazyLock<[serde_json::Value; 6]> =
            LazyLock::new(|| Kind::ALL.map(|kind| openapi_schema(&kind.crd())));
        let index = Kind::ALL.iter().position(|k| *k == self).unwrap_or(0);
        &SCHEMAS[index]
    }
}

/// kube's derive leaves `apiVersion`, `kind` and `metadata` out of the schema; controller-gen
/// (and so EKS Anywhere's CRDs) lists them, and strict typing needs them.
fn add_object_meta_fields(crd: &mut CustomResourceDefinition) {
    let schema = crd
        .spec
        .versions
        .iter_mut()
        .filter_map(|v| v.schema.as_mut())
        .filter_map(|s| s.open_api_v3_schema.as_mut());
    for schema in schema {
        let props = schema.properties.get_or_insert_with(Default::default);
        let string = |description: &str| JSONSchemaProps {
            type_: Some("string".into()),
            description: Some(description.into()),
            ..Default::default()
        };
        props.insert(
            "apiVersion".into(),
            string("APIVersion defines the versioned schema of this representation of an object."),
        );
        props.insert(
            "kind".into(),
            string("Kind is a string value representing the REST resource this object represents."),
        );
        props.insert(
            "metadata".into(),
            JSONSchemaProps {
                type_: Some("object".into()),
                ..Default::default()
            },
        );
    }
}

fn openapi_schema(crd: &CustomResourceDefinition) -> serde_json::Value {
    crd.spec
        .versions
        .first()
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// The CRDs of the four Snow kinds.
pub fn crds() -> Vec<CustomResourceDefinition> {
    Kind::SNOW.into_iter().map(Kind::crd).collect()
}

/// A CRD could not be written as YAML (a bug: they are built from code).
#[derive(Debug, thiserror::Error)]
#[error("could not serialise a CRD: {0}")]
pub struct CrdYamlError(String);

/// The [`crds`] as one multi-document YAML stream, for `kubectl apply -f -`.
pub fn crds_yaml() -> Result<String, CrdYamlError> {
    let mut out = String::new();
    for crd in crds() {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&crd).map_err(|e| CrdYamlError(e.to_string()))?);
    }
    Ok(out)
}
