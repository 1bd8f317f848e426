//! EKS Anywhere's Release manifest (`anywhere.eks.amazonaws.com/v1alpha1` `Release`, published
//! at [`DEFAULT_RELEASE_MANIFEST`]): every EKS Anywhere release with its number and the URL of
//! its Bundles manifest. EKS Anywhere's CLI finds its Bundles this way; snowctl does the same to
//! find real, published defaults when no `--bundles` or `--artifacts` is given.
//!
//! The fields read, as EKS Anywhere's release API (`release/api/v1alpha1`) has them:
//! `spec.latestVersion` and `spec.releases[]` with `version` (a semantic version, `v0.21.3`),
//! `number` (monotonically increasing) and `bundleManifestUrl`. Other fields (binaries, dates,
//! commits) are ignored.

use super::{Bundles, ReleaseError, parse};
use serde::Deserialize;

/// Where EKS Anywhere publishes its Release manifest.
pub const DEFAULT_RELEASE_MANIFEST: &str =
    "https://anywhere-assets.eks.amazonaws.com/releases/eks-a/manifest.yaml";

/// The most Bundles manifests looked at for one choice: the newest releases first, until one has
/// the Snow section wanted (a release manifest lists every release since v0.1: reading all of
/// their bundles would fetch tens of megabytes).
pub const MAX_BUNDLES_TRIED: usize = 8;

/// An EKS Anywhere Release manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EksaReleases {
    /// `spec.latestVersion`.
    pub latest_version: String,
    /// Every release, newest first (by semantic version; ties by number).
    pub releases: Vec<EksaRelease>,
}

/// One EKS Anywhere release.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EksaRelease {
    /// `v0.21.3`.
    pub version: String,
    /// The release number.
    #[serde(default)]
    pub number: u64,
    /// The URL of its Bundles manifest.
    pub bundle_manifest_url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    spec: Spec,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    latest_version: String,
    #[serde(default)]
    releases: Vec<EksaRelease>,
}

/// `vMAJOR.MINOR.PATCH[-PRE][+BUILD]` as numbers, a release (no `-PRE`) after its pre-releases.
fn semver_key(version: &str) -> Option<(u64, u64, u64, bool)> {
    let core = version.trim_start_matches('v');
    let core = core.split('+').next().unwrap_or(core);
    let (core, pre) = match core.split_once('-') {
        Some((core, _)) => (core, true),
        None => (core, false),
    };
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
    parts
        .next()
        .is_none()
        .then_some((major, minor, patch, !pre))
}

impl EksaReleases {
    /// Reads a Release manifest; a release without a semantic version or a Bundles URL is a
    /// parse error naming it.
    pub fn from_yaml(text: &str) -> Result<EksaReleases, ReleaseError> {
        let doc: Document = parse(text, "the EKS Anywhere Release manifest")?;
        if doc.kind != "Release" || !doc.api_version.starts_with("anywhere.eks.amazonaws.com/") {
            return Err(ReleaseError::WrongKind {
                expected: "anywhere.eks.amazonaws.com Release",
                api_version: doc.api_version,
                kind: doc.kind,
            });
        }
        let mut releases = doc.spec.releases;
        for (i, r) in releases.iter().enumerate() {
            let bad = |message: String| ReleaseError::Parse {
                what: "the EKS Anywhere Release manifest",
                message: format!("spec.releases[{i}] ({}): {message}", r.version),
            };
            if semver_key(&r.version).is_none() {
                return Err(bad("`version` is not a semantic version (vX.Y.Z)".into()));
            }
            if !r.bundle_manifest_url.starts_with("https://") {
                return Err(bad(format!(
                    "`bundleManifestUrl` {:?} is not an https:// URL",
                    r.bundle_manifest_url
                )));
            }
        }
        releases.sort_by_key(|r| std::cmp::Reverse((semver_key(&r.version), r.number)));
        Ok(EksaReleases {
            latest_version: doc.spec.latest_version,
            releases,
        })
    }

    /// The releases to try, newest first: those not newer than `spec.latestVersion` (a release
    /// listed ahead of it is not yet the current one) and not pre-releases, at most
    /// [`MAX_BUNDLES_TRIED`].
    pub fn candidates(&self) -> Vec<&EksaRelease> {
        let latest = semver_key(&self.latest_version);
        self.releases
            .iter()
            .filter(|r| {
                let key = semver_key(&r.version);
                key.is_some_and(|k| k.3) && (latest.is_none() || key <= latest)
            })
            .take(MAX_BUNDLES_TRIED)
            .collect()
    }
}

/// Whether `bundles` has a complete Snow section for `kube_version` (`1.NN`), or for some
/// version when `None`: what makes a release usable for a Snow cluster.
pub fn has_snow(bundles: &Bundles, kube_version: Option<&str>) -> bool {
    bundles
        .spec
        .versions_bundles
        .iter()
        .filter(|v| kube_version.is_none_or(|k| v.kube_version == k))
        .any(|v| v.snow().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(latest: &str, releases: &[(&str, u64)]) -> String {
        let mut text = format!(
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Release\nmetadata:\n  name: release-manifest\nspec:\n  latestVersion: {latest}\n  releases:\n"
        );
        for (version, number) in releases {
            text.push_str(&format!(
                "  - version: {version}\n    number: {number}\n    date: \"2025-01-01T00:00:00Z\"\n    gitCommit: abc\n    bundleManifestUrl: https://anywhere-assets.eks.amazonaws.com/releases/bundles/{number}/manifest.yaml\n    eksABinary: {{}}\n    eksACLI: {{}}\n"
            ));
        }
        text
    }

    #[test]
    fn candidates_are_newest_first_not_past_latest_and_not_pre_releases() {
        let text = manifest(
            "v0.21.2",
            &[
                ("v0.9.0", 10),
                ("v0.21.2", 90),
                ("v0.21.3", 91),
                ("v0.21.0-rc.1", 85),
                ("v0.20.10", 88),
                ("v0.21.1", 89),
            ],
        );
        let releases = EksaReleases::from_yaml(&text).unwrap();
        let versions: Vec<&str> = releases
            .candidates()
            .iter()
            .map(|r| r.version.as_str())
            .collect();
        // Numerically, not as text: v0.20.10 after v0.21.1, v0.9.0 last.
        assert_eq!(versions, ["v0.21.2", "v0.21.1", "v0.20.10", "v0.9.0"]);
        assert!(
            releases.candidates()[0]
                .bundle_manifest_url
                .ends_with("/90/manifest.yaml")
        );
    }

    #[test]
    fn at_most_a_bounded_number_of_bundles_is_tried() {
        let many: Vec<(String, u64)> = (0..40).map(|i| (format!("v0.{i}.0"), i)).collect();
        let refs: Vec<(&str, u64)> = many.iter().map(|(v, n)| (v.as_str(), *n)).collect();
        let releases = EksaReleases::from_yaml(&manifest("v0.39.0", &refs)).unwrap();
        let candidates = releases.candidates();
        assert_eq!(candidates.len(), MAX_BUNDLES_TRIED);
        assert_eq!(candidates[0].version, "v0.39.0");
    }

    #[test]
    fn a_release_serves_snow_only_with_the_section_for_the_version() {
        let sample =
            Bundles::from_yaml(crate::release::ReleaseInputs::embedded_bundles_yaml()).unwrap();
        let version = sample.kube_versions()[0].clone();
        assert!(has_snow(&sample, Some(&version)));
        assert!(has_snow(&sample, None));
        assert!(!has_snow(&sample, Some("1.0")));
        let mut without = sample.clone();
        for v in &mut without.spec.versions_bundles {
            v.snow = None;
        }
        assert!(!has_snow(&without, Some(&version)));
        assert!(!has_snow(&without, None));
    }

    #[test]
    fn a_bad_manifest_is_named() {
        let bundles = "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Bundles\nspec: {}\n";
        let err = EksaReleases::from_yaml(bundles).unwrap_err().to_string();
        assert!(
            err.contains("expected anywhere.eks.amazonaws.com Release"),
            "{err}"
        );
        let err = EksaReleases::from_yaml(&manifest("v1.0.0", &[("latest", 1)]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("spec.releases[0] (latest)"), "{err}");
        let http = manifest("v1.0.0", &[("v1.0.0", 1)]).replace("https://", "http://");
        let err = EksaReleases::from_yaml(&http).unwrap_err().to_string();
        assert!(err.contains("is not an https:// URL"), "{err}");
        let err = EksaReleases::from_yaml("<html>").unwrap_err().to_string();
        assert!(
            err.contains("the EKS Anywhere Release manifest could not be read"),
            "{err}"
        );
    }
}
