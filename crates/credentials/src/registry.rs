//! The registry mirror's login, for `registryMirrorConfiguration.authenticate: true`.
//!
//! As EKS Anywhere: the login comes from `REGISTRY_USERNAME` and `REGISTRY_PASSWORD` (a variable
//! that is set counts, even when empty; an unset one is an error; the CLI reads them and
//! [`from_env`] takes their values), and the CLI stores it in the
//! Secret `eksa-system/registry-credentials` with the keys `username` and `password` (raw values;
//! serialised `data` is base64 of each). EKS Anywhere's Snow templates render nothing from it:
//! `authenticate` does not change the Snow machine or bootstrap templates. For `helm registry
//! login --password-stdin` (the Cilium chart) the password leaves only through
//! [`RegistryCredentials::write_password`], and [`RegistryCredentials::redact`] blanks it out of
//! a program's output.

use crate::encode::{EKSA_SYSTEM_NAMESPACE, KubeSecret};
use crate::secret::{REDACTED, SecretBytes, SecretString};
use snow_api::{ClusterSpec, Finding};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The Secret EKS Anywhere creates for an authenticated mirror (namespace `eksa-system`).
pub const SECRET_NAME: &str = "registry-credentials";
/// The finding id of a login value not given.
pub const CHECK: &str = "registry-mirror.credentials";

/// A user name and a password that never prints (`Debug` shows the user name only).
#[derive(Clone, Debug)]
pub struct RegistryCredentials {
    username: String,
    password: SecretString,
}

impl RegistryCredentials {
    /// The login.
    pub fn new(username: String, password: SecretString) -> RegistryCredentials {
        RegistryCredentials { username, password }
    }

    /// The user name (not a secret: it goes on command lines, as EKS Anywhere passes it).
    pub fn username(&self) -> &str {
        &self.username
    }

    /// Whether the password is empty (or only whitespace).
    pub fn password_is_blank(&self) -> bool {
        self.password.is_blank()
    }

    /// Writes the password, and nothing else, to `out` (a child process's stdin).
    pub fn write_password(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(self.password.expose_for_signing().as_bytes())
    }

    /// Writes containerd's header table for `host_table` (e.g. `host."https://10.0.0.7:5000/v2"`
    /// of a `hosts.toml`) with this login as `Basic` authorization, as EKS Anywhere's kind
    /// bootstrap cluster authenticates to an authenticated mirror. The encoded login only ever
    /// sits in zeroed memory on its way to `out` (a file the caller keeps 0600).
    pub fn write_containerd_header(
        &self,
        host_table: &str,
        out: &mut impl Write,
    ) -> io::Result<()> {
        use base64::Engine;
        let plain = zeroize::Zeroizing::new(format!(
            "{}:{}",
            self.username,
            self.password.expose_for_signing()
        ));
        let encoded = zeroize::Zeroizing::new(
            base64::engine::general_purpose::STANDARD.encode(plain.as_bytes()),
        );
        write!(
            out,
            "\n[{host_table}.header]\n  authorization = \"Basic {}\"\n",
            encoded.as_str()
        )
    }

    /// `text` with every occurrence of the password replaced by `<redacted>`, for showing output
    /// of a program that was handed the password.
    pub fn redact(&self, text: &str) -> String {
        let password = self.password.expose_for_signing();
        if password.is_empty() {
            return text.to_owned();
        }
        text.replace(password, REDACTED)
    }
}

/// Whether the spec asks for an authenticated mirror.
pub fn authenticate(spec: &ClusterSpec) -> bool {
    spec.cluster
        .spec
        .registry_mirror_configuration
        .as_ref()
        .and_then(|m| m.authenticate)
        .unwrap_or(false)
}

/// The login the spec needs from the two values (`None`: not given, as an unset variable), or
/// one finding per value not given, on the `authenticate` field. `Ok(None)` when the spec does
/// not authenticate.
pub fn from_env(
    spec: &ClusterSpec,
    username: Option<String>,
    password: Option<SecretString>,
) -> Result<Option<RegistryCredentials>, Vec<Finding>> {
    if !authenticate(spec) {
        return Ok(None);
    }
    let unset = |value: &str| {
        Finding::error(
            CHECK,
            format!("the registry mirror's {value} is not given: registryMirrorConfiguration.authenticate is true, so the mirror needs a login"),
        )
        .object(format!("Cluster/{}", spec.name()))
        .field("spec.registryMirrorConfiguration.authenticate")
        .hint("give the mirror's user name and password, or set authenticate: false")
    };
    match (username, password) {
        (Some(username), Some(password)) => Ok(Some(RegistryCredentials::new(username, password))),
        (username, password) => Err([
            username.is_none().then(|| unset("user name")),
            password.is_none().then(|| unset("password")),
        ]
        .into_iter()
        .flatten()
        .collect()),
    }
}

/// Fills an empty `caCertContent` of the spec's mirror with `ca` (what EKS Anywhere does with
/// the file named by `EKSA_REGISTRY_MIRROR_CA`). Returns whether it did.
pub fn fill_mirror_ca(spec: &mut ClusterSpec, ca: String) -> bool {
    match spec.cluster.spec.registry_mirror_configuration.as_mut() {
        Some(m) if m.ca_cert_content.as_deref().is_none_or(str::is_empty) => {
            m.ca_cert_content = Some(ca);
            true
        }
        _ => false,
    }
}

/// Whether [`fill_mirror_ca`] would fill something (so the CA file is only read then).
pub fn wants_mirror_ca(spec: &ClusterSpec) -> bool {
    spec.cluster
        .spec
        .registry_mirror_configuration
        .as_ref()
        .is_some_and(|m| m.ca_cert_content.as_deref().is_none_or(str::is_empty))
}

/// `eksa-system/registry-credentials`, as EKS Anywhere's cluster manager creates it:
/// `data: {username, password}` holding the raw values.
pub fn registry_credentials_secret(login: &RegistryCredentials) -> KubeSecret {
    KubeSecret::new(
        SECRET_NAME.to_owned(),
        EKSA_SYSTEM_NAMESPACE.to_owned(),
        BTreeMap::new(),
        BTreeMap::from([
            (
                "username".to_owned(),
                SecretBytes::new(login.username.as_bytes().to_vec()),
            ),
            (
                "password".to_owned(),
                SecretBytes::new(login.password.expose_for_signing().as_bytes().to_vec()),
            ),
        ]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(authenticate: bool) -> ClusterSpec {
        let text = format!(
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {{name: edge}}\nspec:\n  registryMirrorConfiguration: {{endpoint: 10.0.0.5, authenticate: {authenticate}}}\n"
        );
        snow_api::check(&text).unwrap().spec.unwrap()
    }

    #[test]
    fn the_containerd_header_is_basic_authorization_of_the_login() {
        let login = RegistryCredentials::new("mirror-user".into(), "p@ss:word".to_owned().into());
        let mut out = Vec::new();
        login
            .write_containerd_header("host.\"https://10.0.0.7:5000/v2\"", &mut out)
            .unwrap();
        // base64("mirror-user:p@ss:word")
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\n[host.\"https://10.0.0.7:5000/v2\".header]\n  authorization = \"Basic bWlycm9yLXVzZXI6cEBzczp3b3Jk\"\n"
        );
        assert!(!format!("{login:?}").contains("p@ss"));
    }

    #[test]
    fn unset_variables_are_findings_on_the_field() {
        let findings = from_env(&spec(true), None, None).unwrap_err();
        assert_eq!(findings.len(), 2);
        assert!(
            findings[0]
                .message
                .starts_with("the registry mirror's user name is not given")
        );
        assert!(
            findings[1]
                .message
                .starts_with("the registry mirror's password is not given")
        );
        assert_eq!(
            findings[0].field.as_deref(),
            Some("spec.registryMirrorConfiguration.authenticate")
        );
        assert!(from_env(&spec(false), None, None).unwrap().is_none());
        let empty = from_env(&spec(true), Some(String::new()), Some(String::new().into()));
        assert!(
            empty.unwrap().is_some(),
            "set but empty counts, as EKS Anywhere"
        );
    }

    #[test]
    fn the_secret_holds_the_login_and_debug_shows_no_password() {
        let login = RegistryCredentials::new("robot".into(), "hunter2-PASS".to_owned().into());
        assert!(!format!("{login:?}").contains("hunter2"));
        let secret = registry_credentials_secret(&login);
        assert!(!format!("{secret:?}").contains("hunter2"));
        let json = secret.to_json();
        assert_eq!(json["metadata"]["name"], "registry-credentials");
        assert_eq!(json["metadata"]["namespace"], "eksa-system");
        assert_eq!(json["data"]["password"], "aHVudGVyMi1QQVNT");
        assert_eq!(json["data"]["username"], "cm9ib3Q=");
    }

    #[test]
    fn the_password_leaves_only_through_stdin_writing() {
        let login =
            RegistryCredentials::new("admin".into(), SecretString::new("hunter2-pw".into()));
        assert!(!format!("{login:?}").contains("hunter2-pw"));
        let mut out = Vec::new();
        login.write_password(&mut out).unwrap();
        assert_eq!(out, b"hunter2-pw");
        assert_eq!(
            login.redact("denied for admin:hunter2-pw"),
            "denied for admin:<redacted>"
        );
        assert!(!login.password_is_blank());
    }
}
