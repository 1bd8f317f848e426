//! The Cilium manifest a create or an upgrade installs, known before anything is applied.

use crate::{ProvisionError, Request, step};
use capi_render::RenderError;
use snow_lifecycle::{
    CniManifest, Event,
    cni::{
        helm::{self, HelmError, HelmOptions},
        stored,
    },
};

/// Where the Cilium manifest comes from.
#[derive(Debug, Clone)]
pub enum Cni {
    /// Rendered elsewhere and given (`--cni-manifest FILE`).
    Given(CniManifest),
    /// `helm template` of the bundle's chart with EKS Anywhere's values (`helm` on `PATH`, the
    /// mirror login when the spec authenticates), as EKS Anywhere renders it.
    Helm,
    /// `helm template` as [`Cni::Helm`], of the bundle's chart read from this `.tgz` file (taken
    /// from an offline archive: `snowctl create cluster --artifacts`) instead of pulled.
    HelmChartFile(std::path::PathBuf),
}

/// The manifest a create or upgrade installs, and what is stored for a `--cni-stored`
/// controller.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// What is installed (EKS Anywhere's NetworkPolicies appended to helm's output).
    pub manifest: CniManifest,
    /// helm's output, nothing appended (`None` for a given manifest).
    pub helm_output: Option<String>,
    /// Where more manifests come from (the default settings of the bundle's other versions).
    pub source: stored::Source,
}

impl Cni {
    /// The manifest: the given one, or helm's.
    pub async fn manifest(
        self,
        req: &Request<'_>,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<CniManifest, ProvisionError> {
        Ok(self.render(req, on_event).await?.manifest)
    }

    /// [`Cni::manifest`], with helm's output and the source of the other manifests to store.
    /// helm runs on tokio's blocking pool ([`helm::spawn_render`]), not on a runtime worker.
    pub async fn render(
        self,
        req: &Request<'_>,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Rendered, ProvisionError> {
        let options = HelmOptions {
            login: req.registry_credentials.cloned(),
            ..HelmOptions::default()
        };
        let (template, source) = match self {
            Cni::Given(manifest) => {
                return Ok(Rendered {
                    source: stored::Source::given(&manifest),
                    manifest,
                    helm_output: None,
                });
            }
            Cni::Helm => {
                step(on_event, "Rendering Cilium with helm template");
                let template = capi_render::cilium::helm_template(req.spec, req.release)
                    .map_err(HelmError::from)?;
                (template, stored::Source::Helm(options))
            }
            Cni::HelmChartFile(chart) => {
                step(
                    on_event,
                    format!(
                        "Rendering Cilium with helm template from the chart file {}",
                        chart.display()
                    ),
                );
                let template = capi_render::cilium::helm_template(req.spec, req.release)
                    .map_err(HelmError::from)?
                    .with_chart_file(&chart);
                let uri = (req.release.bundle.cilium())
                    .map_err(|e| HelmError::from(RenderError::from(e)))?;
                let charts = [(uri.helm_chart.uri.clone(), chart)].into();
                let options = HelmOptions {
                    login: None,
                    ..options
                };
                (template, stored::Source::ChartFiles { charts, options })
            }
        };
        let append = template.append.clone();
        let bare = capi_render::cilium::HelmTemplate {
            append: None,
            ..template
        };
        let helm_options = match &source {
            stored::Source::Helm(o) | stored::Source::ChartFiles { options: o, .. } => o.clone(),
            stored::Source::Given(_) => HelmOptions::default(),
        };
        let output = helm::spawn_render(bare, helm_options).await?;
        let mut text = output.clone();
        if let Some(extra) = &append {
            capi_render::cilium::append_documents(&mut text, extra);
        }
        Ok(Rendered {
            manifest: CniManifest::parse(&text).map_err(ProvisionError::HelmManifest)?,
            helm_output: Some(output),
            source,
        })
    }
}
