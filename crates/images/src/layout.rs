//! Writing an OCI image layout inside one tar archive, resumably.
//!
//! # The archive
//! ```text
//! oci-layout                       {"imageLayoutVersion":"1.0.0"}, always the first entry
//! blobs/sha256/<hex>               every blob once: layers, configs, manifests, indexes
//! snowctl/manifests/<path>         extra files (Bundles, EKS-D releases, components, …)
//! snowctl/archive.json             what snowctl wrote: images, digests, platforms, files
//! index.json                       one entry per image, `org.opencontainers.image.ref.name`
//!                                  (and `io.containerd.image.name`) = the image's full URI
//! (two zero blocks)
//! ```
//! A plain tar of an OCI layout: `skopeo copy oci-archive:FILE:URI …`, `tar -x` then `oci:DIR`,
//! `ctr images import` read it.
//!
//! # Resuming
//! While it is written the archive is `FILE.partial`, an append-only tar. Each blob gets a region
//! (header and data, its size known from its descriptor) at the end of the file when it starts;
//! the region's header first names it `snowctl/pending/sha256/<hex>`, and only once every byte is
//! written and the digest checked is the header rewritten in place to `blobs/sha256/<hex>`. So
//! several blobs stream at once, each into its own region, and the file never holds a blob under
//! its final name that was not verified.
//!
//! Re-run after an interruption (Ctrl-C, a network failure, a full disk), the writer reads the
//! headers of `FILE.partial` (not its data): finished blobs are skipped, pending regions are
//! filled again by the blob they were reserved for, and a torn tail (an entry cut short) is cut
//! off. So a re-run fetches only the blobs that are missing (a blob cut in the middle is fetched
//! again whole). The end (extra files, `snowctl/archive.json`, `index.json`) is written only when
//! every image is in; then `FILE.partial` is renamed to `FILE`. A finished `FILE` run again is
//! reopened the same way: its end is cut off, blobs already in it are kept, and the new end is
//! written. A region whose blob is no longer wanted stays as `snowctl/unused/sha256/<hex>`
//! (readers ignore it). Interruptions are safe; a power loss may leave a blob whose bytes did not
//! reach the disk, which the import's digest check catches.
//!
//! A full disk (ENOSPC, or EDQUOT) is such an interruption: the write that fails leaves its
//! region pending, the blobs not yet started are not fetched, and the download ends with
//! [`DownloadError::DiskFull`] naming `FILE.partial`. Once there is room (space freed, or
//! `FILE.partial` moved to another disk and the download given the same name there without
//! `.partial`) the same download resumes it.

use crate::{download::DownloadError, registry::hex_digest, tar};
use serde::Serialize;
use serde_json::{Value, json};
use std::{
    collections::HashMap,
    fs::{File, OpenOptions},
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

/// Where extra files go in the archive: `snowctl/manifests/<path>`.
pub const FILES_DIR: &str = "snowctl/manifests/";
/// What snowctl wrote, as JSON.
pub const ARCHIVE_JSON: &str = "snowctl/archive.json";
const PENDING_DIR: &str = "snowctl/pending/";
const UNUSED_DIR: &str = "snowctl/unused/";
const OCI_LAYOUT: &[u8] = br#"{"imageLayoutVersion":"1.0.0"}"#;

/// An extra file for the archive, stored at `snowctl/manifests/<path>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// The path under `snowctl/manifests/`, e.g. `bundles.yaml`, `eksd/kubernetes-1-33-eks-9.yaml`.
    pub path: String,
    /// The content.
    pub content: Vec<u8>,
}

/// An image of the archive's `index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    /// The full image URI (the ref name).
    pub image: String,
    /// The manifest or index media type.
    pub media_type: String,
    /// Its digest.
    pub digest: String,
    /// Its size.
    pub size: u64,
}

/// The finished archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveSummary {
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Images in `index.json`.
    pub images: usize,
    /// Distinct blobs the images use (manifests and indexes included).
    pub blobs: usize,
    /// Their bytes: the archive is this plus tar headers and the small files.
    pub blob_bytes: u64,
    /// Extra files.
    pub files: usize,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Done { size: u64 },
    Pending { header_offset: u64, size: u64 },
}

struct State {
    end: u64,
    slots: HashMap<String, Slot>,
}

/// What [`Writer::blob`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrote {
    /// The archive already had the blob.
    Had,
    /// The blob was written: so many bytes.
    Bytes(u64),
}

/// Why [`Writer::open`] failed, before it is said as a [`DownloadError`].
enum OpenFail {
    Io(DownloadError),
    Message(String),
}

impl From<String> for OpenFail {
    fn from(message: String) -> Self {
        OpenFail::Message(message)
    }
}

/// The writer of `FILE.partial`.
pub(crate) struct Writer {
    file: File,
    partial: PathBuf,
    output: PathBuf,
    state: Mutex<State>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Set when a write failed because the filesystem is full (or the quota reached).
    disk_full: AtomicBool,
}

fn hex_of(digest: &str) -> Result<&str, String> {
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| format!("digest {digest}: only sha256 digests are supported"))?;
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(format!("`{digest}` is not a sha256 digest"));
    }
    Ok(hex)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("{what} {}: {e}", path.display())
}

/// ENOSPC or EDQUOT: the filesystem has no room (for this user) left.
pub(crate) fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// The error of a failed write to the partial archive: [`DownloadError::DiskFull`] when the
/// filesystem is full, else what failed.
fn write_error(what: &str, partial: &Path, e: std::io::Error) -> DownloadError {
    if is_disk_full(&e) {
        DownloadError::DiskFull {
            partial: partial.to_owned(),
        }
    } else {
        DownloadError::Open {
            message: io_error(what, partial, e),
        }
    }
}

/// Whether `path` is a regular file (`false`: nothing there). A link, FIFO, device or directory
/// is refused: the archive is never written through one, nor read from one.
fn regular_file(path: &Path) -> Result<bool, OpenFail> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => Ok(true),
        Ok(_) => Err(OpenFail::Message(format!(
            "{} is not a regular file (a link, FIFO, device or directory); snowctl does not write through it: remove it or choose another output",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(OpenFail::Message(io_error("cannot read", path, e))),
    }
}

/// Whether the open `file` is what is at `path` now, not a link put there since it was looked at.
fn same_file(file: &File, path: &Path) -> Result<(), OpenFail> {
    use std::os::unix::fs::MetadataExt;
    let opened = file
        .metadata()
        .map_err(|e| io_error("cannot read", path, e))?;
    let there = std::fs::symlink_metadata(path).map_err(|e| io_error("cannot read", path, e))?;
    if (opened.dev(), opened.ino()) != (there.dev(), there.ino()) || !there.file_type().is_file() {
        return Err(OpenFail::Message(format!(
            "{} changed while snowctl opened it; run the download again",
            path.display()
        )));
    }
    Ok(())
}

/// `FILE.partial` beside `FILE`.
pub fn partial_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    output.with_file_name(name)
}

impl Writer {
    /// Opens `output.partial` to resume it, or reopens a finished `output` written by snowctl,
    /// or starts a new one. Another writer of the same file is refused (a file lock).
    pub(crate) fn open(output: &Path) -> Result<Writer, DownloadError> {
        Self::open_inner(output).map_err(|e| match e {
            OpenFail::Io(e) => e,
            OpenFail::Message(message) => DownloadError::Open { message },
        })
    }

    fn open_inner(output: &Path) -> Result<Writer, OpenFail> {
        let partial = partial_path(output);
        let (output_there, existed) = (regular_file(output)?, regular_file(&partial)?);
        if output_there && existed {
            return Err(OpenFail::Message(format!(
                "{} exists beside {}: remove the one you do not want (the partial archive to start over, or the other file), then run the download again",
                output.display(),
                partial.display()
            )));
        }
        if output_there {
            let file = File::open(output).map_err(|e| io_error("cannot open", output, e))?;
            let length = file
                .metadata()
                .map_err(|e| io_error("cannot read", output, e))?
                .len();
            let scan = tar::scan(&file, length, crate::limits::MAX_ARCHIVE_ENTRIES)
                .map_err(|e| io_error("cannot read", output, e))?;
            let ours = scan.entries.first().is_some_and(|e| e.name == "oci-layout")
                && scan.entries.iter().any(|e| e.name == ARCHIVE_JSON);
            if !ours {
                return Err(OpenFail::Message(format!(
                    "{} exists and was not written by snowctl: remove it or choose another output",
                    output.display()
                )));
            }
            std::fs::rename(output, &partial).map_err(|e| io_error("cannot rename", output, e))?;
        }
        let existed = existed || output_there;
        // A new partial file is created exclusively (O_EXCL does not follow a link planted
        // meanwhile); an existing one must still be the regular file looked at above.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(!existed)
            .open(&partial)
            .map_err(|e| OpenFail::Io(write_error("cannot open", &partial, e)))?;
        if existed {
            same_file(&file, &partial)?;
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(OpenFail::Message(format!(
                    "{} is being written by another process",
                    partial.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(OpenFail::Message(io_error("cannot lock", &partial, e)));
            }
        }
        let mut state = State {
            end: 0,
            slots: HashMap::new(),
        };
        let length = file
            .metadata()
            .map_err(|e| io_error("cannot read", &partial, e))?
            .len();
        if existed && length > 0 {
            let scan = tar::scan(&file, length, crate::limits::MAX_ARCHIVE_ENTRIES)
                .map_err(|e| io_error("cannot read", &partial, e))?;
            if scan.entries.first().map(|e| e.name.as_str()) != Some("oci-layout") {
                return Err(OpenFail::Message(format!(
                    "{} was not written by snowctl (it does not start with oci-layout): remove it",
                    partial.display()
                )));
            }
            let mut end = match scan.end {
                tar::End::Marker(o)
                | tar::End::Eof(o)
                | tar::End::BadHeader(o)
                | tar::End::TooMany(o) => o,
                tar::End::Truncated { header_offset, .. } => header_offset,
            };
            for entry in &scan.entries {
                let blob = entry.name.strip_prefix("blobs/sha256/");
                let pending = entry
                    .name
                    .strip_prefix(PENDING_DIR)
                    .or_else(|| entry.name.strip_prefix(UNUSED_DIR))
                    .and_then(|n| n.strip_prefix("sha256/"));
                if entry.name == "oci-layout" {
                    continue;
                } else if let Some(hex) = blob {
                    state
                        .slots
                        .insert(format!("sha256:{hex}"), Slot::Done { size: entry.size });
                } else if let Some(hex) = pending {
                    state.slots.insert(
                        format!("sha256:{hex}"),
                        Slot::Pending {
                            header_offset: entry.header_offset,
                            size: entry.size,
                        },
                    );
                } else {
                    // The end of a finished archive (or of a finish cut short): written anew.
                    end = entry.header_offset;
                    break;
                }
            }
            state.end = end;
            file.set_len(end)
                .map_err(|e| io_error("cannot truncate", &partial, e))?;
        } else {
            let header = tar::file_header("oci-layout", OCI_LAYOUT.len() as u64)?;
            let write = |bytes: &[u8], offset: u64| {
                file.write_all_at(bytes, offset)
                    .map_err(|e| OpenFail::Io(write_error("cannot write", &partial, e)))
            };
            write(&header, 0)?;
            write(OCI_LAYOUT, tar::BLOCK)?;
            state.end = tar::BLOCK + tar::padded(OCI_LAYOUT.len() as u64);
            file.set_len(state.end)
                .map_err(|e| OpenFail::Io(write_error("cannot write", &partial, e)))?;
        }
        Ok(Writer {
            file,
            partial,
            output: output.to_owned(),
            state: Mutex::new(state),
            locks: Mutex::default(),
            disk_full: AtomicBool::new(false),
        })
    }

    /// Puts the finished partial file at the output path, never over a file there (one made
    /// since the download began is not ours): a hard link, which fails when the name exists,
    /// then the partial name removed. A filesystem without hard links (FAT) gets a rename after
    /// a look that the name is free.
    fn place(&self) -> Result<(), String> {
        let exists = || {
            format!(
                "{} appeared while the archive was written; the archive is kept as {}: move that file away and run the download again",
                self.output.display(),
                self.partial.display()
            )
        };
        match std::fs::hard_link(&self.partial, &self.output) {
            Ok(()) => std::fs::remove_file(&self.partial)
                .map_err(|e| io_error("cannot remove", &self.partial, e)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
            Err(_) => {
                if std::fs::symlink_metadata(&self.output).is_ok() {
                    return Err(exists());
                }
                std::fs::rename(&self.partial, &self.output)
                    .map_err(|e| io_error("cannot rename", &self.partial, e))
            }
        }
    }

    /// The partial file.
    pub(crate) fn partial(&self) -> &Path {
        &self.partial
    }

    /// Whether a write failed because the filesystem is full.
    pub(crate) fn disk_full(&self) -> bool {
        self.disk_full.load(Ordering::SeqCst)
    }

    /// Writes at `offset` of the partial file; a full filesystem is remembered
    /// ([`Writer::disk_full`]) and said in the error.
    fn write_at(&self, bytes: &[u8], offset: u64) -> Result<(), String> {
        self.file
            .write_all_at(bytes, offset)
            .map_err(|e| self.io_failure("cannot write", e))
    }

    /// What an IO error on the partial file says; a full filesystem is remembered.
    fn io_failure(&self, what: &str, e: std::io::Error) -> String {
        if is_disk_full(&e) {
            self.disk_full.store(true, Ordering::SeqCst);
            format!("{what} {}: the disk is full ({e})", self.partial.display())
        } else {
            io_error(what, &self.partial, e)
        }
    }

    /// Whether the archive has the blob (finished).
    pub(crate) fn has(&self, digest: &str) -> bool {
        self.state
            .lock()
            .map(|s| matches!(s.slots.get(digest), Some(Slot::Done { .. })))
            .unwrap_or(false)
    }

    /// Writes one blob of `size` bytes unless the archive has it: `fetch` gives its bytes as a
    /// stream of chunks, `on_bytes` hears of each chunk written. The digest is checked before the
    /// blob gets its final name.
    pub(crate) async fn blob<F, Fut, S, E>(
        &self,
        digest: &str,
        size: u64,
        fetch: F,
        on_bytes: impl Fn(u64),
    ) -> Result<Wrote, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<S, String>>,
        S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
        E: std::fmt::Display,
    {
        use futures_util::StreamExt as _;
        use sha2::Digest as _;
        let hex = hex_of(digest)?.to_owned();
        let lock = {
            let mut locks = self.locks.lock().map_err(|_| "lock table poisoned")?;
            locks.entry(digest.to_owned()).or_default().clone()
        };
        let _guard = lock.lock().await;
        let header_offset = {
            let mut state = self.state.lock().map_err(|_| "archive state poisoned")?;
            match state.slots.get(digest).copied() {
                Some(Slot::Done { size: had }) if had == size => return Ok(Wrote::Had),
                Some(Slot::Done { size: had }) => {
                    return Err(format!(
                        "blob {digest}: the archive holds {had} bytes, the manifest says {size}"
                    ));
                }
                Some(Slot::Pending {
                    header_offset,
                    size: reserved,
                }) if reserved == size => header_offset,
                _ => {
                    // A new region at the end; its header is written before the lock is let go,
                    // so no later region can precede a missing header.
                    let header_offset = state.end;
                    let header = tar::file_header(&format!("{PENDING_DIR}sha256/{hex}"), size)?;
                    self.write_at(&header, header_offset)?;
                    state.end = header_offset + tar::BLOCK + tar::padded(size);
                    state.slots.insert(
                        digest.to_owned(),
                        Slot::Pending {
                            header_offset,
                            size,
                        },
                    );
                    header_offset
                }
            }
        };
        let data = header_offset + tar::BLOCK;
        let mut stream = std::pin::pin!(fetch().await?);
        let mut hasher = sha2::Sha256::new();
        let mut written = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("blob {digest}: {e}"))?;
            let n = chunk.len() as u64;
            if written + n > size {
                return Err(format!(
                    "blob {digest}: more than the {size} bytes its descriptor says"
                ));
            }
            self.write_at(&chunk, data + written)?;
            hasher.update(&chunk);
            written += n;
            on_bytes(n);
        }
        if written != size {
            return Err(format!(
                "blob {digest}: {written} bytes received, its descriptor says {size}"
            ));
        }
        let got = hex_digest(&hasher.finalize());
        if got != digest {
            return Err(format!(
                "blob {digest}: the bytes received hash to {got} (corrupted in transit or at the source)"
            ));
        }
        let pad = tar::padded(size) - size;
        if pad > 0 {
            self.write_at(&vec![0u8; pad as usize], data + size)?;
        }
        let header = tar::file_header(&format!("blobs/sha256/{hex}"), size)?;
        self.write_at(&header, header_offset)?;
        if let Ok(mut state) = self.state.lock() {
            state.slots.insert(digest.to_owned(), Slot::Done { size });
        }
        Ok(Wrote::Bytes(size))
    }

    /// Writes bytes held in memory (a manifest or index) as a blob.
    pub(crate) async fn bytes(&self, digest: &str, body: bytes::Bytes) -> Result<Wrote, String> {
        let size = body.len() as u64;
        self.blob(
            digest,
            size,
            || async move { Ok::<_, String>(futures_util::stream::iter([Ok::<_, String>(body)])) },
            |_| {},
        )
        .await
    }

    /// Writes the end (extra files, `snowctl/archive.json`, `index.json`, the end marker) and
    /// renames `FILE.partial` to `FILE`. `blobs` are the digests and sizes the images use.
    pub(crate) fn finish(
        self,
        images: &[IndexEntry],
        blobs: &HashMap<String, u64>,
        files: &[ArchiveFile],
        platforms: &str,
    ) -> Result<ArchiveSummary, DownloadError> {
        self.finish_inner(images, blobs, files, platforms)
            .map_err(|message| match self.disk_full() {
                true => DownloadError::DiskFull {
                    partial: self.partial.clone(),
                },
                false => DownloadError::Finish {
                    message,
                    partial: self.partial.clone(),
                },
            })
    }

    fn finish_inner(
        &self,
        images: &[IndexEntry],
        blobs: &HashMap<String, u64>,
        files: &[ArchiveFile],
        platforms: &str,
    ) -> Result<ArchiveSummary, String> {
        let mut state = self.state.lock().map_err(|_| "archive state poisoned")?;
        for (digest, slot) in &state.slots {
            if let Slot::Pending {
                header_offset,
                size,
            } = slot
            {
                let hex = hex_of(digest)?;
                let header = tar::file_header(&format!("{UNUSED_DIR}sha256/{hex}"), *size)?;
                self.write_at(&header, *header_offset)?;
            }
        }
        let mut append = |name: &str, content: &[u8]| -> Result<(), String> {
            let header = tar::file_header(name, content.len() as u64)?;
            self.write_at(&header, state.end)?;
            self.write_at(content, state.end + tar::BLOCK)?;
            state.end += tar::BLOCK + tar::padded(content.len() as u64);
            Ok(())
        };
        let mut file_names = Vec::new();
        for f in files {
            let path = tar::normalize(&f.path);
            if path.is_empty() || path.split('/').any(|p| p == "..") {
                return Err(format!("`{}` is not a relative file path", f.path));
            }
            append(&format!("{FILES_DIR}{path}"), &f.content)?;
            file_names.push(path);
        }
        let mut sorted: Vec<&IndexEntry> = images.iter().collect();
        sorted.sort_by(|a, b| a.image.cmp(&b.image));
        let about = json!({
            "snowctlArchive": 1,
            "platforms": platforms,
            "images": sorted,
            "files": file_names,
        });
        append(
            ARCHIVE_JSON,
            &serde_json::to_vec_pretty(&about).map_err(|e| e.to_string())?,
        )?;
        let manifests: Vec<Value> = sorted
            .iter()
            .map(|i| {
                json!({
                    "mediaType": i.media_type,
                    "digest": i.digest,
                    "size": i.size,
                    "annotations": {
                        "org.opencontainers.image.ref.name": i.image,
                        "io.containerd.image.name": i.image,
                    }
                })
            })
            .collect();
        let index = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": manifests,
        });
        append(
            "index.json",
            &serde_json::to_vec(&index).map_err(|e| e.to_string())?,
        )?;
        self.write_at(&[0u8; 1024], state.end)?;
        let length = state.end + 1024;
        self.file
            .set_len(length)
            .map_err(|e| self.io_failure("cannot write", e))?;
        self.file
            .sync_all()
            .map_err(|e| self.io_failure("cannot sync", e))?;
        self.place()?;
        Ok(ArchiveSummary {
            path: self.output.clone(),
            bytes: length,
            images: images.len(),
            blobs: blobs.len(),
            blob_bytes: blobs.values().sum(),
            files: files.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_error(output: &Path) -> String {
        match Writer::open(output) {
            Ok(_) => panic!("{} opened", output.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_link_at_either_name_is_refused_and_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("out.tar");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me\n").unwrap();
        std::os::unix::fs::symlink(&victim, partial_path(&output)).unwrap();
        let err = open_error(&output);
        assert!(
            err.contains("out.tar.partial is not a regular file"),
            "{err}"
        );
        std::fs::remove_file(partial_path(&output)).unwrap();
        std::os::unix::fs::symlink(&victim, &output).unwrap();
        let err = open_error(&output);
        assert!(err.contains("out.tar is not a regular file"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    }

    #[test]
    fn a_foreign_output_is_kept_alone_or_beside_a_partial_archive() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("out.tar");
        std::fs::write(&output, b"").unwrap();
        let err = open_error(&output);
        assert!(err.contains("was not written by snowctl"), "{err}");
        // A partial archive of ours beside it: still not replaced.
        drop(Writer::open(&dir.path().join("other.tar")).unwrap());
        std::fs::rename(dir.path().join("other.tar.partial"), partial_path(&output)).unwrap();
        let err = open_error(&output);
        assert!(err.contains("out.tar exists beside"), "{err}");
        assert_eq!(std::fs::read(&output).unwrap(), b"");
    }

    #[test]
    fn the_finished_archive_never_replaces_a_file_that_appeared_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("out.tar");
        let writer = Writer::open(&output).unwrap();
        std::fs::write(&output, b"theirs").unwrap();
        let err = writer.place().unwrap_err();
        assert!(
            err.contains("appeared while the archive was written"),
            "{err}"
        );
        assert_eq!(std::fs::read(&output).unwrap(), b"theirs");
        assert!(partial_path(&output).exists());
        std::fs::remove_file(&output).unwrap();
        writer.place().unwrap();
        assert!(output.exists() && !partial_path(&output).exists());
    }
}
