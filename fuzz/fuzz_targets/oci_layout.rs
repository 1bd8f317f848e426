//! Arbitrary bytes as the `index.json` of an OCI layout (and the `manifest.json` of a `docker
//! save` archive) in a well-formed tar. The body is `snow_images::fuzz::oci_layout`, which `cargo
//! test -p snow-images` also runs over a corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| snow_images::fuzz::oci_layout(data));
