//! `snowctl credentials check|encode|create-scoped-user`: `check` and `encode` read the two
//! files through `snow_credentials::Checked`, which never shows a key (its reports are built from
//! presence flags and the redacted view of the file); `create-scoped-user` is
//! `snow_validate::scoped_user` writing through `snow_credentials::CredentialsWriter`, and prints
//! only what was done per device, never a key.

use crate::args::{CreateScopedUserArgs, CredentialsCommand, OutputFormat};
use crate::{
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
    settings::credentials::{CredentialsFilesSettings, ScopedUserSettings},
};
use snow_credentials::{Checked, ClusterctlEnv, CredentialsWriter, UnixTime};
use snow_validate::scoped_user::{self, ScopedUserOptions};
use std::process::ExitCode;

/// Runs `snowctl credentials …` at the current time.
pub fn run(
    cmd: CredentialsCommand,
    verbose: u8,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let (files, format) = match &cmd {
        CredentialsCommand::Check(args) => (&args.files, args.output),
        CredentialsCommand::Encode(files) => (files, OutputFormat::Text),
        CredentialsCommand::CreateScopedUser(args) => {
            return create_scoped_user(args, environment, io);
        }
    };
    let files = exit::settled(io, CredentialsFilesSettings::resolve(files, environment))?;
    let checked = load(&files, format, verbose, io)?;
    let errors = snow_api::has_errors(&checked.findings);
    if let CredentialsCommand::Check(_) = cmd {
        io.out(
            &output::structured(format, &checked.to_json()).unwrap_or_else(|| checked.to_text()),
        );
        return Ok(exit::for_findings(&checked.findings));
    }
    if !checked.findings.is_empty() {
        io.err(&checked.findings_text());
    }
    let (c, b) = (&checked.credentials, &checked.bundle);
    if errors {
        exit::say(
            io,
            format!(
                "not encoding {} and {}: fix the errors above first (`snowctl credentials check` shows them with the device table)",
                c.source(),
                b.source()
            ),
            None,
        );
        return Err(ExitCode::from(exit::FAILURE));
    }
    if verbose > 0 {
        let (devices, certificates) = (c.devices().len(), b.certificates().len());
        io.progress(&format!("encoded {devices} device profile(s) and {certificates} certificate(s) for `clusterctl init --infrastructure snow`\n"));
    }
    ClusterctlEnv::new(c, b)
        .write_exports(&mut *io.stdout)
        .map(|()| ExitCode::SUCCESS)
        .map_err(|_| ExitCode::from(exit::USAGE))
}

/// Loads both files; an unreadable one is reported (with `--output json`, as findings) and is
/// exit 2.
fn load(
    files: &CredentialsFilesSettings,
    format: OutputFormat,
    verbose: u8,
    io: &mut Io<'_>,
) -> Result<Checked, ExitCode> {
    let errors = match Checked::load(&files.credentials, &files.ca_bundle, UnixTime::now()) {
        Ok(checked) => {
            if verbose > 0 {
                io.progress(&snow_credentials::inputs_summary(
                    &checked.credentials,
                    &checked.bundle,
                ));
            }
            return Ok(checked);
        }
        Err(errors) => errors,
    };
    for (_, e) in &errors {
        exit::say(io, e, Some(e.hint()));
    }
    if format != OutputFormat::Text {
        let findings: Vec<_> = errors.iter().map(|(kind, e)| e.to_finding(kind)).collect();
        let report = snow_api::finding_text::report(&findings, serde_json::Map::new());
        io.out(&output::structured(format, &report).unwrap_or_default());
    }
    Err(ExitCode::from(exit::USAGE))
}

/// `create-scoped-user`: exit 0 when every device has the user, its policy and a key in the
/// file; 1 when a device failed (the others are done); 2 when the input cannot be used.
fn create_scoped_user(
    args: &CreateScopedUserArgs,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let ScopedUserSettings {
        user,
        root: loaded,
        spec_devices,
    } = exit::noted(io, ScopedUserSettings::resolve(args, environment))?;
    let devices = match spec_devices {
        Some(devices) => devices,
        None => loaded.chosen(&args.targets.devices),
    };
    if devices.is_empty() {
        return Err(exit::usage(
            io,
            "no devices: the credentials file has no profile and neither --devices nor -f gives one",
        ));
    }
    let mut writer = CredentialsWriter::open(&args.output_file, args.force).map_err(|e| {
        let hint = "give --output-file a new file, or --force to replace this one";
        exit::usage(io, format!("{e}\n  hint: {hint}"))
    })?;
    let options = ScopedUserOptions {
        user,
        rotate: args.rotate,
        policy: if args.read_only {
            scoped_user::Policy::ReadOnly
        } else {
            scoped_user::Policy::Provider
        },
        config: snow_validate::ClientConfig {
            iam_port: args.iam_port,
            ..loaded.config
        },
    };
    let runtime = exit::runtime(io, false)?;
    let report = runtime.block_on(scoped_user::create_scoped_users(
        &loaded.credentials,
        &loaded.trust,
        &devices,
        &mut writer,
        &options,
    ));
    io.out(&report.to_string());
    let written = writer.devices().count();
    if written > 0 {
        io.out(&format!(
            "{}: {written} device profile(s) of user {}, mode 0600; use it as EKSA_AWS_CREDENTIALS_FILE\n",
            args.output_file.display(),
            report.user
        ));
    }
    Ok(ExitCode::from(if report.has_failures() {
        exit::FAILURE
    } else {
        exit::OK
    }))
}
