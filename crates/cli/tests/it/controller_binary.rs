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
