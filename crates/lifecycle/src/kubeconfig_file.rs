//! A kubeconfig file given to snowctl (`--kubeconfig`, `--bootstrap-kubeconfig`, …), read and
//! checked before kube-rs sees it: at most [`MAX_KUBECONFIG_BYTES`] (`/dev/zero` is refused, not
//! read to the end), UTF-8 text (kube-rs's own reader panics on some other bytes, such as an odd
//! number of bytes after a UTF-16 byte-order mark), parsed as a kubeconfig; its relative file
//! paths resolved against its directory (as kubectl and kube-rs do), and each file it names
//! (CA, client certificate and key, token) a regular file of at most [`MAX_KUBECONFIG_BYTES`].
//!
//! Credential plugins (`exec`) are kept: the operator wrote this file, as for kubectl.

use crate::{LifecycleError, error::chain};
use kube::config::Kubeconfig;
use std::path::{Path, PathBuf};

/// The most bytes read from a kubeconfig file, and the largest file it may name (a CA bundle):
/// kubeconfigs of hundreds of clusters with inline certificates stay under a few MiB.
pub const MAX_KUBECONFIG_BYTES: u64 = 16 << 20;

/// A kubeconfig file, read and checked.
#[derive(Debug, Clone)]
pub struct KubeconfigFile {
    path: PathBuf,
    config: Kubeconfig,
}

impl KubeconfigFile {
    /// Reads and checks `path`; [`LifecycleError::Kubeconfig`] naming it and saying what is wrong.
    pub fn read(path: &Path) -> Result<KubeconfigFile, LifecycleError> {
        let bad = |reason: String| LifecycleError::Kubeconfig {
            path: path.to_owned(),
            reason,
        };
        let bytes = crate::files::read_bounded(path, MAX_KUBECONFIG_BYTES).map_err(|e| {
            bad(match e.kind() {
                std::io::ErrorKind::FileTooLarge => format!(
                    "it is larger than {} MiB, the most snowctl reads from a kubeconfig",
                    MAX_KUBECONFIG_BYTES >> 20
                ),
                _ => e.to_string(),
            })
        })?;
        let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
        let text = std::str::from_utf8(text).map_err(|e| {
            bad(format!(
                "not UTF-8 text (byte {} is not); save it as UTF-8",
                e.valid_up_to() + 1
            ))
        })?;
        let mut config = Kubeconfig::from_yaml(text).map_err(|e| bad(chain(&e)))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        for file in referenced_files(&mut config) {
            // kubectl's rule: a relative path is relative to the kubeconfig's directory.
            if Path::new(file.as_str()).is_relative()
                && let Some(absolute) = dir.join(file.as_str()).to_str()
            {
                *file = absolute.to_owned();
            }
            check_named_file(Path::new(file.as_str())).map_err(&bad)?;
        }
        // An exec plugin's command with a separator is a path too (kubectl's rule); a bare name
        // is looked up on PATH.
        for named in &mut config.auth_infos {
            if let Some(exec) = named.auth_info.as_mut().and_then(|a| a.exec.as_mut())
                && let Some(command) = &mut exec.command
                && command.contains(std::path::MAIN_SEPARATOR)
                && Path::new(command.as_str()).is_relative()
                && let Some(absolute) = dir.join(command.as_str()).to_str()
            {
                *command = absolute.to_owned();
            }
        }
        Ok(KubeconfigFile {
            path: path.to_owned(),
            config,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the cluster of `context` (default: the current context) has
    /// `insecure-skip-tls-verify: true`: its API server's certificate is not checked.
    pub fn skips_tls_verify(&self, context: Option<&str>) -> bool {
        let Some(context) = context.or(self.config.current_context.as_deref()) else {
            return false;
        };
        let cluster = self
            .config
            .contexts
            .iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context.as_ref())
            .map(|c| c.cluster.as_str());
        self.config
            .clusters
            .iter()
            .filter(|c| Some(c.name.as_str()) == cluster)
            .filter_map(|c| c.cluster.as_ref())
            .any(|c| c.insecure_skip_tls_verify == Some(true))
    }

    /// The parsed kubeconfig, for kube-rs.
    pub(crate) fn into_config(self) -> Kubeconfig {
        self.config
    }
}

/// Every file path the kubeconfig names (CA, client certificate, client key, token).
fn referenced_files(config: &mut Kubeconfig) -> Vec<&mut String> {
    let clusters = config
        .clusters
        .iter_mut()
        .filter_map(|c| c.cluster.as_mut())
        .filter_map(|c| c.certificate_authority.as_mut());
    let users = config
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
        .flat_map(|a| {
            [
                a.client_certificate.as_mut(),
                a.client_key.as_mut(),
                a.token_file.as_mut(),
            ]
        })
        .flatten();
    clusters.chain(users).collect()
}

/// A file the kubeconfig names must be a regular file kube-rs can read whole in bounds.
fn check_named_file(file: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "it names {}, which is not a regular file",
            file.display()
        ));
    }
    if meta.len() > MAX_KUBECONFIG_BYTES {
        return Err(format!(
            "it names {}, which is larger than {} MiB",
            file.display(),
            MAX_KUBECONFIG_BYTES >> 20
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(server_extra: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n{server_extra}contexts:\n- name: a\n  context: {{cluster: c, user: u}}\n- name: b\n  context: {{cluster: other, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\n"
        )
    }

    fn read(bytes: &[u8]) -> Result<KubeconfigFile, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, bytes).unwrap();
        KubeconfigFile::read(&path).map_err(|e| e.to_string())
    }

    #[test]
    fn bytes_kube_rs_panics_on_are_an_error_naming_the_file() {
        for bytes in [
            &b"\xff\xfeA"[..],
            b"\xfe\xffA",
            b"\xff\xfe",
            b"a: \xc3\x28\n",
        ] {
            let err = read(bytes).unwrap_err();
            assert!(
                err.contains("kubeconfig") && err.contains("not UTF-8"),
                "{err}"
            );
        }
        let err = read(b"clusters: [1, 2\n").unwrap_err();
        assert!(err.contains("kubeconfig"), "{err}");
        // A UTF-8 byte-order mark is allowed.
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend(kubeconfig("").as_bytes());
        assert!(read(&bom).is_ok());
    }

    #[test]
    fn a_device_or_a_huge_file_is_not_read_to_the_end() {
        let err = KubeconfigFile::read(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("larger than 16 MiB"), "{err}");
        let text = kubeconfig("    certificate-authority: /dev/zero\n");
        let err = read(text.as_bytes()).unwrap_err();
        assert!(
            err.contains("/dev/zero, which is not a regular file"),
            "{err}"
        );
    }

    #[test]
    fn relative_files_are_found_beside_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), "x").unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, kubeconfig("    certificate-authority: ca.pem\n")).unwrap();
        let file = KubeconfigFile::read(&path).unwrap();
        let ca = file.into_config().clusters[0]
            .cluster
            .as_ref()
            .unwrap()
            .certificate_authority
            .clone();
        assert_eq!(ca, dir.path().join("ca.pem").to_str().map(str::to_owned));
        std::fs::write(
            &path,
            kubeconfig("    certificate-authority: missing.pem\n"),
        )
        .unwrap();
        let err = KubeconfigFile::read(&path).unwrap_err().to_string();
        assert!(err.contains("missing.pem"), "{err}");
    }

    #[test]
    fn insecure_skip_tls_verify_is_seen_for_the_context_used() {
        let file = read(kubeconfig("    insecure-skip-tls-verify: true\n").as_bytes()).unwrap();
        assert!(file.skips_tls_verify(None));
        assert!(file.skips_tls_verify(Some("a")));
        assert!(!file.skips_tls_verify(Some("b")));
        assert!(
            !read(kubeconfig("").as_bytes())
                .unwrap()
                .skips_tls_verify(None)
        );
    }
}
