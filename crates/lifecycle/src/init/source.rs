//! Where each component's manifests come from: the bundle says which version and asset, a local
//! directory laid out like clusterctl's local repository holds the files
//! (`DIR/<provider label>/<version>/<asset>`, e.g.
//! `DIR/infrastructure-snow/v0.3.3/infrastructure-components.yaml` and its `metadata.yaml`).

use super::components::{Component, ComponentSource, ProviderType, STACK};
use crate::LifecycleError;
use serde::Deserialize;
use snow_api::release::{ProviderBundle, VersionsBundle};
use std::path::{Path, PathBuf};

/// The most bytes read from one components file (the largest real one is about 1.2 MB).
pub const MAX_COMPONENTS_BYTES: u64 = 16 << 20;

/// What the bundle says about one component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Which component.
    pub component: Component,
    /// Its version as the bundle writes it (`v1.13.2+abcdef1`).
    pub version: String,
    /// The components manifest URI.
    pub components_uri: String,
    /// The metadata URI (cert-manager has none).
    pub metadata_uri: Option<String>,
}

impl Wanted {
    /// The version without build metadata (`v1.13.2`): what clusterctl records and release
    /// paths use.
    pub fn release_version(&self) -> &str {
        self.version.split('+').next().unwrap_or(&self.version)
    }
}

fn missing(kube_version: &str, item: &str) -> LifecycleError {
    LifecycleError::Render(format!(
        "the release bundle for Kubernetes {kube_version} has no {item}: pass a complete Bundles manifest with --bundles"
    ))
}

/// The seven components of the stack as a versions bundle names them.
pub fn wanted(bundle: &VersionsBundle) -> Result<Vec<Wanted>, LifecycleError> {
    let kv = &bundle.kube_version;
    let provider = |section: &Option<ProviderBundle>, name: &str, component: Component| {
        let p = section.as_ref().ok_or_else(|| missing(kv, name))?;
        if p.components.uri.is_empty() || p.metadata.uri.is_empty() || p.version.is_empty() {
            return Err(missing(
                kv,
                &format!("{name}.components, .metadata or .version"),
            ));
        }
        Ok(Wanted {
            component,
            version: p.version.clone(),
            components_uri: p.components.uri.clone(),
            metadata_uri: Some(p.metadata.uri.clone()),
        })
    };
    let cert_manager = bundle
        .cert_manager
        .as_ref()
        .filter(|c| !c.manifest.uri.is_empty() && !c.version.is_empty())
        .ok_or_else(|| missing(kv, "certManager.manifest or .version"))?;
    let snow = bundle.snow.as_ref().ok_or_else(|| missing(kv, "snow"))?;
    if snow.components.uri.is_empty() || snow.metadata.uri.is_empty() || snow.version.is_empty() {
        return Err(missing(kv, "snow.components, .metadata or .version"));
    }
    Ok(vec![
        Wanted {
            component: STACK[0],
            version: cert_manager.version.clone(),
            components_uri: cert_manager.manifest.uri.clone(),
            metadata_uri: None,
        },
        provider(&bundle.cluster_api, "clusterAPI", STACK[1])?,
        provider(&bundle.bootstrap, "bootstrap", STACK[2])?,
        provider(&bundle.control_plane, "controlPlane", STACK[3])?,
        provider(&bundle.etcdadm_bootstrap, "etcdadmBootstrap", STACK[4])?,
        provider(&bundle.etcdadm_controller, "etcdadmController", STACK[5])?,
        Wanted {
            component: STACK[6],
            version: snow.version.clone(),
            components_uri: snow.components.uri.clone(),
            metadata_uri: Some(snow.metadata.uri.clone()),
        },
    ])
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
        LifecycleError::Render(format!(
            "the release bundle has no Kubernetes {}; available: {}",
            kube_version.unwrap_or("version"),
            bundles.kube_versions().join(", ")
        ))
    })
}

/// The file name at the end of a URI.
fn asset(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap_or(uri)
}

/// `DIR/<label>/<version>/<asset>`, trying the bundle's version, then the release version.
fn locate(dir: &Path, wanted: &Wanted, uri: &str) -> Result<PathBuf, LifecycleError> {
    let base = dir.join(wanted.component.label());
    let tried: Vec<PathBuf> = [wanted.version.as_str(), wanted.release_version()]
        .into_iter()
        .map(|v| base.join(v).join(asset(uri)))
        .collect();
    tried
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| LifecycleError::Components {
            component: wanted.component.label(),
            version: wanted.version.clone(),
            origin: uri.to_owned(),
            reason: format!("no file {} in the components directory", tried[0].display()),
        })
}

fn read(path: &Path, wanted: &Wanted) -> Result<String, LifecycleError> {
    use std::io::Read as _;
    let fail = |reason: String| LifecycleError::Components {
        component: wanted.component.label(),
        version: wanted.version.clone(),
        origin: path.display().to_string(),
        reason,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_COMPONENTS_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_COMPONENTS_BYTES {
        return Err(fail(format!(
            "larger than {} MiB",
            MAX_COMPONENTS_BYTES >> 20
        )));
    }
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
fn series_contract(text: &str, wanted: &Wanted, path: &Path) -> Result<String, LifecycleError> {
    let fail = |reason: String| LifecycleError::Components {
        component: wanted.component.label(),
        version: wanted.version.clone(),
        origin: path.display().to_string(),
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

/// Reads every component's manifest (and checks its metadata) from `dir`; every file is read
/// before anything is applied.
pub fn from_dir(dir: &Path, wanted: &[Wanted]) -> Result<Vec<ComponentSource>, LifecycleError> {
    let mut sources = Vec::new();
    for w in wanted {
        let path = locate(dir, w, &w.components_uri)?;
        let components = read(&path, w)?;
        if let Some(uri) = &w.metadata_uri {
            let meta_path = locate(dir, w, uri)?;
            series_contract(&read(&meta_path, w)?, w, &meta_path)?;
        }
        sources.push(ComponentSource {
            component: w.component,
            version: w.release_version().to_owned(),
            origin: path.display().to_string(),
            components,
        });
    }
    Ok(sources)
}

/// The provider type of a component, if it is a provider.
pub fn provider_type(component: Component) -> Option<ProviderType> {
    match component {
        Component::CertManager => None,
        Component::Provider { kind, .. } => Some(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_series_must_hold_the_version() {
        let w = Wanted {
            component: STACK[1],
            version: "v1.13.5+abc".into(),
            components_uri: "https://x/core-components.yaml".into(),
            metadata_uri: Some("https://x/metadata.yaml".into()),
        };
        let text = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- {major: 1, minor: 13, contract: v1beta2}\n";
        assert_eq!(
            series_contract(text, &w, Path::new("m")).unwrap(),
            "v1beta2"
        );
        let old = "releaseSeries:\n- {major: 1, minor: 12, contract: v1beta2}\n";
        let err = series_contract(old, &w, Path::new("m")).unwrap_err();
        assert!(err.to_string().contains("no 1.13"), "{err}");
    }

    #[test]
    fn a_missing_file_names_component_version_and_uri() {
        let dir = tempfile::tempdir().unwrap();
        let w = Wanted {
            component: STACK[6],
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
