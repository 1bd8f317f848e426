//! The CRDs of the four EKS Anywhere Snow kinds and of FluxConfig, generated from the Rust types.

use crate::types::{
    cluster::Cluster,
    flux::FluxConfig,
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
    /// `FluxConfig` (the GitOps repository the Cluster's `gitOpsRef` names).
    FluxConfig,
}

impl Kind {
    /// Every kind a Snow cluster spec may hold, in the order documents are usually written.
    pub const ALL: [Kind; 7] = [
        Kind::Cluster,
        Kind::SnowDatacenterConfig,
        Kind::SnowMachineConfig,
        Kind::SnowIPPool,
        Kind::OIDCConfig,
        Kind::AWSIamConfig,
        Kind::FluxConfig,
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
            Kind::FluxConfig => "FluxConfig",
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
            Kind::FluxConfig => FluxConfig::crd(),
        };
        add_object_meta_fields(&mut crd);
        if self == Kind::FluxConfig {
            flux_config_schema(&mut crd);
        }
        crd
    }

    /// The OpenAPI v3 schema of this kind, as JSON (built once).
    pub fn schema(self) -> &'static serde_json::Value {
        static SCHEMAS: LazyLock<[serde_json::Value; 7]> =
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

/// What EKS Anywhere's FluxConfig CRD (`anywhere.eks.amazonaws.com_fluxconfigs.yaml`) says that
/// the derive cannot: `branch` defaults to `main`, `github` requires `owner` and `repository`,
/// `git` requires `repositoryUrl` (the Rust fields default to `""` so that a missing one is one
/// finding, not an unreadable object).
fn flux_config_schema(crd: &mut CustomResourceDefinition) {
    let specs = crd
        .spec
        .versions
        .iter_mut()
        .filter_map(|v| v.schema.as_mut())
        .filter_map(|s| s.open_api_v3_schema.as_mut())
        .filter_map(|s| s.properties.as_mut())
        .filter_map(|p| p.get_mut("spec"))
        .filter_map(|s| s.properties.as_mut());
    for spec in specs {
        if let Some(branch) = spec.get_mut("branch") {
            branch.default = Some(
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON(
                    serde_json::Value::String(crate::gitops::DEFAULT_BRANCH.into()),
                ),
            );
        }
        for (provider, required) in [
            ("github", &["owner", "repository"][..]),
            ("git", &["repositoryUrl"][..]),
        ] {
            if let Some(p) = spec.get_mut(provider) {
                p.required = Some(required.iter().map(|r| (*r).to_owned()).collect());
                // The derive writes the Rust default (`""`) out; a required field has none.
                for field in p.properties.iter_mut().flat_map(|props| props.values_mut()) {
                    if field.type_.as_deref() == Some("string") {
                        field.default = None;
                    }
                }
            }
        }
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

/// The CRDs `snowctl crds` prints: the four Snow kinds and FluxConfig.
pub fn crds() -> Vec<CustomResourceDefinition> {
    Kind::SNOW
        .into_iter()
        .chain([Kind::FluxConfig])
        .map(Kind::crd)
        .collect()
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
