//! The cluster's pod network (Cilium), installed on the workload cluster as EKS Anywhere does.
//!
//! Cluster API installs no CNI: until one runs, every Node stays NotReady, so no control-plane or
//! worker machine counts as ready. EKS Anywhere installs Cilium once the control plane answers and
//! before it waits for the machines; snowctl does the same with a rendered Cilium manifest
//! ([`CniManifest`]): after the control plane is *initialized*, the manifest is applied
//! server-side on the workload cluster (client from the `<cluster>-kubeconfig` Secret), then the
//! `cilium` DaemonSet and the `cilium-operator` Deployment are waited for ([`install`]).
//!
//! Upgrades follow EKS Anywhere's rule: the manifest is applied again when an image of the
//! installed DaemonSet (any container or init container) differs from the manifest's agent
//! image, or the operator Deployment's first container from the manifest's operator image;
//! unless `clusterNetwork.cniConfig.cilium.skipUpgrade` is true. A first install ignores
//! `skipUpgrade`. The manifest is rendered by [`helm`] (`helm template` with EKS Anywhere's
//! values) or given pre-rendered, or read from the management cluster where the CLI stored it
//! ([`stored`]).

pub mod helm;
pub(crate) mod install;
pub mod stored;

pub use install::{CniState, cni_state};

use serde_json::{Value, json};
use std::{collections::BTreeMap, path::PathBuf};

/// Where a cluster's Cilium manifest comes from: for a create or upgrade (`snow-provision`) and
/// for the controller's reconciles (`snow-controller`) alike.
#[derive(Debug, Clone)]
pub enum CniSource {
    /// One manifest rendered elsewhere (`--cni-manifest FILE`).
    Manifest(CniManifest),
    /// `helm template` of the bundle's chart with EKS Anywhere's values, pulled (through the
    /// spec's mirror, with its login when it authenticates), run with these options.
    Helm(helm::HelmOptions),
    /// `helm template` as [`CniSource::Helm`], of the bundle's chart read from a `.tgz` file
    /// instead of pulled (`--artifacts`: the charts taken out of the offline archive, e.g. by
    /// `snow_images::charts`). No registry is read and no mirror login runs; a bundle whose chart
    /// is not among them is [`helm::HelmError::ChartNotTaken`], naming the chart and `from`.
    HelmChartFiles {
        /// Each chart's file, by the bundle's `cilium.helmChart` URI.
        charts: BTreeMap<String, PathBuf>,
        /// Where the charts came from (the archive), for what is said about a missing one.
        from: String,
        /// How helm runs.
        options: helm::HelmOptions,
    },
    /// The manifest stored on the management cluster for the cluster's chart, Kubernetes version
    /// and Cilium values ([`stored`]; `snowctl controller --cni-stored`), with EKS Anywhere's
    /// NetworkPolicies appended as helm's output gets them: no helm and no network. For a
    /// controller only: a create or upgrade is what stores it.
    Stored,
}

impl CniSource {
    /// `helm` on `PATH`, tried once: for a controller, a failed render becomes the cluster's
    /// status and is tried again at the next requeue, instead of holding a worker through EKS
    /// Anywhere's ten tries 5 s apart.
    pub fn helm_on_path() -> CniSource {
        CniSource::Helm(helm::HelmOptions {
            attempts: 1,
            ..Default::default()
        })
    }

    /// [`CniSource::HelmChartFiles`] with `helm` on `PATH`, tried once as
    /// [`CniSource::helm_on_path`].
    pub fn chart_files_on_path(charts: BTreeMap<String, PathBuf>, from: String) -> CniSource {
        CniSource::HelmChartFiles {
            charts,
            from,
            options: helm::HelmOptions {
                attempts: 1,
                ..Default::default()
            },
        }
    }
}

impl CniSource {
    /// With `login` (the spec's registry mirror login) for a [`CniSource::Helm`] whose options
    /// hold none: a pulled chart goes through the mirror. Chart files and manifests need none.
    pub fn with_login(self, login: Option<&snow_credentials::RegistryCredentials>) -> CniSource {
        match self {
            CniSource::Helm(mut options) => {
                if options.login.is_none() {
                    options.login = login.cloned();
                }
                CniSource::Helm(options)
            }
            other => other,
        }
    }

    /// Where the other manifests a create stores for a controller come from
    /// ([`stored::store_all`]): `None` for [`CniSource::Stored`], which stores nothing.
    pub fn stored_source(&self) -> Option<stored::Source> {
        Some(match self {
            CniSource::Manifest(manifest) => stored::Source::given(manifest),
            CniSource::Helm(options) => stored::Source::Helm(options.clone()),
            CniSource::HelmChartFiles {
                charts, options, ..
            } => stored::Source::ChartFiles {
                charts: charts.clone(),
                options: helm::HelmOptions {
                    login: None,
                    ..options.clone()
                },
            },
            CniSource::Stored => return None,
        })
    }

    /// The one resolution of a cluster's Cilium manifest, for `snow-provision` and
    /// `snow-controller` alike: the manifest given, the stored one (read by the caller from the
    /// management cluster), or the `helm template` to run for `spec` on `release`, of the
    /// bundle's chart pulled or read from its chart file (a bundle whose chart is not among the
    /// files is [`helm::HelmError::ChartNotTaken`]).
    pub fn plan(
        &self,
        spec: &snow_api::ValidSpec,
        release: &snow_api::release::ClusterRelease<'_>,
    ) -> Result<CniPlan, helm::HelmError> {
        let (options, chart_file) = match self {
            CniSource::Manifest(manifest) => return Ok(CniPlan::Manifest(manifest.clone())),
            CniSource::Stored => return Ok(CniPlan::Stored),
            CniSource::Helm(options) => (options.clone(), None),
            CniSource::HelmChartFiles {
                charts,
                from,
                options,
            } => {
                let file = chart_file(charts, from, release.bundle)?.clone();
                // No registry is read: no mirror login runs.
                let options = helm::HelmOptions {
                    login: None,
                    ..options.clone()
                };
                (options, Some(file))
            }
        };
        let mut template = capi_render::cilium::helm_template(spec, release)?;
        if let Some(file) = &chart_file {
            template = template.with_chart_file(file);
        }
        Ok(CniPlan::Helm(Box::new(HelmRun {
            template,
            options,
            chart_file,
        })))
    }
}

/// What [`CniSource::plan`] resolved for one cluster.
#[derive(Debug, Clone)]
pub enum CniPlan {
    /// The manifest given.
    Manifest(CniManifest),
    /// The manifest stored on the management cluster for the cluster's key ([`stored::load`]).
    Stored,
    /// `helm template` to run.
    Helm(Box<HelmRun>),
}

/// One `helm template` of a cluster's Cilium chart, ready to run.
#[derive(Debug, Clone)]
pub struct HelmRun {
    /// The invocation (its `append`: EKS Anywhere's NetworkPolicies, added to helm's output).
    pub template: capi_render::cilium::HelmTemplate,
    /// How helm runs (its login is the mirror's when the template logs in).
    pub options: helm::HelmOptions,
    /// The chart file read instead of pulling the chart, when there is one.
    pub chart_file: Option<PathBuf>,
}

/// What a [`HelmRun`] rendered.
#[derive(Debug, Clone)]
pub struct HelmRendered {
    /// The manifest installed: helm's output with the NetworkPolicies appended.
    pub manifest: CniManifest,
    /// helm's output, nothing appended (what is stored for a controller).
    pub output: String,
}

/// Why a [`HelmRun`] gave no manifest.
#[derive(Debug, thiserror::Error)]
pub enum HelmRunError {
    /// helm failed.
    #[error(transparent)]
    Helm(#[from] helm::HelmError),
    /// What helm printed is not a Cilium manifest.
    #[error("{0}")]
    Manifest(CniManifestError),
}

impl HelmRun {
    /// The registry the template logs in to when no login is held yet: the caller finds the
    /// mirror's login (a controller reads it from the management cluster) before [`Self::render`].
    pub fn login_wanted(&self) -> Option<&str> {
        self.template
            .login
            .as_deref()
            .filter(|_| self.options.login.is_none())
    }

    /// What a progress line says of this run.
    pub fn step(&self) -> String {
        match &self.chart_file {
            None => "Rendering Cilium with helm template".to_owned(),
            Some(file) => format!(
                "Rendering Cilium with helm template from the chart file {}",
                file.display()
            ),
        }
    }

    /// Runs helm on tokio's blocking pool ([`helm::spawn_render`]) and reads its output, the
    /// NetworkPolicies appended, as a Cilium manifest.
    pub async fn render(self) -> Result<HelmRendered, HelmRunError> {
        let append = self.template.append.clone();
        let bare = capi_render::cilium::HelmTemplate {
            append: None,
            ..self.template
        };
        let output = helm::spawn_render(bare, self.options).await?;
        let mut text = output.clone();
        if let Some(extra) = &append {
            capi_render::cilium::append_documents(&mut text, extra);
        }
        let manifest = CniManifest::parse(&text).map_err(HelmRunError::Manifest)?;
        Ok(HelmRendered { manifest, output })
    }
}

/// The file of `bundle`'s Cilium chart among `charts` (taken from `from`).
pub fn chart_file<'a>(
    charts: &'a BTreeMap<String, PathBuf>,
    from: &str,
    bundle: &snow_api::release::VersionsBundle,
) -> Result<&'a PathBuf, helm::HelmError> {
    let cilium = bundle
        .cilium()
        .map_err(|e| helm::HelmError::from(capi_render::RenderError::from(e)))?;
    let uri = &cilium.helm_chart.uri;
    charts
        .get(uri)
        .ok_or_else(|| helm::HelmError::ChartNotTaken {
            chart: uri.clone(),
            kubernetes: bundle.kube_version.clone(),
            from: from.to_owned(),
        })
}

/// The Cilium agent's DaemonSet, in `kube-system`.
pub const AGENT_DAEMONSET: &str = "cilium";
/// The Cilium operator's Deployment, in `kube-system`.
pub const OPERATOR_DEPLOYMENT: &str = "cilium-operator";
/// Where Cilium runs.
pub const CNI_NAMESPACE: &str = "kube-system";

/// Why a Cilium manifest cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CniManifestError {
    /// A document is not YAML, or not a Kubernetes object.
    #[error("document {index} (line {line}){}: {reason}", .object.as_ref().map(|o| format!(", {o}")).unwrap_or_default())]
    Document {
        /// 1-based position of the document in the file.
        index: usize,
        /// The line it starts on (1-based).
        line: usize,
        /// `Kind/name` when it could be read that far.
        object: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// An object snowctl waits for is not in the manifest.
    #[error("the manifest has no {0}")]
    Missing(String),
}

/// A rendered Cilium manifest: its objects in file order, with the images of the agent
/// DaemonSet and of the operator Deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct CniManifest {
    objects: Vec<Value>,
    agent_image: String,
    operator_image: String,
}

/// The documents of a multi-document YAML text, with the line each starts on.
fn documents(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (i, line) in text.lines().enumerate() {
        let marker = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if marker {
            docs.push((start, std::mem::take(&mut current)));
            start = i + 2;
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    docs.push((start, current));
    docs
}

/// The images of a pod template's containers (and init containers when `init`).
fn images(template: &Value, init: bool) -> Vec<String> {
    let spec = &template["spec"];
    let mut lists = vec![&spec["containers"]];
    if init {
        lists.push(&spec["initContainers"]);
    }
    lists
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|c| c["image"].as_str().map(str::to_owned))
        .collect()
}

impl CniManifest {
    /// Reads a multi-document manifest (as `helm template` prints it). Every document must be
    /// an object with `apiVersion`, `kind` and `metadata.name`; empty documents are skipped; a
    /// namespaced object without a namespace goes to `kube-system` (helm's `--namespace`). The
    /// DaemonSet `kube-system/cilium` and the Deployment `kube-system/cilium-operator` must be
    /// there, each with a container image.
    pub fn parse(text: &str) -> Result<CniManifest, CniManifestError> {
        let mut objects = Vec::new();
        for (i, (line, doc)) in documents(text).into_iter().enumerate() {
            let index = i + 1;
            let bad = |object: Option<String>, reason: String| CniManifestError::Document {
                index,
                line,
                object,
                reason,
            };
            let meaningful = doc
                .lines()
                .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
            if !meaningful {
                continue;
            }
            let mut value: Value = serde_saphyr::from_str(&doc)
                .map_err(|e| bad(None, format!("not valid YAML: {e}")))?;
            if value.is_null() {
                continue;
            }
            if !value.is_object() {
                return Err(bad(None, "not a Kubernetes object (a mapping)".into()));
            }
            let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
            let kind = text(&value["kind"]);
            let name = text(&value["metadata"]["name"]);
            let shown = format!(
                "{}/{}",
                kind.as_deref().unwrap_or("?"),
                name.as_deref().unwrap_or("?")
            );
            for (field, present) in [
                ("apiVersion", text(&value["apiVersion"]).is_some()),
                ("kind", kind.is_some()),
                ("metadata.name", name.is_some()),
            ] {
                if !present {
                    return Err(bad(Some(shown), format!("{field} is missing")));
                }
            }
            let kind = kind.unwrap_or_default();
            if value["metadata"]["namespace"].is_null()
                && !crate::init::components::cluster_scoped(&kind)
            {
                value["metadata"]["namespace"] = json!(CNI_NAMESPACE);
            }
            objects.push(value);
        }
        let find = |kind: &str, name: &str| {
            objects.iter().find(|o| {
                o["kind"] == kind
                    && o["metadata"]["name"] == name
                    && o["metadata"]["namespace"] == CNI_NAMESPACE
            })
        };
        let agent = find("DaemonSet", AGENT_DAEMONSET).ok_or_else(|| {
            CniManifestError::Missing(format!("DaemonSet {CNI_NAMESPACE}/{AGENT_DAEMONSET}"))
        })?;
        let agent_image = images(&agent["spec"]["template"], false)
            .into_iter()
            .next()
            .ok_or_else(|| {
                CniManifestError::Missing(format!(
                    "container image in DaemonSet {CNI_NAMESPACE}/{AGENT_DAEMONSET}"
                ))
            })?;
        let operator = find("Deployment", OPERATOR_DEPLOYMENT).ok_or_else(|| {
            CniManifestError::Missing(format!("Deployment {CNI_NAMESPACE}/{OPERATOR_DEPLOYMENT}"))
        })?;
        let operator_image = images(&operator["spec"]["template"], false)
            .into_iter()
            .next()
            .ok_or_else(|| {
                CniManifestError::Missing(format!(
                    "container image in Deployment {CNI_NAMESPACE}/{OPERATOR_DEPLOYMENT}"
                ))
            })?;
        Ok(CniManifest {
            objects,
            agent_image,
            operator_image,
        })
    }

    /// The objects, in file order.
    pub fn objects(&self) -> &[Value] {
        &self.objects
    }

    /// The image of the agent DaemonSet's first container.
    pub fn agent_image(&self) -> &str {
        &self.agent_image
    }

    /// The image of the operator Deployment's first container.
    pub fn operator_image(&self) -> &str {
        &self.operator_image
    }
}

/// What EKS Anywhere compares on upgrade: every image of the installed agent DaemonSet (its
/// containers and init containers) and the operator Deployment's first container.
pub(crate) fn installed_images(
    daemonset: &Value,
    operator: &Value,
) -> (Vec<String>, Option<String>) {
    (
        images(&daemonset["spec"]["template"], true),
        images(&operator["spec"]["template"], false)
            .into_iter()
            .next(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trimmed copy of EKS Anywhere's `pkg/networking/cilium/testdata/cilium_manifest.yaml`.
    const MANIFEST: &str = include_str!("../../tests/fixtures/cilium.yaml");

    #[test]
    fn the_fixture_reads_with_its_images() {
        let m = CniManifest::parse(MANIFEST).unwrap();
        assert_eq!(
            m.agent_image(),
            "public.ecr.aws/eks/cilium/cilium:v1.17.8-0"
        );
        assert_eq!(
            m.operator_image(),
            "public.ecr.aws/eks/cilium/operator-generic:v1.17.8-0"
        );
        let kinds: Vec<&str> = m
            .objects()
            .iter()
            .filter_map(|o| o["kind"].as_str())
            .collect();
        assert!(
            kinds.contains(&"ConfigMap") && kinds.contains(&"ClusterRole"),
            "{kinds:?}"
        );
        assert!(
            m.objects()
                .iter()
                .filter(|o| o["kind"] != "ClusterRole" && o["kind"] != "ClusterRoleBinding")
                .all(|o| o["metadata"]["namespace"] == "kube-system")
        );
    }

    #[test]
    fn a_bad_document_is_named_with_its_line() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n";
        let err = CniManifest::parse(text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "document 2 (line 6), ConfigMap/?: metadata.name is missing"
        );
        let err = CniManifest::parse("---\n# only a comment\n---\nkind: [\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("document 3 (line 4): not valid YAML"),
            "{err}"
        );
        let err = CniManifest::parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the manifest has no DaemonSet kube-system/cilium"
        );
    }

    #[test]
    fn each_source_plans_as_provision_and_the_controller_use_it() {
        use snow_api::template::{TemplateOptions, cluster_config};
        let text = cluster_config(&TemplateOptions {
            name: "edge".into(),
            devices: vec!["192.168.1.11".into()],
            endpoint: Some("192.168.1.100".into()),
            kubernetes_version: Some("1.33".into()),
            ..Default::default()
        })
        .unwrap();
        let spec = snow_api::check(&text).unwrap().into_valid().unwrap();
        let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
        let release = inputs.resolve(&spec, None).unwrap();
        let uri = release.bundle.cilium().unwrap().helm_chart.uri.clone();
        let manifest = CniManifest::parse(MANIFEST).unwrap();
        assert!(matches!(
            CniSource::Manifest(manifest.clone()).plan(&spec, &release),
            Ok(CniPlan::Manifest(m)) if m == manifest
        ));
        assert!(matches!(
            CniSource::Stored.plan(&spec, &release),
            Ok(CniPlan::Stored)
        ));
        assert!(CniSource::Stored.stored_source().is_none());
        // Pulled: the chart's oci:// reference, no chart file.
        let Ok(CniPlan::Helm(run)) = CniSource::helm_on_path().plan(&spec, &release) else {
            panic!("helm")
        };
        assert!(run.chart_file.is_none());
        assert!(
            run.template.chart.starts_with("oci://"),
            "{}",
            run.template.chart
        );
        assert_eq!(run.options.attempts, 1);
        assert_eq!(run.step(), "Rendering Cilium with helm template");
        // From chart files: this cluster's file, no login; a chart not among them is named.
        let file = PathBuf::from("/charts/0/cilium.tgz");
        let source =
            CniSource::chart_files_on_path([(uri.clone(), file.clone())].into(), "site.tar".into());
        let Ok(CniPlan::Helm(run)) = source.plan(&spec, &release) else {
            panic!("chart files")
        };
        assert_eq!(run.chart_file.as_ref(), Some(&file));
        assert_eq!(run.template.chart, file.display().to_string());
        assert!(run.login_wanted().is_none() && run.options.login.is_none());
        assert!(matches!(
            source.stored_source(),
            Some(stored::Source::ChartFiles { charts, .. }) if charts.contains_key(&uri)
        ));
        let none = CniSource::chart_files_on_path(BTreeMap::new(), "site.tar".into());
        assert!(matches!(
            none.plan(&spec, &release),
            Err(helm::HelmError::ChartNotTaken { .. })
        ));
    }

    #[test]
    fn a_bundles_chart_file_is_found_by_its_uri_and_a_missing_one_named() {
        let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
        let bundle = inputs.bundles.versions_bundle("1.33").unwrap();
        let uri = bundle.cilium().unwrap().helm_chart.uri.clone();
        let file = std::path::PathBuf::from("/charts/0/cilium.tgz");
        let charts = [(uri.clone(), file.clone())].into();
        assert_eq!(
            super::chart_file(&charts, "site.tar", bundle).unwrap(),
            &file
        );
        let err = super::chart_file(&Default::default(), "site.tar", bundle).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the Helm chart {uri} (Kubernetes 1.33) is not among the Cilium charts taken from site.tar: give the controller an archive downloaded for this Kubernetes version"
            )
        );
    }
}
