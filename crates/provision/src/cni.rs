//! The Cilium manifest a create or an upgrade installs, known before anything is applied: the
//! source resolved by [`CniSource::plan`], the one resolution the controller uses too.

use crate::{ProvisionError, Request, step};
use snow_lifecycle::{
    CniManifest, Event,
    cni::{CniPlan, CniSource, HelmRunError, stored},
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
/// manifests to store. helm runs on tokio's blocking pool, not on a runtime worker;
/// [`CniSource::Helm`] gets the request's mirror login unless its options hold one.
/// [`CniSource::Stored`] is [`ProvisionError::CniStored`]: a create or an upgrade is what stores
/// the manifests.
pub(crate) async fn render(
    source: CniSource,
    req: &Request<'_>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Rendered, ProvisionError> {
    let source = source.with_login(req.registry_credentials);
    let stored = source.stored_source().ok_or(ProvisionError::CniStored)?;
    let run = match source.plan(req.spec, req.release)? {
        CniPlan::Manifest(manifest) => {
            return Ok(Rendered {
                manifest,
                helm_output: None,
                source: stored,
            });
        }
        CniPlan::Stored => return Err(ProvisionError::CniStored),
        CniPlan::Helm(run) => run,
    };
    step(on_event, run.step());
    let rendered = run.render().await.map_err(|e| match e {
        HelmRunError::Helm(e) => ProvisionError::Helm(e),
        HelmRunError::Manifest(e) => ProvisionError::HelmManifest(e),
    })?;
    Ok(Rendered {
        manifest: rendered.manifest,
        helm_output: Some(rendered.output),
        source: stored,
    })
}
