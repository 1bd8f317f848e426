//! Arbitrary bytes through the credentials INI parser: it must never panic, and no finding may
//! carry the text of a value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (file, findings) = snow_credentials::CredentialsFile::parse("fuzz.ini", data.to_vec());
    let _ = file.redacted_text();
    for device in file.devices() {
        let _ = device.provider();
    }
    let _ = snow_api::has_errors(&findings);
});
