//! Arbitrary bytes through the CA bundle (PEM + X.509) parser and the coverage check: they must
//! never panic. The body is `snow_credentials::fuzz::ca_bundle`, which `cargo test -p
//! snow-credentials` also runs over a corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = snow_credentials::fuzz::ca_bundle(data);
});
