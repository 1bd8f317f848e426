//! `snowctl render -f FILE` and `snowctl create cluster -f FILE --dry-run`; the spec and render
//! inputs every cluster command reads.

use crate::{
    args::RenderArgs,
    exit,
    output::{self, Io},
};
use capi_render::{Contract, ReleaseInputs, RenderOptions, SecretInputs, upgrade};
use snow_api::release::{Bundles, Release};
use std::{path::Path, process::ExitCode};

/// Reads and checks a spec: its text and the spec, or the exit code after saying why not.
pub(crate) fn load_spec(
    file: &Path,
    io: &mut Io<'_>,
) -> Result<(String, snow_api::ClusterSpec), ExitCode> {
    let usage = || ExitCode::from(exit::USAGE);
    let name = output::source_name(file);
    let Some(text) = output::read_text(file, "the cluster spec", io) else {
        return Err(usage());
    };
    let report = match snow_api::check(&text) {
        Ok(report) => report,
        Err(err) => {
            let finding = snow_api::Finding::error("yaml.syntax", err.to_string()).hint(err.hint());
            let finding = match err.location() {
                Some(at) => finding.at(at),
                None => finding,
            };
            io.err(&output::diagnostic(&finding, &name, Some(&text)));
            return Err(usage());
        }
    };
    match report
        .spec
        .filter(|_| !snow_api::has_errors(&report.findings))
    {
        Some(spec) => Ok((text, spec)),
        None => {
            io.err(&output::findings_text(&report.findings, &name, Some(&text)));
            io.err("error: the spec has errors and was not rendered\n");
            Err(ExitCode::from(exit::FINDINGS))
        }
    }
}

/// What rendering needs besides the spec: release inputs, contract and identity files.
pub(crate) struct RenderInputs {
    pub inputs: ReleaseInputs,
    pub contract: Option<Contract>,
    pub secrets: Option<(
        snow_credentials::CredentialsFile,
        snow_credentials::CaBundle,
    )>,
}

impl RenderInputs {
    /// Reads them from the render flags, or says why not.
    pub(crate) fn load(args: &RenderArgs, io: &mut Io<'_>) -> Result<RenderInputs, ExitCode> {
        let usage = || ExitCode::from(exit::USAGE);
        let inputs =
            release_inputs(args.bundles.as_deref(), &args.eksd_releases, io).ok_or_else(usage)?;
        let contract = match args
            .contract
            .as_deref()
            .map(str::parse::<Contract>)
            .transpose()
        {
            Ok(c) => c,
            Err(err) => {
                io.err(&format!("error: --contract: {err}\n"));
                return Err(usage());
            }
        };
        // The identity Secret needs both files; without them it is left out, and said so.
        let secrets = if args.no_secrets {
            None
        } else {
            match (&args.device_files.credentials, &args.device_files.ca_bundle) {
                (Some(c), Some(b)) => Some(load_secrets(c, b, io)?),
                _ => {
                    io.err("note: the CAPAS identity Secret is left out: set EKSA_AWS_CREDENTIALS_FILE and EKSA_AWS_CA_BUNDLES_FILE (or --credentials/--ca-bundle), or pass --no-secrets\n");
                    None
                }
            }
        };
        Ok(RenderInputs {
            inputs,
            contract,
            secrets,
        })
    }

    /// The render options they make.
    pub(crate) fn options(&self) -> RenderOptions<'_> {
        RenderOptions {
            contract: self.contract,
            secrets: self
                .secrets
                .as_ref()
                .map(|(credentials, ca_bundle)| SecretInputs {
                    credentials,
                    ca_bundle,
                }),
            names: None,
        }
    }
}

/// Runs `snowctl render`.
pub fn run(args: RenderArgs, io: &mut Io<'_>) -> ExitCode {
    let usage = || ExitCode::from(exit::USAGE);
    let (_, spec) = match load_spec(&args.file, io) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let loaded = match RenderInputs::load(&args, io) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let inputs = &loaded.inputs;
    let opts = loaded.options();

    let result = match &args.existing {
        None => capi_render::render(&spec, inputs, &opts).map_err(|e| e.to_string()),
        Some(path) => {
            let Some(live) = output::read_text(path, "the existing objects", io) else {
                return usage();
            };
            let existing = match upgrade::Existing::from_yaml(&live) {
                Ok(e) => e,
                Err(err) => {
                    io.err(&format!("error: {}: {err}\n", output::source_name(path)));
                    return usage();
                }
            };
            match upgrade::plan(&spec, inputs, &opts, &existing) {
                Ok(plan) => {
                    if plan.changes.is_empty() {
                        io.err("upgrade: no template changes; no machine will roll\n");
                    }
                    for change in &plan.changes {
                        let replaces = change
                            .replaces
                            .as_deref()
                            .map(|r| format!(" (replaces {r})"))
                            .unwrap_or_default();
                        io.err(&format!(
                            "upgrade: {}{replaces}: {}\n",
                            change.object, change.reason
                        ));
                    }
                    Ok(plan.objects)
                }
                Err(e) => Err(e.to_string()),
            }
        }
    };
    match result {
        Ok(objects) => {
            io.out(&capi_render::to_yaml(&objects));
            ExitCode::SUCCESS
        }
        Err(err) => {
            io.err(&format!("error: {err}\n"));
            ExitCode::from(exit::FINDINGS)
        }
    }
}

/// The embedded catalog, or a Bundles manifest, plus EKS-D releases.
pub(crate) fn release_inputs(
    bundles: Option<&Path>,
    eksd_releases: &[std::path::PathBuf],
    io: &mut Io<'_>,
) -> Option<ReleaseInputs> {
    let inputs = match bundles {
        None => ReleaseInputs::embedded(),
        Some(path) => {
            let text = output::read_text(path, "the bundles manifest", io)?;
            Bundles::from_yaml(&text).and_then(ReleaseInputs::from_bundles)
        }
    };
    let mut inputs = match inputs {
        Ok(inputs) => inputs,
        Err(err) => {
            io.err(&format!("error: {err}\n"));
            return None;
        }
    };
    for path in eksd_releases {
        let text = output::read_text(path, "the EKS-D release", io)?;
        if let Err(err) = Release::from_yaml(&text).and_then(|r| inputs.add_release(&r)) {
            io.err(&format!("error: {}: {err}\n", output::source_name(path)));
            return None;
        }
    }
    Some(inputs)
}

fn load_secrets(
    credentials: &Path,
    ca_bundle: &Path,
    io: &mut Io<'_>,
) -> Result<
    (
        snow_credentials::CredentialsFile,
        snow_credentials::CaBundle,
    ),
    ExitCode,
> {
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
