//! Arbitrary bytes through the CA bundle (PEM + X.509) parser and the coverage check: they must
//! never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (bundle, _) = snow_credentials::CaBundle::parse("fuzz.pem", data.to_vec());
    let (credentials, _) =
        snow_credentials::CredentialsFile::parse("fuzz.ini", b"[10.0.0.1]\n".to_vec());
    let _ = snow_credentials::check(&credentials, &bundle, snow_credentials::UnixTime::now());
});
