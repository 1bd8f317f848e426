//! Arbitrary bytes through the credentials INI parser: it must never panic. The body is
//! `snow_credentials::fuzz::credentials_ini`, which `cargo test -p snow-credentials` also runs
//! over a corpus (checking that no finding shows a key).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = snow_credentials::fuzz::credentials_ini(data);
});
