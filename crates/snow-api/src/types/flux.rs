//! `anywhere.eks.amazonaws.com/v1alpha1` `FluxConfig`: where a cluster's GitOps repository is and
//! how Flux reads it (EKS Anywhere's `pkg/api/v1alpha1/fluxconfig_types.go`, every field of its
//! CRD). The rules and defaults are in [`crate::gitops`].

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of Flux for a cluster: one git provider (`github` or `git`), the branch,
/// the path of the cluster's files in the repository and Flux's namespace.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "anywhere.eks.amazonaws.com",
    version = "v1alpha1",
    kind = "FluxConfig",
    plural = "fluxconfigs",
    namespaced,
    status = "FluxConfigStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct FluxConfigSpec {
    /// The git branch Flux syncs from; `main` when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The directory of the cluster's files in the repository; `clusters/<management cluster>`
    /// when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_config_path: Option<String>,
    /// A generic git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitProviderConfig>,
    /// A GitHub repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<GithubProviderConfig>,
    /// The namespace Flux runs in; `flux-system` when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_namespace: Option<String>,
}

/// A GitHub repository (`github.com/<owner>/<repository>`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GithubProviderConfig {
    /// The user or organisation that owns the repository (required).
    #[serde(default)]
    pub owner: String,
    /// Whether the owner is a user (`true`) or an organisation (`false`, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personal: Option<bool>,
    /// The repository's name (required).
    #[serde(default)]
    pub repository: String,
}

/// A generic git repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitProviderConfig {
    /// The repository's URL: `ssh://` (as EKS Anywhere) or `https://` (snowctl only) (required).
    #[serde(default)]
    pub repository_url: String,
    /// The SSH key algorithm: `rsa`, `ecdsa` (when empty) or `ed25519`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_key_algorithm: Option<String>,
}

/// FluxConfig status (empty, as EKS Anywhere's).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct FluxConfigStatus {}
