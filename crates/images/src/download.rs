//! Registry → archive: every image of a list into one OCI-layout tar ([`crate::layout`]),
//! streamed, digests verified, resumable.

use crate::{
    ImagesError,
    archive::{Archive, index_media},
    copy::{CopyReport, Credentials, ImageCopy, ImageResult, ImageStatus, Progress},
    layout::{ArchiveFile, ArchiveSummary, IndexEntry, Writer, Wrote},
    limits::CopyLimits,
    list::repository_path,
    platform::{Platforms, ReducedIndex, reduce_index},
    registry::{
        Connection, Registries, Tally, is_index, manifest_blobs, media_type, past_deadline,
        registry_error, sha256,
    },
};
use futures_util::{StreamExt, stream};
use oci_client::{Reference, RegistryOperation, manifest::OciDescriptor};
use serde::Serialize;
use serde_json::Value;
use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Instant,
};

/// How to download.
#[derive(Debug, Clone)]
pub struct DownloadConfig {
    /// The archive to write (`FILE.partial` while it is written).
    pub output: PathBuf,
    /// A mirror that holds the images under the same repository paths (default: each image's
    /// own registry).
    pub source_registry: Option<String>,
    /// The platforms kept of multi-platform images (default linux/amd64).
    pub platforms: Platforms,
    /// Images downloaded at once.
    pub concurrency: usize,
    /// Extra trusted CA certificates (PEM).
    pub ca_certs_pem: Vec<Vec<u8>>,
    /// Registry hosts spoken to over plain HTTP.
    pub plain_http: Vec<String>,
    /// Credentials by registry host.
    pub credentials: Credentials,
    /// Extra files stored under `snowctl/manifests/`.
    pub files: Vec<ArchiveFile>,
    /// Images taken from image archives instead of registries (the controller image that
    /// `snowctl build controller-image` writes), downloaded after the plan's images.
    pub from_archives: Vec<FromArchive>,
}

impl DownloadConfig {
    /// Writing `output` with the default settings (each image's own registry, linux/amd64, no
    /// extra CA, credentials or image archives) and `files` under `snowctl/manifests/`.
    pub fn new(output: PathBuf, files: Vec<ArchiveFile>) -> DownloadConfig {
        DownloadConfig {
            output,
            source_registry: None,
            platforms: Platforms::default(),
            concurrency: 1,
            ca_certs_pem: Vec::new(),
            plain_http: Vec::new(),
            credentials: Credentials::default(),
            files,
            from_archives: Vec::new(),
        }
    }
}

/// An image of an image archive to put into the download under its name there: it is built, not
/// published in a registry (the snowctl controller's image).
#[derive(Debug, Clone)]
pub struct FromArchive {
    /// The archive, opened.
    pub archive: Arc<Archive>,
    /// The image's name in it (and in the download).
    pub name: String,
}

impl FromArchive {
    /// The image `name` of `archive`, or an error when the archive has no image of that name.
    pub fn new(archive: Arc<Archive>, name: &str) -> Result<FromArchive, ImagesError> {
        if !archive
            .images()
            .iter()
            .any(|i| i.name.as_deref() == Some(name))
        {
            return Err(ImagesError::NotInArchive {
                image: name.to_owned(),
                archive: archive.path().display().to_string(),
            });
        }
        Ok(FromArchive {
            archive,
            name: name.to_owned(),
        })
    }

    /// Its entry in a download's report: from `ARCHIVE#NAME`, named `NAME`.
    fn copy(&self) -> ImageCopy {
        ImageCopy {
            image: self.name.clone(),
            source: format!("{}#{}", self.archive.path().display(), self.name),
            target: self.name.clone(),
        }
    }
}

/// Why a download did not finish its archive. The partial file (`FILE.partial`) is kept in
/// every case but [`DownloadError::Open`], and the same download run again resumes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownloadError {
    /// The archive could not be opened or started (a file snowctl did not write, another
    /// process writing it, an IO error).
    #[error("{message}")]
    Open {
        /// What went wrong, with the path.
        message: String,
    },
    /// The filesystem holding the archive has no space left (ENOSPC, or the quota is reached).
    #[error(
        "no space left on the disk holding {}: the partial archive is kept; free space there (or move it to a disk with room and write the archive there, under the same name without `.partial`), then run the same download again: it resumes and fetches only what is missing",
        partial.display()
    )]
    DiskFull {
        /// The partial archive.
        partial: PathBuf,
    },
    /// Some images could not be downloaded (the report says which and why).
    #[error(
        "{failed} image(s) failed: the archive is not finished; {} is kept and a re-run resumes it",
        partial.display()
    )]
    ImagesFailed {
        /// How many.
        failed: usize,
        /// The partial archive.
        partial: PathBuf,
    },
    /// Every image is in, but writing the archive's end failed.
    #[error("{message}; {} is kept and a re-run resumes it", partial.display())]
    Finish {
        /// What went wrong.
        message: String,
        /// The partial archive.
        partial: PathBuf,
    },
}

fn display<S: serde::Serializer>(
    error: &Option<DownloadError>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match error {
        Some(e) => serializer.serialize_some(&e.to_string()),
        None => serializer.serialize_none(),
    }
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DownloadReport {
    /// One per image, in plan order (`Copied`: something was written to the archive;
    /// `UpToDate`: the archive had every blob).
    pub report: CopyReport,
    /// The finished archive, when every image is in it.
    pub archive: Option<ArchiveSummary>,
    /// Why the archive was not finished (images failed, the disk is full, writing its end
    /// failed); the partial file is kept, and a re-run resumes it. Serialized as its message.
    #[serde(serialize_with = "display")]
    pub error: Option<DownloadError>,
}

impl std::fmt::Display for DownloadReport {
    /// The summary: images downloaded, already in the archive and failed; the archive's size,
    /// distinct blobs and their bytes; the failed images.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: u64| format!("{:.1} MB", b as f64 / 1_000_000.0);
        let r = &self.report;
        writeln!(
            f,
            "{} image(s): {} downloaded, {} already in the archive, {} failed; {} blob(s), {} in {:.1} s",
            r.images.len(),
            r.copied(),
            r.up_to_date(),
            r.failed(),
            r.blobs_copied(),
            mb(r.bytes()),
            r.seconds
        )?;
        if let Some(a) = &self.archive {
            writeln!(
                f,
                "archive {}: {}, {} image(s), {} distinct blob(s) of {}, {} file(s)",
                a.path.display(),
                mb(a.bytes),
                a.images,
                a.blobs,
                mb(a.blob_bytes),
                a.files
            )?;
        }
        for failed in r
            .images
            .iter()
            .filter(|i| matches!(i.status, ImageStatus::Failed { .. }))
        {
            writeln!(f, "failed: {}", failed.copy.image)?;
        }
        Ok(())
    }
}

/// Source references for each image URI (`--source-registry` replaces the registry host); the
/// target is the image URI itself, its name in the archive.
pub fn plan_download(
    images: &[String],
    source_registry: Option<&str>,
) -> Result<Vec<ImageCopy>, ImagesError> {
    images
        .iter()
        .map(|uri| {
            let (path, tag) = repository_path(uri);
            let tag = tag
                .filter(|t| !t.is_empty())
                .ok_or_else(|| ImagesError::Untagged { image: uri.clone() })?;
            let source = match source_registry {
                Some(host) => format!("{}/{path}:{tag}", host.trim_end_matches('/')),
                None => uri.clone(),
            };
            source
                .parse::<Reference>()
                .map_err(|e| ImagesError::InvalidReference {
                    reference: source.clone(),
                    message: e.to_string(),
                })?;
            Ok(ImageCopy {
                image: uri.clone(),
                source,
                target: uri.clone(),
            })
        })
        .collect()
}

struct Engine {
    reg: Registries,
    writer: Writer,
    platforms: Platforms,
    progress: Arc<dyn Progress>,
    /// Every blob the images use: digest → size.
    used: Mutex<HashMap<String, u64>>,
}

impl Engine {
    fn use_blob(&self, digest: &str, size: u64) {
        if let Ok(mut used) = self.used.lock() {
            used.insert(digest.to_owned(), size);
        }
    }

    /// One blob from the source into the archive, within its deadline.
    async fn blob(
        &self,
        index: usize,
        source: &Reference,
        desc: &OciDescriptor,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let size = u64::try_from(desc.size)
            .map_err(|_| format!("blob {} has a negative size", desc.digest))?;
        self.use_blob(&desc.digest, size);
        if self.writer.has(&desc.digest) {
            tally.skipped += 1;
            self.progress.blob_done(index, &desc.digest);
            return Ok(());
        }
        if self.writer.disk_full() {
            // Nothing more can be written: fetching it would only waste the transfer.
            return Err(format!(
                "blob {} not fetched: the disk holding {} is full",
                desc.digest,
                self.writer.partial().display()
            ));
        }
        let deadline = self.reg.limits.blob_deadline(size);
        let progress = self.progress.clone();
        let write = self.writer.blob(
            &desc.digest,
            size,
            || async {
                progress.blob_started(index, &desc.digest, size);
                let sized = self
                    .reg
                    .client
                    .pull_blob_stream(source, desc)
                    .await
                    .map_err(|e| registry_error("reading blob from", source, e))?;
                Ok(sized.stream)
            },
            |n| self.progress.bytes(index, n),
        );
        match tokio::time::timeout(deadline, write).await {
            Ok(Ok(Wrote::Had)) => tally.skipped += 1,
            Ok(Ok(Wrote::Bytes(n))) => {
                tally.copied += 1;
                tally.bytes += n;
            }
            Ok(Err(e)) => return Err(format!("{e} (of {source})")),
            Err(_) => {
                return Err(past_deadline(
                    &format!("downloading blob {}", desc.digest),
                    source,
                    deadline,
                    "blob_min_bytes_per_second",
                ));
            }
        }
        self.progress.blob_done(index, &desc.digest);
        Ok(())
    }

    /// A manifest or index held in memory into the archive.
    async fn manifest_blob(
        &self,
        digest: &str,
        body: bytes::Bytes,
        tally: &mut Tally,
    ) -> Result<(), String> {
        self.use_blob(digest, body.len() as u64);
        match self.writer.bytes(digest, body).await? {
            Wrote::Had => tally.skipped += 1,
            Wrote::Bytes(n) => {
                tally.copied += 1;
                tally.bytes += n;
            }
        }
        Ok(())
    }

    /// Reads a manifest and checks that its bytes have the digest expected (by-digest reads) or
    /// the registry announced.
    async fn pull_verified(
        &self,
        reference: &Reference,
        expected: Option<&str>,
    ) -> Result<(bytes::Bytes, String), String> {
        let (body, digest) = self.reg.pull_manifest(reference).await?;
        let got = sha256(&body);
        if got != digest || expected.is_some_and(|e| e != got) {
            return Err(format!(
                "the manifest of {reference} hashes to {got}, the registry said {}",
                expected.unwrap_or(&digest)
            ));
        }
        Ok((body, got))
    }

    /// An image manifest's config and layers, then the manifest itself.
    async fn image_manifest(
        &self,
        index: usize,
        source: &Reference,
        body: bytes::Bytes,
        digest: &str,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("manifest {digest} of {source} is not JSON: {e}"))?;
        for desc in manifest_blobs(&manifest) {
            self.blob(index, source, &desc, tally).await?;
        }
        self.manifest_blob(digest, body, tally).await
    }

    async fn image(
        &self,
        index: usize,
        copy: &ImageCopy,
        from: Option<&FromArchive>,
    ) -> (ImageResult, Option<IndexEntry>) {
        self.progress.image_started(index, copy);
        let mut tally = Tally::default();
        let outcome = match from {
            Some(from) => self.archived_image(index, from, &mut tally).await,
            None => self.image_inner(index, copy, &mut tally).await,
        };
        let (digest, status, entry) = match outcome {
            Ok(entry) => {
                let status = if tally.copied == 0 {
                    ImageStatus::UpToDate
                } else {
                    ImageStatus::Copied {
                        blobs_copied: tally.copied,
                        blobs_mounted: 0,
                        blobs_skipped: tally.skipped,
                        bytes: tally.bytes,
                    }
                };
                (Some(entry.digest.clone()), status, Some(entry))
            }
            Err(error) => (None, ImageStatus::Failed { error }, None),
        };
        let result = ImageResult {
            copy: copy.clone(),
            digest,
            status,
        };
        self.progress.image_finished(index, &result);
        (result, entry)
    }

    /// An image manifest of an archive, its blobs and itself, into the download; digests checked
    /// as they are read from the archive and again as they are written.
    async fn archived_image(
        &self,
        index: usize,
        from: &FromArchive,
        tally: &mut Tally,
    ) -> Result<IndexEntry, String> {
        let archive = &*from.archive;
        let image = (archive.images().iter())
            .find(|i| i.name.as_deref() == Some(from.name.as_str()))
            .ok_or_else(|| format!("{} is not in {}", from.name, archive.path().display()))?;
        let body = archive.manifest(&image.digest)?;
        if index_media(&image.media_type, &body) {
            return Err(format!(
                "{} in {} is an image index: only an image manifest is taken from an archive",
                from.name,
                archive.path().display()
            ));
        }
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("manifest {} is not JSON: {e}", image.digest))?;
        for desc in manifest_blobs(&manifest) {
            self.archived_blob(index, archive, &desc, tally).await?;
        }
        let size = body.len() as u64;
        self.manifest_blob(&image.digest, body, tally).await?;
        Ok(IndexEntry {
            image: from.name.clone(),
            media_type: image.media_type.clone(),
            digest: image.digest.clone(),
            size,
        })
    }

    /// One blob of an archive into the download.
    async fn archived_blob(
        &self,
        index: usize,
        archive: &Archive,
        desc: &OciDescriptor,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let size = archive.blob_size(&desc.digest)?;
        if u64::try_from(desc.size).ok() != Some(size) {
            return Err(format!(
                "blob {}: {} holds {size} bytes, the manifest says {} (the archive is corrupt)",
                desc.digest,
                archive.path().display(),
                desc.size
            ));
        }
        self.use_blob(&desc.digest, size);
        let failure = Arc::new(Mutex::new(None));
        let stream = archive.blob_stream(&desc.digest, failure.clone())?;
        self.progress.blob_started(index, &desc.digest, size);
        let wrote = self
            .writer
            .blob(
                &desc.digest,
                size,
                || async { Ok::<_, String>(stream) },
                |n| self.progress.bytes(index, n),
            )
            .await;
        if let Some(corrupt) = failure.lock().ok().and_then(|mut f| f.take()) {
            return Err(corrupt);
        }
        match wrote? {
            Wrote::Had => tally.skipped += 1,
            Wrote::Bytes(n) => {
                tally.copied += 1;
                tally.bytes += n;
            }
        }
        self.progress.blob_done(index, &desc.digest);
        Ok(())
    }

    async fn image_inner(
        &self,
        index: usize,
        copy: &ImageCopy,
        tally: &mut Tally,
    ) -> Result<IndexEntry, String> {
        let source: Reference = copy
            .source
            .parse()
            .map_err(|e| format!("invalid reference {}: {e}", copy.source))?;
        self.reg.authorize(&source, RegistryOperation::Pull).await?;
        let (body, digest) = self.pull_verified(&source, None).await?;
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("manifest of {source} is not JSON: {e}"))?;
        let media = media_type(&manifest);
        if !is_index(&media) {
            let size = body.len() as u64;
            self.image_manifest(index, &source, body, &digest, tally)
                .await?;
            return Ok(IndexEntry {
                image: copy.image.clone(),
                media_type: media,
                digest,
                size,
            });
        }
        let ReducedIndex {
            body: index_body,
            digest: index_digest,
            entries,
        } = reduce_index(&manifest, body, digest, &self.platforms, &copy.source)?;
        for entry in &entries {
            let child = entry
                .get("digest")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("an entry of the index of {source} has no digest"))?;
            let child_ref = Reference::with_digest(
                source.registry().to_owned(),
                source.repository().to_owned(),
                child.to_owned(),
            );
            let (child_body, child_digest) = self.pull_verified(&child_ref, Some(child)).await?;
            self.image_manifest(index, &source, child_body, &child_digest, tally)
                .await?;
        }
        let size = index_body.len() as u64;
        self.manifest_blob(&index_digest, index_body, tally).await?;
        Ok(IndexEntry {
            image: copy.image.clone(),
            media_type: media,
            digest: index_digest,
            size,
        })
    }
}

/// Downloads every image of the plan, then those of `config.from_archives`, into the archive
/// `config.output`, `config.concurrency` images at a time, with the default deadlines (the
/// report has one entry per image, in that order). The archive is finished (renamed from
/// `FILE.partial`) only when every image is in; otherwise the report says which failed and a
/// re-run resumes.
pub async fn download_images(
    plan: &[ImageCopy],
    config: &DownloadConfig,
    progress: Arc<dyn Progress>,
) -> DownloadReport {
    download_images_with_limits(plan, config, CopyLimits::default(), progress).await
}

/// [`download_images`] with the given deadlines.
pub async fn download_images_with_limits(
    plan: &[ImageCopy],
    config: &DownloadConfig,
    limits: CopyLimits,
    progress: Arc<dyn Progress>,
) -> DownloadReport {
    let started = Instant::now();
    let writer = match Writer::open(&config.output) {
        Ok(w) => w,
        Err(error) => {
            return DownloadReport {
                report: CopyReport {
                    images: Vec::new(),
                    seconds: started.elapsed().as_secs_f64(),
                },
                archive: None,
                error: Some(error),
            };
        }
    };
    let connection = Connection {
        ca_certs_pem: config.ca_certs_pem.clone(),
        plain_http: config.plain_http.clone(),
        credentials: config.credentials.clone(),
    };
    let engine = Engine {
        reg: Registries::new(&connection, limits),
        writer,
        platforms: config.platforms.clone(),
        progress,
        used: Mutex::default(),
    };
    let engine_ref = &engine;
    let archived: Vec<(ImageCopy, Option<&FromArchive>)> = (config.from_archives.iter())
        .map(|from| (from.copy(), Some(from)))
        .collect();
    let all = (plan.iter().map(|copy| (copy, None)))
        .chain(archived.iter().map(|(copy, from)| (copy, *from)));
    let mut results: Vec<(usize, (ImageResult, Option<IndexEntry>))> =
        stream::iter(all.enumerate())
            .map(|(i, (copy, from))| async move { (i, engine_ref.image(i, copy, from).await) })
            .buffer_unordered(config.concurrency.max(1))
            .collect()
            .await;
    results.sort_by_key(|(i, _)| *i);
    let mut images = Vec::new();
    let mut entries = Vec::new();
    for (_, (result, entry)) in results {
        images.push(result);
        entries.extend(entry);
    }
    let failed = images
        .iter()
        .filter(|i| matches!(i.status, ImageStatus::Failed { .. }))
        .count();
    let partial = engine.writer.partial().to_owned();
    let used = engine.used.into_inner().unwrap_or_default();
    let (archive, error) = if engine.writer.disk_full() {
        (None, Some(DownloadError::DiskFull { partial }))
    } else if failed > 0 {
        (None, Some(DownloadError::ImagesFailed { failed, partial }))
    } else {
        match engine.writer.finish(
            &entries,
            &used,
            &config.files,
            &config.platforms.to_string(),
        ) {
            Ok(summary) => (Some(summary), None),
            Err(e) => (None, Some(e)),
        }
    };
    DownloadReport {
        report: CopyReport {
            images,
            seconds: started.elapsed().as_secs_f64(),
        },
        archive,
        error,
    }
}
