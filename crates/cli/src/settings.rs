//! Flags, environment and files resolved once into the plain values commands use (as uv's
//! `GlobalSettings::resolve`). Every file a command reads goes through [`read_bytes`], with one
//! size limit and one error shape. Each resolver says what went wrong through [`Io`] and returns
//! the exit code, so a command only decides what to do with good values.

use crate::{
    args::{Cli, ManagementArgs, OptionalDeviceFiles, ReleaseArgs, RenderArgs, WaitArgs},
    exit,
    output::{self, Io},
};
use capi_render::{Contract, RenderOptions, SecretInputs};
use snow_api::{
    Finding, ValidSpec,
    release::{Bundles, ClusterRelease, Release, ReleaseInputs},
};
use snow_credentials::{CaBundle, CredentialsFile};
use snow_lifecycle::{Timeouts, WaitOptions};
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
}

impl GlobalSettings {
    /// From the parsed command line.
    pub fn resolve(cli: &Cli) -> GlobalSettings {
        GlobalSettings {
            verbose: cli.verbose,
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
            io.err(&format!(
                "error: cannot read {what} {}: {err}\n",
                output::source_name(path)
            ));
            ExitCode::from(exit::USAGE)
        })
}

/// A spec file read, checked, and free of error findings.
pub struct SpecFile {
    /// The text as written (recorded in the inventory).
    pub text: String,
    /// The checked spec.
    pub spec: ValidSpec,
}

/// Reads and checks a spec; with error findings, shows them all and returns exit 1.
pub fn load_spec(path: &Path, io: &mut Io<'_>) -> Result<SpecFile, ExitCode> {
    let name = output::source_name(path);
    let text = read_text(path, "the cluster spec", io)?;
    let report = snow_api::check(&text).map_err(|err| {
        io.err(&output::diagnostic(
            &err.to_finding(&name),
            &name,
            Some(&text),
        ));
        ExitCode::from(exit::USAGE)
    })?;
    match report.into_valid() {
        Ok(spec) => Ok(SpecFile { text, spec }),
        Err(report) => {
            io.err(&output::findings_text(&report.findings, &name, Some(&text)));
            io.err("error: the spec has errors and was not rendered\n");
            Err(ExitCode::from(exit::FINDINGS))
        }
    }
}

/// The release catalog: the embedded one or `--bundles`, plus every `--eksd-release`.
pub fn release_inputs(args: &ReleaseArgs, io: &mut Io<'_>) -> Result<ReleaseInputs, ExitCode> {
    let usage = |io: &mut Io<'_>, what: String| {
        io.err(&format!("error: {what}\n"));
        ExitCode::from(exit::USAGE)
    };
    let mut inputs = match &args.bundles {
        None => ReleaseInputs::embedded(),
        Some(path) => Bundles::from_yaml(&read_text(path, "the bundles manifest", io)?)
            .and_then(ReleaseInputs::from_bundles),
    }
    .map_err(|err| usage(io, err.to_string()))?;
    for path in &args.eksd_releases {
        let text = read_text(path, "the EKS-D release", io)?;
        Release::from_yaml(&text)
            .and_then(|r| inputs.add_release(&r))
            .map_err(|err| usage(io, format!("{}: {err}", output::source_name(path))))?;
    }
    Ok(inputs)
}

/// The paths of the device files, when both are known (flags or environment).
pub fn device_files(files: &OptionalDeviceFiles) -> Result<(PathBuf, PathBuf), Box<Finding>> {
    let missing = |flag: &str, env: &str| {
        Box::new(
            Finding::error(
                "preflight.input",
                format!("checking the devices needs {flag} or {env}"),
            )
            .hint(format!(
                "pass {flag} FILE or set {env}; or run with --offline for the static checks only"
            )),
        )
    };
    Ok((
        files
            .credentials
            .clone()
            .ok_or_else(|| missing("--credentials", "EKSA_AWS_CREDENTIALS_FILE"))?,
        files
            .ca_bundle
            .clone()
            .ok_or_else(|| missing("--ca-bundle", "EKSA_AWS_CA_BUNDLES_FILE"))?,
    ))
}

/// What rendering needs besides the spec: release inputs, a forced contract, identity files.
pub struct RenderSettings {
    /// The release catalog.
    pub inputs: ReleaseInputs,
    /// `--contract`.
    pub contract: Option<Contract>,
    /// The device files for the identity Secret, loaded and free of errors.
    pub secrets: Option<(CredentialsFile, CaBundle)>,
}

impl RenderSettings {
    /// From the render flags.
    pub fn resolve(args: &RenderArgs, io: &mut Io<'_>) -> Result<RenderSettings, ExitCode> {
        let inputs = release_inputs(&args.release, io)?;
        let contract = args
            .contract
            .as_deref()
            .map(str::parse::<Contract>)
            .transpose()
            .map_err(|err| {
                io.err(&format!("error: --contract: {err}\n"));
                ExitCode::from(exit::USAGE)
            })?;
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
        Ok(RenderSettings {
            inputs,
            contract,
            secrets,
        })
    }

    /// The release of `spec`, resolved once.
    pub fn release(&self, spec: &ValidSpec) -> Result<ClusterRelease<'_>, String> {
        self.inputs
            .resolve(spec, self.contract)
            .map_err(|e| e.to_string())
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
                io.err(&output::findings_text(&findings, "credentials", None));
                io.err("error: fix the credentials file or CA bundle (see `snowctl credentials check`), or pass --no-secrets\n");
                return Err(ExitCode::from(exit::FINDINGS));
            }
            Ok((c, b))
        }
        (Err(e), _) | (_, Err(e)) => {
            io.err(&format!("error: {e}\n  hint: {}\n", e.hint()));
            Err(ExitCode::from(exit::USAGE))
        }
    }
}

/// The management cluster's kubeconfig and context; without one, says how to give it.
pub fn management(args: &ManagementArgs, io: &mut Io<'_>) -> Result<Management, ExitCode> {
    match &args.kubeconfig {
        Some(kubeconfig) => Ok(Management {
            kubeconfig: kubeconfig.clone(),
            context: args.context.clone(),
        }),
        None => {
            io.err("error: this command works on a management cluster: pass --kubeconfig FILE (or set KUBECONFIG)\n");
            Err(ExitCode::from(exit::USAGE))
        }
    }
}

/// Where the management cluster is.
pub struct Management {
    /// Its kubeconfig.
    pub kubeconfig: PathBuf,
    /// The context (default: the kubeconfig's current one).
    pub context: Option<String>,
}

impl Management {
    /// Connects (and says where, on stderr).
    pub async fn connect(
        &self,
        io: &mut Io<'_>,
    ) -> Result<snow_lifecycle::Management, snow_lifecycle::LifecycleError> {
        let mgmt = self.connect_quietly().await?;
        io.err(&format!("Management cluster: {}\n", mgmt.server()));
        Ok(mgmt)
    }

    /// Connects.
    pub async fn connect_quietly(
        &self,
    ) -> Result<snow_lifecycle::Management, snow_lifecycle::LifecycleError> {
        snow_lifecycle::Management::connect(&self.kubeconfig, self.context.as_deref()).await
    }
}

/// `--cni-manifest FILE`, read and parsed (exit 2 when unreadable or not a Cilium manifest).
pub fn cni_manifest(
    path: Option<&Path>,
    io: &mut Io<'_>,
) -> Result<Option<snow_lifecycle::CniManifest>, ExitCode> {
    let Some(path) = path else { return Ok(None) };
    let text = read_text(path, "the CNI manifest", io)?;
    snow_lifecycle::CniManifest::parse(&text)
        .map(Some)
        .map_err(|e| {
            io.err(&format!(
                "error: {}: {e}
",
                output::source_name(path)
            ));
            ExitCode::from(exit::USAGE)
        })
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

/// The images of a selection: `images` and the URIs of `images_file` (one a line, `#` comments)
/// when given, else the list of the release bundle for the Kubernetes versions and node OS
/// families (`snow_images::image_list`).
pub fn image_selection(
    release: &ReleaseArgs,
    kube_versions: &[String],
    os: &[crate::args::OsArg],
    images: &[String],
    images_file: Option<&Path>,
    io: &mut Io<'_>,
) -> Result<Vec<snow_images::ListedImage>, ExitCode> {
    use snow_images::{BundleData, OsFamily, Selection};
    if !images.is_empty() || images_file.is_some() {
        let list = match images_file {
            Some(path) => Some(read_text(path, "the image list", io)?),
            None => None,
        };
        return Ok(snow_images::ListedImage::from_user(images, list.as_deref()));
    }
    let fail = |io: &mut Io<'_>, e: &dyn std::fmt::Display| {
        io.err(&format!("error: {e}\n"));
        ExitCode::from(exit::USAGE)
    };
    let inputs = release_inputs(release, io)?;
    // The Bundles manifest holds sections the release catalog does not keep (the management
    // components' images): they are read from the file itself.
    let bundle = match &release.bundles {
        Some(path) => BundleData::from_yaml(&read_text(path, "the Bundles manifest", io)?),
        None => BundleData::from_inputs(&inputs),
    }
    .map_err(|e| fail(io, &e))?;
    let selection = Selection {
        kube_versions: kube_versions.to_vec(),
        os_families: os
            .iter()
            .map(|os| match os {
                crate::args::OsArg::Ubuntu => OsFamily::Ubuntu,
                crate::args::OsArg::Bottlerocket => OsFamily::Bottlerocket,
            })
            .collect(),
    };
    snow_images::image_list(&bundle, &inputs.distros, &selection).map_err(|e| fail(io, &e))
}

/// PEM CA certificates to trust for registries (`--ca-cert`), each checked to hold one.
pub fn registry_ca_certs(paths: &[PathBuf], io: &mut Io<'_>) -> Result<Vec<Vec<u8>>, ExitCode> {
    let mut pems = Vec::new();
    for path in paths {
        let pem = read_text(path, "the CA certificate", io)?;
        if !pem.contains("-----BEGIN CERTIFICATE-----") {
            io.err(&format!(
                "error: {} holds no PEM certificate\n",
                path.display()
            ));
            return Err(ExitCode::from(exit::USAGE));
        }
        pems.push(pem.into_bytes());
    }
    Ok(pems)
}

/// Registry credentials from the Docker config: `explicit`, else `$DOCKER_CONFIG/config.json`
/// or `~/.docker/config.json` when present; none otherwise.
pub fn registry_credentials(
    explicit: Option<&Path>,
    io: &mut Io<'_>,
) -> Result<snow_images::Credentials, ExitCode> {
    let path = explicit.map(Path::to_owned).or_else(|| {
        let dir = std::env::var_os("DOCKER_CONFIG")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")))?;
        let path = dir.join("config.json");
        path.exists().then_some(path)
    });
    let Some(path) = path else {
        return Ok(snow_images::Credentials::default());
    };
    let text = read_text(&path, "the Docker config", io)?;
    snow_images::Credentials::from_docker_config(&text).map_err(|e| {
        io.err(&format!("error: {}: {e}\n", path.display()));
        ExitCode::from(exit::USAGE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
