//! Flags, environment and files resolved once into the plain values commands use (as uv's
//! `GlobalSettings::resolve`). Every file a command reads goes through [`read_bytes`], with one
//! size limit and one error shape. The resolvers are pure of output: they print nothing and pick
//! no exit code. What went wrong is a [`SettingsError`] (`exit::settings` says it in the one
//! error form, with its hints and exit code); what a resolver wants said besides is returned as
//! data ([`Notice`]s, in [`Noted`] or in the settings), which the command prints.

use crate::{
    args::{
        BootstrapArgs, Cli, ComponentArgs, ImageSelectionArgs, InitArgs, ManagementArgs,
        ReleaseArgs, RenderArgs, SourceArgs, WaitArgs,
    },
    env::{self, Environment},
    output,
};
use capi_render::{Contract, RenderOptions, SecretInputs};
use snow_api::{
    Finding, ValidSpec,
    release::{ClusterRelease, ComponentAssets, ComponentFiles, ReleaseInputs},
};
use snow_credentials::{CaBundle, CredentialsFile, RegistryCredentials, SecretString, registry};
use snow_images::assets;
use snow_provision::{CniManifest, ComponentObjects, KubeconfigSource, Timeouts, WaitOptions};
use snow_provision::{
    catalog::{CatalogError, CatalogSource, Origin},
    components::{ComponentsError, ComponentsOptions, ComponentsSource},
    preflight,
};
use std::{
    io::Read,
    path::{Path, PathBuf},
};

pub mod cluster;
pub mod controller;
pub mod credentials;
pub mod device_files;
pub mod devices;
pub mod generate;
pub mod gitops;
pub mod images;
pub mod import;
pub mod registry_serve;
pub mod render;
pub mod store;
pub mod support_bundle;
pub mod validate;

pub use cluster::{
    CreateSettings, DeleteSettings, DescribeSettings, MoveSettings, RenewSettings,
    UpgradePlanSettings, UpgradeSettings,
};
pub use controller::ControllerSettings;
pub use device_files::DeviceFiles;
pub use generate::ClusterconfigSettings;
pub use import::{GetClustersSettings, ImportClusterSettings};
pub use registry_serve::RegistryServeSettings;
pub use render::RenderSettings;
pub use store::StoreCiliumSettings;
pub use support_bundle::SupportBundleSettings;
pub use validate::ValidateSettings;

/// Something a resolver wants said on standard error, as data: the command prints it
/// (`exit::notices`), before anything else it says.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Said always: a note or a warning, its text whole.
    Note(String),
    /// Progress, its text whole: not said with `-q`.
    Progress(String),
    /// Findings that do not stop the command, about `about`, pointing at the files `files`; said
    /// with the CLI's hints.
    Findings {
        /// The findings.
        findings: Vec<Finding>,
        /// What they are about (`devices`).
        about: String,
        /// The files they are about.
        files: Vec<String>,
    },
}

/// A value resolved with what the resolver wants said about it.
#[derive(Debug)]
pub struct Noted<T> {
    /// The value.
    pub value: T,
    /// What to say, in order.
    pub notices: Vec<Notice>,
}

impl<T> Noted<T> {
    /// A value with nothing to say.
    pub fn quiet(value: T) -> Noted<T> {
        Noted {
            value,
            notices: Vec::new(),
        }
    }
}

/// Why flags, environment or files could not be resolved, as data: `exit::settings` says it in
/// the one error form with the CLI's hints and picks the exit code.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// An input that cannot be used: `error: {0}`, exit 2.
    #[error("{0}")]
    Usage(String),
    /// Inputs that cannot be used, every one: `error: {it}` each, exit 2.
    #[error("{}", .0.join("\n"))]
    Usages(Vec<String>),
    /// An input that cannot be used, and what to do: `error: {what}`, `hint: {hint}`, exit 2.
    #[error("{what}")]
    Hinted {
        /// What is wrong.
        what: String,
        /// What to do.
        hint: String,
    },
    /// The work a resolver does (a fetch) failed: `error: {0}`, exit 1.
    #[error("{0}")]
    Failed(String),
    /// An offline archive that is not what the command needs: `error: {0}` with the archive
    /// hint, exit 2.
    #[error("{0}")]
    Archive(String),
    /// An input with findings of severity error: all of them said, then `conclusion` when
    /// there is one; exit 1.
    #[error("{about} has errors")]
    Findings {
        /// Every finding (warnings too).
        findings: Vec<Finding>,
        /// The input's name.
        about: String,
        /// Its text, for the findings' lines.
        text: Option<String>,
        /// What the command then says.
        conclusion: Option<String>,
    },
    /// One finding that makes an input unusable, said with its source: exit 2.
    #[error("{}", .finding.message)]
    Diagnostic {
        /// The finding.
        finding: Box<Finding>,
        /// The input's name.
        about: String,
        /// Its text, for the finding's line.
        text: Option<String>,
    },
    /// A device file that cannot be read, with what to do: exit 2.
    #[error("{what}")]
    DeviceFile {
        /// What is wrong.
        what: String,
        /// What to do.
        hint: &'static str,
    },
    /// A kubeconfig or bootstrap cluster that cannot be used, in the lifecycle's words.
    #[error(transparent)]
    Lifecycle(#[from] snow_provision::LifecycleError),
    /// The facade refused an input (the controller's catalog too large).
    #[error(transparent)]
    Provision(#[from] snow_provision::ProvisionError),
    /// The async runtime a resolver needs could not start: exit 1.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// An error after things the resolver wanted said: those first, then the error.
    #[error("{error}")]
    Noted {
        /// Said first.
        notices: Vec<Notice>,
        /// Then this.
        error: Box<SettingsError>,
    },
}

impl SettingsError {
    /// `self`, with `notices` said before it (itself when there are none).
    fn after(self, notices: Vec<Notice>) -> SettingsError {
        match notices.is_empty() {
            true => self,
            false => SettingsError::Noted {
                notices,
                error: Box::new(self),
            },
        }
    }

    fn usage(what: impl std::fmt::Display) -> SettingsError {
        SettingsError::Usage(what.to_string())
    }
}

/// A runtime for a resolver's async work (a fetch).
fn runtime() -> Result<tokio::runtime::Runtime, SettingsError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SettingsError::Runtime)
}

/// The most bytes snowctl reads from one input file or standard input: far above any spec,
/// bundle or certificate file, low enough that `-f /dev/zero` is refused, not a memory hog.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// What holds for every command.
#[derive(Debug, Clone, Copy)]
pub struct GlobalSettings {
    /// `-v` count: detail on stderr.
    pub verbose: u8,
    /// `-q`: no progress on stderr.
    pub quiet: bool,
}

impl GlobalSettings {
    /// From the parsed command line.
    pub fn resolve(cli: &Cli) -> GlobalSettings {
        GlobalSettings {
            verbose: cli.verbose,
            quiet: cli.quiet,
        }
    }

    /// The log filter for the libraries' tracing: the controller logs at info, debug with -v,
    /// trace with -vv, warnings only with -q; other commands log nothing but with -vv (debug:
    /// each Kubernetes request). `None`: no log.
    pub fn log_filter(&self, controller: bool) -> Option<&'static str> {
        match (controller, self.quiet, self.verbose) {
            (true, true, _) => Some("warn"),
            (true, false, 0) => Some("info,kube=warn,hyper=warn,tower=warn"),
            (true, false, 1) => Some("debug,kube=warn,hyper=warn,tower=warn"),
            (true, false, _) => Some("trace,kube=debug,hyper=info,tower=info,h2=info,rustls=info"),
            (false, false, 2..) => Some("debug,hyper=info,tower=info,h2=info,rustls=info"),
            (false, _, _) => None,
        }
    }
}

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file or stream could not be read.
    #[error("{0}")]
    Io(std::io::Error),
    /// It is larger than [`MAX_INPUT_BYTES`].
    #[error("it is larger than {} MiB, the most snowctl reads from one input", MAX_INPUT_BYTES >> 20)]
    TooLarge,
    /// It is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText,
}

/// Reads a file, or standard input for `-`, up to [`MAX_INPUT_BYTES`] (more is an error, never a
/// silent cut).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    let limit = MAX_INPUT_BYTES + 1;
    let read = if path.as_os_str() == "-" {
        std::io::stdin().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Reads a text input; its error says which input (`what`) could not be read and why.
pub fn read_text(path: &Path, what: &str) -> Result<String, SettingsError> {
    read_bytes(path)
        .and_then(|b| String::from_utf8(b).map_err(|_| ReadError::NotText))
        .map_err(|err| {
            SettingsError::Usage(format!(
                "cannot read {what} {}: {err}",
                output::source_name(path)
            ))
        })
}

/// A spec file read, checked, and free of error findings.
pub struct SpecFile {
    /// The text as written (recorded in the inventory).
    pub text: String,
    /// The checked spec.
    pub spec: ValidSpec,
}

/// The variable naming the registry mirror's CA file.
pub const MIRROR_CA_VAR: &str = env::REGISTRY_MIRROR_CA;

/// The mirror's login from `REGISTRY_USERNAME`/`REGISTRY_PASSWORD` when the spec has
/// `authenticate: true`; each unset variable is a finding on that field.
pub fn registry_login(
    spec: &snow_api::ClusterSpec,
    environment: &Environment,
) -> Result<Option<RegistryCredentials>, Vec<Finding>> {
    let (username, password) = registry_env(environment);
    registry::from_env(spec, username, password)
}

/// The registry mirror's username and password as the environment gives them.
pub fn registry_env(environment: &Environment) -> (Option<String>, Option<SecretString>) {
    let var = |name| environment.var(name).map(str::to_owned);
    (
        var(env::REGISTRY_USERNAME),
        var(env::REGISTRY_PASSWORD).map(SecretString::new),
    )
}

/// [`registry_login`] for a command that cannot go on without it: an unset variable is a
/// finding about the environment.
pub fn required_registry_login(
    spec: &snow_api::ClusterSpec,
    environment: &Environment,
) -> Result<Option<RegistryCredentials>, SettingsError> {
    registry_login(spec, environment).map_err(|unset| SettingsError::Findings {
        findings: unset,
        about: "environment".into(),
        text: None,
        conclusion: None,
    })
}

/// Reads and checks a spec; with error findings, all of them are the error.
pub fn load_spec(path: &Path, environment: &Environment) -> Result<SpecFile, SettingsError> {
    let name = output::source_name(path);
    let text = read_text(path, "the cluster spec")?;
    let mut report = snow_api::check(&text).map_err(|err| SettingsError::Diagnostic {
        finding: Box::new(err.to_finding(&name)),
        about: name.clone(),
        text: Some(text.clone()),
    })?;
    // EKS Anywhere's default: an empty mirror caCertContent is the file EKSA_REGISTRY_MIRROR_CA names.
    if let (Some(spec), Some(ca)) = (&mut report.spec, environment.var_os(MIRROR_CA_VAR))
        && !ca.is_empty()
        && registry::wants_mirror_ca(spec)
    {
        let ca = read_text(
            Path::new(&ca),
            "the registry mirror CA (EKSA_REGISTRY_MIRROR_CA)",
        )?;
        registry::fill_mirror_ca(spec, ca);
    }
    match report.into_valid() {
        Ok(spec) => Ok(SpecFile { text, spec }),
        Err(report) => Err(SettingsError::Findings {
            findings: report.findings,
            about: name,
            text: Some(text),
            conclusion: Some("the spec has errors and was not rendered".into()),
        }),
    }
}

/// Where the release catalog comes from when neither `--bundles` nor `--artifacts` is given.
#[derive(Debug, Clone, Copy)]
pub enum ReleaseDefault<'a> {
    /// The embedded sample, for commands that only print (`render`): said once on stderr, as
    /// its images are not published. `--release-manifest` still fetches.
    Sample,
    /// The newest EKS Anywhere release with a Snow section for `kube_version` (any when
    /// `None`), from `--release-manifest` or EKS Anywhere's, fetched into `cache_dir` (default:
    /// the components cache) trusting `ca_certs` besides the system's roots.
    Published {
        /// The Kubernetes version the release must have a Snow section for.
        kube_version: Option<&'a str>,
        /// `--cache-dir`, when the command has one.
        cache_dir: Option<&'a Path>,
        /// `--ca-cert` files, when the command has them.
        ca_certs: &'a [PathBuf],
    },
    /// As `Published`; when no release has a Snow section for `kube_version`, the newest
    /// release with one, for a command that reports the version missing against it (`validate`)
    /// instead of stopping.
    PublishedOrNewest {
        /// The Kubernetes version the release should have a Snow section for.
        kube_version: Option<&'a str>,
        /// `--cache-dir`.
        cache_dir: Option<&'a Path>,
        /// `--ca-cert` files.
        ca_certs: &'a [PathBuf],
    },
}

/// The release catalog a command works from, read once (`snow_provision::catalog`): the inputs,
/// the manifests as written, what it is, and the archive of `--artifacts`, opened once.
pub use snow_provision::catalog::Catalog;

/// The one source of the release catalog the flags name: `--artifacts`, `--bundles` (with
/// `--eksd-release`), else as `default` says. The cache directory and `--ca-cert` files of a
/// published release are checked here.
pub fn catalog_source(
    args: &ReleaseArgs,
    default: ReleaseDefault<'_>,
    environment: &Environment,
) -> Result<CatalogSource, SettingsError> {
    // `-` is standard input, as for every input snowctl reads.
    let path = |p: &Path| match p.as_os_str() == "-" {
        true => PathBuf::from("/dev/stdin"),
        false => p.to_owned(),
    };
    let eksd = || {
        args.eksd_releases
            .iter()
            .map(|p| path(p))
            .collect::<Vec<_>>()
    };
    if let Some(archive) = &args.artifacts {
        return Ok(CatalogSource::Archive(archive.clone()));
    }
    if let Some(bundles) = &args.bundles {
        return Ok(CatalogSource::BundlesFile {
            bundles: path(bundles),
            eksd: eksd(),
        });
    }
    let (kube_version, cache_dir, ca_certs, newest_instead) =
        match (default, &args.release_manifest) {
            (ReleaseDefault::Sample, None) => {
                return Ok(CatalogSource::EmbeddedSample { eksd: eksd() });
            }
            (ReleaseDefault::Sample, Some(_)) => (None, None, &[][..], false),
            (
                ReleaseDefault::Published {
                    kube_version,
                    cache_dir,
                    ca_certs,
                },
                _,
            ) => (kube_version, cache_dir, ca_certs, false),
            (
                ReleaseDefault::PublishedOrNewest {
                    kube_version,
                    cache_dir,
                    ca_certs,
                },
                _,
            ) => (kube_version, cache_dir, ca_certs, true),
        };
    let manifest_url = args
        .release_manifest
        .as_deref()
        .unwrap_or(snow_api::release::eksa::DEFAULT_RELEASE_MANIFEST);
    let fetch = assets::FetchConfig {
        ca_certs_pem: self::ca_certs(ca_certs)?,
        ..assets::FetchConfig::new(cache(cache_dir, environment)?)
    };
    Ok(CatalogSource::Published {
        manifest_url: manifest_url.to_owned(),
        fetch,
        kube_version: kube_version.map(str::to_owned),
        newest_instead,
        eksd: eksd(),
    })
}

/// The release catalog ([`catalog_source`]), resolved once; the embedded sample noted, and a
/// published release said (noted when from the cache because the network failed).
pub fn catalog(
    args: &ReleaseArgs,
    default: ReleaseDefault<'_>,
    environment: &Environment,
) -> Result<Noted<Catalog>, SettingsError> {
    fetch_catalog(catalog_source(args, default, environment)?)
}

/// The release catalog of `source`, read or fetched once (`snow_provision::catalog`); the
/// embedded sample noted, and a published release said (noted when from the cache because the
/// network failed). For a command that must ask the management cluster first, after that.
pub fn fetch_catalog(source: CatalogSource) -> Result<Noted<Catalog>, SettingsError> {
    let mut notices = Vec::new();
    if let CatalogSource::EmbeddedSample { .. } = source {
        notices.push(Notice::Note(SAMPLE_NOTE.into()));
    }
    let resolved = runtime().map_err(|e| e.after(notices.clone()))?;
    let resolved = resolved.block_on(source.resolve());
    let catalog = resolved.map_err(|e| {
        let error = match e {
            CatalogError::Archive(e) => {
                SettingsError::Archive(output::printable_lines(&e.to_string()))
            }
            e @ CatalogError::Fetch(_) => SettingsError::Failed(format!(
                "{e}\nhint: offline, pass --bundles FILE (an EKS Anywhere Bundles manifest) or --artifacts FILE (from `snowctl download artifacts`); or --release-manifest URL to read another Release manifest"
            )),
            e => SettingsError::usage(e),
        };
        error.after(notices.clone())
    })?;
    if let Origin::Published(release) = &catalog.origin {
        let url = &release.manifest_url;
        if let Some(reason) = &release.stale {
            notices.push(Notice::Note(format!(
                "note: {url} could not be fetched ({reason}): the copy in the cache {} is used\n",
                release.cache_dir.display()
            )));
        }
        notices.push(Notice::Progress(format!(
            "release: EKS Anywhere {} ({}), from {url}\n",
            release.version, release.bundles_url
        )));
    }
    Ok(Noted {
        value: catalog,
        notices,
    })
}

/// Said once when the embedded sample is used.
const SAMPLE_NOTE: &str = "note: using the embedded sample catalog (a development build of EKS Anywhere's sample Bundles; its images and components are not published): pass --bundles FILE, --artifacts FILE or --release-manifest URL for a real release\n";

/// `--cache-dir`, else `$XDG_CACHE_HOME/snowctl` or `~/.cache/snowctl`.
fn cache(dir: Option<&Path>, environment: &Environment) -> Result<PathBuf, SettingsError> {
    let var = |name: &str| environment.path(name);
    (dir.map(Path::to_path_buf))
        .or_else(|| assets::default_cache_dir(var(env::XDG_CACHE_HOME), var(env::HOME)))
        .ok_or_else(|| SettingsError::usage("no cache directory: pass --cache-dir"))
}

/// The device clients of `devices` (every profile when empty) for a command whose device files
/// are optional (`import cluster`, `get clusters`): `None` without `--credentials`; the files'
/// findings noted; files that cannot be used are the error.
pub fn optional_fleet(
    devices: &[snow_api::DeviceIp],
    files: &DeviceFiles,
    timeout: std::time::Duration,
) -> Result<Noted<Option<snow_validate::FilesFleet>>, SettingsError> {
    if files.credentials.is_none() {
        return Ok(Noted::quiet(None));
    }
    let loaded = preflight::device_files(files.paths(), timeout);
    let fleet = loaded.and_then(|f| snow_validate::fleet_from_files(f, devices));
    let fleet = fleet.map_err(|f| SettingsError::Diagnostic {
        finding: f,
        about: "devices".into(),
        text: None,
    })?;
    let notices = file_findings(&fleet.findings, "devices", files)
        .into_iter()
        .collect();
    Ok(Noted {
        value: Some(fleet),
        notices,
    })
}

/// What rendering needs besides the spec: release inputs, a forced contract, identity files.
pub struct RenderInputs {
    /// The release catalog.
    pub inputs: ReleaseInputs,
    /// Its manifests as written, for the controller component.
    pub release_files: capi_render::controller::ReleaseFiles,
    /// The archive of `--artifacts`, opened once with the catalog.
    pub archive: Option<std::sync::Arc<snow_images::Archive>>,
    /// `--contract`.
    pub contract: Option<Contract>,
    /// The device files for the identity Secret, loaded and free of errors.
    pub secrets: Option<(CredentialsFile, CaBundle)>,
    /// The registry mirror's login (`authenticate: true`), like the identity Secret a secret.
    pub registry: Option<RegistryCredentials>,
    /// The device files, by flag or environment, for preflight.
    pub devices: DeviceFiles,
    /// What to say: the catalog's notes and progress, and what is left out.
    pub notices: Vec<Notice>,
}

/// What rendering takes from the flags and the environment, resolved before the release catalog
/// is read (for create and upgrade, before the management cluster is asked): `--contract`, the
/// device files of the identity Secret, the mirror's login.
pub struct RenderFlags {
    /// `--contract`.
    pub contract: Option<Contract>,
    /// The device files for the identity Secret, loaded and free of errors.
    pub secrets: Option<(CredentialsFile, CaBundle)>,
    /// The registry mirror's login (`authenticate: true`).
    pub registry: Option<RegistryCredentials>,
    /// The device files, by flag or environment, for preflight.
    pub devices: DeviceFiles,
    /// What to say: what is left out.
    pub notices: Vec<Notice>,
}

impl RenderFlags {
    /// From the render flags, for `spec`; pure but for reading the device files.
    pub fn resolve(
        args: &RenderArgs,
        spec: &ValidSpec,
        environment: &Environment,
    ) -> Result<RenderFlags, SettingsError> {
        let mut notices = Vec::new();
        let contract = args
            .contract
            .as_deref()
            .map(str::parse::<Contract>)
            .transpose()
            .map_err(|err| SettingsError::usage(format_args!("--contract: {err}")))?;
        // The identity Secret needs both files; without them it is left out, and said so.
        let devices = DeviceFiles::resolve(&args.device_files, environment);
        let secrets = match (args.no_secrets, &devices) {
            (true, _) => None,
            (
                false,
                DeviceFiles {
                    credentials: Some(c),
                    ca_bundle: Some(b),
                },
            ) => Some(load_secrets(c, b)?),
            (false, _) => {
                notices.push(Notice::Note("note: the CAPAS identity Secret is left out: set EKSA_AWS_CREDENTIALS_FILE and EKSA_AWS_CA_BUNDLES_FILE (or --credentials/--ca-bundle), or pass --no-secrets\n".into()));
                None
            }
        };
        let registry = match (args.no_secrets, registry_login(spec, environment)) {
            (true, _) => None,
            (false, Ok(login)) => login,
            (false, Err(_)) => {
                notices.push(Notice::Note("note: the registry-credentials Secret is left out: set REGISTRY_USERNAME and REGISTRY_PASSWORD, or pass --no-secrets\n".into()));
                None
            }
        };
        Ok(RenderFlags {
            contract,
            secrets,
            registry,
            devices,
            notices,
        })
    }
}

impl RenderFlags {
    /// These flags with the catalog read after them: the catalog's notices first.
    pub fn with_catalog(self, catalog: Noted<Catalog>) -> RenderInputs {
        let Noted {
            value: catalog,
            mut notices,
        } = catalog;
        notices.extend(self.notices);
        RenderInputs {
            release_files: catalog.release_files(),
            inputs: catalog.inputs,
            archive: catalog.archive,
            contract: self.contract,
            secrets: self.secrets,
            registry: self.registry,
            devices: self.devices,
            notices,
        }
    }
}

impl RenderInputs {
    /// The release of `spec`, resolved once.
    pub fn release(
        &self,
        spec: &ValidSpec,
    ) -> Result<ClusterRelease<'_>, snow_api::release::ReleaseError> {
        self.inputs.resolve(spec, self.contract)
    }

    /// The identity Secret's inputs, when the files were given.
    pub fn secrets(&self) -> Option<SecretInputs<'_>> {
        self.secrets
            .as_ref()
            .map(|(credentials, ca_bundle)| SecretInputs {
                credentials,
                ca_bundle,
            })
    }

    /// The render options they make.
    pub fn options(&self) -> RenderOptions<'_> {
        RenderOptions {
            secrets: self.secrets(),
            names: None,
            default_ssh_key_name: None,
            registry_credentials: self.registry.as_ref(),
        }
    }
}

/// Loads the credentials file and CA bundle; error findings are the error.
pub fn load_secrets(
    credentials: &Path,
    ca_bundle: &Path,
) -> Result<(CredentialsFile, CaBundle), SettingsError> {
    let creds = snow_credentials::load_credentials(credentials);
    let bundle = snow_credentials::load_ca_bundle(ca_bundle);
    match (creds, bundle) {
        (Ok((c, cf)), Ok((b, bf))) => {
            let findings: Vec<_> = cf.into_iter().chain(bf).collect();
            if snow_api::has_errors(&findings) {
                return Err(SettingsError::Findings {
                    findings,
                    about: "credentials".into(),
                    text: None,
                    conclusion: Some("fix the credentials file or CA bundle (see `snowctl credentials check`), or pass --no-secrets".into()),
                });
            }
            Ok((c, b))
        }
        (Err(e), _) | (_, Err(e)) => Err(SettingsError::DeviceFile {
            what: e.to_string(),
            hint: e.hint(),
        }),
    }
}

/// Checks a kubeconfig given on the command line before anything connects with it: its files
/// read, parsed and merged (the error names the file when one cannot be), and a warning when
/// the cluster of the context used turns TLS verification off (its API server's identity is not
/// checked).
pub fn check_kubeconfig(source: &KubeconfigSource) -> Result<Noted<()>, SettingsError> {
    let file = source
        .read()
        .map_err(snow_provision::LifecycleError::from)?;
    let mut notices = Vec::new();
    if file.skips_tls_verify(source.context.as_deref()) {
        notices.push(Notice::Note(format!(
            "⚠️  warning: {} has insecure-skip-tls-verify: true: the API server's certificate is not checked, so anyone on the network path can stand in for it\n",
            source.shown()
        )));
    }
    Ok(Noted { value: (), notices })
}

/// The management cluster's kubeconfig as kubectl finds it: `--kubeconfig FILE`, else the
/// files of `KUBECONFIG` (a list separated by ':', empty entries skipped; merged, the first
/// file to define a name wins), else `~/.kube/config` when it exists, or when `--context` asks
/// for one of its contexts (so that reading it says it is missing); `--context` with it. `None`
/// when there is none.
pub fn find_kubeconfig(
    args: &ManagementArgs,
    environment: &Environment,
) -> Option<KubeconfigSource> {
    kubeconfig_paths(
        args.kubeconfig.as_deref(),
        environment.var_os(env::KUBECONFIG),
        environment.var_os(env::HOME),
        args.context.is_some(),
    )
    .map(|paths| KubeconfigSource {
        paths,
        context: args.context.clone(),
    })
}

/// [`find_kubeconfig`]'s rule, on the values given.
fn kubeconfig_paths(
    flag: Option<&Path>,
    kubeconfig: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
    context: bool,
) -> Option<Vec<PathBuf>> {
    if let Some(flag) = flag {
        return Some(vec![flag.to_owned()]);
    }
    let listed: Vec<PathBuf> = kubeconfig
        .map(|list| {
            std::env::split_paths(list)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if !listed.is_empty() {
        return Some(listed);
    }
    let default = Path::new(home?).join(".kube").join("config");
    (context || default.exists()).then(|| vec![default])
}

/// The management cluster's kubeconfig and context ([`find_kubeconfig`], checked:
/// [`check_kubeconfig`]); without one, the error says how to give it.
pub fn management(
    args: &ManagementArgs,
    environment: &Environment,
) -> Result<Noted<Management>, SettingsError> {
    match find_kubeconfig(args, environment) {
        Some(source) => {
            let notices = check_kubeconfig(&source)?.notices;
            Ok(Noted {
                value: Management { source },
                notices,
            })
        }
        None => Err(SettingsError::usage(
            "this command works on a management cluster and found no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or write ~/.kube/config",
        )),
    }
}

/// Where the management cluster is.
pub struct Management {
    /// Its kubeconfig files and context.
    pub source: KubeconfigSource,
}

impl Management {
    /// Connects.
    pub async fn connect_quietly(
        &self,
    ) -> Result<snow_provision::Management, snow_provision::LifecycleError> {
        Ok(snow_provision::Management::connect(&self.source).await?)
    }

    /// Which kubeconfig and context, for a progress line: `FILES (context NAME)`.
    pub fn shown(&self) -> String {
        match &self.source.context {
            Some(context) => format!("{} (context {context})", self.source.shown()),
            None => format!("{} (its current context)", self.source.shown()),
        }
    }
}

/// `--cni-manifest FILE`, read and parsed (the error names the document that is wrong).
pub fn read_cni_manifest(path: &Path) -> Result<CniManifest, SettingsError> {
    let text = read_text(path, "the CNI manifest")?;
    let name = output::source_name(path);
    CniManifest::parse(&text).map_err(|e| SettingsError::Usage(format!("{name}: {e}")))
}

/// The per-stage timeouts of create and upgrade.
pub fn waits(args: &WaitArgs) -> WaitOptions {
    let limit = |d| (!args.no_timeouts).then_some(d);
    WaitOptions {
        timeouts: Timeouts {
            control_plane: limit(args.control_plane_wait_timeout),
            external_etcd: limit(args.external_etcd_wait_timeout),
            per_machine: limit(args.per_machine_wait_timeout),
            deletion: Timeouts::default().deletion,
        },
        poll: args.poll_interval,
    }
}

/// The images `--image` and `--images-file` (one a line, `#` comments) name, when given.
pub fn user_images(
    args: &ImageSelectionArgs,
) -> Result<Option<Vec<snow_images::ListedImage>>, SettingsError> {
    if args.images.is_empty() && args.images_file.is_none() {
        return Ok(None);
    }
    let list = match &args.images_file {
        Some(path) => Some(read_text(path, "the image list")?),
        None => None,
    };
    Ok(Some(snow_images::ListedImage::from_user(
        &args.images,
        list.as_deref(),
    )))
}

/// The release catalog of an image selection: published (for its one Kubernetes version, any
/// with a Snow section otherwise) unless `--bundles` or `--artifacts`.
pub fn selection_catalog(
    args: &ImageSelectionArgs,
    cache_dir: Option<&Path>,
    ca_certs: &[PathBuf],
    environment: &Environment,
) -> Result<Noted<Catalog>, SettingsError> {
    let kube_version = match args.kubernetes_versions.as_slice() {
        [one] => Some(one.as_str()),
        _ => None,
    };
    let default = ReleaseDefault::Published {
        kube_version,
        cache_dir,
        ca_certs,
    };
    catalog(&args.release, default, environment)
}

/// The images of the release bundle for the selection's Kubernetes versions and node OS
/// families (`snow_images::image_list`).
pub fn image_selection(
    args: &ImageSelectionArgs,
    catalog: &Catalog,
) -> Result<Vec<snow_images::ListedImage>, SettingsError> {
    use snow_images::{BundleData, Selection};
    // The Bundles manifest holds sections the release catalog does not keep (the management
    // components' images): they are read from the text itself.
    let bundle = BundleData::from_yaml(&catalog.bundles).map_err(SettingsError::usage)?;
    let os_families = args.os.iter().map(|&os| os.into());
    let selection = Selection {
        kube_versions: args.kubernetes_versions.clone(),
        os_families: os_families.collect(),
    };
    snow_images::image_list(&bundle, &catalog.inputs.distros, &selection)
        .map_err(SettingsError::usage)
}

/// The PEM CA certificates of `--ca-cert`, each checked to hold one.
pub fn ca_certs(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>, SettingsError> {
    let mut pems = Vec::new();
    for path in paths {
        let pem = read_text(path, "the CA certificate")?;
        if !pem.contains("-----BEGIN CERTIFICATE-----") {
            return Err(SettingsError::Usage(format!(
                "{} holds no PEM certificate",
                path.display()
            )));
        }
        pems.push(pem.into_bytes());
    }
    Ok(pems)
}

/// The management components' files fetched over HTTPS into the cache (`--cache-dir`, else
/// `$XDG_CACHE_HOME/snowctl` or `~/.cache/snowctl`); what is cached is not fetched again.
pub fn fetch_components(
    assets: &[ComponentAssets],
    cache_dir: Option<&Path>,
    ca_certs_pem: Vec<Vec<u8>>,
    environment: &Environment,
) -> Result<Noted<Vec<ComponentFiles>>, SettingsError> {
    let dir = cache(cache_dir, environment)?;
    let config = assets::FetchConfig {
        ca_certs_pem,
        ..assets::FetchConfig::new(dir)
    };
    let fetched = runtime()?.block_on(assets::fetch_components(assets, &config));
    let fetched = fetched.map_err(|e| SettingsError::Failed(e.to_string()))?;
    let said = components_fetched(fetched.fetched, fetched.cached, &config.cache_dir);
    Ok(Noted {
        value: fetched.files,
        notices: vec![said],
    })
}

/// How many component files were fetched and how many came from the cache.
fn components_fetched(fetched: usize, cached: usize, dir: &Path) -> Notice {
    Notice::Progress(format!(
        "components: {fetched} file(s) fetched, {cached} from the cache {}\n",
        dir.display()
    ))
}

/// Both device files loaded when both are given, else `None`.
pub fn optional_secrets(
    files: &DeviceFiles,
) -> Result<Option<(CredentialsFile, CaBundle)>, SettingsError> {
    match files {
        DeviceFiles {
            credentials: Some(c),
            ca_bundle: Some(b),
        } => load_secrets(c, b).map(Some),
        _ => Ok(None),
    }
}

/// Findings about the device files, to say pointing at those files (none without findings).
pub fn file_findings(findings: &[Finding], about: &str, files: &DeviceFiles) -> Option<Notice> {
    if findings.is_empty() {
        return None;
    }
    Some(Notice::Findings {
        findings: findings.to_vec(),
        about: about.to_owned(),
        files: files.names(),
    })
}

/// Where the management components come from, resolved before the release catalog is read:
/// `--components-dir`, else the archive of `--artifacts` (the catalog's, opened with it), else
/// fetched over HTTPS through the cache (`--cache-dir`, `--ca-cert`, checked here).
#[derive(Debug, Clone)]
pub enum ComponentsFrom {
    /// `--components-dir`.
    Dir(PathBuf),
    /// The archive of `--artifacts`.
    Archive(PathBuf),
    /// The bundle's URIs over HTTPS, through the cache.
    Fetch(assets::FetchConfig),
}

impl ComponentsFrom {
    /// From the component flags and the release flags (`--artifacts`).
    pub fn resolve(
        args: &ComponentArgs,
        release: &ReleaseArgs,
        environment: &Environment,
    ) -> Result<ComponentsFrom, SettingsError> {
        Ok(match (&args.components_dir, &release.artifacts) {
            (Some(dir), _) => ComponentsFrom::Dir(dir.clone()),
            (None, Some(archive)) => ComponentsFrom::Archive(archive.clone()),
            (None, None) => ComponentsFrom::Fetch(assets::FetchConfig {
                ca_certs_pem: ca_certs(&args.ca_certs)?,
                ..assets::FetchConfig::new(cache(args.cache_dir.as_deref(), environment)?)
            }),
        })
    }

    /// As `snow_provision::components` takes it: the archive the catalog was read from
    /// (`archive`) is not opened again.
    pub fn source<'a>(&'a self, archive: Option<&'a snow_images::Archive>) -> ComponentsSource<'a> {
        match (self, archive) {
            (ComponentsFrom::Dir(dir), _) => ComponentsSource::Dir(dir),
            (_, Some(archive)) => ComponentsSource::Opened(archive),
            (ComponentsFrom::Archive(path), None) => ComponentsSource::Archive(path),
            (ComponentsFrom::Fetch(config), None) => ComponentsSource::Fetch(config.clone()),
        }
    }

    /// What to say about the files fetched (`fetched`: how many fetched and from the cache),
    /// when they were.
    pub fn fetched(&self, fetched: Option<(usize, usize)>) -> Option<Notice> {
        match (fetched, self) {
            (Some((fetched, cached)), ComponentsFrom::Fetch(config)) => {
                Some(components_fetched(fetched, cached, &config.cache_dir))
            }
            _ => None,
        }
    }
}

impl From<ComponentsError> for SettingsError {
    fn from(e: ComponentsError) -> SettingsError {
        match e {
            ComponentsError::Lifecycle(e) => SettingsError::Lifecycle(e),
            e if e.is_input() => SettingsError::Usage(output::printable_lines(&e.to_string())),
            e => SettingsError::Failed(e.to_string()),
        }
    }
}

/// The provider stack `init` installs, ready to apply (`snow_provision::components`): the bundle
/// of `kubernetes_version` (default: the newest), its components from `from`, with the device
/// files' encodings (when given) and this process's environment as values.
fn components(
    from: &ComponentsFrom,
    archive: Option<&snow_images::Archive>,
    inputs: &ReleaseInputs,
    kubernetes_version: Option<&str>,
    secrets: Option<(&CredentialsFile, &CaBundle)>,
    environment: &Environment,
) -> Result<Noted<Vec<ComponentObjects>>, SettingsError> {
    let options = ComponentsOptions {
        inputs,
        kubernetes_version,
        secrets,
        environment: environment.vars().clone(),
        source: from.source(archive),
    };
    let made = runtime()?.block_on(snow_provision::components::components(options))?;
    Ok(Noted {
        notices: from.fetched(made.fetched).into_iter().collect(),
        value: made.objects,
    })
}

/// Said once when no controller image is known.
pub const NO_CONTROLLER_NOTE: &str = "ℹ️ The snowctl controller is not installed: no image is known (no registry publishes it). Push the controller image to a registry the cluster pulls from and pass --controller-image REF (or, for a spec with a registry mirror, import it there with snowctl import-images).\n";

/// The snowctl controller component (`snow_provision::management::controller_component`): with
/// `image` (`--controller-image`), else, for a spec with a registry mirror, where
/// `import-images` pushes it. Without either, `None`, said once on stderr: no registry publishes
/// the image, so none is made up.
fn controller(
    image: Option<&str>,
    spec: Option<&ValidSpec>,
    release: &capi_render::controller::ReleaseFiles,
) -> Result<Noted<Option<ComponentObjects>>, SettingsError> {
    let component = snow_provision::management::controller_component(image, spec, release)?;
    let mut notices = Vec::new();
    if component.is_none() {
        notices.push(Notice::Note(NO_CONTROLLER_NOTE.into()));
    }
    Ok(Noted {
        value: component,
        notices,
    })
}

/// What `init`, `upgrade management-components` and `upgrade plan management-components`
/// install, resolved once from their flags: the provider stack of the release
/// (`--kubernetes-version`'s bundle, else the newest) from [`components`], the snowctl controller
/// from [`controller`], and the management cluster, with what each wants said, in order. The
/// command puts them in install order with `snow_provision::management::stack`.
pub struct InitSettings {
    /// The provider stack, in install order.
    pub providers: Vec<ComponentObjects>,
    /// The controller, when an image is known.
    pub controller: Option<ComponentObjects>,
    /// The management cluster, when the command works on one (all but `init --dry-run`).
    pub management: Option<Management>,
    /// What to say: the catalog's, the components', the controller's and the kubeconfig's
    /// notices.
    pub notices: Vec<Notice>,
}

impl InitSettings {
    /// From `init`'s flags; `on_management`: the command works on the management cluster (its
    /// kubeconfig is found after the components, so that `init --dry-run` needs none).
    pub fn resolve(
        args: &InitArgs,
        on_management: bool,
        environment: &Environment,
    ) -> Result<InitSettings, SettingsError> {
        let default = ReleaseDefault::Published {
            kube_version: args.kubernetes_version.as_deref(),
            cache_dir: args.components.cache_dir.as_deref(),
            ca_certs: &args.components.ca_certs,
        };
        let Noted {
            value: catalog,
            mut notices,
        } = catalog(&args.release, default, environment)?;
        let release_files = catalog.release_files();
        let files = DeviceFiles::resolve(&args.device_files, environment);
        let secrets = optional_secrets(&files).map_err(|e| e.after(notices.clone()))?;
        let from = ComponentsFrom::resolve(&args.components, &args.release, environment)
            .map_err(|e| e.after(notices.clone()))?;
        let providers = components(
            &from,
            catalog.archive.as_deref(),
            &catalog.inputs,
            args.kubernetes_version.as_deref(),
            secrets.as_ref().map(|(c, b)| (c, b)),
            environment,
        )
        .map_err(|e| e.after(notices.clone()))?;
        notices.extend(providers.notices);
        let controller = controller(args.controller_image.as_deref(), None, &release_files)
            .map_err(|e| e.after(notices.clone()))?;
        notices.extend(controller.notices);
        let management = match on_management {
            true => {
                let found = management(&args.management, environment)
                    .map_err(|e| e.after(notices.clone()))?;
                notices.extend(found.notices);
                Some(found.value)
            }
            false => None,
        };
        Ok(InitSettings {
            providers: providers.value,
            controller: controller.value,
            management,
            notices,
        })
    }
}

/// The bootstrap cluster, resolved before the release catalog is read: `--bootstrap-kubeconfig`'s
/// (checked, its warnings kept to be said when it is used), else a kind cluster the command
/// makes for the spec once its release is known (`snow_provision::bootstrap::Kind::new`).
#[derive(Debug, Clone)]
pub enum BootstrapFrom {
    /// `--bootstrap-kubeconfig`.
    Existing {
        /// The file.
        kubeconfig: PathBuf,
        /// Its warnings.
        notices: Vec<Notice>,
    },
    /// A kind cluster for the spec.
    Kind,
}

impl BootstrapFrom {
    /// From the bootstrap flags; `spec`: whether there is a spec for a kind cluster (kind's
    /// node image and config come from it).
    pub fn resolve(args: &BootstrapArgs, spec: bool) -> Result<BootstrapFrom, SettingsError> {
        match (&args.bootstrap_kubeconfig, spec) {
            (Some(file), _) => Ok(BootstrapFrom::Existing {
                notices: check_kubeconfig(&KubeconfigSource::file(file))?.notices,
                kubeconfig: file.clone(),
            }),
            (None, true) => Ok(BootstrapFrom::Kind),
            (None, false) => Err(SettingsError::usage(
                "a self-managed cluster is deleted through a bootstrap cluster: pass -f FILE (its spec, for a kind cluster) or --bootstrap-kubeconfig FILE",
            )),
        }
    }
}

/// How registries are reached: the PEM CA certificates to trust (`--ca-cert`, each checked to
/// hold one) and the credentials of the Docker config (`--docker-config`, else
/// `$DOCKER_CONFIG/config.json` or `~/.docker/config.json` when present; none otherwise).
pub fn registry_access(
    args: &SourceArgs,
    environment: &Environment,
) -> Result<(Vec<Vec<u8>>, snow_images::Credentials), SettingsError> {
    let pems = ca_certs(&args.ca_certs)?;
    let path = args.docker_config.clone().or_else(|| {
        let dir = environment
            .path(env::DOCKER_CONFIG)
            .or_else(|| environment.path(env::HOME).map(|h| h.join(".docker")))?;
        let path = dir.join("config.json");
        path.exists().then_some(path)
    });
    let Some(path) = path else {
        return Ok((pems, snow_images::Credentials::default()));
    };
    let text = read_text(&path, "the Docker config")?;
    let credentials = snow_images::Credentials::from_docker_config(&text)
        .map_err(|e| SettingsError::Usage(format!("{}: {e}", path.display())))?;
    Ok((pems, credentials))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_is_the_flag_else_the_list_else_the_default_file_when_it_exists() {
        let home = tempfile::tempdir().unwrap();
        let os = |s: &str| std::ffi::OsString::from(s);
        let home_os = home.path().as_os_str();
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        // The flag wins over everything.
        let got = kubeconfig_paths(Some(Path::new("f")), Some(&os("a:b")), Some(home_os), false);
        assert_eq!(got, Some(paths(&["f"])));
        // The list, empty entries skipped (kubectl's rule), missing files kept for the reader.
        let got = kubeconfig_paths(None, Some(&os(":a::b:")), Some(home_os), false);
        assert_eq!(got, Some(paths(&["a", "b"])));
        // An empty KUBECONFIG is none; no ~/.kube/config yet: no kubeconfig at all.
        assert_eq!(
            kubeconfig_paths(None, Some(&os("")), Some(home_os), false),
            None
        );
        assert_eq!(
            kubeconfig_paths(None, Some(&os("::")), Some(home_os), false),
            None
        );
        assert_eq!(kubeconfig_paths(None, None, None, false), None);
        // A context asked for: the default file, for the reader to say it is missing.
        let default = home.path().join(".kube").join("config");
        let got = kubeconfig_paths(None, None, Some(home_os), true);
        assert_eq!(got, Some(vec![default.clone()]));
        std::fs::create_dir(home.path().join(".kube")).unwrap();
        std::fs::write(&default, "").unwrap();
        assert_eq!(
            kubeconfig_paths(None, Some(&os("")), Some(home_os), false),
            Some(vec![default])
        );
    }

    #[test]
    fn registry_login_cache_and_docker_config_come_from_the_environment_given() {
        let dir = tempfile::tempdir().unwrap();
        let at = |p: &Path| p.to_str().unwrap().to_owned();
        let bare = Environment::new(dir.path());
        // The mirror's login: the two variables, the password kept secret.
        assert!(matches!(registry_env(&bare), (None, None)));
        let login = bare
            .clone()
            .with(env::REGISTRY_USERNAME, "robot")
            .with(env::REGISTRY_PASSWORD, "s3cret");
        let (user, password) = registry_env(&login);
        assert_eq!(user.as_deref(), Some("robot"));
        assert!(!format!("{password:?}").contains("s3cret"));
        // The cache: --cache-dir, else XDG_CACHE_HOME, else HOME; none of them a usage error.
        let home = bare.clone().with(env::HOME, &at(&dir.path().join("h")));
        let xdg = home
            .clone()
            .with(env::XDG_CACHE_HOME, &at(&dir.path().join("x")));
        let flag = dir.path().join("flag");
        assert_eq!(cache(Some(&flag), &xdg).unwrap(), flag);
        assert!(cache(None, &xdg).unwrap().starts_with(dir.path().join("x")));
        assert!(
            cache(None, &home)
                .unwrap()
                .starts_with(dir.path().join("h"))
        );
        let Err(SettingsError::Usage(message)) = cache(None, &bare) else {
            panic!("not a usage error");
        };
        assert_eq!(message, "no cache directory: pass --cache-dir");
        // The Docker config: DOCKER_CONFIG's, else ~/.docker's, when there; else none.
        let docker = dir.path().join("docker");
        std::fs::create_dir(&docker).unwrap();
        std::fs::write(docker.join("config.json"), "{not json").unwrap();
        let source = |docker_config: Option<PathBuf>| SourceArgs {
            source_registry: None,
            source_insecure: false,
            ca_certs: Vec::new(),
            concurrency: 4,
            docker_config,
        };
        assert!(registry_access(&source(None), &home).is_ok());
        let named = home.clone().with(env::DOCKER_CONFIG, &at(&docker));
        let Err(SettingsError::Usage(message)) = registry_access(&source(None), &named) else {
            panic!("the named config was not read");
        };
        assert!(
            message.starts_with(&at(&docker.join("config.json"))),
            "{message}"
        );
    }

    #[test]
    fn device_files_given_as_flags_are_read_and_their_errors_said_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let files = DeviceFiles {
            credentials: Some(missing.clone()),
            ca_bundle: Some(missing.clone()),
        };
        let Err(SettingsError::DeviceFile { what, hint }) = optional_secrets(&files) else {
            panic!("not a device file error");
        };
        assert!(what.contains("missing"), "{what}");
        assert!(!hint.is_empty());
        // One file alone is no identity Secret, and no error.
        let one = DeviceFiles {
            credentials: Some(missing),
            ca_bundle: None,
        };
        assert!(optional_secrets(&one).unwrap().is_none());
        assert_eq!(one.paths().ca_bundle, None);
    }

    #[test]
    fn inputs_over_the_limit_are_refused_not_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let err = read_bytes(&path).unwrap_err();
        assert!(matches!(err, ReadError::TooLarge));
        assert!(err.to_string().contains("64 MiB"), "{err}");
        file.set_len(MAX_INPUT_BYTES).unwrap();
        assert_eq!(read_bytes(&path).unwrap().len() as u64, MAX_INPUT_BYTES);
    }
}
