//! What the lifecycle tests share: the Snow cluster spec they create (`snow_test_kube::edge_spec`), and a management cluster
//! on the Kubernetes API stand-in. (Each test crate uses some of these.)
#![allow(dead_code)]

use snow_lifecycle::{KubeconfigSource, Management};
use snow_test_kube::edge_spec::{EdgeSpec, MD_0, WorkerGroup};
use snow_test_kube::{CapiHandle, CapiOptions, KubeStandIn};
use std::{path::PathBuf, time::Duration};

/// The stand-in with Cluster API's, CAPAS' and etcdadm's CRDs and their simulated controllers
/// stepping every 20 ms.
pub(crate) async fn with_capi() -> (KubeStandIn, CapiHandle) {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().expect("CAPI CRDs");
    let capi = api.start_capi(CapiOptions {
        step: Duration::from_millis(20),
        ..CapiOptions::default()
    });
    (api, capi)
}

/// A connection to `api` through the kubeconfig written for it into `dir`, and that file.
pub(crate) async fn connect(api: &KubeStandIn, dir: &std::path::Path) -> (PathBuf, Management) {
    let kubeconfig = api.write_kubeconfig(dir).unwrap();
    let mgmt = Management::connect(&KubeconfigSource::file(&kubeconfig))
        .await
        .expect("connect");
    (kubeconfig, mgmt)
}

/// A Snow cluster `edge` on devices 192.168.1.11 and .12 (endpoint 192.168.1.100, Kubernetes
/// 1.33, Cilium) with `control_planes` control-plane machines and one worker group of `workers`,
/// no `sshKeyName`.
pub(crate) fn edge_spec(control_planes: u32, workers: u32) -> String {
    let groups = [WorkerGroup {
        count: workers,
        ..MD_0[0]
    }];
    EdgeSpec {
        control_planes,
        groups: &groups,
        ssh_key_name: None,
        ..EdgeSpec::default()
    }
    .yaml()
}
