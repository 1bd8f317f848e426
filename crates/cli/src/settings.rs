//! Flags, environment and files resolved once into the plain values commands use (as uv's
//! `GlobalSettings::resolve`). Every file a command reads goes through [`read_bytes`], with one
//! size limit and one error shape. Each resolver says what went wrong through [`Io`] and returns
//! the exit code, so a command only decides what to do with good values.

use crate::{
    args::{
        BootstrapArgs, Cli, ComponentArgs, ImageSelectionArgs, ManagementArgs, OptionalDeviceFiles,
        ReleaseArgs, RenderArgs, SourceArgs, WaitArgs,
    },
    env, exit,
    output::{self, Io},
};
use capi_render::{Contract, RenderOptions, SecretInputs};
use snow_api::{
    Finding, ValidSpec,
    release::{ClusterRelease, ComponentAssets, ComponentFiles, ReleaseInputs},
};
use snow_credentials::{CaBundle, CredentialsFile, RegistryCredentials, SecretString, registry};
use snow_images::assets;
use snow_lifecycle::{
    CniManifest, KubeconfigSource, Timeouts, WaitOptions,
    bootstrap::{Bootstrap, Existing, Kind, KindOptions},
    init::components::ComponentObjects,
};
use snow_provision::{
    DevicePaths,
    catalog::{CatalogError, CatalogSource, Origin},
    components::{ComponentsError, ComponentsOptions, ComponentsSource},
    preflight,
};
use std::{
    io::Read,
    path::{Path, PathBuf},
    process::ExitCode,
};

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

/// Reads a text input; on failure says which input (`what`) could not be read and why.
pub fn read_text(path: &Path, what: &str, io: &mut Io<'_>) -> Result<String, ExitCode> {
    read_bytes(path)
        .and_then(|b| String::from_utf8(b).map_err(|_| ReadError::NotText))
        .map_err(|err| {
            exit::usage(
                io,
                format!("cannot read {what} {}: {err}", output::source_name(path)),
            )
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
) -> Result<Option<RegistryCredentials>, Vec<Finding>> {
    let (username, password) = registry_env();
    registry::from_env(spec, username, password)
}

/// The registry mirror's username and password as the environment gives them.
pub fn registry_env() -> (Option<String>, Option<SecretString>) {
    let var = |name| std::env::var(name).ok();
    (
        var(env::REGISTRY_USERNAME),
        var(env::REGISTRY_PASSWORD).map(SecretString::new),
    )
}

/// [`registry_login`] for a command that cannot go on without it: an unset variable is said
/// (exit 1).
pub fn required_registry_login(
    spec: &snow_api::ClusterSpec,
    io: &mut Io<'_>,
) -> Result<Option<RegistryCredentials>, ExitCode> {
    registry_login(spec).map_err(|unset| {
        io.err(&snow_api::finding_text::text(
            &exit::with_hints(&unset),
            "environment",
            None,
            &[],
        ));
        ExitCode::from(exit::FAILURE)
    })
}

/// Reads and checks a spec; with error findings, shows them all and returns exit 1.
pub fn load_spec(path: &Path, io: &mut Io<'_>) -> Result<SpecFile, ExitCode> {
    let name = output::source_name(path);
    let text = read_text(path, "the cluster spec", io)?;
    let mut report = snow_api::check(&text).map_err(|err| {
        io.err(&output::diagnostic(
            &exit::with_hint(&err.to_finding(&name)),
            &name,
            Some(&text),
        ));
        ExitCode::from(exit::USAGE)
    })?;
    // EKS Anywhere's default: an empty mirror caCertContent is the file EKSA_REGISTRY_MIRROR_CA names.
    if let (Some(spec), Some(ca)) = (&mut report.spec, std::env::var_os(MIRROR_CA_VAR))
        && !ca.is_empty()
        && registry::wants_mirror_ca(spec)
    {
        let ca = read_text(
            Path::new(&ca),
            "the registry mirror CA (EKSA_REGISTRY_MIRROR_CA)",
            io,
        )?;
        registry::fill_mirror_ca(spec, ca);
    }
    match report.into_valid() {
        Ok(spec) => Ok(SpecFile { text, spec }),
        Err(report) => {
            io.err(&snow_api::finding_text::text(
                &exit::with_hints(&report.findings),
                &name,
                Some(&text),
                &[],
            ));
            exit::say(io, "the spec has errors and was not rendered", None);
            Err(ExitCode::from(exit::FAILURE))
        }
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
/// published release are checked here (exit 2).
pub fn catalog_source(
    args: &ReleaseArgs,
    default: ReleaseDefault<'_>,
    io: &mut Io<'_>,
) -> Result<CatalogSource, ExitCode> {
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
        ca_certs_pem: self::ca_certs(ca_certs, io)?,
        ..assets::FetchConfig::new(cache(cache_dir, io)?)
    };
    Ok(CatalogSource::Published {
        manifest_url: manifest_url.to_owned(),
        fetch,
        kube_version: kube_version.map(str::to_owned),
        newest_instead,
        eksd: eksd(),
    })
}

/// The release catalog ([`catalog_source`]), resolved once; the embedded sample said on stderr,
/// and a published release said (from the cache when the network failed).
pub fn catalog(
    args: &ReleaseArgs,
    default: ReleaseDefault<'_>,
    io: &mut Io<'_>,
) -> Result<Catalog, ExitCode> {
    let source = catalog_source(args, default, io)?;
    if let CatalogSource::EmbeddedSample { .. } = source {
        io.err(SAMPLE_NOTE);
    }
    let resolved = exit::runtime(io, false)?.block_on(source.resolve());
    let catalog = resolved.map_err(|e| match e {
        CatalogError::Archive(e) => exit::archive(io, output::printable_lines(&e.to_string())),
        e @ CatalogError::Fetch(_) => exit::failed(
            io,
            format!(
                "{e}\nhint: offline, pass --bundles FILE (an EKS Anywhere Bundles manifest) or --artifacts FILE (from `snowctl download artifacts`); or --release-manifest URL to read another Release manifest"
            ),
        ),
        e => exit::usage(io, e),
    })?;
    if let Origin::Published(release) = &catalog.origin {
        let url = &release.manifest_url;
        if let Some(reason) = &release.stale {
            io.err(&format!(
                "note: {url} could not be fetched ({reason}): the copy in the cache {} is used\n",
                release.cache_dir.display()
            ));
        }
        io.progress(&format!(
            "release: EKS Anywhere {} ({}), from {url}\n",
            release.version, release.bundles_url
        ));
    }
    Ok(catalog)
}

/// Said once when the embedded sample is used.
const SAMPLE_NOTE: &str = "note: using the embedded sample catalog (a development build of EKS Anywhere's sample Bundles; its images and components are not published): pass --bundles FILE, --artifacts FILE or --release-manifest URL for a real release\n";

/// `--cache-dir`, else `$XDG_CACHE_HOME/snowctl` or `~/.cache/snowctl`.
fn cache(dir: Option<&Path>, io: &mut Io<'_>) -> Result<PathBuf, ExitCode> {
    let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
    (dir.map(Path::to_path_buf))
        .or_else(|| assets::default_cache_dir(var(env::XDG_CACHE_HOME), var(env::HOME)))
        .ok_or_else(|| exit::usage(io, "no cache directory: pass --cache-dir"))
}

/// The device files' paths (flags or environment).
pub fn device_paths(files: &OptionalDeviceFiles) -> DevicePaths<'_> {
    DevicePaths {
        credentials: files.credentials.as_deref(),
        ca_bundle: files.ca_bundle.as_deref(),
    }
}

/// The device clients of `devices` (every profile when empty) for a command whose device files
/// are optional (`import cluster`, `get clusters`): `None` without `--credentials`; the files'
/// findings on stderr, exit 2 for files that cannot be used.
pub fn optional_fleet(
    devices: &[snow_api::DeviceIp],
    files: &OptionalDeviceFiles,
    timeout: std::time::Duration,
    io: &mut Io<'_>,
) -> Result<Option<snow_validate::FilesFleet>, ExitCode> {
    if files.credentials.is_none() {
        return Ok(None);
    }
    let loaded = preflight::device_files(device_paths(files), timeout);
    let fleet = loaded.and_then(|f| snow_validate::fleet_from_files(f, devices));
    let fleet = fleet.map_err(|f| {
        io.err(&output::diagnostic(&exit::with_hint(&f), "devices", None));
        ExitCode::from(exit::USAGE)
    })?;
    file_findings(&fleet.findings, "devices", files, io);
    Ok(Some(fleet))
}

/// What rendering needs besides the spec: release inputs, a forced contract, identity files.
pub struct RenderSettings {
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
}

impl RenderSettings {
    /// From the render flags.
    pub fn resolve(
        args: &RenderArgs,
        spec: &ValidSpec,
        default: ReleaseDefault<'_>,
        io: &mut Io<'_>,
    ) -> Result<RenderSettings, ExitCode> {
        let catalog = catalog(&args.release, default, io)?;
        let release_files = catalog.release_files();
        let (inputs, archive) = (catalog.inputs, catalog.archive);
        let contract = args
            .contract
            .as_deref()
            .map(str::parse::<Contract>)
            .transpose()
            .map_err(|err| exit::usage(io, format_args!("--contract: {err}")))?;
        // The identity Secret needs both files; without them it is left out, and said so.
        let secrets = match (args.no_secrets, &args.device_files) {
            (true, _) => None,
            (
                false,
                OptionalDeviceFiles {
                    credentials: Some(c),
                    ca_bundle: Some(b),
                },
            ) => Some(load_secrets(c, b, io)?),
            (false, _) => {
                io.err("note: the CAPAS identity Secret is left out: set EKSA_AWS_CREDENTIALS_FILE and EKSA_AWS_CA_BUNDLES_FILE (or --credentials/--ca-bundle), or pass --no-secrets\n");
                None
            }
        };
        let registry = match (args.no_secrets, registry_login(spec)) {
            (true, _) => None,
            (false, Ok(login)) => login,
            (false, Err(_)) => {
                io.err("note: the registry-credentials Secret is left out: set REGISTRY_USERNAME and REGISTRY_PASSWORD, or pass --no-secrets\n");
                None
            }
        };
        Ok(RenderSettings {
            inputs,
            release_files,
            archive,
            contract,
            secrets,
            registry,
        })
    }

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

/// Loads the credentials file and CA bundle; with error findings, shows them and returns exit 1.
pub fn load_secrets(
    credentials: &Path,
    ca_bundle: &Path,
    io: &mut Io<'_>,
) -> Result<(CredentialsFile, CaBundle), ExitCode> {
    let creds = snow_credentials::load_credentials(credentials);
    let bundle = snow_credentials::load_ca_bundle(ca_bundle);
    match (creds, bundle) {
        (Ok((c, cf)), Ok((b, bf))) => {
            let findings: Vec<_> = cf.into_iter().chain(bf).collect();
            if snow_api::has_errors(&findings) {
                io.err(&snow_api::finding_text::text(
                    &exit::with_hints(&findings),
                    "credentials",
                    None,
                    &[],
                ));
                exit::say(
                    io,
                    "fix the credentials file or CA bundle (see `snowctl credentials check`), or pass --no-secrets",
                    None,
                );
                return Err(ExitCode::from(exit::FAILURE));
            }
            Ok((c, b))
        }
        (Err(e), _) | (_, Err(e)) => {
            exit::say(io, &e, Some(e.hint()));
            Err(ExitCode::from(exit::USAGE))
        }
    }
}

/// Checks a kubeconfig given on the command line before anything connects with it: its files
/// read, parsed and merged (exit 2 naming the file when one cannot be), and said once on stderr
/// when the cluster of the context used turns TLS verification off (its API server's identity
/// is not checked).
pub fn check_kubeconfig(source: &KubeconfigSource, io: &mut Io<'_>) -> Result<(), ExitCode> {
    let file = source.read().map_err(|e| exit::lifecycle(io, &e.into()))?;
    if file.skips_tls_verify(source.context.as_deref()) {
        io.err(&format!(
            "⚠️  warning: {} has insecure-skip-tls-verify: true: the API server's certificate is not checked, so anyone on the network path can stand in for it\n",
            source.shown()
        ));
    }
    Ok(())
}

/// The management cluster's kubeconfig as kubectl finds it: `--kubeconfig FILE`, else the
/// files of `KUBECONFIG` (a list separated by ':', empty entries skipped; merged, the first
/// file to define a name wins), else `~/.kube/config` when it exists, or when `--context` asks
/// for one of its contexts (so that reading it says it is missing); `--context` with it. `None`
/// when there is none.
pub fn find_kubeconfig(args: &ManagementArgs) -> Option<KubeconfigSource> {
    kubeconfig_paths(
        args.kubeconfig.as_deref(),
        std::env::var_os(env::KUBECONFIG).as_deref(),
        std::env::var_os(env::HOME).as_deref(),
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
/// [`check_kubeconfig`]); without one, says how to give it.
pub fn management(args: &ManagementArgs, io: &mut Io<'_>) -> Result<Management, ExitCode> {
    match find_kubeconfig(args) {
        Some(source) => {
            check_kubeconfig(&source, io)?;
            Ok(Management { source })
        }
        None => Err(exit::usage(
            io,
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
    /// Connects (and says where, on stderr).
    pub async fn connect(
        &self,
        io: &mut Io<'_>,
    ) -> Result<snow_lifecycle::Management, snow_lifecycle::LifecycleError> {
        let mgmt = self.connect_quietly().await?;
        io.progress(&format!("Management cluster: {}\n", mgmt.server()));
        Ok(mgmt)
    }

    /// Connects.
    pub async fn connect_quietly(
        &self,
    ) -> Result<snow_lifecycle::Management, snow_lifecycle::LifecycleError> {
        Ok(snow_lifecycle::Management::connect(&self.source).await?)
    }

    /// Which kubeconfig and context, for a progress line: `FILES (context NAME)`.
    pub fn shown(&self) -> String {
        match &self.source.context {
            Some(context) => format!("{} (context {context})", self.source.shown()),
            None => format!("{} (its current context)", self.source.shown()),
        }
    }
}

/// `--cni-manifest FILE`, read and parsed (exit 2 naming the document that is wrong).
pub fn read_cni_manifest(path: &Path, io: &mut Io<'_>) -> Result<CniManifest, ExitCode> {
    let text = read_text(path, "the CNI manifest", io)?;
    let name = output::source_name(path);
    CniManifest::parse(&text).map_err(|e| exit::usage(io, format!("{name}: {e}")))
}

/// Says why charts could not be taken out of an archive: exit 2 when the archive cannot be used,
/// else 1.
pub fn charts_error(io: &mut Io<'_>, e: &snow_images::charts::ChartsError) -> ExitCode {
    if e.is_input() {
        exit::usage(io, e)
    } else {
        exit::failed(io, e)
    }
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
    io: &mut Io<'_>,
) -> Result<Option<Vec<snow_images::ListedImage>>, ExitCode> {
    if args.images.is_empty() && args.images_file.is_none() {
        return Ok(None);
    }
    let list = match &args.images_file {
        Some(path) => Some(read_text(path, "the image list", io)?),
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
    io: &mut Io<'_>,
) -> Result<Catalog, ExitCode> {
    let kube_version = match args.kubernetes_versions.as_slice() {
        [one] => Some(one.as_str()),
        _ => None,
    };
    let default = ReleaseDefault::Published {
        kube_version,
        cache_dir,
        ca_certs,
    };
    catalog(&args.release, default, io)
}

/// The images of the release bundle for the selection's Kubernetes versions and node OS
/// families (`snow_images::image_list`).
pub fn image_selection(
    args: &ImageSelectionArgs,
    catalog: &Catalog,
    io: &mut Io<'_>,
) -> Result<Vec<snow_images::ListedImage>, ExitCode> {
    use snow_images::{BundleData, Selection};
    // The Bundles manifest holds sections the release catalog does not keep (the management
    // components' images): they are read from the text itself.
    let bundle = BundleData::from_yaml(&catalog.bundles).map_err(|e| exit::usage(io, e))?;
    let os_families = args.os.iter().map(|&os| os.into());
    let selection = Selection {
        kube_versions: args.kubernetes_versions.clone(),
        os_families: os_families.collect(),
    };
    snow_images::image_list(&bundle, &catalog.inputs.distros, &selection)
        .map_err(|e| exit::usage(io, e))
}

/// The PEM CA certificates of `--ca-cert`, each checked to hold one.
pub fn ca_certs(paths: &[PathBuf], io: &mut Io<'_>) -> Result<Vec<Vec<u8>>, ExitCode> {
    let mut pems = Vec::new();
    for path in paths {
        let pem = read_text(path, "the CA certificate", io)?;
        if !pem.contains("-----BEGIN CERTIFICATE-----") {
            return Err(exit::usage(
                io,
                format!("{} holds no PEM certificate", path.display()),
            ));
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
    io: &mut Io<'_>,
) -> Result<Vec<ComponentFiles>, ExitCode> {
    let dir = cache(cache_dir, io)?;
    let config = assets::FetchConfig {
        ca_certs_pem,
        ..assets::FetchConfig::new(dir)
    };
    let fetched = exit::runtime(io, false)?.block_on(assets::fetch_components(assets, &config));
    let fetched = fetched.map_err(|e| exit::failed(io, e))?;
    io.progress(&format!(
        "components: {} file(s) fetched, {} from the cache {}\n",
        fetched.fetched,
        fetched.cached,
        config.cache_dir.display()
    ));
    Ok(fetched.files)
}

/// Both device files loaded when both are given (their errors said, exit 2), else `None`.
pub fn optional_secrets(
    files: &OptionalDeviceFiles,
    io: &mut Io<'_>,
) -> Result<Option<(CredentialsFile, CaBundle)>, ExitCode> {
    match files {
        OptionalDeviceFiles {
            credentials: Some(c),
            ca_bundle: Some(b),
        } => load_secrets(c, b, io).map(Some),
        _ => Ok(None),
    }
}

/// Findings about the device files, said on stderr pointing at those files.
pub fn file_findings(
    findings: &[Finding],
    about: &str,
    files: &OptionalDeviceFiles,
    io: &mut Io<'_>,
) {
    if findings.is_empty() {
        return;
    }
    let names: Vec<String> = [&files.credentials, &files.ca_bundle]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    io.err(&snow_api::finding_text::text(
        &exit::with_hints(findings),
        about,
        None,
        &names,
    ));
}

/// The provider stack `init` installs, ready to apply (`snow_provision::components`): the bundle
/// of `kubernetes_version` (default: the newest), its components from `--components-dir`, else
/// the archive of `--artifacts` (`archive`, the catalog's, opened once), else fetched over HTTPS
/// (cached), with the device files' encodings (when given) and this process's environment as
/// values.
pub fn components(
    args: &ComponentArgs,
    archive: Option<&snow_images::Archive>,
    inputs: &ReleaseInputs,
    kubernetes_version: Option<&str>,
    secrets: Option<(&CredentialsFile, &CaBundle)>,
    io: &mut Io<'_>,
) -> Result<Vec<ComponentObjects>, ExitCode> {
    let source = match (&args.components_dir, archive) {
        (Some(dir), _) => ComponentsSource::Dir(dir),
        (None, Some(archive)) => ComponentsSource::Opened(archive),
        (None, None) => ComponentsSource::Fetch(assets::FetchConfig {
            ca_certs_pem: ca_certs(&args.ca_certs, io)?,
            ..assets::FetchConfig::new(cache(args.cache_dir.as_deref(), io)?)
        }),
    };
    let cache_dir = match &source {
        ComponentsSource::Fetch(config) => Some(config.cache_dir.clone()),
        _ => None,
    };
    let options = ComponentsOptions {
        inputs,
        kubernetes_version,
        secrets,
        environment: std::env::vars().collect(),
        source,
    };
    let made = exit::runtime(io, false)?.block_on(snow_provision::components::components(options));
    let made = made.map_err(|e| match e {
        ComponentsError::Lifecycle(e) => exit::lifecycle(io, &e),
        e if e.is_input() => exit::usage(io, crate::output::printable_lines(&e.to_string())),
        e => exit::failed(io, e),
    })?;
    if let (Some((fetched, cached)), Some(dir)) = (made.fetched, cache_dir) {
        io.progress(&format!(
            "components: {fetched} file(s) fetched, {cached} from the cache {}\n",
            dir.display()
        ));
    }
    Ok(made.objects)
}

/// The snowctl controller component: with `image` (`--controller-image`), else, for a spec
/// with a registry mirror, `<mirror endpoint>:<port>/snowctl/controller:v<version>` (where
/// `import-images` pushes it); the spec's proxy settings given to it. Without either, `None`,
/// said once on stderr: no registry publishes the image, so none is made up.
pub fn controller(
    image: Option<&str>,
    spec: Option<&ValidSpec>,
    release: &capi_render::controller::ReleaseFiles,
    io: &mut Io<'_>,
) -> Result<Option<ComponentObjects>, ExitCode> {
    let mirror = spec
        .and_then(|s| s.cluster.spec.registry_mirror_configuration.as_ref())
        .map(|m| snow_api::release::controller_image(capi_render::RegistryMirror::new(m).base()));
    let Some(image) = image.map(str::to_owned).or(mirror) else {
        io.err(
            "ℹ️ The snowctl controller is not installed: no image is known (no registry publishes it). Push the controller image to a registry the cluster pulls from and pass --controller-image REF (or, for a spec with a registry mirror, import it there with snowctl import-images).\n",
        );
        return Ok(None);
    };
    let max = capi_render::controller::MAX_RELEASE_BYTES;
    if release.size() > max {
        let why = format!(
            "the release catalog ({} bytes) is larger than the {max} bytes of the ConfigMap the controller reads it from",
            release.size()
        );
        return Err(exit::usage(io, why));
    }
    let component = capi_render::controller::ControllerComponent {
        image,
        proxy: spec.and_then(capi_render::controller::Proxy::of),
        release: release.clone(),
    };
    Ok(Some(snow_lifecycle::init::controller::component(
        &component,
    )))
}

/// The bootstrap cluster: `--bootstrap-kubeconfig`'s, else a kind cluster for `spec` (none
/// without a spec: kind's node image and config come from it), pulling through an
/// authenticated mirror with `login`.
pub fn bootstrap(
    args: &BootstrapArgs,
    spec: Option<(&ValidSpec, &ClusterRelease<'_>)>,
    login: Option<&RegistryCredentials>,
    io: &mut Io<'_>,
) -> Result<Bootstrap, ExitCode> {
    match (&args.bootstrap_kubeconfig, spec) {
        (Some(file), _) => {
            check_kubeconfig(&KubeconfigSource::file(file), io)?;
            Ok(Bootstrap::Existing(Existing::new(file, None)))
        }
        (None, Some((spec, release))) => Kind::new(spec, release, KindOptions::default())
            .map(|kind| kind.with_registry_login(login.cloned()))
            .map(|kind| Bootstrap::Kind(Box::new(kind)))
            .map_err(|err| exit::lifecycle(io, &err)),
        (None, None) => Err(exit::usage(
            io,
            "a self-managed cluster is deleted through a bootstrap cluster: pass -f FILE (its spec, for a kind cluster) or --bootstrap-kubeconfig FILE",
        )),
    }
}

/// How registries are reached: the PEM CA certificates to trust (`--ca-cert`, each checked to
/// hold one) and the credentials of the Docker config (`--docker-config`, else
/// `$DOCKER_CONFIG/config.json` or `~/.docker/config.json` when present; none otherwise).
pub fn registry_access(
    args: &SourceArgs,
    io: &mut Io<'_>,
) -> Result<(Vec<Vec<u8>>, snow_images::Credentials), ExitCode> {
    let pems = ca_certs(&args.ca_certs, io)?;
    let path = args.docker_config.clone().or_else(|| {
        let dir = std::env::var_os(env::DOCKER_CONFIG)
            .map(PathBuf::from)
            .or_else(|| std::env::var_os(env::HOME).map(|h| PathBuf::from(h).join(".docker")))?;
        let path = dir.join("config.json");
        path.exists().then_some(path)
    });
    let Some(path) = path else {
        return Ok((pems, snow_images::Credentials::default()));
    };
    let text = read_text(&path, "the Docker config", io)?;
    let credentials = snow_images::Credentials::from_docker_config(&text)
        .map_err(|e| exit::usage(io, format!("{}: {e}", path.display())))?;
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
