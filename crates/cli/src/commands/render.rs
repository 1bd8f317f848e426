//! `snowctl render -f FILE` and `snowctl create cluster -f FILE --dry-run`.

use crate::{
    args::{CreateClusterArgs, CreateCommand, RenderArgs},
    exit,
    output::{self, Io},
};
use capi_render::{Contract, ReleaseInputs, RenderOptions, SecretInputs, upgrade};
use snow_api::release::{Bundles, Release};
use std::{path::Path, process::ExitCode};

/// Runs `snowctl create …`.
pub fn create(cmd: CreateCommand, io: &mut Io<'_>) -> ExitCode {
    match cmd {
        CreateCommand::Cluster(CreateClusterArgs {
            dry_run: true,
            render,
        }) => run(render, io),
        CreateCommand::Cluster(_) => {
            io.err(
                "error: applying to a management cluster is not in this build of snowctl yet\n  \
                 hint: `snowctl create cluster -f FILE --dry-run` prints the objects; apply them with \
                 `kubectl apply --server-side -f -`\n",
            );
            ExitCode::from(exit::USAGE)
        }
    }
}

/// Runs `snowctl render`.
pub fn run(args: RenderArgs, io: &mut Io<'_>) -> ExitCode {
    let usage = || ExitCode::from(exit::USAGE);
    let name = output::source_name(&args.file);
    let Some(text) = output::read_text(&args.file, "the cluster spec", io) else {
        return usage();
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
            return usage();
        }
    };
    let Some(spec) = report
        .spec
        .filter(|_| !snow_api::has_errors(&report.findings))
    else {
        io.err(&output::findings_text(&report.findings, &name, Some(&text)));
        io.err("error: the spec has errors and was not rendered\n");
        return ExitCode::from(exit::FINDINGS);
    };

    let inputs = match release_inputs(&args, io) {
        Some(inputs) => inputs,
        None => return usage(),
    };
    let contract = args.contract.as_deref().map(|c| c.parse::<Contract>());
    let contract = match contract.transpose() {
        Ok(c) => c,
        Err(err) => {
            io.err(&format!("error: --contract: {err}\n"));
            return usage();
        }
    };

    // The identity Secret needs both files; without them it is left out, and said so.
    let loaded = if args.no_secrets {
        None
    } else {
        match (&args.device_files.credentials, &args.device_files.ca_bundle) {
            (Some(c), Some(b)) => match load_secrets(c, b, io) {
                Ok(loaded) => Some(loaded),
                Err(code) => return code,
            },
            _ => {
                io.err("note: the CAPAS identity Secret is left out: set EKSA_AWS_CREDENTIALS_FILE and EKSA_AWS_CA_BUNDLES_FILE (or --credentials/--ca-bundle), or pass --no-secrets\n");
                None
            }
        }
    };
    let secrets = loaded
        .as_ref()
        .map(|(credentials, ca_bundle)| SecretInputs {
            credentials,
            ca_bundle,
        });
    let opts = RenderOptions {
        contract,
        secrets,
        names: None,
    };

    let result = match &args.existing {
        None => capi_render::render(&spec, &inputs, &opts).map_err(|e| e.to_string()),
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
            match upgrade::plan(&spec, &inputs, &opts, &existing) {
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

fn release_inputs(args: &RenderArgs, io: &mut Io<'_>) -> Option<ReleaseInputs> {
    let inputs = match &args.bundles {
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
    for path in &args.eksd_releases {
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
