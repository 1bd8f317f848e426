//! Flux on a management cluster: its install objects applied as `init` applies a component
//! (namespaces, then CRDs each waited for `Established` before an object of its kind, then the
//! rest, server-side as [`crate::FIELD_MANAGER`]), then its controllers' Deployments waited for
//! `Available`. Applying again converges, so an interrupted install is finished by a re-run.

use crate::init::{
    InitOptions,
    components::{describe, rank},
    install::{Crds, apply_objects, wait_deployments},
};
use crate::{Event, LifecycleError, Management};
use serde_json::Value;

/// Applies Flux's install objects (`capi_render::gitops::flux_install`'s, with the bundle's
/// images) in `init`'s order and waits for every Deployment among them; returns how many
/// objects were applied.
pub async fn install(
    mgmt: &Management,
    objects: &[Value],
    options: &InitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<usize, LifecycleError> {
    let mut ordered = objects.to_vec();
    // Stable: within a stage, the manifest's own order.
    ordered.sort_by_key(rank);
    let mut crds = Crds::default();
    crds.learn(&ordered);
    let applied = apply_objects(mgmt, &ordered, &mut crds, options, on_event).await?;
    wait_deployments(mgmt, &deployments(&ordered), options, on_event).await?;
    Ok(applied)
}

/// `(namespace, name)` of every Deployment of `objects`.
fn deployments(objects: &[Value]) -> Vec<(String, String)> {
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|o| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&o["metadata"]["namespace"]),
                text(&o["metadata"]["name"]),
            )
        })
        .collect()
}

/// Applies `objects` one by one (the source Secret, the GitRepository, the Kustomization),
/// each said as applied by kind and name only (never its content).
pub async fn apply_each(
    mgmt: &Management,
    objects: &[Value],
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    for object in objects {
        mgmt.apply(object).await?;
        on_event(Event::Applied {
            object: describe(object),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deployments_are_found_by_kind() {
        let objects = [
            json!({"kind": "Namespace", "metadata": {"name": "flux-system"}}),
            json!({"kind": "Deployment", "metadata": {"name": "source-controller", "namespace": "flux-system"}}),
        ];
        assert_eq!(
            deployments(&objects),
            [("flux-system".to_owned(), "source-controller".to_owned())]
        );
    }
}
