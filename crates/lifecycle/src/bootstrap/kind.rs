//! The kind bootstrap cluster, run as EKS Anywhere runs it:
//! `kind create cluster --name <cluster>-eks-a-cluster --kubeconfig
//! <dir>/<cluster>/generated/<cluster>.kind.kubeconfig --image <kind node> --config
//! <dir>/<cluster>/generated/kind_tmp.yaml`, then the namespace `eksa-system`; `kind delete
//! cluster --name … --kubeconfig …` at the end.

use super::{
    BootstrapCluster,
    config::{self, AUDIT_POLICY_FILE, CONFIG_FILE, KindFiles},
    process::{self, find_executable},
};
use crate::{Event, LifecycleError, Management, files};
use serde_json::json;
use snow_api::{ValidSpec, release::ClusterRelease};
use std::io::Write as _;
use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    time::Duration,
};

/// The namespace EKS Anywhere creates on the bootstrap cluster right after kind made it.
pub const NAMESPACE: &str = snow_api::names::SYSTEM_NAMESPACE;

/// The kind cluster's name for a cluster (EKS Anywhere's `<cluster>-eks-a-cluster`).
pub fn internal_name(cluster: &str) -> String {
    format!("{cluster}-eks-a-cluster")
}

/// Where the kind driver writes and what it runs.
#[derive(Debug, Clone)]
pub struct KindOptions {
    /// The directory `<cluster>/generated/` goes under (EKS Anywhere uses the working directory,
    /// the empty path here).
    pub dir: PathBuf,
    /// The kind executable: a path, or a name looked up in `search_path`.
    pub kind: PathBuf,
    /// docker (kind runs its nodes as docker containers): checked to be there before kind runs.
    pub docker: PathBuf,
    /// The `PATH`-style list bare names are looked up in. The default is this process's `PATH`,
    /// where running `kind` would look.
    pub search_path: Option<OsString>,
    /// How long `kind create cluster` may take (it may pull the node image).
    pub create_timeout: Duration,
    /// How long the other kind commands may take.
    pub command_timeout: Duration,
}

impl Default for KindOptions {
    fn default() -> KindOptions {
        KindOptions {
            dir: PathBuf::new(),
            kind: "kind".into(),
            docker: "docker".into(),
            search_path: std::env::var_os("PATH"),
            create_timeout: Duration::from_secs(15 * 60),
            command_timeout: Duration::from_secs(3 * 60),
        }
    }
}

/// A kind bootstrap cluster for one cluster spec.
#[derive(Debug, Clone)]
pub struct Kind {
    name: String,
    generated: PathBuf,
    kubeconfig: PathBuf,
    config: PathBuf,
    image: String,
    files: KindFiles,
    options: KindOptions,
    /// The authenticated mirror's login (`Debug` shows the user name only).
    login: Option<snow_credentials::RegistryCredentials>,
}

impl Kind {
    /// The kind cluster of `spec`: its node image is the bundle's `eksD.kindNode` (an error when
    /// the bundle lacks it), mirror-rewritten like its configuration.
    pub fn new(
        spec: &ValidSpec,
        release: &ClusterRelease<'_>,
        options: KindOptions,
    ) -> Result<Kind, LifecycleError> {
        let cluster = spec.name();
        let generated = options.dir.join(cluster).join("generated");
        // The mounts' host paths are absolute: kind would resolve relative ones against its own
        // working directory.
        let absolute = std::path::absolute(&generated).map_err(|e| LifecycleError::Write {
            path: generated.clone(),
            reason: e.to_string(),
        })?;
        Ok(Kind {
            name: internal_name(cluster),
            kubeconfig: generated.join(format!("{cluster}.kind.kubeconfig")),
            config: generated.join(CONFIG_FILE),
            image: config::kind_node_image(spec, release)?,
            files: config::kind_files(spec, release, &absolute),
            generated,
            options,
            login: None,
        })
    }

    /// With an authenticated mirror (`registryMirrorConfiguration.authenticate`): each
    /// `hosts.toml` also carries the login as containerd's `Basic` authorization header (as EKS
    /// Anywhere's kind cluster pulls through such a mirror) and is written 0600.
    pub fn with_registry_login(
        mut self,
        login: Option<snow_credentials::RegistryCredentials>,
    ) -> Kind {
        self.login = login;
        self
    }

    /// The kind cluster's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node image `kind create cluster` is given.
    pub fn image(&self) -> &str {
        &self.image
    }

    /// The generated files.
    pub fn files(&self) -> &KindFiles {
        &self.files
    }

    /// The arguments of `kind create cluster`.
    pub fn create_args(&self) -> Vec<OsString> {
        vec![
            "create".into(),
            "cluster".into(),
            "--name".into(),
            self.name.clone().into(),
            "--kubeconfig".into(),
            self.kubeconfig.clone().into(),
            "--image".into(),
            self.image.clone().into(),
            "--config".into(),
            self.config.clone().into(),
        ]
    }

    /// The arguments of `kind delete cluster`.
    pub fn delete_args(&self) -> Vec<OsString> {
        self.named(["delete", "cluster"])
    }

    /// `kind <verb> <noun> --name <name> --kubeconfig <file>`.
    fn named(&self, command: [&str; 2]) -> Vec<OsString> {
        let mut args: Vec<OsString> = command.iter().map(OsString::from).collect();
        args.extend([
            "--name".into(),
            self.name.clone().into(),
            "--kubeconfig".into(),
            self.kubeconfig.clone().into(),
        ]);
        args
    }

    /// kind, after checking that it and docker are installed.
    fn tools(&self) -> Result<PathBuf, LifecycleError> {
        let search = self.options.search_path.as_deref();
        let find = |program: &Path| {
            find_executable(program, search).ok_or_else(|| LifecycleError::ToolMissing {
                tool: program.display().to_string(),
                searched: if program.components().count() > 1 {
                    "no executable file there".into()
                } else {
                    "not on PATH".into()
                },
            })
        };
        let kind = find(&self.options.kind)?;
        find(&self.options.docker)?;
        Ok(kind)
    }

    /// Whether `kind get clusters` lists this cluster.
    async fn exists(&self, kind: &Path) -> Result<bool, LifecycleError> {
        let listed = process::run(
            kind,
            vec!["get".into(), "clusters".into()],
            self.options.command_timeout,
        )
        .await?;
        Ok(listed.lines().any(|line| line.trim() == self.name))
    }

    /// Writes the generated files under `<dir>/<cluster>/generated/`, each through
    /// [`crate::files`]: 0600, a temporary file renamed over its path, so a link planted at a
    /// file is replaced, never written through; a linked directory on the way, or a path that
    /// would leave the directory (a registry named `../x`), is refused.
    fn write_files(&self) -> Result<(), LifecycleError> {
        let files = [
            (CONFIG_FILE.into(), &self.files.config),
            (PathBuf::from(AUDIT_POLICY_FILE), &self.files.audit_policy),
        ];
        let certs = self.files.certs.iter().map(|(p, c)| (p.clone(), c));
        for (relative, content) in files.into_iter().chain(certs) {
            let failed = |e: std::io::Error| LifecycleError::Write {
                path: self.generated.join(&relative),
                reason: e.to_string(),
            };
            // The host table of a hosts.toml: where the mirror's login goes.
            let table = content
                .lines()
                .find_map(|l| l.strip_prefix("[host.").and_then(|t| t.strip_suffix(']')));
            let login = self.login.as_ref().zip(table);
            files::write_under(&self.options.dir, &self.in_dir(&relative), |file| {
                file.write_all(content.as_bytes())?;
                match login {
                    Some((login, table)) => {
                        login.write_containerd_header(&format!("host.{table}"), file)
                    }
                    None => Ok(()),
                }
            })
            .map_err(failed)?;
        }
        Ok(())
    }

    /// `<cluster>/generated/<relative>`: a generated file's path under [`KindOptions::dir`].
    fn in_dir(&self, relative: &Path) -> PathBuf {
        self.generated
            .strip_prefix(&self.options.dir)
            .unwrap_or(&self.generated)
            .join(relative)
    }
}

impl BootstrapCluster for Kind {
    /// Reuses the kind cluster when `kind get clusters` lists it (re-exporting its kubeconfig
    /// if the file is gone), else writes the generated files and creates it; then connects and
    /// makes sure the namespace `eksa-system` exists.
    async fn create_or_find(
        &self,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Management, LifecycleError> {
        let kind = self.tools()?;
        if self.exists(&kind).await? {
            on_event(Event::Step(format!(
                "Using existing bootstrap cluster {}",
                self.name
            )));
            if !self.kubeconfig.exists() {
                let args = self.named(["export", "kubeconfig"]);
                process::run(&kind, args, self.options.command_timeout).await?;
            }
        } else {
            on_event(Event::Step("Creating new bootstrap cluster".into()));
            self.write_files()?;
            process::run(&kind, self.create_args(), self.options.create_timeout).await?;
        }
        let mgmt = Management::connect(&crate::KubeconfigSource::file(&self.kubeconfig)).await?;
        mgmt.apply(&json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": NAMESPACE},
        }))
        .await?;
        on_event(Event::Applied {
            object: format!("Namespace/{NAMESPACE}"),
        });
        Ok(mgmt)
    }

    fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// `kind delete cluster` (which succeeds when the cluster is already gone).
    async fn delete(&self, on_event: &mut dyn FnMut(Event)) -> Result<(), LifecycleError> {
        let kind = self.tools()?;
        on_event(Event::Step("Deleting bootstrap cluster".into()));
        process::run(&kind, self.delete_args(), self.options.command_timeout).await?;
        Ok(())
    }
}
