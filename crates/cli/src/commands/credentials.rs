//! `snowctl credentials check|encode`.
//!
//! Both commands read the credentials INI and the CA bundle through `snow-credentials`. Nothing
//! here ever sees a key: the table and the findings are built from presence flags, and the
//! source lines shown next to findings come from the redacted view of the file.

use crate::args::{CredentialsCheckArgs, CredentialsCommand, CredentialsFilesArgs, OutputFormat};
use crate::exit;
use crate::output::{Io, findings_json, findings_text};
use snow_api::Finding;
use snow_credentials::{
    CaBundle, CheckReport, ClusterctlEnv, CredentialsFile, InputError, UnixTime, check,
    load_ca_bundle, load_credentials,
};
use std::io::Write;
use std::process::ExitCode;

/// Runs `snowctl credentials …` at the current time.
pub fn run(cmd: CredentialsCommand, verbose: u8, io: &mut Io<'_>) -> ExitCode {
    let (out, err, now) = (&mut *io.stdout, &mut *io.stderr, UnixTime::now());
    ExitCode::from(match cmd {
        CredentialsCommand::Check(args) => run_check(&args, verbose, out, err, now),
        CredentialsCommand::Encode(args) => run_encode(&args, verbose, out, err, now),
    })
}

/// Both files, parsed, with every finding (parse and cross-file) in order.
struct Loaded {
    credentials: CredentialsFile,
    bundle: CaBundle,
    report: CheckReport,
    findings: Vec<Finding>,
}

/// Loads both files; on an unreadable one, reports it and returns the exit code (2).
fn load(
    files: &CredentialsFilesArgs,
    format: OutputFormat,
    verbose: u8,
    out: &mut dyn Write,
    err: &mut dyn Write,
    now: UnixTime,
) -> Result<Loaded, u8> {
    let credentials = load_credentials(&files.credentials);
    let bundle = load_ca_bundle(&files.ca_bundle);
    let (credentials, bundle) = match (credentials, bundle) {
        (Ok(c), Ok(b)) => (c, b),
        (c, b) => {
            let mut errors: Vec<(InputError, &str)> = Vec::new();
            if let Err(e) = c {
                errors.push((e, "credentials"));
            }
            if let Err(e) = b {
                errors.push((e, "ca-bundle"));
            }
            for (e, _) in &errors {
                let _ = writeln!(err, "error: {e}\n  hint: {}", e.hint());
            }
            if format == OutputFormat::Json {
                let findings: Vec<Finding> = errors.iter().map(|(e, p)| e.to_finding(p)).collect();
                let _ = out.write_all(findings_json(&findings, serde_json::Map::new()).as_bytes());
            }
            return Err(exit::USAGE);
        }
    };
    let ((credentials, mut findings), (bundle, bundle_findings)) = (credentials, bundle);
    findings.extend(bundle_findings);
    let report = check(&credentials, &bundle, now);
    findings.extend(report.findings.iter().cloned());
    if verbose > 0 {
        let _ = err.write_all(snow_credentials::inputs_summary(&credentials, &bundle).as_bytes());
    }
    Ok(Loaded {
        credentials,
        bundle,
        report,
        findings,
    })
}

/// The findings of each file as text, each with its own (redacted) source lines.
fn findings_report(loaded: &Loaded) -> String {
    let c = &loaded.credentials;
    let b = &loaded.bundle;
    // Per file, in line order (findings without a line first: they concern the whole file).
    let of = |source: &str| -> Vec<Finding> {
        let mut findings: Vec<Finding> = loaded
            .findings
            .iter()
            .filter(|f| f.object.as_deref() == Some(source))
            .cloned()
            .collect();
        findings.sort_by_key(|f| f.line);
        findings
    };
    let mut text = findings_text(&of(c.source()), c.source(), Some(c.redacted_text()));
    text.push_str(&findings_text(
        &of(b.source()),
        b.source(),
        Some(b.display_text()),
    ));
    let others: Vec<Finding> = loaded
        .findings
        .iter()
        .filter(|f| {
            let o = f.object.as_deref();
            o != Some(c.source()) && o != Some(b.source())
        })
        .cloned()
        .collect();
    if !others.is_empty() {
        text.push_str(&findings_text(&others, "(other)", None));
    }
    text
}

fn run_check(
    args: &CredentialsCheckArgs,
    verbose: u8,
    out: &mut dyn Write,
    err: &mut dyn Write,
    now: UnixTime,
) -> u8 {
    let loaded = match load(&args.files, args.output, verbose, out, err, now) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let text = match args.output {
        OutputFormat::Json => {
            let mut extra = serde_json::Map::new();
            extra.insert(
                "credentials".into(),
                loaded.credentials.source().to_owned().into(),
            );
            extra.insert("ca_bundle".into(), loaded.bundle.source().to_owned().into());
            extra.insert(
                "devices".into(),
                serde_json::to_value(&loaded.report.devices).unwrap_or_default(),
            );
            extra.insert(
                "certificates".into(),
                serde_json::to_value(loaded.bundle.certificates()).unwrap_or_default(),
            );
            findings_json(&loaded.findings, extra)
        }
        OutputFormat::Text => {
            let mut text = String::new();
            if loaded.report.devices.is_empty() {
                text.push_str("no device profiles\n");
            } else {
                text.push_str(&loaded.report.device_table());
            }
            text.push('\n');
            text.push_str(&findings_report(&loaded));
            text
        }
    };
    let _ = out.write_all(text.as_bytes());
    if snow_api::has_errors(&loaded.findings) {
        exit::FINDINGS
    } else {
        exit::OK
    }
}

fn run_encode(
    args: &CredentialsFilesArgs,
    verbose: u8,
    out: &mut dyn Write,
    err: &mut dyn Write,
    now: UnixTime,
) -> u8 {
    let loaded = match load(args, OutputFormat::Text, verbose, out, err, now) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if !loaded.findings.is_empty() {
        let _ = err.write_all(findings_report(&loaded).as_bytes());
    }
    if snow_api::has_errors(&loaded.findings) {
        let _ = writeln!(
            err,
            "error: not encoding {} and {}: fix the errors above first (`snowctl credentials check` shows them with the device table)",
            loaded.credentials.source(),
            loaded.bundle.source()
        );
        return exit::FINDINGS;
    }
    let env = ClusterctlEnv::new(&loaded.credentials, &loaded.bundle);
    if verbose > 0 {
        let _ = writeln!(
            err,
            "encoded {} device profile(s) and {} certificate(s) for `clusterctl init --infrastructure snow`",
            loaded.credentials.devices().len(),
            loaded.bundle.certificates().len()
        );
    }
    if env.write_exports(out).is_err() {
        return exit::USAGE;
    }
    exit::OK
}
