//! The bodies of the cargo-fuzz targets of this crate (`fuzz/`), as plain functions that stable
//! `cargo test` runs over a generated corpus ([`snow_api::fuzz::mutations`]). [`Archive`] reads
//! files, so each input is written to a file of its own in the system temporary directory first
//! (removed after).

use crate::{Archive, CopyConfig, TargetRegistry, plan_import, tar};
use std::path::PathBuf;

/// A file in the system temporary directory, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn with(bytes: &[u8]) -> Option<TempFile> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("snow-images-fuzz-{}-{n}.tar", std::process::id()));
        std::fs::write(&path, bytes).ok()?;
        Some(TempFile(path))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Everything a reader of an opened archive can ask: the listing, the files, the release
/// manifests, each image's manifest and its blobs' sizes, the Helm chart of each name, the
/// import plan.
fn exercise(archive: &Archive) {
    let _ = archive.listing();
    let _ = archive.release_manifests();
    for file in archive.files() {
        let _ = archive.file(&file);
    }
    for image in archive.images() {
        if let Ok(body) = archive.manifest(&image.digest) {
            let _ = crate::archive::index_media(&image.media_type, &body);
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&body) {
                for desc in crate::registry::manifest_blobs(&value) {
                    let _ = archive.blob_size(&desc.digest);
                }
            }
        }
        if let Some(name) = &image.name {
            let _ = archive.helm_chart(name);
        }
    }
    if let Ok(target) = TargetRegistry::parse("127.0.0.1:5000/fuzz") {
        let config = CopyConfig {
            target,
            source_registry: None,
            all_platforms: false,
            concurrency: 1,
            ca_certs_pem: Vec::new(),
            plain_http: Vec::new(),
            credentials: Default::default(),
        };
        let _ = plan_import(archive, &[], &config);
    }
}

/// The `image_archive` target: arbitrary bytes as an archive file (the tar reader, then the OCI
/// layout or `docker save` reader on what it found). It must return, whatever the bytes.
pub fn image_archive(data: &[u8]) {
    let Some(file) = TempFile::with(data) else {
        return;
    };
    if let Ok(archive) = Archive::open(&file.0) {
        exercise(&archive);
    }
}

/// The `oci_layout` target: arbitrary bytes as the `index.json` of a well-formed tar (holding
/// one small image's blobs, which the bytes may name), then as the `manifest.json` of a
/// `docker save` one. It must return, whatever the bytes.
pub fn oci_layout(data: &[u8]) {
    for name in ["index.json", "manifest.json"] {
        let Some(file) = TempFile::with(&seed_tar(&[(name, data)])) else {
            return;
        };
        if let Ok(archive) = Archive::open(&file.0) {
            exercise(&archive);
        }
    }
}

/// The small image [`seed_tar`] holds: a config, a layer and a manifest (digest, bytes).
fn seed_blobs() -> Vec<(String, Vec<u8>)> {
    let layer = b"layer bytes".to_vec();
    let layer_digest = crate::registry::sha256(&layer);
    let config = format!(
        r#"{{"os":"linux","architecture":"amd64","rootfs":{{"diff_ids":["{layer_digest}"]}}}}"#
    )
    .into_bytes();
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{}","size":{}}},"layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"{layer_digest}","size":{}}}]}}"#,
        crate::registry::sha256(&config),
        config.len(),
        layer.len()
    )
    .into_bytes();
    [layer, config, manifest]
        .into_iter()
        .map(|b| (crate::registry::sha256(&b), b))
        .collect()
}

/// A tar of `oci-layout`, the seed image's blobs (also as `config.json` and `layer.tar` for a
/// `docker save` manifest) and `files`: a seed for the corpus, and the frame of [`oci_layout`].
pub fn seed_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut add = |name: &str, data: &[u8]| {
        if let Ok(header) = tar::file_header(name, data.len() as u64) {
            out.extend_from_slice(&header);
            out.extend_from_slice(data);
            out.resize(tar::padded(out.len() as u64) as usize, 0);
        }
    };
    add("oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#);
    let blobs = seed_blobs();
    for (digest, bytes) in &blobs {
        add(
            &format!("blobs/sha256/{}", digest.trim_start_matches("sha256:")),
            bytes,
        );
    }
    add("layer.tar", &blobs[0].1);
    add("config.json", &blobs[1].1);
    for (name, data) in files {
        add(name, data);
    }
    out.extend_from_slice(&[0u8; 1024]);
    out
}

/// Seeds for the two targets: a layout's `index.json` naming the seed image, a `docker save`
/// `manifest.json`, and the two whole tars.
pub fn seeds() -> Vec<Vec<u8>> {
    let blobs = seed_blobs();
    let (digest, size) = (&blobs[2].0, blobs[2].1.len());
    let index = format!(
        r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{digest}","size":{size},"annotations":{{"org.opencontainers.image.ref.name":"public.ecr.aws/a/b:v1"}}}},{{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"{digest}","size":{size}}}]}}"#
    )
    .into_bytes();
    let docker =
        br#"[{"Config":"config.json","RepoTags":["public.ecr.aws/a/b:v1"],"Layers":["layer.tar","layer.tar"]}]"#
            .to_vec();
    let oci_tar = seed_tar(&[("index.json", &index)]);
    let docker_tar = seed_tar(&[("manifest.json", &docker)]);
    vec![index, docker, oci_tar, docker_tar]
}
