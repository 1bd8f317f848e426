//! `snow_lifecycle::support_bundle::collect` against the Kubernetes API stand-in: a cluster made
//! by `snow_lifecycle::create` under the simulated Cluster API controllers, with its workload
//! cluster, secrets planted on both clusters and in a pod's environment, and pods whose logs the
//! stand-in serves through `pods/log`.

mod common;

use base64::Engine as _;
use serde_json::{Value, json};
use snow_lifecycle::support_bundle::{self, BundleOptions, ProblemKind, Side};
use snow_lifecycle::{ClusterRequest, CreateOptions, Management, WaitOptions};
use snow_test_kube::declared::DeclaredCluster;
use snow_test_kube::{CapiOptions, KubeStandIn};
use std::time::Duration;

const NS: &str = "eksa-system";

/// Values planted where a bundle must never copy them from.
const PLANTED_MGMT: &str = "mgmt-secret-value-7f3a9c";
const PLANTED_WORKLOAD: &str = "workload-secret-value-51be02";
const PLANTED_ENV: &str = "env-secret-value-c0ffee";
const PLANTED_FILE: &str = "bootstrap-file-secret-9d1e";

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn pod(ns: &str, name: &str, containers: &[&str], env: Option<&str>) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|c| {
            let mut container = json!({"name": c, "image": "example.com/provider:v1"});
            if let Some(value) = env {
                container["env"] = json!([{"name": "TOKEN", "value": value}]);
            }
            container
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": containers}, "status": {"phase": "Running"}})
}

/// A cluster made by `create`, with secrets, pods and logs planted on both clusters.
struct Planted {
    api: KubeStandIn,
    workload: std::sync::Arc<KubeStandIn>,
    _capi: snow_test_kube::CapiHandle,
    mgmt: Management,
    _dir: tempfile::TempDir,
}

async fn planted() -> Planted {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().expect("CAPI CRDs");
    api.install_eksa_crds().expect("EKS Anywhere CRDs");
    let capi = api.start_capi(CapiOptions {
        step: Duration::from_millis(20),
        ..CapiOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let (_, mgmt) = common::connect(&api, dir.path()).await;
    // The declared EKS Anywhere objects, as a user applies them (its identity Secret included).
    let declared = DeclaredCluster::new("edge", 1);
    for object in declared.objects() {
        api.put(object).expect("declared object");
    }
    let spec_text = common::edge_spec(1, 1);
    let spec = snow_api::check(&spec_text).unwrap().into_valid().unwrap();
    let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(&spec, None).unwrap();
    let request = ClusterRequest {
        spec: &spec,
        spec_text: &spec_text,
        release: &release,
        secrets: None,
        default_ssh_key_name: None,
        registry_credentials: None,
    };
    api.put(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "edge-snow-credentials", "namespace": NS},
        "type": "Opaque", "data": {"credentials": b64(PLANTED_MGMT), "ca-bundle": b64("x")}}))
        .unwrap();
    let options = CreateOptions {
        wait: WaitOptions {
            poll: Duration::from_millis(20),
            ..WaitOptions::default()
        },
        cni: Some(
            snow_lifecycle::CniManifest::parse(include_str!("fixtures/cilium.yaml")).unwrap(),
        ),
    };
    snow_lifecycle::create(&mgmt, &request, &options, &mut |_| {})
        .await
        .expect("create");
    let workload = capi.workload("edge").expect("a workload cluster");
    // A provider pod of two containers, one with a secret in its environment, and its logs.
    api.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "capas-system"}}))
        .unwrap();
    api.put(pod(
        "capas-system",
        "capas-controller-manager-1",
        &["manager", "kube-rbac-proxy"],
        Some(PLANTED_ENV),
    ))
    .unwrap();
    let long: String = (1..=2000).map(|i| format!("capas line {i}\n")).collect();
    api.set_pod_log(
        "capas-system",
        "capas-controller-manager-1",
        "manager",
        &long,
    );
    // A provider Deployment that is not Available (no deployment controller runs here).
    api.put(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "capas-controller-manager", "namespace": "capas-system", "generation": 1},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
                {"name": "manager", "image": "example.com/capas:v1",
                 "env": [{"name": "TOKEN", "value": PLANTED_ENV}]}]}}}}))
        .unwrap();
    // A bootstrap config with a secret in a file's content.
    let configs = api.list(
        "bootstrap.cluster.x-k8s.io/v1beta2",
        "KubeadmConfig",
        Some(NS),
    );
    if let Some(mut config) = configs.into_iter().next() {
        config["spec"]["files"] = json!([{"path": "/etc/x", "content": PLANTED_FILE}]);
        api.put(config).unwrap();
    }
    // The workload cluster: a Secret and a kube-system pod with its log.
    workload
        .put(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "planted", "namespace": "kube-system"},
            "type": "Opaque", "data": {"password": b64(PLANTED_WORKLOAD)}}))
        .unwrap();
    workload
        .put(pod(
            "kube-system",
            "coredns-1",
            &["coredns"],
            Some(PLANTED_ENV),
        ))
        .unwrap();
    workload.set_pod_log(
        "kube-system",
        "coredns-1",
        "coredns",
        "[INFO] plugin/reload\n",
    );
    Planted {
        api,
        workload,
        _capi: capi,
        mgmt,
        _dir: dir,
    }
}

fn file<'a>(files: &'a [(String, Vec<u8>)], path: &str) -> &'a [u8] {
    let names: Vec<&String> = files.iter().map(|(n, _)| n).collect();
    files
        .iter()
        .find(|(n, _)| n == path)
        .map(|(_, b)| b.as_slice())
        .unwrap_or_else(|| panic!("{path} is not in the bundle: {names:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_holds_both_clusters_bounded_logs_and_never_a_secret() {
    let p = planted().await;
    let opts = BundleOptions {
        snowctl_version: "snowctl 0.1.0".into(),
        log_tail_lines: 100,
        ..BundleOptions::default()
    };
    let bundle = support_bundle::collect(&p.mgmt, "edge", &opts)
        .await
        .expect("collect");
    let files = bundle.files();
    // The workload API server's certificate, read from the handshake; the stand-in's lasts
    // longer than the days the control plane rolls before, so it is no problem.
    let certificate = (files.iter())
        .find(|(n, _)| n == "workload/api-server-certificate.txt")
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .unwrap_or_default();
    assert!(certificate.starts_with("expires "), "{certificate:?}");
    assert!(
        !(bundle.summary.problems.iter()).any(|p| p.kind == ProblemKind::CertificateExpiring),
        "{:?}",
        bundle.summary.problems
    );
    assert_eq!(files[0].0, "summary.txt");
    assert_eq!(files[1].0, "summary.json");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for wanted in [
        "snowctl/version.txt",
        "snowctl/inventory/spec.yaml",
        "management/eksa/Cluster/edge.json",
        "management/eksa/SnowDatacenterConfig/edge.json",
        "management/eksa/SnowMachineConfig/edge-cp.json",
        "management/capi/Cluster/edge.json",
        "management/capi/KubeadmControlPlane/edge.json",
        "management/capi/MachineDeployment/edge-md-0.json",
        "management/capi/AWSSnowCluster/edge.json",
        "management/secrets.json",
        "management/capas-system/Pod/capas-controller-manager-1.json",
        "management/capas-system/logs/capas-controller-manager-1/manager.log",
        "management/capas-system/logs/capas-controller-manager-1/kube-rbac-proxy.log",
        "workload/secrets.json",
        "workload/kube-system/Pod/coredns-1.json",
        "workload/kube-system/logs/coredns-1/coredns.log",
        "workload/cni/DaemonSet/cilium.json",
        "workload/api-server-certificate.txt",
    ] {
        assert!(
            names.contains(&wanted),
            "{wanted} missing: {names:#?} {:#?}",
            bundle.summary
        );
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("management/capi/Machine/")),
        "{names:#?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("workload/nodes/Node/")),
        "{names:#?}"
    );
    // The last 100 lines of the log, not all 2000.
    let log = String::from_utf8_lossy(file(
        &files,
        "management/capas-system/logs/capas-controller-manager-1/manager.log",
    ))
    .into_owned();
    assert_eq!(log.lines().count(), 100);
    assert_eq!(log.lines().next(), Some("capas line 1901"));
    assert_eq!(
        file(&files, "workload/kube-system/logs/coredns-1/coredns.log"),
        b"[INFO] plugin/reload\n"
    );
    // Secrets as names, types and keys.
    let secrets: Value = serde_json::from_slice(file(&files, "management/secrets.json")).unwrap();
    assert!(
        secrets
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "edge-snow-credentials"
                && s["namespace"] == NS
                && s["keys"] == json!(["ca-bundle", "credentials"])),
        "{secrets:#}"
    );
    // The devices the machine configs name.
    assert_eq!(bundle.devices(), ["192.168.1.11", "192.168.1.12"]);
    // The analysis: the provider Deployment that is not Available.
    assert!(
        bundle
            .summary
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::DeploymentUnavailable
                && p.side == Side::Management
                && p.object == "Deployment capas-system/capas-controller-manager"),
        "{:#?}",
        bundle.summary
    );
    // No planted value, plain or base64, anywhere; nor either cluster's token, nor the declared
    // identity Secret's keys.
    let declared_keys = ["AKIDDECLARED0", "declaredsecret0"];
    let mut planted: Vec<String> = vec![
        PLANTED_MGMT.into(),
        PLANTED_WORKLOAD.into(),
        PLANTED_ENV.into(),
        PLANTED_FILE.into(),
        p.api.token().into(),
        p.workload.token().into(),
    ];
    planted.extend(declared_keys.map(String::from));
    planted.extend(planted.clone().iter().map(|v| b64(v)));
    for (name, bytes) in &files {
        for value in &planted {
            assert!(
                !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
                "{name} holds the planted value {value}"
            );
        }
    }
    // They were there to be found: the env value in the stand-in's stored pod.
    let stored = p
        .api
        .get(
            "v1",
            "Pod",
            Some("capas-system"),
            "capas-controller-manager-1",
        )
        .unwrap();
    assert!(stored.to_string().contains(PLANTED_ENV));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cluster_gives_a_bundle_that_says_so_and_an_unreachable_one_an_error() {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().expect("CAPI CRDs");
    let dir = tempfile::tempdir().unwrap();
    let (_, mgmt) = common::connect(&api, dir.path()).await;
    let bundle = support_bundle::collect(&mgmt, "gone", &BundleOptions::default())
        .await
        .expect("collect");
    let text = bundle.summary.to_text();
    assert!(text.contains("no Cluster API Cluster gone"), "{text}");
    assert!(text.contains("workload cluster: not collected"), "{text}");
    api.stop();
    let err = support_bundle::collect(&mgmt, "gone", &BundleOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            snow_lifecycle::LifecycleError::Kube(snow_kube::KubeError::Unreachable { .. })
        ),
        "{err}"
    );
}
