//! Archive → registry: the images of an [`Archive`] pushed to a registry straight from the file
//! (nothing unpacked to disk), blobs the registry has skipped, manifests last (children by
//! digest, indexes after their children, the tag last of all) so that nothing partial is ever
//! tagged.

use crate::{
    ImagesError,
    archive::{Archive, index_media},
    copy::{CopyConfig, CopyReport, ImageCopy, ImageResult, Progress, plan},
    limits::{CopyLimits, MAX_INDEX_DEPTH},
    registry::{Connection, Registries, Tally, manifest_blobs, registry_error},
};
use futures_util::{StreamExt, TryStreamExt, stream};
use oci_client::{Reference, RegistryOperation, manifest::OciDescriptor};
use serde_json::Value;
use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Instant,
};

/// What to push: every named image of the archive (or those of `only`, when not empty), each to
/// its repository path under the target (as [`plan`] does for registry copies). The source of
/// each is `ARCHIVE#NAME`.
pub fn plan_import(
    archive: &Archive,
    only: &[String],
    config: &CopyConfig,
) -> Result<Vec<ImageCopy>, ImagesError> {
    let mut names = Vec::new();
    for (i, image) in archive.images().iter().enumerate() {
        let Some(name) = &image.name else {
            return Err(ImagesError::Unnamed {
                archive: archive.path().display().to_string(),
                position: i,
                digest: image.digest.clone(),
            });
        };
        if only.is_empty() || only.contains(name) {
            names.push(name.clone());
        }
    }
    for wanted in only {
        if !names.contains(wanted) {
            return Err(ImagesError::NotInArchive {
                image: wanted.clone(),
                archive: archive.path().display().to_string(),
            });
        }
    }
    names.sort();
    names.dedup();
    let mut config = config.clone();
    config.source_registry = None;
    let mut copies = plan(&names, &config)?;
    for copy in &mut copies {
        copy.source = format!("{}#{}", archive.path().display(), copy.image);
    }
    Ok(copies)
}

struct Engine<'a> {
    reg: Registries,
    archive: &'a Archive,
    digests: HashMap<String, (String, String)>,
    progress: Arc<dyn Progress>,
}

impl Engine<'_> {
    async fn blob(
        &self,
        index: usize,
        target: &Reference,
        desc: &OciDescriptor,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let had = self.archive.blob_size(&desc.digest)?;
        let size = u64::try_from(desc.size).unwrap_or(0);
        if had != size {
            return Err(format!(
                "blob {}: the archive holds {had} bytes, the manifest says {size} (the archive is corrupt)",
                desc.digest
            ));
        }
        self.reg
            .ensure_blob(index, target, desc, tally, &*self.progress, || {
                self.upload(index, target, desc, size)
            })
            .await
    }

    async fn upload(
        &self,
        index: usize,
        target: &Reference,
        desc: &OciDescriptor,
        size: u64,
    ) -> Result<u64, String> {
        let failure = Arc::new(Mutex::new(None));
        let progress = self.progress.clone();
        let counted = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = counted.clone();
        let body = self
            .archive
            .blob_stream(&desc.digest, failure.clone())?
            .inspect_ok(move |chunk| {
                let n = chunk.len() as u64;
                counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                progress.bytes(index, n);
            })
            .map_err(oci_client::errors::OciDistributionError::from);
        let pushed = self
            .reg
            .client
            .push_blob_stream(target, body, &desc.digest, Some(size))
            .await;
        if let Some(corrupt) = failure.lock().ok().and_then(|mut f| f.take()) {
            return Err(corrupt);
        }
        pushed.map_err(|e| registry_error("writing blob to", target, e))?;
        Ok(counted.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// An image manifest's blobs, then the manifest to `push_to`.
    #[allow(
        clippy::too_many_arguments,
        reason = "one manifest's identity (index, references, body, digest, media type) and the tally"
    )]
    async fn manifest(
        &self,
        index: usize,
        target: &Reference,
        push_to: &Reference,
        body: bytes::Bytes,
        digest: &str,
        media: &str,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("manifest {digest} is not JSON: {e}"))?;
        for desc in manifest_blobs(&manifest) {
            self.blob(index, target, &desc, tally).await?;
        }
        self.reg.push_manifest(push_to, body, media).await
    }

    async fn image(&self, index: usize, copy: &ImageCopy) -> ImageResult {
        self.progress.image_started(index, copy);
        let mut tally = Tally::default();
        let outcome = self.image_inner(index, copy, &mut tally).await;
        let result = tally.result(copy, outcome);
        self.progress.image_finished(index, &result);
        result
    }

    async fn image_inner(
        &self,
        index: usize,
        copy: &ImageCopy,
        tally: &mut Tally,
    ) -> Result<(String, bool), String> {
        let (digest, media) = self
            .digests
            .get(&copy.image)
            .cloned()
            .ok_or_else(|| "not in the archive".to_owned())?;
        let target: Reference = copy
            .target
            .parse()
            .map_err(|e| format!("invalid reference {}: {e}", copy.target))?;
        self.reg.authorize(&target, RegistryOperation::Push).await?;
        if self.reg.target_digest(&target).await.as_deref() == Some(digest.as_str()) {
            return Ok((digest, true));
        }
        let body = self.archive.manifest(&digest)?;
        if !index_media(&media, &body) {
            self.manifest(index, &target, &target, body, &digest, &media, tally)
                .await?;
            return Ok((digest, false));
        }
        let mut nodes = Vec::new();
        let mut seen = HashSet::new();
        walk(
            self.archive,
            &digest,
            &media,
            &body,
            1,
            &mut seen,
            &mut nodes,
        )?;
        // Children before their index, the top index (the last node) to the tag last of all.
        let top = nodes.pop().map_or(media, |n| n.media);
        for node in nodes {
            let body = self.archive.manifest(&node.digest)?;
            let by_digest = Reference::with_digest(
                target.registry().to_owned(),
                target.repository().to_owned(),
                node.digest.clone(),
            );
            if node.index {
                self.reg
                    .push_manifest(&by_digest, body, &node.media)
                    .await?;
            } else {
                self.manifest(
                    index,
                    &target,
                    &by_digest,
                    body,
                    &node.digest,
                    &node.media,
                    tally,
                )
                .await?;
            }
        }
        self.reg.push_manifest(&target, body, &top).await?;
        Ok((digest, false))
    }
}

/// One manifest of an image's tree.
struct Node {
    digest: String,
    media: String,
    /// An index (its children are pushed before it).
    index: bool,
}

/// The manifests of the tree below the manifest `digest` (at `depth`, the top index being 1),
/// each once, children before their index, into `out`. An index deeper than
/// [`MAX_INDEX_DEPTH`] is an error: the tree is pushed whole or not at all.
fn walk(
    archive: &Archive,
    digest: &str,
    media: &str,
    body: &[u8],
    depth: usize,
    seen: &mut HashSet<String>,
    out: &mut Vec<Node>,
) -> Result<(), String> {
    if !index_media(media, body) {
        out.push(Node {
            digest: digest.to_owned(),
            media: media.to_owned(),
            index: false,
        });
        return Ok(());
    }
    if depth > MAX_INDEX_DEPTH {
        return Err(format!(
            "index {digest} is nested {depth} deep (an index of an index …): snowctl copies indexes nested at most {MAX_INDEX_DEPTH} deep"
        ));
    }
    let index_json: Value =
        serde_json::from_slice(body).map_err(|e| format!("index {digest} is not JSON: {e}"))?;
    let entries = (index_json.get("manifests").and_then(Value::as_array))
        .map(Vec::as_slice)
        .unwrap_or_default();
    for entry in entries {
        let child = entry
            .get("digest")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("an entry of index {digest} has no digest"))?;
        if !seen.insert(child.to_owned()) {
            continue;
        }
        let child_body = archive
            .manifest(child)
            .map_err(|e| format!("{e} (an image of index {digest})"))?;
        let child_media = entry
            .get("mediaType")
            .and_then(Value::as_str)
            .unwrap_or("application/vnd.oci.image.manifest.v1+json");
        walk(
            archive,
            child,
            child_media,
            &child_body,
            depth + 1,
            seen,
            out,
        )?;
    }
    out.push(Node {
        digest: digest.to_owned(),
        media: (index_json.get("mediaType").and_then(Value::as_str))
            .unwrap_or(media)
            .to_owned(),
        index: true,
    });
    Ok(())
}

/// Pushes the images of the plan from the archive, `config.concurrency` at a time, with the
/// default deadlines. A failed image (a missing or corrupt blob, a refused push) does not stop
/// the others; a re-run skips what the registry has.
pub async fn import_archive(
    archive: &Archive,
    plan: &[ImageCopy],
    config: &CopyConfig,
    progress: Arc<dyn Progress>,
) -> CopyReport {
    import_archive_with_limits(archive, plan, config, CopyLimits::default(), progress).await
}

/// [`import_archive`] with the given deadlines.
pub async fn import_archive_with_limits(
    archive: &Archive,
    plan: &[ImageCopy],
    config: &CopyConfig,
    limits: CopyLimits,
    progress: Arc<dyn Progress>,
) -> CopyReport {
    let started = Instant::now();
    let connection = Connection {
        ca_certs_pem: config.ca_certs_pem.clone(),
        plain_http: config.plain_http.clone(),
        credentials: config.credentials.clone(),
    };
    let digests = archive
        .images()
        .iter()
        .filter_map(|i| {
            i.name
                .clone()
                .map(|n| (n, (i.digest.clone(), i.media_type.clone())))
        })
        .collect();
    let engine = Engine {
        reg: Registries::new(&connection, limits),
        archive,
        digests,
        progress,
    };
    let engine = &engine;
    let mut results: Vec<(usize, ImageResult)> = stream::iter(plan.iter().enumerate())
        .map(|(i, copy)| async move { (i, engine.image(i, copy).await) })
        .buffer_unordered(config.concurrency.max(1))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    CopyReport {
        images: results.into_iter().map(|(_, r)| r).collect(),
        seconds: started.elapsed().as_secs_f64(),
    }
}
