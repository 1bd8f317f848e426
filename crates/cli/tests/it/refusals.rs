//! What a command will not do to a cluster is said before what it would need to do it (issue
//! 36): an imported cluster, a cluster paused by someone else, one whose infrastructure another
//! system manages and one that is not there are refused (`snow_provision::refusal`) before helm
//! is looked up, the devices are asked or a release is fetched, with `PATH` lacking helm and no
//! `--skip-validations` or `--cni-manifest`: exit 1, the refusal, and not one object of the
//! management cluster written or changed.

use super::lifecycle::{Group, Mgmt, management, spec};
use super::{show, text};
use serde_json::{Value, json};
use std::{path::PathBuf, time::Duration};

const NS: &str = "eksa-system";
const CORE: &str = "cluster.x-k8s.io/v1beta2";
const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// Every object of the stand-in as `(kind, namespace/name, resourceVersion)`, sorted.
fn snapshot(m: &Mgmt) -> Vec<(String, String, String)> {
    let field = |o: &Value, f: &str| o["metadata"][f].as_str().unwrap_or_default().to_owned();
    let mut all: Vec<(String, String, String)> = m
        .api
        .objects()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap_or_default().to_owned(),
                format!("{}/{}", field(o, "namespace"), field(o, "name")),
                field(o, "resourceVersion"),
            )
        })
        .collect();
    all.sort();
    all
}

/// A management cluster whose simulated controllers are stopped (so nothing but snowctl
/// could change an object), cluster `edge` as `cluster` and `infra` say, the spec of `edge`,
/// and a `PATH` with no helm.
async fn site(cluster: Option<Value>, infra: Option<Value>) -> (Mgmt, PathBuf, String) {
    let m = management().await;
    m.capi.pause();
    tokio::time::sleep(Duration::from_millis(100)).await;
    m.api
        .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .unwrap();
    for object in [infra, cluster].into_iter().flatten() {
        m.api.put(object).unwrap();
    }
    let path = m.write_spec(
        "edge.yaml",
        &spec("192.168.1.50", &[Group("md-0", 1, "edge")], "sbe-c.large"),
    );
    let no_helm = m.dir.path().join("no-helm");
    std::fs::create_dir_all(&no_helm).unwrap();
    let no_helm = no_helm.to_str().unwrap().to_owned();
    (m, path, no_helm)
}

fn cluster(labels: Value, annotations: Value, paused: bool) -> Value {
    json!({
        "apiVersion": CORE, "kind": "Cluster",
        "metadata": {"name": "edge", "namespace": NS, "labels": labels, "annotations": annotations},
        "spec": {
            "paused": paused,
            "controlPlaneEndpoint": {"host": "192.168.1.50", "port": 6443},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSSnowCluster", "name": "edge"},
        },
    })
}

fn infra(annotations: Value) -> Value {
    json!({
        "apiVersion": INFRA, "kind": "AWSSnowCluster",
        "metadata": {"name": "edge", "namespace": NS, "annotations": annotations},
        "spec": {"controlPlaneEndpoint": {"host": "192.168.1.50", "port": 6443}},
    })
}

/// Runs `args` (then `--kubeconfig`) with `PATH` lacking helm and checks the refusal: exit 1,
/// every `said` in stderr, no word of helm, nothing written.
async fn refused(m: &Mgmt, no_helm: &str, args: &[&str], said: &[&str]) {
    let before = snapshot(m);
    let writes = m.api.writes();
    let out = m
        .snowctl_env(args, &m.kubeconfig, &[("PATH", no_helm)])
        .await;
    assert_eq!(out.status.code(), Some(1), "{args:?}: {}", show(&out));
    let stderr = text(&out.stderr);
    for said in said {
        assert!(
            stderr.contains(said),
            "{args:?}: {said:?} in {}",
            show(&out)
        );
    }
    assert!(
        !stderr.contains("helm") && !stderr.contains("preflight"),
        "{args:?}: {}",
        show(&out)
    );
    assert!(
        !stderr.contains("Support bundle written"),
        "{args:?}: {}",
        show(&out)
    );
    assert_eq!(m.api.writes(), writes, "{args:?}: {}", show(&out));
    assert_eq!(snapshot(m), before, "{args:?}: {}", show(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_cluster_is_refused_before_helm_and_nothing_changes() {
    let imported = cluster(
        json!({"snowctl.anywhere.eks.amazonaws.com/imported": "true"}),
        json!({}),
        false,
    );
    let (m, path, no_helm) = site(
        Some(imported),
        Some(infra(json!({"cluster.x-k8s.io/managed-by": "snowctl"}))),
    )
    .await;
    let spec = path.to_str().unwrap();
    let observe_only = "cluster edge was imported observe-only";
    refused(
        &m,
        &no_helm,
        &["upgrade", "cluster", "-f", spec],
        &[observe_only, "upgrade cluster is refused", "--records-only"],
    )
    .await;
    refused(
        &m,
        &no_helm,
        &["create", "cluster", "-f", spec],
        &[observe_only, "create cluster is refused"],
    )
    .await;
    refused(
        &m,
        &no_helm,
        &["upgrade", "plan", "cluster", "-f", spec],
        &[observe_only, "upgrade plan is refused"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_paused_by_someone_else_is_refused_before_helm_and_nothing_changes() {
    let paused = cluster(
        json!({}),
        json!({"cluster.x-k8s.io/paused": "maintenance"}),
        true,
    );
    let (m, path, no_helm) = site(Some(paused), Some(infra(json!({})))).await;
    let spec = path.to_str().unwrap();
    let is_paused = "cluster edge is paused (spec.paused: true, annotation cluster.x-k8s.io/paused: \"maintenance\") and not by snowctl";
    refused(
        &m,
        &no_helm,
        &["upgrade", "cluster", "-f", spec],
        &[
            is_paused,
            "upgrade cluster is refused",
            "hint: nothing was changed; once whoever paused it is done, unpause it",
        ],
    )
    .await;
    refused(
        &m,
        &no_helm,
        &["delete", "cluster", "edge"],
        &[is_paused, "delete cluster is refused"],
    )
    .await;
    refused(
        &m,
        &no_helm,
        &["renew", "certificates", "edge"],
        &[is_paused, "renew certificates is refused"],
    )
    .await;
    let backup = m.dir.path().join("backup");
    refused(
        &m,
        &no_helm,
        &[
            "move",
            "cluster",
            "edge",
            "--to-directory",
            backup.to_str().unwrap(),
        ],
        &[is_paused, "backup is refused"],
    )
    .await;
    assert!(!backup.exists(), "nothing written for a refused backup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_another_system_manages_is_refused_before_helm() {
    let (m, path, no_helm) = site(
        Some(cluster(json!({}), json!({}), false)),
        Some(infra(
            json!({"cluster.x-k8s.io/managed-by": "fleet-operator"}),
        )),
    )
    .await;
    refused(
        &m,
        &no_helm,
        &["upgrade", "cluster", "-f", path.to_str().unwrap()],
        &[
            "cluster edge is managed by another system (its AWSSnowCluster is annotated cluster.x-k8s.io/managed-by: \"fleet-operator\"): upgrade cluster is refused",
            "change the cluster through the system that manages it",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absent_cluster_is_not_found_before_helm() {
    let (m, path, no_helm) = site(None, None).await;
    let not_there = "cluster edge is not on the management cluster";
    refused(
        &m,
        &no_helm,
        &["upgrade", "cluster", "-f", path.to_str().unwrap()],
        &[not_there],
    )
    .await;
    refused(
        &m,
        &no_helm,
        &["renew", "certificates", "edge"],
        &[not_there],
    )
    .await;
    let backup = m.dir.path().join("backup");
    refused(
        &m,
        &no_helm,
        &[
            "move",
            "cluster",
            "edge",
            "--to-directory",
            backup.to_str().unwrap(),
        ],
        &[not_there],
    )
    .await;
    // Create and delete have nothing to refuse: create goes on to helm, delete has nothing to do.
    let out = m
        .snowctl_env(
            &["create", "cluster", "-f", path.to_str().unwrap()],
            &m.kubeconfig,
            &[("PATH", &no_helm)],
        )
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("helm was not found"),
        "{}",
        show(&out)
    );
    let out = m.snowctl(&["delete", "cluster", "edge"]).await;
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stderr)
            .contains("cluster edge is not on the management cluster; nothing to delete"),
        "{}",
        show(&out)
    );
}
