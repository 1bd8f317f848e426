//! Arbitrary bytes through the cluster-spec reader: decode, parse, default, validate.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = snow_api::decode(data) {
        let _ = snow_api::check(text);
    }
});
