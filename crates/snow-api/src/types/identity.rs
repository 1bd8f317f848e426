//! The identity providers a Cluster can reference: `OIDCConfig` and `AWSIamConfig`. Snow renders
//! both into the API server's arguments.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An OpenID Connect provider for the API server.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "OIDCConfig",
    plural = "oidcconfigs",
    namespaced,
    status = "IdentityStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct OIDCConfigSpec {
    /// The client id tokens are issued for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The claim holding the user's groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups_claim: Option<String>,
    /// Prefix for group names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups_prefix: Option<String>,
    /// The issuer URL (https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_url: Option<String>,
    /// Claims a token must carry (one is supported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_claims: Option<Vec<OidcRequiredClaim>>,
    /// The claim holding the user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username_claim: Option<String>,
    /// Prefix for user names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username_prefix: Option<String>,
}

/// A claim and the value it must have.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct OidcRequiredClaim {
    /// The claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// Its required value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Status of an identity provider object (empty).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct IdentityStatus {}

/// AWS IAM Authenticator for the API server.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "AWSIamConfig",
    plural = "awsiamconfigs",
    namespaced,
    status = "IdentityStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct AWSIamConfigSpec {
    /// The AWS region of the IAM entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_region: Option<String>,
    /// Where mappings come from (`EKSConfigMap`, `CRD`, `MountedFile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_mode: Option<Vec<String>>,
    /// IAM roles mapped to Kubernetes users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_roles: Option<Vec<MapRole>>,
    /// IAM users mapped to Kubernetes users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_users: Option<Vec<MapUser>>,
    /// The AWS partition (default `aws`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
}

/// An IAM role mapping.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapRole {
    /// The role ARN.
    #[serde(default, rename = "roleARN", skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
    /// The Kubernetes user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Kubernetes groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}

/// An IAM user mapping.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapUser {
    /// The user ARN.
    #[serde(default, rename = "userARN", skip_serializing_if = "Option::is_none")]
    pub user_arn: Option<String>,
    /// The Kubernetes user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Kubernetes groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}
