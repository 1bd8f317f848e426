//! Arbitrary bytes as an image archive: the tar reader, then the OCI layout or `docker save`
//! reader on what it found. The body is `snow_images::fuzz::image_archive`, which `cargo test -p
//! snow-images` also runs over a corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| snow_images::fuzz::image_archive(data));
