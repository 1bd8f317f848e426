//! Reading an image archive in place, without unpacking it: an OCI image layout in a tar (what
//! `snowctl download artifacts` and `skopeo copy … oci-archive:` write, and `docker save` since
//! Docker 25) or a `docker save` archive (`manifest.json`; EKS Anywhere's `images.tar`). A
//! directory holding the same files (an archive unpacked with `tar -x`, or skopeo's `oci:DIR`)
//! reads the same way.
//!
//! Opening reads the tar headers only (seeking over the data) and the small JSON files; blobs are
//! then read at their offsets as streams, their digests checked as they are read.

use crate::{
    layout::{ArchiveFile, FILES_DIR},
    limits::{MAX_ARCHIVE_ENTRIES, MAX_DIR_DEPTH, MAX_DOCKER_LAYERS},
    list::ListedImage,
    registry::{hex_digest, is_index, media_type, sha256},
    shown::printable,
    tar::{self, Entry, Kind},
};
use serde::Serialize;
use serde_json::{Value, json};
use std::{
    collections::{HashMap, HashSet},
    fs::File,
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

/// The most bytes of a manifest, an index, a config or a JSON file read into memory.
pub const JSON_MAX: u64 = 16 << 20;

/// The media type of a Helm chart's content layer in an OCI registry.
pub const HELM_CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

/// The Bundles manifest's path below `snowctl/manifests/`.
pub const BUNDLES_FILE: &str = "bundles.yaml";
/// The folder of the EKS-D Release manifests below `snowctl/manifests/`, one file each.
pub const EKSD_DIR: &str = "eksd/";
/// The image list's path below `snowctl/manifests/` (JSON, as [`ListedImage`] serializes).
pub const IMAGES_FILE: &str = "images.json";

/// The release manifests and the image list as `snowctl download artifacts` stores them beside
/// the images, what [`Archive::release_manifests`] reads back: the Bundles manifest at
/// [`BUNDLES_FILE`], each EKS-D Release manifest under [`EKSD_DIR`] by the last `/` part of its
/// name, and `images` at [`IMAGES_FILE`].
pub fn release_files(
    bundles: &str,
    eksd: &[(String, String)],
    images: &[ListedImage],
) -> Vec<ArchiveFile> {
    let file = |path: String, content: Vec<u8>| ArchiveFile { path, content };
    let mut files = vec![file(BUNDLES_FILE.into(), bundles.as_bytes().to_vec())];
    for (name, text) in eksd {
        let name = name.rsplit('/').next().unwrap_or(name);
        files.push(file(format!("{EKSD_DIR}{name}"), text.as_bytes().to_vec()));
    }
    // A list of strings always serializes.
    let list = serde_json::to_vec_pretty(images).unwrap_or_default();
    files.push(file(IMAGES_FILE.into(), list));
    files
}

/// Chunks a blob is read in.
const CHUNK: usize = 512 << 10;

/// Why an archive cannot be read at all. Problems of single images (a missing or corrupt blob)
/// fail those images in the import's report instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// The file cannot be opened or read.
    #[error("{path}: {message}")]
    Io {
        /// The archive.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// Not a tar archive.
    #[error("{path} is not a tar archive: {reason}")]
    NotTar {
        /// The archive.
        path: PathBuf,
        /// What was found.
        reason: String,
    },
    /// The archive ends in the middle of an entry (or holds a block that is not a tar header
    /// there), and what lists its images is in the part that is lost.
    #[error(
        "{path} is incomplete: {detail}; {missing}. Copy it again in full (its size must be the original's) or download it again (a download of the same images into the same file resumes)"
    )]
    Truncated {
        /// The archive.
        path: PathBuf,
        /// The entry the file ends in, or the block that is not a header.
        entry: String,
        /// Where the readable part ends, and why.
        detail: String,
        /// What is missing because of it.
        missing: String,
    },
    /// More entries than [`MAX_ARCHIVE_ENTRIES`], as a tar or as a directory.
    #[error(
        "{path} holds more than {MAX_ARCHIVE_ENTRIES} entries: it is not an image archive (a release's holds a few thousand); check the path"
    )]
    TooManyEntries {
        /// The archive.
        path: PathBuf,
    },
    /// A tar archive that holds neither an OCI layout nor a `docker save` image.
    #[error(
        "{path} holds neither an OCI image layout (index.json) nor a docker save archive (manifest.json)"
    )]
    NoImages {
        /// The archive.
        path: PathBuf,
    },
    /// A Helm chart asked for is not in the archive, or not a Helm chart, or corrupt.
    #[error("{path}: the Helm chart {chart} {message}")]
    Chart {
        /// The archive.
        path: PathBuf,
        /// The chart's URI (its name in the archive).
        chart: String,
        /// What is wrong.
        message: String,
    },
    /// `index.json`, `manifest.json` or a config cannot be read.
    #[error("{path}: {file}: {message}")]
    Invalid {
        /// The archive.
        path: PathBuf,
        /// The file inside.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// What kind of archive it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArchiveFormat {
    /// An OCI image layout (`index.json`, `blobs/`).
    OciLayout,
    /// A `docker save` archive (`manifest.json`).
    DockerArchive,
}

/// One image of the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveImage {
    /// The image's name (its full URI), when the archive gives one.
    pub name: Option<String>,
    /// The digest of its manifest or index.
    pub digest: String,
    /// The manifest or index media type.
    pub media_type: String,
    /// Its size.
    pub size: u64,
}

/// An opened archive.
#[derive(Debug)]
pub struct Archive {
    path: PathBuf,
    source: Source,
    format: ArchiveFormat,
    entries: HashMap<String, Entry>,
    images: Vec<ArchiveImage>,
    /// Manifests made from `docker save`'s `manifest.json`: digest → bytes.
    made: HashMap<String, bytes::Bytes>,
    /// Blobs of a `docker save` archive by digest: the archive path holding them.
    blob_paths: HashMap<String, String>,
    /// How the scan ended, when the file is cut short.
    truncated: Option<String>,
}

/// A blob's bytes in an archive ([`Archive::blob_bytes`]): a byte range of the tar, a file of
/// an unpacked archive, or a manifest made in memory for a `docker save` image.
#[derive(Debug, Clone)]
pub struct BlobBytes {
    at: At,
}

#[derive(Debug, Clone)]
enum At {
    Tar {
        file: Arc<File>,
        offset: u64,
        size: u64,
    },
    File {
        path: PathBuf,
        size: u64,
    },
    Memory(bytes::Bytes),
}

/// A [`BlobBytes`] opened for reading.
#[derive(Debug)]
pub struct BlobReader {
    at: Opened,
}

#[derive(Debug)]
enum Opened {
    File {
        file: Arc<File>,
        offset: u64,
        size: u64,
    },
    Memory(bytes::Bytes),
}

impl BlobBytes {
    /// The blob's size in bytes.
    pub fn len(&self) -> u64 {
        match &self.at {
            At::Tar { size, .. } | At::File { size, .. } => *size,
            At::Memory(body) => body.len() as u64,
        }
    }

    /// Whether the blob is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Opens it (a file of an unpacked archive is opened now; the tar is open already).
    pub fn open(&self) -> std::io::Result<BlobReader> {
        let at = match &self.at {
            At::Tar { file, offset, size } => Opened::File {
                file: file.clone(),
                offset: *offset,
                size: *size,
            },
            At::File { path, size } => Opened::File {
                file: Arc::new(File::open(path)?),
                offset: 0,
                size: *size,
            },
            At::Memory(body) => Opened::Memory(body.clone()),
        };
        Ok(BlobReader { at })
    }
}

impl BlobReader {
    /// Reads `len` bytes at `position`
    /// within the blob; an error when the range is past its end or the file is shorter.
    pub fn read(&self, position: u64, len: usize) -> std::io::Result<bytes::Bytes> {
        let past = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "past the blob's end");
        match &self.at {
            Opened::File { file, offset, size } => {
                if position
                    .checked_add(len as u64)
                    .is_none_or(|end| end > *size)
                {
                    return Err(past());
                }
                let mut buf = vec![0u8; len];
                file.read_exact_at(&mut buf, offset + position)?;
                Ok(bytes::Bytes::from(buf))
            }
            Opened::Memory(body) => {
                let start = usize::try_from(position).map_err(|_| past())?;
                let end = start
                    .checked_add(len)
                    .filter(|e| *e <= body.len())
                    .ok_or_else(past)?;
                Ok(body.slice(start..end))
            }
        }
    }
}

/// Where the entries' bytes are: one tar file, or the files of an unpacked archive.
#[derive(Debug, Clone)]
enum Source {
    /// Entries at their offsets in the tar.
    Tar(Arc<File>),
    /// Entries as files below this directory.
    Dir(Arc<PathBuf>),
}

impl Source {
    /// A file to read `entry` from, and where its bytes start in it.
    fn open(&self, entry: &Entry) -> std::io::Result<(Arc<File>, u64)> {
        match self {
            Source::Tar(file) => Ok((file.clone(), entry.offset)),
            Source::Dir(root) => Ok((Arc::new(File::open(root.join(&entry.name))?), 0)),
        }
    }
}

/// The regular files below `root`, as archive entries. Symbolic links are followed only to what
/// is inside `root`, and each directory is read once: a link out of `root`, a dangling link and
/// a second path to a directory (a loop: a link to `.`) are errors naming the entry. Walked
/// [`MAX_DIR_DEPTH`] deep, at most [`MAX_ARCHIVE_ENTRIES`] files and directories.
fn dir_entries(root: &Path) -> Result<Vec<Entry>, ArchiveError> {
    let fail = |entry: &str, message: String| ArchiveError::Invalid {
        path: root.to_owned(),
        file: if entry.is_empty() {
            ".".into()
        } else {
            entry.to_owned()
        },
        message,
    };
    let io = |entry: &str, e: std::io::Error| fail(entry, e.to_string());
    let real_root = std::fs::canonicalize(root).map_err(|e| io("", e))?;
    let mut walked = HashSet::from([real_root.clone()]);
    let mut entries = Vec::new();
    let mut pending = vec![(real_root.clone(), String::new(), 0)];
    while let Some((dir, prefix, depth)) = pending.pop() {
        for item in std::fs::read_dir(&dir).map_err(|e| io(&prefix, e))? {
            let item = item.map_err(|e| io(&prefix, e))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            let is_link = (item.file_type())
                .map_err(|e| io(&relative, e))?
                .is_symlink();
            let real = if is_link {
                let target = std::fs::read_link(item.path())
                    .map_or_else(|e| format!("? ({e})"), |t| t.display().to_string());
                let real = std::fs::canonicalize(item.path()).map_err(|e| {
                    let why = match e.kind() {
                        std::io::ErrorKind::NotFound => "which does not exist".to_owned(),
                        _ => format!("which cannot be followed: {e}"),
                    };
                    fail(&relative, format!("a symbolic link to {target}, {why}"))
                })?;
                if !real.starts_with(&real_root) {
                    return Err(fail(
                        &relative,
                        format!(
                            "a symbolic link to {target}, outside {}: links out of the archive directory are not followed",
                            root.display()
                        ),
                    ));
                }
                (real, Some(target))
            } else {
                (dir.join(&name), None)
            };
            let meta = std::fs::metadata(&real.0).map_err(|e| io(&relative, e))?;
            if meta.is_dir() && depth < MAX_DIR_DEPTH {
                if !walked.insert(real.0.clone()) {
                    let target = real.1.unwrap_or_default();
                    return Err(fail(
                        &relative,
                        format!(
                            "a symbolic link to {target}, a directory read already (a loop, or a second path to it): remove the link"
                        ),
                    ));
                }
                pending.push((real.0, format!("{relative}/"), depth + 1));
            } else if meta.is_file() {
                entries.push(Entry {
                    name: relative,
                    header_offset: 0,
                    offset: 0,
                    size: meta.len(),
                    kind: Kind::File,
                });
            }
            if entries.len() + walked.len() > MAX_ARCHIVE_ENTRIES {
                return Err(ArchiveError::TooManyEntries {
                    path: root.to_owned(),
                });
            }
        }
    }
    Ok(entries)
}

fn magic_hint(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some("it is gzip-compressed: decompress it first (gunzip)")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("it is zstd-compressed: decompress it first (unzstd)")
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some("it is xz-compressed: decompress it first (unxz)")
    } else if head.starts_with(b"BZh") {
        Some("it is bzip2-compressed: decompress it first (bunzip2)")
    } else {
        None
    }
}

impl Archive {
    /// Opens an archive: reads its headers and its JSON files.
    pub fn open(path: &Path) -> Result<Archive, ArchiveError> {
        let io = |e: std::io::Error| ArchiveError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        };
        if path.is_dir() {
            let entries = dir_entries(path)?;
            let source = Source::Dir(Arc::new(path.to_owned()));
            return Archive::read(path, source, entries, None);
        }
        // Only a regular file is opened: a FIFO would block the open, a device never end.
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(ArchiveError::NotTar {
                path: path.to_owned(),
                reason: "it is not a regular file or a directory".into(),
            });
        }
        let file = File::open(path).map_err(io)?;
        let length = file.metadata().map_err(io)?.len();
        let mut head = [0u8; 8];
        let n = file.read_at(&mut head, 0).map_err(io)?;
        if let Some(hint) = magic_hint(&head[..n]) {
            return Err(ArchiveError::NotTar {
                path: path.to_owned(),
                reason: hint.into(),
            });
        }
        let scan = tar::scan(&file, length, MAX_ARCHIVE_ENTRIES).map_err(io)?;
        if let tar::End::TooMany(_) = scan.end {
            return Err(ArchiveError::TooManyEntries {
                path: path.to_owned(),
            });
        }
        if scan.entries.is_empty() {
            let reason = match scan.end {
                tar::End::Eof(0) => "it is empty".to_owned(),
                tar::End::Marker(_) => "it holds no entries".to_owned(),
                tar::End::Truncated { .. } | tar::End::Eof(_) => {
                    format!("it is {length} bytes, shorter than a tar header")
                }
                tar::End::BadHeader(_) | tar::End::TooMany(_) => {
                    "its first block is not a tar header".to_owned()
                }
            };
            return Err(ArchiveError::NotTar {
                path: path.to_owned(),
                reason,
            });
        }
        let truncated = match &scan.end {
            tar::End::Truncated {
                header_offset,
                name,
                needed,
                length,
            } => {
                let entry = name
                    .clone()
                    .unwrap_or_else(|| format!("the header at offset {header_offset}"));
                let detail = format!(
                    "the file ends at byte {length}, inside {entry} (which starts at offset {header_offset} and needs {needed} bytes)"
                );
                Some((entry, detail))
            }
            tar::End::BadHeader(offset) => Some((
                format!("the block at offset {offset}"),
                format!(
                    "the block at offset {offset} is not a tar header (the file is cut or damaged there)"
                ),
            )),
            _ => None,
        };
        Archive::read(path, Source::Tar(Arc::new(file)), scan.entries, truncated)
    }

    /// Reads the index (an OCI layout) or `manifest.json` (`docker save`) among `entries`;
    /// `truncated` is the entry where a cut file stops, and how.
    fn read(
        path: &Path,
        source: Source,
        entries: Vec<Entry>,
        truncated: Option<(String, String)>,
    ) -> Result<Archive, ArchiveError> {
        let entries: HashMap<String, Entry> =
            entries.into_iter().map(|e| (e.name.clone(), e)).collect();
        let mut archive = Archive {
            path: path.to_owned(),
            source,
            format: ArchiveFormat::OciLayout,
            entries,
            images: Vec::new(),
            made: HashMap::new(),
            blob_paths: HashMap::new(),
            truncated: (truncated.as_ref())
                .map(|(_, detail)| format!("the archive is incomplete: {detail}")),
        };
        if archive.entry("index.json").is_some() {
            archive.read_oci_index()?;
        } else if archive.entry("manifest.json").is_some() {
            archive.format = ArchiveFormat::DockerArchive;
            archive.read_docker_manifest()?;
        } else if let Some((entry, detail)) = truncated {
            return Err(ArchiveError::Truncated {
                path: path.to_owned(),
                entry,
                detail,
                missing: "what is left holds neither index.json nor manifest.json, the files that list its images".into(),
            });
        } else {
            return Err(ArchiveError::NoImages {
                path: path.to_owned(),
            });
        }
        Ok(archive)
    }

    fn invalid(&self, file: &str, message: impl Into<String>) -> ArchiveError {
        ArchiveError::Invalid {
            path: self.path.clone(),
            file: file.to_owned(),
            message: message.into(),
        }
    }

    /// The entry at `name`, links followed.
    fn entry(&self, name: &str) -> Option<&Entry> {
        let mut name = name.to_owned();
        for _ in 0..16 {
            let entry = self.entries.get(&name)?;
            match &entry.kind {
                Kind::File => return Some(entry),
                Kind::Link(target) => name = target.clone(),
                Kind::Other => return None,
            }
        }
        None
    }

    fn read_entry(&self, entry: &Entry, max: u64) -> Result<Vec<u8>, String> {
        if entry.size > max {
            return Err(format!(
                "{} is {} bytes, more than the {max} read into memory",
                entry.name, entry.size
            ));
        }
        let mut buf = vec![0u8; usize::try_from(entry.size).map_err(|e| e.to_string())?];
        let read = |(file, start): (Arc<File>, u64)| file.read_exact_at(&mut buf, start);
        (self.source.open(entry).and_then(read))
            .map_err(|e| format!("reading {}: {e}", entry.name))?;
        Ok(buf)
    }

    fn read_json(&self, name: &str) -> Result<Value, ArchiveError> {
        let entry = self
            .entry(name)
            .ok_or_else(|| self.invalid(name, "missing"))?;
        let bytes = self
            .read_entry(entry, JSON_MAX)
            .map_err(|e| self.invalid(name, e))?;
        serde_json::from_slice(&bytes).map_err(|e| self.invalid(name, format!("not JSON: {e}")))
    }

    fn read_oci_index(&mut self) -> Result<(), ArchiveError> {
        let index = self.read_json("index.json")?;
        let manifests = index
            .get("manifests")
            .and_then(Value::as_array)
            .ok_or_else(|| self.invalid("index.json", "no `manifests` list"))?;
        for (i, m) in manifests.iter().enumerate() {
            let field = |k: &str| m.get(k).and_then(Value::as_str);
            let annotation = |k: &str| {
                m.get("annotations")
                    .and_then(|a| a.get(k))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let digest = field("digest")
                .ok_or_else(|| self.invalid("index.json", format!("entry {i} has no digest")))?;
            // Docker 25's `docker save` names the image in io.containerd.image.name and puts
            // the tag alone in the ref name.
            let name = annotation("io.containerd.image.name")
                .or_else(|| annotation("org.opencontainers.image.ref.name"));
            self.images.push(ArchiveImage {
                name,
                digest: digest.to_owned(),
                media_type: field("mediaType")
                    .unwrap_or("application/vnd.oci.image.manifest.v1+json")
                    .to_owned(),
                size: m.get("size").and_then(Value::as_u64).unwrap_or(0),
            });
        }
        Ok(())
    }

    /// Makes a Docker image manifest (schema 2) for each image of `manifest.json`: the config as
    /// it is, the layers as they are (uncompressed tars; their digests are the config's
    /// `diff_ids`, checked as they are read).
    fn read_docker_manifest(&mut self) -> Result<(), ArchiveError> {
        let list = self.read_json("manifest.json")?;
        let items = list
            .as_array()
            .ok_or_else(|| self.invalid("manifest.json", "not a list"))?;
        // A member listed many times (by one image or several) is hashed once.
        let mut hashed: HashMap<String, String> = HashMap::new();
        let mut layer_count = 0usize;
        for (i, item) in items.iter().enumerate() {
            let what = format!("manifest.json entry {i}");
            let config_path = item
                .get("Config")
                .and_then(Value::as_str)
                .ok_or_else(|| self.invalid("manifest.json", format!("entry {i} has no Config")))?;
            let config_entry = self
                .entry(&tar::normalize(config_path))
                .ok_or_else(|| self.missing_file(&what, config_path))?;
            let config = self
                .read_entry(config_entry, JSON_MAX)
                .map_err(|e| self.invalid(config_path, e))?;
            let config_digest = sha256(&config);
            let config_json: Value = serde_json::from_slice(&config)
                .map_err(|e| self.invalid(config_path, format!("not JSON: {e}")))?;
            let diff_ids: Vec<&str> = config_json
                .pointer("/rootfs/diff_ids")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let layer_paths: Vec<&str> = item
                .get("Layers")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            layer_count += layer_paths.len();
            if layer_count > MAX_DOCKER_LAYERS {
                return Err(self.invalid(
                    "manifest.json",
                    format!(
                        "its images list more than {MAX_DOCKER_LAYERS} layers together (at {what}); an image has at most a few hundred"
                    ),
                ));
            }
            let mut layers = Vec::new();
            for (n, layer_path) in layer_paths.iter().enumerate() {
                let normalized = tar::normalize(layer_path);
                let entry = self
                    .entry(&normalized)
                    .ok_or_else(|| self.missing_file(&what, layer_path))?
                    .clone();
                let mut head = [0u8; 8];
                let got = (self.source.open(&entry))
                    .and_then(|(file, start)| file.read_at(&mut head, start))
                    .map_err(|e| self.invalid(layer_path, e.to_string()))?;
                let compressed = magic_hint(&head[..got.min(entry.size as usize)]).is_some();
                let named = normalized
                    .strip_prefix("blobs/sha256/")
                    .map(|hex| format!("sha256:{hex}"));
                let digest = match (named, diff_ids.get(n)) {
                    (Some(d), _) => d,
                    (None, Some(d)) if !compressed => (*d).to_owned(),
                    _ => match hashed.get(&entry.name) {
                        Some(digest) => digest.clone(),
                        None => {
                            let digest = (self.hash_entry(&entry))
                                .map_err(|e| self.invalid(layer_path, e))?;
                            hashed.insert(entry.name.clone(), digest.clone());
                            digest
                        }
                    },
                };
                let media = if head.starts_with(&[0x1f, 0x8b]) {
                    "application/vnd.docker.image.rootfs.diff.tar.gzip"
                } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
                    "application/vnd.oci.image.layer.v1.tar+zstd"
                } else {
                    "application/vnd.docker.image.rootfs.diff.tar"
                };
                self.blob_paths.insert(digest.clone(), normalized);
                layers.push(json!({"mediaType": media, "size": entry.size, "digest": digest}));
            }
            self.blob_paths
                .insert(config_digest.clone(), tar::normalize(config_path));
            let manifest = json!({
                "schemaVersion": 2,
                "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {
                    "mediaType": "application/vnd.docker.container.image.v1+json",
                    "size": config.len(),
                    "digest": config_digest,
                },
                "layers": layers,
            });
            let body = serde_json::to_vec_pretty(&manifest)
                .map_err(|e| self.invalid(&what, e.to_string()))?;
            let digest = sha256(&body);
            let size = body.len() as u64;
            self.made.insert(digest.clone(), bytes::Bytes::from(body));
            let tags: Vec<String> = item
                .get("RepoTags")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let names: Vec<Option<String>> = if tags.is_empty() {
                vec![None]
            } else {
                tags.into_iter().map(Some).collect()
            };
            for name in names {
                self.images.push(ArchiveImage {
                    name,
                    digest: digest.clone(),
                    media_type: "application/vnd.docker.distribution.manifest.v2+json".into(),
                    size,
                });
            }
        }
        Ok(())
    }

    fn missing_file(&self, what: &str, file: &str) -> ArchiveError {
        let mut message = format!("{what} names {file}, which is not in the archive");
        if let Some(t) = &self.truncated {
            message.push_str(&format!(" ({t})"));
        }
        self.invalid("manifest.json", message)
    }

    fn hash_entry(&self, entry: &Entry) -> Result<String, String> {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        let mut buf = vec![0u8; CHUNK];
        let mut done = 0u64;
        let (file, start) = self.source.open(entry).map_err(|e| e.to_string())?;
        while done < entry.size {
            let n = usize::try_from((entry.size - done).min(CHUNK as u64)).unwrap_or(CHUNK);
            file.read_exact_at(&mut buf[..n], start + done)
                .map_err(|e| e.to_string())?;
            hasher.update(&buf[..n]);
            done += n as u64;
        }
        Ok(hex_digest(&hasher.finalize()))
    }

    /// The archive's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// OCI layout or `docker save`.
    pub fn format(&self) -> ArchiveFormat {
        self.format
    }

    /// The images, in the archive's order.
    pub fn images(&self) -> &[ArchiveImage] {
        &self.images
    }

    /// One line per image: its name (or `(no name)`) and digest, each [`printable`].
    pub fn listing(&self) -> String {
        self.images
            .iter()
            .map(|i| {
                format!(
                    "{} {}\n",
                    printable(i.name.as_deref().unwrap_or("(no name)")),
                    printable(&i.digest)
                )
            })
            .collect()
    }

    /// The extra files (under `snowctl/manifests/`), by their path below it, sorted.
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = self
            .entries
            .keys()
            .filter_map(|n| n.strip_prefix(FILES_DIR))
            .map(str::to_owned)
            .collect();
        files.sort();
        files
    }

    /// An extra file (its path below `snowctl/manifests/`), or any file of the archive with an
    /// absolute-looking `/` first; `None` when it is not there. At most [`JSON_MAX`] bytes.
    pub fn file(&self, path: &str) -> Option<Result<Vec<u8>, String>> {
        let name = match path.strip_prefix('/') {
            Some(whole) => tar::normalize(whole),
            None => format!("{FILES_DIR}{}", tar::normalize(path)),
        };
        let entry = self.entry(&name)?;
        Some(self.read_entry(entry, JSON_MAX))
    }

    /// The release manifests `snowctl download artifacts` stores beside the images: the Bundles
    /// manifest (`bundles.yaml`) and the EKS-D Release manifests (`eksd/<file>`, by file name),
    /// as [`release_files`] writes them, what offline commands read instead of the embedded catalog. An archive without
    /// `bundles.yaml` (e.g. a `docker save` archive) is an error that says so.
    pub fn release_manifests(&self) -> Result<(String, Vec<(String, String)>), String> {
        let text = |path: &str| -> Result<String, String> {
            let bytes = self.file(path).ok_or_else(|| {
                format!(
                    "{} holds no {FILES_DIR}{path}: pass an archive of a download of the artifacts (release files and images)",
                    self.path.display()
                )
            })??;
            String::from_utf8(bytes).map_err(|_| format!("{FILES_DIR}{path} is not UTF-8 text"))
        };
        let bundles = text(BUNDLES_FILE)?;
        let eksd = (self.files().into_iter())
            .filter(|f| f.starts_with(EKSD_DIR))
            .map(|f| Ok((f.clone(), text(&f)?)))
            .collect::<Result<_, String>>()?;
        Ok((bundles, eksd))
    }

    /// The Helm chart stored as the OCI artifact named `uri` (as `helm push` writes it: a
    /// manifest whose layer is the chart's `.tgz`, media type
    /// `application/vnd.cncf.helm.chart.content.v1.tar+gzip`): the `.tgz` bytes, their digest
    /// checked. At most [`JSON_MAX`] bytes.
    pub fn helm_chart(&self, uri: &str) -> Result<Vec<u8>, ArchiveError> {
        let fail = |message: String| ArchiveError::Chart {
            path: self.path.clone(),
            chart: uri.to_owned(),
            message,
        };
        let image = (self.images.iter())
            .find(|i| i.name.as_deref() == Some(uri))
            .ok_or_else(|| {
                fail(format!(
                    "is not in the archive: download the artifacts again with the Bundles that name it (a download stores every image of the selected Kubernetes versions, the chart among them){}",
                    self.truncation_note()
                ))
            })?;
        let body = self.manifest(&image.digest).map_err(&fail)?;
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| fail(format!("has a manifest that is not JSON: {e}")))?;
        let layer = (manifest.get("layers").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .find(|l| {
                matches!(
                    l.get("mediaType").and_then(Value::as_str),
                    Some(HELM_CHART_LAYER | "application/tar+gzip")
                )
            })
            .ok_or_else(|| {
                fail(format!(
                    "is not a Helm chart: its manifest {} has no {HELM_CHART_LAYER} layer",
                    image.digest
                ))
            })?;
        let digest = (layer.get("digest").and_then(Value::as_str))
            .ok_or_else(|| fail("has a chart layer without a digest".into()))?;
        let entry = self.blob_entry(digest).map_err(&fail)?;
        let bytes = self.read_entry(entry, JSON_MAX).map_err(&fail)?;
        let got = sha256(&bytes);
        if got != digest {
            return Err(fail(format!(
                "layer {digest}: its bytes in the archive hash to {got} (the archive is corrupt)"
            )));
        }
        Ok(bytes)
    }

    /// Why blobs may be missing: the archive is cut short (when it is).
    fn truncation_note(&self) -> String {
        self.truncated
            .as_ref()
            .map(|t| format!(" ({t})"))
            .unwrap_or_default()
    }

    fn blob_entry(&self, digest: &str) -> Result<&Entry, String> {
        let name = match self.blob_paths.get(digest) {
            Some(path) => path.clone(),
            None => {
                let (alg, hex) = digest
                    .split_once(':')
                    .ok_or_else(|| format!("`{digest}` is not a digest"))?;
                format!("blobs/{alg}/{hex}")
            }
        };
        self.entry(&name).ok_or_else(|| {
            format!(
                "blob {digest} is not in the archive{}",
                self.truncation_note()
            )
        })
    }

    /// Where the bytes of a blob (a layer, a config, a manifest or an index) are, to be read
    /// by offset without unpacking the archive (a server answers a request from it); `None`
    /// when the archive does not hold it. The bytes are not hashed here: a reader that needs
    /// them checked hashes what it reads.
    pub fn blob_bytes(&self, digest: &str) -> Option<BlobBytes> {
        if let Some(body) = self.made.get(digest) {
            return Some(BlobBytes {
                at: At::Memory(body.clone()),
            });
        }
        let entry = self.blob_entry(digest).ok()?;
        let at = match &self.source {
            Source::Tar(file) => At::Tar {
                file: file.clone(),
                offset: entry.offset,
                size: entry.size,
            },
            Source::Dir(root) => At::File {
                path: root.join(&entry.name),
                size: entry.size,
            },
        };
        Some(BlobBytes { at })
    }

    /// A manifest or index (at most [`JSON_MAX`] bytes), its digest checked.
    pub fn manifest(&self, digest: &str) -> Result<bytes::Bytes, String> {
        if let Some(body) = self.made.get(digest) {
            return Ok(body.clone());
        }
        let entry = self.blob_entry(digest)?;
        let body = self.read_entry(entry, JSON_MAX)?;
        let got = sha256(&body);
        if got != digest {
            return Err(format!(
                "manifest {digest}: its bytes in the archive hash to {got} (the archive is corrupt)"
            ));
        }
        Ok(bytes::Bytes::from(body))
    }

    /// The size of a blob in the archive.
    pub(crate) fn blob_size(&self, digest: &str) -> Result<u64, String> {
        Ok(self.blob_entry(digest)?.size)
    }

    /// A blob as a stream of chunks. The digest is checked as the last chunk is read: a mismatch
    /// ends the stream with an error (so an upload of it is never committed) and is kept in
    /// `failure` to be reported.
    pub(crate) fn blob_stream(
        &self,
        digest: &str,
        failure: Arc<Mutex<Option<String>>>,
    ) -> Result<
        impl futures_util::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static,
        String,
    > {
        use sha2::Digest as _;
        let entry = self.blob_entry(digest)?.clone();
        let (file, base) = (self.source.open(&entry))
            .map_err(|e| format!("blob {digest}: reading {}: {e}", entry.name))?;
        let digest = digest.to_owned();
        struct St {
            done: u64,
            hasher: Option<sha2::Sha256>,
        }
        let start = St {
            done: 0,
            hasher: Some(sha2::Sha256::new()),
        };
        Ok(futures_util::stream::unfold(start, move |mut st| {
            let file = file.clone();
            let entry = entry.clone();
            let digest = digest.clone();
            let failure = failure.clone();
            async move {
                let mut hasher = st.hasher.take()?;
                if st.done == entry.size && entry.size > 0 {
                    return None;
                }
                let n = usize::try_from((entry.size - st.done).min(CHUNK as u64)).unwrap_or(CHUNK);
                let mut buf = vec![0u8; n];
                if let Err(e) = file.read_exact_at(&mut buf, base + st.done) {
                    return Some((Err(e), st));
                }
                hasher.update(&buf);
                st.done += n as u64;
                if st.done < entry.size {
                    st.hasher = Some(hasher);
                    return Some((Ok(bytes::Bytes::from(buf)), st));
                }
                // The last chunk: checked before it is sent, so a corrupt blob never reaches its
                // end (an HTTP body of known length is not polled past its last byte).
                let got = hex_digest(&hasher.finalize());
                if got == digest {
                    return Some((Ok(bytes::Bytes::from(buf)), st));
                }
                let message = format!(
                    "blob {digest}: its bytes in the archive hash to {got} (the archive is corrupt)"
                );
                if let Ok(mut f) = failure.lock() {
                    *f = Some(message.clone());
                }
                Some((Err(std::io::Error::other(message)), st))
            }
        }))
    }
}

/// Whether a media type is an index; re-exported for the import.
pub(crate) fn index_media(media: &str, body: &[u8]) -> bool {
    is_index(media)
        || serde_json::from_slice::<Value>(body)
            .map(|v| is_index(&media_type(&v)))
            .unwrap_or(false)
}
