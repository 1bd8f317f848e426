//! Where a create or a delete runs (`snow_provision::target`): the create's rule, and the
//! delete's decision against the Kubernetes API stand-in (a cluster whose published kubeconfig
//! points at the management cluster itself manages itself).

use base64::Engine;
use serde_json::json;
use snow_lifecycle::{KubeconfigSource, bootstrap::Existing};
use snow_provision::target::{
    self, CreateTarget, CreateTargetOptions, Delete, DeleteTarget, create_target, delete_target,
};
use snow_test_kube::KubeStandIn;

#[test]
fn a_create_runs_from_nothing_when_asked_or_without_a_kubeconfig() {
    let found = KubeconfigSource::file("mgmt.kubeconfig").with_context(Some("admin"));
    let cases = [
        (
            Some(found.clone()),
            false,
            CreateTarget::Management(found.clone()),
        ),
        (Some(found), true, CreateTarget::FromNothing { asked: true }),
        (None, false, CreateTarget::FromNothing { asked: false }),
        (None, true, CreateTarget::FromNothing { asked: true }),
    ];
    for (management, self_managed, want) in cases {
        let opts = CreateTargetOptions {
            management,
            self_managed,
        };
        assert_eq!(create_target(opts.clone()), want, "{opts:?}");
    }
}

/// The Secret Cluster API publishes for `cluster`, holding `kubeconfig`.
fn published(cluster: &str, kubeconfig: &str) -> serde_json::Value {
    let value = base64::engine::general_purpose::STANDARD.encode(kubeconfig);
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("{cluster}-kubeconfig"), "namespace": "eksa-system"},
        "data": {"value": value}
    })
}

#[tokio::test]
async fn a_delete_goes_through_a_bootstrap_cluster_only_for_a_cluster_that_manages_itself() {
    let kube = KubeStandIn::start().await.unwrap();
    kube.install_capi().unwrap();
    let other = KubeStandIn::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = KubeconfigSource::file(kube.write_kubeconfig(dir.path()).unwrap());
    // Its kubeconfig points at the management cluster itself: self-managed.
    kube.put(published("own", &kube.kubeconfig())).unwrap();
    // Its kubeconfig points at another API server: a workload cluster.
    kube.put(published("workload", &other.kubeconfig()))
        .unwrap();
    let decided = delete_target(&source, "own").await.unwrap();
    assert!(matches!(decided, DeleteTarget::SelfManaged), "{decided:?}");
    for cluster in ["workload", "absent"] {
        let decided = delete_target(&source, cluster).await.unwrap();
        let DeleteTarget::Management(mgmt) = decided else {
            panic!("{cluster}: {decided:?}");
        };
        // The delete runs on the connection the decision made: nothing there, nothing deleted.
        let opts = snow_lifecycle::DeleteOptions::default();
        let how = Delete::<Existing>::OnManagement(&mgmt, &opts);
        let deleted = target::delete(how, cluster, &mut |_| {}).await.unwrap();
        assert!(!deleted.found, "{cluster}");
    }
    // A management cluster that cannot be reached is an error, not a guess.
    let down = KubeconfigSource::file(dir.path().join("missing"));
    assert!(delete_target(&down, "own").await.is_err());
}
