//! Registry-to-registry copy: manifests, indexes and blobs, streamed and verified, skipping what
//! the target already has.

use crate::{
    ImagesError,
    limits::CopyLimits,
    list::repository_path,
    platform::{Platforms, ReducedIndex, reduce_index},
    registry::{
        Connection, Registries, Tally, is_index, manifest_blobs, media_type, registry_error,
    },
};
use futures_util::{StreamExt, TryStreamExt, stream};
use oci_client::{Reference, RegistryOperation, manifest::OciDescriptor};
use serde::Serialize;
use serde_json::Value;
use std::{sync::Arc, time::Instant};

pub use crate::transfer::{Credentials, ImageCopy, ImageResult, ImageStatus, NoProgress, Progress};

/// The target: `HOST[:PORT]` and an optional namespace that every repository path goes under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRegistry {
    /// `HOST[:PORT]`.
    pub host: String,
    /// Namespace without slashes at either end, e.g. `eks-a`; empty for none.
    pub namespace: String,
}

impl TargetRegistry {
    /// Parses `HOST:PORT[/NAMESPACE]`.
    pub fn parse(text: &str) -> Result<TargetRegistry, ImagesError> {
        let text = text.trim().trim_end_matches('/');
        let text = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"))
            .unwrap_or(text);
        let (host, namespace) = text.split_once('/').unwrap_or((text, ""));
        if let Some((_, bare)) = host.rsplit_once('@') {
            return Err(ImagesError::RegistryLogin {
                host: bare.to_owned(),
            });
        }
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(ImagesError::InvalidRegistry {
                registry: text.to_owned(),
            });
        }
        Ok(TargetRegistry {
            host: host.to_owned(),
            namespace: namespace.trim_matches('/').to_owned(),
        })
    }
}

/// How to copy.
#[derive(Debug, Clone)]
pub struct CopyConfig {
    /// Where the images go.
    pub target: TargetRegistry,
    /// A mirror that holds the images under the same repository paths (default: each image's
    /// own registry).
    pub source_registry: Option<String>,
    /// Keep every platform of an index (default: linux/amd64 only, the index rewritten).
    pub all_platforms: bool,
    /// Images copied at once.
    pub concurrency: usize,
    /// Extra trusted CA certificates (PEM).
    pub ca_certs_pem: Vec<Vec<u8>>,
    /// Registry hosts spoken to over plain HTTP.
    pub plain_http: Vec<String>,
    /// Credentials by registry host.
    pub credentials: Credentials,
}

/// Source and target references for each image URI: the repository path is kept, under the
/// target's namespace; `--source-registry` replaces the image's registry host.
pub fn plan(images: &[String], config: &CopyConfig) -> Result<Vec<ImageCopy>, ImagesError> {
    images
        .iter()
        .map(|uri| {
            let (path, tag) = repository_path(uri);
            let tag = tag
                .filter(|t| !t.is_empty())
                .ok_or_else(|| ImagesError::Untagged { image: uri.clone() })?;
            let source = match &config.source_registry {
                Some(host) => format!("{}/{path}:{tag}", host.trim_end_matches('/')),
                None => uri.clone(),
            };
            let target = if config.target.namespace.is_empty() {
                format!("{}/{path}:{tag}", config.target.host)
            } else {
                format!(
                    "{}/{}/{path}:{tag}",
                    config.target.host, config.target.namespace
                )
            };
            for r in [&source, &target] {
                r.parse::<Reference>()
                    .map_err(|e| ImagesError::InvalidReference {
                        reference: r.clone(),
                        message: e.to_string(),
                    })?;
            }
            Ok(ImageCopy {
                image: uri.clone(),
                source,
                target,
            })
        })
        .collect()
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CopyReport {
    /// One per image, in plan order.
    pub images: Vec<ImageResult>,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl CopyReport {
    /// Images with something written.
    pub fn copied(&self) -> usize {
        self.count(|s| matches!(s, ImageStatus::Copied { .. }))
    }
    /// Images already in the target.
    pub fn up_to_date(&self) -> usize {
        self.count(|s| matches!(s, ImageStatus::UpToDate))
    }
    /// Images that failed.
    pub fn failed(&self) -> usize {
        self.count(|s| matches!(s, ImageStatus::Failed { .. }))
    }
    /// Bytes streamed in all.
    pub fn bytes(&self) -> u64 {
        self.images
            .iter()
            .map(|i| match i.status {
                ImageStatus::Copied { bytes, .. } => bytes,
                _ => 0,
            })
            .sum()
    }
    /// Blobs streamed in all.
    pub fn blobs_copied(&self) -> usize {
        self.images
            .iter()
            .map(|i| match i.status {
                ImageStatus::Copied { blobs_copied, .. } => blobs_copied,
                _ => 0,
            })
            .sum()
    }
    /// The summary for people: counts, blobs, megabytes and seconds, then every failed image.
    pub fn summary_text(&self) -> String {
        let mut out = format!(
            "{} image(s): {} copied, {} already up to date, {} failed; {} blob(s), {:.1} MB in {:.1} s\n",
            self.images.len(),
            self.copied(),
            self.up_to_date(),
            self.failed(),
            self.blobs_copied(),
            self.bytes() as f64 / 1_000_000.0,
            self.seconds
        );
        if self.copied() == 0 && self.failed() == 0 {
            out.push_str("nothing to copy: the registry has every image\n");
        }
        for failed in self
            .images
            .iter()
            .filter(|i| matches!(i.status, ImageStatus::Failed { .. }))
        {
            out.push_str(&format!("failed: {}\n", failed.copy.image));
        }
        out
    }

    /// The summary for tools: `ok`, the counts, and every image's result.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "ok": self.failed() == 0,
            "copied": self.copied(),
            "upToDate": self.up_to_date(),
            "failed": self.failed(),
            "blobsCopied": self.blobs_copied(),
            "bytes": self.bytes(),
            "seconds": self.seconds,
            "images": self.images,
        })
    }

    fn count(&self, f: impl Fn(&ImageStatus) -> bool) -> usize {
        self.images.iter().filter(|i| f(&i.status)).count()
    }
}

struct Engine {
    reg: Registries,
    config: CopyConfig,
    progress: Arc<dyn Progress>,
}

impl Engine {
    /// Makes one blob present in the target repository, streamed from the source if needed.
    async fn blob(
        &self,
        index: usize,
        source: &Reference,
        target: &Reference,
        desc: &OciDescriptor,
        tally: &mut Tally,
    ) -> Result<(), String> {
        self.reg
            .ensure_blob(index, target, desc, tally, &*self.progress, || {
                self.stream_blob(index, source, target, desc)
            })
            .await
    }

    /// Streams one blob from the source to the target; returns the bytes streamed.
    async fn stream_blob(
        &self,
        index: usize,
        source: &Reference,
        target: &Reference,
        desc: &OciDescriptor,
    ) -> Result<u64, String> {
        let size = u64::try_from(desc.size).unwrap_or(0);
        let sized = self
            .reg
            .client
            .pull_blob_stream(source, desc)
            .await
            .map_err(|e| registry_error("reading blob from", source, e))?;
        let size = sized.content_length.unwrap_or(size);
        let progress = self.progress.clone();
        let counted = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = counted.clone();
        // The stream checks the digest as it ends; a mismatch fails the upload before the
        // registry commits it (and the registry checks the digest too).
        let body = sized
            .stream
            .inspect_ok(move |chunk| {
                let n = chunk.len() as u64;
                counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                progress.bytes(index, n);
            })
            .map_err(oci_client::errors::OciDistributionError::from);
        self.reg
            .client
            .push_blob_stream(target, body, &desc.digest, Some(size))
            .await
            .map_err(|e| registry_error("writing blob to", target, e))?;
        Ok(counted.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Copies one image manifest (not an index): its config and layers, then the manifest to
    /// `push_to` (the target tag, or the target repository by digest for an index entry).
    #[allow(clippy::too_many_arguments)]
    async fn manifest(
        &self,
        index: usize,
        source: &Reference,
        target: &Reference,
        push_to: &Reference,
        body: bytes::Bytes,
        digest: &str,
        media_type: &str,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("manifest {digest} of {source} is not JSON: {e}"))?;
        let blobs = manifest_blobs(&manifest);
        for desc in &blobs {
            self.blob(index, source, target, desc, tally).await?;
        }
        self.reg.push_manifest(push_to, body, media_type).await
    }

    async fn image(&self, index: usize, copy: &ImageCopy) -> ImageResult {
        self.progress.image_started(index, copy);
        let mut tally = Tally::default();
        let outcome = self.image_inner(index, copy, &mut tally).await;
        let result = tally.result(copy, outcome);
        self.progress.image_finished(index, &result);
        result
    }

    /// Returns the digest written and whether the target already had it.
    async fn image_inner(
        &self,
        index: usize,
        copy: &ImageCopy,
        tally: &mut Tally,
    ) -> Result<(String, bool), String> {
        let parse = |r: &str| {
            r.parse::<Reference>()
                .map_err(|e| format!("invalid reference {r}: {e}"))
        };
        let (source, target) = (parse(&copy.source)?, parse(&copy.target)?);
        self.reg.authorize(&source, RegistryOperation::Pull).await?;
        self.reg.authorize(&target, RegistryOperation::Push).await?;
        let (body, digest) = self.reg.pull_manifest(&source).await?;
        let manifest: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("manifest of {source} is not JSON: {e}"))?;
        let media = media_type(&manifest);
        if !is_index(&media) {
            if self.reg.target_digest(&target).await.as_deref() == Some(digest.as_str()) {
                return Ok((digest, true));
            }
            self.manifest(
                index, &source, &target, &target, body, &digest, &media, tally,
            )
            .await?;
            return Ok((digest, false));
        }
        let platforms = if self.config.all_platforms {
            Platforms::All
        } else {
            Platforms::default()
        };
        let ReducedIndex {
            body: index_body,
            digest: index_digest,
            entries: kept,
        } = reduce_index(&manifest, body, digest, &platforms, &source.to_string()).map_err(
            |e| format!("{e} (every platform is copied only when all platforms are asked)"),
        )?;
        if self.reg.target_digest(&target).await.as_deref() == Some(index_digest.as_str()) {
            return Ok((index_digest, true));
        }
        for entry in &kept {
            let child = entry
                .get("digest")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("an entry of the index of {source} has no digest"))?;
            let child_ref = Reference::with_digest(
                source.registry().to_owned(),
                source.repository().to_owned(),
                child.to_owned(),
            );
            let (child_body, child_digest) = self.reg.pull_manifest(&child_ref).await?;
            let child_media: Value = serde_json::from_slice(&child_body)
                .map_err(|e| format!("manifest {child} of {source} is not JSON: {e}"))?;
            let child_media = entry
                .get("mediaType")
                .and_then(Value::as_str)
                .map_or_else(|| media_type(&child_media), str::to_owned);
            let by_digest = Reference::with_digest(
                target.registry().to_owned(),
                target.repository().to_owned(),
                child_digest.clone(),
            );
            self.manifest(
                index,
                &source,
                &target,
                &by_digest,
                child_body,
                &child_digest,
                &child_media,
                tally,
            )
            .await?;
        }
        self.reg.push_manifest(&target, index_body, &media).await?;
        Ok((index_digest, false))
    }
}

/// Copies every image of the plan, `config.concurrency` at a time. A failed image does not stop
/// the others; the report says which failed. Interrupted and re-run, it resumes: blobs and
/// manifests already in the target are not copied again.
///
/// Every request has the default deadlines ([`CopyLimits::default`]).
pub async fn copy_images(
    plan: &[ImageCopy],
    config: &CopyConfig,
    progress: Arc<dyn Progress>,
) -> CopyReport {
    copy_images_with_limits(plan, config, CopyLimits::default(), progress).await
}

/// [`copy_images`] with the given deadlines: a request past its deadline fails its image with an
/// error that names the deadline.
pub async fn copy_images_with_limits(
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
    let engine = Engine {
        reg: Registries::new(&connection, limits),
        config: config.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_with_a_login_is_refused_without_showing_it() {
        for given in [
            "admin:hunter2@registry.site:5000/eks-a",
            "https://admin:hunter2@registry.site:5000",
            "hunter2@registry.site:5000",
        ] {
            let err = TargetRegistry::parse(given).unwrap_err();
            assert!(
                matches!(&err, ImagesError::RegistryLogin { host } if host == "registry.site:5000"),
                "{given}: {err:?}"
            );
            assert!(!err.to_string().contains("hunter2"), "{err}");
        }
        let target = TargetRegistry::parse("https://registry.site:5000/eks-a/").unwrap();
        assert_eq!(
            (target.host.as_str(), target.namespace.as_str()),
            ("registry.site:5000", "eks-a")
        );
    }
}
