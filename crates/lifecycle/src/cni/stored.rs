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
    /// helm's output for the spec's own settings, rendered elsewhere (`--cni-manifest FILE`):
    /// stored for those settings only.
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

/// What [`store_all`] did for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreReport {
    /// The ConfigMap (`eksa-system/cilium-manifest-<key>`).
    pub name: String,
    /// Its Kubernetes version.
    pub kube_version: String,
    /// Whether it holds the spec's own settings (else a version's default settings).
    pub own: bool,
    /// `Some` when stored or found; `None` when skipped (no chart file for it).
    pub stored: Option<Stored>,
}

/// Stores what a controller with `--cni-stored` needs for `spec` and its siblings: the manifest
/// of the spec's own Cilium settings on its release, and (unless the manifest is
/// [`Source::Given`]) the manifest of the default settings of every Kubernetes version of the
/// bundle. A key already stored is not rendered again; each key is stored on its own, so a run
/// cut short is finished by the next. helm runs on a blocking thread.
pub async fn store_all(
    mgmt: &Management,
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    inputs: &ReleaseInputs,
    source: &Source,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<StoreReport>, LifecycleError> {
    let render = |e: capi_render::RenderError| LifecycleError::Render(e.to_string());
    let own = StoredCilium::for_cluster(spec, release).map_err(render)?;
    let mut wanted = vec![(own, true)];
    if !matches!(source, Source::Given(_)) {
        for version in inputs.bundles.kube_versions() {
            // A version whose EKS-D release is not among the inputs cannot be rendered for.
            let Ok((bundle, distro)) = inputs.for_version(&version) else {
                on_event(Event::Note(format!(
                    "Kubernetes {version}: no EKS-D release among the inputs; its default Cilium manifest is not stored"
                )));
                continue;
            };
            let defaults = StoredCilium::defaults(bundle, distro).map_err(render)?;
            if wanted.iter().all(|(w, _)| w.key() != defaults.key()) {
                wanted.push((defaults, false));
            }
        }
    }
    let mut reports = Vec::new();
    for (stored, own) in wanted {
        let mut report = StoreReport {
            name: format!("{NAMESPACE}/{}", stored.name()),
            kube_version: stored.kube_version.clone(),
            own,
            stored: None,
        };
        if let Lookup::Found(_) = load(mgmt, &stored).await? {
            report.stored = Some(Stored::Unchanged);
            reports.push(report);
            continue;
        }
        let what = match own {
            true => "the cluster's Cilium settings",
            false => "the default Cilium settings",
        };
        let refuse = |reason: String| LifecycleError::CiliumStore {
            name: report.name.clone(),
            reason,
        };
        let (mut template, options) = match source {
            Source::Given(manifest) => {
                report.stored = Some(store(mgmt, &stored, manifest).await?);
                reports.push(report);
                continue;
            }
            Source::Helm(options) => (stored.helm_template(spec), options.clone()),
            Source::ChartFiles { charts, options } => {
                let Some(file) = charts.get(&stored.chart) else {
                    on_event(Event::Note(format!(
                        "no chart file for {} (Kubernetes {}): the manifest of {what} for it is not stored",
                        stored.chart, stored.kube_version
                    )));
                    reports.push(report);
                    continue;
                };
                let template = stored.helm_template(spec).with_chart_file(file);
                (template, options.clone())
            }
        };
        on_event(Event::Step(format!(
            "Rendering Cilium for Kubernetes {} ({what}) to store in {}",
            stored.kube_version, report.name
        )));
        template.append = None;
        let text =
            tokio::task::spawn_blocking(move || super::helm::render_template(&template, &options))
                .await
                .map_err(|e| refuse(e.to_string()))?
                .map_err(|e| refuse(e.to_string()))?;
        report.stored = Some(store(mgmt, &stored, &text).await?);
        on_event(Event::Applied {
            object: format!("ConfigMap/{}", stored.name()),
        });
        reports.push(report);
    }
    Ok(reports)
}
