//! The encodings CAPAS and EKS Anywhere read (EKS Anywhere's `pkg/aws` and Snow credentials Secret), byte for byte.
//!
//! - clusterctl variables `AWS_B64ENCODED_CREDENTIALS` / `AWS_B64ENCODED_CA_BUNDLES`: standard
//!   base64 with padding of the file bytes. clusterctl substitutes them into the `data` of
//!   `capas-system/capas-manager-bootstrap-credentials`, so that Secret holds the raw files.
//! - the EKS-A identity Secret (`identityRef.name`) and the per-cluster CAPAS Secret
//!   `<cluster>-snow-credentials`: their *values* are the base64 text, so serialised `data` is
//!   base64(base64(file)). CAPAS decodes the value once more.
//!
//! - Flux's source Secret (the GitOps repository's key or login), in [`git`].
//!
//! [`decode_eksa_credentials_secret`] reads the latter two back as EKS Anywhere's controller
//! does (the snowctl controller reads a declared cluster's identity Secret with it).

pub mod git;

use crate::bundle::CaBundle;
use crate::ini::CredentialsFile;
use crate::secret::{REDACTED, SecretBytes, SecretString};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::io;

/// The clusterctl variable holding base64 of the credentials file.
pub const CREDENTIALS_VAR: &str = "AWS_B64ENCODED_CREDENTIALS";
/// The clusterctl variable holding base64 of the CA bundle.
pub const CA_BUNDLES_VAR: &str = "AWS_B64ENCODED_CA_BUNDLES";
/// The Secret key of the credentials file.
pub const CREDENTIALS_KEY: &str = "credentials";
/// The Secret key of the CA bundle.
pub const CA_BUNDLE_KEY: &str = "ca-bundle";
/// Namespace of the CAPAS controller.
pub const CAPAS_NAMESPACE: &str = "capas-system";
/// The Secret CAPAS reads its device credentials from.
pub const CAPAS_BOOTSTRAP_SECRET: &str = "capas-manager-bootstrap-credentials";
/// The namespace of the per-cluster CAPI/CAPAS objects.
pub const EKSA_SYSTEM_NAMESPACE: &str = snow_api::names::SYSTEM_NAMESPACE;
/// The label that makes `clusterctl move` carry an object along.
pub const CLUSTERCTL_MOVE_LABEL: &str = snow_api::names::CLUSTERCTL_MOVE_LABEL;
/// The provider label clusterctl puts on the CAPAS components.
pub const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";
/// The value of [`PROVIDER_LABEL`] for CAPAS.
pub const CAPAS_PROVIDER: &str = "infrastructure-aws-snow";

/// Standard base64 with padding, as Go's `base64.StdEncoding` writes it.
pub fn base64_standard(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The clusterctl environment for `clusterctl init|upgrade --infrastructure snow`.
///
/// `Debug` prints nothing secret. The values are handed out only to be passed to clusterctl
/// ([`ClusterctlEnv::vars`]) or written as shell exports ([`ClusterctlEnv::write_exports`]).
#[derive(Clone)]
pub struct ClusterctlEnv {
    credentials: SecretString,
    ca_bundles: String,
}

impl ClusterctlEnv {
    /// Encodes both files.
    pub fn new(credentials: &CredentialsFile, bundle: &CaBundle) -> Self {
        ClusterctlEnv {
            credentials: SecretString::new(base64_standard(
                credentials.content().expose_for_encoding(),
            )),
            ca_bundles: base64_standard(bundle.content()),
        }
    }

    /// `[(AWS_B64ENCODED_CREDENTIALS, …), (AWS_B64ENCODED_CA_BUNDLES, …)]`, for
    /// `Command::envs`.
    pub fn vars(&self) -> [(&'static str, &str); 2] {
        [
            (CREDENTIALS_VAR, self.credentials.expose_for_signing()),
            (CA_BUNDLES_VAR, self.ca_bundles.as_str()),
        ]
    }

    /// Writes `export NAME=value` lines (base64 needs no shell quoting).
    pub fn write_exports(&self, out: &mut dyn io::Write) -> io::Result<()> {
        for (name, value) in self.vars() {
            out.write_all(b"export ")?;
            out.write_all(name.as_bytes())?;
            out.write_all(b"=")?;
            out.write_all(value.as_bytes())?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ClusterctlEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterctlEnv")
            .field(CREDENTIALS_VAR, &REDACTED)
            .field(
                CA_BUNDLES_VAR,
                &format_args!("<{} chars>", self.ca_bundles.len()),
            )
            .finish()
    }
}

/// The metadata of a [`KubeSecret`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretMetadata {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.labels` (omitted when empty).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// A `v1 Secret` of type `Opaque`. Serialises like Kubernetes does: `data` values are base64 of
/// the stored bytes. `Debug` shows the keys and sizes, never the values.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeSecret {
    api_version: &'static str,
    kind: &'static str,
    metadata: SecretMetadata,
    #[serde(rename = "type")]
    type_: &'static str,
    #[serde(serialize_with = "serialize_data")]
    data: BTreeMap<String, SecretBytes>,
}

fn serialize_data<S: Serializer>(
    data: &BTreeMap<String, SecretBytes>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(
        data.iter()
            .map(|(k, v)| (k, base64_standard(v.expose_for_encoding()))),
    )
}

impl KubeSecret {
    pub(crate) fn new(
        name: String,
        namespace: String,
        labels: BTreeMap<String, String>,
        data: BTreeMap<String, SecretBytes>,
    ) -> Self {
        KubeSecret {
            api_version: "v1",
            kind: "Secret",
            metadata: SecretMetadata {
                name,
                namespace,
                labels,
            },
            type_: "Opaque",
            data,
        }
    }

    /// The metadata.
    pub fn metadata(&self) -> &SecretMetadata {
        &self.metadata
    }

    /// The keys of `data`.
    pub fn data_keys(&self) -> impl Iterator<Item = &str> {
        self.data.keys().map(String::as_str)
    }

    /// The Secret as JSON (`apiVersion`, `kind`, `metadata`, `type`, `data`), for the renderer
    /// or a kube client. Holds the secret, encoded.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl fmt::Debug for KubeSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let data: BTreeMap<&str, String> = self
            .data
            .iter()
            .map(|(k, v)| (k.as_str(), format!("{REDACTED} ({} bytes)", v.len())))
            .collect();
        f.debug_struct("KubeSecret")
            .field("metadata", &self.metadata)
            .field("data", &data)
            .finish()
    }
}

/// The value EKS-A stores under each key of its Secrets: the base64 *text* of the file.
fn base64_text(bytes: &[u8]) -> SecretBytes {
    SecretBytes::new(base64_standard(bytes).into_bytes())
}

fn data(credentials: SecretBytes, ca_bundle: SecretBytes) -> BTreeMap<String, SecretBytes> {
    BTreeMap::from([
        (CREDENTIALS_KEY.to_owned(), credentials),
        (CA_BUNDLE_KEY.to_owned(), ca_bundle),
    ])
}

/// The EKS-A credentials Secret named by `SnowDatacenterConfig.spec.identityRef.name`, in the
/// datacenter's namespace. Its values are base64 text (serialised: base64(base64(file))).
pub fn eksa_identity_secret(
    name: &str,
    namespace: &str,
    credentials: &CredentialsFile,
    bundle: &CaBundle,
) -> KubeSecret {
    KubeSecret::new(
        name.to_owned(),
        namespace.to_owned(),
        BTreeMap::new(),
        data(
            base64_text(credentials.content().expose_for_encoding()),
            base64_text(bundle.content()),
        ),
    )
}

/// The name of the per-cluster CAPAS Secret: `<cluster>-snow-credentials`.
pub fn capas_cluster_secret_name(cluster: &str) -> String {
    format!("{cluster}-snow-credentials")
}

/// The per-cluster CAPAS Secret `<cluster>-snow-credentials` in `eksa-system`, with the
/// clusterctl move label. Same values as the EKS-A identity Secret (base64 text).
pub fn capas_cluster_secret(
    cluster: &str,
    credentials: &CredentialsFile,
    bundle: &CaBundle,
) -> KubeSecret {
    KubeSecret::new(
        capas_cluster_secret_name(cluster),
        EKSA_SYSTEM_NAMESPACE.to_owned(),
        BTreeMap::from([(CLUSTERCTL_MOVE_LABEL.to_owned(), "true".to_owned())]),
        data(
            base64_text(credentials.content().expose_for_encoding()),
            base64_text(bundle.content()),
        ),
    )
}

/// `capas-system/capas-manager-bootstrap-credentials` as clusterctl creates it from
/// [`ClusterctlEnv`]: the values are the raw files (serialised: base64(file)).
pub fn capas_bootstrap_secret(credentials: &CredentialsFile, bundle: &CaBundle) -> KubeSecret {
    KubeSecret::new(
        CAPAS_BOOTSTRAP_SECRET.to_owned(),
        CAPAS_NAMESPACE.to_owned(),
        BTreeMap::from([(PROVIDER_LABEL.to_owned(), CAPAS_PROVIDER.to_owned())]),
        data(
            SecretBytes::new(credentials.content().expose_for_encoding().to_vec()),
            SecretBytes::new(bundle.content().to_vec()),
        ),
    )
}

/// Why an EKS Anywhere credentials Secret (the identity Secret or `<cluster>-snow-credentials`)
/// does not read back as the two device files. Says which key, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretDecodeError {
    /// `data` lacks the key.
    #[error("the identity Secret {secret} has no `{key}`")]
    MissingKey {
        /// `namespace/name` of the Secret.
        secret: String,
        /// The key.
        key: &'static str,
    },
    /// The value is not base64 (as a Kubernetes client decodes `data`).
    #[error("`{key}` of Secret {secret} is not base64: {reason}")]
    NotBase64 {
        /// `namespace/name` of the Secret.
        secret: String,
        /// The key.
        key: &'static str,
        /// The base64 decoder's error.
        reason: String,
    },
    /// The value decoded once is not base64 text (EKS Anywhere stores the files' base64 text).
    #[error("`{key}` of Secret {secret} does not hold base64 text: {reason}")]
    NotBase64Text {
        /// `namespace/name` of the Secret.
        secret: String,
        /// The key.
        key: &'static str,
        /// The base64 decoder's error.
        reason: String,
    },
    /// The file decoded has an error finding (its message).
    #[error("{message}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// The first error finding's message.
        message: String,
    },
}

/// Reads back what [`eksa_identity_secret`] and [`capas_cluster_secret`] write, as EKS Anywhere's
/// controller reads its identity Secret: `secret` is the Secret as JSON (`data` as an API server
/// serves it, base64 of the stored value), each value is the base64 text of a file, so each is
/// decoded twice (whitespace in the text ignored); both files are parsed and an error finding
/// refuses them. `name` is how errors and the files' sources name the Secret (`namespace/name`).
pub fn decode_eksa_credentials_secret(
    name: &str,
    secret: &serde_json::Value,
) -> Result<(CredentialsFile, CaBundle), SecretDecodeError> {
    let field = |key: &'static str| -> Result<Vec<u8>, SecretDecodeError> {
        let outer = secret["data"][key]
            .as_str()
            .ok_or_else(|| SecretDecodeError::MissingKey {
                secret: name.to_owned(),
                key,
            })?;
        let inner = zeroize::Zeroizing::new(STANDARD.decode(outer).map_err(|e| {
            SecretDecodeError::NotBase64 {
                secret: name.to_owned(),
                key,
                reason: e.to_string(),
            }
        })?);
        let text: zeroize::Zeroizing<Vec<u8>> = zeroize::Zeroizing::new(
            inner
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect(),
        );
        STANDARD
            .decode(text.as_slice())
            .map_err(|e| SecretDecodeError::NotBase64Text {
                secret: name.to_owned(),
                key,
                reason: e.to_string(),
            })
    };
    let (credentials, findings) = CredentialsFile::parse(
        format!("Secret {name} {CREDENTIALS_KEY}"),
        field(CREDENTIALS_KEY)?,
    );
    if let Some(f) = findings.iter().find(|f| f.is_error()) {
        return Err(SecretDecodeError::Invalid {
            key: CREDENTIALS_KEY,
            message: f.message.clone(),
        });
    }
    let (bundle, findings) = CaBundle::parse(
        format!("Secret {name} {CA_BUNDLE_KEY}"),
        field(CA_BUNDLE_KEY)?,
    );
    if let Some(f) = findings.iter().find(|f| f.is_error()) {
        return Err(SecretDecodeError::Invalid {
            key: CA_BUNDLE_KEY,
            message: f.message.clone(),
        });
    }
    Ok((credentials, bundle))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREDS: &str = "[1.2.3.4]\r\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\r\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\r\nregion = snow\r\n";

    fn files() -> (CredentialsFile, CaBundle) {
        let cert = rcgen::generate_simple_self_signed(vec!["1.2.3.4".to_owned()]).unwrap();
        let (c, f1) = CredentialsFile::parse("credentials", CREDS.as_bytes().to_vec());
        let (b, f2) = CaBundle::parse("ca-bundle", cert.cert.pem().into_bytes());
        assert!(!f1.iter().any(|f| f.is_error()), "{f1:?}");
        assert!(!f2.iter().any(|f| f.is_error()), "{f2:?}");
        (c, b)
    }

    #[test]
    fn the_identity_and_cluster_secrets_decode_to_the_files_byte_for_byte() {
        let (c, b) = files();
        for secret in [
            eksa_identity_secret("creds", "default", &c, &b),
            capas_cluster_secret("edge", &c, &b),
        ] {
            let (c2, b2) = decode_eksa_credentials_secret("ns/s", &secret.to_json()).unwrap();
            assert_eq!(
                c2.content().expose_for_encoding(),
                c.content().expose_for_encoding()
            );
            assert_eq!(b2.content(), b.content());
        }
    }

    #[test]
    fn base64_text_with_line_breaks_decodes() {
        let (c, b) = files();
        let mut json = eksa_identity_secret("creds", "default", &c, &b).to_json();
        let wrapped = |raw: &[u8]| {
            let text = base64_standard(raw);
            let lines: Vec<&str> = text
                .as_bytes()
                .chunks(64)
                .map(|l| std::str::from_utf8(l).unwrap())
                .collect();
            base64_standard(lines.join("\n").as_bytes())
        };
        json["data"][CA_BUNDLE_KEY] = wrapped(b.content()).into();
        let (_, b2) = decode_eksa_credentials_secret("ns/s", &json).unwrap();
        assert_eq!(b2.content(), b.content());
    }

    #[test]
    fn each_failure_names_the_key_and_never_the_value() {
        let (c, b) = files();
        let good = eksa_identity_secret("creds", "default", &c, &b).to_json();
        let mut missing = good.clone();
        missing["data"]
            .as_object_mut()
            .unwrap()
            .remove(CA_BUNDLE_KEY);
        assert_eq!(
            decode_eksa_credentials_secret("ns/s", &missing)
                .unwrap_err()
                .to_string(),
            "the identity Secret ns/s has no `ca-bundle`"
        );
        let mut raw = good.clone();
        raw["data"][CREDENTIALS_KEY] = base64_standard(CREDS.as_bytes()).into();
        let e = decode_eksa_credentials_secret("ns/s", &raw).unwrap_err();
        assert!(
            matches!(
                e,
                SecretDecodeError::NotBase64Text {
                    key: "credentials",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(!e.to_string().contains("wJalr"), "{e}");
        let mut junk = good.clone();
        junk["data"][CREDENTIALS_KEY] = "*".into();
        let e = decode_eksa_credentials_secret("ns/s", &junk).unwrap_err();
        assert!(matches!(e, SecretDecodeError::NotBase64 { .. }), "{e:?}");
        let mut invalid = good;
        invalid["data"][CA_BUNDLE_KEY] = base64_standard(base64_standard(b"x").as_bytes()).into();
        let e = decode_eksa_credentials_secret("ns/s", &invalid).unwrap_err();
        assert!(
            matches!(
                e,
                SecretDecodeError::Invalid {
                    key: "ca-bundle",
                    ..
                }
            ),
            "{e:?}"
        );
    }
}
