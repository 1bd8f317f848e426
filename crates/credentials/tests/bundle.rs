//! CA bundle parsing and the coverage/expiry check, on certificates generated at test time.

mod common;

use common::{Cert, Key, bundle, credentials, pem_block};
use snow_api::{Finding, Severity, has_errors};
use snow_credentials::{
    CaBundle, Coverage, CredentialsFile, KeyAlgorithm, UnixTime, check, has_check,
};

fn parse_bundle(text: &str) -> (CaBundle, Vec<Finding>) {
    CaBundle::parse("ca.pem", text.as_bytes().to_vec())
}

fn parse_creds(ips: &[&str]) -> CredentialsFile {
    let (file, findings) = CredentialsFile::parse("credentials.ini", credentials(ips).into_bytes());
    assert!(findings.is_empty(), "{findings:?}");
    file
}

/// Parse findings plus check findings, for one pair of files.
fn verdict(ips: &[&str], pem: &str) -> (Vec<Finding>, snow_credentials::CheckReport) {
    let creds = parse_creds(ips);
    let (ca, mut findings) = parse_bundle(pem);
    let report = check(&creds, &ca, UnixTime::now());
    findings.extend(report.findings.clone());
    (findings, report)
}

fn checks(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.check.as_str()).collect()
}

#[test]
fn rsa_ecdsa_and_ed25519_certificates_parse_and_cover_their_device() {
    for (key, alg) in [
        (Key::Rsa, KeyAlgorithm::Rsa),
        (Key::Ecdsa, KeyAlgorithm::Ecdsa),
        (Key::Ed25519, KeyAlgorithm::Ed25519),
    ] {
        let pem = Cert::device("192.168.1.10").key(key).pem();
        let (findings, report) = verdict(&["192.168.1.10"], &pem);
        assert!(findings.is_empty(), "{key:?}: {findings:?}");
        let (ca, _) = parse_bundle(&pem);
        let cert = &ca.certificates()[0];
        assert_eq!(cert.key_algorithm, alg);
        assert_eq!(cert.coverage, Coverage::IpSan);
        assert_eq!(cert.covers[0].to_string(), "192.168.1.10");
        assert!(report.devices[0].covered);
        assert_eq!(report.devices[0].certificate, Some(1));
    }
}

#[test]
fn ipv6_devices_are_covered_by_ipv6_sans() {
    let pem = Cert::device("fd00::10").pem();
    let (findings, report) = verdict(&["fd00::10"], &pem);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(report.devices[0].covered);
}

#[test]
fn cn_only_certificate_covers_with_a_warning() {
    let pem = Cert::cn_only("10.0.0.1").pem();
    let (findings, report) = verdict(&["10.0.0.1"], &pem);
    assert_eq!(checks(&findings), ["ca-bundle.cn-only"]);
    assert!(!has_errors(&findings));
    assert!(report.devices[0].covered);
}

#[test]
fn expired_certificate_is_an_error_with_its_position() {
    let pem = format!(
        "{}{}",
        Cert::device("10.0.0.1").pem(),
        Cert::device("10.0.0.2").valid_days(-400, -10).pem()
    );
    let (findings, report) = verdict(&["10.0.0.1", "10.0.0.2"], &pem);
    assert_eq!(checks(&findings), ["ca-bundle.expired"]);
    let f = &findings[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.object.as_deref(), Some("ca.pem"));
    assert!(f.line.unwrap() > 1);
    assert!(f.message.contains("10.0.0.2") && f.message.contains("expired on"));
    assert!(f.hint.is_some());
    assert!(!report.devices[1].covered);
    assert!(report.devices[1].expires.is_some());
}

#[test]
fn expiring_within_30_days_is_a_warning_and_not_yet_valid_is_an_error() {
    let (findings, _) = verdict(
        &["10.0.0.1"],
        &Cert::device("10.0.0.1").valid_days(-300, 10).pem(),
    );
    assert_eq!(checks(&findings), ["ca-bundle.expiring"]);
    assert_eq!(findings[0].severity, Severity::Warning);
    let (findings, _) = verdict(
        &["10.0.0.1"],
        &Cert::device("10.0.0.1").valid_days(5, 300).pem(),
    );
    assert_eq!(checks(&findings), ["ca-bundle.not-yet-valid"]);
}

#[test]
fn uncovered_device_and_unused_certificate() {
    let (findings, report) = verdict(
        &["10.0.0.1", "10.0.0.2"],
        &bundle(&["10.0.0.1", "10.0.0.9"]),
    );
    assert_eq!(
        checks(&findings),
        [
            "ca-bundle.unused-certificate",
            "ca-bundle.device-not-covered"
        ]
    );
    let uncovered = &findings[1];
    assert_eq!(uncovered.severity, Severity::Error);
    assert_eq!(uncovered.device.as_deref(), Some("10.0.0.2"));
    assert_eq!(uncovered.object.as_deref(), Some("credentials.ini"));
    assert_eq!(uncovered.line, Some(6));
    assert_eq!(findings[0].severity, Severity::Warning);
    assert!(!report.devices[1].covered);
    assert_eq!(report.devices[1].certificate, None);
}

#[test]
fn certificate_without_any_ip_covers_nothing() {
    let mut cert = Cert::cn_only("not-an-ip");
    cert.sans = vec!["device.example".into()];
    let (findings, _) = verdict(&["10.0.0.1"], &cert.pem());
    assert_eq!(
        checks(&findings),
        ["ca-bundle.no-ip", "ca-bundle.device-not-covered"]
    );
}

#[test]
fn negative_serial_is_reported_not_panicked() {
    let pem = Cert::device("10.0.0.1").negative_serial().pem();
    let (_, findings) = parse_bundle(&pem);
    let f = findings
        .iter()
        .find(|f| f.check == "ca-bundle.negative-serial")
        .expect("finding");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.line, Some(1));
}

#[test]
fn unknown_critical_extension_is_reported() {
    let pem = Cert::device("10.0.0.1").critical_unknown_extension().pem();
    let (_, findings) = parse_bundle(&pem);
    let f = findings
        .iter()
        .find(|f| f.check == "ca-bundle.unknown-critical-extension")
        .expect("finding");
    assert!(f.message.contains("1.3.6.1.4.1.55555.1"), "{}", f.message);
    assert_eq!(f.line, Some(1));
}

#[test]
fn junk_between_blocks_warns_and_junk_inside_errors_naming_the_block() {
    let one = Cert::device("10.0.0.1").pem();
    let two = Cert::device("10.0.0.2").pem();
    let text = format!("subject=CN = 10.0.0.1\nissuer=CN = 10.0.0.1\n{one}\nsome note\n{two}");
    let (ca, findings) = parse_bundle(&text);
    assert_eq!(ca.certificates().len(), 2);
    assert_eq!(
        checks(&findings),
        [
            "ca-bundle.text-outside-blocks",
            "ca-bundle.text-outside-blocks"
        ]
    );
    assert!(findings.iter().all(|f| f.severity == Severity::Warning));
    assert_eq!(findings[0].line, Some(1));
    assert!(findings[0].message.contains("lines 1–2"));

    let mut lines: Vec<String> = two.lines().map(str::to_owned).collect();
    lines[3] = format!("{}!!junk", &lines[3][..10]);
    let text = format!("{one}{}\n", lines.join("\n"));
    let (ca, findings) = parse_bundle(&text);
    assert_eq!(ca.certificates().len(), 1);
    assert_eq!(checks(&findings), ["ca-bundle.invalid-block"]);
    let begin_two = one.lines().count() + 1;
    assert!(
        findings[0].message.contains("block #2"),
        "{}",
        findings[0].message
    );
    assert_eq!(findings[0].line, Some(begin_two + 3));
    assert_eq!(findings[0].column, Some(11));
}

#[test]
fn a_block_without_end_is_an_error_and_the_next_block_still_parses() {
    let one = Cert::device("10.0.0.1").pem();
    let cut: String = one.lines().take(4).map(|l| format!("{l}\n")).collect();
    let text = format!("{cut}{}", Cert::device("10.0.0.2").pem());
    let (ca, findings) = parse_bundle(&text);
    assert_eq!(checks(&findings), ["ca-bundle.missing-end"]);
    assert_eq!(findings[0].line, Some(1));
    assert_eq!(ca.certificates().len(), 1);
    let (_, findings) = parse_bundle(&cut);
    assert!(has_check(&findings, "ca-bundle.missing-end"));
    assert!(has_check(&findings, "ca-bundle.no-certificate"));
}

#[test]
fn crlf_bom_and_indented_blocks_are_tolerated() {
    let pem = Cert::device("10.0.0.1").pem();
    let text = format!(
        "\u{feff}{}",
        pem.lines()
            .map(|l| format!("  {l}\r\n"))
            .collect::<String>()
    );
    let (findings, report) = verdict(&["10.0.0.1"], &text);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(report.devices[0].covered);
}

#[test]
fn private_key_and_other_blocks() {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let text = format!(
        "{}{}{}",
        Cert::device("10.0.0.1").pem(),
        key.serialize_pem(),
        pem_block("X509 CRL", b"\x30\x00")
    );
    let (ca, findings) = parse_bundle(&text);
    assert_eq!(ca.certificates().len(), 1);
    assert_eq!(
        checks(&findings),
        ["ca-bundle.private-key", "ca-bundle.not-a-certificate"]
    );
    // The private key's body never shows next to a finding.
    let secret_line = key.serialize_pem().lines().nth(1).unwrap().to_owned();
    assert!(!ca.display_text().contains(&secret_line));
}

#[test]
fn duplicate_certificate_warns() {
    let one = Cert::device("10.0.0.1").pem();
    let (_, findings) = parse_bundle(&format!("{one}{one}"));
    assert_eq!(checks(&findings), ["ca-bundle.duplicate-certificate"]);
}

#[test]
fn a_block_that_is_not_a_certificate_inside() {
    let text = pem_block("CERTIFICATE", b"definitely not DER");
    let (_, findings) = parse_bundle(&text);
    assert_eq!(
        checks(&findings),
        ["ca-bundle.invalid-certificate", "ca-bundle.no-certificate"]
    );
}

#[test]
fn certificates_der_feeds_a_root_store() {
    let (ca, _) = parse_bundle(&bundle(&["10.0.0.1", "10.0.0.2"]));
    assert_eq!(ca.certificates_der().len(), 2);
    assert_eq!(ca.covering("10.0.0.2".parse().unwrap()).count(), 1);
}
