//! The INI and PEM parsers never panic, whatever the bytes; findings never carry the keys.

mod common;

use proptest::prelude::*;
use snow_credentials::{CaBundle, CredentialsFile, UnixTime, check};

/// Lines that look like a credentials file, mixed with noise.
fn ini_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[1.2.3.4]".to_owned()),
        Just("[fe80::1]".to_owned()),
        Just("[1.2.3.4".to_owned()),
        Just("[default]".to_owned()),
        Just("[]".to_owned()),
        Just(" [ 1.2.3.4 ] # x".to_owned()),
        Just(format!("aws_access_key_id = {}", common::ACCESS_KEY)),
        Just(format!("aws_secret_access_key = {}", common::SECRET_KEY)),
        Just("aws_secret_access_key =   ".to_owned()),
        Just("region = snow".to_owned()),
        Just("region = ".to_owned()),
        Just(common::SECRET_KEY.to_owned()),
        Just("=".to_owned()),
        Just("# comment".to_owned()),
        Just("\u{feff}".to_owned()),
        Just("\r".to_owned()),
        "\\PC{0,40}",
        "[\\[\\]=#; a-z0-9.:\u{e9}\u{1F600}]{0,20}",
    ]
}

fn pem_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-----BEGIN CERTIFICATE-----".to_owned()),
        Just("-----END CERTIFICATE-----".to_owned()),
        Just("-----BEGIN PRIVATE KEY-----".to_owned()),
        Just("-----END PRIVATE KEY-----".to_owned()),
        Just("-----BEGIN ".to_owned()),
        Just("-----END -----".to_owned()),
        Just("MIIBszCCAVmgAwIBAgIUV".to_owned()),
        Just("====".to_owned()),
        "[A-Za-z0-9+/=]{0,64}",
        "\\PC{0,30}",
    ]
}

fn assert_no_secret(findings: &[snow_api::Finding]) {
    use base64::Engine as _;
    for f in findings {
        let shown = format!("{f} {f:?}");
        for key in [common::ACCESS_KEY, common::SECRET_KEY] {
            let encoded = base64::engine::general_purpose::STANDARD.encode(key);
            assert!(!shown.contains(key) && !shown.contains(&encoded), "{shown}");
        }
    }
}

/// The two fuzz targets of this crate over a bounded generated corpus: stable Rust, every CI run.
#[test]
fn the_fuzz_targets_return_on_a_generated_corpus() {
    use snow_credentials::fuzz::{ca_bundle, credentials_ini};
    let ini = common::credentials(&["10.0.0.1", "fe80::1"])
        + &format!(
            "[10.0.0.2]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            common::ACCESS_KEY,
            common::SECRET_KEY
        );
    let pem = common::bundle(&["10.0.0.1", "10.0.0.2"]);
    let seeds: [&[u8]; 2] = [ini.as_bytes(), pem.as_bytes()];
    for input in snow_api::fuzz::mutations(&seeds, 1_000, 0x5eed_0015) {
        assert_no_secret(&credentials_ini(&input));
        ca_bundle(&input);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ini_parser_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let (file, findings) = CredentialsFile::parse("c", bytes);
        let _ = file.redacted_text();
        assert_no_secret(&findings);
    }

    #[test]
    fn ini_parser_never_panics_on_ini_like_text(lines in proptest::collection::vec(ini_line(), 0..30), crlf in any::<bool>()) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        let (file, findings) = CredentialsFile::parse("c", text.into_bytes());
        assert_no_secret(&findings);
        prop_assert!(!file.redacted_text().contains(common::SECRET_KEY));
        prop_assert!(!file.redacted_text().contains(common::ACCESS_KEY));
        for f in &findings {
            prop_assert!(f.line.is_some(), "{:?}", f);
        }
    }

    #[test]
    fn pem_parser_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        let (bundle, _) = CaBundle::parse("ca", bytes);
        let (creds, _) = CredentialsFile::parse("c", b"[1.2.3.4]\n".to_vec());
        let _ = check(&creds, &bundle, UnixTime::now());
    }

    #[test]
    fn pem_parser_never_panics_on_pem_like_text(lines in proptest::collection::vec(pem_line(), 0..40)) {
        let (_, findings) = CaBundle::parse("ca", lines.join("\n").into_bytes());
        for f in &findings {
            prop_assert!(f.line.is_some(), "{:?}", f);
        }
    }

    #[test]
    fn pem_parser_never_panics_on_a_mutated_certificate(at in 0usize..2000, byte in any::<u8>()) {
        let mut der = common::Cert::device("10.0.0.1").der();
        let len = der.len().max(1);
        if let Some(slot) = der.get_mut(at % len) {
            *slot = byte;
        }
        let _ = CaBundle::parse("ca", common::pem_block("CERTIFICATE", &der).into_bytes());
    }
}
