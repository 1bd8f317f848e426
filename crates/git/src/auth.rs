//! Credentials for a remote, and how they reach git: files in a private temporary directory
//! (0700; each file 0600, written through `snow_io::files`, removed with the directory) and
//! environment variables of the git process, never its command line.

use crate::{GitError, Remote, Scheme};
use std::fmt;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// A secret string: a private key, a passphrase, a token. Shown as `<redacted>`, zeroed when
/// dropped.
#[derive(Clone)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(Zeroizing::new(value.into()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// The secret's text, for an encoder that puts it where it belongs and nowhere else (the
    /// source Secret Flux reads the same credentials from); never to be shown.
    pub fn expose_for_encoding(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret::new(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How to authenticate to a remote; its kind must match the remote's scheme.
#[derive(Debug, Clone)]
pub enum Auth {
    /// For `ssh://` remotes.
    Ssh(SshAuth),
    /// For `https://` remotes.
    Https(HttpsAuth),
}

/// SSH: a private key and the host keys to trust.
#[derive(Debug, Clone)]
pub struct SshAuth {
    /// The private key file's text (OpenSSH or PEM format).
    pub private_key: Secret,
    /// The key's passphrase, if it is encrypted. It reaches ssh through `SSH_ASKPASS` (a small
    /// script in the private directory that prints it from an environment variable of the git
    /// process, and only for ssh's passphrase prompt), never a command line or a file. A key that
    /// needs one and has none is refused before any connection
    /// ([`GitError::KeyNeedsPassphrase`]).
    pub passphrase: Option<Secret>,
    /// `known_hosts` lines for the server (required: ssh runs with
    /// `StrictHostKeyChecking=yes`, this file as its only known hosts, and no configuration of
    /// the machine's or the user's).
    pub known_hosts: String,
}

/// HTTPS: an optional credential and CA bundle.
#[derive(Debug, Clone, Default)]
pub struct HttpsAuth {
    /// Sent as the `Authorization` header of every request.
    pub credential: Option<HttpCredential>,
    /// The CA certificates (PEM) to trust instead of the system's (`http.sslCAInfo`).
    pub ca_bundle_pem: Option<Vec<u8>>,
}

/// An HTTPS credential, given to git as `http.extraHeader` through the environment
/// (`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`), never on a command line.
#[derive(Clone)]
pub enum HttpCredential {
    /// `Authorization: Bearer TOKEN`.
    Bearer(Secret),
    /// `Authorization: Basic base64(USER:PASSWORD)`: a token as the password of HTTP basic
    /// auth, as GitHub (`x-access-token`), GitLab (`oauth2`) and Gitea accept it.
    Basic {
        /// The user name.
        user: String,
        /// The password or token.
        password: Secret,
    },
}

impl fmt::Debug for HttpCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpCredential::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            HttpCredential::Basic { user, .. } => f
                .debug_struct("Basic")
                .field("user", user)
                .field("password", &"<redacted>")
                .finish(),
        }
    }
}

impl HttpCredential {
    /// The `Authorization` header's value.
    fn header_value(&self) -> Zeroizing<String> {
        use base64::Engine as _;
        Zeroizing::new(match self {
            HttpCredential::Bearer(token) => format!("Bearer {}", token.expose()),
            HttpCredential::Basic { user, password } => format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD
                    .encode(format!("{user}:{}", password.expose()))
            ),
        })
    }
}

/// The environment variable that carries the passphrase to the askpass script.
const PASSPHRASE_VAR: &str = "SNOWCTL_GIT_SSH_PASSPHRASE";

/// The askpass script: the passphrase for ssh's passphrase prompt, a refusal for any other
/// (a password or a host-key question must never be answered with it).
const ASKPASS: &str = "#!/bin/sh\ncase \"$1\" in\n  *assphrase*) printf '%s\\n' \"$SNOWCTL_GIT_SSH_PASSPHRASE\" ;;\n  *) exit 1 ;;\nesac\n";

/// Credentials made ready for git: their files in `dir` (removed with it), the environment of
/// every git process, and the strings to hide from what an error shows.
pub(crate) struct Prepared {
    pub(crate) env: Vec<(String, String)>,
    /// git configuration (key, value), given through `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`.
    pub(crate) config: Vec<(String, String)>,
    pub(crate) secrets: Vec<Zeroizing<String>>,
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prepared(<redacted>)")
    }
}

impl Prepared {
    /// Hides every secret in `text`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            if !secret.is_empty() {
                text = text.replace(secret.as_str(), "<redacted>");
            }
        }
        text
    }
}

/// Writes `text` to `dir/name`, 0600.
fn secret_file(dir: &Path, name: &str, text: &[u8]) -> Result<PathBuf, GitError> {
    snow_io::files::write_under(dir, Path::new(name), |f| std::io::Write::write_all(f, text))
        .map_err(|source| GitError::Io {
            what: format!("writing {name} into the private directory"),
            source,
        })
}

/// A shell word for `path` (single-quoted).
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

impl Auth {
    /// Checks that the kind matches `remote` and writes what git needs into `dir` (private).
    pub(crate) fn prepare(
        &self,
        remote: &Remote,
        dir: &Path,
        timeout: std::time::Duration,
    ) -> Result<Prepared, GitError> {
        let invalid = |problem: &str| GitError::InvalidAuth {
            remote: remote.to_string(),
            problem: problem.to_owned(),
        };
        let mut config: Vec<(String, String)> = Vec::new();
        let mut env = Vec::new();
        let mut secrets = Vec::new();
        match (self, remote.scheme()) {
            (Auth::Ssh(ssh), Scheme::Ssh) => {
                if !ssh
                    .known_hosts
                    .lines()
                    .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                {
                    return Err(invalid(
                        "known_hosts is empty: give the server's host key line (ssh-keyscan HOST, checked against the server's fingerprint)",
                    ));
                }
                if ssh.private_key.expose().trim().is_empty() {
                    return Err(invalid("the SSH private key is empty"));
                }
                let mut key = Zeroizing::new(ssh.private_key.expose().to_owned());
                // OpenSSH refuses a key file whose last line has no newline.
                if !key.ends_with('\n') {
                    key.push('\n');
                }
                let key_file = secret_file(dir, "identity", key.as_bytes())?;
                let known_hosts = secret_file(dir, "known_hosts", ssh.known_hosts.as_bytes())?;
                let connect = timeout.as_secs().clamp(1, 60);
                let mut command = format!(
                    "ssh -F /dev/null -i {} -o IdentitiesOnly=yes -o IdentityAgent=none \
                     -o StrictHostKeyChecking=yes -o UserKnownHostsFile={} \
                     -o GlobalKnownHostsFile=/dev/null -o UpdateHostKeys=no \
                     -o PreferredAuthentications=publickey -o PasswordAuthentication=no \
                     -o KbdInteractiveAuthentication=no -o NumberOfPasswordPrompts=1 \
                     -o ControlMaster=no -o ControlPath=none -o ForwardAgent=no \
                     -o ClearAllForwardings=yes -o ConnectTimeout={connect}",
                    quoted(&key_file),
                    quoted(&known_hosts)
                );
                match &ssh.passphrase {
                    None => {
                        check_unencrypted(&key_file, timeout).map_err(|e| match e {
                            Some(e) => e,
                            None => invalid(
                                "the SSH private key is not a key OpenSSH can read (ssh-keygen -y refused it)",
                            ),
                        })?;
                        command.push_str(" -o BatchMode=yes");
                    }
                    Some(passphrase) => {
                        // BatchMode would stop ssh from asking for the passphrase at all.
                        command.push_str(" -o BatchMode=no");
                        let askpass = secret_file(dir, "askpass", ASKPASS.as_bytes())?;
                        use std::os::unix::fs::PermissionsExt as _;
                        std::fs::set_permissions(&askpass, std::fs::Permissions::from_mode(0o700))
                            .map_err(|source| GitError::Io {
                                what: "making the askpass script executable".into(),
                                source,
                            })?;
                        env.push(("SSH_ASKPASS".into(), askpass.display().to_string()));
                        env.push(("SSH_ASKPASS_REQUIRE".into(), "force".into()));
                        env.push((PASSPHRASE_VAR.into(), passphrase.expose().to_owned()));
                        secrets.push(Zeroizing::new(passphrase.expose().to_owned()));
                    }
                }
                env.push(("GIT_SSH_COMMAND".into(), command));
                env.push(("GIT_SSH_VARIANT".into(), "ssh".into()));
                secrets.push(Zeroizing::new(ssh.private_key.expose().trim().to_owned()));
            }
            (Auth::Https(https), Scheme::Https) => {
                if let Some(pem) = &https.ca_bundle_pem {
                    if !String::from_utf8_lossy(pem).contains("-----BEGIN CERTIFICATE-----") {
                        return Err(invalid("the CA bundle holds no PEM certificate"));
                    }
                    let ca = secret_file(dir, "ca-bundle.pem", pem)?;
                    config.push(("http.sslCAInfo".into(), ca.display().to_string()));
                }
                if let Some(credential) = &https.credential {
                    if let HttpCredential::Basic { user, .. } = credential
                        && (user.contains(':') || user.chars().any(char::is_control))
                    {
                        return Err(invalid(
                            "the HTTPS user name holds ':' or a control character",
                        ));
                    }
                    let value = credential.header_value();
                    let token = match credential {
                        HttpCredential::Bearer(t) => t,
                        HttpCredential::Basic { password, .. } => password,
                    };
                    if token.expose().is_empty() || token.expose().chars().any(char::is_control) {
                        return Err(invalid(
                            "the HTTPS token is empty or holds a control character",
                        ));
                    }
                    secrets.push(Zeroizing::new(token.expose().to_owned()));
                    if let Some(encoded) = value.strip_prefix("Basic ") {
                        secrets.push(Zeroizing::new(encoded.to_owned()));
                    }
                    config.push((
                        "http.extraHeader".into(),
                        format!("Authorization: {}", *value),
                    ));
                }
            }
            (Auth::Ssh(_), Scheme::Https) => {
                return Err(invalid(
                    "an SSH key was given for an https:// remote; give an HTTPS credential",
                ));
            }
            (Auth::Https(_), Scheme::Ssh) => {
                return Err(invalid(
                    "an HTTPS credential was given for an ssh:// remote; give an SSH key and known_hosts",
                ));
            }
        }
        Ok(Prepared {
            env,
            config,
            secrets,
        })
    }
}

/// Whether OpenSSH reads the key at `key_file` without a passphrase (`ssh-keygen -y -P ''`):
/// `Err(Some(KeyNeedsPassphrase))` when it is encrypted, `Err(None)` when it is no key.
fn check_unencrypted(
    key_file: &Path,
    timeout: std::time::Duration,
) -> Result<(), Option<GitError>> {
    let args: Vec<std::ffi::OsString> = vec![
        "-y".into(),
        "-P".into(),
        "".into(),
        "-f".into(),
        key_file.into(),
    ];
    let run = snow_io::process::Run {
        program: Path::new("ssh-keygen"),
        args: &args,
        env: &[("LC_ALL".to_owned(), "C".to_owned())],
        stdin: snow_io::process::Stdin::Null,
        timeout,
        max_stdout: 64 << 10,
        redact: &snow_io::process::no_secrets,
    };
    match run.run_isolated() {
        Ok(_) => Ok(()),
        Err(f) if f.kind == snow_io::process::FailureKind::NotFound => {
            Err(Some(GitError::ProgramMissing {
                program: "ssh-keygen",
                package: "openssh-client",
            }))
        }
        Err(f) if f.stderr.contains("passphrase") => Err(Some(GitError::KeyNeedsPassphrase)),
        Err(_) => Err(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_secret() {
        let auth = Auth::Ssh(SshAuth {
            private_key: Secret::new("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAkey\n"),
            passphrase: Some(Secret::new("pass-phrase-1")),
            known_hosts: "host ssh-ed25519 AAAA".into(),
        });
        let text = format!("{auth:?}");
        assert!(
            !text.contains("AAAAkey") && !text.contains("pass-phrase-1"),
            "{text}"
        );
        let https = Auth::Https(HttpsAuth {
            credential: Some(HttpCredential::Basic {
                user: "x-access-token".into(),
                password: Secret::new("tok-123"),
            }),
            ca_bundle_pem: None,
        });
        assert!(!format!("{https:?}").contains("tok-123"));
    }

    #[test]
    fn a_basic_credential_is_a_basic_header_and_both_forms_are_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let remote = Remote::parse("https://git.example.com/r.git").unwrap();
        let auth = Auth::Https(HttpsAuth {
            credential: Some(HttpCredential::Basic {
                user: "x-access-token".into(),
                password: Secret::new("tok-123"),
            }),
            ca_bundle_pem: None,
        });
        let prepared = auth
            .prepare(&remote, dir.path(), std::time::Duration::from_secs(5))
            .unwrap();
        let header = prepared
            .config
            .iter()
            .find(|(_, v)| v.starts_with("Authorization: "))
            .map(|(_, v)| v.clone())
            .unwrap();
        assert_eq!(
            header,
            "Authorization: Basic eC1hY2Nlc3MtdG9rZW46dG9rLTEyMw=="
        );
        assert_eq!(prepared.redact(&header), "Authorization: Basic <redacted>");
        assert_eq!(prepared.redact("bad tok-123"), "bad <redacted>");
    }

    #[test]
    fn the_kind_must_match_the_remote_and_known_hosts_is_required() {
        let dir = tempfile::tempdir().unwrap();
        let t = std::time::Duration::from_secs(5);
        let ssh = Remote::parse("ssh://git@host/r.git").unwrap();
        let https = Remote::parse("https://host/r.git").unwrap();
        let err = Auth::Https(HttpsAuth::default())
            .prepare(&ssh, dir.path(), t)
            .unwrap_err();
        assert!(matches!(err, GitError::InvalidAuth { .. }), "{err}");
        let key = SshAuth {
            private_key: Secret::new("k"),
            passphrase: None,
            known_hosts: "# nothing\n\n".into(),
        };
        let err = Auth::Ssh(key.clone())
            .prepare(&https, dir.path(), t)
            .unwrap_err();
        assert!(err.to_string().contains("SSH key was given"), "{err}");
        let err = Auth::Ssh(key).prepare(&ssh, dir.path(), t).unwrap_err();
        assert!(err.to_string().contains("known_hosts is empty"), "{err}");
    }
}
