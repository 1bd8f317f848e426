//! Preflight a Snow cluster against its devices: every check on every device at once, one
//! finding per problem, each tagged with its device.
//!
//! ```text
//! cargo run -p snowctl-examples --example preflight -- cluster.yaml credentials.ini ca-bundle.pem
//! cargo run -p snowctl-examples --example preflight            # a demo on in-memory devices
//! ```
//!
//! With arguments it talks to the real devices (EC2 on :8243, the Snowball Device API on :9092),
//! trusting only the CA bundle. Without, it runs on three in-memory devices, one of them locked
//! and one without the key pair, to show the report. Exits 1 when there is an error finding.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use snow_api::{DeviceIp, Finding};
use snow_test_devices::InMemoryDevice;
use snow_validate::{
    ClientConfig, Plan, PreflightOptions, SnowDevice, Trust, UnlockState, preflight,
};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run(&args)
}

/// The program, on its arguments (`tests/examples.rs` runs it against the stand-ins).
pub(crate) fn run(args: &[String]) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start tokio: {e}");
            return ExitCode::from(2);
        }
    };
    let findings = match args {
        [spec, credentials, bundle] => match runtime.block_on(real(
            Path::new(spec),
            Path::new(credentials),
            Path::new(bundle),
        )) {
            Ok(findings) => findings,
            Err(message) => {
                eprintln!("{message}");
                return ExitCode::from(2);
            }
        },
        [] => runtime.block_on(demo()),
        _ => {
            eprintln!("usage: preflight [cluster.yaml credentials.ini ca-bundle.pem]");
            return ExitCode::from(2);
        }
    };
    for finding in &findings {
        println!("{finding}");
    }
    if snow_api::has_errors(&findings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

async fn real(spec: &Path, credentials: &Path, bundle: &Path) -> Result<Vec<Finding>, String> {
    let text = std::fs::read_to_string(spec).map_err(|e| format!("{}: {e}", spec.display()))?;
    let report = snow_api::check(&text).map_err(|e| e.to_string())?;
    let spec = match &report.spec {
        Some(spec) if report.is_valid() => spec,
        _ => return Ok(report.findings),
    };
    let (credentials, _) =
        snow_credentials::load_credentials(credentials).map_err(|e| e.to_string())?;
    let (bundle, _) = snow_credentials::load_ca_bundle(bundle).map_err(|e| e.to_string())?;
    let trust = Trust::from_bundle(&bundle).map_err(|e| e.to_string())?;
    let plan = Plan::from_spec(spec);
    let (devices, missing) = SnowDevice::fleet(
        &credentials,
        &trust,
        ClientConfig::default(),
        plan.devices(),
    );
    let result = preflight::run(
        &plan,
        &devices,
        &missing,
        &PreflightOptions::default(),
        &mut |p| {
            eprintln!(
                "device {}: {} calls, {} failed, {} ms",
                p.device,
                p.calls,
                p.failed,
                p.elapsed.as_millis()
            );
        },
    )
    .await;
    Ok(result.findings)
}

async fn demo() -> Vec<Finding> {
    let yaml = include_str!("../crates/snow-validate/tests/data/cluster.yaml");
    let report = match snow_api::check(yaml) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("the demo spec does not parse: {e}");
            return Vec::new();
        }
    };
    let Some(spec) = &report.spec else {
        return report.findings;
    };
    let plan = Plan::from_spec(spec);
    let mut devices: Vec<InMemoryDevice> = plan
        .devices()
        .into_iter()
        .map(|ip: DeviceIp| {
            InMemoryDevice::new(ip)
                .with_image(
                    "ami-0eksd13300000001",
                    &[
                        ("eksa.aws.com/k8s-version", "1.33"),
                        ("eksa.aws.com/os-family", "ubuntu"),
                    ],
                )
                .with_image(
                    "ami-0eksd13300000002",
                    &[
                        ("eksa.aws.com/k8s-version", "1.33"),
                        ("eksa.aws.com/os-family", "bottlerocket"),
                    ],
                )
                .with_key_pair("edge-key")
        })
        .collect();
    if let Some(d) = devices.get_mut(1) {
        d.description.unlock_state = UnlockState::Locked;
    }
    if let Some(d) = devices.get_mut(2) {
        d.key_pairs.clear();
    }
    let options = PreflightOptions {
        imds: None,
        skip_ip_check: true,
        ..PreflightOptions::default()
    };
    preflight::run(&plan, &devices, &[], &options, &mut |_| {})
        .await
        .findings
}
