//! Applying rendered objects: parsed once, ordered so that what an object references is there
//! before it, applied server-side.

use crate::{Event, KubeError, Management, ObjectRef, identity};
use capi_render::{NAMESPACE, RenderedObject};
use serde_json::{Value, json};

/// Referenced objects first: pools and templates, then what uses them, the Cluster last but for
/// health checks (which need the machines' Cluster).
fn rank(kind: &str) -> u8 {
    match kind {
        "Namespace" => 0,
        "ConfigMap" => 1,
        "Secret" => 2,
        "AWSSnowIPPool" => 3,
        "AWSSnowMachineTemplate" => 4,
        "KubeadmConfigTemplate" => 5,
        "AWSSnowCluster" => 6,
        "EtcdadmCluster" => 7,
        "KubeadmControlPlane" => 8,
        "MachineDeployment" => 9,
        "Cluster" => 10,
        "MachineHealthCheck" => 11,
        _ => 12,
    }
}

/// The rendered documents as JSON objects in namespace `eksa-system`, in apply order.
pub fn parse(rendered: &[RenderedObject]) -> Result<Vec<Value>, KubeError> {
    let mut objects = Vec::with_capacity(rendered.len());
    for o in rendered {
        let mut value: Value =
            serde_saphyr::from_str(&o.yaml).map_err(|e| KubeError::Document {
                what: format!("the rendered {}/{}", o.kind, o.name),
                reason: format!("not valid YAML: {e}"),
            })?;
        if value["metadata"]["namespace"].is_null() {
            value["metadata"]["namespace"] = json!(NAMESPACE);
        }
        objects.push(value);
    }
    // A stable sort keeps render's order within a kind.
    objects.sort_by_key(|o| rank(o["kind"].as_str().unwrap_or_default()));
    Ok(objects)
}

/// The inventory entry of an object.
pub fn object_ref(object: &Value) -> ObjectRef {
    let (api_version, kind, _, name) = identity(object);
    ObjectRef {
        api_version,
        kind,
        name,
    }
}

/// The namespace every object lives in, to apply before them.
pub fn namespace() -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
}

/// Applies `objects` in order, an [`Event::Applied`] each.
pub async fn apply_each<'a>(
    mgmt: &Management,
    objects: impl IntoIterator<Item = &'a Value>,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), KubeError> {
    for object in objects {
        mgmt.apply(object).await?;
        on_event(Event::Applied {
            object: object_ref(object).to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_come_before_what_uses_them() {
        let doc = |kind: &str, name: &str| RenderedObject {
            api_version: "x/v1".into(),
            kind: kind.into(),
            name: name.into(),
            yaml: format!("apiVersion: x/v1\nkind: {kind}\nmetadata:\n  name: {name}\n"),
        };
        let objects = parse(&[
            doc("Cluster", "c"),
            doc("KubeadmControlPlane", "c"),
            doc("MachineDeployment", "c-md-0"),
            doc("AWSSnowMachineTemplate", "c-md-0-1"),
            doc("AWSSnowMachineTemplate", "c-control-plane-1"),
            doc("MachineHealthCheck", "c-kcp-unhealthy"),
        ])
        .unwrap();
        let order: Vec<String> = objects.iter().map(|o| object_ref(o).to_string()).collect();
        assert_eq!(
            order,
            [
                "AWSSnowMachineTemplate/c-md-0-1",
                "AWSSnowMachineTemplate/c-control-plane-1",
                "KubeadmControlPlane/c",
                "MachineDeployment/c-md-0",
                "Cluster/c",
                "MachineHealthCheck/c-kcp-unhealthy",
            ]
        );
        assert!(
            objects
                .iter()
                .all(|o| o["metadata"]["namespace"] == NAMESPACE)
        );
    }
}
