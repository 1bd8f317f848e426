//! Workload clusters by commit, end to end (issue 37), as EKS Anywhere runs GitOps: Flux on the
//! management cluster applies the management cluster's folder of one repository, and the
//! controller reconciles the Clusters Flux applied.
//!
//! The world: the Kubernetes API stand-in with its simulated Cluster API and its simulated Flux
//! (installed from Flux's real install manifest, `crates/capi-render/tests/data/flux`), the
//! repository on a real `sshd` with `git-shell` (`snow_test_devices::git_server`), written with
//! snow-git over SSH, and the controller run as the installed component runs it: under its
//! ServiceAccount's role (`capi_render::controller::cluster_rules`), its admission webhooks
//! served over HTTPS and called by the stand-in through the component's webhook
//! configurations. Devices are in memory.
//!
//! The repository is laid out by `capi_render::gitops` (EKS Anywhere's layout):
//! `clusters/mgmt/flux-system/…`, `clusters/mgmt/mgmt/eksa-system/…` and, by commit,
//! `clusters/mgmt/second/eksa-system/…`.

#[path = "support/devices.rs"]
mod devices;
#[path = "support/webhooks.rs"]
mod webhooks;

use capi_render::gitops::{self, RepoFile};
use devices::{Fleet, cilium};
use serde_json::{Value, json};
use snow_api::{ValidSpec, gitops::GitOps};
use snow_controller::{
    self as controller, CniSource, Context, RunOptions, webhook::WebhookOptions,
};
use snow_git::{Auth, Change, Identity, Limits, Remote, Repository, SshAuth};
use snow_lifecycle::Management;
use snow_test_devices::git_server::{GitRepos, SshGit};
use snow_test_kube::{
    CapiOptions, FluxOptions, KubeStandIn, WorkloadOptions,
    declared::{DeclaredCluster, EKSA},
    probe::free_addr,
};
use std::{
    path::Path,
    process::Command,
    sync::Arc,
    time::{Duration, Instant},
};

const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io/v1";
const CORE: &str = "cluster.x-k8s.io/v1beta2";
const FLUX_NS: &str = "flux-system";

/// Flux's install manifest built from its bases (source-controller and kustomize-controller),
/// what `flux install` applies and what `gotk-components.yaml` holds.
const INSTALL: &str = include_str!("../../capi-render/tests/data/flux/install.yaml");

/// [`INSTALL`] with the two controllers it leaves out (Flux's published install manifest has all
/// four; their bases are not among the reference data): a Deployment each, of a `manager`
/// container as their bases have it, so that the bundle's four image patches in the
/// flux-system `kustomization.yaml` find their targets, as they do in the real manifest.
fn install_manifest() -> String {
    let mut text = INSTALL.to_owned();
    for controller in ["helm-controller", "notification-controller"] {
        text.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {controller}\n  namespace: {FLUX_NS}\n  labels:\n    app.kubernetes.io/component: {controller}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {controller}\n  template:\n    metadata:\n      labels:\n        app: {controller}\n    spec:\n      containers:\n      - name: manager\n        image: ghcr.io/fluxcd/{controller}:v1.4.0\n"
        ));
    }
    text
}

/// Waits (every 100 ms, at most two minutes) until `check` holds; panics with `detail()`.
async fn until(what: &str, mut check: impl FnMut() -> bool, detail: impl Fn() -> String) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what} never happened\n{}",
            detail()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `d` as the EKS Anywhere spec file of a cluster managed by `management` (itself for the
/// management cluster), with a FluxConfig of `url` named after the cluster (EKS Anywhere's rule:
/// a workload's FluxConfig says what its management cluster's says, under its own name).
fn spec(d: &DeclaredCluster, management: &str, url: &str) -> ValidSpec {
    let mut objects: Vec<Value> = d
        .objects()
        .into_iter()
        .filter(|o| o["kind"] != "Secret")
        .collect();
    let cluster = objects.iter_mut().find(|o| o["kind"] == "Cluster").unwrap();
    cluster["spec"]["managementCluster"] = json!({"name": management});
    cluster["spec"]["gitOpsRef"] = json!({"kind": "FluxConfig", "name": d.name});
    objects.push(json!({"apiVersion": EKSA, "kind": "FluxConfig",
        "metadata": {"name": d.name, "namespace": d.namespace},
        "spec": {"git": {"repositoryUrl": url}}}));
    let text: String = objects.iter().map(|o| format!("---\n{o}\n")).collect();
    snow_api::check(&text)
        .unwrap()
        .into_valid()
        .unwrap_or_else(|r| panic!("{:#?}", r.findings))
}

fn writes(files: &[RepoFile]) -> Vec<Change> {
    files
        .iter()
        .map(|f| Change::Write {
            path: f.path.clone(),
            bytes: f.content.clone().into_bytes(),
        })
        .collect()
}

/// The repository over SSH, and the one commit each [`Repo::commit`] pushes with snow-git.
struct Repo {
    remote: Remote,
    auth: Auth,
}

impl Repo {
    fn new(ssh: &SshGit) -> Repo {
        Repo {
            remote: Remote::parse(&ssh.url("fleet.git")).unwrap(),
            auth: Auth::Ssh(SshAuth {
                private_key: snow_git::Secret::new(ssh.client_key.private_key.clone()),
                passphrase: None,
                known_hosts: ssh.known_hosts.clone(),
            }),
        }
    }

    /// `changes` committed on `main` and pushed; the commit's id.
    async fn commit(&self, changes: Vec<Change>, message: &str) -> String {
        let (remote, auth, message) = (self.remote.clone(), self.auth.clone(), message.to_owned());
        tokio::task::spawn_blocking(move || {
            let identity = Identity {
                name: "Operator".into(),
                email: "operator@example.invalid".into(),
            };
            let mut repo =
                Repository::clone(&remote, &auth, "main", &identity, Limits::default()).unwrap();
            repo.write(&changes).unwrap();
            repo.commit(&message).unwrap().expect("a change");
            repo.push().unwrap().expect("pushed").as_str().to_owned()
        })
        .await
        .unwrap()
    }
}

fn kubectl_apply(kubeconfig: &Path, yaml: &str) {
    use std::io::Write as _;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["apply", "--server-side", "--validate=false", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(yaml.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl apply: {out:?}");
}

fn ready_condition(o: &Value) -> Option<&Value> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

/// Whether the EKS Anywhere Cluster `name` is Ready at its current generation.
fn cluster_ready(api: &KubeStandIn, name: &str) -> bool {
    api.get(EKSA, "Cluster", Some("default"), name)
        .is_some_and(|c| {
            c["status"]["observedGeneration"] == c["metadata"]["generation"]
                && ready_condition(&c).is_some_and(|r| r["status"] == "True")
        })
}

fn kustomization(api: &KubeStandIn) -> Value {
    api.get(KUSTOMIZE, "Kustomization", Some(FLUX_NS), FLUX_NS)
        .unwrap_or_default()
}

/// Whether Flux's Kustomization applied `commit` and says so.
fn applied(api: &KubeStandIn, commit: &str) -> bool {
    let ks = kustomization(api);
    ks["status"]["lastAppliedRevision"] == format!("main@sha1:{commit}").as_str()
        && ready_condition(&ks).is_some_and(|r| r["status"] == "True")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_committed_to_the_management_clusters_folder_is_created_scaled_refused_and_pruned()
 {
    let api = Arc::new(KubeStandIn::start().await.unwrap());
    api.install_capi().unwrap();
    assert_eq!(
        api.install_crds(&snow_api::crds_yaml().unwrap()).unwrap(),
        5
    );
    let capi = api.start_capi(CapiOptions {
        step: Duration::from_millis(10),
        ..CapiOptions::default()
    });
    let _workloads = api.start_workloads(WorkloadOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();

    // The repository and the two clusters' specs.
    let repos = GitRepos::new().unwrap();
    repos.create("fleet.git").unwrap();
    let ssh = SshGit::start(&repos).unwrap();
    let url = ssh.url("fleet.git");
    let mgmt = DeclaredCluster::new("mgmt", 1);
    let mgmt_spec = spec(&mgmt, "mgmt", &url);
    let gitops: GitOps = mgmt_spec.gitops().expect("GitOps").clone();
    let mut second = DeclaredCluster::new("second", 1);
    second.endpoint = "192.168.1.101".into();

    // What the management cluster's GitOps bootstrap leaves (crates/provision): Flux installed
    // with the bundle's images, its source Secret, the first commit of the management cluster's
    // folder, and the GitRepository and Kustomization of `gotk-sync.yaml`.
    let bundles = snow_api::release::Bundles::from_yaml(
        snow_api::release::ReleaseInputs::embedded_bundles_yaml(),
    )
    .unwrap();
    let flux_bundle = bundles
        .versions_bundle("1.33")
        .unwrap()
        .flux()
        .unwrap()
        .clone();
    let components = install_manifest();
    let (_, install) = gitops::flux_install(&components, &flux_bundle).unwrap();
    kubectl_apply(&kubeconfig, &install);
    let flux = api.start_flux(FluxOptions::default()).unwrap();
    let ssh_auth = snow_credentials::encode::git::SshAuth::new(
        snow_credentials::SecretBytes::new(ssh.client_key.private_key.clone().into_bytes()),
        ssh.client_key.public_key.clone(),
        ssh.known_hosts.clone(),
    )
    .unwrap();
    let mut source = snow_credentials::encode::git::flux_source_secret(
        snow_credentials::encode::git::FLUX_SOURCE_SECRET,
        FLUX_NS,
        &snow_credentials::encode::git::GitAuth::Ssh(ssh_auth),
    )
    .to_json();
    source["apiVersion"] = "v1".into();
    source["kind"] = "Secret".into();
    api.put(source).unwrap();
    // The identity Secrets are the operator's, put with kubectl: never in git.
    api.put(mgmt.identity_secret()).unwrap();
    api.put(second.identity_secret()).unwrap();

    let repo = Repo::new(&ssh);
    let mut files = gitops::flux_system_files(&gitops, &flux_bundle, &components).to_vec();
    files.extend(gitops::cluster_files(&gitops, &mgmt_spec));
    let first = repo
        .commit(writes(&files), "Initial commit of cluster configuration")
        .await;
    for object in gitops::sync_objects(&gitops) {
        api.put(object).unwrap();
    }

    // The controller as installed: its ServiceAccount, its webhooks.
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    let webhook = free_addr();
    webhooks::install(&api, &certs, webhook);
    let sa = dir.path().join("controller.kubeconfig");
    std::fs::write(
        &sa,
        api.service_account_kubeconfig(
            capi_render::controller::NAMESPACE,
            capi_render::controller::NAME,
        )
        .unwrap(),
    )
    .unwrap();
    let fleet = Fleet::default();
    fleet.amis.lock().unwrap().insert("ami-good".into());
    let ctx = Arc::new(Context {
        mgmt: Management::connect_for_watches(&snow_lifecycle::KubeconfigSource::file(&sa))
            .await
            .unwrap(),
        inputs: snow_api::release::ReleaseInputs::embedded().unwrap(),
        devices: fleet,
        manager: controller::FIELD_MANAGER.into(),
        namespace: None,
        cni: CniSource::Manifest(cilium()),
    });
    let options = RunOptions {
        concurrency: 2,
        health: None,
        leader: None,
        webhook: Some(WebhookOptions {
            addr: webhook,
            cert_dir: certs,
        }),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(controller::run(ctx, options, async move {
        let _ = stopped.await;
    }));
    let status = || format!("{:#}", kustomization(&api)["status"]);

    // The first commit: Flux applies the management cluster's folder (its own objects and the
    // management cluster's spec, which the controller reconciles).
    until("the first commit applied", || applied(&api, &first), status).await;
    until("mgmt Ready", || cluster_ready(&api, "mgmt"), status).await;

    // A second cluster's files, pushed by commit, become a Ready cluster.
    let second_spec = spec(&second, "mgmt", &url);
    let added = repo
        .commit(
            writes(&gitops::cluster_files(&gitops, &second_spec)),
            "Add cluster second",
        )
        .await;
    flux.reconcile_now();
    until(
        "the second cluster's commit applied",
        || applied(&api, &added),
        status,
    )
    .await;
    let declared = api
        .get(EKSA, "Cluster", Some("default"), "second")
        .expect("Flux applied the Cluster");
    assert_eq!(
        declared["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
        FLUX_NS
    );
    until(
        "second Ready",
        || cluster_ready(&api, "second"),
        || {
            format!(
                "{:#}",
                api.get(EKSA, "Cluster", Some("default"), "second")
                    .unwrap_or_default()["status"]
            )
        },
    )
    .await;
    let replicas = || {
        api.get(
            CORE,
            "MachineDeployment",
            Some("eksa-system"),
            "second-md-0",
        )
        .map(|md| md["spec"]["replicas"].clone())
    };
    assert_eq!(replicas(), Some(json!(1)));

    // A worker-count commit scales it.
    second.workers = vec![("md-0".into(), 2)];
    let scaled = repo
        .commit(
            writes(&gitops::cluster_files(
                &gitops,
                &spec(&second, "mgmt", &url),
            )),
            "Scale second to two workers",
        )
        .await;
    flux.reconcile_now();
    until(
        "the worker-count commit applied",
        || applied(&api, &scaled),
        status,
    )
    .await;
    until(
        "two replicas",
        || replicas() == Some(json!(2)),
        || format!("{:?}", replicas()),
    )
    .await;
    until(
        "second Ready again",
        || cluster_ready(&api, "second"),
        status,
    )
    .await;

    // A change the Cluster webhook denies (the control-plane endpoint of an existing cluster)
    // shows in the Kustomization's status with the webhook's message; nothing of it is applied.
    let mut moved = second.clone();
    moved.endpoint = "192.168.1.102".into();
    let denied = repo
        .commit(
            writes(&gitops::cluster_files(&gitops, &spec(&moved, "mgmt", &url))),
            "Move second's endpoint",
        )
        .await;
    flux.reconcile_now();
    let refused = format!("main@sha1:{denied}");
    until(
        "the denied commit attempted",
        || {
            let ks = kustomization(&api);
            ks["status"]["lastAttemptedRevision"] == refused.as_str()
                && ready_condition(&ks).is_some_and(|r| r["status"] == "False")
        },
        status,
    )
    .await;
    let ks = kustomization(&api);
    let ready = ready_condition(&ks).unwrap();
    assert_eq!(ready["reason"], "ReconciliationFailed", "{ks:#}");
    let message = ready["message"].as_str().unwrap();
    assert!(
        message.starts_with("Cluster/default/second dry-run failed (Forbidden): admission webhook \"validation.cluster.anywhere.amazonaws.com\" denied the request: error[upgrade.immutable] spec.controlPlaneConfiguration.endpoint.host: the control-plane endpoint cannot change on an existing cluster: it is 192.168.1.101 in the stored Cluster, 192.168.1.102 in the spec"),
        "{message}"
    );
    assert_eq!(
        ks["status"]["lastAppliedRevision"],
        format!("main@sha1:{scaled}").as_str()
    );
    let stored = api.get(EKSA, "Cluster", Some("default"), "second").unwrap();
    assert_eq!(
        stored["spec"]["controlPlaneConfiguration"]["endpoint"]["host"],
        "192.168.1.101"
    );

    // Removing the cluster's folder: Flux prunes what it applied (EKS Anywhere's Kustomization
    // has `prune: true`), and the controller deletes the workload cluster through its
    // finalizer. The management cluster and the operator's identity Secret stay.
    let removed = repo
        .commit(
            vec![Change::Remove {
                path: format!("{}/second", gitops.cluster_config_path().as_str()),
            }],
            "Delete cluster second",
        )
        .await;
    flux.reconcile_now();
    until("the removal applied", || applied(&api, &removed), status).await;
    until(
        "second deleted",
        || {
            api.get(EKSA, "Cluster", Some("default"), "second")
                .is_none()
                && api
                    .get(CORE, "Cluster", Some("eksa-system"), "second")
                    .is_none()
        },
        status,
    )
    .await;
    for kind in ["SnowDatacenterConfig", "SnowMachineConfig", "FluxConfig"] {
        assert!(
            api.get(EKSA, kind, Some("default"), "second").is_none(),
            "{kind} second was not pruned"
        );
    }
    assert!(
        api.get("v1", "Secret", Some("default"), "second-snow-credentials")
            .is_some()
    );
    assert!(cluster_ready(&api, "mgmt"));
    assert!(
        api.get(CORE, "Cluster", Some("eksa-system"), "mgmt")
            .is_some()
    );

    drop(capi);
    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
