//! `snowctl credentials check|encode`: both read the two files through
//! `snow_credentials::Checked`, which never shows a key (its reports are built from presence
//! flags and the redacted view of the file).

use crate::args::{CredentialsCommand, CredentialsFilesArgs, OutputFormat};
use crate::{
    exit::{self, Outcome},
    output::Io,
};
use snow_credentials::{Checked, ClusterctlEnv, UnixTime};
use std::process::ExitCode;

/// Runs `snowctl credentials …` at the current time.
pub fn run(cmd: CredentialsCommand, verbose: u8, io: &mut Io<'_>) -> Outcome {
    let (files, format) = match &cmd {
        CredentialsCommand::Check(args) => (&args.files, args.output),
        CredentialsCommand::Encode(files) => (files, OutputFormat::Text),
    };
    let checked = load(files, format, verbose, io)?;
    let errors = snow_api::has_errors(&checked.findings);
    if let CredentialsCommand::Check(_) = cmd {
        io.out(&match format {
            OutputFormat::Json => checked.to_json(),
            OutputFormat::Text => checked.to_text(),
        });
        return Ok(exit::for_findings(&checked.findings));
    }
    if !checked.findings.is_empty() {
        io.err(&checked.findings_text());
    }
    let (c, b) = (&checked.credentials, &checked.bundle);
    if errors {
        io.err(&format!("error: not encoding {} and {}: fix the errors above first (`snowctl credentials check` shows them with the device table)\n", c.source(), b.source()));
        return Err(ExitCode::from(exit::FINDINGS));
    }
    if verbose > 0 {
        let (devices, certificates) = (c.devices().len(), b.certificates().len());
        io.err(&format!("encoded {devices} device profile(s) and {certificates} certificate(s) for `clusterctl init --infrastructure snow`\n"));
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
                io.err(&snow_credentials::inputs_summary(
                    &checked.credentials,
                    &checked.bundle,
                ));
            }
            return Ok(checked);
        }
        Err(errors) => errors,
    };
    for (_, e) in &errors {
        io.err(&format!("error: {e}\n  hint: {}\n", e.hint()));
    }
    if format == OutputFormat::Json {
        let findings: Vec<_> = errors.iter().map(|(kind, e)| e.to_finding(kind)).collect();
        io.out(&snow_api::finding_text::json(
            &findings,
            serde_json::Map::new(),
        ));
    }
    Err(ExitCode::from(exit::USAGE))
}
