//! The admission webhooks: `review` over AdmissionReview bodies as an API server sends them, and
//! the HTTPS server (a client trusting a test CA), its hostile bodies and its certificate
//! renewal.

use base64::Engine as _;
use serde_json::{Value, json};
use snow_controller::webhook::{Hook, MAX_BODY_BYTES, WebhookError, WebhookOptions, review, serve};
use snow_test_devices::{
    TestCa,
    https::{Answer, exchange, post},
};
use snow_test_kube::declared::DeclaredCluster;
use std::{net::SocketAddr, path::Path};

#[path = "support/webhooks.rs"]
mod webhooks;

/// An AdmissionReview as kube-apiserver sends it: `operation` of `object` (and `old`), with the
/// object as stored (uid, managedFields, status).
fn admission_review(operation: &str, object: &Value, old: Option<&Value>) -> Value {
    let kind = object["kind"].as_str().unwrap_or_default();
    let resource = format!("{}s", kind.to_lowercase());
    let stored = |o: &Value| {
        let mut o = o.clone();
        o["metadata"]["uid"] = "1c0a9e8e-5a4f-4c39-9c53-9a0c3c7d2b11".into();
        o["metadata"]["resourceVersion"] = "4711".into();
        o["metadata"]["generation"] = 3.into();
        o["metadata"]["creationTimestamp"] = "2026-05-01T10:00:00Z".into();
        o["metadata"]["managedFields"] = json!([{"manager": "kubectl-client-side-apply",
            "operation": "Update", "apiVersion": "anywhere.eks.amazonaws.com/v1alpha1",
            "time": "2026-05-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]);
        o["status"] = json!({});
        o
    };
    json!({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "anywhere.eks.amazonaws.com", "version": "v1alpha1", "kind": kind},
            "resource": {"group": "anywhere.eks.amazonaws.com", "version": "v1alpha1", "resource": resource},
            "requestKind": {"group": "anywhere.eks.amazonaws.com", "version": "v1alpha1", "kind": kind},
            "requestResource": {"group": "anywhere.eks.amazonaws.com", "version": "v1alpha1", "resource": resource},
            "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
            "operation": operation,
            "userInfo": {"username": "admin", "groups": ["system:masters", "system:authenticated"]},
            "object": stored(object),
            "oldObject": old.map(stored),
            "dryRun": false,
            "options": {"kind": if operation == "CREATE" { "CreateOptions" } else { "UpdateOptions" },
                "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-client-side-apply"}}})
}

fn bytes(review: &Value) -> Vec<u8> {
    serde_json::to_vec(review).unwrap()
}

fn edge() -> DeclaredCluster {
    DeclaredCluster::new("edge", 1)
}

/// An AdmissionReview whose object nests deeper than any JSON reader should follow.
fn deep_review() -> Vec<u8> {
    let mut body = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","kind":{"group":"anywhere.eks.amazonaws.com","version":"v1alpha1","kind":"Cluster"},"object":"#.to_vec();
    body.extend(std::iter::repeat_n(b'[', 100_000));
    body
}

#[test]
fn every_kind_of_the_declared_cluster_is_allowed_on_create() {
    let mut d = edge();
    d.control_plane = 3;
    let objects = [
        (Hook::Cluster, d.cluster()),
        (Hook::MachineConfig, d.machine_config("edge", "sbe-c.large")),
        (Hook::Datacenter, d.objects()[1].clone()),
        (Hook::IpPool, d.pool()),
    ];
    for (hook, object) in objects {
        assert_eq!(object["kind"], hook.kind().as_str());
        let answer = review(hook, &bytes(&admission_review("CREATE", &object, None)));
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(answer["kind"], "AdmissionReview");
        let response = &answer["response"];
        assert_eq!(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
        assert_eq!(response["allowed"], true, "{hook:?}: {answer:#}");
        assert!(response["warnings"].is_null(), "{answer:#}");
    }
    // What `validate` warns about comes back as warnings.
    let one = edge().cluster();
    let answer = review(
        Hook::Cluster,
        &bytes(&admission_review("CREATE", &one, None)),
    );
    assert_eq!(answer["response"]["allowed"], true);
    assert_eq!(
        answer["response"]["warnings"],
        json!([
            "warning[control-plane.count] spec.controlPlaneConfiguration.count: control plane count 1: 3 or 5 is recommended for high availability"
        ])
    );
}

#[test]
fn a_denial_is_controller_runtimes_with_every_finding_as_validate_words_it() {
    let mut cluster = edge().cluster();
    cluster["spec"]["controlPlaneConfiguration"]["count"] = 2.into();
    cluster["spec"]["controlPlaneConfiguration"]["endpoint"]["host"] = "10.96.0.10".into();
    let mut request = admission_review("CREATE", &cluster, None);
    // v1beta1 is answered in kind.
    request["apiVersion"] = "admission.k8s.io/v1beta1".into();
    let answer = review(Hook::Cluster, &bytes(&request));
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1beta1");
    let response = &answer["response"];
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    assert_eq!(response["status"]["reason"], "Forbidden");
    assert_eq!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        [
            "error[control-plane.count] spec.controlPlaneConfiguration.count: control plane count 2 is even; with stacked etcd it must be odd (hint: use 1, 3 or 5 so etcd keeps quorum)",
            "error[control-plane.endpoint] spec.controlPlaneConfiguration.endpoint.host: control plane endpoint 10.96.0.10 conflicts with services CIDR block (hint: pick an endpoint outside the pod and service CIDRs)",
        ]
    );
}

#[test]
fn an_immutable_change_is_denied_unless_the_stored_cluster_is_paused() {
    let old = edge().cluster();
    let mut new = old.clone();
    new["spec"]["controlPlaneConfiguration"]["endpoint"]["host"] = "192.168.1.101".into();
    new["spec"]["kubernetesVersion"] = "1.31".into();
    let answer = review(
        Hook::Cluster,
        &bytes(&admission_review("UPDATE", &new, Some(&old))),
    );
    let response = &answer["response"];
    assert_eq!(response["allowed"], false, "{answer:#}");
    let message = response["status"]["message"].as_str().unwrap();
    assert_eq!(
        message.lines().collect::<Vec<_>>(),
        [
            "error[upgrade.immutable] spec.controlPlaneConfiguration.endpoint.host: the control-plane endpoint cannot change on an existing cluster: it is 192.168.1.100 in the stored Cluster, 192.168.1.101 in the spec (hint: set it back to 192.168.1.100; a different value needs a new cluster)",
            "error[upgrade.version-skew] spec.kubernetesVersion: Kubernetes cannot be downgraded: it is 1.33 in the stored Cluster, 1.31 in the spec (hint: keep it at 1.33 or higher)",
        ]
    );
    let mut paused = old.clone();
    paused["metadata"]["annotations"]["anywhere.eks.amazonaws.com/paused"] = "true".into();
    new["metadata"]["annotations"]["anywhere.eks.amazonaws.com/paused"] = "true".into();
    let answer = review(
        Hook::Cluster,
        &bytes(&admission_review("UPDATE", &new, Some(&paused))),
    );
    assert_eq!(answer["response"]["allowed"], true, "{answer:#}");
    // Pausing is a metadata change: allowed; and deletes are not the webhooks'.
    let answer = review(
        Hook::Cluster,
        &bytes(&admission_review("UPDATE", &paused, Some(&old))),
    );
    assert_eq!(answer["response"]["allowed"], true, "{answer:#}");
    let answer = review(
        Hook::Cluster,
        &bytes(&admission_review("DELETE", &old, Some(&old))),
    );
    assert_eq!(answer["response"]["allowed"], true, "{answer:#}");
}

#[test]
fn an_ip_pools_pools_are_immutable() {
    let old = edge().pool();
    let mut new = old.clone();
    new["spec"]["pools"][0]["ipEnd"] = "192.168.1.50".into();
    let answer = review(
        Hook::IpPool,
        &bytes(&admission_review("UPDATE", &new, Some(&old))),
    );
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "error[ip-pool.immutable] spec.pools: the pools of an existing SnowIPPool cannot change"
        ),
        "{answer:#}"
    );
}

#[test]
fn the_defaulting_hook_patches_what_validate_defaults() {
    let mut config = edge().machine_config("edge", "");
    config["spec"]
        .as_object_mut()
        .unwrap()
        .remove("physicalNetworkConnector");
    let answer = review(
        Hook::MachineConfigDefaults,
        &bytes(&admission_review("CREATE", &config, None)),
    );
    let response = &answer["response"];
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    let patch: Value = serde_json::from_slice(&patch).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/spec/instanceType", "value": "sbe-c.large"},
            {"op": "add", "path": "/spec/physicalNetworkConnector", "value": "SFP_PLUS"}])
    );
    // Nothing to default: no patch. The validating hook would say what is still wrong.
    let full = edge().machine_config("edge", "sbe-c.large");
    let answer = review(
        Hook::MachineConfigDefaults,
        &bytes(&admission_review("CREATE", &full, None)),
    );
    assert!(answer["response"]["patch"].is_null(), "{answer:#}");
}

/// A FluxConfig of `branch` (EKS Anywhere's generic git provider).
fn flux_config(branch: &str) -> Value {
    json!({"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "FluxConfig",
        "metadata": {"name": "fleet", "namespace": "default"},
        "spec": {"branch": branch, "clusterConfigPath": "clusters/edge",
            "git": {"repositoryUrl": "ssh://git@192.168.1.5/fleet.git"}}})
}

/// EKS Anywhere's FluxConfig webhook: a FluxConfig's rules on create, and no change of its spec
/// on update (a default written out is no change); deletes are allowed.
#[test]
fn a_flux_configs_rules_on_create_and_its_whole_spec_immutable_on_update() {
    let old = flux_config("main");
    let answer = review(
        Hook::FluxConfig,
        &bytes(&admission_review("CREATE", &old, None)),
    );
    assert_eq!(answer["response"]["allowed"], true, "{answer:#}");
    let mut bad = flux_config("main");
    bad["spec"]["git"]["repositoryUrl"] = "git@192.168.1.5:fleet.git".into();
    let answer = review(
        Hook::FluxConfig,
        &bytes(&admission_review("CREATE", &bad, None)),
    );
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("error[") && message.contains("spec.git.repositoryUrl"),
        "{answer:#}"
    );
    let moved = flux_config("release");
    let answer = review(
        Hook::FluxConfig,
        &bytes(&admission_review("UPDATE", &moved, Some(&old))),
    );
    assert_eq!(answer["response"]["status"]["code"], 403, "{answer:#}");
    assert_eq!(
        answer["response"]["status"]["message"],
        "error[flux.immutable] spec.branch: spec.branch of an existing FluxConfig cannot change: it is `main` in the stored FluxConfig, `release` in the spec (hint: set it back; EKS Anywhere makes a FluxConfig's whole spec immutable (another repository, branch or path needs a new cluster))"
    );
    let mut defaulted = old.clone();
    defaulted["spec"]["systemNamespace"] = "flux-system".into();
    let answer = review(
        Hook::FluxConfig,
        &bytes(&admission_review("UPDATE", &defaulted, Some(&old))),
    );
    assert_eq!(answer["response"]["allowed"], true, "{answer:#}");
    let answer = review(
        Hook::FluxConfig,
        &bytes(&admission_review("DELETE", &old, Some(&old))),
    );
    assert_eq!(answer["response"]["allowed"], true, "{answer:#}");
}

/// Through the stand-in's admission, as an API server calls the installed component's
/// ValidatingWebhookConfiguration: kubectl creates a FluxConfig, and its changed branch is
/// refused with the rule's message; the stored FluxConfig is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_refuses_a_changed_flux_config_with_the_webhooks_message() {
    let api = snow_test_kube::KubeStandIn::start().await.unwrap();
    api.install_crds(&snow_api::crds_yaml().unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    let addr = snow_test_kube::probe::free_addr();
    webhooks::install(&api, &certs, addr);
    let (_, task) = serve(&WebhookOptions {
        addr,
        cert_dir: certs,
    })
    .await
    .unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let apply = move |object: Value| {
        let mut child = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["apply", "--server-side", "--validate=false", "-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(object.to_string().as_bytes());
        child.wait_with_output().unwrap()
    };
    let created = tokio::task::spawn_blocking({
        let apply = apply.clone();
        move || apply(flux_config("main"))
    })
    .await
    .unwrap();
    assert!(created.status.success(), "{created:?}");
    let refused = tokio::task::spawn_blocking(move || apply(flux_config("release")))
        .await
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("admission webhook \"validation.fluxconfig.anywhere.amazonaws.com\" denied the request: error[flux.immutable] spec.branch: spec.branch of an existing FluxConfig cannot change: it is `main` in the stored FluxConfig, `release` in the spec"),
        "{stderr}"
    );
    let stored = api
        .get(
            "anywhere.eks.amazonaws.com/v1alpha1",
            "FluxConfig",
            Some("default"),
            "fleet",
        )
        .unwrap();
    assert_eq!(stored["spec"]["branch"], "main");
    task.abort();
}

#[test]
fn what_is_not_a_review_for_this_hook_is_a_bad_request() {
    let cluster = edge().cluster();
    let wrong_kind = admission_review("CREATE", &cluster, None);
    let mut no_old = admission_review("UPDATE", &edge().pool(), None);
    no_old["request"]["oldObject"] = Value::Null;
    let mut not_review = wrong_kind.clone();
    not_review["kind"] = "ConfigMap".into();
    let deep = deep_review();
    let cases: [(&[u8], &str); 6] = [
        (b"", "the body is not an AdmissionReview: EOF while parsing"),
        (b"\xff\xfe garbage", "the body is not an AdmissionReview"),
        (&deep, "recursion limit exceeded"),
        (&bytes(&not_review), "`ConfigMap` is not an AdmissionReview"),
        (
            &bytes(&wrong_kind),
            "reviews SnowIPPool of anywhere.eks.amazonaws.com/v1alpha1, not `Cluster`",
        ),
        (&bytes(&no_old), "an UPDATE request without oldObject"),
    ];
    for (body, expected) in cases {
        let answer = review(Hook::IpPool, body);
        let response = &answer["response"];
        assert_eq!(response["allowed"], false, "{answer:#}");
        assert_eq!(response["status"]["code"], 400, "{answer:#}");
        let message = response["status"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{expected:?}: {message}");
    }
}

/// A certificate for 127.0.0.1 issued by `ca`, written as `tls.crt`/`tls.key` in `dir` through
/// a rename, as a Secret volume swaps its files.
fn write_certificate(dir: &Path, ca: &TestCa) {
    let cert = ca.server_certificate("127.0.0.1".parse().unwrap()).unwrap();
    for (name, text) in [("tls.crt", &cert.cert_pem), ("tls.key", &cert.key_pem)] {
        let temporary = dir.join(format!(".{name}.new"));
        std::fs::write(&temporary, text).unwrap();
        std::fs::rename(&temporary, dir.join(name)).unwrap();
    }
}

async fn start(dir: &Path) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let options = WebhookOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        cert_dir: dir.to_owned(),
    };
    serve(&options).await.expect("the webhooks serve")
}

fn json_body(answer: &Answer) -> Value {
    serde_json::from_str(&answer.body).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_https_server_answers_reviews_at_eks_anywheres_paths() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("webhook").unwrap();
    write_certificate(dir.path(), &ca);
    let (addr, task) = start(dir.path()).await;
    let old = edge().cluster();
    let mut moved = old.clone();
    moved["spec"]["clusterNetwork"]["pods"]["cidrBlocks"] = json!(["10.245.0.0/16"]);
    let path = "/validate-anywhere-eks-amazonaws-com-v1alpha1-cluster";
    let json = "application/json";
    let allowed = post(
        addr,
        ca.pem(),
        path,
        json,
        &bytes(&admission_review("CREATE", &old, None)),
    )
    .await
    .unwrap();
    assert_eq!(allowed.status, 200);
    assert_eq!(
        json_body(&allowed)["response"]["allowed"],
        true,
        "{allowed:?}"
    );
    let denied = post(
        addr,
        ca.pem(),
        path,
        json,
        &bytes(&admission_review("UPDATE", &moved, Some(&old))),
    )
    .await
    .unwrap();
    let response = json_body(&denied)["response"].clone();
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("error[upgrade.immutable] spec.clusterNetwork.pods.cidrBlocks: the pod CIDR cannot change"),
        "{response:#}"
    );
    // Each hook at its path; a review of the wrong kind says which path it reached.
    for hook in Hook::ALL {
        let answer = post(
            addr,
            ca.pem(),
            hook.path(),
            json,
            &bytes(&admission_review("CREATE", &old, None)),
        )
        .await
        .unwrap();
        let response = json_body(&answer)["response"].clone();
        if hook == Hook::Cluster {
            assert_eq!(response["allowed"], true);
        } else {
            assert_eq!(response["status"]["code"], 400, "{hook:?}");
            assert!(
                response["status"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(hook.path())
            );
        }
    }
    let unknown = post(addr, ca.pem(), "/validate-v1-pod", json, b"")
        .await
        .unwrap();
    assert_eq!(unknown.status, 404);
    let get = exchange(
        addr,
        ca.pem(),
        format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").into_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(get.status, 405);
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_get_a_bounded_answer_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("webhook").unwrap();
    write_certificate(dir.path(), &ca);
    let (addr, task) = start(dir.path()).await;
    let path = Hook::Cluster.path();
    let refused = |answer: &Answer| {
        assert_eq!(answer.status, 200, "{answer:?}");
        let response = json_body(answer)["response"].clone();
        assert_eq!(response["allowed"], false, "{answer:?}");
        assert_eq!(response["status"]["code"], 400, "{answer:?}");
        response["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    // A body declared larger than the bound is refused before it is read.
    let huge = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        MAX_BODY_BYTES + 1
    );
    let message = refused(&exchange(addr, ca.pem(), huge.into_bytes()).await.unwrap());
    assert_eq!(
        message,
        format!("request entity is too large; limit is {MAX_BODY_BYTES} bytes")
    );
    // Not JSON, nested past serde's limit, the wrong content type.
    let message = refused(
        &post(addr, ca.pem(), path, "application/json", b"\x00\x01binary")
            .await
            .unwrap(),
    );
    assert!(
        message.starts_with("the body is not an AdmissionReview"),
        "{message}"
    );
    let message = refused(
        &post(addr, ca.pem(), path, "application/json", &deep_review())
            .await
            .unwrap(),
    );
    assert!(message.contains("recursion limit exceeded"), "{message}");
    let message = refused(
        &post(addr, ca.pem(), path, "text/yaml", b"kind: AdmissionReview")
            .await
            .unwrap(),
    );
    assert_eq!(message, "contentType=text/yaml, expected application/json");
    // A chunked body past the bound (no length said up front) is cut at the bound. The server
    // stops reading it, so the answer may be lost to the reset that follows; it must not stop.
    let mut chunked = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..(MAX_BODY_BYTES >> 20) + 2 {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    if let Ok(answer) = exchange(addr, ca.pem(), chunked).await {
        assert!(
            refused(&answer).starts_with("request entity is too large"),
            "{answer:?}"
        );
    }
    // Still serving.
    let cluster = edge().cluster();
    let answer = post(
        addr,
        ca.pem(),
        path,
        "application/json",
        &bytes(&admission_review("CREATE", &cluster, None)),
    )
    .await
    .unwrap();
    assert_eq!(json_body(&answer)["response"]["allowed"], true);
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_certificate_is_served_from_the_next_connection() {
    let dir = tempfile::tempdir().unwrap();
    let first = TestCa::new("first").unwrap();
    write_certificate(dir.path(), &first);
    let (addr, task) = start(dir.path()).await;
    let path = Hook::Cluster.path();
    let body = bytes(&admission_review("CREATE", &edge().cluster(), None));
    assert!(
        post(addr, first.pem(), path, "application/json", &body)
            .await
            .is_ok()
    );
    let second = TestCa::new("second").unwrap();
    write_certificate(dir.path(), &second);
    let answer = post(addr, second.pem(), path, "application/json", &body)
        .await
        .unwrap();
    assert_eq!(json_body(&answer)["response"]["allowed"], true);
    let old = post(addr, first.pem(), path, "application/json", &body).await;
    assert!(old.unwrap_err().starts_with("TLS:"));
    // A renewal that cannot be read (a key of another certificate) keeps the one served.
    let third = TestCa::new("third").unwrap();
    let other = third
        .server_certificate("127.0.0.1".parse().unwrap())
        .unwrap();
    std::fs::write(dir.path().join("tls.key"), &other.key_pem).unwrap();
    let answer = post(addr, second.pem(), path, "application/json", &body)
        .await
        .unwrap();
    assert_eq!(json_body(&answer)["response"]["allowed"], true);
    task.abort();
}

#[tokio::test]
async fn a_directory_without_a_usable_pair_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let options = WebhookOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        cert_dir: dir.path().to_owned(),
    };
    let error = serve(&options).await.unwrap_err();
    assert!(matches!(error, WebhookError::Certificate(_)), "{error}");
    assert!(error.to_string().contains("tls.crt"), "{error}");
    std::fs::write(dir.path().join("tls.crt"), "not a certificate").unwrap();
    std::fs::write(dir.path().join("tls.key"), "not a key").unwrap();
    let error = serve(&options).await.unwrap_err().to_string();
    assert!(error.contains("tls.crt: holds no certificate"), "{error}");
}
