//! `validate`'s merge: the catalog's finding, preflight skipped for a spec with errors, the
//! environment's, and input preflight cannot use.

use snow_api::{Finding, Severity, release::ReleaseInputs};
use snow_provision::{
    DevicePaths,
    validate::{CatalogCheck, Online, ValidateOptions, Validation, device_input, validate},
};
use std::time::Duration;

const SPEC: &str = include_str!("../../snow-api/tests/specs/valid-full.yaml");

fn report(text: &str) -> snow_api::Report {
    snow_api::check(text).unwrap()
}

fn online() -> Online<'static> {
    Online {
        registry_username: None,
        registry_password: None,
        devices: DevicePaths::default(),
        timeout: Duration::from_secs(1),
        skip_ip_check: true,
    }
}

async fn run(
    report: &snow_api::Report,
    options: ValidateOptions<'_>,
) -> Result<Validation, Box<Finding>> {
    validate(report, options, &mut |_| {}).await
}

fn checks(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.check.as_str()).collect()
}

/// The unset login's findings (one per variable), on the `authenticate` field.
fn login_findings(findings: &[Finding]) -> usize {
    let field = Some("spec.registryMirrorConfiguration.authenticate");
    findings
        .iter()
        .filter(|f| f.field.as_deref() == field)
        .count()
}

#[tokio::test]
async fn offline_the_catalog_adds_a_version_it_lacks() {
    let catalog = ReleaseInputs::embedded().unwrap();
    let old = report(&SPEC.replace("kubernetesVersion: 1.33", "kubernetesVersion: 1.28"));
    let check = |severity| CatalogCheck {
        inputs: &catalog,
        name: ReleaseInputs::EMBEDDED_NAME,
        severity,
    };
    let with = ValidateOptions {
        catalog: Some(check(Severity::Warning)),
        online: None,
    };
    let v = run(&old, with).await.unwrap();
    assert_eq!(checks(&v.findings), ["release.version"]);
    assert_eq!(v.findings[0].severity, Severity::Warning);
    assert_eq!(
        v.findings[0].message,
        "Kubernetes 1.28 is not in snowctl's embedded release bundle (1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)"
    );
    assert!(v.preflight.is_none());
    // Against the release a create would use, the caller's severity: an error.
    let with = ValidateOptions {
        catalog: Some(check(Severity::Error)),
        online: None,
    };
    let v = run(&old, with).await.unwrap();
    assert_eq!(v.findings[0].severity, Severity::Error);
    assert!(snow_api::has_errors(&v.findings));
    // A version the catalog has: nothing.
    let with = ValidateOptions {
        catalog: Some(check(Severity::Error)),
        online: None,
    };
    assert!(run(&report(SPEC), with).await.unwrap().findings.is_empty());

    let without = run(&old, ValidateOptions::default());
    assert!(without.await.unwrap().findings.is_empty());
    let current = report(SPEC);
    let v = run(&current, ValidateOptions::default()).await.unwrap();
    assert!(v.findings.is_empty());
}

#[tokio::test]
async fn a_spec_with_errors_is_not_checked_on_the_devices() {
    let bad = report(&SPEC.replace("host: 192.168.1.100", "host: nope"));
    assert!(snow_api::has_errors(&bad.findings));
    let options = ValidateOptions {
        catalog: None,
        online: Some(online()),
    };
    // No device files: preflight would be an Err had it run.
    let v = run(&bad, options).await.unwrap();
    assert_eq!(v.findings.last().unwrap().check, "preflight.skipped");
    assert_eq!(v.findings.len(), bad.findings.len() + 1);
    assert!(v.preflight.is_none());
}

#[tokio::test]
async fn online_a_mirror_login_unset_is_a_finding_and_missing_device_files_are_input() {
    let mirror = SPEC.replace(
        "  kubernetesVersion: 1.33\n",
        "  kubernetesVersion: 1.33\n  registryMirrorConfiguration:\n    endpoint: 192.168.1.50\n    port: \"443\"\n    authenticate: true\n",
    );
    let with_mirror = report(&mirror);
    assert!(
        !snow_api::has_errors(&with_mirror.findings),
        "{:?}",
        with_mirror.findings
    );
    // The login's findings come before preflight, which needs device files.
    let options = ValidateOptions {
        catalog: None,
        online: Some(online()),
    };
    // The same input refused before anything else is read: validate's own finding.
    let early = device_input(&with_mirror, &online()).unwrap_err();
    let err = run(&with_mirror, options).await.unwrap_err();
    assert_eq!(err.check, "preflight.input");
    assert_eq!(early, err);
    // Data, not the CLI's words: the DevicePaths field that is empty, and no flag in a hint.
    assert_eq!(err.field.as_deref(), Some("credentials"));
    assert!(err.hint.is_none(), "{:?}", err.hint);

    let bad = report(&mirror.replace("host: 192.168.1.100", "host: nope"));
    let options = ValidateOptions {
        catalog: None,
        online: Some(online()),
    };
    // A spec with errors is not checked on the devices: no device file is needed.
    assert!(device_input(&bad, &online()).is_ok());
    let v = run(&bad, options).await.unwrap();
    assert_eq!(login_findings(&v.findings), 2, "{:?}", v.findings);
    // Offline, the environment is not read.
    let offline = run(&bad, ValidateOptions::default());
    assert_eq!(login_findings(&offline.await.unwrap().findings), 0);
}
