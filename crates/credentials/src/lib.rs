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
//! - [`CredentialsWriter`]: writes a credentials file of one profile per device (0600, atomic,
//!   never over a file it did not write unless told), holding each [`AccessKey`] as a secret.
//! - [`SshKeyPair`]: the default RSA-4096 SSH key pair; [`RegistryCredentials`]: the registry
//!   mirror's login and its Secret.
//!
//! No network IO; the only IO is reading the two files ([`load_credentials`],
//! [`load_ca_bundle`]) and writing a credentials file ([`CredentialsWriter`]). Secrets are
//! reachable only through the code that signs, encodes or writes them.

pub mod bundle;
mod check;
pub mod encode;
// The fuzz targets' bodies: public only for `fuzz/` (a separate package) and this crate's
// never-panic tests, not API (hidden from the docs; a feature would make every test build
// select it).
#[doc(hidden)]
pub mod fuzz;
pub mod ini;
mod input;
pub mod limits;
pub mod provider;
pub mod registry;
mod report;
pub mod secret;
pub mod ssh_key;
pub mod write;

pub use bundle::{BundleCertificate, CaBundle, Coverage, KeyAlgorithm, format_utc};
pub use check::{CheckReport, DeviceStatus, EXPIRY_WARNING_DAYS, check};
pub use encode::{
    ClusterctlEnv, KubeSecret, SecretDecodeError, SecretMetadata, capas_bootstrap_secret,
    capas_cluster_secret, capas_cluster_secret_name, decode_eksa_credentials_secret,
    eksa_identity_secret,
};
pub use ini::{CredentialsFile, DeviceCredentials, SNOW_REGION};
pub use input::{
    InputError, MAX_CA_BUNDLE_BYTES, MAX_CREDENTIALS_BYTES, load_ca_bundle, load_credentials,
};
pub use provider::DeviceCredentialsProvider;
pub use registry::{RegistryCredentials, registry_credentials_secret};
pub use report::{Checked, inputs_summary};
pub use rustls_pki_types::UnixTime;
pub use secret::{SecretBytes, SecretString};
pub use ssh_key::{SshKeyPair, default_key_name};
pub use write::{AccessKey, CredentialsWriter, WRITTEN_HEADER, WriteError};

/// Whether a finding with this check id is in the list.
pub fn has_check(findings: &[snow_api::Finding], check: &str) -> bool {
    findings.iter().any(|f| f.check == check)
}
