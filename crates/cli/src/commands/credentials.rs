//! `snowctl credentials check|encode`.
//!
//! Both commands read the credentials INI and the CA bundle through `snow-credentials`. Nothing
//! here ever sees a key: the table and the findings are built from presence flags, and the
//! source lines shown next to findings come from the redacted view of the file.

use crate::args::{CredentialsCheckArgs, CredentialsCommand, CredentialsFilesArgs, OutputFormat};
use crate::exit;
use crate::output::{findings_json, findings_text};
use snow_api::Finding;
use snow_credentials::{
    CaBundle, CheckReport, ClusterctlEnv, CredentialsFile, DeviceStatus, InputError, UnixTime,
    check, format_utc, load_ca_bundle, load_credentials,
};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::process::ExitCode;

/// Runs `snowctl credentials …` on the process's stdout and stderr, at the current time.
pub fn run(cmd: CredentialsCommand, verbose: u8) -> ExitCode {
    let stdout = io::stdout();
    let stderr = io::stderr();
    let code = run_with(
        cmd,
        verbose,
        &mut stdout.lock(),
        &mut stderr.lock(),
        UnixTime::now(),
    );
    ExitCode::from(code)
}

/// Runs `snowctl credentials …` with the given writers and clock; returns the exit code.
pub fn run_with(
    cmd: CredentialsCommand,
    verbose: u8,
    out: &mut dyn Write,
    err: &mut dyn Write,
    now: UnixTime,
) -> u8 {
    match cmd {
        CredentialsCommand::Check(args) => run_check(&args, verbose, out, err, now),
        CredentialsCommand::Encode(args) => run_encode(&args, verbose, out, err, now),
    }
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
        let _ = write_verbose(err, &credentials, &bundle);
    }
    Ok(Loaded {
        credentials,
        bundle,
        report,
        findings,
    })
}

fn write_verbose(err: &mut dyn Write, c: &CredentialsFile, b: &CaBundle) -> io::Result<()> {
    let ips: Vec<String> = c.devices().iter().map(|d| d.ip().to_string()).collect();
    writeln!(
        err,
        "credentials: {} ({} bytes): {} device profile(s): {}",
        c.source(),
        c.len(),
        ips.len(),
        ips.join(", ")
    )?;
    writeln!(
        err,
        "CA bundle: {} ({} bytes): {} certificate(s)",
        b.source(),
        b.content().len(),
        b.certificates().len()
    )?;
    for cert in b.certificates() {
        let covers: Vec<String> = cert.covers.iter().map(ToString::to_string).collect();
        writeln!(
            err,
            "  block #{} (line {}): {}; {:?} key; serial {}; valid {} to {}; covers [{}] ({:?})",
            cert.block,
            cert.line,
            cert.subject,
            cert.key_algorithm,
            cert.serial,
            format_utc(cert.not_before),
            format_utc(cert.not_after),
            covers.join(", "),
            cert.coverage
        )?;
    }
    Ok(())
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

fn keys_cell(d: &DeviceStatus) -> &'static str {
    match (d.access_key_id, d.secret_access_key) {
        (true, true) => "ok",
        (false, true) => "no access key",
        (true, false) => "no secret key",
        (false, false) => "no keys",
    }
}

fn device_table(devices: &[DeviceStatus]) -> String {
    let header = [
        "DEVICE",
        "KEYS",
        "REGION",
        "CERTIFICATE",
        "EXPIRES (UTC)",
        "COVERED",
    ];
    let mut rows: Vec<[String; 6]> = vec![header.map(str::to_owned)];
    for d in devices {
        rows.push([
            d.device.to_string(),
            keys_cell(d).to_owned(),
            d.region.clone().unwrap_or_else(|| "-".into()),
            match (d.certificate, d.certificate_line) {
                (Some(block), Some(line)) => format!("#{block} (line {line})"),
                _ => "none".into(),
            },
            d.expires.clone().unwrap_or_else(|| "-".into()),
            match (d.covered, d.certificate) {
                (true, _) => "yes".into(),
                (false, Some(_)) => "no (not valid now)".into(),
                (false, None) => "no".into(),
            },
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
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
            let certs: Vec<serde_json::Value> = loaded
                .bundle
                .certificates()
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "block": c.block,
                        "line": c.line,
                        "subject": c.subject,
                        "serial": c.serial,
                        "key_algorithm": c.key_algorithm,
                        "not_before": format_utc(c.not_before),
                        "not_after": format_utc(c.not_after),
                        "coverage": c.coverage,
                        "covers": c.covers,
                    })
                })
                .collect();
            extra.insert("certificates".into(), certs.into());
            findings_json(&loaded.findings, extra)
        }
        OutputFormat::Text => {
            let mut text = String::new();
            if loaded.report.devices.is_empty() {
                text.push_str("no device profiles\n");
            } else {
                text.push_str(&device_table(&loaded.report.devices));
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
