//! Preflight from the operator's two files, as `snowctl validate` and `create` run it: read the
//! credentials INI and the CA bundle, make a client per device of the spec (trusting the bundle
//! only), and run every check. The caller supplies the runtime and renders the progress.

use crate::{ClientConfig, Plan, PreflightOptions, SnowDevice, Trust, preflight};
use snow_api::{ClusterSpec, DeviceIp, Finding, Severity};
use std::{path::Path, time::Duration};

/// Where the device files are and how long each device request may take.
#[derive(Debug, Clone, Copy)]
pub struct DeviceFiles<'a> {
    /// The AWS credentials INI, one profile per device IP.
    pub credentials: &'a Path,
    /// The PEM bundle of the devices' certificates.
    pub ca_bundle: &'a Path,
    /// Each device request's timeout (the connect timeout is at most 3 s of it).
    pub request_timeout: Duration,
}

/// What a files-based preflight found.
#[derive(Debug, Clone)]
pub struct FilesReport {
    /// Findings about the two files (warnings and errors) first, then every check's.
    pub findings: Vec<Finding>,
    /// The devices checked, in plan order.
    pub devices: Vec<DeviceIp>,
    /// Wall time of the device checks.
    pub elapsed: Duration,
}

/// Loads the files and checks every device of `spec`. `Err` is input that cannot be used at all
/// (an unreadable file, a bundle without certificates), as one finding that says what to do.
pub async fn preflight_from_files(
    spec: &ClusterSpec,
    files: DeviceFiles<'_>,
    options: &PreflightOptions,
    progress: &mut impl FnMut(&preflight::DeviceProgress),
) -> Result<FilesReport, Box<Finding>> {
    let plan = Plan::from_spec(spec);
    let fleet = fleet_from_files(files, &plan.devices())?;
    let mut findings = fleet.findings;
    let (devices, missing) = (fleet.devices, fleet.without_credentials);
    let report = preflight::run(&plan, &devices, &missing, options, progress).await;
    findings.extend(report.findings);
    Ok(FilesReport {
        findings,
        devices: report.devices,
        elapsed: report.elapsed,
    })
}

/// The clients of the chosen devices, built from the two files.
#[derive(Debug)]
pub struct FilesFleet {
    /// One client per device that has a profile.
    pub devices: Vec<SnowDevice>,
    /// The chosen devices without a profile in the credentials file.
    pub without_credentials: Vec<DeviceIp>,
    /// The files' warnings and errors.
    pub findings: Vec<Finding>,
}

/// The two files read and checked: the credentials, the trust made from the bundle, the client
/// settings for the request timeout, and the files' warnings and errors.
#[derive(Debug)]
pub struct LoadedFiles {
    /// The credentials INI.
    pub credentials: snow_credentials::CredentialsFile,
    /// Trust in the bundle's certificates only.
    pub trust: Trust,
    /// The default client settings with the files' request timeout.
    pub config: ClientConfig,
    /// The files' warnings and errors (infos dropped).
    pub findings: Vec<Finding>,
}

impl LoadedFiles {
    /// `ips`, or every profile of the credentials file when `ips` is empty.
    pub fn chosen(&self, ips: &[DeviceIp]) -> Vec<DeviceIp> {
        if ips.is_empty() {
            self.credentials.devices().iter().map(|d| d.ip()).collect()
        } else {
            ips.to_vec()
        }
    }
}

/// Loads both files. `Err` is input that cannot be used at all (an unreadable file, a bundle
/// without certificates), as one finding that says what to do.
pub fn load_files(files: DeviceFiles<'_>) -> Result<LoadedFiles, Box<Finding>> {
    let (credentials, mut findings) = snow_credentials::load_credentials(files.credentials)
        .map_err(|e| Box::new(e.to_finding("credentials")))?;
    let (bundle, bundle_findings) = snow_credentials::load_ca_bundle(files.ca_bundle)
        .map_err(|e| Box::new(e.to_finding("ca-bundle")))?;
    findings.extend(bundle_findings);
    // The files' warnings and errors stay (errors explain the device failures); infos go.
    findings.retain(|f| f.severity != Severity::Info);
    let trust = Trust::from_bundle(&bundle).map_err(|e| {
        Box::new(
            Finding::error("ca-bundle.empty", e.to_string())
                .object(files.ca_bundle.display().to_string())
                .hint("put the devices' certificates (snowballEdge get-certificate) in the bundle"),
        )
    })?;
    let config = ClientConfig {
        connect_timeout: files.request_timeout.min(Duration::from_secs(3)),
        request_timeout: files.request_timeout,
        ..ClientConfig::default()
    };
    Ok(LoadedFiles {
        credentials,
        trust,
        config,
        findings,
    })
}

/// Loads the files and makes a client for each of `ips`, or for every profile of the
/// credentials file when `ips` is empty. `Err` is input that cannot be used at all (an
/// unreadable file, a bundle without certificates), as one finding that says what to do.
pub fn fleet_from_files(
    files: DeviceFiles<'_>,
    ips: &[DeviceIp],
) -> Result<FilesFleet, Box<Finding>> {
    let loaded = load_files(files)?;
    let chosen = loaded.chosen(ips);
    let (devices, without_credentials) =
        SnowDevice::fleet(&loaded.credentials, &loaded.trust, loaded.config, chosen);
    Ok(FilesFleet {
        devices,
        without_credentials,
        findings: loaded.findings,
    })
}
