//! The vocabulary of an image transfer that the copy engine (`copy`) and the registry client
//! (`registry`) share: which image goes where ([`ImageCopy`]), what happened to it
//! ([`ImageStatus`], [`ImageResult`]), the registries' logins ([`Credentials`]) and the progress
//! events ([`Progress`]). Both import it; neither imports the other for it.

use crate::ImagesError;
use oci_client::secrets::RegistryAuth;
use serde::Serialize;
use serde_json::Value;
use std::{collections::HashMap, fmt};
use zeroize::Zeroizing;

/// A registry password: `Debug` prints `<redacted>`, and the memory is zeroed on drop (as the
/// device credentials of `snow-credentials` are).
#[derive(Clone)]
struct Password(Zeroizing<String>);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Registry credentials by registry host. `Debug` shows hosts and users, never passwords.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    by_host: HashMap<String, (String, Password)>,
}

impl Credentials {
    /// Adds a user and password for a registry host. The password is moved in: no copy is left
    /// behind, and it is zeroed when the credentials are dropped.
    pub fn insert(&mut self, host: &str, username: String, password: String) {
        self.by_host.insert(
            host.to_owned(),
            (username, Password(Zeroizing::new(password))),
        );
    }

    /// Reads the `auths` of a Docker config file (`{"auths": {"HOST": {"auth": base64(user:pass)}}}`
    /// or `username`/`password`). Entries that cannot be decoded are skipped.
    pub fn from_docker_config(text: &str) -> Result<Credentials, ImagesError> {
        use base64::Engine as _;
        let config: Value = serde_json::from_str(text).map_err(|e| ImagesError::DockerConfig {
            message: e.to_string(),
        })?;
        let mut creds = Credentials::default();
        let Some(auths) = config.get("auths").and_then(Value::as_object) else {
            return Ok(creds);
        };
        for (host, entry) in auths {
            let host = host
                .trim_start_matches("https://")
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap_or(host);
            let pair = if let Some(auth) = entry.get("auth").and_then(Value::as_str) {
                base64::engine::general_purpose::STANDARD
                    .decode(auth)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .map(Zeroizing::new)
                    .and_then(|s| s.split_once(':').map(|(u, p)| (u.to_owned(), p.to_owned())))
            } else {
                entry
                    .get("username")
                    .and_then(Value::as_str)
                    .zip(entry.get("password").and_then(Value::as_str))
                    .map(|(u, p)| (u.to_owned(), p.to_owned()))
            };
            if let Some((u, p)) = pair {
                creds.insert(host, u, p);
            }
        }
        Ok(creds)
    }

    pub(crate) fn auth_for(&self, host: &str) -> RegistryAuth {
        match self.by_host.get(host) {
            // oci-client takes the password as a plain `String` for the request.
            Some((u, p)) => RegistryAuth::Basic(u.clone(), p.0.as_str().to_owned()),
            None => RegistryAuth::Anonymous,
        }
    }
}

/// One image to copy: where from, where to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageCopy {
    /// The image as the list names it.
    pub image: String,
    /// The reference read.
    pub source: String,
    /// The reference written.
    pub target: String,
}

/// What happened to one image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum ImageStatus {
    /// Something was written to the target.
    Copied {
        /// Blobs streamed from the source.
        blobs_copied: usize,
        /// Blobs mounted from another repository of the target.
        blobs_mounted: usize,
        /// Blobs the target already had.
        blobs_skipped: usize,
        /// Bytes streamed.
        bytes: u64,
    },
    /// The target tag already pointed at the same manifest: nothing transferred.
    UpToDate,
    /// The copy failed; the other images went on.
    Failed {
        /// Why.
        error: String,
    },
}

/// One image's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageResult {
    /// What was copied.
    #[serde(flatten)]
    pub copy: ImageCopy,
    /// The manifest digest written (or found) in the target.
    pub digest: Option<String>,
    /// The outcome.
    #[serde(flatten)]
    pub status: ImageStatus,
}

/// One line a person reads as the image is done: `copied TARGET (3 blobs, 1.2 MB; 0 mounted,
/// 1 already there)`, `up to date TARGET` or `FAILED IMAGE: why`.
impl fmt::Display for ImageResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.status {
            ImageStatus::Copied {
                blobs_copied,
                blobs_mounted,
                blobs_skipped,
                bytes,
            } => write!(
                f,
                "copied {} ({blobs_copied} blobs, {:.1} MB; {blobs_mounted} mounted, {blobs_skipped} already there)",
                self.copy.target,
                *bytes as f64 / 1_000_000.0
            ),
            ImageStatus::UpToDate => write!(f, "up to date {}", self.copy.target),
            ImageStatus::Failed { error } => write!(f, "FAILED {}: {error}", self.copy.image),
        }
    }
}

/// Progress events; the library never prints. Every method has an empty default.
pub trait Progress: Send + Sync {
    /// Image `index` of the plan started.
    fn image_started(&self, _index: usize, _copy: &ImageCopy) {}
    /// A blob of `size` bytes of image `index` is about to be streamed.
    fn blob_started(&self, _index: usize, _digest: &str, _size: u64) {}
    /// `n` more bytes of image `index` were streamed.
    fn bytes(&self, _index: usize, _n: u64) {}
    /// A blob of image `index` is in the target (copied, mounted or already there).
    fn blob_done(&self, _index: usize, _digest: &str) {}
    /// Image `index` finished.
    fn image_finished(&self, _index: usize, _result: &ImageResult) {}
}

/// A progress sink that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;
impl Progress for NoProgress {}
