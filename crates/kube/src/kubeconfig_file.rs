//! A kubeconfig file given to snowctl (`--kubeconfig`, `--bootstrap-kubeconfig`, …), read and
//! checked before kube-rs sees it: at most [`MAX_KUBECONFIG_BYTES`] (`/dev/zero` is refused, not
//! read to the end), UTF-8 text (kube-rs's own reader panics on some other bytes, such as an odd
//! number of bytes after a UTF-16 byte-order mark), parsed as a kubeconfig; its relative file
//! paths resolved against its directory (as kubectl and kube-rs do), and each file it names
//! (CA, client certificate and key, token) a regular file of at most [`MAX_KUBECONFIG_BYTES`].
//!
//! Credential plugins (`exec`) are kept: the operator wrote this file, as for kubectl.
//!
//! [`KubeconfigSource`]: several such files merged as kubectl merges a `KUBECONFIG` list, and
//! the context to use. The caller finds the files (flags, `KUBECONFIG`, `~/.kube/config`): this
//! crate reads no environment.

use crate::{KubeError, error::chain};
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
    /// Reads and checks `path`; [`KubeError::Kubeconfig`] naming it and saying what is wrong.
    pub fn read(path: &Path) -> Result<KubeconfigFile, KubeError> {
        KubeconfigFile::read_if_present(path)?.ok_or_else(|| KubeError::Kubeconfig {
            path: path.to_owned(),
            reason: std::io::Error::from(std::io::ErrorKind::NotFound).to_string(),
        })
    }

    /// As [`KubeconfigFile::read`], `None` when `path` does not exist (kubectl skips such a file
    /// of a `KUBECONFIG` list).
    fn read_if_present(path: &Path) -> Result<Option<KubeconfigFile>, KubeError> {
        let bad = |reason: String| KubeError::Kubeconfig {
            path: path.to_owned(),
            reason,
        };
        let bytes = match snow_io::files::read_bounded(path, MAX_KUBECONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(bad(match e.kind() {
                    std::io::ErrorKind::FileTooLarge => format!(
                        "it is larger than {} MiB, the most snowctl reads from a kubeconfig",
                        MAX_KUBECONFIG_BYTES >> 20
                    ),
                    _ => e.to_string(),
                }));
            }
        };
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
        // kubectl treats an empty current-context as none, so a later file's may stand.
        if config.current_context.as_deref() == Some("") {
            config.current_context = None;
        }
        Ok(Some(KubeconfigFile {
            path: path.to_owned(),
            config,
        }))
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

/// Where a management cluster's kubeconfig comes from, as kubectl resolves it: files merged in
/// order (the first file to define a cluster, user or context of a name, or a current context,
/// wins; a file that does not exist is skipped, unless none of them exists), and the context to
/// use (default: the merged current context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeconfigSource {
    /// The files, first the one that wins.
    pub paths: Vec<PathBuf>,
    /// The context (default: the merged current context).
    pub context: Option<String>,
}

impl KubeconfigSource {
    /// One file, and its current context.
    pub fn file(path: impl Into<PathBuf>) -> KubeconfigSource {
        KubeconfigSource {
            paths: vec![path.into()],
            context: None,
        }
    }

    /// The same files, with `context`.
    pub fn with_context(self, context: Option<&str>) -> KubeconfigSource {
        KubeconfigSource {
            context: context.map(str::to_owned),
            ..self
        }
    }

    /// The files as a `KUBECONFIG` list (`a:b`), for messages.
    pub fn shown(&self) -> String {
        let paths: Vec<_> = self.paths.iter().map(|p| p.display().to_string()).collect();
        paths.join(":")
    }

    /// Reads every file that exists ([`KubeconfigFile::read`]'s checks, each error naming its
    /// file) and merges them; checks that the context (given, else the current one) is
    /// defined. [`KubeError::Kubeconfig`] naming every file tried when none exists.
    pub fn read(&self) -> Result<KubeconfigFile, KubeError> {
        let bad = |reason: String| KubeError::Kubeconfig {
            path: PathBuf::from(self.shown()),
            reason,
        };
        let mut merged: Option<KubeconfigFile> = None;
        for path in &self.paths {
            let Some(file) = KubeconfigFile::read_if_present(path)? else {
                continue;
            };
            merged = Some(match merged {
                None => file,
                Some(first) => KubeconfigFile {
                    config: first
                        .config
                        .merge(file.config)
                        .map_err(|e| KubeError::Kubeconfig {
                            path: path.clone(),
                            reason: format!(
                                "cannot be merged after {}: {}",
                                first.path.display(),
                                chain(&e)
                            ),
                        })?,
                    ..first
                },
            });
        }
        let Some(merged) = merged else {
            let reason = match self.paths.len() {
                0 => "no kubeconfig file given".to_owned(),
                1 => std::io::Error::from(std::io::ErrorKind::NotFound).to_string(),
                _ => "none of these files exists".to_owned(),
            };
            return Err(bad(reason));
        };
        let contexts = &merged.config.contexts;
        match self
            .context
            .as_deref()
            .or(merged.config.current_context.as_deref())
        {
            Some(context) if contexts.iter().any(|c| c.name == context) => {}
            Some(context) => {
                let names: Vec<&str> = contexts.iter().map(|c| c.name.as_str()).collect();
                return Err(bad(format!(
                    "it has no context {context} (its contexts: {})",
                    match names.is_empty() {
                        true => "none".to_owned(),
                        false => names.join(", "),
                    }
                )));
            }
            None => {
                return Err(bad(
                    "it has no current-context and no context was asked for".to_owned(),
                ));
            }
        }
        Ok(merged)
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

    /// A kubeconfig of `clusters`, `users` and `contexts` (`(name, cluster, user)`), with
    /// `current` as its current context when given. Cluster `NAME` has server `https://NAME`;
    /// user `U`'s name is `U-of-FIRST` (the first cluster of the file), to tell files apart.
    fn partial(
        clusters: &[&str],
        users: &[&str],
        contexts: &[(&str, &str, &str)],
        current: Option<&str>,
    ) -> String {
        let mut text = "apiVersion: v1\nkind: Config\nclusters:\n".to_owned();
        for c in clusters {
            text.push_str(&format!(
                "- name: {c}\n  cluster: {{server: 'https://{c}'}}\n"
            ));
        }
        text.push_str("users:\n");
        for u in users {
            let owner = clusters.first().copied().unwrap_or("none");
            text.push_str(&format!(
                "- name: {u}\n  user: {{username: {u}-of-{owner}}}\n"
            ));
        }
        text.push_str("contexts:\n");
        for (name, cluster, user) in contexts {
            text.push_str(&format!(
                "- name: {name}\n  context: {{cluster: {cluster}, user: {user}}}\n"
            ));
        }
        if let Some(current) = current {
            text.push_str(&format!("current-context: '{current}'\n"));
        }
        text
    }

    fn source(dir: &Path, files: &[(&str, Option<&str>)]) -> KubeconfigSource {
        let mut paths = Vec::new();
        for (name, text) in files {
            let path = dir.join(name);
            if let Some(text) = text {
                std::fs::write(&path, text).unwrap();
            }
            paths.push(path);
        }
        KubeconfigSource {
            paths,
            context: None,
        }
    }

    fn server(file: &KubeconfigFile, context: &str) -> String {
        let cluster = (file.config.contexts.iter())
            .find(|c| c.name == context)
            .and_then(|c| c.context.as_ref())
            .map(|c| c.cluster.clone())
            .unwrap();
        (file.config.clusters.iter())
            .find(|c| c.name == cluster)
            .and_then(|c| c.cluster.as_ref())
            .and_then(|c| c.server.clone())
            .unwrap()
    }

    #[test]
    fn two_files_merge_and_the_first_to_define_a_name_wins() {
        let dir = tempfile::tempdir().unwrap();
        // a: the context and its user, a cluster `shared`; b: the cluster the context needs,
        // another `shared`, another current context.
        let a = partial(
            &["shared"],
            &["admin"],
            &[("mgmt", "mgmt", "admin")],
            Some("mgmt"),
        );
        let b = partial(
            &["mgmt", "shared"],
            &["admin", "other"],
            &[("mgmt", "shared", "other"), ("b-only", "shared", "other")],
            Some("b-only"),
        );
        let b = b.replace("https://shared", "https://b-shared");
        let src = source(dir.path(), &[("a", Some(&a)), ("b", Some(&b))]);
        let merged = src.read().unwrap();
        assert_eq!(merged.config.current_context.as_deref(), Some("mgmt"));
        assert_eq!(server(&merged, "mgmt"), "https://mgmt");
        let names = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
        let clusters: Vec<String> = merged
            .config
            .clusters
            .iter()
            .map(|c| c.name.clone())
            .collect();
        assert_eq!(clusters, names(vec!["shared", "mgmt"]));
        assert_eq!(
            server(&merged, "b-only"),
            "https://shared",
            "a's `shared` wins"
        );
        let user = (merged.config.auth_infos.iter())
            .find(|u| u.name == "admin")
            .and_then(|u| u.auth_info.as_ref())
            .and_then(|u| u.username.clone());
        assert_eq!(user.as_deref(), Some("admin-of-shared"), "a's admin wins");
        // In the other order, b's definitions win.
        let swapped = source(dir.path(), &[("b", None), ("a", None)]);
        let merged = swapped.read().unwrap();
        assert_eq!(merged.config.current_context.as_deref(), Some("b-only"));
        assert_eq!(server(&merged, "b-only"), "https://b-shared");
        // Either file alone lacks what the context needs; merged, a context of either is found.
        let ctx = src.clone().with_context(Some("b-only"));
        assert!(ctx.read().is_ok());
    }

    #[test]
    fn an_empty_current_context_lets_a_later_file_set_it() {
        let dir = tempfile::tempdir().unwrap();
        let a = partial(&["c"], &["u"], &[("x", "c", "u")], Some(""));
        let b = partial(&[], &[], &[], Some("x"));
        let src = source(dir.path(), &[("a", Some(&a)), ("b", Some(&b))]);
        assert_eq!(
            src.read().unwrap().config.current_context.as_deref(),
            Some("x")
        );
    }

    #[test]
    fn missing_files_are_skipped_unless_none_exists_and_then_each_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = partial(&["c"], &["u"], &[("x", "c", "u")], Some("x"));
        let src = source(
            dir.path(),
            &[("gone", None), ("a", Some(&a)), ("also-gone", None)],
        );
        assert!(src.read().is_ok());
        let src = source(dir.path(), &[("gone", None), ("also-gone", None)]);
        let err = src.read().unwrap_err().to_string();
        let (gone, also) = (dir.path().join("gone"), dir.path().join("also-gone"));
        assert!(
            err.contains(&format!("{}:{}", gone.display(), also.display()))
                && err.contains("none of these files exists"),
            "{err}"
        );
        // One file (--kubeconfig) that does not exist is named too.
        let err = KubeconfigSource::file(&gone)
            .read()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&gone.display().to_string()), "{err}");
    }

    #[test]
    fn a_bad_file_among_good_ones_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let a = partial(&["c"], &["u"], &[("x", "c", "u")], Some("x"));
        let src = source(
            dir.path(),
            &[("a", Some(&a)), ("bad", Some("clusters: [1, 2\n"))],
        );
        let err = src.read().unwrap_err();
        assert!(
            matches!(&err, KubeError::Kubeconfig { path, .. } if *path == dir.path().join("bad")),
            "{err}"
        );
        // A file of another kind cannot be merged: named, with the one before it.
        let other = a.replace("kind: Config", "kind: Other");
        let src = source(dir.path(), &[("a", None), ("other", Some(&other))]);
        let err = src.read().unwrap_err().to_string();
        assert!(
            err.contains(&dir.path().join("other").display().to_string())
                && err.contains("cannot be merged after"),
            "{err}"
        );
    }

    #[test]
    fn a_context_that_is_not_defined_is_an_error_listing_the_contexts() {
        let dir = tempfile::tempdir().unwrap();
        let a = partial(&["c"], &["u"], &[("x", "c", "u"), ("y", "c", "u")], None);
        let src = source(dir.path(), &[("a", Some(&a))]);
        let err = src.read().unwrap_err().to_string();
        assert!(err.contains("no current-context"), "{err}");
        let err = (src.clone().with_context(Some("z")).read())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no context z (its contexts: x, y)"), "{err}");
        assert!(src.with_context(Some("y")).read().is_ok());
    }
}
