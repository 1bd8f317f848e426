//! Snow device credentials and CA bundle: make the two hand-assembled files trustworthy before
//! anything uses them, and never leak a secret.
//!
//! - [`CredentialsFile::parse`]: the AWS credentials INI, one profile per device IP, with a
//!   finding (file, line, column, hint) for everything wrong; keys are [`SecretString`]s.
//! - [`CaBundle::parse`]: the PEM bundle, each certificate inspected.
//! - [`check`]: expiry and device coverage across both files, plus the per-device table.
//! - [`ClusterctlEnv`], [`eksa_identity_secret`], [`capas_cluster_secret`],
//!   [`capas_bootstrap_secret`]: the encodings CAPAS and EKS-A read.
//! - [`DeviceCredentialsProvider`]: static per-device credentials for the AWS SDK.
//!
//! No network IO; the only IO is reading the two files ([`load_credentials`],
//! [`load_ca_bundle`]). Secrets are reachable only through the code that signs or encodes.

pub mod bundle;
mod check;
pub mod encode;
pub mod fuzz;
pub mod ini;
mod input;
pub mod limits;
pub mod provider;
pub mod registry;
mod report;
pub mod secret;

pub use bundle::{BundleCertificate, CaBundle, Coverage, KeyAlgorithm, format_utc};
pub use check::{CheckReport, DeviceStatus, EXPIRY_WARNING_DAYS, check};
pub use encode::{
    ClusterctlEnv, KubeSecret, SecretMetadata, capas_bootstrap_secret, capas_cluster_secret,
    capas_cluster_secret_name, eksa_identity_secret,
};
pub use ini::{CredentialsFile, DeviceCredentials, SNOW_REGION};
pub use input::{
    InputError, MAX_CA_BUNDLE_BYTES, MAX_CREDENTIALS_BYTES, load_ca_bundle, load_credentials,
};
pub use provider::DeviceCredentialsProvider;
pub use registry::RegistryLogin;
pub use report::inputs_summary;
pub use rustls_pki_types::UnixTime;
pub use secret::{SecretBytes, SecretString};

/// Whether a finding with this check id is in the list.
pub fn has_check(findings: &[snow_api::Finding], check: &str) -> bool {
    findings.iter().any(|f| f.check == check)
}
