//! The snowctl controller as one more management component: its objects (rendered by
//! `capi_render::controller`) installed, waited for and upgraded by the same installer as the
//! providers ([`super::init`], [`super::upgrade`]), after them.
//!
//! Where it is recorded: not in clusterctl's inventory. `clusterctl upgrade plan` (and
//! `clusterctl move`, `describe`) read every `Provider` entry and look up a repository for
//! each: an entry for a provider clusterctl does not know would break them on a cluster
//! `snowctl init` made. The record is the ConfigMap [`RECORD`] in `eksa-system` (its
//! `version`, `image` and the digest of its release catalog), written last, as a Provider entry is, so an interrupted install is
//! seen as not done and done again. It carries no component label, so an upgrade's pruning
//! never deletes it.

use super::components::{Component, ComponentObjects, rank};
use crate::{LifecycleError, Management};
use capi_render::controller::{self as render, ControllerComponent};
use serde_json::{Value, json};

/// The ConfigMap (in `eksa-system`) recording the installed controller.
pub const RECORD: &str = "snowctl-controller-version";

/// The component of `controller`, ready for [`super::init`] and [`super::upgrade::apply`]: its
/// objects in apply order, its version the controller image's tag (this snowctl's version).
pub fn component(controller: &ControllerComponent) -> ComponentObjects {
    let mut objects = render::objects(controller);
    objects.sort_by_key(rank);
    ComponentObjects {
        component: Component::Controller,
        version: snow_api::release::controller_image_tag(),
        namespace: render::NAMESPACE.to_owned(),
        objects,
        secrets: Default::default(),
    }
}

/// The component's Deployment (`Value::Null` if it has none).
fn deployment(component: &ComponentObjects) -> &Value {
    (component.objects.iter())
        .find(|o| o["kind"] == "Deployment")
        .unwrap_or(&Value::Null)
}

/// The image of the component's Deployment.
pub fn image(component: &ComponentObjects) -> &str {
    deployment(component)["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or_default()
}

/// The digest of the release catalog the component's Deployment mounts (its pod template's
/// [`render::RELEASE_DIGEST_ANNOTATION`]).
pub fn release_digest(component: &ComponentObjects) -> &str {
    deployment(component)["spec"]["template"]["metadata"]["annotations"]
        [render::RELEASE_DIGEST_ANNOTATION]
        .as_str()
        .unwrap_or_default()
}

/// The record of `component` (the ConfigMap [`RECORD`]).
pub fn record(component: &ComponentObjects) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": RECORD, "namespace": render::NAMESPACE},
        "data": {
            "version": component.version,
            "image": image(component),
            "release": release_digest(component),
        },
    })
}

/// What the record says is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The controller's version.
    pub version: String,
    /// Its image.
    pub image: String,
    /// The digest of its release catalog (empty in a record written before it was kept).
    pub release: String,
}

/// The installed controller, if recorded.
pub async fn installed(mgmt: &Management) -> Result<Option<Recorded>, LifecycleError> {
    let found = mgmt
        .get("v1", "ConfigMap", Some(render::NAMESPACE), RECORD)
        .await?;
    Ok(found.map(|c| {
        let text = |k: &str| c["data"][k].as_str().unwrap_or_default().to_owned();
        Recorded {
            version: text("version"),
            image: text("image"),
            release: text("release"),
        }
    }))
}

impl Recorded {
    /// Whether this record is `component`: same version, image and release catalog (a new
    /// Bundles of the same snowctl is an upgrade too: the controller reads it at start).
    pub fn is(&self, component: &ComponentObjects) -> bool {
        self.version == component.version
            && self.image == image(component)
            && self.release == release_digest(component)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_objects_are_in_the_installers_order_and_recorded_with_their_image() {
        let c = component(&ControllerComponent {
            image: "mirror:5000/snowctl/controller:v1".into(),
            proxy: None,
            release: Default::default(),
        });
        let ranks: Vec<u8> = c.objects.iter().map(rank).collect();
        assert!(ranks.is_sorted(), "{ranks:?}");
        assert_eq!(
            c.objects.last().map(|o| o["kind"].clone()),
            Some(json!("MutatingWebhookConfiguration"))
        );
        assert_eq!(
            record(&c)["data"]["image"],
            "mirror:5000/snowctl/controller:v1"
        );
        let same = Recorded {
            version: c.version.clone(),
            image: "mirror:5000/snowctl/controller:v1".into(),
            release: release_digest(&c).to_owned(),
        };
        assert!(same.is(&c));
        assert_eq!(release_digest(&c).len(), 64);
        let other_image = Recorded {
            image: "other:5000/snowctl/controller:v1".into(),
            ..same.clone()
        };
        assert!(!other_image.is(&c));
        let other_release = Recorded {
            release: "0".repeat(64),
            ..same
        };
        assert!(!other_release.is(&c));
    }
}
