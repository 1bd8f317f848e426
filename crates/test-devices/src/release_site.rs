//! A stand-in for EKS Anywhere's release site (`anywhere-assets.eks.amazonaws.com` and
//! `distro.eks.amazonaws.com`): a Release manifest and the Bundles and EKS-D manifests it names,
//! served by a loopback [`FileServer`].
//!
//! The Release manifest at [`RELEASE_MANIFEST_PATH`] lists three releases, each case of the
//! choice a client makes: `v0.30.0`, the `latestVersion`, whose Bundles has no Snow section;
//! `v0.29.1`, the embedded sample Bundles (with Snow), the one to take; `v0.31.0`, listed but
//! newer than `latestVersion`. Every EKS-D manifest the sample names is served (the reference
//! EKS-D Release given, the same text at each URL).

use crate::{FileServer, TestCa};
use std::{collections::HashMap, net::IpAddr};

/// Where the Release manifest is served.
pub const RELEASE_MANIFEST_PATH: &str = "/releases/eks-a/manifest.yaml";

/// The release a client should take from this site.
pub const SNOW_RELEASE: &str = "v0.29.1";

/// The sample's EKS-D URLs are moved onto the server under this path.
const DISTRO_PREFIX: &str = "https://distro.eks.amazonaws.com/";

fn release_manifest(base: &str) -> Vec<u8> {
    let mut text = String::from(
        "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Release\nmetadata:\n  name: release-manifest\nspec:\n  latestVersion: v0.30.0\n  releases:\n",
    );
    for (number, version) in [(29, "v0.29.1"), (31, "v0.31.0"), (30, "v0.30.0")] {
        text.push_str(&format!(
            "  - version: {version}\n    number: {number}\n    date: \"2026-01-01T00:00:00Z\"\n    gitCommit: 0123abc\n    bundleManifestUrl: {base}/releases/bundles/{number}/manifest.yaml\n    eksABinary: {{}}\n    eksACLI: {{}}\n"
        ));
    }
    text.into_bytes()
}

/// Serves the site on `ip` with a certificate of `ca`; `eksd` is the EKS-D Release manifest
/// served at every EKS-D URL of the sample Bundles.
pub async fn start(ip: IpAddr, ca: &TestCa, eksd: Vec<u8>) -> Result<FileServer, String> {
    let sample = snow_api::release::ReleaseInputs::embedded_bundles_yaml();
    start_with_bundles(ip, ca, eksd, sample).await
}

/// [`start`] with `bundles` (the embedded sample, edited) as the Bundles of the releases with
/// a Snow section (`v0.29.1` and `v0.31.0`), e.g. a Kubernetes version the sample lacks.
pub async fn start_with_bundles(
    ip: IpAddr,
    ca: &TestCa,
    eksd: Vec<u8>,
    bundles: &str,
) -> Result<FileServer, String> {
    FileServer::start_with(ip, ca, |base| {
        let sample = bundles.replace(DISTRO_PREFIX, &format!("{base}/distro/"));
        // An unknown key is ignored by readers of Bundles: the Snow sections are gone.
        let without_snow = sample.replace("\n    snow:\n", "\n    snowRemoved:\n");
        let mut files = HashMap::new();
        files.insert(RELEASE_MANIFEST_PATH.to_owned(), release_manifest(base));
        for (number, text) in [(29, &sample), (31, &sample), (30, &without_snow)] {
            let path = format!("/releases/bundles/{number}/manifest.yaml");
            files.insert(path, text.clone().into_bytes());
        }
        for line in snow_api::release::ReleaseInputs::embedded_bundles_yaml().lines() {
            if let Some(path) = line.trim().strip_prefix("manifestUrl: ")
                && let Some(path) = path.strip_prefix(DISTRO_PREFIX)
            {
                files.insert(format!("/distro/{path}"), eksd.clone());
            }
        }
        files
    })
    .await
}
