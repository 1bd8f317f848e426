//! `snowctl validate -f FILE|- [--offline] [-o text|json] [--skip-ip-check] [--timeout S]`.
//!
//! Static validation always; then, unless `--offline`, preflight against every listed device
//! (credentials and CA bundle from `--credentials`/`--ca-bundle` or `EKSA_AWS_CREDENTIALS_FILE`/
//! `EKSA_AWS_CA_BUNDLES_FILE`). One report either way.

use crate::{
    args::{OptionalDeviceFiles, OutputFormat, ValidateArgs},
    exit,
    output::{self, Io},
};
use snow_api::{Finding, InputError, Severity};
use snow_validate::{ClientConfig, Plan, PreflightOptions, SnowDevice, Trust, preflight};
use std::{
    io::{IsTerminal, Read},
    path::PathBuf,
    process::ExitCode,
    time::Duration,
};

/// Runs `snowctl validate`.
pub fn run(args: ValidateArgs, io: &mut Io<'_>) -> ExitCode {
    let name = output::source_name(&args.file);
    let bytes = match read_input(&args.file) {
        Ok(bytes) => bytes,
        Err(err) => {
            let finding = Finding::error("input.unreadable", format!("cannot read {name}: {err}"))
                .object(&name)
                .hint("check the path and its permissions; use -f - to read standard input");
            return input_failure(&args, io, &name, None, finding);
        }
    };
    let text = match snow_api::decode(&bytes) {
        Ok(text) => text,
        Err(err) => return input_error(&args, io, &name, None, &err),
    };
    let report = match snow_api::check(text) {
        Ok(report) => report,
        Err(err) => return input_error(&args, io, &name, Some(text), &err),
    };
    let mut findings = report.findings.clone();
    findings.extend(release_version_warning(&report));
    let mut preflight_json = None;
    if !args.offline {
        if let (false, Some(spec)) = (snow_api::has_errors(&report.findings), &report.spec) {
            let files = match preflight_files(&args.device_files) {
                Ok(files) => files,
                Err(finding) => return input_failure(&args, io, &name, None, *finding),
            };
            match run_preflight(spec, &files, args.timeout, args.skip_ip_check, io) {
                Ok((more, summary)) => {
                    findings.extend(more);
                    preflight_json = Some(summary);
                }
                Err(finding) => return input_failure(&args, io, &name, None, *finding),
            }
        } else {
            findings.push(
                Finding::info(
                    "preflight.skipped",
                    "the devices were not checked because the spec has errors",
                )
                .hint("fix the errors above, then validate again"),
            );
        }
    }
    match args.output {
        OutputFormat::Json => {
            let mut extra = serde_json::Map::new();
            extra.insert(
                "defaults".into(),
                serde_json::to_value(&report.defaults).unwrap_or_default(),
            );
            if let Some(summary) = preflight_json {
                extra.insert("preflight".into(), summary);
            }
            io.out(&output::findings_json(&findings, extra));
        }
        OutputFormat::Text => {
            let mut text_out = output::findings_text(&findings, &name, Some(text));
            if !report.defaults.is_empty() {
                let mut defaults = String::from("Defaults applied:\n");
                for d in &report.defaults {
                    defaults.push_str(&format!("  {} {} = {}\n", d.object, d.field, d.value));
                }
                // The summary line stays last.
                let summary_at = text_out.trim_end().rfind('\n').map_or(0, |i| i + 1);
                text_out.insert_str(summary_at, &defaults);
            }
            io.out(&text_out);
        }
    }
    exit::for_findings(&findings)
}

/// The two files device checks read.
pub(crate) struct PreflightFiles {
    pub credentials: PathBuf,
    pub ca_bundle: PathBuf,
}

pub(crate) fn preflight_files(
    device_files: &OptionalDeviceFiles,
) -> Result<PreflightFiles, Box<Finding>> {
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
    Ok(PreflightFiles {
        credentials: device_files
            .credentials
            .clone()
            .ok_or_else(|| missing("--credentials", "EKSA_AWS_CREDENTIALS_FILE"))?,
        ca_bundle: device_files
            .ca_bundle
            .clone()
            .ok_or_else(|| missing("--ca-bundle", "EKSA_AWS_CA_BUNDLES_FILE"))?,
    })
}

/// Loads the two files and runs preflight; `Err` for input that cannot be used at all.
pub(crate) fn run_preflight(
    spec: &snow_api::ClusterSpec,
    files: &PreflightFiles,
    timeout_secs: u64,
    skip_ip_check: bool,
    io: &mut Io<'_>,
) -> Result<(Vec<Finding>, serde_json::Value), Box<Finding>> {
    let (credentials, mut findings) = snow_credentials::load_credentials(&files.credentials)
        .map_err(|e| Box::new(e.to_finding("credentials")))?;
    let (bundle, bundle_findings) = snow_credentials::load_ca_bundle(&files.ca_bundle)
        .map_err(|e| Box::new(e.to_finding("ca-bundle")))?;
    findings.extend(bundle_findings);
    let trust = Trust::from_bundle(&bundle).map_err(|e| {
        Box::new(
            Finding::error("ca-bundle.empty", e.to_string())
                .object(files.ca_bundle.display().to_string())
                .hint("put the devices' certificates (snowballEdge get-certificate) in the bundle"),
        )
    })?;
    let timeout = Duration::from_secs(timeout_secs);
    let config = ClientConfig {
        connect_timeout: timeout.min(Duration::from_secs(3)),
        request_timeout: timeout,
        ..ClientConfig::default()
    };
    let plan = Plan::from_spec(spec);
    let options = PreflightOptions {
        skip_ip_check,
        ..PreflightOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Box::new(Finding::error(
                "preflight.runtime",
                format!("cannot start the async runtime: {e}"),
            ))
        })?;
    // One progress line per device on a terminal; none when stderr is piped.
    let tty = std::io::stderr().is_terminal();
    let report = runtime.block_on(async {
        let (devices, missing) = SnowDevice::fleet(&credentials, &trust, config, plan.devices());
        preflight::run(&plan, &devices, &missing, &options, &mut |p| {
            if tty {
                let state = if p.failed == 0 {
                    "ok".to_owned()
                } else {
                    format!("{} of {} calls failed", p.failed, p.calls)
                };
                io.err(&format!(
                    "device {}: {} ({} ms)\n",
                    p.device,
                    state,
                    p.elapsed.as_millis()
                ));
            }
        })
        .await
    });
    // Credentials findings without errors (warnings) stay; errors stay too: they explain failures.
    findings.retain(|f| f.severity != Severity::Info);
    let summary = serde_json::json!({
        "devices": report.devices.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "elapsedMs": u64::try_from(report.elapsed.as_millis()).unwrap_or(u64::MAX),
    });
    findings.extend(report.findings);
    Ok((findings, summary))
}

fn read_input(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    // Far above any cluster spec; keeps a mistaken `-f /dev/zero` from eating memory.
    const LIMIT: u64 = 64 << 20;
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin().take(LIMIT).read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(path)?
            .take(LIMIT)
            .read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Reports input that could not be read as YAML: JSON on stdout, or a snippet on stderr.
fn input_error(
    args: &ValidateArgs,
    io: &mut Io<'_>,
    name: &str,
    text: Option<&str>,
    err: &InputError,
) -> ExitCode {
    let check = match err {
        InputError::NotText { .. } => "input.not-text",
        InputError::Yaml(snow_api::yaml::YamlError::Syntax { .. }) => "yaml.syntax",
        InputError::Yaml(_) => "yaml.budget",
    };
    let mut finding = Finding::error(check, err.to_string())
        .object(name)
        .hint(err.hint());
    if let Some(at) = err.location() {
        finding = finding.at(at);
    }
    input_failure(args, io, name, text, finding)
}

fn input_failure(
    args: &ValidateArgs,
    io: &mut Io<'_>,
    name: &str,
    text: Option<&str>,
    finding: Finding,
) -> ExitCode {
    match args.output {
        OutputFormat::Json => io.out(&output::findings_json(&[finding], serde_json::Map::new())),
        OutputFormat::Text => io.err(&output::diagnostic(&finding, name, text)),
    }
    ExitCode::from(exit::USAGE)
}

/// A warning when the Kubernetes version is valid but not in the embedded release catalog, so
/// the user learns before `render` or `create` that a `--bundles` file will be needed.
fn release_version_warning(report: &snow_api::Report) -> Vec<Finding> {
    let Some(spec) = &report.spec else {
        return Vec::new();
    };
    let field = "spec.kubernetesVersion";
    if report
        .findings
        .iter()
        .any(|f| f.field.as_deref() == Some(field))
    {
        return Vec::new();
    }
    let Some(version) = spec.cluster.spec.kubernetes_version.as_deref() else {
        return Vec::new();
    };
    let Ok(inputs) = capi_render::ReleaseInputs::embedded() else {
        return Vec::new();
    };
    if inputs.for_version(version).is_ok() {
        return Vec::new();
    }
    let available = inputs.bundles.kube_versions().join(", ");
    let finding = Finding::warning(
        "release.version",
        format!("Kubernetes {version} is not in snowctl's embedded release bundle ({available})"),
    )
    .object(format!("Cluster/{}", spec.name()))
    .field(field)
    .hint(
        "render and create will need --bundles with an EKS Anywhere bundle that has this version",
    );
    spec.locate(vec![finding])
}
