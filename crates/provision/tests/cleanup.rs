//! `devices cleanup`'s safety rule against the Kubernetes API stand-in: no plan while the
//! management cluster still has the cluster (or has it imported), the devices' plan once it is
//! gone.

use serde_json::json;
use snow_api::DeviceIp;
use snow_lifecycle::{LifecycleError, Management, import::IMPORTED_LABEL};
use snow_provision::{
    ProvisionError,
    cleanup::{self, CleanupOptions},
    import::Devices,
};
use snow_test_kube::KubeStandIn;

fn cluster(labels: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "alpha", "namespace": "eksa-system", "labels": labels},
        "spec": {}
    })
}

#[tokio::test]
async fn cleanup_is_refused_while_the_management_cluster_has_the_cluster() {
    let kube = KubeStandIn::start().await.unwrap();
    kube.install_capi().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kube.write_kubeconfig(dir.path()).unwrap();
    let mgmt = Management::connect(&snow_lifecycle::KubeconfigSource::file(&kubeconfig))
        .await
        .unwrap();
    // A device without a profile: the plan lists it, so a plan shows it was made.
    let missing: [DeviceIp; 1] = ["192.0.2.10".parse().unwrap()];
    let options = CleanupOptions {
        cluster: "alpha",
        management: Some(&mgmt),
        devices: Devices {
            devices: &[],
            without_credentials: &missing,
        },
    };

    kube.put(cluster(json!({}))).unwrap();
    match cleanup::plan(options).await {
        Err(ProvisionError::ClusterExists { cluster }) => assert_eq!(cluster, "alpha"),
        other => panic!("expected ClusterExists, got {other:?}"),
    }

    kube.put(cluster(json!({IMPORTED_LABEL: "true"}))).unwrap();
    match cleanup::plan(options).await {
        Err(ProvisionError::Lifecycle(LifecycleError::Imported { cluster, action })) => {
            assert_eq!(
                (cluster.as_str(), action.as_str()),
                ("alpha", "devices cleanup")
            );
        }
        other => panic!("expected Imported, got {other:?}"),
    }

    kube.delete(
        "cluster.x-k8s.io/v1beta2",
        "Cluster",
        Some("eksa-system"),
        "alpha",
    )
    .unwrap();
    let plan = cleanup::plan(options).await.unwrap();
    assert_eq!(plan.cluster, "alpha");
    assert_eq!(plan.devices.len(), 1);
    assert!(plan.devices[0].error.is_some());

    // Without a management cluster nothing is checked there.
    kube.put(cluster(json!({}))).unwrap();
    let unchecked = CleanupOptions {
        management: None,
        ..options
    };
    assert_eq!(cleanup::plan(unchecked).await.unwrap().devices.len(), 1);
}
