//! What `create cluster`, `upgrade cluster` and `delete cluster` need for GitOps when the
//! cluster's spec names a FluxConfig (`gitOpsRef`): the repository's credentials, from the
//! environment as EKS Anywhere reads them, and, for a management cluster's create, where Flux's
//! install manifest comes from. A workload cluster's create and upgrade commit its files to its
//! management cluster's repository (Flux runs there alone): they need the credentials only;
//! a delete needs them when the cluster's files are in a repository.
//!
//! Credentials by the repository URL's scheme:
//! - `ssh://` (generic git, and GitHub, whose URL Flux reads is `ssh://git@github.com/…`): the
//!   private key file `EKSA_GIT_PRIVATE_KEY`, the `known_hosts` file `EKSA_GIT_KNOWN_HOSTS`,
//!   the key's passphrase `EKSA_GIT_SSH_KEY_PASSPHRASE` when it has one (EKS Anywhere's names).
//! - `https://` (beyond EKS Anywhere, which takes only `ssh://` for generic git): a token
//!   `SNOWCTL_GIT_TOKEN` (sent as a bearer token, or as basic auth's password with
//!   `SNOWCTL_GIT_USERNAME`) and the server's CA file `SNOWCTL_GIT_CA_BUNDLE` when its certificate
//!   is not from a public CA.

use super::{SettingsError, read_text};
use crate::env::{self, Environment};
use snow_api::{ValidSpec, gitops::GitOps};
use snow_images::assets::FetchConfig;
use snow_provision::flux_manifest::{FluxManifest, FluxManifestError};
use snow_provision::gitops::{Auth, HttpCredential, HttpsAuth, Secret, SshAuth};
use std::path::{Path, PathBuf};

/// GitOps' inputs of a create, resolved.
pub struct GitOpsSettings {
    /// `--flux-manifest`: Flux's install manifest given (else the archive's, else fetched).
    pub flux_manifest: Option<PathBuf>,
    /// Whether Flux is installed (a management cluster's create); a workload cluster's files go
    /// to its management cluster's repository, and Flux's install manifest is not read.
    pub install: bool,
    /// How Flux's install manifest is fetched when neither it nor an archive is given (set by
    /// [`GitOpsSettings::fetched_through`]).
    pub flux_fetch: Option<FetchConfig>,
    /// The repository's credentials.
    pub auth: Auth,
}

impl GitOpsSettings {
    /// Without `--flux-manifest` or `--artifacts`, Flux's install manifest is fetched through
    /// `fetch` (the components' cache and `--ca-cert`) when Flux is installed at all.
    pub fn fetched_through(
        mut self,
        artifacts: bool,
        fetch: impl FnOnce() -> Result<FetchConfig, SettingsError>,
    ) -> Result<GitOpsSettings, SettingsError> {
        if self.install && self.flux_manifest.is_none() && !artifacts {
            self.flux_fetch = Some(fetch()?);
        }
        Ok(self)
    }

    /// Where Flux's install manifest comes from, as `snow_provision::flux_manifest` takes it:
    /// `--flux-manifest`, else the archive of `--artifacts` (`archive`, the catalog's, opened
    /// once), else fetched.
    pub fn flux_source<'a>(
        &'a self,
        archive: Option<&'a snow_images::Archive>,
    ) -> Result<FluxManifest<'a>, SettingsError> {
        match (&self.flux_manifest, archive, &self.flux_fetch) {
            (Some(path), _, _) => Ok(FluxManifest::File(path)),
            (None, Some(archive), _) => Ok(FluxManifest::Archive(archive)),
            (None, None, Some(config)) => Ok(FluxManifest::fetch(config.clone())),
            (None, None, None) => Err(SettingsError::Archive(
                "the archive of --artifacts was not opened".into(),
            )),
        }
    }
}

impl From<FluxManifestError> for SettingsError {
    fn from(e: FluxManifestError) -> SettingsError {
        match e.is_input() {
            true => SettingsError::Usage(e.to_string()),
            false => SettingsError::Failed(e.to_string()),
        }
    }
}

impl std::fmt::Debug for GitOpsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitOpsSettings")
            .field("flux_manifest", &self.flux_manifest)
            .field("install", &self.install)
            .field("flux_fetch", &self.flux_fetch.is_some())
            .field("auth", &self.auth)
            .finish()
    }
}

/// GitOps' inputs of a create of `spec`: `None` when it names no FluxConfig; the credentials for
/// every spec that names one, and Flux's install manifest's source for a management cluster.
/// `--flux-manifest` without Flux to install is a usage error, as is any credential missing
/// (all named at once) or unreadable.
pub fn resolve(
    spec: &ValidSpec,
    flux_manifest: Option<&Path>,
    environment: &Environment,
) -> Result<Option<GitOpsSettings>, SettingsError> {
    let install = spec.is_self_managed();
    if flux_manifest.is_some() && !(install && spec.gitops().is_some()) {
        return Err(SettingsError::usage(format!(
            "--flux-manifest is for a management cluster whose Cluster names a FluxConfig (spec.gitOpsRef), and cluster {} {}: drop --flux-manifest",
            spec.name(),
            match spec.gitops() {
                Some(_) => "is a workload cluster (Flux runs on its management cluster alone)",
                None => "names none",
            }
        )));
    }
    let Some(gitops) = spec.gitops() else {
        return Ok(None);
    };
    Ok(Some(GitOpsSettings {
        flux_manifest: flux_manifest.map(Path::to_path_buf),
        install,
        flux_fetch: None,
        auth: auth(gitops, environment)?,
    }))
}

/// A repository's credentials read from the environment when the repository is known: a delete
/// learns it from the management cluster, after its settings are resolved.
pub struct GitCredentials(Environment);

impl From<&Environment> for GitCredentials {
    fn from(environment: &Environment) -> GitCredentials {
        GitCredentials(environment.clone())
    }
}

impl GitCredentials {
    /// The credentials of `gitops`' repository ([`auth`]).
    pub fn auth(&self, gitops: &GitOps) -> Result<Auth, SettingsError> {
        auth(gitops, &self.0)
    }
}

/// The credentials of `gitops`' repository, by its URL's kind: SSH from EKS Anywhere's
/// variables, HTTPS from snowctl's.
pub fn auth(gitops: &GitOps, environment: &Environment) -> Result<Auth, SettingsError> {
    match gitops.repository_url().starts_with("https://") {
        true => https(environment),
        false => ssh(gitops.name(), environment),
    }
}

/// The SSH credentials: every missing variable named in one error.
fn ssh(flux_config: &str, environment: &Environment) -> Result<Auth, SettingsError> {
    let key = environment.path(env::GIT_PRIVATE_KEY);
    let known_hosts = environment.path(env::GIT_KNOWN_HOSTS);
    let (Some(key), Some(known_hosts)) = (key.as_deref(), known_hosts.as_deref()) else {
        let missing: Vec<String> = [
            (
                key.is_none(),
                env::GIT_PRIVATE_KEY,
                "the SSH private key's file",
            ),
            (
                known_hosts.is_none(),
                env::GIT_KNOWN_HOSTS,
                "a known_hosts file with the git server's host key, from ssh-keyscan -p PORT HOST",
            ),
        ]
        .into_iter()
        .filter(|(unset, ..)| *unset)
        .map(|(_, name, what)| format!("{name} ({what})"))
        .collect();
        return Err(SettingsError::usage(format!(
            "FluxConfig {flux_config} names an ssh:// repository, and snowctl pushes the cluster's configuration there: set {}",
            missing.join(" and ")
        )));
    };
    Ok(Auth::Ssh(SshAuth {
        private_key: Secret::new(read_text(
            key,
            &format!("the SSH private key ({})", env::GIT_PRIVATE_KEY),
        )?),
        passphrase: environment
            .var(env::GIT_SSH_KEY_PASSPHRASE)
            .filter(|p| !p.is_empty())
            .map(Secret::new),
        known_hosts: read_text(
            known_hosts,
            &format!("the known_hosts file ({})", env::GIT_KNOWN_HOSTS),
        )?,
    }))
}

/// The HTTPS credentials.
fn https(environment: &Environment) -> Result<Auth, SettingsError> {
    let token = environment.var(env::GIT_TOKEN).filter(|t| !t.is_empty());
    let credential = token.map(|token| match environment.var(env::GIT_USERNAME) {
        Some(user) if !user.is_empty() => HttpCredential::Basic {
            user: user.to_owned(),
            password: Secret::new(token),
        },
        _ => HttpCredential::Bearer(Secret::new(token)),
    });
    let ca_bundle_pem = match environment.path(env::GIT_CA_BUNDLE) {
        Some(path) => Some(
            read_text(
                &path,
                &format!("the git server's CA bundle ({})", env::GIT_CA_BUNDLE),
            )?
            .into_bytes(),
        ),
        None => None,
    };
    Ok(Auth::Https(HttpsAuth {
        credential,
        ca_bundle_pem,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cluster `edge` (self-managed), naming FluxConfig `edge` of an ssh:// repository when
    /// `gitops`.
    fn spec(gitops: bool) -> ValidSpec {
        let mut text = snow_test_kube::edge_spec::EdgeSpec::default().yaml();
        if gitops {
            text = text.replacen(
                "spec:\n",
                "spec:\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
                1,
            );
            text.push_str("---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: edge\nspec:\n  branch: main\n  git:\n    repositoryUrl: ssh://git@127.0.0.1:2222/fleet.git\n    sshKeyAlgorithm: ed25519\n");
        }
        let report = snow_api::check(&text).expect("the test spec parses");
        match report.into_valid() {
            Ok(spec) => spec,
            Err(report) => panic!("the test spec is valid: {:?}", report.findings),
        }
    }

    #[test]
    fn ssh_credentials_missing_are_named_together() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve(&spec(true), None, &Environment::new(dir.path())).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("EKSA_GIT_PRIVATE_KEY"), "{text}");
        assert!(text.contains("EKSA_GIT_KNOWN_HOSTS"), "{text}");
    }

    #[test]
    fn ssh_credentials_are_read_from_the_files_named_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("id");
        let hosts = dir.path().join("known_hosts");
        std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0\n").unwrap();
        std::fs::write(&hosts, "[127.0.0.1]:2222 ssh-ed25519 AAAA\n").unwrap();
        let environment = Environment::new(dir.path())
            .with(env::GIT_PRIVATE_KEY, key.to_str().unwrap())
            .with(env::GIT_KNOWN_HOSTS, hosts.to_str().unwrap())
            .with(env::GIT_SSH_KEY_PASSPHRASE, "hunter2");
        let got = resolve(&spec(true), None, &environment)
            .unwrap()
            .expect("a management cluster with gitOpsRef needs GitOps");
        let shown = format!("{got:?}");
        assert!(
            !shown.contains("c2VjcmV0") && !shown.contains("hunter2"),
            "{shown}"
        );
        let Auth::Ssh(ssh) = got.auth else {
            panic!("an ssh:// repository takes SSH credentials")
        };
        assert_eq!(ssh.known_hosts, "[127.0.0.1]:2222 ssh-ed25519 AAAA\n");
        assert!(ssh.passphrase.is_some());
    }

    #[test]
    fn a_workload_cluster_with_gitops_needs_the_credentials_and_no_flux_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let text = snow_test_kube::edge_spec::EdgeSpec::default().yaml().replacen(
            "spec:\n",
            "spec:\n  managementCluster: {name: mgmt}\n  gitOpsRef: {kind: FluxConfig, name: edge}\n",
            1,
        ) + "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata:\n  name: edge\nspec:\n  git:\n    repositoryUrl: ssh://git@127.0.0.1:2222/fleet.git\n";
        let workload = snow_api::check(&text).unwrap().into_valid().unwrap();
        let err = resolve(&workload, None, &Environment::new(dir.path())).unwrap_err();
        assert!(err.to_string().contains("EKSA_GIT_PRIVATE_KEY"), "{err}");
        let key = dir.path().join("id");
        let hosts = dir.path().join("known_hosts");
        std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
        std::fs::write(&hosts, "[127.0.0.1]:2222 ssh-ed25519 AAAA\n").unwrap();
        let environment = Environment::new(dir.path())
            .with(env::GIT_PRIVATE_KEY, key.to_str().unwrap())
            .with(env::GIT_KNOWN_HOSTS, hosts.to_str().unwrap());
        let got = resolve(&workload, None, &environment).unwrap().unwrap();
        assert!(!got.install && matches!(got.auth, Auth::Ssh(_)));
        let err = resolve(&workload, Some(Path::new("install.yaml")), &environment).unwrap_err();
        assert!(err.to_string().contains("is a workload cluster"), "{err}");
    }

    #[test]
    fn a_spec_without_gitops_needs_nothing_and_refuses_the_flux_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let environment = Environment::new(dir.path());
        assert!(resolve(&spec(false), None, &environment).unwrap().is_none());
        let err = resolve(&spec(false), Some(Path::new("install.yaml")), &environment).unwrap_err();
        assert!(err.to_string().contains("drop --flux-manifest"), "{err}");
    }
}
