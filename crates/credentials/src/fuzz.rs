//! The bodies of the cargo-fuzz targets of this crate (`fuzz/`), as plain functions that stable
//! `cargo test` runs over a generated corpus ([`snow_api::fuzz::mutations`]).

use crate::{CaBundle, CredentialsFile, UnixTime, check};

/// The `credentials_ini` target: arbitrary bytes through the INI parser; it must return, and no
/// finding may show a value (checked by the callers that know the keys).
pub fn credentials_ini(data: &[u8]) -> Vec<snow_api::Finding> {
    let (file, findings) = CredentialsFile::parse("fuzz.ini", data.to_vec());
    let _ = file.redacted_text();
    for device in file.devices() {
        let _ = device.provider();
    }
    findings
}

/// The `ca_bundle` target: arbitrary bytes through the PEM and X.509 parser and the coverage
/// check; it must return.
pub fn ca_bundle(data: &[u8]) -> Vec<snow_api::Finding> {
    let (bundle, mut findings) = CaBundle::parse("fuzz.pem", data.to_vec());
    let (credentials, _) = CredentialsFile::parse("fuzz.ini", b"[10.0.0.1]\n".to_vec());
    findings.extend(check(&credentials, &bundle, UnixTime::now()).findings);
    findings
}
