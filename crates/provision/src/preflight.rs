//! Preflight against the devices before anything is applied, from the two device files.

use crate::{Checks, DevicePaths, ProvisionError, step};
use snow_api::{ClusterSpec, Finding};
use snow_kube::Event;
use snow_validate::{DeviceFiles, DeviceProgress, FilesReport, PreflightOptions};
use std::time::Duration;

/// The device files with a request timeout; a missing one is a finding (`preflight.input`)
/// whose `field` names the [`DevicePaths`] field that is empty (`credentials` or `ca_bundle`).
pub fn device_files(
    paths: DevicePaths<'_>,
    timeout: Duration,
) -> Result<DeviceFiles<'_>, Box<Finding>> {
    let missing = |field: &str, file: &str| {
        Box::new(
            Finding::error(
                INPUT_CHECK,
                format!("checking the devices needs the {file}, and none was given"),
            )
            .field(field),
        )
    };
    Ok(DeviceFiles {
        credentials: (paths.credentials)
            .ok_or_else(|| missing("credentials", "device credentials file"))?,
        ca_bundle: (paths.ca_bundle).ok_or_else(|| missing("ca_bundle", "devices' CA bundle"))?,
        request_timeout: timeout,
    })
}

/// The check of a device file that is not given.
pub const INPUT_CHECK: &str = "preflight.input";

/// Preflight of `spec` against its devices, each request bounded by `timeout`; `progress` hears
/// each device as it finishes. `Err` is input that cannot be used at all (a file missing or
/// unreadable), as one finding that says what to do.
pub async fn run(
    spec: &ClusterSpec,
    paths: DevicePaths<'_>,
    timeout: Duration,
    skip_ip_check: bool,
    progress: &mut impl FnMut(&DeviceProgress),
) -> Result<FilesReport, Box<Finding>> {
    let files = device_files(paths, timeout)?;
    let options = PreflightOptions {
        skip_ip_check,
        ..PreflightOptions::default()
    };
    snow_validate::preflight_from_files(spec, files, &options, progress).await
}

/// A device's progress line: `device 10.0.0.1: ok (12 ms)`.
pub fn progress_line(p: &DeviceProgress) -> String {
    let state = match p.failed {
        0 => "ok".to_owned(),
        failed => format!("{failed} of {} calls failed", p.calls),
    };
    format!(
        "device {}: {state} ({} ms)",
        p.device,
        p.elapsed.as_millis()
    )
}

/// The checks a create or an upgrade makes first: error findings stop it before anything is
/// applied ([`ProvisionError::Preflight`]).
pub async fn checks(
    spec: &ClusterSpec,
    paths: DevicePaths<'_>,
    checks: Checks,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), ProvisionError> {
    let Checks::Run {
        skip_ip_check,
        timeout,
        device_lines,
    } = checks
    else {
        on_event(Event::Note("warning: validations skipped: the devices were not checked (AMIs, key pairs, capacity, reachability)".into()));
        return Ok(());
    };
    step(on_event, "Performing setup and validations");
    let mut progress = |p: &DeviceProgress| {
        if device_lines {
            on_event(Event::Note(progress_line(p)));
        }
    };
    let report = run(spec, paths, timeout, skip_ip_check, &mut progress)
        .await
        .map_err(ProvisionError::Input)?;
    if snow_api::has_errors(&report.findings) {
        return Err(ProvisionError::Preflight {
            findings: report.findings,
        });
    }
    step(on_event, "✅ Snow provider setup is valid");
    Ok(())
}
