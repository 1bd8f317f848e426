//! Rendered Cilium manifests kept on the management cluster
//! ([`capi_render::stored_cilium`]: one ConfigMap in `eksa-system` per chart, Kubernetes version
//! and values): stored by whoever can render them (the CLI, with helm or a given manifest), read
//! by a controller that cannot ([`load`]: one GET).

use super::{CniManifest, helm::HelmOptions};
use crate::{Event, LifecycleError, Management};
use capi_render::stored_cilium::{NAMESPACE, StoredCilium, StoredCiliumError};
use serde_json::{Value, json};
use snow_api::{
    ValidSpec,
    release::{ClusterRelease, ReleaseInputs},
};
use std::{collections::BTreeMap, path::PathBuf};

/// What a store did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// The ConfigMap was written (created, or replaced because it held something else).
    Written,
    /// The same manifest was already stored: nothing written.
    Unchanged,
}

/// Stores `manifest` (helm's output for `stored`, nothing appended) under its key: a ConfigMap
/// applied server-side, so a second store of the same manifest writes nothing and a store cut
/// short leaves either no ConfigMap or the whole one. The manifest must read as a Cilium
/// manifest ([`CniManifest::parse`]) and fit [`capi_render::stored_cilium::MAX_MANIFEST_BYTES`].
pub async fn store(
    mgmt: &Management,
    stored: &StoredCilium,
    manifest: &str,
) -> Result<Stored, LifecycleError> {
    let refuse = |reason: String| LifecycleError::CiliumStore {
        name: format!("{NAMESPACE}/{}", stored.name()),
        reason,
    };
    CniManifest::parse(manifest).map_err(|e| refuse(e.to_string()))?;
    let object = stored
        .config_map(manifest)
        .map_err(|e| refuse(e.to_string()))?;
    let name = stored.name();
    if let Some(existing) = mgmt.get("v1", "ConfigMap", Some(NAMESPACE), &name).await?
        && same(&existing, &object)
    {
        return Ok(Stored::Unchanged);
    }
    if mgmt
        .get("v1", "Namespace", None, NAMESPACE)
        .await?
        .is_none()
    {
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
        mgmt.apply(&namespace).await?;
    }
    mgmt.apply(&object).await?;
    Ok(Stored::Written)
}

/// The stored object's data, labels and annotations are the ones `object` would write.
fn same(existing: &Value, object: &Value) -> bool {
    let meta = |o: &Value, field: &str| {
        let want = &object["metadata"][field];
        want.as_object()
            .is_some_and(|w| w.iter().all(|(k, v)| &o["metadata"][field][k] == v))
    };
    existing["data"] == object["data"] && meta(existing, "labels") && meta(existing, "annotations")
}

/// What the management cluster holds for a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The manifest stored for it.
    Found(String),
    /// Nothing is stored under its name.
    Missing,
    /// A ConfigMap of its name holds something else (said why).
    Unusable(StoredCiliumError),
}

/// Reads the manifest stored for `stored` (one GET).
pub async fn load(mgmt: &Management, stored: &StoredCilium) -> Result<Lookup, LifecycleError> {
    let Some(object) = mgmt
        .get("v1", "ConfigMap", Some(NAMESPACE), &stored.name())
        .await?
    else {
        return Ok(Lookup::Missing);
    };
    Ok(match stored.manifest(&object) {
        Ok(manifest) => Lookup::Found(manifest.to_owned()),
        Err(e) => Lookup::Unusable(e),
    })
}

/// Where the manifests [`store_all`] stores come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A manifest rendered elsewhere (`--cni-manifest FILE`): for the spec's own settings only.
    Given(String),
    /// `helm template` run as these options say, each chart pulled (through the spec's mirror).
    Helm(HelmOptions),
    /// `helm template` of chart files (by the bundle's `cilium.helmChart` URI, e.g. taken from
    /// an offline archive); a Kubernetes version whose chart is not among them is skipped.
    ChartFiles {
        /// Each chart's `.tgz`.
        charts: BTreeMap<String, PathBuf>,
        /// How helm runs.
        options: HelmOptions,
    },
}

impl Source {
    /// The manifest `manifest` (as read, its objects written back as YAML), given.
    pub fn given(manifest: &CniManifest) -> Source {
        let docs: Vec<String> = (manifest.objects().iter())
            .map(|o| capi_render::yaml::emit(o, 0))
            .collect();
        Source::Given(docs.join("---\n"))
    }
}

/// What [`store_all`] did for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Rendered and stored.
    Written,
    /// Already stored: not rendered again.
    Unchanged,
    /// No chart file for its chart ([`Source::ChartFiles`]).
    NoChart,
    /// Rendering or storing failed (said why); the other keys were stored.
    Failed(String),
}

/// One key of [`store_all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreReport {
    /// The ConfigMap (`eksa-system/cilium-manifest-<key>`).
    pub name: String,
    /// Its Kubernetes version.
    pub kube_version: String,
    /// Whether it holds the spec's own settings (else a version's default settings).
    pub own: bool,
    /// What was done.
    pub outcome: Outcome,
}

/// Stores what a controller with `--cni-stored` needs for `spec` and its siblings: the manifest
/// of the spec's own Cilium settings on its release (`own`: helm's output for it when already
/// rendered, else rendered from `source`), and with `inputs` (unless the source is
/// [`Source::Given`]) the manifest of the default settings of every Kubernetes version of their
/// bundle. A key already
/// stored is not rendered again, and each key is stored on its own: a failure is that key's
/// [`Outcome::Failed`] and the others are still stored, so the next run finishes the job. Only
/// an error of the management cluster stops it. helm runs on a blocking thread.
pub async fn store_all(
    mgmt: &Management,
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    inputs: Option<&ReleaseInputs>,
    own: Option<&str>,
    source: &Source,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<StoreReport>, LifecycleError> {
    let render = LifecycleError::Render;
    let mut wanted = vec![StoredCilium::for_cluster(spec, release).map_err(render)?];
    let inputs = inputs.filter(|_| !matches!(source, Source::Given(_)));
    if let Some(inputs) = inputs {
        for version in inputs.bundles.kube_versions() {
            // A version whose EKS-D release is not among the inputs cannot be rendered for.
            let Ok((bundle, distro)) = inputs.for_version(&version) else {
                on_event(Event::Note(format!(
                    "Kubernetes {version}: no EKS-D release among the inputs; its default Cilium manifest is not stored"
                )));
                continue;
            };
            let defaults = StoredCilium::defaults(bundle, distro).map_err(render)?;
            if wanted.iter().all(|w| w.key() != defaults.key()) {
                wanted.push(defaults);
            }
        }
    }
    let mut reports = Vec::new();
    for (i, stored) in wanted.iter().enumerate() {
        let own_key = i == 0;
        let name = format!("{NAMESPACE}/{}", stored.name());
        let outcome = match load(mgmt, stored).await? {
            Lookup::Found(_) => Outcome::Unchanged,
            _ => {
                let given = match (own_key, own, source) {
                    (true, Some(text), _) => Some(text.to_owned()),
                    (true, None, Source::Given(text)) => Some(text.clone()),
                    _ => None,
                };
                let rendered = match given {
                    Some(text) => Ok(Some(text)),
                    None => render_one(stored, spec, source, own_key, &name, on_event).await,
                };
                match rendered {
                    Ok(Some(text)) => match store(mgmt, stored, &text).await {
                        Ok(_) => {
                            on_event(Event::Applied {
                                object: format!("ConfigMap/{}", stored.name()),
                            });
                            Outcome::Written
                        }
                        Err(e @ LifecycleError::CiliumStore { .. }) => {
                            Outcome::Failed(e.to_string())
                        }
                        Err(e) => return Err(e),
                    },
                    Ok(None) => Outcome::NoChart,
                    Err(why) => {
                        Outcome::Failed(format!("cannot store the Cilium manifest {name}: {why}"))
                    }
                }
            }
        };
        reports.push(StoreReport {
            name,
            kube_version: stored.kube_version.clone(),
            own: own_key,
            outcome,
        });
    }
    Ok(reports)
}

/// helm's output for `stored` (`None`: no chart file for it).
async fn render_one(
    stored: &StoredCilium,
    spec: &ValidSpec,
    source: &Source,
    own: bool,
    name: &str,
    on_event: &mut dyn FnMut(Event),
) -> Result<Option<String>, String> {
    let what = match own {
        true => "the cluster's Cilium settings",
        false => "the default Cilium settings",
    };
    let (template, options) = match source {
        // Only the spec's own key comes from a given manifest (stored by the caller).
        Source::Given(_) => return Ok(None),
        Source::Helm(options) => (stored.helm_template(spec), options.clone()),
        Source::ChartFiles { charts, options } => {
            let Some(file) = charts.get(&stored.chart) else {
                on_event(Event::Note(format!(
                    "no chart file for {} (Kubernetes {}): the manifest of {what} is not stored",
                    stored.chart, stored.kube_version
                )));
                return Ok(None);
            };
            let template = stored.helm_template(spec).with_chart_file(file);
            (template, options.clone())
        }
    };
    on_event(Event::Step(format!(
        "Rendering Cilium for Kubernetes {} ({what}) to store in {name}",
        stored.kube_version
    )));
    super::helm::spawn_render(template, options)
        .await
        .map(Some)
        .map_err(|e| e.to_string())
}
