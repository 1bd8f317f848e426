//! Hostile or careless files get bounded reports: findings capped per check, the cause of an
//! unusable bundle first, over-long keys refused without being shown.

mod common;

use common::{Cert, credentials};
use snow_api::Finding;
use snow_credentials::{
    CaBundle, CredentialsFile, UnixTime, check, limits::MAX_FINDINGS_PER_CHECK, load_ca_bundle,
};

const IPS: [&str; 2] = ["192.168.1.10", "192.168.1.11"];

fn of_check<'f>(findings: &'f [Finding], check: &str) -> Vec<&'f Finding> {
    findings.iter().filter(|f| f.check == check).collect()
}

/// Asserts `findings` of `check` are capped: the first MAX shown, then "… and N more".
#[track_caller]
fn assert_capped(findings: &[Finding], check: &str, total: usize) {
    let found = of_check(findings, check);
    assert_eq!(found.len(), MAX_FINDINGS_PER_CHECK + 1);
    assert_eq!(
        found[MAX_FINDINGS_PER_CHECK].message,
        format!(
            "… and {} more `{check}` finding(s) not shown",
            total - MAX_FINDINGS_PER_CHECK
        )
    );
    let bytes: usize = findings.iter().map(|f| f.to_string().len()).sum();
    assert!(bytes < 100_000, "{bytes} bytes of findings");
}

#[test]
fn thousands_of_duplicate_certificates_give_a_capped_report() {
    let one = Cert::device(IPS[0]).pem();
    let (bundle, findings) = CaBundle::parse("ca.pem", one.repeat(5_600).into_bytes());
    // The first MAX_CERTIFICATES are read (all but one are repeats); then one error, and the
    // rest is not read.
    assert_capped(
        &findings,
        "ca-bundle.duplicate-certificate",
        snow_credentials::limits::MAX_CERTIFICATES - 1,
    );
    let refused = of_check(&findings, "ca-bundle.too-many-certificates");
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert!(refused[0].is_error());
    assert_eq!(
        bundle.certificates().len(),
        snow_credentials::limits::MAX_CERTIFICATES
    );
}

#[test]
fn a_hundred_thousand_unclosed_blocks_give_a_capped_report() {
    let text = "-----BEGIN CERTIFICATE-----\n".repeat(100_000);
    let (_, findings) = CaBundle::parse("ca.pem", text.into_bytes());
    assert_capped(&findings, "ca-bundle.missing-end", 100_000);
}

/// The single coverage finding of an unusable bundle: it starts with the bundle and its cause.
fn coverage_finding(bundle: &CaBundle) -> Finding {
    let (creds, _) = CredentialsFile::parse("credentials.ini", credentials(&IPS).into_bytes());
    let report = check(&creds, bundle, UnixTime::now());
    let found = of_check(&report.findings, "ca-bundle.device-not-covered");
    assert_eq!(found.len(), 1, "{:#?}", report.findings);
    assert!(report.devices.iter().all(|d| !d.covered));
    found[0].clone()
}

#[test]
fn an_unusable_bundle_says_why_before_it_says_no_device_is_covered() {
    let private_key = "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n";
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "garbage",
            b"this is not PEM at all\n".repeat(1_000),
            "no PEM block",
        ),
        ("NUL", b"\0\0\0\0 binary".to_vec(), "binary data"),
        (
            "private key only",
            private_key.as_bytes().to_vec(),
            "private key",
        ),
    ];
    for (case, bytes, cause) in cases {
        let (bundle, _) = CaBundle::parse("ca.pem", bytes);
        let finding = coverage_finding(&bundle);
        let message = &finding.message;
        assert!(message.starts_with("ca.pem: "), "{case}: {message}");
        let cause_at = message
            .find(cause)
            .unwrap_or_else(|| panic!("{case}: {message}"));
        let covers_at = message.find("no certificate covers").unwrap();
        assert!(cause_at < covers_at, "{case}: {message}");
        assert!(message.contains(&IPS.join(", ")), "{message}");
    }

    // 12 MB: over the size bound, never read; the size is the cause.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ca.pem");
    std::fs::write(&path, vec![b'A'; 12 << 20]).unwrap();
    let (bundle, _) = load_ca_bundle(&path).unwrap();
    let message = coverage_finding(&bundle).message;
    let covers_at = message.find("no certificate covers").unwrap();
    assert!(
        message.find("larger than").is_some_and(|at| at < covers_at),
        "{message}"
    );
}

#[test]
fn an_over_long_secret_key_is_a_finding_that_never_shows_it() {
    let long_secret = "k".repeat(900 * 1024);
    let long_id = "AKIA".repeat(10);
    let text = credentials(&IPS[..1])
        .replace(&common::secret_key(0), &long_secret)
        .replace(&common::access_key(0), &long_id);
    let (_, findings) = CredentialsFile::parse("credentials.ini", text.into_bytes());
    let too_long = of_check(&findings, "credentials.key-too-long");
    assert_eq!(too_long.len(), 2, "{findings:#?}");
    assert!(
        too_long[0]
            .message
            .contains("is 40 characters long; a Snow device's has 20")
    );
    assert!(
        too_long[1]
            .message
            .contains(&format!("is {} characters long", 900 * 1024))
    );
    let shown = format!("{findings:?}");
    assert!(
        !shown.contains("kkkk") && !shown.contains(&long_id),
        "a key is shown"
    );
    assert!(shown.len() < 10_000);
}
