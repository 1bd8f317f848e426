//! Rendered Cilium manifests kept on the management cluster, for a controller that cannot run
//! `helm` (in its Deployment nothing is on `PATH` and nothing can be downloaded).
//!
//! Cilium's manifest depends only on what `helm template` is given: the chart (the bundle's
//! `cilium.helmChart`), `--kube-version`, and the values ([`crate::cilium::values`]: the
//! cluster's Cilium settings and the bundle's images). A [`StoredCilium`] names that triple by a
//! digest, the key: wherever helm (or a given manifest) is at hand, the CLI renders and stores
//! the manifest under its key, one ConfigMap per key in [`NAMESPACE`]; the controller computes
//! the same key from a declared cluster and reads that one ConfigMap. The chart's registry (a
//! mirror serves the same chart), the mirror login and the proxy change how the chart is pulled,
//! not what it renders, so they are not part of the key. Nor are the NetworkPolicies EKS
//! Anywhere appends ([`crate::cilium::network_policies`]): they depend on the cluster's name and
//! role, and whoever installs the manifest appends them.
//!
//! The manifest is stored as text (`data.manifest.yaml`), readable with `kubectl get configmap`.
//! A ConfigMap holds at most 1 MiB (1,048,576 bytes of data); [`MAX_MANIFEST_BYTES`] leaves room
//! for the values and the metadata. A Cilium 1.17 or 1.19 render with EKS Anywhere's values is
//! tens of kilobytes (the one EKS Anywhere keeps, `pkg/networking/cilium/testdata`, is 23 KB),
//! so the bound is not approached; a larger manifest is refused when stored, never cut.

use crate::RenderError;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use snow_api::{
    ValidSpec,
    release::{ClusterRelease, KubeDistro, VersionsBundle},
};

/// Where the manifests are kept (EKS Anywhere's namespace for its own objects).
pub const NAMESPACE: &str = snow_api::names::SYSTEM_NAMESPACE;
/// The label every stored manifest carries (`kubectl get cm -n eksa-system -l <label>`).
pub const LABEL: &str = "snowctl.anywhere.eks.amazonaws.com/cilium-manifest";
/// The annotation holding the full key, checked when read.
pub const KEY_ANNOTATION: &str = "snowctl.anywhere.eks.amazonaws.com/cilium-key";
/// The ConfigMap key of the manifest.
pub const MANIFEST_KEY: &str = "manifest.yaml";
/// The ConfigMap key of the values it was rendered with (for people reading it).
pub const VALUES_KEY: &str = "values.yaml";
/// The largest manifest stored: 1,000,000 bytes, under the 1 MiB a ConfigMap holds, so the
/// values and metadata fit beside it.
pub const MAX_MANIFEST_BYTES: usize = 1_000_000;
/// The prefix of a stored manifest's ConfigMap name; the key follows.
const NAME_PREFIX: &str = "cilium-manifest-";

/// What a Cilium render depends on, and its key.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCilium {
    /// The bundle's chart URI with its tag (`public.ecr.aws/eks/cilium/cilium:1.19.4-1`).
    pub chart: String,
    /// `--kube-version` (`1.30`).
    pub kube_version: String,
    /// The Helm values.
    pub values: Map<String, Value>,
    key: String,
}

/// Why a stored manifest cannot be used or stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoredCiliumError {
    /// Larger than a ConfigMap holds.
    #[error(
        "the Cilium manifest for {chart} (Kubernetes {kube_version}) is {bytes} bytes, more than the {max} bytes a stored manifest may have (a ConfigMap holds 1 MiB)"
    )]
    TooLarge {
        /// The chart.
        chart: String,
        /// The Kubernetes version.
        kube_version: String,
        /// Its size.
        bytes: usize,
        /// [`MAX_MANIFEST_BYTES`].
        max: usize,
    },
    /// The ConfigMap under this key's name is not a manifest stored for this key.
    #[error(
        "ConfigMap {NAMESPACE}/{name} does not hold the Cilium manifest of key {key}: {reason}"
    )]
    NotThisKey {
        /// The ConfigMap.
        name: String,
        /// The key looked for.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

impl StoredCilium {
    /// What `chart`, `kube_version` and `values` render, keyed.
    pub fn new(chart: String, kube_version: String, values: Map<String, Value>) -> StoredCilium {
        let mut hash = Sha256::new();
        // A version line, so a change of what the key covers changes every key.
        for part in ["snowctl cilium manifest v1", &chart, &kube_version] {
            hash.update(part.as_bytes());
            hash.update(b"\n");
        }
        hash.update(canonical(&Value::Object(values.clone())).as_bytes());
        let key = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        StoredCilium {
            chart,
            kube_version,
            values,
            key,
        }
    }

    /// The manifest of this cluster's Cilium settings on its release.
    pub fn for_cluster(
        spec: &ValidSpec,
        release: &ClusterRelease<'_>,
    ) -> Result<StoredCilium, RenderError> {
        Ok(StoredCilium::new(
            release.bundle.cilium()?.helm_chart.uri.clone(),
            crate::cilium::kube_version(release.distro)?,
            crate::cilium::values(spec, release)?,
        ))
    }

    /// The manifest of the default Cilium settings (no `cniConfig.cilium` field set) of a
    /// Kubernetes version of the bundle, for a cluster with workers (as every Snow cluster has).
    pub fn defaults(
        bundle: &VersionsBundle,
        distro: &KubeDistro,
    ) -> Result<StoredCilium, RenderError> {
        let cilium = bundle.cilium()?;
        Ok(StoredCilium::new(
            cilium.helm_chart.uri.clone(),
            crate::cilium::kube_version(distro)?,
            crate::cilium::values_of(snow_api::cni::Cilium::default(), false, cilium),
        ))
    }

    /// The key: the SHA-256 (hex) of the chart, the Kubernetes version and the canonical values
    /// (keys sorted, no spaces).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The ConfigMap's name: `cilium-manifest-<key>`.
    pub fn name(&self) -> String {
        format!("{NAME_PREFIX}{}", self.key)
    }

    /// The `helm template` invocation rendering it, pulled as `spec` says (its mirror, login and
    /// proxy; any spec of the site will do): nothing appended.
    pub fn helm_template(&self, spec: &ValidSpec) -> crate::cilium::HelmTemplate {
        let chart = snow_api::release::Image {
            uri: self.chart.clone(),
            ..Default::default()
        };
        crate::cilium::invocation(spec, &chart, self.kube_version.clone(), self.values.clone())
    }

    /// The ConfigMap holding `manifest` (helm's output, nothing appended).
    pub fn config_map(&self, manifest: &str) -> Result<Value, StoredCiliumError> {
        if manifest.len() > MAX_MANIFEST_BYTES {
            return Err(StoredCiliumError::TooLarge {
                chart: self.chart.clone(),
                kube_version: self.kube_version.clone(),
                bytes: manifest.len(),
                max: MAX_MANIFEST_BYTES,
            });
        }
        Ok(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.name(),
                "namespace": NAMESPACE,
                "labels": {LABEL: "true"},
                "annotations": {
                    KEY_ANNOTATION: self.key,
                    "snowctl.anywhere.eks.amazonaws.com/cilium-chart": self.chart,
                    "snowctl.anywhere.eks.amazonaws.com/kube-version": self.kube_version,
                },
            },
            "data": {
                MANIFEST_KEY: manifest,
                VALUES_KEY: crate::yaml::emit(&Value::Object(self.values.clone()), 0),
            },
        }))
    }

    /// The manifest a ConfigMap read under [`StoredCilium::name`] holds, once its key annotation
    /// is this key.
    pub fn manifest<'a>(&self, config_map: &'a Value) -> Result<&'a str, StoredCiliumError> {
        let wrong = |reason: &str| StoredCiliumError::NotThisKey {
            name: self.name(),
            key: self.key.clone(),
            reason: reason.to_owned(),
        };
        if config_map["metadata"]["annotations"][KEY_ANNOTATION] != self.key.as_str() {
            return Err(wrong(&format!("its annotation {KEY_ANNOTATION} differs")));
        }
        config_map["data"][MANIFEST_KEY]
            .as_str()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| wrong(&format!("it has no data.{MANIFEST_KEY}")))
    }
}

/// JSON with every object's keys sorted and no whitespace: the same values give the same text
/// whatever order they were built in.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use snow_api::{
        release::ReleaseInputs,
        template::{TemplateOptions, cluster_config},
    };

    fn spec(extra: &str) -> ValidSpec {
        let text = cluster_config(&TemplateOptions {
            name: "edge".into(),
            devices: vec!["192.168.1.11".into()],
            endpoint: Some("192.168.1.100".into()),
            kubernetes_version: Some("1.33".into()),
            ..TemplateOptions::default()
        })
        .unwrap();
        let from = "    cniConfig:\n      cilium: {}\n";
        assert!(text.contains(from));
        let text = text.replace(from, extra);
        snow_api::check(&text).unwrap().into_valid().unwrap()
    }

    #[test]
    fn the_key_follows_the_values_and_not_their_order_or_the_mirror() {
        let inputs = ReleaseInputs::embedded().unwrap();
        let plain = spec("    cniConfig:\n      cilium: {}\n");
        let release = inputs.resolve(&plain, None).unwrap();
        let of_spec = StoredCilium::for_cluster(&plain, &release).unwrap();
        let (bundle, distro) = inputs.for_version("1.33").unwrap();
        // A cluster without Cilium settings has the defaults' key.
        assert_eq!(
            of_spec.key(),
            StoredCilium::defaults(bundle, distro).unwrap().key()
        );
        assert_eq!(of_spec.key().len(), 64);
        assert_eq!(of_spec.kube_version, "1.33");
        let always = spec("    cniConfig:\n      cilium:\n        policyEnforcementMode: always\n");
        let other = StoredCilium::for_cluster(&always, &inputs.resolve(&always, None).unwrap());
        assert_ne!(other.unwrap().key(), of_spec.key());
        // The same values built in another order: the same key.
        let mut reversed = Map::new();
        for (k, v) in of_spec.values.iter().rev() {
            reversed.insert(k.clone(), v.clone());
        }
        let again = StoredCilium::new(of_spec.chart.clone(), "1.33".into(), reversed);
        assert_eq!(again.key(), of_spec.key());
        let older = StoredCilium::new(of_spec.chart.clone(), "1.32".into(), of_spec.values.clone());
        assert_ne!(older.key(), of_spec.key());
    }

    #[test]
    fn the_config_map_is_bounded_and_read_back_only_under_its_key() {
        let stored = StoredCilium::new("r/cilium:1.0".into(), "1.30".into(), Map::new());
        let cm = stored.config_map("kind: X\n").unwrap();
        assert_eq!(cm["metadata"]["name"], stored.name());
        assert!(stored.name().len() <= 253);
        assert_eq!(stored.manifest(&cm).unwrap(), "kind: X\n");
        let other = StoredCilium::new("r/cilium:1.1".into(), "1.30".into(), Map::new());
        let err = other.manifest(&cm).unwrap_err();
        assert!(err.to_string().contains("annotation"), "{err}");
        let big = "x".repeat(MAX_MANIFEST_BYTES + 1);
        let err = stored.config_map(&big).unwrap_err();
        assert!(
            matches!(err, StoredCiliumError::TooLarge { bytes, .. } if bytes == MAX_MANIFEST_BYTES + 1)
        );
        assert!(stored.config_map(&big[1..]).is_ok());
    }
}
