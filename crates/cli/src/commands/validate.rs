//! `snowctl validate -f FILE|- [--offline] [--bundles FILE | --artifacts FILE | --release-manifest
//! URL] [-o text|json|yaml] [--skip-ip-check] [--timeout DURATION]`.
//!
//! Static validation always, and the spec's Kubernetes version against a release catalog:
//! unless `--offline`, the release `create cluster` would use, resolved by the same
//! `settings::catalog` (the published release for that version unless `--bundles` or
//! `--artifacts`; when no published release has it, the newest with a Snow section, so that
//! the finding names the versions it has), then preflight against every listed device
//! (credentials and CA bundle from `--credentials`/`--ca-bundle` or `EKSA_AWS_CREDENTIALS_FILE`/
//! `EKSA_AWS_CA_BUNDLES_FILE`). `--offline` checks the version against the embedded sample
//! catalog (a warning: it is not the release create uses), or the `--bundles`/`--artifacts`
//! given. One report either way, merged by `snow_provision::validate`.

use crate::{
    args::{OutputFormat, ValidateArgs},
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
    settings::{self, Catalog, ReleaseDefault},
};
use snow_api::{Finding, Severity};
use snow_provision::{
    preflight,
    validate::{self, CatalogCheck, Online, ValidateOptions, Validation},
};
use std::process::ExitCode;

/// Runs `snowctl validate`.
pub fn run(args: ValidateArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let name = output::source_name(&args.file);
    let bytes = match settings::read_bytes(&args.file) {
        Ok(bytes) => bytes,
        Err(err) => {
            let finding = Finding::error("input.unreadable", format!("cannot read {name}: {err}"))
                .object(&name)
                .hint("check the path and its permissions; use -f - to read standard input");
            return Err(input_failure(&args, io, &name, None, finding));
        }
    };
    let text = snow_api::decode(&bytes)
        .map_err(|err| input_failure(&args, io, &name, None, err.to_finding(&name)))?;
    let report = snow_api::check(text)
        .map_err(|err| input_failure(&args, io, &name, Some(text), err.to_finding(&name)))?;
    let online = (!args.offline).then(|| {
        let (registry_username, registry_password) = settings::registry_env(environment);
        Online {
            registry_username,
            registry_password,
            devices: settings::device_paths(&args.device_files),
            timeout: args.timeout,
            skip_ip_check: args.skip_ip_check,
        }
    });
    // Input missing for the devices is said before any release is fetched.
    if let Some(online) = &online {
        validate::device_input(&report, online)
            .map_err(|finding| input_failure(&args, io, &name, None, *finding))?;
    }
    let catalog = catalog(&args, &report, environment, io)?;
    let options = ValidateOptions {
        catalog: catalog.as_ref().map(|(catalog, severity)| CatalogCheck {
            inputs: &catalog.inputs,
            name: &catalog.source,
            severity: *severity,
        }),
        online,
    };
    let runtime = exit::runtime(io, false)?;
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let checked = runtime.block_on(validate::validate(&report, options, &mut |p| {
        if tty {
            io.progress(&format!("{}\n", preflight::progress_line(p)));
        }
    }));
    let Validation {
        findings,
        preflight,
    } = checked.map_err(|finding| input_failure(&args, io, &name, None, *finding))?;
    let findings = exit::with_hints(&findings);
    let preflight_json = preflight.map(|summary| {
        serde_json::json!({
            "devices": summary.devices.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "elapsedMs": u64::try_from(summary.elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    });
    match args.output {
        format @ (OutputFormat::Json | OutputFormat::Yaml) => {
            let mut extra = serde_json::Map::new();
            extra.insert(
                "defaults".into(),
                serde_json::to_value(&report.defaults).unwrap_or_default(),
            );
            if let Some(summary) = preflight_json {
                extra.insert("preflight".into(), summary);
            }
            let report = snow_api::finding_text::report(&findings, extra);
            io.out(&output::structured(format, &report).unwrap_or_default());
        }
        OutputFormat::Text => {
            // Findings about the device files point at those files, not at the spec's lines.
            let files: Vec<String> = [&args.device_files.credentials, &args.device_files.ca_bundle]
                .into_iter()
                .flatten()
                .map(|p| p.display().to_string())
                .collect();
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            let mut text_out = snow_api::finding_text::text(&findings, &name, Some(text), &files);
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
    Ok(exit::for_findings(&findings))
}

/// The catalog the spec's Kubernetes version is checked against, and the severity of a version
/// it lacks. Offline without `--bundles` or `--artifacts`: the embedded sample (a warning, and
/// nothing said on stderr, as the finding names it). Otherwise the release create would use
/// (an error), through `settings::catalog` as create resolves it; none for a spec without a
/// version when nothing names a release (there is nothing to look up).
fn catalog(
    args: &ValidateArgs,
    report: &snow_api::Report,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Result<Option<(Catalog, Severity)>, ExitCode> {
    let release = &args.release;
    let given = release.bundles.is_some() || release.artifacts.is_some();
    let version = (report.spec.as_ref()).and_then(|s| s.cluster.spec.kubernetes_version.as_deref());
    let default = match (args.offline, given) {
        (true, false) => {
            let sample = Catalog::embedded_sample().ok();
            return Ok(sample.map(|catalog| (catalog, Severity::Warning)));
        }
        (false, false) if version.is_none() => return Ok(None),
        (true, true) => ReleaseDefault::Sample,
        (false, _) => ReleaseDefault::PublishedOrNewest {
            kube_version: version,
            cache_dir: args.cache_dir.as_deref(),
            ca_certs: &args.ca_certs,
        },
    };
    let catalog = exit::noted(io, settings::catalog(release, default, environment))?;
    Ok(Some((catalog, Severity::Error)))
}

fn input_failure(
    args: &ValidateArgs,
    io: &mut Io<'_>,
    name: &str,
    text: Option<&str>,
    finding: Finding,
) -> ExitCode {
    let mut finding = exit::with_hint(&finding);
    // validate alone has --offline: the way on without the device files.
    if finding.check == snow_provision::preflight::INPUT_CHECK
        && let Some(hint) = &mut finding.hint
    {
        hint.push_str("; or run with --offline for the static checks only");
    }
    match args.output {
        format @ (OutputFormat::Json | OutputFormat::Yaml) => {
            let report = snow_api::finding_text::report(&[finding], serde_json::Map::new());
            io.out(&output::structured(format, &report).unwrap_or_default());
        }
        OutputFormat::Text => io.err(&output::diagnostic(&finding, name, text)),
    }
    ExitCode::from(exit::USAGE)
}
