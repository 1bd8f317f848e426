//! The release catalog a command works from, resolved once: the versions, images and EKS-D facts
//! ([`ReleaseInputs`]) and the manifests as written, from one [`CatalogSource`] (an offline
//! archive, a Bundles file, EKS Anywhere's published Release manifest, or the embedded sample).
//!
//! An archive is opened and its manifests read once: the [`Catalog`] holds the opened
//! [`Archive`], from which the management components ([`crate::components::ComponentsSource::Opened`])
//! and the Cilium charts ([`Catalog::cilium_charts`], [`Catalog::chart_files`]) are read. Nothing
//! is printed: what the caller may say (which release, from where, a copy taken from the cache)
//! is in [`Catalog::origin`].

use snow_api::release::{Bundles, Image, Release, ReleaseError, ReleaseInputs};
use snow_images::{
    Archive, ArchiveError,
    assets::{self, AssetsError, FetchConfig},
    charts::{self, ChartFiles, ChartsError},
};
use std::{
    io::Read,
    path::{Path, PathBuf},
    sync::Arc,
};

/// The most bytes read from one manifest file (64 MiB): far above any Bundles or EKS-D manifest;
/// more is an error, never a silent cut.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Where the release catalog comes from.
#[derive(Debug, Clone)]
pub enum CatalogSource {
    /// An archive of the artifacts download (a tar, or the directory it was unpacked to): its
    /// Bundles and EKS-D Release manifests; nothing is read from the network.
    Archive(PathBuf),
    /// A Bundles manifest file, with EKS-D Release manifest files.
    BundlesFile {
        /// The Bundles manifest.
        bundles: PathBuf,
        /// EKS-D Release manifests read besides the embedded facts.
        eksd: Vec<PathBuf>,
    },
    /// The newest EKS Anywhere release with a Snow section (for `kube_version` when given) of
    /// the Release manifest at `manifest_url`, fetched over HTTPS into a cache.
    Published {
        /// The EKS Anywhere Release manifest
        /// ([`snow_api::release::eksa::DEFAULT_RELEASE_MANIFEST`] unless another is named).
        manifest_url: String,
        /// The cache directory and the CA certificates trusted besides the system's.
        fetch: FetchConfig,
        /// The Kubernetes version the release must have a Snow section for.
        kube_version: Option<String>,
        /// When no release has a Snow section for `kube_version`, take the newest release with
        /// one instead of failing (for a caller that reports the version missing against it).
        newest_instead: bool,
        /// EKS-D Release manifest files read besides the release's.
        eksd: Vec<PathBuf>,
    },
    /// The embedded sample catalog (a development build of EKS Anywhere's sample Bundles: its
    /// images and components are not published).
    EmbeddedSample {
        /// EKS-D Release manifest files read besides the embedded facts.
        eksd: Vec<PathBuf>,
    },
}

/// Which release was taken and from where, for the caller to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The manifests of this archive.
    Archive(PathBuf),
    /// This Bundles manifest file.
    BundlesFile(PathBuf),
    /// A published EKS Anywhere release.
    Published(PublishedRelease),
    /// The embedded sample.
    EmbeddedSample,
}

/// The published release a [`CatalogSource::Published`] resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedRelease {
    /// The Release manifest read.
    pub manifest_url: String,
    /// The EKS Anywhere version taken (`v0.21.2`).
    pub version: String,
    /// Its Bundles manifest's URL.
    pub bundles_url: String,
    /// Why the Release manifest was read from the cache instead of the network, when it was.
    pub stale: Option<String>,
    /// The cache directory.
    pub cache_dir: PathBuf,
    /// No release had a Snow section for the Kubernetes version asked: this is the newest
    /// with one ([`CatalogSource::Published::newest_instead`]).
    pub newest_instead: bool,
}

/// The release catalog, read once: the inputs, the manifests as written (an archive stores
/// them; the image list reads sections the inputs do not keep), what it is, and the archive it
/// was read from.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Versions, images and EKS-D facts.
    pub inputs: ReleaseInputs,
    /// The Bundles manifest as written.
    pub bundles: String,
    /// The EKS-D Release manifests read besides the embedded facts: (name, text).
    pub eksd: Vec<(String, String)>,
    /// What it is, as a finding names it: `EKS Anywhere v0.29.1`, `the Bundles manifest FILE`,
    /// `the release of ARCHIVE`, or the embedded sample's name.
    pub source: String,
    /// Which release, from where.
    pub origin: Origin,
    /// The archive it was read from ([`CatalogSource::Archive`]), opened once.
    pub archive: Option<Arc<Archive>>,
}

/// Why the release catalog could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The archive cannot be opened.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The archive holds no release manifests (or unreadable ones).
    #[error("{0}")]
    ArchiveRelease(String),
    /// A manifest file could not be read.
    #[error("cannot read {what} {}: {reason}", .path.display())]
    Read {
        /// What the file is (`the bundles manifest`, `the EKS-D release`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: ReadError,
    },
    /// The published release could not be fetched.
    #[error(transparent)]
    Fetch(#[from] AssetsError),
    /// The Bundles manifest cannot be used.
    #[error("{0}")]
    Bundles(ReleaseError),
    /// An EKS-D Release manifest cannot be used.
    #[error("{name}: {reason}")]
    Eksd {
        /// The manifest (its file, or its name in the archive or release).
        name: String,
        /// Why.
        reason: ReleaseError,
    },
}

impl CatalogError {
    /// Whether the input given cannot be used (a file, an archive, a manifest), rather than the
    /// network failing.
    pub fn is_input(&self) -> bool {
        !matches!(self, CatalogError::Fetch(_))
    }
}

/// Why a manifest file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read.
    #[error("{0}")]
    Io(std::io::Error),
    /// It is larger than [`MAX_MANIFEST_BYTES`].
    #[error("it is larger than {} MiB, the most snowctl reads from one input", MAX_MANIFEST_BYTES >> 20)]
    TooLarge,
    /// It is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText,
}

/// A manifest file's text, up to [`MAX_MANIFEST_BYTES`].
fn read_text(path: &Path, what: &'static str) -> Result<String, CatalogError> {
    read_manifest(path).map_err(|reason| CatalogError::Read {
        what,
        path: path.to_owned(),
        reason,
    })
}

/// A manifest file's text, up to [`MAX_MANIFEST_BYTES`] (also Flux's install manifest given).
pub(crate) fn read_manifest(path: &Path) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_MANIFEST_BYTES + 1).read_to_end(&mut bytes))
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(ReadError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText)
}

impl CatalogSource {
    /// Reads the catalog: the archive opened and its manifests read (once), the files read, or
    /// the published release fetched (the Release manifest each time, from the cache when the
    /// network fails; Bundles and EKS-D manifests from the cache once fetched).
    pub async fn resolve(self) -> Result<Catalog, CatalogError> {
        let (bundles, mut eksd, source, origin, archive, extra) = match self {
            CatalogSource::Archive(path) => {
                let archive = Archive::open(&path)?;
                let (bundles, eksd) = archive
                    .release_manifests()
                    .map_err(CatalogError::ArchiveRelease)?;
                let source = format!("the release of {}", path.display());
                let archive = Some(Arc::new(archive));
                let origin = Origin::Archive(path);
                (Some(bundles), eksd, source, origin, archive, Vec::new())
            }
            CatalogSource::BundlesFile { bundles, eksd } => {
                let text = read_text(&bundles, "the bundles manifest")?;
                let source = format!("the Bundles manifest {}", bundles.display());
                let origin = Origin::BundlesFile(bundles);
                (Some(text), Vec::new(), source, origin, None, eksd)
            }
            CatalogSource::EmbeddedSample { eksd } if eksd.is_empty() => {
                return Catalog::embedded_sample();
            }
            CatalogSource::EmbeddedSample { eksd } => {
                let source = ReleaseInputs::EMBEDDED_NAME.to_owned();
                (None, Vec::new(), source, Origin::EmbeddedSample, None, eksd)
            }
            CatalogSource::Published {
                manifest_url,
                fetch,
                kube_version,
                newest_instead,
                eksd,
            } => {
                let fetched =
                    assets::fetch_release(&manifest_url, kube_version.as_deref(), &fetch).await;
                let (fetched, newest) = match fetched {
                    Ok(fetched) => (fetched, false),
                    Err(AssetsError::NoSnowRelease {
                        newest: Some(release),
                        ..
                    }) if newest_instead => (*release, true),
                    Err(e) => return Err(e.into()),
                };
                let source = match newest {
                    false => format!("EKS Anywhere {}", fetched.version),
                    true => format!(
                        "EKS Anywhere {}, the newest release with a Snow section",
                        fetched.version
                    ),
                };
                let origin = Origin::Published(PublishedRelease {
                    manifest_url,
                    version: fetched.version,
                    bundles_url: fetched.bundles_url,
                    stale: fetched.stale,
                    cache_dir: fetch.cache_dir,
                    newest_instead: newest,
                });
                (
                    Some(fetched.bundles),
                    fetched.eksd,
                    source,
                    origin,
                    None,
                    eksd,
                )
            }
        };
        for path in &extra {
            let text = read_text(path, "the EKS-D release")?;
            eksd.push((path.display().to_string(), text));
        }
        let mut inputs = match &bundles {
            None => ReleaseInputs::embedded(),
            Some(text) => Bundles::from_yaml(text).and_then(ReleaseInputs::from_bundles),
        }
        .map_err(CatalogError::Bundles)?;
        for (name, text) in &eksd {
            Release::from_yaml(text)
                .and_then(|r| inputs.add_release(&r))
                .map_err(|reason| CatalogError::Eksd {
                    name: name.clone(),
                    reason,
                })?;
        }
        let bundles = bundles.unwrap_or_else(|| ReleaseInputs::embedded_bundles_yaml().to_owned());
        Ok(Catalog {
            inputs,
            bundles,
            eksd,
            source,
            origin,
            archive,
        })
    }
}

impl Catalog {
    /// The embedded sample catalog alone ([`CatalogSource::EmbeddedSample`] without EKS-D
    /// files), read without IO.
    pub fn embedded_sample() -> Result<Catalog, CatalogError> {
        Ok(Catalog {
            inputs: ReleaseInputs::embedded().map_err(CatalogError::Bundles)?,
            bundles: ReleaseInputs::embedded_bundles_yaml().to_owned(),
            eksd: Vec::new(),
            source: ReleaseInputs::EMBEDDED_NAME.to_owned(),
            origin: Origin::EmbeddedSample,
            archive: None,
        })
    }

    /// The manifests as written, for the controller component's ConfigMap.
    pub fn release_files(&self) -> capi_render::controller::ReleaseFiles {
        capi_render::controller::ReleaseFiles {
            bundles: self.bundles.clone(),
            eksd: self.eksd.iter().map(|(_, text)| text.clone()).collect(),
        }
    }

    /// The Cilium chart of every Kubernetes version of the catalog that its archive holds, taken
    /// out into files ([`snow_images::charts::cilium_charts_of`]); `None` without an archive.
    pub fn cilium_charts(&self) -> Option<Result<ChartFiles, ChartsError>> {
        let archive = self.archive.as_deref()?;
        Some(charts::cilium_charts_of(archive, &self.inputs))
    }

    /// `charts` taken out of the catalog's archive into files
    /// ([`snow_images::charts::chart_files`]); `None` without an archive.
    pub fn chart_files(&self, charts: &[&Image]) -> Option<Result<ChartFiles, ChartsError>> {
        let archive = self.archive.as_deref()?;
        Some(charts::chart_files(archive, charts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    /// An unpacked archive with no image and the release manifests the download stores.
    fn archive_dir(dir: &Path, bundles: &str) -> PathBuf {
        let root = dir.join("site");
        std::fs::create_dir_all(root.join("snowctl/manifests")).unwrap();
        std::fs::write(
            root.join("index.json"),
            r#"{"schemaVersion":2,"manifests":[]}"#,
        )
        .unwrap();
        for file in snow_images::archive::release_files(bundles, &[], &[]) {
            let path = root.join("snowctl/manifests").join(&file.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &file.content).unwrap();
        }
        root
    }

    #[test]
    fn the_embedded_sample_resolves_with_its_name() {
        let catalog = block_on(CatalogSource::EmbeddedSample { eksd: Vec::new() }.resolve());
        let catalog = catalog.unwrap();
        assert_eq!(catalog.origin, Origin::EmbeddedSample);
        assert_eq!(catalog.source, ReleaseInputs::EMBEDDED_NAME);
        assert_eq!(catalog.bundles, ReleaseInputs::embedded_bundles_yaml());
        assert!(catalog.archive.is_none());
        assert!(!catalog.inputs.bundles.kube_versions().is_empty());
    }

    #[test]
    fn a_bundles_file_resolves_and_a_missing_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bundles.yaml");
        std::fs::write(&path, ReleaseInputs::embedded_bundles_yaml()).unwrap();
        let source = CatalogSource::BundlesFile {
            bundles: path.clone(),
            eksd: Vec::new(),
        };
        let catalog = block_on(source.resolve()).unwrap();
        assert_eq!(catalog.origin, Origin::BundlesFile(path.clone()));
        assert_eq!(
            catalog.source,
            format!("the Bundles manifest {}", path.display())
        );
        let missing = dir.path().join("eksd.yaml");
        let source = CatalogSource::BundlesFile {
            bundles: path,
            eksd: vec![missing.clone()],
        };
        let err = block_on(source.resolve()).unwrap_err();
        assert!(err.is_input());
        assert!(
            err.to_string().starts_with(&format!(
                "cannot read the EKS-D release {}: ",
                missing.display()
            )),
            "{err}"
        );
        std::fs::write(&missing, "kind: [").unwrap();
        let source = CatalogSource::BundlesFile {
            bundles: dir.path().join("bundles.yaml"),
            eksd: vec![missing.clone()],
        };
        let err = block_on(source.resolve()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("{}: ", missing.display())),
            "{err}"
        );
    }

    #[test]
    fn an_archive_is_opened_once_and_kept_with_its_release() {
        let dir = tempfile::tempdir().unwrap();
        let root = archive_dir(dir.path(), ReleaseInputs::embedded_bundles_yaml());
        let catalog = block_on(CatalogSource::Archive(root.clone()).resolve()).unwrap();
        assert_eq!(catalog.origin, Origin::Archive(root.clone()));
        assert_eq!(catalog.source, format!("the release of {}", root.display()));
        assert_eq!(catalog.bundles, ReleaseInputs::embedded_bundles_yaml());
        let archive = catalog.archive.clone().expect("the archive is kept");
        assert_eq!(archive.path(), root);
        // What is read afterwards comes from the archive held: with the directory gone, the
        // handle still answers (a second open would fail).
        let clone = catalog.clone();
        assert!(Arc::ptr_eq(clone.archive.as_ref().unwrap(), &archive));
        std::fs::remove_dir_all(&root).unwrap();
        assert!(Archive::open(&root).is_err());
        let charts = clone.cilium_charts().expect("an archive is there");
        // The archive holds no chart: said by the archive held, not by a new open.
        let err = charts.unwrap_err();
        assert!(err.is_input(), "{err}");
        assert!(err.to_string().contains("is not in the archive"), "{err}");
    }

    #[test]
    fn an_archive_without_release_manifests_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("bare");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("index.json"), r#"{"manifests":[]}"#).unwrap();
        let err = block_on(CatalogSource::Archive(root).resolve()).unwrap_err();
        assert!(matches!(err, CatalogError::ArchiveRelease(_)), "{err}");
        let err = block_on(CatalogSource::Archive(dir.path().join("none.tar")).resolve());
        assert!(matches!(err.unwrap_err(), CatalogError::Archive(_)));
    }

    #[test]
    fn the_published_release_is_fetched_then_read_from_the_cache() {
        use snow_test_devices::{TestCa, loopback_ip, release_site};
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let ca = TestCa::new("release site").unwrap();
        let eksd = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/eksd/kubernetes-1-21-eks-4.yaml"
        ))
        .unwrap();
        let server = rt
            .block_on(release_site::start(loopback_ip(), &ca, eksd))
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let url = format!("{}{}", server.base, release_site::RELEASE_MANIFEST_PATH);
        let source = |url: &str, kube: &str, newest_instead| CatalogSource::Published {
            manifest_url: url.to_owned(),
            fetch: FetchConfig {
                ca_certs_pem: vec![ca.pem().as_bytes().to_vec()],
                ..FetchConfig::new(dir.path().join("cache"))
            },
            kube_version: Some(kube.to_owned()),
            newest_instead,
            eksd: Vec::new(),
        };
        let catalog = rt.block_on(source(&url, "1.31", false).resolve()).unwrap();
        let Origin::Published(release) = &catalog.origin else {
            panic!("{:?}", catalog.origin)
        };
        assert_eq!(release.version, release_site::SNOW_RELEASE);
        assert_eq!(release.stale, None);
        assert!(!release.newest_instead);
        assert_eq!(
            catalog.source,
            format!("EKS Anywhere {}", release_site::SNOW_RELEASE)
        );
        // A version no release has: an error, or the newest with a Snow section when asked.
        let err = rt
            .block_on(source(&url, "1.19", false).resolve())
            .unwrap_err();
        assert!(!err.is_input(), "{err}");
        let newest = rt.block_on(source(&url, "1.19", true).resolve()).unwrap();
        assert!(
            newest
                .source
                .ends_with(", the newest release with a Snow section"),
            "{}",
            newest.source
        );
        // The server gone: the cached copy, said stale.
        drop(server);
        drop(rt);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cached = rt.block_on(source(&url, "1.31", false).resolve()).unwrap();
        let Origin::Published(release) = &cached.origin else {
            panic!("{:?}", cached.origin)
        };
        assert!(release.stale.is_some(), "{release:?}");
        assert_eq!(cached.bundles, catalog.bundles);
    }
}
