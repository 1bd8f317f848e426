//! What the copy, the download and the import share to speak to registries: the client, its
//! credentials and deadlines, manifests in and out, and "make this blob present in that target
//! repository" (already there, mounted from a sibling repository, or uploaded).

use crate::{
    limits::{CONNECT_TIMEOUT, CopyLimits, READ_TIMEOUT},
    transfer::{Credentials, ImageCopy, ImageResult, ImageStatus, Progress},
};
use oci_client::{
    Client, Reference, RegistryOperation,
    client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol},
    manifest::OciDescriptor,
    secrets::RegistryAuth,
};
use serde_json::Value;
use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, Mutex},
    time::Duration,
};

/// The media types accepted for a manifest.
pub(crate) const MANIFEST_TYPES: &[&str] = &[
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];

/// A request that did not finish within its deadline.
pub(crate) fn past_deadline(
    what: &str,
    reference: &Reference,
    deadline: Duration,
    knob: &str,
) -> String {
    format!(
        "{what} {reference}: the registry did not finish answering within the {} s deadline \
         (a stalled or trickling registry; the bound is CopyLimits::{knob})",
        deadline.as_secs()
    )
}

pub(crate) fn registry_error(what: &str, reference: &Reference, e: impl fmt::Display) -> String {
    format!("{what} {reference}: {e}")
}

/// Whether oci-client can send `token` as `Authorization: Bearer <token>`.
fn usable_token(token: &str) -> bool {
    reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).is_ok()
}

/// The media type a manifest declares, or the one its shape implies.
pub(crate) fn media_type(manifest: &Value) -> String {
    manifest
        .get("mediaType")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            if manifest.get("manifests").is_some() {
                "application/vnd.oci.image.index.v1+json".into()
            } else {
                "application/vnd.oci.image.manifest.v1+json".into()
            }
        })
}

pub(crate) fn is_index(media_type: &str) -> bool {
    media_type.ends_with("image.index.v1+json") || media_type.ends_with("manifest.list.v2+json")
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex_digest(&sha2::Sha256::digest(bytes))
}

/// `sha256:<hex>` of a finished hash.
pub(crate) fn hex_digest(hash: &[u8]) -> String {
    let mut out = String::with_capacity(7 + 2 * hash.len());
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

pub(crate) fn descriptor(value: &Value) -> Option<OciDescriptor> {
    serde_json::from_value(value.clone()).ok()
}

/// The config and layer descriptors of an image manifest.
pub(crate) fn manifest_blobs(manifest: &Value) -> Vec<OciDescriptor> {
    manifest
        .get("config")
        .into_iter()
        .chain(
            manifest
                .get("layers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .filter_map(descriptor)
        .collect()
}

/// How a registry client is set up: extra CAs, plain-HTTP hosts, credentials.
#[derive(Debug, Clone, Default)]
pub(crate) struct Connection {
    pub(crate) ca_certs_pem: Vec<Vec<u8>>,
    pub(crate) plain_http: Vec<String>,
    pub(crate) credentials: Credentials,
}

/// Builds the registry client: extra CA certificates, plain HTTP for the named hosts,
/// monolithic streamed blob uploads (one PUT per blob).
fn client(connection: &Connection) -> Client {
    let protocol = if connection.plain_http.is_empty() {
        ClientProtocol::Https
    } else {
        ClientProtocol::HttpsExcept(connection.plain_http.clone())
    };
    Client::new(ClientConfig {
        protocol,
        use_monolithic_push: true,
        extra_root_certificates: connection
            .ca_certs_pem
            .iter()
            .map(|pem| Certificate {
                encoding: CertificateEncoding::Pem,
                data: pem.clone(),
            })
            .collect(),
        connect_timeout: Some(CONNECT_TIMEOUT),
        read_timeout: Some(READ_TIMEOUT),
        platform_resolver: None,
        ..ClientConfig::default()
    })
}

/// What happened to the blobs of one image.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) copied: usize,
    pub(crate) mounted: usize,
    pub(crate) skipped: usize,
    pub(crate) bytes: u64,
}

impl Tally {
    /// The result of one image: `outcome` is the digest written and whether the target already
    /// had it, or why it failed; the blob counts come from the tally.
    pub(crate) fn result(
        &self,
        copy: &ImageCopy,
        outcome: Result<(String, bool), String>,
    ) -> ImageResult {
        let (digest, status) = match outcome {
            Ok((digest, true)) => (Some(digest), ImageStatus::UpToDate),
            Ok((digest, false)) => (
                Some(digest),
                ImageStatus::Copied {
                    blobs_copied: self.copied,
                    blobs_mounted: self.mounted,
                    blobs_skipped: self.skipped,
                    bytes: self.bytes,
                },
            ),
            Err(error) => (None, ImageStatus::Failed { error }),
        };
        ImageResult {
            copy: copy.clone(),
            digest,
            status,
        }
    }
}

/// Blobs known to be in the target during this run: digest → a repository that has it.
type KnownBlobs = Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<String>>>>>;

/// One run's registry client with its credentials, deadlines and what it learnt.
pub(crate) struct Registries {
    pub(crate) client: Client,
    credentials: Credentials,
    pub(crate) limits: CopyLimits,
    known: KnownBlobs,
    /// Registries that answered `/v2/` without an auth challenge.
    open_registries: Mutex<HashMap<String, bool>>,
}

impl Registries {
    pub(crate) fn new(connection: &Connection, limits: CopyLimits) -> Registries {
        Registries {
            client: client(connection),
            credentials: connection.credentials.clone(),
            limits,
            known: Mutex::default(),
            open_registries: Mutex::default(),
        }
    }

    fn auth(&self, reference: &Reference) -> RegistryAuth {
        self.credentials.auth_for(reference.resolve_registry())
    }

    pub(crate) async fn authorize(
        &self,
        reference: &Reference,
        op: RegistryOperation,
    ) -> Result<(), String> {
        let host = reference.resolve_registry().to_owned();
        if self
            .open_registries
            .lock()
            .map(|m| m.get(&host).copied())
            .ok()
            .flatten()
            == Some(true)
        {
            return Ok(());
        }
        let auth = self.credentials.auth_for(&host);
        let token = self
            .request("authenticating for", reference, async {
                self.client.auth(reference, &auth, op).await
            })
            .await?;
        // oci-client puts the token into an `Authorization` header with `unwrap`: a token that
        // is not a header value (a control character but tab) would panic the next request.
        if token.as_deref().is_some_and(|t| !usable_token(t)) {
            return Err(registry_error(
                "authenticating for",
                reference,
                "the registry's token service answered a token that is not a valid HTTP header value",
            ));
        }
        let open = token.is_none() && matches!(auth, RegistryAuth::Anonymous);
        if let Ok(mut m) = self.open_registries.lock() {
            m.insert(host, open);
        }
        Ok(())
    }

    pub(crate) async fn pull_manifest(
        &self,
        reference: &Reference,
    ) -> Result<(bytes::Bytes, String), String> {
        let auth = self.auth(reference);
        self.request("reading manifest", reference, async {
            self.client
                .pull_manifest_raw(reference, &auth, MANIFEST_TYPES)
                .await
        })
        .await
    }

    pub(crate) async fn push_manifest(
        &self,
        reference: &Reference,
        body: bytes::Bytes,
        media_type: &str,
    ) -> Result<(), String> {
        let content_type = media_type
            .parse()
            .map_err(|_| format!("manifest media type `{media_type}` is not a header value"))?;
        // A registry may answer the PUT without `Location` (AWS ECR does). oci-client 0.18 then
        // cuts the reference's tag (else "latest") off the URL it wrote to, and panics when the
        // URL does not end with it, as a reference by digest's does not. With the digest as its
        // tag too, the URL (the digest wins over the tag) ends with it.
        let wire = match reference.digest() {
            Some(digest) => Reference::with_tag_and_digest(
                reference.registry().to_owned(),
                reference.repository().to_owned(),
                digest.to_owned(),
                digest.to_owned(),
            ),
            None => reference.clone(),
        };
        self.request("writing manifest", reference, async {
            self.client
                .push_manifest_raw(&wire, body, content_type)
                .await
        })
        .await
        .map(|_| ())
    }

    /// The digest the target's tag points at, if it exists.
    pub(crate) async fn target_digest(&self, reference: &Reference) -> Option<String> {
        let auth = self.auth(reference);
        self.request("checking manifest in", reference, async {
            self.client.fetch_manifest_digest(reference, &auth).await
        })
        .await
        .ok()
    }

    /// Runs one registry request within the request deadline.
    pub(crate) async fn request<T, E: fmt::Display>(
        &self,
        what: &str,
        reference: &Reference,
        call: impl Future<Output = Result<T, E>>,
    ) -> Result<T, String> {
        let deadline = self.limits.request_deadline;
        match tokio::time::timeout(deadline, call).await {
            Ok(result) => result.map_err(|e| registry_error(what, reference, e)),
            Err(_) => Err(past_deadline(what, reference, deadline, "request_deadline")),
        }
    }

    /// Makes one blob present in the target repository: already there, mounted from another
    /// repository of the target that has it, or uploaded by `upload` (which returns the bytes
    /// it streamed and is given the blob's deadline: [`CopyLimits::blob_deadline`]).
    pub(crate) async fn ensure_blob<F, Fut>(
        &self,
        index: usize,
        target: &Reference,
        desc: &OciDescriptor,
        tally: &mut Tally,
        progress: &dyn Progress,
        upload: F,
    ) -> Result<(), String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<u64, String>>,
    {
        let slot = {
            let mut known = self.known.lock().map_err(|_| "blob table poisoned")?;
            known.entry(desc.digest.clone()).or_default().clone()
        };
        let mut holder = slot.lock().await;
        let repo = target.repository().to_owned();
        if holder.as_deref() == Some(repo.as_str()) {
            tally.skipped += 1;
            progress.blob_done(index, &desc.digest);
            return Ok(());
        }
        let blob_exists = self
            .request("checking blob in", target, async {
                self.client.blob_exists(target, &desc.digest).await
            })
            .await?;
        let mut streamed = false;
        if blob_exists {
            tally.skipped += 1;
        } else if let Some(from) = holder.clone() {
            let from_ref =
                Reference::with_tag(target.registry().to_owned(), from, "latest".to_owned());
            let mounted = self.request("mounting blob in", target, async {
                self.client
                    .mount_blob(target, &from_ref, &desc.digest)
                    .await
            });
            match mounted.await {
                Ok(()) => tally.mounted += 1,
                Err(_) => streamed = true,
            }
        } else {
            streamed = true;
        }
        if streamed {
            let size = u64::try_from(desc.size).unwrap_or(0);
            let deadline = self.limits.blob_deadline(size);
            progress.blob_started(index, &desc.digest, size);
            match tokio::time::timeout(deadline, upload()).await {
                Ok(result) => {
                    tally.bytes += result?;
                    tally.copied += 1;
                }
                Err(_) => {
                    return Err(past_deadline(
                        &format!("copying blob {}", desc.digest),
                        target,
                        deadline,
                        "blob_min_bytes_per_second",
                    ));
                }
            }
        }
        *holder = Some(repo);
        progress.blob_done(index, &desc.digest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::usable_token;

    #[test]
    fn a_token_that_is_no_header_value_is_refused() {
        assert!(usable_token("eyJhbGciOi.eyJleHAiOjF9.c2ln"));
        assert!(!usable_token("abc\ndef"));
        assert!(!usable_token("abc\u{7f}"));
        assert!(usable_token("tökén"));
    }
}
