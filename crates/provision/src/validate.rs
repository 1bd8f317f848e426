//! `validate`'s one report: the spec's static findings, the catalog's (a Kubernetes version it
//! has no release for), and unless offline the environment's (the registry mirror's login) and
//! preflight's against the devices. Preflight runs only on a spec without error findings;
//! otherwise an info finding says the devices were not checked.

use crate::DevicePaths;
use snow_api::{DeviceIp, Finding, Report, release::ReleaseInputs};
use snow_credentials::{SecretString, registry};
use snow_validate::DeviceProgress;
use std::time::Duration;

/// What is checked besides the spec itself.
#[derive(Default)]
pub struct ValidateOptions<'a> {
    /// The release catalog the spec's Kubernetes version must be in; `None` skips that check.
    pub catalog: Option<&'a ReleaseInputs>,
    /// The environment and the devices; `None` is offline: the spec and the catalog only.
    pub online: Option<Online<'a>>,
}

/// The inputs of the checks beyond the spec file.
pub struct Online<'a> {
    /// The registry mirror's username as the environment gives it (`REGISTRY_USERNAME`, read
    /// by the caller).
    pub registry_username: Option<String>,
    /// Its password (`REGISTRY_PASSWORD`).
    pub registry_password: Option<SecretString>,
    /// The device files preflight reads.
    pub devices: DevicePaths<'a>,
    /// Each device request's timeout.
    pub timeout: Duration,
    /// Do not probe whether the control-plane endpoint IP is in use.
    pub skip_ip_check: bool,
}

/// The merged report.
#[derive(Debug, Clone)]
pub struct Validation {
    /// Static, catalog, environment, then preflight findings.
    pub findings: Vec<Finding>,
    /// What preflight checked, when it ran.
    pub preflight: Option<PreflightSummary>,
}

/// The devices preflight checked and how long it took.
#[derive(Debug, Clone)]
pub struct PreflightSummary {
    /// The devices checked, in plan order.
    pub devices: Vec<DeviceIp>,
    /// Wall time of the device checks.
    pub elapsed: Duration,
}

/// Merges every check's findings about `report`'s spec into one list. `Err` is input preflight
/// cannot use at all (a device file missing or unreadable), as one finding.
pub async fn validate(
    report: &Report,
    options: ValidateOptions<'_>,
    progress: &mut impl FnMut(&DeviceProgress),
) -> Result<Validation, Box<Finding>> {
    let mut findings = report.findings.clone();
    if let Some(catalog) = options.catalog {
        findings.extend(catalog.missing_version(report));
    }
    let Some(online) = options.online else {
        return Ok(Validation {
            findings,
            preflight: None,
        });
    };
    if let Some(spec) = &report.spec
        && let Err(unset) =
            registry::from_env(spec, online.registry_username, online.registry_password)
    {
        findings.extend(unset);
    }
    let mut preflight = None;
    match &report.spec {
        Some(spec) if !snow_api::has_errors(&report.findings) => {
            let checked = crate::preflight::run(
                spec,
                online.devices,
                online.timeout,
                online.skip_ip_check,
                progress,
            )
            .await?;
            findings.extend(checked.findings);
            preflight = Some(PreflightSummary {
                devices: checked.devices,
                elapsed: checked.elapsed,
            });
        }
        _ => findings.push(
            Finding::info(
                "preflight.skipped",
                "the devices were not checked because the spec has errors",
            )
            .hint("fix the errors above, then validate again"),
        ),
    }
    Ok(Validation {
        findings,
        preflight,
    })
}
