//! The Cilium manifest a create or an upgrade installs, known before anything is applied.

use crate::{ProvisionError, Request, step};
use snow_lifecycle::{
    CniManifest, Event,
    cni::helm::{self, HelmOptions},
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

impl Cni {
    /// The manifest: the given one, or helm's.
    pub fn manifest(
        self,
        req: &Request<'_>,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<CniManifest, ProvisionError> {
        match self {
            Cni::Given(manifest) => Ok(manifest),
            Cni::Helm => {
                step(on_event, "Rendering Cilium with helm template");
                let options = HelmOptions {
                    login: req.registry_credentials.cloned(),
                    ..HelmOptions::default()
                };
                let text = helm::render(req.spec, req.release, &options)?;
                CniManifest::parse(&text).map_err(ProvisionError::HelmManifest)
            }
            Cni::HelmChartFile(chart) => {
                step(
                    on_event,
                    format!(
                        "Rendering Cilium with helm template from the chart file {}",
                        chart.display()
                    ),
                );
                let text = helm::render_chart_file(
                    req.spec,
                    req.release,
                    &chart,
                    &HelmOptions::default(),
                )?;
                CniManifest::parse(&text).map_err(ProvisionError::HelmManifest)
            }
        }
    }
}
