//! The management components' files (each components manifest and clusterctl `metadata.yaml` a
//! Bundles manifest names, and Flux's install manifest, [`snow_api::release::flux_install_asset`])
//! fetched over HTTPS into a cache keyed by sha256, so a second run needs no network; stored in
//! and read back from the offline archive.
//!
//! The cache directory holds `sha256/<hex>` (each file's bytes, named by their digest) and
//! `uris/<sha256 of the URI>` (the digest a URI gave). A file is written to a temporary name and
//! renamed, so an interrupted fetch leaves nothing half-written; a cached file whose bytes no
//! longer match its digest is fetched again. Release assets are versioned, so a URI once fetched
//! is not asked again.
//!
//! Only HTTPS, through reqwest on rustls and aws-lc-rs (the TLS stack oci-client already uses),
//! trusting the system's roots and the PEM certificates given; every file bounded in size
//! ([`MAX_ASSET_BYTES`]) and time ([`ASSET_DEADLINE`]); a body that is not YAML manifests (for
//! Flux's install manifest: Kubernetes objects, each with `apiVersion` and `kind`) is refused
//! before it is cached. Every failure is reported at once, each naming the component, its
//! version and the URI.

use crate::{archive::Archive, layout::ArchiveFile, limits::CONNECT_TIMEOUT, registry::sha256};
use futures_util::future::join_all;
use snow_api::redact::redact_userinfo;
use snow_api::release::{ComponentAssets, ComponentFiles, FLUX};
use std::{
    fmt,
    io::Write as _,
    path::{Path, PathBuf},
    time::Duration,
};

/// The most bytes of one file (the largest real components manifest is about 1.2 MB).
pub const MAX_ASSET_BYTES: u64 = 16 << 20;

/// The default deadline of fetching one file, body included (120 s).
pub const ASSET_DEADLINE: Duration = Duration::from_secs(120);

/// Where the files go in the offline archive: `components/<label>/<version>/<file>` under
/// `snowctl/manifests/` ([`ComponentAssets::path`]).
pub const ARCHIVE_DIR: &str = "components/";

/// How to fetch.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// The cache directory (created when missing).
    pub cache_dir: PathBuf,
    /// PEM CA certificates trusted besides the system's.
    pub ca_certs_pem: Vec<Vec<u8>>,
    /// The deadline of one file, connecting and body included.
    pub deadline: Duration,
    /// The most bytes of one file.
    pub max_bytes: u64,
}

impl FetchConfig {
    /// Fetching into `cache_dir` with the default bounds and the system's roots only.
    pub fn new(cache_dir: PathBuf) -> FetchConfig {
        FetchConfig {
            cache_dir,
            ca_certs_pem: Vec::new(),
            deadline: ASSET_DEADLINE,
            max_bytes: MAX_ASSET_BYTES,
        }
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/snowctl`, else `$HOME/.cache/snowctl` (the
/// caller reads the two variables; empty counts as unset).
pub fn default_cache_dir(
    xdg_cache_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let set = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    set(xdg_cache_home)
        .or_else(|| set(home).map(|h| h.join(".cache")))
        .map(|d| d.join("snowctl"))
}

/// One file that could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetFailure {
    /// The component's manifest label (`cluster-api`, …).
    pub component: String,
    /// Its version as the bundle writes it.
    pub version: String,
    /// `components`, `metadata` or (Flux's) `install manifest`.
    pub file: &'static str,
    /// The URI.
    pub uri: String,
    /// Why.
    pub reason: String,
}

impl fmt::Display for AssetFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} {} {} ({}): {}",
            self.component,
            self.version,
            self.file,
            redact_userinfo(&self.uri),
            redact_userinfo(&self.reason)
        )
    }
}

/// Why the components' files could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssetsError {
    /// Files could not be fetched (every one that failed).
    #[error("cannot fetch the management components:\n  - {}", list(.0))]
    Fetch(Vec<AssetFailure>),
    /// Files are not in the archive, or unreadable there.
    #[error("the archive {archive} lacks management components:\n  - {}", list(.failures))]
    Archive {
        /// The archive.
        archive: String,
        /// Every file missing or unreadable.
        failures: Vec<AssetFailure>,
    },
    /// The cache directory cannot be used.
    #[error("the components cache {dir}: {message}")]
    Cache {
        /// The directory.
        dir: String,
        /// What failed.
        message: String,
    },
    /// The release defaults could not be had from an EKS Anywhere Release manifest.
    #[error(
        "cannot take the release defaults from {}: {}",
        redact_userinfo(.url),
        redact_userinfo(.reason)
    )]
    Release {
        /// The URL that failed (the Release manifest, a Bundles or an EKS-D manifest).
        url: String,
        /// Why.
        reason: String,
    },
    /// None of the releases looked at has a Snow section for the Kubernetes version asked.
    #[error(
        "cannot take the release defaults from {url}: none of the {} newest releases ({}) has a Snow section for Kubernetes {kube_version}{}",
        looked.len(),
        looked.join(", "),
        newest_note(newest.as_deref(), snow_versions)
    )]
    NoSnowRelease {
        /// The Release manifest's URL.
        url: String,
        /// The Kubernetes version asked for.
        kube_version: String,
        /// The releases looked at, newest first.
        looked: Vec<String>,
        /// The newest of them with a Snow section for some version, when one has it (without
        /// EKS-D manifests): the release a caller that reports the version missing checks
        /// the spec against.
        newest: Option<Box<FetchedRelease>>,
        /// The Kubernetes versions with a Snow section in `newest`.
        snow_versions: Vec<String>,
    },
    /// A CA certificate is not PEM.
    #[error("a CA certificate given is not PEM: {message}")]
    CaCertificate {
        /// The reader's message.
        message: String,
    },
}

fn newest_note(newest: Option<&FetchedRelease>, versions: &[String]) -> String {
    match newest {
        Some(release) => format!(
            " (the newest with one, {}, has {})",
            release.version,
            versions.join(", ")
        ),
        None => String::new(),
    }
}

fn list(failures: &[AssetFailure]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n  - ")
}

/// The files of every component, and how many were fetched and how many came from the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// `files[i]` holds the i-th component's.
    pub files: Vec<ComponentFiles>,
    /// Files fetched over the network.
    pub fetched: usize,
    /// Files read from the cache.
    pub cached: usize,
}

/// The files (components manifest, then metadata) of a component: `(which, uri)`.
fn files_of(a: &ComponentAssets) -> impl Iterator<Item = (&'static str, &str)> {
    std::iter::once((main_file(a), a.components_uri.as_str()))
        .chain(a.metadata_uri.as_deref().map(|m| ("metadata", m)))
}

/// What a component's main file is called in messages.
fn main_file(a: &ComponentAssets) -> &'static str {
    match a.label {
        FLUX => "install manifest",
        _ => "components",
    }
}

/// The check a file passes before it is cached: Flux's install manifest is Kubernetes objects
/// (what its install applies); clusterctl's `metadata.yaml` of etcdadm's providers has no
/// `kind`, so the components' files are only YAML mappings.
fn check_file(a: &ComponentAssets, text: &str) -> Result<(), String> {
    match a.label {
        FLUX => check_objects(text),
        _ => check_yaml(text).map(drop),
    }
}

/// Fetches every file of `assets` not in the cache yet (concurrently), caches it, and returns
/// the texts of all; every failure is reported at once.
pub async fn fetch_components(
    assets: &[ComponentAssets],
    config: &FetchConfig,
) -> Result<Fetched, AssetsError> {
    let cache = Cache::open(&config.cache_dir)?;
    let mut wanted = Vec::new();
    let mut texts: Vec<Option<String>> = Vec::new();
    let mut cached = 0;
    for a in assets {
        for (file, uri) in files_of(a) {
            let hit = cache.lookup(uri);
            cached += usize::from(hit.is_some());
            if hit.is_none() {
                wanted.push((texts.len(), a, file, uri));
            }
            texts.push(hit);
        }
    }
    let client = match wanted.is_empty() {
        true => None,
        false => Some(http_client(config)?),
    };
    let fetched = wanted.len();
    let results = join_all(wanted.into_iter().map(|(slot, a, file, uri)| {
        let client = client.clone();
        let cache = &cache;
        async move {
            let fail = |reason: String| AssetFailure {
                component: a.label.to_owned(),
                version: a.version.clone(),
                file,
                uri: uri.to_owned(),
                reason,
            };
            let client = client.ok_or_else(|| fail("no HTTP client".into()))?;
            let text = fetch(&client, uri, config).await.map_err(&fail)?;
            check_file(a, &text).map_err(&fail)?;
            cache.store(uri, text.as_bytes()).map_err(&fail)?;
            Ok::<_, AssetFailure>((slot, text))
        }
    }))
    .await;
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok((slot, text)) => texts[slot] = Some(text),
            Err(f) => failures.push(f),
        }
    }
    if !failures.is_empty() {
        return Err(AssetsError::Fetch(failures));
    }
    let mut texts = texts.into_iter().map(Option::unwrap_or_default);
    let files = assets
        .iter()
        .map(|a| ComponentFiles {
            origin: a.components_uri.clone(),
            components: texts.next().unwrap_or_default(),
            metadata: a
                .metadata_uri
                .as_ref()
                .map(|m| (m.clone(), texts.next().unwrap_or_default())),
        })
        .collect();
    Ok(Fetched {
        files,
        fetched,
        cached,
    })
}

/// The release defaults taken from an EKS Anywhere Release manifest ([`fetch_release`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedRelease {
    /// The EKS Anywhere version chosen (`v0.21.2`).
    pub version: String,
    /// Its Bundles manifest's URL.
    pub bundles_url: String,
    /// The Bundles manifest.
    pub bundles: String,
    /// The EKS-D Release manifests its Snow versions bundles name: `(URL, text)`.
    pub eksd: Vec<(String, String)>,
    /// Why the Release manifest was read from the cache instead of the network, when it was.
    pub stale: Option<String>,
    /// Files fetched over the network.
    pub fetched: usize,
}

/// The newest EKS Anywhere release of the Release manifest at `url` whose Bundles has the Snow
/// section for `kube_version` (any version when `None`), its Bundles manifest and the EKS-D
/// Release manifests of its Snow versions bundles (only `kube_version`'s when given).
///
/// The Release manifest changes with every release, so it is fetched each time, and read from
/// the cache only when the network fails (said in [`FetchedRelease::stale`]); Bundles and EKS-D
/// manifests are versioned, read from the cache once fetched. At most
/// [`snow_api::release::eksa::MAX_BUNDLES_TRIED`] Bundles manifests are looked at.
pub async fn fetch_release(
    url: &str,
    kube_version: Option<&str>,
    config: &FetchConfig,
) -> Result<FetchedRelease, AssetsError> {
    use snow_api::release::{Bundles, eksa};
    let failed = |url: &str, reason: String| AssetsError::Release {
        url: url.to_owned(),
        reason,
    };
    let cache = Cache::open(&config.cache_dir)?;
    let client = http_client(config)?;
    let mut fetched = 0;
    let (manifest, stale) = match fetch(&client, url, config).await {
        Ok(text) => {
            cache
                .store(url, text.as_bytes())
                .map_err(|e| failed(url, e))?;
            fetched += 1;
            (text, None)
        }
        Err(reason) => match cache.lookup(url) {
            Some(text) => (text, Some(reason)),
            None => {
                return Err(failed(
                    url,
                    format!("{reason} (and it is not in the cache)"),
                ));
            }
        },
    };
    let releases =
        eksa::EksaReleases::from_yaml(&manifest).map_err(|e| failed(url, e.to_string()))?;
    let candidates = releases.candidates();
    let cached_or_fetched = async |uri: &str, fetched: &mut usize| {
        if let Some(text) = cache.lookup(uri) {
            return Ok(text);
        }
        let text = fetch(&client, uri, config)
            .await
            .map_err(|r| failed(uri, r))?;
        check_yaml(&text).map_err(|r| failed(uri, r))?;
        cache
            .store(uri, text.as_bytes())
            .map_err(|r| failed(uri, r))?;
        *fetched += 1;
        Ok::<_, AssetsError>(text)
    };
    // The newest release with a Snow section for any version, and those versions.
    let mut newest: Option<(&eksa::EksaRelease, String, Vec<String>)> = None;
    for release in &candidates {
        let uri = release.bundle_manifest_url.as_str();
        let text = cached_or_fetched(uri, &mut fetched).await?;
        let bundles = Bundles::from_yaml(&text).map_err(|e| failed(uri, e.to_string()))?;
        if !eksa::has_snow(&bundles, kube_version) {
            if newest.is_none() && eksa::has_snow(&bundles, None) {
                let versions = (bundles.spec.versions_bundles.iter())
                    .filter(|vb| vb.snow().is_ok())
                    .map(|vb| vb.kube_version.clone())
                    .collect();
                newest = Some((release, text, versions));
            }
            continue;
        }
        let mut eksd = Vec::new();
        for vb in &bundles.spec.versions_bundles {
            let wanted = kube_version.is_none_or(|k| vb.kube_version == k);
            let url = vb.eks_d.manifest_url.as_str();
            if !wanted || vb.snow().is_err() || eksd.iter().any(|(u, _)| u == url) {
                continue;
            }
            if !url.starts_with("https://") {
                return Err(failed(
                    uri,
                    format!(
                        "Kubernetes {}: eksD.manifestUrl {url:?} is not an https:// URL",
                        vb.kube_version
                    ),
                ));
            }
            let text = cached_or_fetched(url, &mut fetched).await?;
            eksd.push((url.to_owned(), text));
        }
        return Ok(FetchedRelease {
            version: release.version.clone(),
            bundles_url: uri.to_owned(),
            bundles: text,
            eksd,
            stale,
            fetched,
        });
    }
    let looked: Vec<&str> = candidates.iter().map(|r| r.version.as_str()).collect();
    if let Some(kube_version) = kube_version {
        let (newest, snow_versions) = match newest {
            Some((release, bundles, versions)) => {
                let found = FetchedRelease {
                    version: release.version.clone(),
                    bundles_url: release.bundle_manifest_url.clone(),
                    bundles,
                    eksd: Vec::new(),
                    stale,
                    fetched,
                };
                (Some(Box::new(found)), versions)
            }
            None => (None, Vec::new()),
        };
        return Err(AssetsError::NoSnowRelease {
            url: url.to_owned(),
            kube_version: kube_version.to_owned(),
            looked: looked.iter().map(|v| (*v).to_owned()).collect(),
            newest,
            snow_versions,
        });
    }
    Err(failed(
        url,
        format!(
            "none of the {} newest releases ({}) has a Snow section{}",
            looked.len(),
            looked.join(", "),
            kube_version
                .map(|k| format!(" for Kubernetes {k}"))
                .unwrap_or_default()
        ),
    ))
}

fn http_client(config: &FetchConfig) -> Result<reqwest::Client, AssetsError> {
    let mut certs = Vec::new();
    for pem in &config.ca_certs_pem {
        certs.extend(
            reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| AssetsError::CaCertificate { message: chain(&e) })?,
        );
    }
    reqwest::Client::builder()
        .https_only(true)
        .connect_timeout(CONNECT_TIMEOUT.min(config.deadline))
        .timeout(config.deadline)
        .tls_certs_merge(certs)
        .build()
        .map_err(|e| AssetsError::CaCertificate { message: chain(&e) })
}

/// An error and its causes, so a TLS failure says what the certificate check found.
fn chain(e: &dyn std::error::Error) -> String {
    snow_api::error_chain(e)
}

async fn fetch(
    client: &reqwest::Client,
    uri: &str,
    config: &FetchConfig,
) -> Result<String, String> {
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            format!(
                "no complete answer within the {} s deadline",
                config.deadline.as_secs_f32()
            )
        } else {
            // The URI is in the message already.
            chain(&e.without_url())
        }
    };
    let mut response = client.get(uri).send().await.map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the server answered {status}"));
    }
    let too_big = || format!("larger than {} MiB", config.max_bytes >> 20);
    if response
        .content_length()
        .is_some_and(|n| n > config.max_bytes)
    {
        return Err(too_big());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if (body.len() + chunk.len()) as u64 > config.max_bytes {
            return Err(too_big());
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body).map_err(|_| "the body is not UTF-8 text".into())
}

/// A components manifest or metadata file is YAML whose documents are each a mapping (an HTML
/// error page parses as YAML too: one string); its documents, the empty ones left out.
fn check_yaml(text: &str) -> Result<Vec<serde_json::Value>, String> {
    let mut docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| format!("the body is not YAML: {e}"))?;
    docs.retain(|d| !d.is_null());
    if docs.is_empty() || docs.iter().any(|d| !d.is_object()) {
        return Err("the body is not a YAML manifest (its documents are not all mappings)".into());
    }
    Ok(docs)
}

/// Flux's install manifest is Kubernetes objects: YAML mappings, each with an `apiVersion` and
/// a `kind`.
fn check_objects(text: &str) -> Result<(), String> {
    let bad: Vec<String> = (check_yaml(text)?.iter().enumerate())
        .filter(|(_, d)| !d["apiVersion"].is_string() || !d["kind"].is_string())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    match bad.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the body is not Kubernetes objects: document(s) {} have no apiVersion or kind",
            bad.join(", ")
        )),
    }
}

/// Puts a component's main file (its components manifest; Flux's install manifest), obtained
/// by other means, into the cache under its URI, checked as a fetched one is, so that a later
/// fetch of that URI reads it from the cache (for a machine without the network).
pub fn cache_file(dir: &Path, asset: &ComponentAssets, text: &str) -> Result<(), AssetsError> {
    let fail = |reason: String| {
        AssetsError::Fetch(vec![AssetFailure {
            component: asset.label.to_owned(),
            version: asset.version.clone(),
            file: main_file(asset),
            uri: asset.components_uri.clone(),
            reason,
        }])
    };
    check_file(asset, text).map_err(fail)?;
    Cache::open(dir)?
        .store(&asset.components_uri, text.as_bytes())
        .map_err(fail)
}

/// The cache directory.
struct Cache {
    dir: PathBuf,
}

impl Cache {
    fn open(dir: &Path) -> Result<Cache, AssetsError> {
        for sub in ["sha256", "uris"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| AssetsError::Cache {
                dir: dir.display().to_string(),
                message: e.to_string(),
            })?;
        }
        Ok(Cache {
            dir: dir.to_path_buf(),
        })
    }

    fn uri_entry(&self, uri: &str) -> PathBuf {
        let key = sha256(uri.as_bytes());
        self.dir
            .join("uris")
            .join(key.trim_start_matches("sha256:"))
    }

    /// The text a URI gave, when cached and intact.
    fn lookup(&self, uri: &str) -> Option<String> {
        let digest = std::fs::read_to_string(self.uri_entry(uri)).ok()?;
        let hex = digest.trim().strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let bytes = std::fs::read(self.dir.join("sha256").join(hex)).ok()?;
        (sha256(&bytes) == digest.trim())
            .then(|| String::from_utf8(bytes).ok())
            .flatten()
    }

    /// Stores the bytes under their digest, then the URI's entry, each renamed into place.
    fn store(&self, uri: &str, bytes: &[u8]) -> Result<(), String> {
        let digest = sha256(bytes);
        let hex = digest.trim_start_matches("sha256:");
        let write = |path: PathBuf, bytes: &[u8]| -> std::io::Result<()> {
            let tmp = path.with_extension(format!("partial-{}", std::process::id()));
            // A leftover (or a planted link) is removed, never followed: the file is made anew.
            match std::fs::remove_file(&tmp) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        let fail =
            |e: std::io::Error| format!("cannot write the cache {}: {e}", self.dir.display());
        write(self.dir.join("sha256").join(hex), bytes).map_err(fail)?;
        write(self.uri_entry(uri), format!("{digest}\n").as_bytes()).map_err(fail)
    }
}

/// The files to store in the offline archive (`components/<label>/<version>/<file>`), one per
/// path (bundles of several Kubernetes versions often share components).
pub fn archive_files(assets: &[ComponentAssets], files: &[ComponentFiles]) -> Vec<ArchiveFile> {
    let mut out: Vec<ArchiveFile> = Vec::new();
    for (a, f) in assets.iter().zip(files) {
        let mut add = |uri: &str, text: &str| {
            let path = format!("{ARCHIVE_DIR}{}", a.path(uri));
            if !out.iter().any(|o| o.path == path) {
                out.push(ArchiveFile {
                    path,
                    content: text.as_bytes().to_vec(),
                });
            }
        };
        add(&a.components_uri, &f.components);
        if let (Some(uri), Some((_, text))) = (&a.metadata_uri, &f.metadata) {
            add(uri, text);
        }
    }
    out
}

/// The files of every component from an archive `snowctl download artifacts` wrote; every
/// missing or unreadable one is reported at once.
pub fn from_archive(
    archive: &Archive,
    assets: &[ComponentAssets],
) -> Result<Vec<ComponentFiles>, AssetsError> {
    let mut failures = Vec::new();
    let mut read = |a: &ComponentAssets, file: &'static str, uri: &str| {
        let path = format!("{ARCHIVE_DIR}{}", a.path(uri));
        let text = match archive.file(&path) {
            None => Err(format!(
                "no {}{path} (the archive was downloaded without components, or for another bundle)",
                crate::layout::FILES_DIR
            )),
            Some(Err(e)) => Err(e),
            Some(Ok(bytes)) => String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into()),
        };
        let origin = format!(
            "{}:{}{path}",
            archive.path().display(),
            crate::layout::FILES_DIR
        );
        text.map(|t| (origin, t)).unwrap_or_else(|reason| {
            failures.push(AssetFailure {
                component: a.label.to_owned(),
                version: a.version.clone(),
                file,
                uri: uri.to_owned(),
                reason,
            });
            (String::new(), String::new())
        })
    };
    let files: Vec<ComponentFiles> = assets
        .iter()
        .map(|a| {
            let (origin, components) = read(a, main_file(a), &a.components_uri);
            let metadata = a.metadata_uri.as_ref().map(|uri| read(a, "metadata", uri));
            ComponentFiles {
                origin,
                components,
                metadata,
            }
        })
        .collect();
    if failures.is_empty() {
        Ok(files)
    } else {
        Err(AssetsError::Archive {
            archive: archive.path().display().to_string(),
            failures,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_release_or_component_url_is_not_shown() {
        let url = "https://admin:hunter2@assets.site/releases/manifest.yaml";
        let release = AssetsError::Release {
            url: url.into(),
            reason: format!("error sending request for url ({url})"),
        };
        let fetch = AssetsError::Fetch(vec![AssetFailure {
            component: "cluster-api".into(),
            version: "v1.13.5".into(),
            file: "components",
            uri: url.into(),
            reason: format!("HTTP 404 from {url}"),
        }]);
        for err in [release, fetch] {
            let shown = err.to_string();
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains("https://<redacted>@assets.site/"), "{shown}");
        }
    }

    #[test]
    fn the_default_cache_follows_xdg() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(
            default_cache_dir(p("/x/cache"), p("/home/u")),
            p("/x/cache/snowctl")
        );
        assert_eq!(
            default_cache_dir(p(""), p("/home/u")),
            p("/home/u/.cache/snowctl")
        );
        assert_eq!(default_cache_dir(None, None), None);
    }

    #[test]
    fn a_link_planted_at_a_cache_file_being_written_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("cache")).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me\n").unwrap();
        let uri = "https://example.invalid/manifest.yaml";
        let tmp = cache
            .uri_entry(uri)
            .with_extension(format!("partial-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        cache.store(uri, b"kind: A\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
        assert_eq!(cache.lookup(uri).as_deref(), Some("kind: A\n"));
    }

    #[test]
    fn only_yaml_manifests_pass() {
        assert!(check_yaml("kind: Namespace\n---\nkind: Deployment\n").is_ok());
        assert!(check_yaml("---\nkind: A\n---\n").is_ok());
        let html = check_yaml("<html><body>Not Found</body></html>\n").unwrap_err();
        assert!(html.contains("not a YAML manifest"), "{html}");
        let broken = check_yaml("kind: [unclosed\n").unwrap_err();
        assert!(broken.contains("not YAML"), "{broken}");
        assert!(check_yaml("").is_err());
    }

    #[test]
    fn flux_install_manifest_must_be_kubernetes_objects() {
        assert!(
            check_objects("apiVersion: v1\nkind: Namespace\n---\n---\napiVersion: v1\nkind: A\n")
                .is_ok()
        );
        let err = check_objects("apiVersion: v1\nkind: Namespace\n---\nkind: A\n---\nfoo: 1\n")
            .unwrap_err();
        assert!(
            err.contains("document(s) 2, 3 have no apiVersion or kind"),
            "{err}"
        );
        assert!(
            check_objects("<html></html>")
                .unwrap_err()
                .contains("not a YAML manifest")
        );
    }

    #[test]
    fn a_damaged_cache_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        cache.store("https://x/a.yaml", b"kind: A\n").unwrap();
        assert_eq!(
            cache.lookup("https://x/a.yaml").as_deref(),
            Some("kind: A\n")
        );
        assert_eq!(cache.lookup("https://x/b.yaml"), None);
        let hex = sha256(b"kind: A\n");
        let blob = dir
            .path()
            .join("sha256")
            .join(hex.trim_start_matches("sha256:"));
        std::fs::write(blob, b"kind: B\n").unwrap();
        assert_eq!(cache.lookup("https://x/a.yaml"), None);
    }
}
