//! Where each component's manifests come from: the bundle says which version and asset, a local
//! directory laid out like clusterctl's local repository holds the files
//! (`DIR/<provider label>/<version>/<asset>`, e.g.
//! `DIR/infrastructure-snow/v0.3.3/infrastructure-components.yaml` and its `metadata.yaml`).

use super::components::{Component, ComponentSource, ProviderType, STACK};
use crate::LifecycleError;
use serde::Deserialize;
use snow_api::release::{ComponentAssets, ComponentFiles, VersionsBundle};
use std::path::{Path, PathBuf};

/// The most bytes read from one components file (the largest real one is about 1.2 MB).
pub const MAX_COMPONENTS_BYTES: u64 = 16 << 20;

/// The seven components of the stack as a versions bundle names them, in install order
/// ([`snow_api::release::management_components`]).
pub fn wanted(bundle: &VersionsBundle) -> Result<Vec<ComponentAssets>, LifecycleError> {
    snow_api::release::management_components(bundle).map_err(LifecycleError::Release)
}

/// The component of a manifest label (`cluster-api`, `infrastructure-snow`, …).
fn component(assets: &ComponentAssets) -> Result<Component, LifecycleError> {
    STACK
        .into_iter()
        .find(|c| c.label() == assets.label)
        .ok_or_else(|| LifecycleError::Components {
            component: assets.label.to_owned(),
            version: assets.version.clone(),
            origin: assets.components_uri.clone(),
            reason: "not a component of the Snow provider stack".into(),
        })
}

/// The versions bundle of `kube_version`, or the newest one.
pub fn versions_bundle<'a>(
    bundles: &'a snow_api::release::Bundles,
    kube_version: Option<&str>,
) -> Result<&'a VersionsBundle, LifecycleError> {
    let key = |v: &str| -> (u32, u32) {
        let mut parts = v.split('.').map(|p| p.parse().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
    };
    let found = match kube_version {
        Some(v) => bundles.versions_bundle(v).ok(),
        None => bundles
            .spec
            .versions_bundles
            .iter()
            .max_by_key(|b| key(&b.kube_version)),
    };
    found.ok_or_else(|| {
        LifecycleError::Release(snow_api::release::ReleaseError::NoSuchVersion {
            version: kube_version.unwrap_or("version").to_owned(),
            available: bundles.kube_versions(),
        })
    })
}

/// `DIR/<label>/<version>/<asset>`, trying the bundle's version, then the release version.
fn locate(dir: &Path, wanted: &ComponentAssets, uri: &str) -> Result<PathBuf, LifecycleError> {
    let asset = snow_api::release::asset_name(uri);
    let base = dir.join(wanted.label);
    let tried: Vec<PathBuf> = [wanted.version.as_str(), wanted.release_version()]
        .into_iter()
        .map(|v| base.join(v).join(asset))
        .collect();
    tried
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| LifecycleError::Components {
            component: wanted.label.to_owned(),
            version: wanted.version.clone(),
            origin: uri.to_owned(),
            reason: format!("no file {} in the components directory", tried[0].display()),
        })
}

fn read(path: &Path, wanted: &ComponentAssets) -> Result<String, LifecycleError> {
    let fail = |reason: String| LifecycleError::Components {
        component: wanted.label.to_owned(),
        version: wanted.version.clone(),
        origin: path.display().to_string(),
        reason,
    };
    let bytes = crate::files::read_bounded(path, MAX_COMPONENTS_BYTES).map_err(|e| {
        fail(match e.kind() {
            std::io::ErrorKind::FileTooLarge => {
                format!("larger than {} MiB", MAX_COMPONENTS_BYTES >> 20)
            }
            _ => e.to_string(),
        })
    })?;
    String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text".into()))
}

/// clusterctl's `metadata.yaml`: the release series of a provider.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    release_series: Vec<ReleaseSeries>,
}

#[derive(Debug, Deserialize)]
struct ReleaseSeries {
    major: u32,
    minor: u32,
    #[serde(default)]
    contract: String,
}

/// Checks that the version's major.minor is one of the metadata's release series (clusterctl's
/// check); returns its contract.
fn series_contract(
    text: &str,
    wanted: &ComponentAssets,
    origin: &str,
) -> Result<String, LifecycleError> {
    let fail = |reason: String| LifecycleError::Components {
        component: wanted.label.to_owned(),
        version: wanted.version.clone(),
        origin: origin.to_owned(),
        reason,
    };
    let metadata: Metadata = serde_saphyr::from_str(text)
        .map_err(|e| fail(format!("not a clusterctl metadata.yaml: {e}")))?;
    let mut numbers = wanted
        .release_version()
        .trim_start_matches('v')
        .split('.')
        .map(|n| n.parse::<u32>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (numbers.next(), numbers.next()) else {
        return Err(fail("the version is not vMAJOR.MINOR.PATCH".into()));
    };
    metadata
        .release_series
        .iter()
        .find(|s| s.major == major && s.minor == minor)
        .map(|s| s.contract.clone())
        .ok_or_else(|| fail(format!("its release series has no {major}.{minor}")))
}

/// Reads every component's files from `dir` (clusterctl's local repository layout,
/// [`ComponentAssets::path`]).
pub fn read_dir(
    dir: &Path,
    wanted: &[ComponentAssets],
) -> Result<Vec<ComponentFiles>, LifecycleError> {
    wanted
        .iter()
        .map(|w| {
            let path = locate(dir, w, &w.components_uri)?;
            let metadata = match &w.metadata_uri {
                Some(uri) => {
                    let meta_path = locate(dir, w, uri)?;
                    Some((meta_path.display().to_string(), read(&meta_path, w)?))
                }
                None => None,
            };
            Ok(ComponentFiles {
                origin: path.display().to_string(),
                components: read(&path, w)?,
                metadata,
            })
        })
        .collect()
}

/// The components of `wanted` from their files (`files[i]` holds `wanted[i]`'s), each
/// version checked against its `metadata.yaml`: from a directory ([`read_dir`]), the network or
/// an archive (snow-images), every file read before anything is applied.
pub fn from_files(
    wanted: &[ComponentAssets],
    files: Vec<ComponentFiles>,
) -> Result<Vec<ComponentSource>, LifecycleError> {
    wanted
        .iter()
        .zip(files)
        .map(|(w, f)| {
            if let Some((origin, text)) = &f.metadata {
                series_contract(text, w, origin)?;
            }
            Ok(ComponentSource {
                component: component(w)?,
                version: w.release_version().to_owned(),
                origin: f.origin,
                components: f.components,
            })
        })
        .collect()
}

/// Reads every component's manifest (and checks its metadata) from `dir`; every file is read
/// before anything is applied.
pub fn from_dir(
    dir: &Path,
    wanted: &[ComponentAssets],
) -> Result<Vec<ComponentSource>, LifecycleError> {
    from_files(wanted, read_dir(dir, wanted)?)
}

/// The provider type of a component, if it is a provider.
pub fn provider_type(component: Component) -> Option<ProviderType> {
    match component {
        Component::CertManager | Component::Controller => None,
        Component::Provider { kind, .. } => Some(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_is_the_bundles_management_components_in_order() {
        let labels: Vec<String> = STACK.iter().map(|c| c.label()).collect();
        assert_eq!(labels, snow_api::release::MANAGEMENT_COMPONENTS);
    }

    #[test]
    fn metadata_series_must_hold_the_version() {
        let w = ComponentAssets {
            label: "cluster-api",
            version: "v1.13.5+abc".into(),
            components_uri: "https://x/core-components.yaml".into(),
            metadata_uri: Some("https://x/metadata.yaml".into()),
        };
        let text = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- {major: 1, minor: 13, contract: v1beta2}\n";
        assert_eq!(series_contract(text, &w, "m").unwrap(), "v1beta2");
        let old = "releaseSeries:\n- {major: 1, minor: 12, contract: v1beta2}\n";
        let err = series_contract(old, &w, "m").unwrap_err();
        assert!(err.to_string().contains("no 1.13"), "{err}");
    }

    #[test]
    fn a_missing_file_names_component_version_and_uri() {
        let dir = tempfile::tempdir().unwrap();
        let w = ComponentAssets {
            label: "infrastructure-snow",
            version: "v0.3.3+abc".into(),
            components_uri: "https://bucket/infrastructure-components.yaml".into(),
            metadata_uri: None,
        };
        let err = from_dir(dir.path(), &[w]).unwrap_err().to_string();
        assert!(err.contains("infrastructure-snow v0.3.3+abc"), "{err}");
        assert!(
            err.contains("https://bucket/infrastructure-components.yaml"),
            "{err}"
        );
        assert!(
            err.contains("infrastructure-snow/v0.3.3+abc/infrastructure-components.yaml"),
            "{err}"
        );
    }
}
