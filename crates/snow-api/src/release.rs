//! Release inputs: the EKS Anywhere `Bundles` manifest (the parts a Snow cluster needs) and the
//! EKS Distro `Release` manifest (EKS Anywhere's release bundle inputs).
//!
//! These files are produced by release tooling, not written by hand, and carry many sections Snow
//! does not use, so unknown fields are ignored here; what rendering needs is checked when it is
//! asked for, with an error that names the missing item.
//!
//! [`ReleaseInputs`] holds a Bundles manifest with the EKS-D facts of its releases (the embedded
//! catalog by default); [`ReleaseInputs::resolve`] turns it, once per cluster, into the
//! [`ClusterRelease`] that rendering and the lifecycle take.

mod catalog;
mod components;
mod contract;
pub mod eksa;

pub use catalog::{ClusterRelease, ReleaseInputs};
pub use components::{
    ComponentAssets, ComponentFiles, FLUX, FLUX_INSTALL_FILE, FLUX_RELEASES, MANAGEMENT_COMPONENTS,
    asset_name, flux_install_asset, management_components,
};
pub use contract::{Contract, ETCD_API_VERSION, INFRA_API_VERSION};

use serde::{Deserialize, Serialize};

/// The check of a spec whose Kubernetes version is not in the release catalog given (a warning).
pub const VERSION_CHECK: &str = "release.version";

/// The repository of the snowctl controller's image, below a registry: the built image archive
/// names it so, `import-images` pushes it there on the registry mirror, and the controller's
/// Deployment pulls it from there. No registry publishes it: it is built from this repository.
pub const CONTROLLER_IMAGE_REPOSITORY: &str = "snowctl/controller";

/// The tag of this build's controller image: `v` and the crate version (`v0.1.0`).
pub fn controller_image_tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// This build's controller image on `registry` (`host[:port]`, e.g. the registry mirror's
/// `endpoint:port`): `<registry>/snowctl/controller:v<version>`.
pub fn controller_image(registry: &str) -> String {
    format!(
        "{registry}/{CONTROLLER_IMAGE_REPOSITORY}:{}",
        controller_image_tag()
    )
}

/// A release manifest could not be read, or lacks something a Snow cluster needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseError {
    /// The YAML does not have the expected shape.
    #[error("{what} could not be read: {message}")]
    Parse {
        /// Which manifest.
        what: &'static str,
        /// The reader's message (with its position).
        message: String,
    },
    /// The document is another kind.
    #[error("expected {expected}, found apiVersion `{api_version}` kind `{kind}`")]
    WrongKind {
        /// What was expected.
        expected: &'static str,
        /// The apiVersion found.
        api_version: String,
        /// The kind found.
        kind: String,
    },
    /// The bundle has no versions bundle for this Kubernetes version.
    #[error("the release bundle has no Kubernetes {version}; available: {}", available.join(", "))]
    NoSuchVersion {
        /// The version asked for.
        version: String,
        /// The versions the bundle has.
        available: Vec<String>,
    },
    /// A required part of a manifest is missing.
    #[error("{manifest}: missing {item}")]
    Missing {
        /// Which manifest (e.g. `Bundles 1.30` or `EKS-D kubernetes-1-30-eks-58`).
        manifest: String,
        /// The missing item (e.g. `snow.kubeVip`, asset `etcd-image`).
        item: String,
    },
    /// A value a path is made of (a component's version, the file name at the end of its URI)
    /// is not one file or directory name.
    #[error(
        "{manifest}: {field} {value:?} cannot be part of a path: it must be one file or directory name (not empty, `.` or `..`, no `/`, `\\` or NUL)"
    )]
    NotAFileName {
        /// Which manifest (`Bundles 1.33`).
        manifest: String,
        /// The field (`clusterAPI.version`).
        field: String,
        /// Its value (cut to 80 characters).
        value: String,
    },
    /// A version is not a release version (Flux's, whose release files are named by it).
    #[error(
        "{manifest}: {field} {value:?} is not a release version: [v]MAJOR.MINOR.PATCH, optionally -PRE-RELEASE and +BUILD (letters, digits, `.`, `-`, `_`)"
    )]
    NotAVersion {
        /// Which manifest (`Bundles 1.33`).
        manifest: String,
        /// The field (`flux.version`).
        field: String,
        /// Its value (cut to 80 characters).
        value: String,
    },
    /// An image URI has no tag.
    #[error("{manifest}: image {uri} has no tag")]
    Untagged {
        /// Which manifest.
        manifest: String,
        /// The URI.
        uri: String,
    },
}

fn parse<T: for<'de> Deserialize<'de>>(text: &str, what: &'static str) -> Result<T, ReleaseError> {
    serde_saphyr::from_str(text).map_err(|e| ReleaseError::Parse {
        what,
        message: e.to_string(),
    })
}

/// A container image in a bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// OS.
    #[serde(default)]
    pub os: String,
    /// OS name.
    #[serde(default)]
    pub os_name: String,
    /// Architectures.
    #[serde(default)]
    pub arch: Vec<String>,
    /// Full URI with tag.
    #[serde(default)]
    pub uri: String,
    /// Digest.
    #[serde(default)]
    pub image_digest: String,
}

impl Image {
    /// The URI with its tag (`VersionedImage()`).
    pub fn versioned(&self) -> &str {
        &self.uri
    }

    /// The repository: the URI up to the tag's `:` (a port's `:` is not a tag).
    pub fn repository(&self) -> &str {
        split_tag(&self.uri).0
    }

    /// The tag, if the URI has one.
    pub fn tag(&self) -> Option<&str> {
        split_tag(&self.uri).1
    }
}

/// Splits `repo[:tag]`, ignoring a registry port and a digest.
pub fn split_tag(uri: &str) -> (&str, Option<&str>) {
    let without_digest = uri.split('@').next().unwrap_or(uri);
    let last_slash = without_digest.rfind('/').map_or(0, |i| i + 1);
    match without_digest[last_slash..].rfind(':') {
        Some(i) => (
            &without_digest[..last_slash + i],
            Some(&without_digest[last_slash + i + 1..]),
        ),
        None => (without_digest, None),
    }
}

/// A manifest URI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Where it is.
    #[serde(default)]
    pub uri: String,
}

/// `anywhere.eks.amazonaws.com/v1alpha1` `Bundles`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundles {
    /// API version.
    #[serde(default)]
    pub api_version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Spec.
    #[serde(default)]
    pub spec: BundlesSpec,
}

/// The bundle's release number and one versions bundle per Kubernetes version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundlesSpec {
    /// Release number.
    #[serde(default)]
    pub number: i64,
    /// Oldest CLI.
    #[serde(default)]
    pub cli_min_version: String,
    /// Newest CLI.
    #[serde(default)]
    pub cli_max_version: String,
    /// One per Kubernetes version.
    #[serde(default)]
    pub versions_bundles: Vec<VersionsBundle>,
}

/// What one Kubernetes version needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionsBundle {
    /// `1.NN`.
    #[serde(default)]
    pub kube_version: String,
    /// End of standard support date.
    #[serde(default)]
    pub end_of_standard_support: String,
    /// The EKS-D release.
    #[serde(default)]
    pub eks_d: EksDRelease,
    /// Bottlerocket host containers.
    #[serde(default)]
    pub bottlerocket_host_containers: Option<BottlerocketHostContainers>,
    /// Cilium, the CNI: its Helm chart and images.
    #[serde(default)]
    pub cilium: Option<CiliumBundle>,
    /// cert-manager (installed by `snowctl init` before the providers).
    #[serde(default)]
    pub cert_manager: Option<CertManagerBundle>,
    /// Cluster API core.
    #[serde(default, rename = "clusterAPI")]
    pub cluster_api: Option<ProviderBundle>,
    /// The kubeadm bootstrap provider.
    #[serde(default)]
    pub bootstrap: Option<ProviderBundle>,
    /// The kubeadm control-plane provider.
    #[serde(default)]
    pub control_plane: Option<ProviderBundle>,
    /// The etcdadm bootstrap provider.
    #[serde(default)]
    pub etcdadm_bootstrap: Option<ProviderBundle>,
    /// The etcdadm controller.
    #[serde(default)]
    pub etcdadm_controller: Option<ProviderBundle>,
    /// The Snow provider (CAPAS).
    #[serde(default)]
    pub snow: Option<SnowBundle>,
    /// Flux, the GitOps Toolkit: its version and the images of its four controllers.
    #[serde(default)]
    pub flux: Option<FluxBundle>,
}

/// The Flux part of a versions bundle (EKS Anywhere's `FluxBundle`): no manifests, only the
/// images that replace the upstream ones in Flux's install manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FluxBundle {
    /// The Flux version, e.g. `v2.8.8+abcdef1`.
    #[serde(default)]
    pub version: String,
    /// source-controller.
    #[serde(default)]
    pub source_controller: Image,
    /// kustomize-controller.
    #[serde(default)]
    pub kustomize_controller: Image,
    /// helm-controller.
    #[serde(default)]
    pub helm_controller: Image,
    /// notification-controller.
    #[serde(default)]
    pub notification_controller: Image,
}

impl FluxBundle {
    /// The four controllers' images, as `(controller, image)`, in Flux's install order.
    pub fn controller_images(&self) -> [(&'static str, &Image); 4] {
        [
            ("source-controller", &self.source_controller),
            ("kustomize-controller", &self.kustomize_controller),
            ("helm-controller", &self.helm_controller),
            ("notification-controller", &self.notification_controller),
        ]
    }
}

/// The EKS-D release of a versions bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EksDRelease {
    /// Release channel, e.g. `1-30`.
    #[serde(default)]
    pub channel: String,
    /// Kubernetes version, e.g. `v1.30.14`.
    #[serde(default)]
    pub kube_version: String,
    /// The EKS-D Release manifest URL.
    #[serde(default)]
    pub manifest_url: String,
    /// Release name, e.g. `kubernetes-1-30-eks-58`.
    #[serde(default)]
    pub name: String,
    /// Git commit.
    #[serde(default)]
    pub git_commit: String,
    /// The kind node image of this EKS-D release (the bootstrap cluster's node); read it with
    /// [`VersionsBundle::kind_node`], which checks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind_node: Option<Image>,
}

/// Bottlerocket host containers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BottlerocketHostContainers {
    /// The admin container.
    #[serde(default)]
    pub admin: Image,
    /// The control container.
    #[serde(default)]
    pub control: Image,
    /// The kubeadm bootstrap container.
    #[serde(default)]
    pub kubeadm_bootstrap: Image,
}

/// A Cluster API provider in a bundle (etcdadm bootstrap and controller).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderBundle {
    /// The components manifest.
    #[serde(default)]
    pub components: Manifest,
    /// The controller image.
    #[serde(default)]
    pub controller: Image,
    /// The kube-rbac-proxy image.
    #[serde(default)]
    pub kube_proxy: Image,
    /// The metadata manifest.
    #[serde(default)]
    pub metadata: Manifest,
    /// The provider version.
    #[serde(default)]
    pub version: String,
}

/// cert-manager in a bundle: one manifest (no clusterctl metadata) and its version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertManagerBundle {
    /// The cert-manager manifest.
    #[serde(default)]
    pub manifest: Manifest,
    /// The cert-manager version, e.g. `v1.20.2+abcdef1`.
    #[serde(default)]
    pub version: String,
}

/// Cilium in a versions bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CiliumBundle {
    /// The agent image, e.g. `public.ecr.aws/eks/cilium/cilium:v1.19.4-1`.
    #[serde(default)]
    pub cilium: Image,
    /// The operator image, e.g. `public.ecr.aws/eks/cilium/operator-generic:v1.19.4-1`.
    #[serde(default)]
    pub operator: Image,
    /// The Helm chart as an OCI artifact, e.g. `public.ecr.aws/eks/cilium/cilium:1.19.4-1` (the
    /// tag is the chart version).
    #[serde(default)]
    pub helm_chart: Image,
    /// The Cilium version, e.g. `v1.19.4-1`.
    #[serde(default)]
    pub version: String,
}

/// The Snow provider's part of a versions bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnowBundle {
    /// The Bottlerocket bootstrap container for Snow.
    #[serde(default)]
    pub bottlerocket_bootstrap_snow: Image,
    /// The CAPAS components manifest.
    #[serde(default)]
    pub components: Manifest,
    /// The kube-vip image.
    #[serde(default)]
    pub kube_vip: Image,
    /// The CAPAS manager image.
    #[serde(default)]
    pub manager: Image,
    /// The CAPAS metadata manifest.
    #[serde(default)]
    pub metadata: Manifest,
    /// The CAPAS version, e.g. `v0.3.3+abcdef1`.
    #[serde(default)]
    pub version: String,
}

impl Bundles {
    /// Reads a Bundles manifest.
    pub fn from_yaml(text: &str) -> Result<Bundles, ReleaseError> {
        let bundles: Bundles = parse(text, "the Bundles manifest")?;
        if bundles.kind != "Bundles"
            || !bundles
                .api_version
                .starts_with("anywhere.eks.amazonaws.com/")
        {
            return Err(ReleaseError::WrongKind {
                expected: "anywhere.eks.amazonaws.com Bundles",
                api_version: bundles.api_version,
                kind: bundles.kind,
            });
        }
        Ok(bundles)
    }

    /// The Kubernetes versions the bundle provides.
    pub fn kube_versions(&self) -> Vec<String> {
        self.spec
            .versions_bundles
            .iter()
            .map(|v| v.kube_version.clone())
            .collect()
    }

    /// The versions bundle of a Kubernetes version (`1.NN`).
    pub fn versions_bundle(&self, version: &str) -> Result<&VersionsBundle, ReleaseError> {
        self.spec
            .versions_bundles
            .iter()
            .find(|v| v.kube_version == version)
            .ok_or_else(|| ReleaseError::NoSuchVersion {
                version: version.to_owned(),
                available: self.kube_versions(),
            })
    }
}

impl VersionsBundle {
    /// The Snow section, or an error naming what is missing: the section, an image URI or its
    /// tag, or the version.
    pub fn snow(&self) -> Result<&SnowBundle, ReleaseError> {
        let manifest = format!("Bundles {}", self.kube_version);
        let snow = self.snow.as_ref().ok_or_else(|| ReleaseError::Missing {
            manifest: manifest.clone(),
            item: "the snow section".into(),
        })?;
        for (image, item) in [
            (&snow.kube_vip, "snow.kubeVip"),
            (&snow.manager, "snow.manager"),
            (
                &snow.bottlerocket_bootstrap_snow,
                "snow.bottlerocketBootstrapSnow",
            ),
        ] {
            require_tagged(image, &manifest, item)?;
        }
        if snow.version.is_empty() {
            return Err(ReleaseError::Missing {
                manifest,
                item: "snow.version".into(),
            });
        }
        Ok(snow)
    }
}

impl VersionsBundle {
    /// The kind node image (`eksD.kindNode`), or an error naming what is missing: the image, its
    /// URI or its tag.
    pub fn kind_node(&self) -> Result<&Image, ReleaseError> {
        let manifest = format!("Bundles {}", self.kube_version);
        let image = self
            .eks_d
            .kind_node
            .as_ref()
            .ok_or_else(|| ReleaseError::Missing {
                manifest: manifest.clone(),
                item: "eksD.kindNode".into(),
            })?;
        require_tagged(image, &manifest, "eksD.kindNode")?;
        Ok(image)
    }

    /// The Cilium section, or an error naming what is missing: the section, or an image URI or
    /// its tag (the chart's tag is its version).
    pub fn cilium(&self) -> Result<&CiliumBundle, ReleaseError> {
        let manifest = format!("Bundles {}", self.kube_version);
        let cilium = self.cilium.as_ref().ok_or_else(|| ReleaseError::Missing {
            manifest: manifest.clone(),
            item: "the cilium section".into(),
        })?;
        for (image, item) in [
            (&cilium.cilium, "cilium.cilium"),
            (&cilium.operator, "cilium.operator"),
            (&cilium.helm_chart, "cilium.helmChart"),
        ] {
            require_tagged(image, &manifest, item)?;
        }
        Ok(cilium)
    }
}

impl VersionsBundle {
    /// The Flux section, or an error naming what is missing: the section, a controller image's
    /// URI or its tag, or the version.
    pub fn flux(&self) -> Result<&FluxBundle, ReleaseError> {
        let manifest = format!("Bundles {}", self.kube_version);
        let flux = self.flux.as_ref().ok_or_else(|| ReleaseError::Missing {
            manifest: manifest.clone(),
            item: "the flux section".into(),
        })?;
        for (image, item) in [
            (&flux.source_controller, "flux.sourceController"),
            (&flux.kustomize_controller, "flux.kustomizeController"),
            (&flux.helm_controller, "flux.helmController"),
            (&flux.notification_controller, "flux.notificationController"),
        ] {
            require_tagged(image, &manifest, item)?;
        }
        if flux.version.is_empty() {
            return Err(ReleaseError::Missing {
                manifest,
                item: "flux.version".into(),
            });
        }
        Ok(flux)
    }
}

/// The image must have a URI with a tag.
pub fn require_tagged(image: &Image, manifest: &str, item: &str) -> Result<(), ReleaseError> {
    if image.uri.is_empty() {
        return Err(ReleaseError::Missing {
            manifest: manifest.to_owned(),
            item: format!("{item}.uri"),
        });
    }
    if image.tag().is_none_or(str::is_empty) {
        return Err(ReleaseError::Untagged {
            manifest: manifest.to_owned(),
            uri: image.uri.clone(),
        });
    }
    Ok(())
}

/// `distro.eks.amazonaws.com/v1alpha1` `Release`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    /// API version.
    #[serde(default)]
    pub api_version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Metadata (the name).
    #[serde(default)]
    pub metadata: ReleaseMetadata,
    /// Channel and number.
    #[serde(default)]
    pub spec: ReleaseSpec,
    /// The components and their assets.
    #[serde(default)]
    pub status: ReleaseStatus,
}

/// The release name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseMetadata {
    /// e.g. `kubernetes-1-21-eks-4`.
    #[serde(default)]
    pub name: String,
}

/// Channel and number.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseSpec {
    /// e.g. `1-21`.
    #[serde(default)]
    pub channel: String,
    /// Release number.
    #[serde(default)]
    pub number: i64,
}

/// The components.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseStatus {
    /// Release date.
    #[serde(default)]
    pub date: String,
    /// Components.
    #[serde(default)]
    pub components: Vec<Component>,
}

/// One EKS-D component (kubernetes, etcd, coredns, …).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Upstream git tag, e.g. `v3.4.16`.
    #[serde(default)]
    pub git_tag: String,
    /// Images and archives.
    #[serde(default)]
    pub assets: Vec<Asset>,
}

/// An image or archive of a component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Asset {
    /// Name, e.g. `kube-apiserver-image`.
    #[serde(default)]
    pub name: String,
    /// `Image` or `Archive`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// OS.
    #[serde(default)]
    pub os: String,
    /// Architectures.
    #[serde(default)]
    pub arch: Vec<String>,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// For images.
    #[serde(default)]
    pub image: Option<AssetImage>,
    /// For archives.
    #[serde(default)]
    pub archive: Option<AssetArchive>,
}

/// An image asset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetImage {
    /// URI with tag.
    #[serde(default)]
    pub uri: String,
}

/// An archive asset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetArchive {
    /// URI.
    #[serde(default)]
    pub uri: String,
    /// SHA-256.
    #[serde(default)]
    pub sha256: String,
    /// SHA-512.
    #[serde(default)]
    pub sha512: String,
}

/// A repository and tag, as the KCP's `imageRepository` and version fields want them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoTag {
    /// Repository.
    pub repository: String,
    /// Tag.
    pub tag: String,
}

impl RepoTag {
    /// Splits an image URI at its tag; with `strip_last_path_element`, the repository loses its
    /// last path element (what kubeadm's `imageRepository` fields want). An untagged URI is an
    /// error naming `manifest`.
    pub fn from_uri(
        uri: &str,
        manifest: &str,
        strip_last_path_element: bool,
    ) -> Result<RepoTag, ReleaseError> {
        let (repo, tag) = split_tag(uri);
        let tag = tag
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ReleaseError::Untagged {
                manifest: manifest.to_owned(),
                uri: uri.to_owned(),
            })?;
        let repository = if strip_last_path_element {
            repo.rsplit_once('/').map_or(repo, |(head, _)| head)
        } else {
            repo
        };
        Ok(RepoTag {
            repository: repository.to_owned(),
            tag: tag.to_owned(),
        })
    }
}

/// What rendering takes from an EKS-D release (EKS Anywhere's `KubeDistro`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KubeDistro {
    /// From `kube-apiserver-image`: the repository minus its last path element, and the tag.
    pub kubernetes: RepoTag,
    /// From `coredns-image`.
    pub core_dns: RepoTag,
    /// From `etcd-image`.
    pub etcd: RepoTag,
    /// `etcd-image` with its tag.
    pub etcd_image: String,
    /// From `pause-image`: the whole repository (split at the tag), and the tag.
    pub pause: RepoTag,
    /// The etcd component's git tag without its `v`.
    pub etcd_version: String,
    /// The amd64 etcd archive.
    pub etcd_url: String,
}

impl Release {
    /// Reads an EKS-D Release manifest.
    pub fn from_yaml(text: &str) -> Result<Release, ReleaseError> {
        let release: Release = parse(text, "the EKS-D Release manifest")?;
        if release.kind != "Release"
            || !release.api_version.starts_with("distro.eks.amazonaws.com/")
        {
            return Err(ReleaseError::WrongKind {
                expected: "distro.eks.amazonaws.com Release",
                api_version: release.api_version,
                kind: release.kind,
            });
        }
        Ok(release)
    }

    fn missing(&self, item: String) -> ReleaseError {
        ReleaseError::Missing {
            manifest: format!("EKS-D {}", self.metadata.name),
            item,
        }
    }

    /// The component named `name`.
    pub fn component(&self, name: &str) -> Result<&Component, ReleaseError> {
        self.status
            .components
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| self.missing(format!("component {name}")))
    }

    /// The image URI of the asset named `name`, in any component.
    pub fn image(&self, name: &str) -> Result<&str, ReleaseError> {
        self.status
            .components
            .iter()
            .flat_map(|c| &c.assets)
            .find(|a| a.name == name)
            .and_then(|a| a.image.as_ref())
            .map(|i| i.uri.as_str())
            .filter(|uri| !uri.is_empty())
            .ok_or_else(|| self.missing(format!("asset {name}")))
    }

    fn repo_tag(
        &self,
        asset: &str,
        strip_last_path_element: bool,
    ) -> Result<RepoTag, ReleaseError> {
        let manifest = format!("EKS-D {}", self.metadata.name);
        RepoTag::from_uri(self.image(asset)?, &manifest, strip_last_path_element)
    }

    /// Everything rendering takes from the release, or an error naming the missing asset.
    pub fn kube_distro(&self) -> Result<KubeDistro, ReleaseError> {
        let etcd = self.component("etcd")?;
        let etcd_url = etcd
            .assets
            .iter()
            .filter(|a| a.type_ == "Archive" && a.arch.iter().any(|arch| arch == "amd64"))
            .find_map(|a| a.archive.as_ref().map(|x| x.uri.clone()))
            .filter(|u| !u.is_empty())
            .ok_or_else(|| self.missing("the amd64 etcd archive".into()))?;
        Ok(KubeDistro {
            kubernetes: self.repo_tag("kube-apiserver-image", true)?,
            core_dns: self.repo_tag("coredns-image", true)?,
            etcd: self.repo_tag("etcd-image", true)?,
            etcd_image: self.image("etcd-image")?.to_owned(),
            pause: self.repo_tag("pause-image", false)?,
            etcd_version: etcd.git_tag.trim_start_matches('v').to_owned(),
            etcd_url,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_tags_but_not_ports_or_digests() {
        assert_eq!(
            split_tag("public.ecr.aws/a/b:v1.2"),
            ("public.ecr.aws/a/b", Some("v1.2"))
        );
        assert_eq!(split_tag("registry:5000/a/b"), ("registry:5000/a/b", None));
        assert_eq!(
            split_tag("registry:5000/a/b:v1"),
            ("registry:5000/a/b", Some("v1"))
        );
        assert_eq!(split_tag("a/b:v1@sha256:abc"), ("a/b", Some("v1")));
    }
}
