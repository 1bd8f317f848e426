//! The Cilium manifest a create or an upgrade installs, known before anything is applied.

use crate::{ProvisionError, Request, step};
use snow_lifecycle::{
    CniManifest, Event,
    cni::{
        self, CniSource,
        helm::{self, HelmError, HelmOptions},
        stored,
    },
};

/// The manifest a create or upgrade installs, and what is stored for a `--cni-stored`
/// controller.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    /// What is installed (EKS Anywhere's NetworkPolicies appended to helm's output).
    pub(crate) manifest: CniManifest,
    /// helm's output, nothing appended (`None` for a given manifest).
    pub(crate) helm_output: Option<String>,
    /// Where more manifests come from (the default settings of the bundle's other versions).
    pub(crate) source: stored::Source,
}

/// The manifest of `source` for a create or an upgrade: [`CniSource::Manifest`] as given, else
/// helm's output with EKS Anywhere's NetworkPolicies appended, with the source of the other
/// manifests to store. helm runs on tokio's blocking pool ([`helm::spawn_render`]), not on a
/// runtime worker; [`CniSource::Helm`] gets the request's mirror login unless its options hold
/// one. [`CniSource::Stored`] is [`ProvisionError::CniStored`]: a create or an upgrade is what
/// stores the manifests.
pub(crate) async fn render(
    source: CniSource,
    req: &Request<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Rendered, ProvisionError> {
    {
        let (template, source) = match source {
            CniSource::Manifest(manifest) => {
                return Ok(Rendered {
                    source: stored::Source::given(&manifest),
                    manifest,
                    helm_output: None,
                });
            }
            CniSource::Stored => return Err(ProvisionError::CniStored),
            CniSource::Helm(mut options) => {
                if options.login.is_none() {
                    options.login = req.registry_credentials.cloned();
                }
                step(on_event, "Rendering Cilium with helm template");
                let template = capi_render::cilium::helm_template(req.spec, req.release)
                    .map_err(HelmError::from)?;
                (template, stored::Source::Helm(options))
            }
            CniSource::HelmChartFiles {
                charts,
                from,
                options,
            } => {
                let chart = cni::chart_file(&charts, &from, req.release.bundle)?.clone();
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
