//! Rendered Cilium manifests kept on the management cluster
//! ([`capi_render::stored_cilium`]: one ConfigMap in `eksa-system` per chart, Kubernetes version
//! and values): stored by whoever can render them (the CLI, with helm or a given manifest), read
//! by a controller that cannot ([`load`]: one GET).

use super::CniManifest;
use crate::{LifecycleError, Management};
use capi_render::stored_cilium::{NAMESPACE, StoredCilium, StoredCiliumError};
use serde_json::{Value, json};

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
