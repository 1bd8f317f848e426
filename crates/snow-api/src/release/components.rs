//! The management components a versions bundle names (cert-manager, Cluster API core, kubeadm
//! bootstrap and control plane, etcdadm bootstrap and controller, CAPAS): which version, and the
//! URIs of each components manifest and clusterctl `metadata.yaml`. Pure data: `snowctl init`
//! installs them (snow-lifecycle), `snowctl download artifacts` stores them (snow-images).
//! Beside them, Flux's install manifest: the bundle names only Flux's version and images, and
//! the manifest is Flux's published release file ([`FluxBundle::install_uri`]), fetched, cached
//! and archived as one more component file ([`flux_install_asset`]).

use super::{FluxBundle, ProviderBundle, ReleaseError, VersionsBundle};

/// The label of Flux's install manifest among the components' files: its folder in the offline
/// archive (`components/flux/<version>/install.yaml`) and the name its errors give.
pub const FLUX: &str = "flux";

/// Where Flux publishes its releases' files: the install manifest of Flux `v2.8.8` is
/// `<FLUX_RELEASES>/v2.8.8/install.yaml`.
pub const FLUX_RELEASES: &str = "https://github.com/fluxcd/flux2/releases/download";

/// The file name of Flux's install manifest among its release's files.
pub const FLUX_INSTALL_FILE: &str = "install.yaml";

impl FluxBundle {
    /// The tag of Flux's release this bundle's version names: the version without build
    /// metadata, with its `v` (`v2.8.8` for `v2.8.8+abcdef1` or `2.8.8`); `None` when the version
    /// is not `[v]MAJOR.MINOR.PATCH[-PRE][+BUILD]` (letters, digits, `.`, `-`, `_`, `+`), so that
    /// it is safe in a URL path and as a file name.
    pub fn release_tag(&self) -> Option<String> {
        let version = self.version.strip_prefix('v').unwrap_or(&self.version);
        let (release, _build) = version.split_once('+').unwrap_or((version, ""));
        let mut core = release.split('-').next().unwrap_or_default().split('.');
        let numeric = |p: Option<&str>| {
            p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        let shaped = numeric(core.next()) && numeric(core.next()) && numeric(core.next());
        let safe = (self.version.bytes())
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'));
        (shaped && core.next().is_none() && safe).then(|| format!("v{release}"))
    }

    /// The URI of Flux's install manifest of this version, as Flux publishes it
    /// (`https://github.com/fluxcd/flux2/releases/download/v2.8.8/install.yaml`); `None` when
    /// the version is not one ([`FluxBundle::release_tag`]).
    pub fn install_uri(&self) -> Option<String> {
        self.install_uri_at(FLUX_RELEASES)
    }

    /// [`FluxBundle::install_uri`] under another releases location (a mirror of Flux's
    /// releases; a loopback server in tests): `<releases>/<tag>/install.yaml`.
    pub fn install_uri_at(&self, releases: &str) -> Option<String> {
        let tag = self.release_tag()?;
        Some(format!(
            "{}/{tag}/{FLUX_INSTALL_FILE}",
            releases.trim_end_matches('/')
        ))
    }
}

/// Flux's install manifest of `bundle` as a component's file (label [`FLUX`], the bundle's Flux
/// version, the URI under `releases`, usually [`FLUX_RELEASES`]; no metadata file): `None` when
/// the bundle has no Flux section, an error naming `flux.version` when it is missing or not a
/// version.
pub fn flux_install_asset(
    bundle: &VersionsBundle,
    releases: &str,
) -> Result<Option<ComponentAssets>, ReleaseError> {
    let Some(flux) = &bundle.flux else {
        return Ok(None);
    };
    let manifest = format!("Bundles {}", bundle.kube_version);
    if flux.version.is_empty() {
        return Err(ReleaseError::Missing {
            manifest,
            item: "flux.version".into(),
        });
    }
    let uri = flux
        .install_uri_at(releases)
        .ok_or_else(|| ReleaseError::NotAVersion {
            manifest,
            field: "flux.version".into(),
            value: flux.version.chars().take(80).collect(),
        })?;
    Ok(Some(ComponentAssets {
        label: FLUX,
        version: flux.version.clone(),
        components_uri: uri,
        metadata_uri: None,
    }))
}

/// clusterctl's manifest labels of the stack, in install order (EKS Anywhere's `clusterctl init`
/// line for Snow, cert-manager first).
pub const MANAGEMENT_COMPONENTS: [&str; 7] = [
    "cert-manager",
    "cluster-api",
    "bootstrap-kubeadm",
    "control-plane-kubeadm",
    "bootstrap-etcdadm-bootstrap",
    "bootstrap-etcdadm-controller",
    "infrastructure-snow",
];

/// One management component as a versions bundle names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ComponentAssets {
    /// clusterctl's manifest label (one of [`MANAGEMENT_COMPONENTS`]), or [`FLUX`] for Flux's
    /// install manifest.
    pub label: &'static str,
    /// Its version as the bundle writes it (`v1.13.2+abcdef1`).
    pub version: String,
    /// The components manifest URI.
    pub components_uri: String,
    /// The `metadata.yaml` URI (cert-manager has none).
    pub metadata_uri: Option<String>,
}

impl ComponentAssets {
    /// The version without build metadata (`v1.13.2`): what clusterctl records.
    pub fn release_version(&self) -> &str {
        self.version.split('+').next().unwrap_or(&self.version)
    }

    /// Where a file of this component goes in clusterctl's local repository layout,
    /// `<label>/<version>/<file name at the end of the URI>`, e.g.
    /// `cluster-api/v1.13.2+abcdef1/core-components.yaml`: the layout of `--components-dir` and
    /// of the offline archive.
    pub fn path(&self, uri: &str) -> String {
        format!("{}/{}/{}", self.label, self.version, asset_name(uri))
    }
}

/// The file name at the end of a URI (a query or fragment left out).
pub fn asset_name(uri: &str) -> &str {
    let uri = uri.split(['?', '#']).next().unwrap_or(uri);
    uri.rsplit('/').next().unwrap_or(uri)
}

/// The texts of one component's files, however they were obtained (a directory, the network,
/// an archive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentFiles {
    /// Where the components manifest came from (a path or a URI), for messages.
    pub origin: String,
    /// The components manifest.
    pub components: String,
    /// `metadata.yaml` (when the component has one) and where it came from.
    pub metadata: Option<(String, String)>,
}

/// The seven components of `bundle`, in install order; every section it lacks is named at once.
pub fn management_components(
    bundle: &VersionsBundle,
) -> Result<Vec<ComponentAssets>, ReleaseError> {
    let provider = |p: &Option<ProviderBundle>, key: &str| {
        let p = p.as_ref();
        let field = |f: fn(&ProviderBundle) -> &str| p.map(f).unwrap_or_default().to_owned();
        (
            format!("{key}.components, .metadata or .version"),
            field(|p| &p.version),
            field(|p| &p.components.uri),
            Some(field(|p| &p.metadata.uri)),
        )
    };
    let cert_manager = bundle.cert_manager.as_ref();
    let snow = bundle.snow.as_ref();
    let sections = [
        (
            "certManager.manifest or .version".to_owned(),
            cert_manager.map(|c| c.version.clone()).unwrap_or_default(),
            cert_manager
                .map(|c| c.manifest.uri.clone())
                .unwrap_or_default(),
            None,
        ),
        provider(&bundle.cluster_api, "clusterAPI"),
        provider(&bundle.bootstrap, "bootstrap"),
        provider(&bundle.control_plane, "controlPlane"),
        provider(&bundle.etcdadm_bootstrap, "etcdadmBootstrap"),
        provider(&bundle.etcdadm_controller, "etcdadmController"),
        (
            "snow.components, .metadata or .version".to_owned(),
            snow.map(|s| s.version.clone()).unwrap_or_default(),
            snow.map(|s| s.components.uri.clone()).unwrap_or_default(),
            Some(snow.map(|s| s.metadata.uri.clone()).unwrap_or_default()),
        ),
    ];
    // The bundle's key of each section and the field of its components manifest.
    let keys = [
        ("certManager", "manifest"),
        ("clusterAPI", "components"),
        ("bootstrap", "components"),
        ("controlPlane", "components"),
        ("etcdadmBootstrap", "components"),
        ("etcdadmController", "components"),
        ("snow", "components"),
    ];
    let manifest = format!("Bundles {}", bundle.kube_version);
    let mut missing = Vec::new();
    let mut found = Vec::new();
    for ((label, (key, components)), (item, version, components_uri, metadata_uri)) in
        MANAGEMENT_COMPONENTS.into_iter().zip(keys).zip(sections)
    {
        if version.is_empty()
            || components_uri.is_empty()
            || metadata_uri.as_ref().is_some_and(String::is_empty)
        {
            missing.push(item);
            continue;
        }
        // Each becomes a part of a path (`--components-dir`, the archive): one name each, or
        // `../..` would read (or an archive member be written) outside.
        let mut parts = vec![(format!("{key}.version"), version.as_str())];
        parts.push((
            format!("{key}.{components}.uri"),
            asset_name(&components_uri),
        ));
        if let Some(uri) = &metadata_uri {
            parts.push((format!("{key}.metadata.uri"), asset_name(uri)));
        }
        if let Some((field, value)) = parts.into_iter().find(|(_, v)| !is_file_name(v)) {
            return Err(ReleaseError::NotAFileName {
                manifest,
                field,
                value: value.chars().take(80).collect(),
            });
        }
        found.push(ComponentAssets {
            label,
            version,
            components_uri,
            metadata_uri,
        });
    }
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(ReleaseError::Missing {
            manifest,
            item: missing.join(", "),
        })
    }
}

/// Whether `name` is one file or directory name, the same on every system: not empty, `.` or
/// `..`, and without `/`, `\` or NUL (so never absolute either).
fn is_file_name(name: &str) -> bool {
    !matches!(name, "" | "." | "..") && !name.contains(['/', '\\', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::Bundles;

    #[test]
    fn the_embedded_catalog_names_every_component_in_install_order() {
        let bundles =
            Bundles::from_yaml(crate::release::ReleaseInputs::embedded_bundles_yaml()).unwrap();
        for bundle in &bundles.spec.versions_bundles {
            let assets = management_components(bundle).unwrap();
            let labels: Vec<&str> = assets.iter().map(|a| a.label).collect();
            assert_eq!(labels, MANAGEMENT_COMPONENTS);
            assert!(assets[0].metadata_uri.is_none());
            assert!(assets[1..].iter().all(|a| a.metadata_uri.is_some()));
        }
    }

    #[test]
    fn a_version_or_file_name_that_is_not_one_name_is_refused_naming_its_field() {
        let yaml = crate::release::ReleaseInputs::embedded_bundles_yaml();
        let bundles = Bundles::from_yaml(yaml).unwrap();
        let good = bundles.spec.versions_bundles[0].clone();
        let set_version = |v: &str| {
            let mut b = good.clone();
            b.cluster_api.as_mut().unwrap().version = v.into();
            b
        };
        for version in [
            "../../comp-outside",
            "v1.13.5/../../../x/v1.13.5",
            "/abs",
            "..",
            ".",
            "a\\b",
            "v1\0",
        ] {
            let err = management_components(&set_version(version))
                .unwrap_err()
                .to_string();
            assert!(err.contains("clusterAPI.version"), "{err}");
            assert!(err.contains("cannot be part of a path"), "{err}");
        }
        let mut b = good.clone();
        b.snow.as_mut().unwrap().metadata.uri = "https://x/..".into();
        let err = management_components(&b).unwrap_err().to_string();
        assert!(err.contains("snow.metadata.uri \"..\""), "{err}");
        let mut b = good.clone();
        b.cert_manager.as_mut().unwrap().manifest.uri = "https://x/".into();
        let err = management_components(&b).unwrap_err().to_string();
        assert!(err.contains("certManager.manifest.uri \"\""), "{err}");
        assert!(management_components(&set_version("v1.13.5+abc.1_x-y")).is_ok());
    }

    #[test]
    fn every_missing_section_is_named_at_once() {
        let bundle = VersionsBundle {
            kube_version: "1.33".into(),
            ..Default::default()
        };
        let err = management_components(&bundle).unwrap_err().to_string();
        for key in ["certManager", "clusterAPI", "etcdadmController", "snow."] {
            assert!(err.contains(key), "{err}");
        }
        assert!(err.starts_with("Bundles 1.33: missing"), "{err}");
    }

    fn flux(version: &str) -> FluxBundle {
        FluxBundle {
            version: version.into(),
            ..Default::default()
        }
    }

    #[test]
    fn flux_install_uri_is_the_release_file_of_the_version_without_build_metadata() {
        for version in ["v2.8.8+abcdef1", "v2.8.8", "2.8.8", "2.8.8+eks-a.1_x"] {
            assert_eq!(
                flux(version).install_uri().as_deref(),
                Some("https://github.com/fluxcd/flux2/releases/download/v2.8.8/install.yaml"),
                "{version}"
            );
        }
        assert_eq!(
            flux("v2.9.0-rc.1+abc").install_uri_at("https://127.0.0.9:8443/flux/"),
            Some("https://127.0.0.9:8443/flux/v2.9.0-rc.1/install.yaml".into())
        );
        for bad in [
            "",
            "v",
            "latest",
            "v2.8",
            "v2.8.8.1",
            "v2.8.x",
            "v2.8.8/../../x",
            "v2.8.8?x",
            "v2.8.8#x",
            "v 2.8.8",
            "v2.8.8+a/b",
            "..",
        ] {
            assert_eq!(flux(bad).install_uri(), None, "{bad:?}");
        }
    }

    #[test]
    fn flux_install_asset_is_none_without_flux_and_names_a_bad_version() {
        let yaml = crate::release::ReleaseInputs::embedded_bundles_yaml();
        let bundles = Bundles::from_yaml(yaml).unwrap();
        let mut bundle = bundles.spec.versions_bundles[0].clone();
        let asset = flux_install_asset(&bundle, FLUX_RELEASES).unwrap().unwrap();
        let tag = bundle.flux.as_ref().unwrap().release_tag().unwrap();
        assert_eq!(asset.label, FLUX);
        assert_eq!(asset.metadata_uri, None);
        assert_eq!(
            asset.components_uri,
            format!("{FLUX_RELEASES}/{tag}/install.yaml")
        );
        assert_eq!(
            asset.path(&asset.components_uri),
            format!(
                "flux/{}/install.yaml",
                bundle.flux.as_ref().unwrap().version
            )
        );
        bundle.flux.as_mut().unwrap().version = "main".into();
        let err = flux_install_asset(&bundle, FLUX_RELEASES)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "Bundles {}: flux.version \"main\"",
                bundle.kube_version
            )),
            "{err}"
        );
        bundle.flux.as_mut().unwrap().version.clear();
        let err = flux_install_asset(&bundle, FLUX_RELEASES).unwrap_err();
        assert!(err.to_string().ends_with("missing flux.version"), "{err}");
        bundle.flux = None;
        assert_eq!(flux_install_asset(&bundle, FLUX_RELEASES).unwrap(), None);
    }

    #[test]
    fn paths_follow_clusterctl_local_repository_layout() {
        let a = ComponentAssets {
            label: "cluster-api",
            version: "v1.13.5+abc".into(),
            components_uri: "https://x/y/core-components.yaml?x=1".into(),
            metadata_uri: None,
        };
        assert_eq!(
            a.path(&a.components_uri),
            "cluster-api/v1.13.5+abc/core-components.yaml"
        );
        assert_eq!(a.release_version(), "v1.13.5");
    }
}
