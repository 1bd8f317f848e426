//! The workload cluster's kubeconfig: read out of the Secret Cluster API publishes
//! ([`Published`]: inline credentials only), and written where EKS Anywhere puts it,
//! `<dir>/<cluster>/<cluster>-eks-a-cluster.kubeconfig`, readable by its owner only, and never
//! over a different file unless asked.

use crate::KubeError;
use kube::config::Kubeconfig;
use snow_io::files::{self, Existing};
use std::{
    io::Write,
    path::{Path, PathBuf},
};

/// A kubeconfig read out of a cluster Secret (`<cluster>-kubeconfig`), which authenticates only
/// with what it holds: an inline token or client certificate (`token`,
/// `client-certificate-data` with `client-key-data`), the CA inline too. Anyone who can write
/// the Secret chooses its content, so nothing in it may make this process run a program
/// (`exec`, `auth-provider`) or read a local file and send it to a server of their choosing
/// (`tokenFile`, `client-certificate`, `client-key`, `certificate-authority`). Cluster API
/// publishes a client certificate. Kubeconfigs given on the command line are not this type:
/// they keep kubectl's behaviour.
#[derive(Clone)]
pub struct Published {
    text: String,
    file: Kubeconfig,
}

impl std::fmt::Debug for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Published").finish_non_exhaustive()
    }
}

impl Published {
    /// Reads `text`, the kubeconfig of the Secret `secret` (`namespace/name`, for the error).
    pub fn parse(secret: &str, text: String) -> Result<Published, KubeError> {
        let refuse = |reason: String| KubeError::SecretKubeconfig {
            secret: secret.to_owned(),
            reason,
        };
        let file = Kubeconfig::from_yaml(&text).map_err(|e| {
            refuse(format!(
                "it is not a kubeconfig: {}",
                crate::error::chain(&e)
            ))
        })?;
        let mut found = Vec::new();
        for user in &file.auth_infos {
            let Some(auth) = &user.auth_info else {
                continue;
            };
            let name = &user.name;
            if let Some(exec) = &auth.exec {
                let command = exec.command.as_deref().unwrap_or_default();
                found.push(format!(
                    "user {name:?} has `exec` (it would run {command:?})"
                ));
            }
            if let Some(provider) = &auth.auth_provider {
                found.push(format!(
                    "user {name:?} has `auth-provider` {:?} (it would run a program or fetch a token)",
                    provider.name
                ));
            }
            for (field, set) in [
                ("tokenFile", auth.token_file.is_some()),
                ("client-certificate", auth.client_certificate.is_some()),
                ("client-key", auth.client_key.is_some()),
            ] {
                if set {
                    found.push(format!(
                        "user {name:?} has `{field}` (it would read a file of this machine)"
                    ));
                }
            }
            if auth.username.is_some() || auth.password.is_some() {
                found.push(format!(
                    "user {name:?} has `username`/`password` (basic authentication)"
                ));
            }
        }
        for cluster in &file.clusters {
            if cluster
                .cluster
                .as_ref()
                .is_some_and(|c| c.certificate_authority.is_some())
            {
                found.push(format!(
                    "cluster {:?} has `certificate-authority` (it would read a file of this machine)",
                    cluster.name
                ));
            }
        }
        if !found.is_empty() {
            return Err(refuse(format!(
                "{}; a kubeconfig read from a Secret may authenticate only with an inline token or client certificate (`token`, `client-certificate-data` and `client-key-data`, the CA as `certificate-authority-data`), so it is never used",
                found.join("; ")
            )));
        }
        Ok(Published { text, file })
    }

    /// The kubeconfig as it is in the Secret.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The kubeconfig, read (for a connection of the caller's own, such as a TLS handshake with
    /// its server).
    pub fn file(&self) -> &Kubeconfig {
        &self.file
    }
}

/// What happened to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// It did not exist.
    Created,
    /// It already held this kubeconfig.
    Unchanged,
    /// It held another one and `force` replaced it.
    Replaced,
}

/// The file for `cluster` under `dir`.
pub fn path_for(dir: &Path, cluster: &str) -> PathBuf {
    dir.join(cluster)
        .join(format!("{cluster}-eks-a-cluster.kubeconfig"))
}

/// The most bytes of an existing kubeconfig file read to compare it with the new one: far above
/// any kubeconfig Cluster API publishes (a few KiB); a larger file is a different file.
const MAX_EXISTING_BYTES: u64 = 1 << 20;

/// Writes `content` for `cluster` under `dir` with mode 0600 (through [`snow_io::files`]: a link or
/// FIFO planted at the path is replaced, never written through or read).
pub fn write(
    dir: &Path,
    cluster: &str,
    content: &str,
    force: bool,
) -> Result<(PathBuf, Written), KubeError> {
    let path = path_for(dir, cluster);
    let failed = |e: std::io::Error| KubeError::Write {
        path: path.clone(),
        reason: e.to_string(),
    };
    let unreadable = |e: std::io::Error| KubeError::Read {
        path: path.clone(),
        reason: e.to_string(),
    };
    let outcome = match files::existing(&path, MAX_EXISTING_BYTES).map_err(unreadable)? {
        Existing::File(old) if old == content.as_bytes() => {
            return Ok((path, Written::Unchanged));
        }
        Existing::Absent => Written::Created,
        _ if !force => return Err(KubeError::KubeconfigFileExists { path }),
        _ => Written::Replaced,
    };
    let relative = Path::new(cluster).join(path.file_name().unwrap_or_default());
    files::write_under(dir, &relative, |f| f.write_all(content.as_bytes())).map_err(failed)?;
    Ok((path, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const SECRET: &str = "eksa-system/edge-kubeconfig";

    fn kubeconfig(cluster: &str, user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: edge\n  cluster:\n    server: https://127.0.0.1:6443\n{cluster}users:\n- name: edge-admin\n  user:\n{user}contexts:\n- name: edge\n  context: {{cluster: edge, user: edge-admin}}\ncurrent-context: edge\n"
        )
    }

    #[test]
    fn inline_tokens_and_client_certificates_are_taken() {
        let ca = "    certificate-authority-data: Q0E=\n";
        for user in [
            "    token: s3cr3t-token\n",
            "    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n",
        ] {
            let text = kubeconfig(ca, user);
            let published = Published::parse(SECRET, text.clone()).expect(user);
            assert_eq!(published.text(), text);
            // Debug shows none of it.
            assert!(!format!("{published:?}").contains("s3cr3t"));
        }
    }

    #[test]
    fn programs_local_files_and_passwords_are_refused_naming_the_secret() {
        for (cluster, user, said) in [
            (
                "",
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, touch /tmp/x]\n",
                "`exec` (it would run \"/bin/sh\")",
            ),
            (
                "",
                "    auth-provider:\n      name: gcp\n      config: {cmd-path: /bin/sh}\n",
                "`auth-provider` \"gcp\"",
            ),
            (
                "",
                "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n",
                "`tokenFile`",
            ),
            (
                "",
                "    client-certificate: /etc/cert\n    client-key: /etc/key\n",
                "`client-key`",
            ),
            (
                "",
                "    username: admin\n    password: pw\n",
                "`username`/`password`",
            ),
            (
                "    certificate-authority: /etc/ca\n",
                "    token: t\n",
                "cluster \"edge\" has `certificate-authority`",
            ),
        ] {
            let err = Published::parse(SECRET, kubeconfig(cluster, user)).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, KubeError::SecretKubeconfig { .. }), "{text}");
            assert!(text.contains(SECRET) && text.contains(said), "{text}");
            assert!(
                text.contains("only with an inline token or client certificate"),
                "{text}"
            );
        }
        let err = Published::parse(SECRET, "users: [1".into()).unwrap_err();
        assert!(err.to_string().contains("it is not a kubeconfig"), "{err}");
    }

    #[test]
    fn writes_once_keeps_a_different_file_and_replaces_it_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let (path, w) = write(dir.path(), "edge", "a: 1\n", false).unwrap();
        assert_eq!(w, Written::Created);
        assert_eq!(path, dir.path().join("edge/edge-eks-a-cluster.kubeconfig"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(
            write(dir.path(), "edge", "a: 1\n", false).unwrap().1,
            Written::Unchanged
        );
        assert!(matches!(
            write(dir.path(), "edge", "b: 2\n", false),
            Err(KubeError::KubeconfigFileExists { .. })
        ));
        assert_eq!(fs::read_to_string(&path).unwrap(), "a: 1\n");
        assert_eq!(
            write(dir.path(), "edge", "b: 2\n", true).unwrap().1,
            Written::Replaced
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "b: 2\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_link_at_the_path_is_not_read_and_is_replaced_only_with_force() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("edge")).unwrap();
        let path = path_for(dir.path(), "edge");
        // Reading a FIFO blocks until a writer comes: it must not be opened.
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success());
        assert!(matches!(
            write(dir.path(), "edge", "a: 1\n", false),
            Err(KubeError::KubeconfigFileExists { .. })
        ));
        assert_eq!(
            write(dir.path(), "edge", "a: 1\n", true).unwrap().1,
            Written::Replaced
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "a: 1\n");
        // A link to a file elsewhere: that file is kept, the link replaced.
        let target = dir.path().join("elsewhere");
        fs::write(&target, "keep me\n").unwrap();
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert_eq!(
            write(dir.path(), "edge", "b: 2\n", true).unwrap().1,
            Written::Replaced
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_file_or_symlink_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, "keep me\n").unwrap();
        fs::create_dir_all(dir.path().join("edge")).unwrap();
        // The temporary name an older snowctl used, as a symlink to another file.
        let planted = dir.path().join("edge/edge-eks-a-cluster.kubeconfig.tmp");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let (path, _) = write(dir.path(), "edge", "secret: 1\n", false).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
        assert_eq!(fs::read_to_string(&path).unwrap(), "secret: 1\n");
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("edge"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".snowctl-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
