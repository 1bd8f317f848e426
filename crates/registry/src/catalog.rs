//! The repositories of an archive, built once when it is opened: each image name's repository,
//! its tags, and every manifest and blob its images reach (an index's platform manifests, their
//! configs and layers), so that a repository serves only what belongs to it, as a registry does.

use crate::names::{is_digest, split_image};
use serde_json::Value;
use snow_images::{Archive, limits::MAX_INDEX_DEPTH};
use std::collections::{BTreeMap, HashMap, HashSet};

/// One repository of the archive.
#[derive(Debug, Default)]
pub(crate) struct Repository {
    /// Tag → manifest digest.
    pub(crate) tags: BTreeMap<String, String>,
    /// Manifest digest → its stored media type.
    pub(crate) manifests: HashMap<String, String>,
    /// Blob digests (configs and layers; manifests are also answered as blobs).
    pub(crate) blobs: HashSet<String>,
}

/// The archive's repositories by full name (`public.ecr.aws/eks-distro/kubernetes/pause`).
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    pub(crate) repositories: HashMap<String, Repository>,
}

fn media_of(body: &Value) -> Option<&str> {
    body.get("mediaType").and_then(Value::as_str)
}

fn is_index(media: &str, body: &Value) -> bool {
    matches!(
        media,
        "application/vnd.oci.image.index.v1+json"
            | "application/vnd.docker.distribution.manifest.list.v2+json"
    ) || body.get("manifests").is_some_and(Value::is_array)
}

fn digests(list: Option<&Value>) -> impl Iterator<Item = (&str, Option<&str>)> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let digest = d.get("digest").and_then(Value::as_str)?;
            Some((digest, d.get("mediaType").and_then(Value::as_str)))
        })
}

impl Catalog {
    /// Reads every image's manifests (each at most once per repository). A manifest the
    /// archive does not hold (a platform a download left out) or cannot read is left out: a
    /// request for it is a miss.
    pub(crate) fn of(archive: &Archive) -> Catalog {
        let mut catalog = Catalog::default();
        for image in archive.images() {
            let Some(name) = image.name.as_deref() else {
                continue;
            };
            let (repo, tag, _) = split_image(name);
            let repository = catalog.repositories.entry(repo.to_owned()).or_default();
            if let Some(tag) = tag {
                repository.tags.insert(tag.to_owned(), image.digest.clone());
            }
            let mut pending = vec![(image.digest.clone(), image.media_type.clone(), 0usize)];
            while let Some((digest, media, depth)) = pending.pop() {
                if !is_digest(&digest) || repository.manifests.contains_key(&digest) {
                    continue;
                }
                let Ok(body) = archive.manifest(&digest) else {
                    continue;
                };
                let Ok(parsed) = serde_json::from_slice::<Value>(&body) else {
                    continue;
                };
                // The descriptor's type, else the body's own (what a registry stores on push).
                let media = if media.is_empty() {
                    media_of(&parsed).unwrap_or_default().to_owned()
                } else {
                    media
                };
                if is_index(&media, &parsed) {
                    if depth < MAX_INDEX_DEPTH {
                        for (child, child_media) in digests(parsed.get("manifests")) {
                            let child_media = child_media.unwrap_or_default().to_owned();
                            pending.push((child.to_owned(), child_media, depth + 1));
                        }
                    }
                } else {
                    let config = parsed.get("config").into_iter().map(|c| {
                        let digest = c.get("digest").and_then(Value::as_str);
                        (digest.unwrap_or_default(), None)
                    });
                    for (blob, _) in config.chain(digests(parsed.get("layers"))) {
                        if is_digest(blob) {
                            repository.blobs.insert(blob.to_owned());
                        }
                    }
                }
                repository.manifests.insert(digest, media);
            }
        }
        catalog
    }
}
