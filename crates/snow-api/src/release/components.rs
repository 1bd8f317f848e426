//! The management components a versions bundle names (cert-manager, Cluster API core, kubeadm
//! bootstrap and control plane, etcdadm bootstrap and controller, CAPAS): which version, and the
//! URIs of each components manifest and clusterctl `metadata.yaml`. Pure data: `snowctl init`
//! installs them (snow-lifecycle), `snowctl download artifacts` stores them (snow-images).

use super::{ProviderBundle, ReleaseError, VersionsBundle};

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
    /// clusterctl's manifest label (one of [`MANAGEMENT_COMPONENTS`]).
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
