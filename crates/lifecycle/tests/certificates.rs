//! Certificates against the Kubernetes API stand-in: `describe` reads the workload API
//! server's serving certificate from a TLS handshake and each machine's age, and
//! `renew_certificates` rolls every control-plane machine of a cluster made by
//! `snow_lifecycle::create` under the simulated Cluster API controllers.

mod common;

use serde_json::json;
use snow_lifecycle::certificates::CertificateState;
use snow_lifecycle::{
    ClusterRequest, CreateOptions, LifecycleError, Management, RenewOptions, WaitOptions,
};
use snow_test_kube::KubeStandIn;
use std::time::Duration;

const NS: &str = "eksa-system";
const KCP: &str = "controlplane.cluster.x-k8s.io/v1beta2";
const CORE: &str = "cluster.x-k8s.io/v1beta2";

struct Made {
    api: KubeStandIn,
    capi: snow_test_kube::CapiHandle,
    mgmt: Management,
    _dir: tempfile::TempDir,
}

fn wait() -> WaitOptions {
    let mut wait = WaitOptions {
        poll: Duration::from_millis(20),
        ..WaitOptions::default()
    };
    // Bounded, so a roll that never happens fails the test rather than hanging it.
    wait.timeouts.control_plane = Some(Duration::from_secs(30));
    wait
}

async fn made() -> Made {
    made_from(&common::edge_spec(3, 1)).await
}

async fn made_from(text: &str) -> Made {
    let (api, capi) = common::with_capi().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, mgmt) = common::connect(&api, dir.path()).await;
    let spec = snow_api::check(text).unwrap().into_valid().unwrap();
    let inputs = snow_api::release::ReleaseInputs::embedded().unwrap();
    let release = inputs.resolve(&spec, None).unwrap();
    let request = ClusterRequest {
        spec: &spec,
        spec_text: text,
        release: &release,
        secrets: None,
        default_ssh_key_name: None,
        registry_credentials: None,
    };
    // The identity Secret create requires (its values are not read here).
    api.put(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "edge-snow-credentials", "namespace": NS},
        "type": "Opaque", "data": {"credentials": "eA==", "ca-bundle": "eA=="}}))
        .unwrap();
    let options = CreateOptions {
        wait: wait(),
        cni: Some(
            snow_lifecycle::CniManifest::parse(include_str!("fixtures/cilium.yaml")).unwrap(),
        ),
    };
    snow_lifecycle::create(&mgmt, &request, &options, &mut |_| {})
        .await
        .expect("create");
    Made {
        api,
        capi,
        mgmt,
        _dir: dir,
    }
}

fn control_plane_machines(api: &KubeStandIn) -> Vec<String> {
    let mut names: Vec<String> = api
        .list(CORE, "Machine", Some(NS))
        .iter()
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/control-plane"].is_string())
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_reads_the_api_servers_certificate_from_the_handshake_and_machine_ages() {
    let m = made().await;
    let workload = m.capi.workload("edge").expect("a workload cluster");
    let (_, cert) =
        x509_parser::pem::parse_x509_pem(workload.certificate_pem().as_bytes()).unwrap();
    let served = cert.parse_x509().unwrap().validity().not_after.timestamp();
    let described = snow_lifecycle::describe(&m.mgmt, "edge").await.unwrap();
    let Some(CertificateState::Read(read)) = &described.api_server_certificate else {
        panic!("{:?}", described.api_server_certificate);
    };
    let expected: k8s_openapi::jiff::Timestamp = read.not_after.parse().unwrap();
    assert_eq!(expected.as_second(), served, "{read:?}");
    assert_eq!(read.server, workload.url());
    let text = described.to_text();
    assert!(
        text.contains(&format!(
            "API server certificate: expires {}",
            read.not_after
        )),
        "{text}"
    );
    // Every machine line says its age (the stand-in's machines are seconds old).
    let machine_lines: Vec<&str> = text.lines().filter(|l| l.contains("Machine/")).collect();
    assert_eq!(machine_lines.len(), 4, "{text}");
    assert!(
        machine_lines
            .iter()
            .all(|l| l.contains(", age ") && l.ends_with('s')),
        "{text}"
    );

    // A workload API server that does not answer: unknown, with why, and describe still works.
    workload.stop();
    let described = snow_lifecycle::describe(&m.mgmt, "edge").await.unwrap();
    assert!(
        matches!(&described.api_server_certificate, Some(CertificateState::Unknown(why)) if why.contains("refused")),
        "{:?}",
        described.api_server_certificate
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renew_rolls_every_control_plane_machine_and_refuses_an_imported_cluster() {
    let m = made().await;
    let before = control_plane_machines(&m.api);
    assert_eq!(before.len(), 3);
    let workers_before: Vec<String> = m
        .api
        .list(CORE, "Machine", Some(NS))
        .iter()
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"].is_string())
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    let mut events = Vec::new();
    let renewed = snow_lifecycle::renew_certificates(
        &m.mgmt,
        "edge",
        &RenewOptions { wait: wait() },
        &mut |e| events.push(e),
    )
    .await
    .expect("renew");
    let after = control_plane_machines(&m.api);
    assert_eq!(after.len(), 3);
    for name in &before {
        assert!(!after.contains(name), "{name} was not replaced: {after:?}");
    }
    assert_eq!(renewed.replaced, before);
    assert_eq!(renewed.machines, after);
    assert!(!renewed.external_etcd);
    let kcp = m
        .api
        .get(KCP, "KubeadmControlPlane", Some(NS), "edge")
        .unwrap();
    assert_eq!(
        kcp["spec"]["rollout"]["after"],
        renewed.rollout_after.as_str()
    );
    // The roll-before days are still there beside it.
    assert_eq!(
        kcp["spec"]["rollout"]["before"]["certificatesExpiryDays"],
        capi_render::CERTIFICATES_EXPIRY_DAYS
    );
    // Workers are not rolled.
    let workers_after: Vec<String> = m
        .api
        .list(CORE, "Machine", Some(NS))
        .iter()
        .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"].is_string())
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(workers_after, workers_before);

    // An imported cluster is refused before anything is written.
    let mut cluster = m.api.get(CORE, "Cluster", Some(NS), "edge").unwrap();
    cluster["metadata"]["labels"]["snowctl.anywhere.eks.amazonaws.com/imported"] = json!("true");
    m.api.put(cluster).unwrap();
    let err = snow_lifecycle::renew_certificates(
        &m.mgmt,
        "edge",
        &RenewOptions { wait: wait() },
        &mut |_| {},
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LifecycleError::Imported { .. }), "{err}");
    assert!(
        err.to_string().contains("renew certificates is refused"),
        "{err}"
    );
    let kcp_after = m
        .api
        .get(KCP, "KubeadmControlPlane", Some(NS), "edge")
        .unwrap();
    assert_eq!(
        kcp_after["spec"]["rollout"], kcp["spec"]["rollout"],
        "a refused renewal wrote"
    );
    // A missing cluster is named.
    let err = snow_lifecycle::renew_certificates(
        &m.mgmt,
        "nope",
        &RenewOptions { wait: wait() },
        &mut |_| {},
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cluster nope is not on the management cluster"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_external_etcd_only_the_control_plane_rolls_and_that_is_said() {
    // The same cluster with three external etcd machines.
    // Unstacked etcd takes static addresses (a SnowIPPool), as EKS Anywhere requires.
    let text: &'static str = (common::edge_spec(3, 1).replace(
        "  datacenterRef:",
        "  externalEtcdConfiguration:\n    count: 3\n    machineGroupRef: {kind: SnowMachineConfig, name: edge-etcd}\n  datacenterRef:",
    ) + "---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowMachineConfig
metadata:
  name: edge-etcd
spec:
  devices: [\"192.168.1.11\", \"192.168.1.12\"]
  instanceType: sbe-c.large
  network:
    directNetworkInterfaces:
    - {index: 1, primary: true, ipPoolRef: {kind: SnowIPPool, name: etcd-pool}}
  osFamily: ubuntu
  physicalNetworkConnector: SFP_PLUS
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowIPPool
metadata:
  name: etcd-pool
spec:
  pools:
  - {ipStart: 10.0.1.10, ipEnd: 10.0.1.50, subnet: 10.0.1.0/24, gateway: 10.0.1.1}
")
    .leak();
    let m = made_from(text).await;
    let etcd = |api: &KubeStandIn| -> Vec<String> {
        let mut names: Vec<String> = api
            .list(CORE, "Machine", Some(NS))
            .iter()
            .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/etcd-cluster"].is_string())
            .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let etcd_before = etcd(&m.api);
    assert_eq!(etcd_before.len(), 3);
    let before = control_plane_machines(&m.api);
    let renewed = snow_lifecycle::renew_certificates(
        &m.mgmt,
        "edge",
        &RenewOptions { wait: wait() },
        &mut |_| {},
    )
    .await
    .expect("renew");
    assert!(renewed.external_etcd);
    let after = control_plane_machines(&m.api);
    assert!(
        before.iter().all(|b| !after.contains(b)),
        "{before:?} {after:?}"
    );
    assert_eq!(
        etcd(&m.api),
        etcd_before,
        "etcd machines have no rollout field to roll them"
    );
}
