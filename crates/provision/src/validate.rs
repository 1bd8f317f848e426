//! `validate`'s one report: the spec's static findings, the catalog's (a Kubernetes version it
//! has no release for), and unless offline the environment's (the registry mirror's login) and
//! preflight's against the devices. Preflight runs only on a spec without error findings;
//! otherwise an info finding says the devices were not checked.

use crate::DevicePaths;
use snow_api::{DeviceIp, Finding, Report, Severity, release::ReleaseInputs};
use snow_credentials::{SecretString, registry};
use snow_validate::DeviceProgress;
use std::time::Duration;

/// What is checked besides the spec itself.
#[derive(Default)]
pub struct ValidateOptions<'a> {
    /// The release catalog the spec's Kubernetes version must be in; `None` skips that check.
    pub catalog: Option<CatalogCheck<'a>>,
    /// The environment and the devices; `None` is offline: the spec and the catalog only.
    pub online: Option<Online<'a>>,
}

/// The release catalog a spec's Kubernetes version is checked against
/// ([`ReleaseInputs::missing_version`]).
#[derive(Debug, Clone, Copy)]
pub struct CatalogCheck<'a> {
    /// Its versions.
    pub inputs: &'a ReleaseInputs,
    /// What it is, as the finding names it: the release (`EKS Anywhere v0.29.1`), a file, or
    /// [`ReleaseInputs::EMBEDDED_NAME`].
    pub name: &'a str,
    /// The finding's severity for a version it lacks: an error when it is the release a create
    /// would use, a warning when it is not (the embedded sample).
    pub severity: Severity,
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
        let missing = (catalog.inputs).missing_version(report, catalog.name, catalog.severity);
        findings.extend(missing);
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
    match checked_on_devices(report) {
        Some(spec) => {
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
        None => findings.push(
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

/// The spec preflight checks: one without error findings.
fn checked_on_devices(report: &Report) -> Option<&snow_api::ClusterSpec> {
    (report.spec.as_ref()).filter(|_| !snow_api::has_errors(&report.findings))
}

/// What [`validate`] would refuse as input before it reads anything else: with `online`, a
/// device file preflight needs and is not given, when preflight will run (a spec without error
/// findings). For a caller that fetches a release first, so that input missing is said before
/// any network.
pub fn device_input(report: &Report, online: &Online<'_>) -> Result<(), Box<Finding>> {
    match checked_on_devices(report) {
        Some(_) => crate::preflight::device_files(online.devices, online.timeout).map(|_| ()),
        None => Ok(()),
    }
}
