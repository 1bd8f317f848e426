//! End to end through the binary: a self-managed `create cluster` ends with the snowctl
//! controller installed on the new cluster (its Deployment Available once cert-manager issued
//! its webhook certificate); the test then runs `snowctl controller` as that Deployment says (its
//! arguments, the addresses moved to loopback ports; the ServiceAccount's token, so RBAC
//! applies; the certificate files of the Certificate's Secret) with the webhook Service mapped to
//! it, and drives a second cluster with the real kubectl: applied, Ready through the controller,
//! an immutable change refused by the webhook, deleted with its machines.
//!
//! The device is moto over TLS on a loopback address (the controller checks the SSH key of each
//! SnowMachineConfig there); no helm is on the controller's PATH (`--cni-stored`).

use super::self_managed::{CILIUM, components_dir};
use super::{show, text};
use capi_render::controller;
use serde_json::Value;
use snow_test_devices::TestCa;
use snow_test_kube::{CapiOptions, KubeStandIn, WorkloadOptions};
use std::{
    net::SocketAddr,
    path::Path,
    process::{Command, Output},
    sync::Arc,
    time::{Duration, Instant},
};

const NS: &str = "eksa-system";
const NAME: &str = "snowctl-controller";
const EKSA: &str = "anywhere.eks.amazonaws.com/v1alpha1";

/// Waits until `check` holds, looking every 100 ms; panics after `limit` with `detail()`.
async fn wait(what: &str, limit: Duration, check: impl Fn() -> bool, detail: impl Fn() -> String) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < limit,
            "{what} never happened\n{}",
            detail()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn run(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .unwrap()
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args);
    cmd
}

fn condition(object: &Value, kind: &str) -> Option<String> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?["status"]
        .as_str()
        .map(str::to_owned)
}

/// The Deployment's arguments with the addresses on loopback ports, the certificate directory
/// `certs` and the release directory `release` (what the pod's network, the mounted Secret and
/// the mounted ConfigMap are to a process here).
fn local_args(
    args: &[String],
    health: SocketAddr,
    webhook: SocketAddr,
    certs: &Path,
    release: &Path,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if let Some(file) = arg.strip_prefix(&format!("{}/", controller::RELEASE_DIR)) {
            out.push(release.join(file).display().to_string());
            continue;
        }
        out.push(arg.clone());
        let local = match arg.as_str() {
            "--health-addr" => Some(health.to_string()),
            "--webhook-addr" => Some(webhook.to_string()),
            "--webhook-cert-dir" => Some(certs.display().to_string()),
            _ => None,
        };
        if let Some(local) = local {
            let given = it.next().expect("a value");
            assert!(!given.is_empty());
            out.push(local);
        }
    }
    out
}

struct Device {
    ip: std::net::IpAddr,
    ca: TestCa,
    /// The identity Secret of cluster `second` (EKS Anywhere's encoding), as JSON.
    identity: String,
    _moto: snow_test_devices::Moto,
}

/// One device: moto over TLS on `IP:8243`, holding the key pair `edge-key`.
async fn device() -> Device {
    let ca = TestCa::new("devices").unwrap();
    let ip = snow_test_devices::loopback_ip();
    let cert = ca.server_certificate(ip).unwrap();
    let moto =
        tokio::task::spawn_blocking(move || snow_test_devices::Moto::start(ip, 8243, &cert, &[]))
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}"));
    let ini = format!(
        "[{ip}]\naws_access_key_id = AKIDCONTROLLER00\naws_secret_access_key = secretCONTROLLERdevice0\nregion = snow\n"
    );
    let creds = snow_credentials::CredentialsFile::parse("credentials", ini.into_bytes()).0;
    let (bundle, _) = snow_credentials::CaBundle::parse("ca", ca.pem().as_bytes().to_vec());
    let trust = snow_validate::Trust::from_bundle(&bundle).unwrap();
    let (clients, _) = snow_validate::SnowDevice::fleet(
        &creds,
        &trust,
        snow_validate::ClientConfig::default(),
        [snow_api::DeviceIp::from(ip)],
    );
    clients[0]
        .ec2()
        .create_key_pair()
        .key_name("edge-key")
        .send()
        .await
        .expect("CreateKeyPair");
    let mut identity = snow_credentials::encode::eksa_identity_secret(
        "second-snow-credentials",
        "default",
        &creds,
        &bundle,
    )
    .to_json();
    identity["apiVersion"] = "v1".into();
    identity["kind"] = "Secret".into();
    Device {
        ip,
        ca,
        identity: format!("---\n{identity}\n---\n"),
        _moto: moto,
    }
}

fn spec(name: &str, ip: &str, endpoint: &str) -> String {
    snow_api::template::cluster_config(&snow_api::template::TemplateOptions {
        name: name.into(),
        devices: vec![ip.into()],
        endpoint: Some(endpoint.into()),
        ssh_key_name: Some("edge-key".into()),
        kubernetes_version: Some("1.33".into()),
        ..Default::default()
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_managed_cluster_runs_the_installed_controller_which_manages_the_next_cluster() {
    let device = device().await;
    let ip = device.ip.to_string();
    let target = Arc::new(KubeStandIn::start().await.expect("target"));
    let boot = KubeStandIn::start().await.expect("bootstrap");
    let step = Duration::from_millis(20);
    let _boot_workloads = boot.start_workloads(WorkloadOptions::default());
    let _boot_capi = boot.start_capi(CapiOptions {
        step,
        workload: Some(target.clone()),
        ..CapiOptions::default()
    });
    // The new cluster is its own workload cluster; the clusters it manages get their own.
    let own_capi = target.start_capi(CapiOptions {
        step,
        workload: Some(target.clone()),
        require_providers: true,
        workload_of: Some("edge".into()),
        ..CapiOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("boot.kubeconfig"), boot.kubeconfig()).unwrap();
    components_dir(d);
    std::fs::write(d.join("cluster.yaml"), spec("edge", &ip, "192.168.1.100")).unwrap();
    std::fs::write(d.join("ca-bundle.pem"), device.ca.pem()).unwrap();
    std::fs::write(
        d.join("credentials"),
        format!("[{ip}]\naws_access_key_id = AKIDCONTROLLER00\naws_secret_access_key = secretCONTROLLERdevice0\nregion = snow\n"),
    )
    .unwrap();
    let image = snow_api::release::controller_image("registry.example:5000");
    // The self-managed create, the same command for the first run and the re-run.
    let create = || {
        let mut create = Command::new(env!("CARGO_BIN_EXE_snowctl"));
        create
            .args([
                "create",
                "cluster",
                "-f",
                "cluster.yaml",
                "--skip-validations",
            ])
            .args([
                "--bootstrap-kubeconfig",
                "boot.kubeconfig",
                "--cni-manifest",
                CILIUM,
            ])
            .args([
                "--components-dir",
                "components",
                "--controller-image",
                &image,
            ])
            .args([
                "--credentials",
                "credentials",
                "--ca-bundle",
                "ca-bundle.pem",
            ])
            .args(["--poll-interval", "20ms"])
            .args(["--bundles", super::SAMPLE_BUNDLES])
            .current_dir(d)
            .env_remove("KUBECONFIG")
            .env_remove("EKSA_AWS_CREDENTIALS_FILE")
            .env_remove("EKSA_AWS_CA_BUNDLES_FILE");
        create
    };
    let out = run(create()).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let installing = "Installing the snowctl controller on management cluster";
    assert!(err.contains(installing), "{err}");
    assert!(
        err.find("Moving cluster spec to workload cluster") < err.find(installing),
        "{err}"
    );

    // Installed as the render says, Available (after cert-manager issued its certificate),
    // and recorded.
    let deployment = target
        .get("apps/v1", "Deployment", Some(NS), NAME)
        .expect("the controller's Deployment");
    assert_eq!(condition(&deployment, "Available").as_deref(), Some("True"));
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], image.as_str());
    let record = target
        .get("v1", "ConfigMap", Some(NS), "snowctl-controller-version")
        .expect("the record");
    assert_eq!(record["data"]["image"], image.as_str());
    let config = target
        .get(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            None,
            NAME,
        )
        .expect("the webhooks");
    let ca_bundle = config["webhooks"][0]["clientConfig"]["caBundle"]
        .as_str()
        .expect("cert-manager's cainjector filled caBundle");
    let secret = target
        .get("v1", "Secret", Some(NS), "snowctl-controller-webhook-cert")
        .expect("cert-manager's Secret");
    assert_eq!(secret["data"]["ca.crt"], ca_bundle);

    // A second run converges: everything installed already.
    let out = run(create()).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let version = |api_version: &str, kind: &str, name: &str| {
        target.get(api_version, kind, Some(NS), name).unwrap()["metadata"]["resourceVersion"]
            .clone()
    };
    assert_eq!(
        version("v1", "ConfigMap", "snowctl-controller-version"),
        record["metadata"]["resourceVersion"],
        "recorded once"
    );
    assert_eq!(
        version("apps/v1", "Deployment", NAME),
        deployment["metadata"]["resourceVersion"],
        "not applied again"
    );

    // The controller as the Deployment runs it: its arguments, its ServiceAccount's token, the
    // certificate cert-manager issued.
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let certs = d.join("serving-certs");
    std::fs::create_dir(&certs).unwrap();
    use base64::Engine as _;
    for key in ["tls.crt", "tls.key"] {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(secret["data"][key].as_str().unwrap())
            .unwrap();
        std::fs::write(certs.join(key), bytes).unwrap();
    }
    // The release catalog, as the mounted ConfigMap holds it.
    let release = d.join("release");
    std::fs::create_dir(&release).unwrap();
    let catalog = target
        .get("v1", "ConfigMap", Some(NS), controller::RELEASE_CONFIGMAP)
        .expect("the release ConfigMap");
    let files = catalog["data"].as_object().unwrap();
    assert!(files.contains_key("bundles.yaml"), "{catalog}");
    for (key, text) in files {
        std::fs::write(release.join(key), text.as_str().unwrap()).unwrap();
    }
    assert!(
        args.iter()
            .any(|a| a == &format!("{}/bundles.yaml", controller::RELEASE_DIR)),
        "{args:?}"
    );
    let sa = d.join("controller.kubeconfig");
    std::fs::write(&sa, target.service_account_kubeconfig(NS, NAME).unwrap()).unwrap();
    let (health, webhook) = (
        snow_test_kube::probe::free_addr(),
        snow_test_kube::probe::free_addr(),
    );
    let log = d.join("controller.log");
    let empty = tempfile::tempdir().unwrap();
    let mut controller = Command::new(env!("CARGO_BIN_EXE_snowctl"));
    controller
        .args(local_args(&args, health, webhook, &certs, &release))
        .arg("--kubeconfig")
        .arg(&sa)
        .env("PATH", empty.path())
        .env_remove("KUBECONFIG")
        .stderr(std::fs::File::create(&log).unwrap());
    let _controller = super::controller_binary::Reaped(controller.spawn().unwrap());
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    target.map_service(NS, "snowctl-controller-webhook", 443, webhook);
    let start = Instant::now();
    while !snow_test_kube::probe::http_get(health, "/readyz")
        .await
        .contains("200 OK")
    {
        assert!(start.elapsed() < Duration::from_secs(60), "{}", logged());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A second cluster declared with kubectl becomes Ready through the controller.
    let own = d.join("edge/edge-eks-a-cluster.kubeconfig");
    let second = d.join("second.yaml");
    // Its objects as a user applies them: the identity Secret, then the spec's objects.
    // The annotation keeps the controller from dialing the endpoint (EKS Anywhere's
    // skip-ip-check): no address off loopback is ever dialed.
    let objects = |endpoint: &str| {
        let text = spec("second", &ip, endpoint);
        let from = "metadata:\n  name: second\n";
        assert!(text.contains(from), "{text}");
        let annotated = text.replacen(
            from,
            "metadata:\n  name: second\n  annotations:\n    anywhere.eks.amazonaws.com/skip-ip-check: \"true\"\n",
            1,
        );
        format!("{}{annotated}", device.identity)
    };
    let (endpoint, moved) = ("192.168.1.101", "192.168.1.102");
    std::fs::write(&second, objects(endpoint)).unwrap();
    let second_arg = second.to_str().unwrap();
    let out = run(kubectl(
        &own,
        &["apply", "--validate=false", "-f", second_arg],
    ))
    .await;
    assert!(out.status.success(), "{}", show(&out));
    let declared = || target.get(EKSA, "Cluster", Some("default"), "second");
    wait(
        "the second cluster Ready",
        Duration::from_secs(240),
        || declared().is_some_and(|c| condition(&c, "Ready").as_deref() == Some("True")),
        || {
            let configs: Vec<Value> = target
                .list(EKSA, "SnowMachineConfig", Some("default"))
                .into_iter()
                .map(|c| serde_json::json!([c["metadata"]["name"], c["status"]]))
                .collect();
            let capi: Vec<Value> = target
                .list("cluster.x-k8s.io/v1beta1", "Cluster", None)
                .into_iter()
                .map(|c| c["metadata"]["name"].clone())
                .collect();
            format!(
                "{:#}\nmachine configs {configs:?}\nCAPI clusters {capi:?}\n{}",
                declared().unwrap_or_default(),
                logged()
            )
        },
    )
    .await;
    assert!(
        own_capi.workload("second").is_some(),
        "its machines run in a workload cluster of their own"
    );

    // The first cluster, which manages itself, is the controller's too: the create left on it
    // the identity Secret its datacenter names, so the controller reads the device credentials
    // and finds it Ready.
    let first = || target.get(EKSA, "Cluster", Some("default"), "edge");
    wait(
        "the self-managed cluster Ready through the controller",
        Duration::from_secs(120),
        || first().is_some_and(|c| condition(&c, "Ready").as_deref() == Some("True")),
        || format!("{:#}\n{}", first().unwrap_or_default(), logged()),
    )
    .await;

    // The webhook refuses an immutable change, with its words.
    std::fs::write(&second, objects(moved)).unwrap();
    let out = run(kubectl(
        &own,
        &["apply", "--validate=false", "-f", second_arg],
    ))
    .await;
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", show(&out));
    assert!(
        err.contains(
            "admission webhook \"validation.cluster.anywhere.amazonaws.com\" denied the request"
        ) && err.contains("spec.controlPlaneConfiguration.endpoint.host")
            && err.contains("the control-plane endpoint cannot change on an existing cluster"),
        "{err}"
    );
    assert_eq!(
        declared().unwrap()["spec"]["controlPlaneConfiguration"]["endpoint"]["host"],
        endpoint
    );

    // kubectl delete removes it and its machines.
    let out = run(kubectl(
        &own,
        &[
            "delete",
            "clusters.anywhere.eks.amazonaws.com",
            "second",
            "-n",
            "default",
            "--wait=false",
        ],
    ))
    .await;
    assert!(out.status.success(), "{}", show(&out));
    let machines = || {
        target
            .list("cluster.x-k8s.io/v1beta1", "Machine", Some(NS))
            .into_iter()
            .filter(|m| m["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "second")
            .count()
    };
    wait(
        "the second cluster gone",
        Duration::from_secs(120),
        || {
            declared().is_none()
                && target
                    .get("cluster.x-k8s.io/v1beta1", "Cluster", Some(NS), "second")
                    .is_none()
                && machines() == 0
        },
        || format!("{} machines left\n{}", machines(), logged()),
    )
    .await;
    assert!(
        target
            .get("cluster.x-k8s.io/v1beta1", "Cluster", Some(NS), "edge")
            .is_some(),
        "the management cluster itself is untouched"
    );
}
