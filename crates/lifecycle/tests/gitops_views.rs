//! What `describe` and the support bundle show of a cluster managed by commit (EKS Anywhere's
//! GitOps): a declared Cluster naming a FluxConfig, Flux's GitRepository, Kustomization, source
//! Secret and controller pods on the Kubernetes API stand-in, with a key planted in the Secret,
//! a password in the repository's URL, and a Kustomization a webhook refused.

mod common;

use base64::Engine as _;
use serde_json::{Value, json};
use snow_lifecycle::support_bundle::{self, BundleOptions};
use snow_lifecycle::{FluxSync, SyncState};
use snow_test_kube::KubeStandIn;
use snow_test_kube::declared::{DeclaredCluster, EKSA};

const FLUX_NS: &str = "flux-system";
/// Planted in the source Secret and in the FluxConfig's URL: never shown.
const PLANTED_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted-flux-key-4d1e\n";
const PLANTED_PASSWORD: &str = "url-password-9a7b";
const DENIED: &str = "Cluster/default/second dry-run failed (Forbidden): admission webhook \"validation.cluster.anywhere.amazonaws.com\" denied the request: error[upgrade.immutable] spec.controlPlaneConfiguration.endpoint.host: the control-plane endpoint cannot change on an existing cluster\n";

/// `second`, declared with a FluxConfig, and Flux's objects as Flux left them after applying
/// one commit and refusing the next.
async fn world() -> KubeStandIn {
    let api = KubeStandIn::start().await.expect("stand-in");
    api.install_capi().unwrap();
    api.install_crds(&snow_api::crds_yaml().unwrap()).unwrap();
    api.register(
        "source.toolkit.fluxcd.io/v1",
        "GitRepository",
        "gitrepositories",
        true,
        true,
    );
    api.register(
        "kustomize.toolkit.fluxcd.io/v1",
        "Kustomization",
        "kustomizations",
        true,
        true,
    );
    let declared = DeclaredCluster::new("second", 1);
    for mut object in declared.objects() {
        if object["kind"] == "Cluster" {
            object["spec"]["managementCluster"] = json!({"name": "mgmt"});
            object["spec"]["gitOpsRef"] = json!({"kind": "FluxConfig", "name": "second"});
        }
        api.put(object).unwrap();
    }
    let url = format!("ssh://git:{PLANTED_PASSWORD}@192.168.1.5:2222/fleet.git");
    api.put(json!({"apiVersion": EKSA, "kind": "FluxConfig",
        "metadata": {"name": "second", "namespace": "default"},
        "spec": {"git": {"repositoryUrl": url}}}))
        .unwrap();
    api.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FLUX_NS}}))
        .unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    api.put(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "flux-system", "namespace": FLUX_NS},
        "data": {"identity": b64(PLANTED_KEY), "identity.pub": b64("ssh-ed25519 AAAA"),
            "known_hosts": b64("[192.168.1.5]:2222 ssh-ed25519 AAAA")}}))
        .unwrap();
    let applied = "main@sha1:1111111111111111111111111111111111111111";
    let attempted = "main@sha1:2222222222222222222222222222222222222222";
    api.put(json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": FLUX_NS, "namespace": FLUX_NS},
        "spec": {"interval": "1m0s", "url": url, "ref": {"branch": "main"}, "secretRef": {"name": "flux-system"}},
        "status": {"artifact": {"revision": attempted}, "conditions": [{"type": "Ready", "status": "True",
            "reason": "Succeeded", "message": format!("stored artifact for revision '{attempted}'")}]}}))
        .unwrap();
    api.put(json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": FLUX_NS, "namespace": FLUX_NS},
        "spec": {"interval": "10m0s", "path": "./clusters/mgmt", "prune": true,
            "sourceRef": {"kind": "GitRepository", "name": FLUX_NS}},
        "status": {"lastAppliedRevision": applied, "lastAttemptedRevision": attempted,
            "conditions": [{"type": "Ready", "status": "False", "reason": "ReconciliationFailed", "message": DENIED}]}}))
        .unwrap();
    for controller in ["source-controller", "kustomize-controller"] {
        let pod = format!("{controller}-1");
        api.put(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": FLUX_NS, "labels": {"app": controller}},
            "spec": {"containers": [{"name": "manager", "image": format!("ghcr.io/fluxcd/{controller}:v1")}]},
            "status": {"phase": "Running"}}))
            .unwrap();
        api.set_pod_log(
            FLUX_NS,
            &pod,
            "manager",
            &format!("{controller} says hello\n"),
        );
    }
    api
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_shows_the_gitops_source_and_what_flux_last_applied() {
    let api = world().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, mgmt) = common::connect(&api, dir.path()).await;
    let described = snow_lifecycle::describe(&mgmt, "second").await.unwrap();
    let gitops = described.gitops.as_ref().expect("a GitOps source");
    assert_eq!(gitops.flux_config, "default/second");
    assert_eq!(gitops.path, "clusters/mgmt", "EKS Anywhere's default path");
    let SyncState::Read(FluxSync {
        last_applied_revision,
        ready,
        ..
    }) = &gitops.kustomization
    else {
        panic!("{gitops:?}");
    };
    assert_eq!(
        last_applied_revision.as_deref(),
        Some("main@sha1:1111111111111111111111111111111111111111")
    );
    assert_eq!(ready.as_ref().unwrap().status, "False");
    let text = described.to_text();
    let json = serde_json::to_string(&described).unwrap();
    for shown in [&text, &json] {
        assert!(!shown.contains(PLANTED_PASSWORD), "{shown}");
    }
    let gitops_lines: String = text
        .lines()
        .skip_while(|l| !l.starts_with("GitOps:"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!(gitops_lines, @r#"
    GitOps: FluxConfig default/second: ssh://<redacted>@192.168.1.5:2222/fleet.git branch main, path clusters/mgmt
        Kustomization flux-system/flux-system: last applied main@sha1:1111111111111111111111111111111111111111, last attempted main@sha1:2222222222222222222222222222222222222222, Ready=False ReconciliationFailed: Cluster/default/second dry-run failed (Forbidden): admission webhook "validation.cluster.anywhere.amazonaws.com" denied the request: error[upgrade.immutable] spec.controlPlaneConfiguration.endpoint.host: the control-plane endpoint cannot change on an existing cluster
    "#);

    // Without Flux's objects: said, not an error.
    api.delete(
        "kustomize.toolkit.fluxcd.io/v1",
        "Kustomization",
        Some(FLUX_NS),
        FLUX_NS,
    )
    .unwrap();
    let described = snow_lifecycle::describe(&mgmt, "second").await.unwrap();
    assert_eq!(
        described.gitops.unwrap().kustomization,
        SyncState::Unknown("Kustomization flux-system/flux-system not found".into())
    );
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
async fn the_support_bundle_holds_flux_s_objects_and_logs_and_never_its_key() {
    let api = world().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, mgmt) = common::connect(&api, dir.path()).await;
    let bundle = support_bundle::collect(&mgmt, "second", &BundleOptions::default())
        .await
        .unwrap();
    let files = bundle.files();
    let object = |path: &str| -> Value { serde_json::from_slice(file(&files, path)).unwrap() };
    let ks = object("management/flux/Kustomization/flux-system.json");
    assert_eq!(
        ks["status"]["lastAppliedRevision"],
        "main@sha1:1111111111111111111111111111111111111111"
    );
    let repo = object("management/flux/GitRepository/flux-system.json");
    assert_eq!(repo["status"]["conditions"][0]["reason"], "Succeeded");
    assert_eq!(
        object("management/eksa/FluxConfig/second.json")["kind"],
        "FluxConfig"
    );
    assert_eq!(
        object("management/flux/secrets.json"),
        json!([{"name": "flux-system", "namespace": FLUX_NS, "type": null,
            "keys": ["identity", "identity.pub", "known_hosts"]}])
    );
    for controller in ["source-controller", "kustomize-controller"] {
        let log = file(
            &files,
            &format!("management/flux-system/logs/{controller}-1/manager.log"),
        );
        assert_eq!(log, format!("{controller} says hello\n").as_bytes());
    }
    // The refusal is among the problems, with the webhook's message.
    let summary = String::from_utf8(file(&files, "summary.txt").to_vec()).unwrap();
    assert!(
        summary.contains("Kustomization flux-system/flux-system (management): Ready=False (ReconciliationFailed: Cluster/default/second dry-run failed (Forbidden): admission webhook"),
        "{summary}"
    );
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    for (name, bytes) in &files {
        for value in [
            "planted-flux-key-4d1e".to_owned(),
            b64(PLANTED_KEY),
            PLANTED_PASSWORD.to_owned(),
        ] {
            assert!(
                !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
                "{name} holds the planted {value}"
            );
        }
    }
}
