//! Flux's source Secret: how source-controller authenticates to the GitOps repository (the
//! keys Flux's `GitRepository.spec.secretRef` reads), byte for byte. Its values are the raw
//! bytes (serialised `data` is base64 of them once), unlike EKS Anywhere's identity Secret.
//!
//! - SSH (`ssh://` URLs; what `flux bootstrap git` writes): `identity` (the private key),
//!   `identity.pub` and `known_hosts`.
//! - HTTPS (`https://` URLs): `username` and `password`, or `bearerToken`; `ca.crt` when the
//!   server's certificate is not from a public CA.

use super::KubeSecret;
use crate::secret::{SecretBytes, SecretString};
use std::collections::BTreeMap;
use std::fmt;

/// The name `flux bootstrap` gives the source Secret (its `--secret-name` default), in Flux's
/// namespace.
pub const FLUX_SOURCE_SECRET: &str = "flux-system";
/// The private key's key.
pub const IDENTITY_KEY: &str = "identity";
/// The public key's key.
pub const IDENTITY_PUB_KEY: &str = "identity.pub";
/// The known hosts' key.
pub const KNOWN_HOSTS_KEY: &str = "known_hosts";
/// The HTTPS user's key.
pub const USERNAME_KEY: &str = "username";
/// The HTTPS password's key.
pub const PASSWORD_KEY: &str = "password";
/// The HTTPS bearer token's key.
pub const BEARER_TOKEN_KEY: &str = "bearerToken";
/// The HTTPS server's CA bundle's key.
pub const CA_KEY: &str = "ca.crt";

/// A value the source Secret needs is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitAuthError {
    /// An empty private key.
    #[error("the SSH private key is empty")]
    NoKey,
    /// No known hosts: Flux verifies the server's host key against them and refuses without.
    #[error(
        "known_hosts is empty: Flux checks the git server's host key against it (scan it with `ssh-keyscan -p PORT HOST`)"
    )]
    NoKnownHosts,
    /// An empty HTTPS password or token.
    #[error("the HTTPS {0} is empty")]
    Blank(&'static str),
}

/// SSH: the key pair and the server's host keys.
#[derive(Clone)]
pub struct SshAuth {
    identity: SecretBytes,
    identity_pub: String,
    known_hosts: String,
}

impl SshAuth {
    /// The private key (OpenSSH or PEM text), its public key (`ssh-ed25519 AAAA… comment`) and
    /// the server's lines of `known_hosts`.
    pub fn new(
        identity: SecretBytes,
        identity_pub: String,
        known_hosts: String,
    ) -> Result<SshAuth, GitAuthError> {
        if identity.is_empty() {
            return Err(GitAuthError::NoKey);
        }
        if known_hosts.trim().is_empty() {
            return Err(GitAuthError::NoKnownHosts);
        }
        Ok(SshAuth {
            identity,
            identity_pub,
            known_hosts,
        })
    }
}

impl fmt::Debug for SshAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SshAuth")
            .field("identity", &self.identity)
            .field("identity_pub", &self.identity_pub)
            .field("known_hosts", &self.known_hosts)
            .finish()
    }
}

/// HTTPS: how to log in (Debug redacts the password or token).
#[derive(Debug, Clone)]
pub enum HttpsLogin {
    /// User and password (or a personal access token as the password).
    Basic {
        /// The user.
        username: String,
        /// The password or token.
        password: SecretString,
    },
    /// A bearer token.
    BearerToken(SecretString),
}

/// HTTPS: the login, when the repository needs one, and the CA bundle (PEM) of the server's
/// certificate, when it is not from a public CA.
#[derive(Debug, Clone)]
pub struct HttpsAuth {
    login: Option<HttpsLogin>,
    ca: Option<Vec<u8>>,
}

impl HttpsAuth {
    /// `login` (none: an anonymous clone) and `ca` (PEM).
    pub fn new(login: Option<HttpsLogin>, ca: Option<Vec<u8>>) -> Result<HttpsAuth, GitAuthError> {
        match &login {
            Some(HttpsLogin::Basic { password, .. }) if password.is_blank() => {
                return Err(GitAuthError::Blank("password"));
            }
            Some(HttpsLogin::BearerToken(token)) if token.is_blank() => {
                return Err(GitAuthError::Blank("bearer token"));
            }
            _ => {}
        }
        Ok(HttpsAuth { login, ca })
    }
}

/// How source-controller authenticates to the repository.
#[derive(Debug, Clone)]
pub enum GitAuth {
    /// An `ssh://` repository.
    Ssh(SshAuth),
    /// An `https://` repository.
    Https(HttpsAuth),
}

/// Flux's source Secret `name` in `namespace` (Flux's namespace), with the keys of `auth`.
pub fn flux_source_secret(name: &str, namespace: &str, auth: &GitAuth) -> KubeSecret {
    let text = |s: &str| SecretBytes::new(s.as_bytes().to_vec());
    let mut data = BTreeMap::new();
    match auth {
        GitAuth::Ssh(ssh) => {
            data.insert(IDENTITY_KEY.to_owned(), ssh.identity.clone());
            data.insert(IDENTITY_PUB_KEY.to_owned(), text(&ssh.identity_pub));
            data.insert(KNOWN_HOSTS_KEY.to_owned(), text(&ssh.known_hosts));
        }
        GitAuth::Https(https) => {
            match &https.login {
                Some(HttpsLogin::Basic { username, password }) => {
                    data.insert(USERNAME_KEY.to_owned(), text(username));
                    data.insert(PASSWORD_KEY.to_owned(), text(password.expose_for_signing()));
                }
                Some(HttpsLogin::BearerToken(token)) => {
                    data.insert(
                        BEARER_TOKEN_KEY.to_owned(),
                        text(token.expose_for_signing()),
                    );
                }
                None => {}
            }
            if let Some(ca) = &https.ca {
                data.insert(CA_KEY.to_owned(), SecretBytes::new(ca.clone()));
            }
        }
    }
    KubeSecret::new(name.to_owned(), namespace.to_owned(), BTreeMap::new(), data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn decoded(secret: &KubeSecret, key: &str) -> String {
        let value = &secret.to_json()["data"][key];
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(value.as_str().unwrap())
            .unwrap();
        String::from_utf8(bytes).unwrap()
    }

    const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n";

    #[test]
    fn ssh_keys_are_what_flux_reads() {
        let auth = SshAuth::new(
            SecretBytes::new(KEY.as_bytes().to_vec()),
            "ssh-ed25519 AAAAC3Nz fleet".into(),
            "[127.0.0.1]:2222 ssh-ed25519 AAAAC3Nz\n".into(),
        )
        .unwrap();
        let secret = flux_source_secret(
            FLUX_SOURCE_SECRET,
            "flux-system",
            &GitAuth::Ssh(auth.clone()),
        );
        assert_eq!(
            secret.data_keys().collect::<Vec<_>>(),
            ["identity", "identity.pub", "known_hosts"]
        );
        assert_eq!(decoded(&secret, "identity"), KEY);
        assert_eq!(
            decoded(&secret, "known_hosts"),
            "[127.0.0.1]:2222 ssh-ed25519 AAAAC3Nz\n"
        );
        let json = secret.to_json();
        assert_eq!(json["metadata"]["name"], "flux-system");
        assert_eq!(json["type"], "Opaque");
        for shown in [format!("{secret:?}"), format!("{auth:?}")] {
            assert!(
                !shown.contains("OPENSSH") && !shown.contains("b3Blbn"),
                "{shown}"
            );
        }
        assert_eq!(
            SshAuth::new(SecretBytes::new(KEY.into()), String::new(), " \n".into()).unwrap_err(),
            GitAuthError::NoKnownHosts
        );
        assert_eq!(
            SshAuth::new(SecretBytes::default(), String::new(), "h k".into()).unwrap_err(),
            GitAuthError::NoKey
        );
    }

    #[test]
    fn https_keys_are_what_flux_reads() {
        let basic = HttpsAuth::new(
            Some(HttpsLogin::Basic {
                username: "fleet".into(),
                password: SecretString::new("hunter2".into()),
            }),
            Some(b"-----BEGIN CERTIFICATE-----\n".to_vec()),
        )
        .unwrap();
        let secret =
            flux_source_secret("flux-system", "flux-system", &GitAuth::Https(basic.clone()));
        assert_eq!(
            secret.data_keys().collect::<Vec<_>>(),
            ["ca.crt", "password", "username"]
        );
        assert_eq!(decoded(&secret, "password"), "hunter2");
        assert_eq!(decoded(&secret, "username"), "fleet");
        for shown in [format!("{secret:?}"), format!("{basic:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        let token = HttpsAuth::new(
            Some(HttpsLogin::BearerToken(SecretString::new("tok3n".into()))),
            None,
        )
        .unwrap();
        let secret = flux_source_secret("s", "ns", &GitAuth::Https(token));
        assert_eq!(secret.data_keys().collect::<Vec<_>>(), ["bearerToken"]);
        assert_eq!(decoded(&secret, "bearerToken"), "tok3n");
        assert!(matches!(
            HttpsAuth::new(
                Some(HttpsLogin::BearerToken(SecretString::new(" ".into()))),
                None
            ),
            Err(GitAuthError::Blank(_))
        ));
    }
}
