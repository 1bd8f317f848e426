//! Which images a Snow cluster needs: from a Bundles manifest (walked as data, so every image
//! section counts, typed or not) and the EKS-D releases of the selected Kubernetes versions.

use crate::ImagesError;
use serde::Serialize;
use serde_json::Value;
use snow_api::OsFamily;
use snow_api::release::ReleaseInputs;
use snow_api::release::{KubeDistro, split_tag};
use std::collections::BTreeMap;

/// What to list: Kubernetes versions (`1.NN`; empty = every version of the bundle) and node
/// operating systems (empty = both).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `1.NN` versions; empty means all.
    pub kube_versions: Vec<String>,
    /// OS families; empty means all.
    pub os_families: Vec<OsFamily>,
}

/// One image of the list, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedImage {
    /// The full URI with its tag, as the bundle names it.
    pub uri: String,
    /// Where it is referenced, e.g. `1.30 snow.kubeVip`, `1.30 eks-d kube-apiserver`.
    pub used_by: Vec<String>,
}

impl ListedImage {
    /// Images given by the user instead of a bundle's: `uris`, then one URI a line of each
    /// text in `lists` (`#` starts a comment; blank lines are skipped); sorted, each once, used
    /// by "command line".
    pub fn from_user<'a>(
        uris: &[String],
        lists: impl IntoIterator<Item = &'a str>,
    ) -> Vec<ListedImage> {
        let mut all: Vec<String> = uris.to_vec();
        for text in lists {
            all.extend(
                text.lines()
                    .map(|l| l.split('#').next().unwrap_or("").trim())
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned),
            );
        }
        all.sort();
        all.dedup();
        all.into_iter()
            .map(|uri| ListedImage {
                uri,
                used_by: vec!["command line".into()],
            })
            .collect()
    }
}

/// Sections of a versions bundle that only other providers (or EKS-A's own controllers, which
/// snowctl replaces) use. Everything else that holds an image is part of a Snow cluster, Flux's
/// controllers too (a cluster with GitOps runs them; EKS Anywhere lists them among its shared
/// images, so that they travel with the offline archive).
const OTHER_SECTIONS: &[&str] = &[
    "cloudStack",
    "docker",
    "eksa",
    "haproxy",
    "kindnetd",
    "nutanix",
    "packageController",
    "tinkerbell",
    "upgrader",
    "vSphere",
];

fn bottlerocket_only(path: &str) -> bool {
    path.starts_with("bottlerocketHostContainers")
        || path.starts_with("bottlerocketBootstrapContainers")
        || path == "snow.bottlerocketBootstrapSnow"
}

/// An `Image` of the Bundles format: an object with a `uri` and an `imageDigest` or `arch`.
/// Manifests have a `uri` only; archives have `arch` too, but also a `sha256`/`sha512`.
fn is_image(object: &serde_json::Map<String, Value>) -> Option<&str> {
    let uri = object.get("uri")?.as_str()?;
    let archive = object.contains_key("sha256") || object.contains_key("sha512");
    let image = object.contains_key("imageDigest") || object.contains_key("arch");
    (image && !archive && !uri.contains("://")).then_some(uri)
}

fn walk(value: &Value, path: &mut Vec<String>, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            if let Some(uri) = is_image(map) {
                out.push((path.join("."), uri.to_owned()));
                return;
            }
            for (key, child) in map {
                path.push(key.clone());
                walk(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, path, out);
            }
        }
        _ => {}
    }
}

/// The bundle as generic data: parsed from YAML text, or the typed embedded catalog.
#[derive(Debug, Clone)]
pub struct BundleData {
    value: Value,
}

impl BundleData {
    /// Reads a Bundles manifest (any sections, typed or not).
    pub fn from_yaml(text: &str) -> Result<BundleData, ImagesError> {
        let value: Value = serde_saphyr::from_str(text).map_err(|e| ImagesError::Bundles {
            message: e.to_string(),
        })?;
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind != "Bundles" {
            return Err(ImagesError::Bundles {
                message: format!("expected kind Bundles, found `{kind}`"),
            });
        }
        Ok(BundleData { value })
    }

    /// The embedded catalog's Bundles manifest, every section of it (the typed `ReleaseInputs`
    /// keep only what rendering reads; the image list needs the management components and
    /// Cilium too).
    pub fn embedded() -> Result<BundleData, ImagesError> {
        BundleData::from_yaml(ReleaseInputs::embedded_bundles_yaml())
    }

    fn versions_bundles(&self) -> impl Iterator<Item = &Value> {
        self.value
            .pointer("/spec/versionsBundles")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }

    /// The Kubernetes versions of the bundle.
    pub fn kube_versions(&self) -> Vec<String> {
        self.versions_bundles()
            .filter_map(|v| v.get("kubeVersion").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    }
}

/// The images kubeadm pulls for an EKS-D release, as it derives them from the cluster's
/// `imageRepository` fields.
fn distro_images(distro: &KubeDistro) -> Vec<(&'static str, String)> {
    let k = &distro.kubernetes;
    let mut images: Vec<(&'static str, String)> = [
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kube-proxy",
    ]
    .into_iter()
    .map(|name| (name, format!("{}/{name}:{}", k.repository, k.tag)))
    .collect();
    images.push((
        "coredns",
        format!(
            "{}/coredns:{}",
            distro.core_dns.repository, distro.core_dns.tag
        ),
    ));
    images.push(("etcd", distro.etcd_image.clone()));
    images.push((
        "pause",
        format!("{}:{}", distro.pause.repository, distro.pause.tag),
    ));
    images
}

/// Every image a Snow cluster of the selected versions and OS families needs, deduplicated and
/// sorted by URI. `distros` are the EKS-D facts by release name (from
/// [`ReleaseInputs::distros`]); a version whose EKS-D release is not among them contributes its
/// bundle images only.
pub fn image_list(
    bundle: &BundleData,
    distros: &BTreeMap<String, KubeDistro>,
    selection: &Selection,
) -> Result<Vec<ListedImage>, ImagesError> {
    let available = bundle.kube_versions();
    for wanted in &selection.kube_versions {
        if !available.contains(wanted) {
            return Err(ImagesError::NoSuchVersion {
                version: wanted.clone(),
                available: available.clone(),
            });
        }
    }
    let wants_os =
        |os: OsFamily| selection.os_families.is_empty() || selection.os_families.contains(&os);
    let mut images: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for vb in bundle.versions_bundles() {
        let version = vb.get("kubeVersion").and_then(Value::as_str).unwrap_or("");
        if !selection.kube_versions.is_empty()
            && !selection.kube_versions.iter().any(|v| v == version)
        {
            continue;
        }
        let Some(sections) = vb.as_object() else {
            continue;
        };
        let mut found = Vec::new();
        for (key, section) in sections {
            if OTHER_SECTIONS.contains(&key.as_str()) {
                continue;
            }
            let mut path = vec![key.clone()];
            walk(section, &mut path, &mut found);
        }
        for (path, uri) in found {
            if bottlerocket_only(&path) && !wants_os(OsFamily::Bottlerocket) {
                continue;
            }
            images
                .entry(uri)
                .or_default()
                .push(format!("{version} {path}"));
        }
        let release = vb
            .pointer("/eksD/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(distro) = distros.get(release) {
            for (name, uri) in distro_images(distro) {
                images
                    .entry(uri)
                    .or_default()
                    .push(format!("{version} eks-d {name}"));
            }
        }
    }
    Ok(images
        .into_iter()
        .map(|(uri, used_by)| ListedImage { uri, used_by })
        .collect())
}

/// The repository path of an image URI without its registry host: `eks-distro/kubernetes/pause`
/// for `public.ecr.aws/eks-distro/kubernetes/pause:v1`. A first element without `.`, `:` or
/// `localhost` is a Docker Hub path, kept whole (`library/` added for one-element names).
pub fn repository_path(uri: &str) -> (String, Option<String>) {
    let (repo, tag) = split_tag(uri);
    let path = match repo.split_once('/') {
        Some((host, rest)) if host.contains('.') || host.contains(':') || host == "localhost" => {
            rest.to_owned()
        }
        Some(_) => repo.to_owned(),
        None => format!("library/{repo}"),
    };
    (path, tag.map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_paths() {
        assert_eq!(
            repository_path("public.ecr.aws/eks-distro/kubernetes/pause:v1"),
            ("eks-distro/kubernetes/pause".into(), Some("v1".into()))
        );
        assert_eq!(
            repository_path("127.0.0.1:5000/a/b:t"),
            ("a/b".into(), Some("t".into()))
        );
        assert_eq!(repository_path("busybox"), ("library/busybox".into(), None));
        assert_eq!(repository_path("brancz/x:1").0, "brancz/x");
    }
}
