//! `snowctl validate -f FILE|- [--offline] [--bundles FILE | --artifacts FILE | --release-manifest
//! URL] [-o text|json|yaml] [--skip-ip-check] [--timeout DURATION]`.
//!
//! Static validation always, and the spec's Kubernetes version against a release catalog:
//! unless `--offline`, the release `create cluster` would use, resolved as create resolves it
//! (`settings::validate`; the published release for that version unless `--bundles` or
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
    settings::{SettingsError, ValidateSettings},
};
use snow_api::Finding;
use snow_provision::{
    preflight,
    validate::{self, CatalogCheck, ValidateOptions, Validation},
};
use std::process::ExitCode;

/// Runs `snowctl validate`.
pub fn run(args: ValidateArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let resolved = match ValidateSettings::resolve(&args, environment) {
        // The spec or the device input cannot be used: one finding, in the report's form.
        Err(SettingsError::Diagnostic {
            finding,
            about,
            text,
        }) => return Err(input_failure(&args, io, &about, text.as_deref(), *finding)),
        resolved => exit::noted(io, resolved)?,
    };
    let ValidateSettings {
        name,
        text,
        report,
        online,
        catalog,
    } = resolved;
    let text = text.as_str();
    let options = ValidateOptions {
        catalog: catalog.as_ref().map(|(catalog, severity)| CatalogCheck {
            inputs: &catalog.inputs,
            name: &catalog.source,
            severity: *severity,
        }),
        online: online.as_ref().map(|o| o.online()),
    };
    let runtime = exit::runtime(io, false)?;
    let tty = environment.terminal();
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
            let files = online
                .as_ref()
                .map(|o| o.devices.names())
                .unwrap_or_default();
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
