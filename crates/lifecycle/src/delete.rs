//! `delete`: delete the Cluster API Cluster, wait until it and its machines are gone, then
//! remove every object snowctl applied for it (the inventory), so nothing is left behind.

use super::{
    Event, Inventory, LifecycleError, Management, ObjectRef, WaitOptions,
    live::{cluster_selector, find_cluster},
    wait::delete_cluster,
};
use capi_render::{Contract, NAMESPACE};

/// How [`delete`] waits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// The deletion timeout and the poll interval.
    pub wait: WaitOptions,
}

/// What a delete did.
#[derive(Debug, Clone, Default)]
pub struct Deleted {
    /// The cluster.
    pub cluster: String,
    /// Whether anything of the cluster was found.
    pub found: bool,
    /// `Kind/name` of what was removed after the Cluster.
    pub removed: Vec<String>,
    /// IP pools kept because another cluster still uses them.
    pub kept: Vec<String>,
    /// Objects labelled with the cluster that are still there (should be none).
    pub leftovers: Vec<String>,
}

/// Objects the cluster's machines depend on go last.
fn removal_rank(kind: &str) -> u8 {
    match kind {
        "MachineHealthCheck" => 0,
        "Cluster" => 1,
        "MachineDeployment" => 2,
        "KubeadmControlPlane" => 3,
        "EtcdadmCluster" => 4,
        "AWSSnowCluster" => 5,
        "KubeadmConfigTemplate" => 6,
        "AWSSnowMachineTemplate" => 7,
        "AWSSnowIPPool" => 8,
        "Secret" => 9,
        _ => 10,
    }
}

/// Where a cluster stands on the management cluster: its inventory, the contract its Cluster
/// answers to, and the Cluster when it is there.
#[derive(Debug, Clone)]
pub struct Located {
    /// snowctl's inventory of the cluster, when one was recorded.
    pub inventory: Option<Inventory>,
    /// The contract of the live Cluster (or the one to try first).
    pub contract: Contract,
    /// The Cluster API Cluster, when it exists.
    pub cluster: Option<serde_json::Value>,
}

/// Finds cluster `cluster`: its inventory, then its Cluster under the inventory's contract first.
pub async fn locate(mgmt: &Management, cluster: &str) -> Result<Located, LifecycleError> {
    let inventory = Inventory::load(mgmt, cluster).await?;
    let (contract, live) = find_cluster(
        mgmt,
        cluster,
        inventory.as_ref().map(|i| i.contract.as_str()),
    )
    .await?;
    Ok(Located {
        inventory,
        contract,
        cluster: live,
    })
}

/// Deletes cluster `cluster` and everything snowctl applied for it. A cluster that is not
/// there is not an error: `found` is false.
pub async fn delete(
    mgmt: &Management,
    cluster: &str,
    opts: &DeleteOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Deleted, LifecycleError> {
    let opts = &opts.wait;
    let Located {
        inventory,
        contract,
        cluster: live,
    } = locate(mgmt, cluster).await?;
    crate::standing::refuse_live(live.as_ref(), cluster, "delete cluster")?;
    if live.is_none() && inventory.is_none() {
        return Ok(Deleted {
            cluster: cluster.to_owned(),
            ..Deleted::default()
        });
    }
    if live.is_some() {
        delete_cluster(mgmt, contract, cluster, opts, on_event).await?;
    }
    on_event(Event::Step(format!(
        "Removing the objects snowctl applied for {cluster}"
    )));
    let deleted = cleanup(mgmt, cluster, contract, inventory.as_ref()).await?;
    for object in &deleted.removed {
        on_event(Event::Deleted {
            object: object.clone(),
        });
    }
    Ok(deleted)
}

/// Once the Cluster API Cluster is gone: removes every object the inventory lists (but IP pools
/// another snowctl cluster still uses), the kubeconfig Secret and the inventory, and names what
/// is still labelled with the cluster.
pub(crate) async fn cleanup(
    mgmt: &Management,
    cluster: &str,
    contract: Contract,
    inventory: Option<&Inventory>,
) -> Result<Deleted, LifecycleError> {
    let mut deleted = Deleted {
        cluster: cluster.to_owned(),
        found: true,
        ..Deleted::default()
    };
    let others: Vec<Inventory> = Inventory::load_all(mgmt)
        .await?
        .into_iter()
        .filter(|i| i.cluster != cluster)
        .collect();
    let mut objects: Vec<ObjectRef> = inventory
        .iter()
        .flat_map(|i| i.objects.iter().cloned())
        .collect();
    objects.push(ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        name: format!("{cluster}-kubeconfig"),
    });
    objects.sort_by_key(|o| removal_rank(&o.kind));
    for object in objects {
        if object.kind == "AWSSnowIPPool" && others.iter().any(|i| i.objects.contains(&object)) {
            deleted.kept.push(object.to_string());
            continue;
        }
        if mgmt.delete_object(&object).await? {
            deleted.removed.push(object.to_string());
        }
    }
    mgmt.delete(
        "v1",
        "ConfigMap",
        Some(NAMESPACE),
        &Inventory::name_for(cluster),
    )
    .await?;
    // Anything still labelled with the cluster is a leftover worth naming.
    let selector = cluster_selector(cluster);
    let core = contract.api_version("cluster.x-k8s.io");
    for (api_version, kind) in [
        (core.as_str(), "Machine"),
        (core.as_str(), "MachineDeployment"),
        (core.as_str(), "MachineHealthCheck"),
        ("v1", "Secret"),
        ("v1", "ConfigMap"),
    ] {
        for o in mgmt
            .list(api_version, kind, Some(NAMESPACE), Some(&selector))
            .await?
        {
            deleted.leftovers.push(format!(
                "{kind}/{}",
                o["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
    }
    Ok(deleted)
}
