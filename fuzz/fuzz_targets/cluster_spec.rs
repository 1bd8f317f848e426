//! Arbitrary bytes through the cluster-spec reader: decode, parse, default, validate. The body is
//! `snow_api::fuzz::cluster_spec`, which `cargo test -p snow-api` also runs over a corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| snow_api::fuzz::cluster_spec(data));
