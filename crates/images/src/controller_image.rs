//! The snowctl controller's image, built without a container runtime: a FROM-scratch OCI image
//! that holds a statically linked executable (`/snowctl`), a CA certificates file
//! (`/etc/ssl/certs/ca-certificates.crt`) and a non-root user (`/etc/passwd`, `/etc/group`:
//! `nonroot`, uid and gid 65532), and nothing else. It is written as an OCI image layout in a tar
//! (what skopeo calls an `oci-archive`) by the offline archive's writer ([`crate::layout`]), its
//! index entry named `snowctl/controller:v<version>` ([`snow_api::release`]), so
//! `import-images --from` pushes it to `<registry>/snowctl/controller:v<version>` and
//! `download artifacts --controller-image-archive` carries it.
//!
//! Reproducible: nothing in the archive depends on when or where it is built. The layer's
//! entries are sorted, owned by 0:0, with mtime 0 and fixed modes; the layer is an uncompressed
//! tar (no compressor whose version could change its bytes; its digest is its `diff_id`); the
//! config's times are the epoch; the JSON documents are written in a fixed order; the archive's
//! blobs are written one after the other in a fixed order. The same executable and CA file give
//! a byte-identical archive, so the same image digest.

use crate::{
    layout::{IndexEntry, Writer, partial_path},
    limits::{MAX_IMAGE_BINARY, MAX_IMAGE_CA_CERTIFICATES},
    registry::sha256,
    tar::{self, EntryType},
};
use serde_json::json;
use snow_api::release::{CONTROLLER_IMAGE_REPOSITORY, controller_image_tag};
use std::{
    collections::HashMap,
    io::Read,
    path::{Path, PathBuf},
};

/// The executable's path in the image (the entrypoint).
pub const BINARY_PATH: &str = "/snowctl";
/// The CA certificates file's path in the image.
pub const CA_CERTIFICATES_PATH: &str = "/etc/ssl/certs/ca-certificates.crt";
/// The user the image runs as: `nonroot`, uid and gid 65532 (as distroless images have it).
pub const USER: &str = "65532:65532";
/// The media type of the image's one layer: an uncompressed tar.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar";
const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// The image's times (config `created`, history): the epoch, so a rebuild changes nothing.
const EPOCH: &str = "1970-01-01T00:00:00Z";

const PASSWD: &str = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n";
const GROUP: &str = "root:x:0:\nnonroot:x:65532:\n";

/// The name of this build's controller image in its archive: `snowctl/controller:v<version>`.
pub fn controller_image_name() -> String {
    format!("{CONTROLLER_IMAGE_REPOSITORY}:{}", controller_image_tag())
}

/// What the image is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerImageInputs {
    /// The statically linked x86-64 Linux executable (a static release build of snowctl).
    pub binary: PathBuf,
    /// The PEM CA certificates file (e.g. `/etc/ssl/certs/ca-certificates.crt`).
    pub ca_certificates: PathBuf,
}

/// The image written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltImage {
    /// The archive.
    pub path: PathBuf,
    /// The image's name in it (`snowctl/controller:v<version>`).
    pub name: String,
    /// The manifest's digest: the image's digest in any registry it is pushed to.
    pub digest: String,
    /// The layer's digest (also its `diff_id`: the layer is not compressed).
    pub layer_digest: String,
    /// The archive's size in bytes.
    pub bytes: u64,
}

/// Why the image could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageBuildError {
    /// An input cannot be read (missing, not a regular file, an IO error).
    #[error("{}: {message}", path.display())]
    Read {
        /// The input.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// An input is larger than its bound.
    #[error("{} is more than {max} bytes: {what}", path.display())]
    TooLarge {
        /// The input.
        path: PathBuf,
        /// Its bound ([`MAX_IMAGE_BINARY`], [`MAX_IMAGE_CA_CERTIFICATES`]).
        max: u64,
        /// What was expected there.
        what: &'static str,
    },
    /// The executable cannot run in a FROM-scratch linux/amd64 image.
    #[error(
        "{} cannot run in a FROM-scratch linux/amd64 image: {reason}; build a static one with scripts/build-controller-image",
        path.display()
    )]
    NotStatic {
        /// The executable.
        path: PathBuf,
        /// Why (not ELF, not x86-64, dynamically linked: its loader named).
        reason: String,
    },
    /// The CA certificates file holds no PEM certificate.
    #[error(
        "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----): give a CA certificates bundle such as /etc/ssl/certs/ca-certificates.crt",
        path.display()
    )]
    NoCertificates {
        /// The file.
        path: PathBuf,
    },
    /// The output (or its `.partial`) exists: a build never writes over a file or resumes one,
    /// so that what it writes depends on its inputs alone.
    #[error("{} exists: remove it or choose another output", path.display())]
    Exists {
        /// The file there.
        path: PathBuf,
    },
    /// Writing the archive failed.
    #[error("{message}")]
    Write {
        /// What failed, with the path.
        message: String,
    },
}

/// Reads a regular file of at most `max` bytes.
fn read_bounded(path: &Path, max: u64, what: &'static str) -> Result<Vec<u8>, ImageBuildError> {
    let fail = |message: String| ImageBuildError::Read {
        path: path.to_owned(),
        message,
    };
    // Only a regular file is opened: opening a FIFO would block, a device never ends.
    let regular = |meta: std::io::Result<std::fs::Metadata>| match meta {
        Ok(meta) if meta.is_file() => Ok(meta),
        Ok(_) => Err(fail("not a regular file".into())),
        Err(e) => Err(fail(e.to_string())),
    };
    regular(std::fs::metadata(path))?;
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let meta = regular(file.metadata())?;
    let too_large = || ImageBuildError::TooLarge {
        path: path.to_owned(),
        max,
        what,
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    // It may have grown since its size was read.
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// Why an executable cannot run alone in a linux/amd64 image, if it cannot: it must be a 64-bit
/// little-endian x86-64 ELF executable without a program interpreter (`PT_INTERP`: the dynamic
/// loader, which a FROM-scratch image does not have).
pub fn static_executable_problem(bytes: &[u8]) -> Option<String> {
    const PT_INTERP: u32 = 3;
    const EM_X86_64: u16 = 62;
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Some("it is not an ELF executable".into());
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Some("it is not a 64-bit little-endian ELF file".into());
    }
    if !matches!(u16_at(bytes, 16), Some(2 | 3)) {
        return Some("it is an ELF file but not an executable".into());
    }
    if u16_at(bytes, 18) != Some(EM_X86_64) {
        return Some("it is not an x86-64 executable".into());
    }
    let truncated = || Some("its program headers are cut short".to_owned());
    let (Some(phoff), Some(phentsize), Some(phnum)) =
        (u64_at(bytes, 32), u16_at(bytes, 54), u16_at(bytes, 56))
    else {
        return truncated();
    };
    for i in 0..u64::from(phnum) {
        let Some(at) = i
            .checked_mul(u64::from(phentsize))
            .and_then(|o| o.checked_add(phoff))
            .and_then(|o| usize::try_from(o).ok())
        else {
            return truncated();
        };
        let Some(p_type) = u32_at(bytes, at) else {
            return truncated();
        };
        if p_type == PT_INTERP {
            let interpreter = u64_at(bytes, at + 8)
                .zip(u64_at(bytes, at + 32))
                .and_then(|(off, len)| {
                    let start = usize::try_from(off).ok()?;
                    bytes.get(start..start.checked_add(usize::try_from(len).ok()?)?)
                })
                .map(|name| {
                    String::from_utf8_lossy(name)
                        .trim_end_matches('\0')
                        .to_owned()
                })
                .unwrap_or_else(|| "?".into());
            return Some(format!(
                "it is dynamically linked (its loader is {interpreter}, which the image does not have)"
            ));
        }
    }
    None
}

/// The image's one layer: an uncompressed tar of `etc/`, `etc/group`, `etc/passwd`,
/// `etc/ssl/`, `etc/ssl/certs/`, the CA file and `snowctl`, in that (sorted) order, owned by
/// 0:0 with mtime 0, directories and the executable 0755, the other files 0644.
pub fn controller_layer(binary: &[u8], ca_certificates: &[u8]) -> Result<Vec<u8>, String> {
    let ca_path = CA_CERTIFICATES_PATH.trim_start_matches('/');
    let entries: [(&str, Option<&[u8]>, u32); 7] = [
        ("etc/", None, 0o755),
        ("etc/group", Some(GROUP.as_bytes()), 0o644),
        ("etc/passwd", Some(PASSWD.as_bytes()), 0o644),
        ("etc/ssl/", None, 0o755),
        ("etc/ssl/certs/", None, 0o755),
        (ca_path, Some(ca_certificates), 0o644),
        (BINARY_PATH.trim_start_matches('/'), Some(binary), 0o755),
    ];
    let mut layer = Vec::with_capacity(binary.len() + ca_certificates.len() + 16 * 1024);
    for (name, content, mode) in entries {
        let (size, kind) = match content {
            Some(c) => (c.len() as u64, EntryType::File),
            None => (0, EntryType::Dir),
        };
        layer.extend_from_slice(&tar::header(name, size, mode, kind)?);
        if let Some(c) = content {
            layer.extend_from_slice(c);
            layer.resize(tar::padded(layer.len() as u64) as usize, 0);
        }
    }
    // The end of a tar: two zero blocks.
    layer.resize(layer.len() + 2 * tar::BLOCK as usize, 0);
    Ok(layer)
}

/// The image config (OCI image config) for a layer of digest `layer_digest`.
fn config(layer_digest: &str) -> serde_json::Value {
    json!({
        "architecture": "amd64",
        "os": "linux",
        "created": EPOCH,
        "config": {
            "User": USER,
            "Entrypoint": [BINARY_PATH],
            "Cmd": ["controller"],
            "Env": [format!("SSL_CERT_FILE={CA_CERTIFICATES_PATH}")],
            "WorkingDir": "/",
            "Labels": {
                "org.opencontainers.image.title": "snowctl controller",
                "org.opencontainers.image.version": controller_image_tag(),
            },
        },
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        "history": [{"created": EPOCH, "created_by": "snowctl build controller-image"}],
    })
}

/// Builds the controller image from `inputs` into the archive `output` (which must not exist,
/// nor `output.partial`), the image named [`controller_image_name`]. Reads the two inputs
/// (bounded: [`MAX_IMAGE_BINARY`], [`MAX_IMAGE_CA_CERTIFICATES`]) and writes the archive; the
/// executable is checked to be a static x86-64 ELF executable first.
pub async fn build_controller_image(
    inputs: &ControllerImageInputs,
    output: &Path,
) -> Result<BuiltImage, ImageBuildError> {
    let binary = read_bounded(
        &inputs.binary,
        MAX_IMAGE_BINARY,
        "a static snowctl executable",
    )?;
    if let Some(reason) = static_executable_problem(&binary) {
        return Err(ImageBuildError::NotStatic {
            path: inputs.binary.clone(),
            reason,
        });
    }
    let ca = read_bounded(
        &inputs.ca_certificates,
        MAX_IMAGE_CA_CERTIFICATES,
        "a CA certificates bundle",
    )?;
    if !ca.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
        return Err(ImageBuildError::NoCertificates {
            path: inputs.ca_certificates.clone(),
        });
    }
    for path in [output.to_owned(), partial_path(output)] {
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(ImageBuildError::Exists { path });
        }
    }
    let write = |message: String| ImageBuildError::Write { message };
    let layer = controller_layer(&binary, &ca).map_err(write)?;
    drop(binary);
    let layer_digest = sha256(&layer);
    let config = serde_json::to_vec(&config(&layer_digest)).map_err(|e| write(e.to_string()))?;
    let config_digest = sha256(&config);
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": LAYER_MEDIA_TYPE, "digest": layer_digest, "size": layer.len()}],
    }))
    .map_err(|e| write(e.to_string()))?;
    let digest = sha256(&manifest);
    let blobs: HashMap<String, u64> = [
        (layer_digest.clone(), layer.len() as u64),
        (config_digest.clone(), config.len() as u64),
        (digest.clone(), manifest.len() as u64),
    ]
    .into_iter()
    .collect();
    let name = controller_image_name();
    let entry = IndexEntry {
        image: name.clone(),
        media_type: MANIFEST_MEDIA_TYPE.into(),
        digest: digest.clone(),
        size: manifest.len() as u64,
    };
    let writer = Writer::open(output).map_err(|e| write(e.to_string()))?;
    // One blob after the other, in this order: the archive's bytes do not depend on timing.
    for (blob_digest, body) in [
        (&layer_digest, layer),
        (&config_digest, config),
        (&digest, manifest),
    ] {
        writer
            .bytes(blob_digest, body.into())
            .await
            .map_err(write)?;
    }
    let summary = writer
        .finish(&[entry], &blobs, &[], "linux/amd64")
        .map_err(|e| write(e.to_string()))?;
    Ok(BuiltImage {
        path: summary.path,
        name,
        digest,
        layer_digest,
        bytes: summary.bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use snow_test_devices::elf;

    #[test]
    fn only_a_static_x86_64_elf_executable_is_taken() {
        assert_eq!(
            static_executable_problem(&elf::static_executable(b"code")),
            None
        );
        assert_eq!(
            static_executable_problem(&elf::dynamic_executable()).as_deref(),
            Some(
                "it is dynamically linked (its loader is /lib64/ld-linux-x86-64.so.2, which the image does not have)"
            )
        );
        assert_eq!(
            static_executable_problem(b"#!/bin/sh\necho hi\n").as_deref(),
            Some("it is not an ELF executable")
        );
        let mut arm = elf::executable(&[]);
        arm[18..20].copy_from_slice(&183u16.to_le_bytes());
        assert_eq!(
            static_executable_problem(&arm).as_deref(),
            Some("it is not an x86-64 executable")
        );
        // Program headers said to be past the end of the file.
        let mut cut = elf::executable(&[]);
        cut[56..58].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(
            static_executable_problem(&cut).as_deref(),
            Some("its program headers are cut short")
        );
    }

    #[test]
    fn the_layer_holds_the_files_sorted_with_fixed_owners_times_and_modes() {
        let layer = controller_layer(b"\x7fELF binary", b"-----BEGIN CERTIFICATE-----\n").unwrap();
        let mut names = Vec::new();
        let mut at = 0usize;
        while layer[at..at + 512].iter().any(|&b| b != 0) {
            let h = &layer[at..at + 512];
            let field = |r: std::ops::Range<usize>| {
                String::from_utf8_lossy(&h[r])
                    .trim_end_matches('\0')
                    .to_owned()
            };
            let size = u64::from_str_radix(&field(124..135), 8).unwrap();
            names.push((field(0..100), field(100..107), h[156]));
            assert_eq!(field(108..115), "0000000", "uid");
            assert_eq!(field(116..123), "0000000", "gid");
            assert_eq!(field(136..147), "00000000000", "mtime");
            at += 512 + tar::padded(size) as usize;
        }
        assert_eq!(
            names,
            [
                ("etc/".into(), "0000755".into(), b'5'),
                ("etc/group".into(), "0000644".into(), b'0'),
                ("etc/passwd".into(), "0000644".into(), b'0'),
                ("etc/ssl/".into(), "0000755".into(), b'5'),
                ("etc/ssl/certs/".into(), "0000755".into(), b'5'),
                (
                    "etc/ssl/certs/ca-certificates.crt".into(),
                    "0000644".into(),
                    b'0'
                ),
                ("snowctl".into(), "0000755".into(), b'0'),
            ]
        );
        assert_eq!(layer.len(), at + 1024);
    }
}
