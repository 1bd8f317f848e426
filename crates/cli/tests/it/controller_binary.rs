//! The `snowctl controller` binary: JSON logs, health endpoints, the admission webhooks, a
//! graceful stop on SIGTERM. (The reconcilers and the webhooks' rules are tested in the
//! snow-controller crate.)

use serde_json::Value;
use snow_test_kube::KubeStandIn;
use std::time::{Duration, Instant};

use snow_test_kube::probe::{free_addr, http_get as get, wait_until as wait};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_logs_json_serves_health_and_webhooks_and_stops_on_sigterm() {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().unwrap();
    api.install_crds(&snow_api::crds_yaml().unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let log = dir.path().join("controller.log");
    let addr = free_addr();
    let webhook_addr = free_addr();
    let certs = dir.path().join("serving-certs");
    std::fs::create_dir(&certs).unwrap();
    let controller = |certs: &std::path::Path| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
        command
            .args(super::sample_release(&[
                "controller",
                "--log-format",
                "json",
                "--no-leader-election",
            ]))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--health-addr")
            .arg(addr.to_string())
            .arg("--webhook-cert-dir")
            .arg(certs)
            .arg("--webhook-addr")
            .arg(webhook_addr.to_string());
        command
    };
    // A certificate directory without its files: unreadable input, said before anything runs.
    let out = controller(&certs).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the webhook certificate cannot be used") && stderr.contains("tls.crt"),
        "{stderr}"
    );
    let ca = snow_test_devices::TestCa::new("webhook").unwrap();
    let serving = ca.server_certificate(webhook_addr.ip()).unwrap();
    std::fs::write(certs.join("tls.crt"), &serving.cert_pem).unwrap();
    std::fs::write(certs.join("tls.key"), &serving.key_pem).unwrap();
    let mut child = Reaped(
        controller(&certs)
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    wait("/readyz", async || {
        get(addr, "/readyz").await.contains("200 OK")
    })
    .await;
    assert!(get(addr, "/healthz").await.contains("ok (leader)"));
    wait("the controllers to start", async || {
        logged().contains("watching")
    })
    .await;
    // The webhooks answer over HTTPS: a Cluster whose endpoint is no IP is refused.
    let review = serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u-1", "operation": "CREATE",
            "kind": {"group": "anywhere.eks.amazonaws.com", "version": "v1alpha1", "kind": "Cluster"},
            "object": {"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "edge", "namespace": "default"},
                "spec": {"controlPlaneConfiguration": {"endpoint": {"host": "api.example.com"}}}}}});
    let answer = snow_test_devices::https::post(
        webhook_addr,
        ca.pem(),
        "/validate-anywhere-eks-amazonaws-com-v1alpha1-cluster",
        "application/json",
        &serde_json::to_vec(&review).unwrap(),
    )
    .await
    .unwrap();
    let answer: Value = serde_json::from_str(&answer.body).unwrap();
    let response = &answer["response"];
    assert_eq!(
        (&response["uid"], &response["allowed"]),
        (&"u-1".into(), &false.into())
    );
    assert!(
        response["status"]["message"].as_str().unwrap_or_default().contains(
            "spec.controlPlaneConfiguration.endpoint.host: control plane endpoint api.example.com is invalid"
        ),
        "{answer:#}"
    );
    // The shell's own kill: no procps needed.
    let term = std::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.0.id())])
        .status()
        .unwrap();
    assert!(term.success());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            panic!("no exit 30 s after SIGTERM; log:\n{}", logged());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "exit {status:?}; log:\n{}", logged());
    let text = logged();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let messages: Vec<&str> = lines.iter().filter_map(|l| l["message"].as_str()).collect();
    assert!(
        messages.contains(&"connected to the management cluster"),
        "{messages:?}"
    );
    assert!(messages.contains(&"SIGTERM: shutting down"), "{messages:?}");
    assert!(messages.contains(&"stopped"), "{messages:?}");
    assert!(
        lines
            .iter()
            .all(|l| l["level"].is_string() && l["timestamp"].is_string())
    );
}

/// A child process that is killed if the test fails before it exits.
pub(crate) struct Reaped(pub(crate) std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Devices that have every AMI and key pair asked for.
struct Devices;

impl snow_controller::DeviceSource for Devices {
    type Device = snow_test_devices::InMemoryDevice;

    async fn devices(
        &self,
        _: &snow_lifecycle::Management,
        ips: &[snow_api::DeviceIp],
    ) -> Result<(Vec<Self::Device>, Vec<snow_api::DeviceIp>), String> {
        let device = |ip| {
            snow_test_devices::InMemoryDevice::new(ip)
                .with_image("ami-good", &[])
                .with_key_pair("edge-key")
        };
        Ok((ips.iter().copied().map(device).collect(), Vec::new()))
    }
}

/// Issue 26: `describe cluster` says what the controller last recorded on the declared
/// Cluster: when it last changed the status, the generation it observed, Ready, and the failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_cluster_shows_the_controllers_last_status_change_and_failure() {
    use snow_test_kube::declared::{DeclaredCluster, EKSA};
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().unwrap();
    api.install_crds(&snow_api::crds_yaml().unwrap()).unwrap();
    let _capi = api.start_capi(snow_test_kube::CapiOptions {
        step: Duration::from_millis(10),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let declared = DeclaredCluster::new("edge", 1);
    for object in declared.objects() {
        api.put(object).unwrap();
    }
    let ctx = snow_controller::Context {
        mgmt: snow_lifecycle::Management::connect_for_watches(
            &snow_lifecycle::KubeconfigSource::file(&kubeconfig),
        )
        .await
        .unwrap(),
        inputs: snow_api::release::ReleaseInputs::embedded().unwrap(),
        devices: Devices,
        manager: snow_controller::FIELD_MANAGER.into(),
        namespace: None,
        cni: snow_controller::CniSource::Manifest(
            snow_lifecycle::CniManifest::parse(include_str!(
                "../../../lifecycle/tests/fixtures/cilium.yaml"
            ))
            .unwrap(),
        ),
    };
    let status = |field: &str| {
        api.get(EKSA, "Cluster", Some("default"), "edge")
            .map(|c| c["status"][field].clone())
            .unwrap_or_default()
    };
    let ready = || {
        status("conditions")
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    };
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(60), "never Ready");
        snow_controller::resync(&ctx, 2).await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let describe = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"))
            .args(["describe", "cluster", "edge", "--kubeconfig"])
            .arg(&kubeconfig)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let text = describe();
    let line = text
        .lines()
        .find(|l| l.starts_with("Controller (default Cluster): status last changed "))
        .unwrap_or_else(|| panic!("no controller line:\n{text}"));
    assert!(
        line.ends_with(" by snowctl-controller, generation 1 of 1 observed, Ready=True"),
        "{line}"
    );
    assert!(!text.contains("failure:"), "{text}");
    // The identity Secret goes: the next reconcile records why the cluster cannot be handled.
    api.delete("v1", "Secret", Some("default"), "edge-snow-credentials")
        .unwrap();
    snow_controller::resync(&ctx, 2).await.unwrap();
    assert_eq!(status("failureReason"), "MissingCredentials");
    let text = describe();
    assert!(
        text.contains(
            "Ready=False\n    failure: MissingCredentials: the identity Secret default/edge-snow-credentials is missing\n"
        ),
        "{text}"
    );
}
