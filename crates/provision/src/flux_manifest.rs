//! Flux's install manifest of a bundle, from one source: a file given (`--flux-manifest FILE`),
//! the offline archive `snowctl download artifacts` wrote (opened once), or Flux's published
//! release file fetched over HTTPS through the components' cache (`snow_images::assets`). The
//! bundle names only Flux's version and its controllers' images; the manifest is the release's
//! `install.yaml` ([`snow_api::release::FluxBundle::install_uri`]). Whatever the source, the text
//! is checked as the install uses it, by [`capi_render::gitops::flux_install`] with the bundle's
//! images, and an error names the file, archive member or URI and what is wrong.

use capi_render::gitops::{GitOpsError, flux_install};
use snow_api::release::{
    FLUX_RELEASES, FluxBundle, ReleaseError, VersionsBundle, flux_install_asset,
};
use snow_images::{
    Archive,
    assets::{self, AssetsError, FetchConfig},
};
use std::path::{Path, PathBuf};

use crate::catalog::{ReadError, read_manifest};

/// Where Flux's install manifest comes from.
pub enum FluxManifest<'a> {
    /// A file given (`--flux-manifest FILE`), read whole (at most
    /// [`crate::catalog::MAX_MANIFEST_BYTES`]).
    File(&'a Path),
    /// The archive `snowctl download artifacts` wrote, opened (the one the release catalog was
    /// read from, [`crate::catalog::Catalog::archive`]).
    Archive(&'a Archive),
    /// Fetched over HTTPS into the components' cache (read from it once there).
    Fetch {
        /// The cache and the fetch's bounds.
        config: FetchConfig,
        /// Where Flux's releases are published ([`FLUX_RELEASES`]; a mirror of them).
        releases: String,
    },
}

impl FluxManifest<'_> {
    /// Fetched from Flux's published releases ([`FLUX_RELEASES`]) through the cache.
    pub fn fetch(config: FetchConfig) -> FluxManifest<'static> {
        FluxManifest::Fetch {
            config,
            releases: FLUX_RELEASES.to_owned(),
        }
    }
}

/// Flux's install manifest, checked against the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxInstall {
    /// Where it came from: the file, `ARCHIVE:snowctl/manifests/…`, or the URI.
    pub origin: String,
    /// The manifest as Flux publishes it: what [`capi_render::gitops::flux_install`] takes.
    pub text: String,
    /// With [`FluxManifest::Fetch`]: files fetched over the network and read from the cache.
    pub fetched: Option<(usize, usize)>,
}

/// Why Flux's install manifest could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FluxManifestError {
    /// The bundle has no Flux section, or its version or an image is not usable.
    #[error(transparent)]
    Release(#[from] ReleaseError),
    /// The file given could not be read.
    #[error("Flux's install manifest {}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: ReadError,
    },
    /// Missing from the archive, or not fetched (each naming the URI; a fetched body that is
    /// not Kubernetes objects is refused before it is cached).
    #[error(transparent)]
    Assets(#[from] AssetsError),
    /// The text is not an install manifest of Flux's controllers.
    #[error("{origin}: {source} (expected Flux {tag}'s install.yaml, published at {uri})")]
    Invalid {
        /// Where the text came from.
        origin: String,
        /// Flux's release the bundle names (`v2.8.8`).
        tag: String,
        /// Where Flux publishes that release's install manifest.
        uri: String,
        /// What is wrong.
        source: GitOpsError,
    },
}

impl FluxManifestError {
    /// Whether the input given (a file, an archive, the bundle, the manifest) cannot be used,
    /// as opposed to a fetch that failed.
    pub fn is_input(&self) -> bool {
        !matches!(self, FluxManifestError::Assets(AssetsError::Fetch(_)))
    }
}

impl FluxManifest<'_> {
    /// The install manifest of `bundle`'s Flux, read from this source and checked with the
    /// bundle's controller images.
    pub async fn resolve(&self, bundle: &VersionsBundle) -> Result<FluxInstall, FluxManifestError> {
        let flux = bundle.flux()?;
        let releases = match self {
            FluxManifest::Fetch { releases, .. } => releases.as_str(),
            _ => FLUX_RELEASES,
        };
        let asset = flux_install_asset(bundle, releases)?.ok_or_else(|| ReleaseError::Missing {
            manifest: format!("Bundles {}", bundle.kube_version),
            item: "the flux section".into(),
        })?;
        let (origin, text, fetched) = match self {
            FluxManifest::File(path) => {
                let text = read_manifest(path).map_err(|reason| FluxManifestError::Read {
                    path: path.to_path_buf(),
                    reason,
                })?;
                (path.display().to_string(), text, None)
            }
            FluxManifest::Archive(archive) => {
                let mut files = assets::from_archive(archive, std::slice::from_ref(&asset))?;
                let file = files.remove(0);
                (file.origin, file.components, None)
            }
            FluxManifest::Fetch { config, .. } => {
                let mut got =
                    assets::fetch_components(std::slice::from_ref(&asset), config).await?;
                let file = got.files.remove(0);
                (
                    file.origin,
                    file.components,
                    Some((got.fetched, got.cached)),
                )
            }
        };
        check(flux, &asset.components_uri, &origin, &text)?;
        Ok(FluxInstall {
            origin,
            text,
            fetched,
        })
    }
}

/// The text is what the install applies: Kubernetes objects with Flux's controllers, whose
/// images the bundle's replace.
fn check(flux: &FluxBundle, uri: &str, origin: &str, text: &str) -> Result<(), FluxManifestError> {
    flux_install(text, flux)
        .map(drop)
        .map_err(|source| FluxManifestError::Invalid {
            origin: origin.to_owned(),
            tag: flux.release_tag().unwrap_or_default(),
            uri: uri.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use snow_api::release::ReleaseInputs;

    fn bundle() -> VersionsBundle {
        let inputs = ReleaseInputs::embedded().unwrap();
        inputs.bundles.spec.versions_bundles[0].clone()
    }

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi-render/tests/data/flux/install.yaml")
    }

    fn resolve(
        source: FluxManifest<'_>,
        bundle: &VersionsBundle,
    ) -> Result<FluxInstall, FluxManifestError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(source.resolve(bundle))
    }

    #[test]
    fn a_file_given_is_read_and_checked_with_the_bundles_images() {
        let path = fixture();
        let got = resolve(FluxManifest::File(&path), &bundle()).unwrap();
        assert_eq!(got.origin, path.display().to_string());
        assert_eq!(got.text, std::fs::read_to_string(&path).unwrap());
        assert_eq!(got.fetched, None);
    }

    #[test]
    fn a_file_that_is_not_flux_or_missing_is_named_with_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let not_objects = dir.path().join("install.yaml");
        std::fs::write(
            &not_objects,
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n---\nfoo: bar\n",
        )
        .unwrap();
        let err = resolve(FluxManifest::File(&not_objects), &bundle()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}: Flux's install manifest could not be read: document 2 is not a Kubernetes object", not_objects.display())),
            "{text}"
        );
        assert!(
            text.ends_with("(expected Flux v2.8.8's install.yaml, published at https://github.com/fluxcd/flux2/releases/download/v2.8.8/install.yaml)"),
            "{text}"
        );
        assert!(err.is_input());
        std::fs::write(
            &not_objects,
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n",
        )
        .unwrap();
        let text = resolve(FluxManifest::File(&not_objects), &bundle())
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("has no container of source-controller"),
            "{text}"
        );
        let missing = dir.path().join("missing.yaml");
        let text = resolve(FluxManifest::File(&missing), &bundle())
            .unwrap_err()
            .to_string();
        assert!(
            text.starts_with(&format!("Flux's install manifest {}: ", missing.display())),
            "{text}"
        );
    }

    #[test]
    fn a_bundle_without_flux_is_named_before_any_source_is_read() {
        let mut bundle = bundle();
        bundle.flux = None;
        let missing = Path::new("/nonexistent/install.yaml");
        let text = resolve(FluxManifest::File(missing), &bundle)
            .unwrap_err()
            .to_string();
        assert!(text.ends_with("missing the flux section"), "{text}");
    }
}
