//! The settings of the cluster commands (`create|upgrade|delete|describe|move cluster`,
//! `upgrade plan cluster`, `renew certificates`), one type and one `resolve` per command, each
//! called once at the top of its command. They are pure: no printing, no exit code, no network
//! and no `std::env` (the [`Environment`] is given). What needs the network, the release
//! catalog, is left as its source ([`CatalogSource`]): the command asks the management cluster
//! whether it may act (`snow_provision::refusal`) and then reads it ([`super::fetch_catalog`]).

use super::{
    BootstrapFrom, ComponentsFrom, DeviceFiles, Management, Noted, Notice, ReleaseDefault,
    RenderFlags, SettingsError, SpecFile, catalog_source, check_kubeconfig, find_kubeconfig,
    gitops, load_spec, management, optional_secrets, read_cni_manifest, required_registry_login,
    waits,
};
use crate::{
    args::{
        CreateClusterArgs, DeleteClusterArgs, DescribeClusterArgs, MoveClusterArgs, OutputFormat,
        RenderArgs, RenewCertificatesArgs, UpgradeClusterArgs, UpgradePlanClusterArgs,
    },
    env::Environment,
};
use snow_credentials::{CaBundle, CredentialsFile, RegistryCredentials};
use snow_provision::{
    Checks, CniManifest, KubeconfigSource, MoveOptions, RenewOptions, Timeouts, WaitOptions,
    catalog::CatalogSource,
    gitops::Auth,
    target::{self, CreateTarget},
};
use std::path::PathBuf;

/// Preflight unless skipped, with a line per device when standard error is a terminal.
fn checks(skip: bool, skip_ip_check: bool, environment: &Environment) -> Checks {
    match skip {
        true => Checks::Skip,
        false => Checks::Run {
            skip_ip_check,
            timeout: snow_validate::limits::REQUEST_TIMEOUT,
            device_lines: environment.terminal(),
        },
    }
}

/// How files are fetched through the components' cache (`--cache-dir`) trusting `--ca-cert`.
fn fetch_config(
    components: &crate::args::ComponentArgs,
    environment: &Environment,
) -> Result<snow_images::assets::FetchConfig, SettingsError> {
    Ok(snow_images::assets::FetchConfig {
        ca_certs_pem: super::ca_certs(&components.ca_certs)?,
        ..snow_images::assets::FetchConfig::new(super::cache(
            components.cache_dir.as_deref(),
            environment,
        )?)
    })
}

/// The spec, its mirror's login required when it authenticates, and the render flags.
fn spec_and_flags(
    render: &RenderArgs,
    environment: &Environment,
) -> Result<(SpecFile, RenderFlags), SettingsError> {
    let spec = load_spec(&render.file, environment)?;
    required_registry_login(&spec.spec, environment)?;
    let flags = RenderFlags::resolve(render, &spec.spec, environment)?;
    Ok((spec, flags))
}

/// The release of a spec: the published one for its Kubernetes version unless the flags name
/// one.
fn spec_catalog(
    render: &RenderArgs,
    spec: &SpecFile,
    cache_dir: Option<&std::path::Path>,
    ca_certs: &[PathBuf],
    environment: &Environment,
) -> Result<CatalogSource, SettingsError> {
    let default = ReleaseDefault::Published {
        kube_version: Some(spec.spec.kubernetes_version()),
        cache_dir,
        ca_certs,
    };
    catalog_source(&render.release, default, environment)
}

/// `create cluster`, resolved from its flags and the environment. The place for every further
/// input of a create (a GitOps repository's flags and credentials among them).
pub struct CreateSettings {
    /// The spec, checked.
    pub spec: SpecFile,
    /// On the management cluster found (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`), or from
    /// nothing (none found, or `--self-managed`).
    pub target: CreateTarget,
    /// Where the release catalog comes from, read after the refusal.
    pub catalog: CatalogSource,
    /// `--contract`, the identity Secret's device files, the mirror's login.
    pub render: RenderFlags,
    /// `--cni-manifest`, read and parsed.
    pub cni_manifest: Option<CniManifest>,
    /// Preflight, unless `--skip-validations`.
    pub checks: Checks,
    /// The stages' timeouts.
    pub wait: WaitOptions,
    /// `--force`.
    pub force: bool,
    /// Where the cluster's files go (`./<cluster>/…`): the working directory.
    pub dir: PathBuf,
    /// GitOps' credentials and `--flux-manifest`, for a management cluster whose Cluster names
    /// a FluxConfig (`settings::gitops`).
    pub gitops: Option<gitops::GitOpsSettings>,
    /// What a create from nothing needs besides; none on a management cluster.
    pub from_nothing: Option<FromNothing>,
}

/// What `create cluster` from nothing needs from the flags and environment.
pub struct FromNothing {
    /// The bootstrap cluster.
    pub bootstrap: BootstrapFrom,
    /// Where the providers' components come from.
    pub components: ComponentsFrom,
}

impl CreateSettings {
    /// From `create cluster`'s flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &CreateClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<CreateSettings>, SettingsError> {
        let (spec, render) = spec_and_flags(&args.render, environment)?;
        let target = target::create_target(target::CreateTargetOptions {
            management: find_kubeconfig(&args.management, environment),
            self_managed: args.self_managed,
        });
        let mut notices = Vec::new();
        if let CreateTarget::Management(source) = &target {
            notices.extend(check_kubeconfig(source)?.notices);
            let from_nothing = &args.bootstrap;
            if from_nothing.bootstrap_kubeconfig.is_some()
                || from_nothing.keep_bootstrap
                || args.controller_image.is_some()
            {
                let why = format!(
                    "--bootstrap-kubeconfig, --keep-bootstrap and --controller-image are for a create from nothing (on a management cluster, snowctl init or upgrade management-components installs the controller), and this create uses the management cluster of {}: drop them, or pass --self-managed",
                    source.shown()
                );
                return Err(SettingsError::Usage(why).after(notices));
            }
        }
        let components = &args.bootstrap.components;
        let catalog = spec_catalog(
            &args.render,
            &spec,
            components.cache_dir.as_deref(),
            &components.ca_certs,
            environment,
        );
        let cni_manifest = args.cni_manifest.as_deref().map(read_cni_manifest);
        let artifacts = args.render.release.artifacts.is_some();
        let gitops = gitops::resolve(&spec.spec, args.flux_manifest.as_deref(), environment)
            .and_then(|gitops| {
                gitops
                    .map(|g| g.fetched_through(artifacts, || fetch_config(components, environment)))
                    .transpose()
            });
        let from_nothing = || match &target {
            CreateTarget::Management(_) => Ok::<_, SettingsError>(None),
            CreateTarget::FromNothing { .. } => Ok(Some(FromNothing {
                bootstrap: BootstrapFrom::resolve(&args.bootstrap, true)?,
                components: ComponentsFrom::resolve(components, &args.render.release, environment)?,
            })),
        };
        let settled =
            catalog.and_then(|c| Ok((c, cni_manifest.transpose()?, gitops?, from_nothing()?)));
        let (catalog, cni_manifest, gitops, from_nothing) =
            settled.map_err(|e| e.after(notices.clone()))?;
        Ok(Noted {
            value: CreateSettings {
                spec,
                target,
                catalog,
                render,
                cni_manifest,
                checks: checks(args.skip_validations, args.skip_ip_check, environment),
                wait: waits(&args.waits),
                force: args.force,
                dir: environment.cwd().to_owned(),
                gitops,
                from_nothing,
            },
            notices,
        })
    }
}

/// `upgrade cluster`, resolved from its flags and the environment.
pub struct UpgradeSettings {
    /// The management cluster.
    pub management: Management,
    /// The spec, checked.
    pub spec: SpecFile,
    /// Where the release catalog comes from, read after the refusal.
    pub catalog: CatalogSource,
    /// `--contract`, the identity Secret's device files, the mirror's login.
    pub render: RenderFlags,
    /// `--cni-manifest`, read and parsed (none with `--dry-run`, which installs nothing).
    pub cni_manifest: Option<CniManifest>,
    /// Preflight, unless `--skip-validations` or `--dry-run`; the IP check is create's alone.
    pub checks: Checks,
    /// The stages' timeouts.
    pub wait: WaitOptions,
    /// Where backups and the cluster's files go: the working directory.
    pub dir: PathBuf,
    /// The credentials of the repository the spec's FluxConfig names, which the new spec is
    /// committed to (none without one, or with `--dry-run`, which commits nothing).
    pub gitops_auth: Option<Auth>,
}

impl UpgradeSettings {
    /// From `upgrade cluster`'s flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &UpgradeClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<UpgradeSettings>, SettingsError> {
        let Noted {
            value: management,
            notices,
        } = management(&args.management, environment)?;
        let resolved = (|| {
            let (spec, render) = spec_and_flags(&args.render, environment)?;
            let catalog = spec_catalog(&args.render, &spec, None, &[], environment)?;
            let cni_manifest = match args.dry_run {
                true => None,
                false => args
                    .cni_manifest
                    .as_deref()
                    .map(read_cni_manifest)
                    .transpose()?,
            };
            let gitops_auth = match (spec.spec.gitops(), args.dry_run) {
                (Some(repo), false) => Some(gitops::auth(repo, environment)?),
                _ => None,
            };
            Ok(UpgradeSettings {
                management,
                spec,
                catalog,
                render,
                cni_manifest,
                checks: checks(args.skip_validations || args.dry_run, true, environment),
                wait: waits(&args.waits),
                dir: environment.cwd().to_owned(),
                gitops_auth,
            })
        })();
        let value = resolved.map_err(|e: SettingsError| e.after(notices.clone()))?;
        Ok(Noted { value, notices })
    }
}

/// `upgrade plan cluster`, resolved from its flags and the environment.
pub struct UpgradePlanSettings {
    /// The management cluster.
    pub management: Management,
    /// The spec, checked.
    pub spec: SpecFile,
    /// Where the release catalog comes from, read after the refusal.
    pub catalog: CatalogSource,
    /// `--contract`, the identity Secret's device files, the mirror's login.
    pub render: RenderFlags,
    /// Where the cluster's files are: the working directory.
    pub dir: PathBuf,
    /// `-o`.
    pub format: OutputFormat,
}

impl UpgradePlanSettings {
    /// From `upgrade plan cluster`'s flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &UpgradePlanClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<UpgradePlanSettings>, SettingsError> {
        let Noted {
            value: management,
            notices,
        } = management(&args.management, environment)?;
        let resolved = (|| {
            let (spec, render) = spec_and_flags(&args.render, environment)?;
            let catalog = spec_catalog(&args.render, &spec, None, &[], environment)?;
            Ok(UpgradePlanSettings {
                management,
                spec,
                catalog,
                render,
                dir: environment.cwd().to_owned(),
                format: args.output,
            })
        })();
        let value = resolved.map_err(|e: SettingsError| e.after(notices.clone()))?;
        Ok(Noted { value, notices })
    }
}

/// `delete cluster`, resolved from its flags and the environment.
pub struct DeleteSettings {
    /// The cluster's name (the argument, else the spec's).
    pub name: String,
    /// `-f`: the spec, checked.
    pub spec: Option<SpecFile>,
    /// The management cluster.
    pub management: Management,
    /// The deletion's timeout and poll.
    pub wait: WaitOptions,
    /// What a delete through a bootstrap cluster needs besides, when the cluster turns out to
    /// manage itself; an input it cannot use is said then, as other deletes do without it.
    pub self_managed: Result<SelfManagedDelete, SettingsError>,
    /// Where a support bundle goes: the working directory.
    pub dir: PathBuf,
    /// The credentials of the GitOps repository that holds the cluster, when the management
    /// cluster says one does (only known once it is asked).
    pub git_credentials: gitops::GitCredentials,
}

/// What `delete cluster` of a self-managed cluster needs from the flags and environment.
pub struct SelfManagedDelete {
    /// Where the release catalog comes from (the spec's Kubernetes version's, else the newest).
    pub catalog: CatalogSource,
    /// The mirror's login, for kind to pull through a spec's authenticated mirror.
    pub login: Option<RegistryCredentials>,
    /// The device files, for the providers' identity.
    pub secrets: Option<(CredentialsFile, CaBundle)>,
    /// The bootstrap cluster.
    pub bootstrap: BootstrapFrom,
    /// Where the providers' components come from.
    pub components: ComponentsFrom,
}

impl DeleteSettings {
    /// From `delete cluster`'s flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &DeleteClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<DeleteSettings>, SettingsError> {
        let spec = match &args.file {
            Some(file) => Some(load_spec(file, environment)?),
            None => None,
        };
        let name = match (&args.name, &spec) {
            (Some(name), _) => name.clone(),
            (None, Some(spec)) => spec.spec.name().to_owned(),
            (None, None) => {
                return Err(SettingsError::usage(
                    "name the cluster, or give its spec with -f",
                ));
            }
        };
        let Noted {
            value: management,
            notices,
        } = management(&args.management, environment)?;
        let wait = WaitOptions {
            timeouts: Timeouts {
                deletion: (!args.no_timeouts).then_some(args.delete_timeout),
                ..Timeouts::default()
            },
            poll: args.poll_interval,
        };
        let self_managed = (|| {
            let components = &args.bootstrap.components;
            let default = ReleaseDefault::Published {
                kube_version: spec.as_ref().map(|s| s.spec.kubernetes_version()),
                cache_dir: components.cache_dir.as_deref(),
                ca_certs: &components.ca_certs,
            };
            let catalog = catalog_source(&args.release, default, environment)?;
            let login = match &spec {
                Some(spec) => required_registry_login(&spec.spec, environment)?,
                None => None,
            };
            let secrets = optional_secrets(&DeviceFiles::resolve(&args.device_files, environment))?;
            Ok(SelfManagedDelete {
                catalog,
                login,
                secrets,
                bootstrap: BootstrapFrom::resolve(&args.bootstrap, spec.is_some())?,
                components: ComponentsFrom::resolve(components, &args.release, environment)?,
            })
        })();
        Ok(Noted {
            value: DeleteSettings {
                name,
                spec,
                management,
                wait,
                self_managed,
                dir: environment.cwd().to_owned(),
                git_credentials: gitops::GitCredentials::from(environment),
            },
            notices,
        })
    }
}

/// `describe cluster`, resolved from its flags and the environment.
pub struct DescribeSettings {
    /// The management cluster.
    pub management: Management,
}

impl DescribeSettings {
    /// From `describe cluster`'s flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &DescribeClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<DescribeSettings>, SettingsError> {
        let found = management(&args.management, environment)?;
        Ok(Noted {
            value: DescribeSettings {
                management: found.value,
            },
            notices: found.notices,
        })
    }
}

/// `renew certificates`, resolved from its flags and the environment.
pub struct RenewSettings {
    /// The management cluster.
    pub management: Management,
    /// How long to wait for the control plane.
    pub options: RenewOptions,
}

impl RenewSettings {
    /// From `renew certificates`' flags; the kubeconfig's warnings as notices.
    pub fn resolve(
        args: &RenewCertificatesArgs,
        environment: &Environment,
    ) -> Result<Noted<RenewSettings>, SettingsError> {
        let found = management(&args.management, environment)?;
        Ok(Noted {
            value: RenewSettings {
                management: found.value,
                options: RenewOptions {
                    wait: waits(&args.waits),
                },
            },
            notices: found.notices,
        })
    }
}

/// `move cluster`, resolved from its flags and the environment.
pub struct MoveSettings {
    /// The management cluster the cluster is on; none for a restore (`--from-directory`).
    pub from: Option<Management>,
    /// `--to-kubeconfig` (and `--to-context`).
    pub to: Option<Management>,
    /// `--namespace`.
    pub options: MoveOptions,
}

impl MoveSettings {
    /// From `move cluster`'s flags; both kubeconfigs' warnings as notices.
    pub fn resolve(
        args: &MoveClusterArgs,
        environment: &Environment,
    ) -> Result<Noted<MoveSettings>, SettingsError> {
        let to = args.to_kubeconfig.as_ref().map(|kubeconfig| Management {
            source: KubeconfigSource::file(kubeconfig).with_context(args.to_context.as_deref()),
        });
        let mut notices: Vec<Notice> = Vec::new();
        if let Some(to) = &to {
            notices.extend(check_kubeconfig(&to.source)?.notices);
        }
        let from = match args.from_directory {
            Some(_) => None,
            None => {
                let found = management(&args.management, environment)
                    .map_err(|e| e.after(notices.clone()))?;
                notices.extend(found.notices);
                Some(found.value)
            }
        };
        Ok(Noted {
            value: MoveSettings {
                from,
                to,
                options: MoveOptions {
                    namespace: args.namespace.clone(),
                    ..MoveOptions::default()
                },
            },
            notices,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Each resolver with an environment made up here: the process's is never read.
    use super::*;
    use crate::args::{Cli, Command, CreateCommand, DescribeCommand};
    use clap::Parser;
    use std::path::Path;

    /// A spec with no error finding, written into `dir`.
    pub(crate) fn spec_file(dir: &Path) -> PathBuf {
        let options = snow_api::template::TemplateOptions {
            name: "edge".into(),
            devices: vec!["10.0.0.1".into()],
            endpoint: Some("10.0.0.10".into()),
            ..Default::default()
        };
        let path = dir.join("edge.yaml");
        std::fs::write(&path, snow_api::template::cluster_config(&options).unwrap()).unwrap();
        path
    }

    /// A kubeconfig with a token, written at `path`.
    pub(crate) fn kubeconfig_file(path: &Path) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t}\n",
        )
        .unwrap();
        path.to_owned()
    }

    fn create_args(extra: &[&str], spec: &Path) -> CreateClusterArgs {
        let mut line = vec!["snowctl", "create", "cluster", "--no-secrets"];
        line.extend(["-f", spec.to_str().unwrap()]);
        line.extend(extra);
        match Cli::try_parse_from(line).unwrap().command {
            Command::Create(CreateCommand::Cluster(args)) => args,
            other => panic!("{other:?}"),
        }
    }

    /// Where `create` runs with `extra` flags in `environment`: the kubeconfig files, or
    /// `None` from nothing.
    fn create_target_of(
        extra: &[&str],
        spec: &Path,
        environment: &Environment,
    ) -> Option<Vec<PathBuf>> {
        let resolved = CreateSettings::resolve(&create_args(extra, spec), environment);
        match resolved.unwrap().value.target {
            CreateTarget::Management(source) => Some(source.paths),
            CreateTarget::FromNothing { .. } => None,
        }
    }

    #[test]
    fn create_runs_on_the_flag_else_kubeconfig_else_the_home_file_else_from_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_file(dir.path());
        let (flag, listed) = (dir.path().join("flag"), dir.path().join("listed"));
        let (flag, listed) = (kubeconfig_file(&flag), kubeconfig_file(&listed));
        let home = dir.path().join("home");
        let home_file = home.join(".kube").join("config");
        let bare = Environment::new(dir.path()).with(crate::env::HOME, home.to_str().unwrap());
        // No kubeconfig anywhere: from nothing.
        assert_eq!(create_target_of(&[], &spec, &bare), None);
        // The file under HOME once it exists.
        kubeconfig_file(&home_file);
        let got = create_target_of(&[], &spec, &bare);
        assert_eq!(got, Some(vec![home_file.clone()]));
        // KUBECONFIG's list before it.
        let list = format!("{}::{}", listed.display(), home_file.display());
        let listing = bare.clone().with(crate::env::KUBECONFIG, &list);
        let got = create_target_of(&[], &spec, &listing);
        assert_eq!(got, Some(vec![listed.clone(), home_file]));
        // --kubeconfig before everything.
        let got = create_target_of(&["--kubeconfig", flag.to_str().unwrap()], &spec, &listing);
        assert_eq!(got, Some(vec![flag]));
        // --self-managed: from nothing whatever is found.
        assert_eq!(create_target_of(&["--self-managed"], &spec, &listing), None);
        // The working directory given is where the cluster's files go.
        let resolved = CreateSettings::resolve(&create_args(&[], &spec), &bare).unwrap();
        assert_eq!(resolved.value.dir, dir.path());
    }

    #[test]
    fn bootstrap_flags_on_a_management_cluster_are_a_usage_error_naming_its_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_file(dir.path());
        let kubeconfig = kubeconfig_file(&dir.path().join("mgmt"));
        let environment =
            Environment::new(dir.path()).with(crate::env::KUBECONFIG, kubeconfig.to_str().unwrap());
        let args = create_args(&["--keep-bootstrap"], &spec);
        let Err(SettingsError::Usage(message)) = CreateSettings::resolve(&args, &environment)
        else {
            panic!("not a usage error");
        };
        assert!(
            message.starts_with("--bootstrap-kubeconfig, --keep-bootstrap and --controller-image are for a create from nothing"),
            "{message}"
        );
        assert!(message.contains(kubeconfig.to_str().unwrap()), "{message}");
        assert!(
            message.ends_with("drop them, or pass --self-managed"),
            "{message}"
        );
    }

    #[test]
    fn no_kubeconfig_is_a_usage_error_saying_how_to_give_one() {
        let dir = tempfile::tempdir().unwrap();
        let line = ["snowctl", "describe", "cluster", "edge"];
        let Command::Describe(DescribeCommand::Cluster(args)) =
            Cli::try_parse_from(line).unwrap().command
        else {
            panic!("not describe");
        };
        // HOME without ~/.kube/config, no KUBECONFIG.
        let environment =
            Environment::new(dir.path()).with(crate::env::HOME, dir.path().to_str().unwrap());
        let Err(SettingsError::Usage(message)) = DescribeSettings::resolve(&args, &environment)
        else {
            panic!("not a usage error");
        };
        assert_eq!(
            message,
            "this command works on a management cluster and found no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or write ~/.kube/config"
        );
        // The same flags in an environment that names one.
        let kubeconfig = kubeconfig_file(&dir.path().join("mgmt"));
        let environment = environment.with(crate::env::KUBECONFIG, kubeconfig.to_str().unwrap());
        let found = DescribeSettings::resolve(&args, &environment).unwrap();
        assert_eq!(found.value.management.source.paths, vec![kubeconfig]);
    }
}
