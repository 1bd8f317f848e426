//! The release catalog: a Bundles manifest and the EKS-D facts per Kubernetes version, with an
//! embedded default so rendering and the image list work offline with no flags; and its
//! resolution, once per cluster, into what rendering needs ([`ClusterRelease`]).

use super::{
    Bundles, Contract, KubeDistro, Release, ReleaseError, RepoTag, SnowBundle, VersionsBundle,
};
use crate::{Finding, Report, Severity, ValidSpec};
use serde::Deserialize;
use std::{collections::BTreeMap, sync::LazyLock};

/// A Bundles manifest and the EKS-D facts of its releases, keyed by EKS-D release name.
#[derive(Debug, Clone)]
pub struct ReleaseInputs {
    /// The bundle.
    pub bundles: Bundles,
    /// EKS-D facts by release name (`kubernetes-1-30-eks-58`).
    pub distros: BTreeMap<String, KubeDistro>,
}

/// Compact EKS-D facts, as kept in the embedded catalog.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogRelease {
    name: String,
    #[serde(default)]
    channel: String,
    images: BTreeMap<String, String>,
    etcd: CatalogEtcd,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogEtcd {
    git_tag: String,
    amd64_archive: String,
}

#[derive(Debug, Deserialize)]
struct CatalogFile {
    releases: Vec<CatalogRelease>,
}

const EMBEDDED_BUNDLES: &str = include_str!("../../catalog/bundles.yaml");
const EMBEDDED_EKSD: &str = include_str!("../../catalog/eksd.yaml");

static EMBEDDED: LazyLock<Result<ReleaseInputs, ReleaseError>> = LazyLock::new(|| {
    let bundles = Bundles::from_yaml(EMBEDDED_BUNDLES)?;
    let mut inputs = ReleaseInputs {
        bundles,
        distros: BTreeMap::new(),
    };
    inputs.add_catalog(EMBEDDED_EKSD)?;
    Ok(inputs)
});

fn repo_tag(uri: &str, manifest: &str, strip_last: bool) -> Result<RepoTag, ReleaseError> {
    RepoTag::from_uri(uri, manifest, strip_last)
}

impl ReleaseInputs {
    /// The embedded default catalog (the Kubernetes versions of the sample bundle).
    pub fn embedded() -> Result<ReleaseInputs, ReleaseError> {
        EMBEDDED.clone()
    }

    /// The embedded Bundles manifest as written: every section, also those the typed
    /// [`Bundles`] does not keep (what an image list or an offline archive needs whole).
    pub fn embedded_bundles_yaml() -> &'static str {
        EMBEDDED_BUNDLES
    }

    /// Inputs from a Bundles manifest, with the embedded EKS-D facts for the releases it names.
    pub fn from_bundles(bundles: Bundles) -> Result<ReleaseInputs, ReleaseError> {
        let mut inputs = ReleaseInputs {
            bundles,
            distros: BTreeMap::new(),
        };
        inputs.add_catalog(EMBEDDED_EKSD)?;
        Ok(inputs)
    }

    /// Adds (or replaces) the facts of an EKS-D Release manifest.
    pub fn add_release(&mut self, release: &Release) -> Result<(), ReleaseError> {
        let distro = release.kube_distro()?;
        self.distros.insert(release.metadata.name.clone(), distro);
        Ok(())
    }

    fn add_catalog(&mut self, text: &str) -> Result<(), ReleaseError> {
        let file: CatalogFile = serde_saphyr::from_str(text).map_err(|e| ReleaseError::Parse {
            what: "the EKS-D catalog",
            message: e.to_string(),
        })?;
        for r in file.releases {
            let manifest = format!("EKS-D {}", r.name);
            let image = |name: &str| {
                r.images
                    .get(name)
                    .cloned()
                    .ok_or_else(|| ReleaseError::Missing {
                        manifest: manifest.clone(),
                        item: format!("asset {name}"),
                    })
            };
            let etcd_image = image("etcd-image")?;
            let distro = KubeDistro {
                kubernetes: repo_tag(&image("kube-apiserver-image")?, &manifest, true)?,
                core_dns: repo_tag(&image("coredns-image")?, &manifest, true)?,
                etcd: repo_tag(&etcd_image, &manifest, true)?,
                etcd_image,
                pause: repo_tag(&image("pause-image")?, &manifest, false)?,
                etcd_version: r.etcd.git_tag.trim_start_matches('v').to_owned(),
                etcd_url: r.etcd.amd64_archive,
            };
            let _ = r.channel;
            self.distros.entry(r.name).or_insert(distro);
        }
        Ok(())
    }

    /// The versions bundle and EKS-D facts of a Kubernetes version.
    pub fn for_version(
        &self,
        version: &str,
    ) -> Result<(&VersionsBundle, &KubeDistro), ReleaseError> {
        let vb = self.bundles.versions_bundle(version)?;
        let name = &vb.eks_d.name;
        // An exact release, else the newest known release of the same channel.
        let channel_prefix = name.rsplit_once('-').map(|(head, _)| format!("{head}-"));
        let same_channel = || {
            let prefix = channel_prefix.as_deref()?;
            self.distros
                .iter()
                .filter_map(|(n, d)| Some((n.strip_prefix(prefix)?.parse::<u32>().ok()?, d)))
                .max_by_key(|(number, _)| *number)
                .map(|(_, d)| d)
        };
        let distro = self
            .distros
            .get(name)
            .or_else(same_channel)
            .ok_or_else(|| ReleaseError::Missing {
                manifest: format!("Bundles {version}"),
                item: format!("the EKS-D release {name} (not among the EKS-D releases given)"),
            })?;
        Ok((vb, distro))
    }
}

/// The release of one cluster, resolved once from [`ReleaseInputs`]: the versions bundle of its
/// Kubernetes version, its Snow parts, the EKS-D facts of the cluster and of each worker group,
/// and the Cluster API contract its objects follow.
#[derive(Debug, Clone)]
pub struct ClusterRelease<'a> {
    /// The versions bundle of the cluster's Kubernetes version.
    pub bundle: &'a VersionsBundle,
    /// Its Snow parts (CAPAS, kube-vip, Bottlerocket bootstrap).
    pub snow: &'a SnowBundle,
    /// The EKS-D facts of the cluster's Kubernetes version.
    pub distro: &'a KubeDistro,
    /// The EKS-D facts of each worker group's Kubernetes version, by group name.
    pub groups: BTreeMap<String, &'a KubeDistro>,
    /// The Cluster API contract.
    pub contract: Contract,
}

impl ReleaseInputs {
    /// Resolves the release of `spec`: its versions bundle, EKS-D facts (the cluster's and every
    /// worker group's) and contract — the bundle's CAPAS version decides it (0.3 and later speak
    /// v1beta2) unless `forced`.
    pub fn resolve(
        &self,
        spec: &ValidSpec,
        forced: Option<Contract>,
    ) -> Result<ClusterRelease<'_>, ReleaseError> {
        let version = spec.kubernetes_version();
        let (bundle, distro) = self.for_version(version)?;
        let snow = bundle.snow()?;
        let mut groups = BTreeMap::new();
        for group in spec
            .cluster
            .spec
            .worker_node_group_configurations
            .iter()
            .flatten()
        {
            let group_version = group.kubernetes_version.as_deref().unwrap_or(version);
            let (_, group_distro) = self.for_version(group_version)?;
            groups.insert(group.name.clone().unwrap_or_default(), group_distro);
        }
        Ok(ClusterRelease {
            bundle,
            snow,
            distro,
            groups,
            contract: forced.unwrap_or_else(|| Contract::for_capas_version(&snow.version)),
        })
    }
}

impl ReleaseInputs {
    /// How [`ReleaseInputs::missing_version`] names the embedded catalog.
    pub const EMBEDDED_NAME: &'static str = "snowctl's embedded release bundle";

    /// A finding when the report's Kubernetes version is valid but these inputs lack it, naming
    /// the versions they have: `catalog` names the inputs in the message (the release, a file,
    /// or [`ReleaseInputs::EMBEDDED_NAME`]) and `severity` is the caller's: an error against
    /// the release a create would use (it would refuse the spec), a warning against a catalog
    /// that is not that release (the embedded sample).
    pub fn missing_version(
        &self,
        report: &Report,
        catalog: &str,
        severity: Severity,
    ) -> Vec<Finding> {
        let field = "spec.kubernetesVersion";
        let Some(spec) = &report.spec else {
            return Vec::new();
        };
        let Some(version) = spec.cluster.spec.kubernetes_version.as_deref() else {
            return Vec::new();
        };
        if report
            .findings
            .iter()
            .any(|f| f.field.as_deref() == Some(field))
            || self.bundles.versions_bundle(version).is_ok()
        {
            return Vec::new();
        }
        let available = self.bundles.kube_versions().join(", ");
        let hint = match severity {
            Severity::Error => {
                "use a Kubernetes version the release has, or a release that has this one"
            }
            _ => "render and create will need a release catalog whose Bundles have this version",
        };
        let finding = Finding::new(
            severity,
            super::VERSION_CHECK,
            format!("Kubernetes {version} is not in {catalog} ({available})"),
        )
        .object(format!("Cluster/{}", spec.name()))
        .field(field)
        .hint(hint);
        spec.locate(vec![finding])
    }
}
