//! `snowctl credentials check|encode|create-scoped-user`: `check` and `encode` read the two
//! files through `snow_credentials::Checked`, which never shows a key (its reports are built from
//! presence flags and the redacted view of the file); `create-scoped-user` is
//! `snow_validate::scoped_user` writing through `snow_credentials::CredentialsWriter`, and prints
//! only what was done per device, never a key.

use crate::args::{
    CreateScopedUserArgs, CredentialsCommand, CredentialsFilesArgs, DeviceTargets, OutputFormat,
};
use crate::{
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
    settings,
};
use snow_credentials::{Checked, ClusterctlEnv, CredentialsWriter, UnixTime};
use snow_validate::scoped_user::{self, ScopedUserOptions, UserName};
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
    let checked = load(files, format, verbose, io)?;
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
    files: &CredentialsFilesArgs,
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
    let user = UserName::parse(&args.user).map_err(|e| exit::usage(io, format!("--user: {e}")))?;
    let loaded = load_root_files(&args.targets, io)?;
    let input = args.targets.device_files.credentials.as_deref();
    if input.is_some_and(|input| snow_credentials::write::same_file(&args.output_file, input)) {
        return Err(exit::usage(
            io,
            format!(
                "--output-file {} is the root credentials file: write the scoped credentials to a new file",
                args.output_file.display()
            ),
        ));
    }
    let devices = match &args.targets.spec {
        Some(path) => snow_validate::Plan::from_spec(
            &exit::settled(io, settings::load_spec(path, environment))?.spec,
        )
        .devices(),
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

/// The root credentials file and CA bundle; their findings on stderr, an unusable one exit 2.
fn load_root_files(
    targets: &DeviceTargets,
    io: &mut Io<'_>,
) -> Result<snow_validate::LoadedFiles, ExitCode> {
    let paths = settings::device_paths(&targets.device_files);
    let files = snow_provision::preflight::device_files(paths, targets.timeout);
    let loaded = files.and_then(snow_validate::load_files).map_err(|f| {
        io.err(&output::diagnostic(
            &exit::with_hint(&f),
            "credentials",
            None,
        ));
        ExitCode::from(exit::USAGE)
    })?;
    exit::notices(
        io,
        settings::file_findings(&loaded.findings, "credentials", &targets.device_files).as_slice(),
    );
    Ok(loaded)
}
